//! Quota-aware admission: never dispatch more requests than the upstream's quota has left.
//!
//! Pacing (see [`pacing`](crate::pacing)) reacts after a response reports the quota spent, so
//! every request already in flight at that moment earns a 429. Admission acts before dispatch:
//! each host keeps an estimate of the quota left in the current window and the number of its
//! requests in flight, and a request is admitted only while `remaining - in_flight` is at least
//! `rateLimitFloor` (as for pacing, `rateLimitFloor: 0` turns it off). The estimate is fed by
//! successful responses and 429s only: other failures' headers belong to the retry policy. Counting every request in flight against the estimate is safe
//! whichever of them the server has already counted: it can only hold a request back a little
//! longer, never let one through that the quota cannot serve.
//!
//! The estimate, per host:
//! - It only ever goes down within a window: a response reporting a higher `remaining` than one
//!   already seen (responses arrive out of order) does not raise it.
//! - The window ends at the reset the upstream reports, when it reports one (AniList does only
//!   on its last request and on 429s; MAL on every response). Without one, the window is taken
//!   to end [`DERIVED_WINDOW_MS`] after the first response that reported the quota in it: the
//!   server's window began no later than that request's dispatch, so this end is never earlier
//!   than the real one (safe, at the cost of waiting a little longer when the quota is spent).
//!   A reported reset later than the current window's end starts a new window.
//! - A reading that belongs to a window already over says nothing about the current one and is
//!   ignored: one whose reset has passed, and one without a reset whose request was dispatched
//!   before the current window began (a late answer from the window before would otherwise
//!   open a derived window on its low `remaining`, and hold the host for a minute).
//! - When the window ends the estimate refills to the limit in force.
//!
//! The quota is not trusted blindly (decisions D39):
//! - While a scope has no reading, one request is in flight at a time: its answer tells the
//!   quota, then admission opens up. A success without quota headers opens it up too (the
//!   upstream reports none); a failure leaves the scope cold.
//! - A 429 that arrives when the estimate had said the request fit (at least `rateLimitFloor`
//!   left) means the headers overstate the quota: nothing more is admitted until the 429's
//!   reset (the server's timeout), and the limit in force becomes what the window served,
//!   raised by successes of that window answered later, then by one per window that ends
//!   without a 429, until it reaches the announced limit. Other 429s leave the wait to the
//!   retry policy and pacing. Readings keep counting against the announced limit, so what is
//!   left of the one in force is lower by their difference.
//!
//! A client-side ceiling (`rateLimit: { maxRequests, windowMs }`, our extension) additionally
//! lets at most `maxRequests` requests reach the server in any `windowMs` (sliding), with or
//! without headers. What counts is when a request is written, not when it is admitted: a
//! request admitted at a cold start may wait for its connection while the ones after it go out
//! on sockets already open, so a log of admission instants lets a window hold more than the
//! ceiling. The write instant is only known once the request is answered, so a request counts
//! while it is in flight (it may be written at any moment), then for `windowMs` from its answer
//! (which is no earlier than its write): never fewer requests than the server saw. Admission
//! uses the stricter of the ceiling and the quota. State lives in one process: a fleet of
//! processes without shared state cannot keep this promise together.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::pacing::MAX_PACE_WAIT_MS;
use crate::rate_limit::{epoch_ms, QuotaHeaders};
use crate::shared_state::link::REJOIN_INTERVAL_MS;

/// How long a window whose reset was never reported is taken to last (AniList's minute).
pub const DERIVED_WINDOW_MS: u64 = 60_000;
/// While requests are in flight their responses may free the estimate: a waiter looks again
/// at least this often.
pub const RECHECK_MS: u64 = 50;

/// The resolved `rateLimit` option: at most `max_requests` dispatches in any `window_ms`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ceiling {
    pub max_requests: u32,
    pub window_ms: u64,
}

/// The quota one response reported: limit and remaining are required, the reset is optional.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuotaReading {
    pub limit: f64,
    pub remaining: f64,
    /// When the quota refills, epoch ms, if the response said.
    pub reset_ms: Option<u64>,
}

impl QuotaReading {
    /// From the x-ratelimit-* header values (looked up case-insensitively by the caller).
    pub fn from_headers(
        limit: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> Option<Self> {
        QuotaHeaders::parse(limit, remaining, reset).map(Self::from)
    }
}

impl From<QuotaHeaders> for QuotaReading {
    fn from(headers: QuotaHeaders) -> Self {
        Self {
            limit: headers.limit,
            remaining: headers.remaining,
            reset_ms: headers.reset.map(epoch_ms),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct ServerQuota {
    limit: f64,
    /// The lowest `remaining` reported in the current window.
    remaining: f64,
    /// None after a window ended and before the next reading opened a new one.
    window_end_ms: Option<u64>,
    /// When the current window began, as far as this estimate knows (the end of the one
    /// before; 0 for the first): a response to a request dispatched earlier belongs to an
    /// older window and says nothing about this one.
    #[serde(default)]
    window_started_ms: u64,
    /// A 429 arrived in this window: it does not count as clean (D39 b).
    #[serde(default)]
    rate_limited: bool,
}

/// Processes count in a scope's fleet for this long after their latest admission.
const MEMBER_HORIZON_MS: u64 = DERIVED_WINDOW_MS;

/// The process a holder token belongs to: tokens carry it in their high half.
fn process_of(holder: u64) -> u64 {
    holder >> 32
}

/// A process that admitted requests in the scope, and when it last did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Member {
    process: u64,
    seen_ms: u64,
}

/// While a copy decides without the fleet (D39 c): what this process may admit per window.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Alone {
    /// The processes seen in the scope when the fleet went out of reach.
    processes: u32,
    /// The window the allowance is for; None while the scope had no reading yet.
    window_started_ms: Option<u64>,
    allowance: u32,
    admitted: u32,
}

/// One process's part of a window's `limit` among `processes`: rounded down, at least one.
fn share_of(limit: f64, processes: u32) -> u32 {
    ((limit / f64::from(processes.max(1))).floor() as u32).max(1)
}

/// One request in flight: who holds it and until when. Across a fleet (shared state) the
/// lease frees the capacity of a worker killed mid-request; in one process it never expires.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Reservation {
    holder: u64,
    expires_at: u64,
}

/// One host's admission state.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct AdmissionState {
    in_flight: Vec<Reservation>,
    server: Option<ServerQuota>,
    /// When the requests counted by the ceiling were answered (or given up), oldest first: each
    /// counts until `windowMs` after that instant. Requests in flight are counted apart.
    dispatches: VecDeque<u64>,
    /// A success answered without quota headers: the upstream reports none, so a cold scope
    /// has nothing to wait for (D39 a).
    #[serde(default)]
    unmetered: bool,
    /// The limit a 429 the estimate did not predict taught (D39 b), below the announced one.
    #[serde(default)]
    learned_limit: Option<f64>,
    /// The processes that admitted requests in the scope lately.
    #[serde(default)]
    members: Vec<Member>,
    /// Set while this copy decides without the fleet; never stored in Redis, so the fleet's
    /// state, once read again, ends it.
    #[serde(skip)]
    alone: Option<Alone>,
}

/// What an answered request tells admission.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Answer {
    /// A success, with the quota it reported if any.
    Served(Option<QuotaReading>),
    /// A 429, with the quota it reported if any.
    RateLimited(Option<QuotaReading>),
    /// Any other failure: its headers belong to the retry policy, as for pacing.
    Failed,
}

/// The admission estimate as `getTransportState()` shows it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdmissionSnapshot {
    /// The last limit reported, when one was.
    pub limit: Option<f64>,
    /// The estimate of what is left in the current window, when a limit was reported.
    pub remaining: Option<f64>,
    pub in_flight: u32,
    /// When the current window ends (epoch ms), when known.
    pub window_ends_at: Option<u64>,
    /// The limit a 429 taught (D39 b), in force while below the reported one.
    pub learned_limit: Option<f64>,
    /// The processes that admitted requests in the scope lately.
    pub processes: u32,
    /// What this process admits per window when it decides alone (D39 c): the window under
    /// way's allowance while it does, else the limit in force divided by `processes`.
    pub share: Option<u32>,
    /// Whether this copy decides alone, on its share, right now.
    pub alone: bool,
}

/// How the attempt loop configures one admission decision.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// Whether the server's quota is followed (`paceWithRateLimit` on, `rateLimitFloor` not 0,
    /// no `ignorePaceDeadline`).
    pub server_quota: bool,
    /// At least 1 when `server_quota` is on.
    pub floor: u32,
    pub ceiling: Option<Ceiling>,
    /// Who the reservation is for (the logical request's fleet-unique token), so a release
    /// removes its own only.
    pub holder: u64,
    /// How long the reservation holds at most; None (one process): until released.
    pub lease_ms: Option<u64>,
}

impl AdmissionState {
    /// Admit one dispatch (counting it in flight; the caller must [`release`](Self::release)
    /// it), or say how long to wait before asking again.
    pub fn try_admit(&mut self, rules: &Rules, now_ms: u64) -> Result<(), u64> {
        self.in_flight.retain(|r| r.expires_at > now_ms);
        let server_wait = rules
            .server_quota
            .then(|| self.server_wait(rules.floor, process_of(rules.holder), now_ms))
            .flatten();
        let ceiling_wait = rules.ceiling.and_then(|c| self.ceiling_wait(&c, now_ms));
        match server_wait.max(ceiling_wait) {
            Some(wait_ms) => Err(wait_ms.max(1)),
            None => {
                self.in_flight.push(Reservation {
                    holder: rules.holder,
                    expires_at: rules
                        .lease_ms
                        .map_or(u64::MAX, |lease| now_ms.saturating_add(lease)),
                });
                if let Some(alone) = &mut self.alone {
                    alone.admitted += 1;
                }
                self.seen(process_of(rules.holder), now_ms);
                Ok(())
            }
        }
    }

    /// A request under the ceiling is no longer in flight (answered, failed or abandoned) at
    /// `now_ms`: it counts for the ceiling's window from then, since it was written no later.
    /// Its reservation is released apart ([`release`](Self::release)).
    pub fn count_sent(&mut self, now_ms: u64) {
        // The clock reads whole milliseconds, truncated: the answer came before this one ended.
        self.dispatches.push_back(now_ms + 1);
    }

    /// `process` admitted a request at `now_ms`; processes not seen for a while are forgotten.
    fn seen(&mut self, process: u64, now_ms: u64) {
        self.members
            .retain(|m| m.process != process && m.seen_ms + MEMBER_HORIZON_MS > now_ms);
        self.members.push(Member {
            process,
            seen_ms: now_ms,
        });
    }

    /// The fleet's state is out of reach: until the fleet's state replaces this copy, it admits
    /// only this process's share of the last known quota (D39 c), the limit in force divided by
    /// the processes seen in the scope lately, per window (in the window under way, what the
    /// fleet had left of it, divided the same way), and counts only this process's requests
    /// in flight (the others' reservations are theirs to settle).
    pub fn decide_alone(&mut self, now_ms: u64) {
        if self.alone.is_some() {
            return;
        }
        self.roll(now_ms);
        let processes = self.processes_seen(now_ms).max(1);
        let left = self.server.map_or(0.0, |q| {
            (q.remaining - self.in_flight.len() as f64).max(0.0)
        });
        self.alone = Some(Alone {
            processes,
            window_started_ms: self.server.map(|q| q.window_started_ms),
            allowance: (left / f64::from(processes)).floor() as u32,
            admitted: 0,
        });
    }

    /// An admitted request is no longer in flight (answered, failed or abandoned): removes one
    /// reservation of `holder`, never another's.
    pub fn release(&mut self, holder: u64) {
        if let Some(index) = self.in_flight.iter().position(|r| r.holder == holder) {
            self.in_flight.swap_remove(index);
        }
    }

    /// Who holds the reservations in flight.
    pub fn holders(&self) -> impl Iterator<Item = u64> + '_ {
        self.in_flight.iter().map(|r| r.holder)
    }

    /// Take over `from`'s live reservations of `holders` that this state does not hold yet, with
    /// their leases: a slot's requests admitted on its local copy join the fleet's state.
    pub fn adopt(&mut self, from: &AdmissionState, holders: &[u64], now_ms: u64) {
        for reservation in &from.in_flight {
            let wanted = holders.contains(&reservation.holder) && reservation.expires_at > now_ms;
            if wanted && !self.holders().any(|h| h == reservation.holder) {
                self.in_flight.push(*reservation);
            }
        }
    }

    /// Fold into this state (the fleet's, read again after local decisions) what `local` (this
    /// process's copy) learned meanwhile: the answers it received lowered its estimate of the
    /// window, and the fleet's state has not seen them (its Redis may even be a failed-over
    /// replica a few writes behind). The same window keeps the lower `remaining`; a window
    /// `local` knows and the fleet does not yet replaces the fleet's; the lower learned limit
    /// stays. Reservations are not touched ([`adopt`](Self::adopt) carries those).
    pub fn absorb(&mut self, local: &AdmissionState, now_ms: u64) {
        self.roll(now_ms);
        if let Some(learned) = local.learned_limit {
            self.learned_limit = Some(self.learned_limit.map_or(learned, |l| l.min(learned)));
        }
        let Some(theirs) = local.server else {
            return;
        };
        let Some(ours) = &mut self.server else {
            self.server = Some(theirs);
            return;
        };
        if theirs.window_started_ms > ours.window_started_ms {
            *ours = theirs;
        } else if theirs.window_started_ms == ours.window_started_ms {
            ours.remaining = ours.remaining.min(theirs.remaining);
            // Each end is the reported reset or a derived one, never earlier than the real end:
            // the earlier of the two is the better (a fleet's state a few writes behind may
            // not have the answer that reported the reset).
            ours.window_end_ms = match (ours.window_end_ms, theirs.window_end_ms) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            ours.rate_limited |= theirs.rate_limited;
        }
    }

    /// The estimate at `now_ms`, without changing it (expired reservations are not counted).
    pub fn snapshot(&self, now_ms: u64) -> AdmissionSnapshot {
        let live = self
            .server
            .filter(|q| q.window_end_ms.is_none_or(|end| end > now_ms));
        let processes = self.processes_seen(now_ms);
        AdmissionSnapshot {
            limit: self.server.map(|q| q.limit),
            remaining: self
                .server
                .map(|q| live.map_or(self.limit_in_force(q.limit), |live| live.remaining)),
            in_flight: self
                .in_flight
                .iter()
                .filter(|r| r.expires_at > now_ms)
                .count() as u32,
            window_ends_at: live.and_then(|q| q.window_end_ms),
            learned_limit: self.learned_limit,
            processes,
            share: match self.alone {
                Some(alone) => Some(alone.allowance),
                None => self
                    .server
                    .map(|q| share_of(self.limit_in_force(q.limit), processes)),
            },
            alone: self.alone.is_some(),
        }
    }

    /// The processes that admitted requests in the scope within [`MEMBER_HORIZON_MS`].
    fn processes_seen(&self, now_ms: u64) -> u32 {
        self.members
            .iter()
            .filter(|m| m.seen_ms + MEMBER_HORIZON_MS > now_ms)
            .count() as u32
    }

    /// Fold what the answer to a request dispatched at `dispatched_ms` tells into the estimate
    /// (rules in the module doc).
    pub fn learn(&mut self, answer: &Answer, floor: u32, dispatched_ms: u64, now_ms: u64) {
        match answer {
            Answer::Served(Some(reading)) => self.observe(reading, dispatched_ms, now_ms),
            Answer::Served(None) => self.unmetered = true,
            Answer::RateLimited(reading) => self.refused(reading.as_ref(), floor, now_ms),
            Answer::Failed => {}
        }
    }

    /// The limit admission follows: the announced one, or the learned one when lower.
    fn limit_in_force(&self, announced: f64) -> f64 {
        self.learned_limit
            .map_or(announced, |learned| learned.min(announced))
    }

    fn observe(&mut self, reading: &QuotaReading, dispatched_ms: u64, now_ms: u64) {
        self.roll(now_ms);
        let stale_reset = reading.reset_ms.is_some_and(|reset| reset <= now_ms);
        // Without a reset, the reading cannot say which window it counted the request in.
        let older_window = reading.reset_ms.is_none()
            && self
                .server
                .is_some_and(|q| dispatched_ms < q.window_started_ms);
        if stale_reset || older_window {
            return;
        }
        // A success of the window that revealed the lie: it was served, so it counts.
        if self.server.is_some_and(|q| q.rate_limited) {
            if let Some(learned) = &mut self.learned_limit {
                let served = (reading.limit - reading.remaining).min(reading.limit);
                *learned = learned.max(served);
            }
        }
        // The headers count against the announced limit; what is left of the one in force is
        // that much lower.
        let overstated_by = reading.limit - self.limit_in_force(reading.limit);
        let remaining = (reading.remaining - overstated_by).max(0.0);
        let reset_ms = reading
            .reset_ms
            .map(|reset| reset.min(now_ms.saturating_add(MAX_PACE_WAIT_MS)));
        let fresh = ServerQuota {
            limit: reading.limit,
            remaining,
            window_end_ms: Some(reset_ms.unwrap_or(now_ms + DERIVED_WINDOW_MS)),
            window_started_ms: self.server.map_or(0, |q| q.window_started_ms),
            rate_limited: false,
        };
        self.server = Some(match self.server {
            None => fresh,
            Some(current) => match (current.window_end_ms, reset_ms) {
                (Some(end), Some(reset)) if reset > end => ServerQuota {
                    window_started_ms: end,
                    ..fresh
                },
                (end, reset) => ServerQuota {
                    limit: reading.limit,
                    remaining: current.remaining.min(remaining),
                    window_end_ms: reset.or(end).or(fresh.window_end_ms),
                    ..current
                },
            },
        });
    }

    /// A 429 when the estimate said this request fit (at least `floor` left, counting it): the
    /// headers overstate the quota. The limit in force becomes what the window served, and
    /// nothing more is admitted until the 429's reset (the server's timeout). Any other 429
    /// leaves the waiting to the retry policy (its Retry-After) and pacing; every 429 keeps its
    /// window from counting as clean.
    fn refused(&mut self, reading: Option<&QuotaReading>, floor: u32, now_ms: u64) {
        self.roll(now_ms);
        let learned_limit = self.learned_limit;
        let Some(quota) = &mut self.server else {
            return;
        };
        quota.rate_limited = true;
        // `rateLimitFloor: 0` turns admission off: nothing was predicted.
        if floor == 0 || quota.remaining < f64::from(floor) {
            return;
        }
        let in_force = learned_limit.map_or(quota.limit, |l| l.min(quota.limit));
        self.learned_limit = Some((in_force - quota.remaining).max(1.0));
        quota.remaining = 0.0;
        let reset_ms = reading
            .and_then(|r| r.reset_ms)
            .filter(|&reset| reset > now_ms)
            .map(|reset| reset.min(now_ms.saturating_add(MAX_PACE_WAIT_MS)));
        quota.window_end_ms = reset_ms
            .or(quota.window_end_ms)
            .or(Some(now_ms + DERIVED_WINDOW_MS));
    }

    /// A window that has ended refills to the limit in force, which rises by one after a
    /// window without a 429; its end is unknown until the next reading.
    fn roll(&mut self, now_ms: u64) {
        let Some(quota) = &mut self.server else {
            return;
        };
        let Some(end) = quota.window_end_ms.filter(|&end| end <= now_ms) else {
            return;
        };
        if !quota.rate_limited {
            self.learned_limit = self
                .learned_limit
                .map(|learned| learned + 1.0)
                .filter(|&learned| learned < quota.limit);
        }
        let in_force = self
            .learned_limit
            .map_or(quota.limit, |l| l.min(quota.limit));
        quota.remaining = in_force;
        quota.window_end_ms = None;
        quota.window_started_ms = end;
        quota.rate_limited = false;
    }

    fn server_wait(&mut self, floor: u32, process: u64, now_ms: u64) -> Option<u64> {
        let wait = self.quota_wait(floor, process, now_ms);
        // Alone, a waiter asks again at least as often as the fleet's state may be tried: a
        // decision that finds Redis back ends the share (a failover takes a second or two,
        // while an unknown window's end may be a minute away).
        if self.alone.is_some() {
            return wait.map(|wait_ms| wait_ms.min(REJOIN_INTERVAL_MS));
        }
        wait
    }

    fn quota_wait(&mut self, floor: u32, process: u64, now_ms: u64) -> Option<u64> {
        self.roll(now_ms);
        // Alone, only this process's requests count: the others' are in their own shares.
        let alone = self.alone.is_some();
        let in_flight = self
            .in_flight
            .iter()
            .filter(|r| !alone || process_of(r.holder) == process)
            .count() as u32;
        let Some(quota) = self.server else {
            // Cold: one request asks the upstream for its quota while the others wait (D39 a).
            return (!self.unmetered && in_flight > 0).then_some(RECHECK_MS);
        };
        let until_reset = quota
            .window_end_ms
            .map_or(RECHECK_MS, |end| end.saturating_sub(now_ms));
        // Answers in flight do not give a spent share back: only the window's end does.
        if self.share_spent(&quota) {
            return Some(until_reset);
        }
        let available = quota.remaining - f64::from(in_flight);
        if available >= f64::from(floor) {
            return None;
        }
        Some(if in_flight > 0 {
            until_reset.min(RECHECK_MS)
        } else {
            until_reset
        })
    }

    /// Whether this process has admitted its share of the window (always false with the fleet).
    fn share_spent(&mut self, quota: &ServerQuota) -> bool {
        let in_force = self.limit_in_force(quota.limit);
        let Some(alone) = &mut self.alone else {
            return false;
        };
        if alone.window_started_ms != Some(quota.window_started_ms) {
            // A window after the fleet went out of reach (or the first reading of a cold
            // scope, whose request stays counted): a share of all of it.
            if alone.window_started_ms.is_some() {
                alone.admitted = 0;
            }
            alone.window_started_ms = Some(quota.window_started_ms);
            alone.allowance = share_of(in_force, alone.processes);
        }
        alone.admitted >= alone.allowance
    }

    /// The requests in flight count too: each may be written at any moment.
    fn ceiling_wait(&mut self, ceiling: &Ceiling, now_ms: u64) -> Option<u64> {
        while self
            .dispatches
            .front()
            .is_some_and(|&at| at + ceiling.window_ms <= now_ms)
        {
            self.dispatches.pop_front();
        }
        let max = ceiling.max_requests as usize;
        let in_flight = self.in_flight.len();
        if self.dispatches.len() + in_flight < max {
            return None;
        }
        if in_flight >= max {
            // Only answers free room, and their windows start when they come.
            return Some(RECHECK_MS);
        }
        // The entry whose window must end for one more request to fit.
        let freeing = self.dispatches[self.dispatches.len() + in_flight - max];
        Some(freeing + ceiling.window_ms - now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_700_000_000_000;
    const QUOTA_ONLY: Rules = Rules {
        server_quota: true,
        floor: 1,
        ceiling: None,
        holder: 0,
        lease_ms: None,
    };

    fn reading(remaining: f64, reset_ms: Option<u64>) -> QuotaReading {
        QuotaReading {
            limit: 10.0,
            remaining,
            reset_ms,
        }
    }

    /// Admit as many as the state allows at `now`.
    fn admit_all(state: &mut AdmissionState, rules: &Rules, now: u64) -> u32 {
        let mut admitted = 0;
        while state.try_admit(rules, now).is_ok() {
            admitted += 1;
            assert!(admitted < 1_000, "admission never stopped");
        }
        admitted
    }

    #[test]
    fn headers_parse_in_any_form_and_the_reset_is_optional() {
        assert_eq!(
            QuotaReading::from_headers(Some("90"), Some("3"), None),
            Some(QuotaReading {
                limit: 90.0,
                remaining: 3.0,
                reset_ms: None
            })
        );
        assert_eq!(
            QuotaReading::from_headers(Some("90"), Some("3"), Some("1700000000.5"))
                .and_then(|r| r.reset_ms),
            Some(1_700_000_000_500)
        );
        assert_eq!(QuotaReading::from_headers(Some("90"), None, None), None);
    }

    /// A scope whose upstream answered without quota headers: nothing to wait for.
    fn unmetered() -> AdmissionState {
        let mut state = AdmissionState::default();
        state.learn(&Answer::Served(None), 1, NOW, NOW);
        state
    }

    #[test]
    fn a_cold_scope_admits_one_request_until_an_answer_tells_the_quota() {
        let mut state = AdmissionState::default();
        assert_eq!(state.try_admit(&QUOTA_ONLY, NOW), Ok(()));
        assert_eq!(state.try_admit(&QUOTA_ONLY, NOW), Err(RECHECK_MS));
        // A failure (not a 429) tells nothing: the next request asks alone again.
        state.learn(&Answer::Failed, 1, NOW, NOW + 5);
        state.release(0);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 5), 1);
        state.learn(&Answer::Served(Some(reading(6.0, None))), 1, NOW, NOW + 10);
        state.release(0);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 10), 6);
    }

    #[test]
    fn an_upstream_without_quota_headers_opens_up_after_its_first_answer() {
        let mut state = unmetered();
        for _ in 0..100 {
            assert_eq!(state.try_admit(&QUOTA_ONLY, NOW), Ok(()));
        }
    }

    #[test]
    fn a_429_the_estimate_did_not_predict_teaches_the_limit_that_was_served() {
        let mut state = AdmissionState::default();
        // Announced 10; 3 served so far, by the headers.
        state.learn(&Answer::Served(Some(reading(7.0, None))), 1, NOW, NOW);
        let timeout_ends = NOW + 3_000;
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(timeout_ends))));
        state.learn(&refusal, 1, NOW, NOW + 10);
        assert_eq!(state.learned_limit, Some(3.0));
        // A success of that window answered after the 429 was served too.
        state.learn(&Answer::Served(Some(reading(6.0, None))), 1, NOW, NOW + 20);
        assert_eq!(state.learned_limit, Some(4.0));
        // Later 429s of the same window were predicted (nothing left): they teach nothing.
        state.learn(&refusal, 1, NOW, NOW + 30);
        assert_eq!(state.learned_limit, Some(4.0));
        assert_eq!(state.try_admit(&QUOTA_ONLY, NOW + 30), Err(3_000 - 30));
        // The timeout over, the window refills to the learned limit, not the announced one.
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, timeout_ends), 4);
        let snapshot = state.snapshot(timeout_ends);
        assert_eq!(
            (snapshot.limit, snapshot.learned_limit),
            (Some(10.0), Some(4.0))
        );
        for _ in 0..4 {
            state.release(0);
        }
        // The headers still count against 10: 9 left of 10 is 3 left of 4.
        state.learn(
            &Answer::Served(Some(reading(9.0, None))),
            1,
            timeout_ends,
            timeout_ends,
        );
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, timeout_ends), 3);
    }

    #[test]
    fn a_429_on_a_cold_scope_leaves_the_wait_to_the_retry_policy() {
        let mut cold = AdmissionState::default();
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 5_000))));
        cold.learn(&refusal, 1, NOW, NOW);
        assert_eq!(
            cold.try_admit(&QUOTA_ONLY, NOW),
            Ok(()),
            "still cold, not held"
        );
    }

    #[test]
    fn the_learned_limit_rises_by_one_per_clean_window_up_to_the_announced_one() {
        let mut state = AdmissionState::default();
        state.learn(&Answer::Served(Some(reading(2.0, None))), 1, NOW, NOW);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000))));
        state.learn(&refusal, 1, NOW, NOW);
        assert_eq!(state.learned_limit, Some(8.0));
        let mut window_end = NOW + 1_000;
        for expected in [8.0, 9.0] {
            // Rolled at the window's end: a window with a 429 does not raise it.
            assert_eq!(
                admit_all(&mut state, &QUOTA_ONLY, window_end),
                expected as u32
            );
            assert_eq!(state.learned_limit, Some(expected));
            for _ in 0..expected as u32 {
                state.release(0);
            }
            window_end += 1_000;
            let last = reading(10.0 - expected, Some(window_end));
            state.learn(
                &Answer::Served(Some(last)),
                1,
                window_end - 1_000,
                window_end - 900,
            );
        }
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, window_end), 10);
        assert_eq!(state.learned_limit, None, "back to the announced limit");
    }

    #[test]
    fn a_429_the_estimate_predicted_teaches_nothing_and_leaves_the_window_as_it_was() {
        let mut state = AdmissionState::default();
        state.learn(&Answer::Served(Some(reading(1.0, None))), 2, NOW, NOW);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 2_000))));
        state.learn(&refusal, 2, NOW, NOW);
        assert_eq!(state.learned_limit, None);
        let rules = Rules {
            floor: 2,
            ..QUOTA_ONLY
        };
        assert_eq!(
            state.try_admit(&rules, NOW + 500),
            Err(DERIVED_WINDOW_MS - 500),
            "the Retry-After is the retry policy's"
        );
        // With admission off (floor 0) nothing is predicted either.
        let mut off = AdmissionState::default();
        off.learn(&Answer::Served(Some(reading(9.0, None))), 0, NOW, NOW);
        off.learn(&refusal, 0, NOW, NOW);
        assert_eq!(off.learned_limit, None);
    }

    /// Rules for a request of `process` (tokens carry it in their high half).
    fn of_process(process: u64) -> Rules {
        Rules {
            holder: (process << 32) | 1,
            ..QUOTA_ONLY
        }
    }

    #[test]
    fn alone_a_process_admits_its_share_of_the_last_known_quota_and_counts_only_its_own() {
        let mut state = AdmissionState::default();
        state.learn(
            &Answer::Served(Some(reading(9.0, Some(NOW + 1_000)))),
            1,
            NOW,
            NOW,
        );
        // Four processes admitted lately; process 4's request is still in flight.
        for process in 1..=4 {
            assert!(state.try_admit(&of_process(process), NOW).is_ok());
            if process < 4 {
                state.release(of_process(process).holder);
            }
        }
        let shared = state.snapshot(NOW + 10);
        assert_eq!(
            (shared.processes, shared.share, shared.alone),
            (4, Some(2), false)
        );
        state.decide_alone(NOW + 10);
        // 9 left, 1 of them in flight: 8 for four processes, 2 each in this window.
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 10), 2);
        let alone = state.snapshot(NOW + 10);
        assert_eq!((alone.share, alone.alone), (Some(2), true));
        assert_eq!(
            state.try_admit(&of_process(1), NOW + 10),
            Err(REJOIN_INTERVAL_MS),
            "its share is spent until the window's end (990 ms away), but it asks again sooner: \
             the fleet's state may be back"
        );
        // Next window: a quarter of the limit (10), rounded down; its 2 in flight count.
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 1_000), 2);
        // The fleet's state read again ends it.
        state.alone = None;
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 1_000), 5);
    }

    #[test]
    fn the_fleet_absorbs_what_a_copy_learned_alone() {
        let mut fleet = AdmissionState::default();
        fleet.learn(
            &Answer::Served(Some(reading(9.0, Some(NOW + 1_000)))),
            1,
            NOW,
            NOW,
        );
        // The copy went on alone in the same window: 4 more answers.
        let mut local = fleet.clone();
        local.learn(
            &Answer::Served(Some(reading(5.0, None))),
            1,
            NOW + 10,
            NOW + 20,
        );
        let mut absorbed = fleet.clone();
        absorbed.absorb(&local, NOW + 30);
        assert_eq!(absorbed.snapshot(NOW + 30).remaining, Some(5.0));
        // The fleet's own lower reading stays.
        // The copy heard the window's reset the fleet's state missed: the earlier end holds.
        let mut derived = AdmissionState::default();
        derived.learn(&Answer::Served(Some(reading(9.0, None))), 1, NOW, NOW);
        let mut heard = derived.clone();
        heard.learn(
            &Answer::Served(Some(reading(0.0, Some(NOW + 1_000)))),
            1,
            NOW,
            NOW + 5,
        );
        derived.absorb(&heard, NOW + 10);
        assert_eq!(derived.snapshot(NOW + 10).window_ends_at, Some(NOW + 1_000));
        let mut lower = fleet.clone();
        lower.learn(
            &Answer::Served(Some(reading(2.0, None))),
            1,
            NOW + 10,
            NOW + 20,
        );
        lower.absorb(&local, NOW + 30);
        assert_eq!(lower.snapshot(NOW + 30).remaining, Some(2.0));
        // A copy still in a window the fleet has left says nothing about the fleet's.
        let mut later = fleet.clone();
        later.absorb(&local, NOW + 1_000);
        assert_eq!(later.snapshot(NOW + 1_000).remaining, Some(10.0));
        // A window only the copy knows replaces the fleet's.
        let mut newer = local.clone();
        newer.learn(
            &Answer::Served(Some(reading(7.0, Some(NOW + 2_000)))),
            1,
            NOW + 1_100,
            NOW + 1_200,
        );
        let mut behind = fleet.clone();
        behind.absorb(&newer, NOW + 1_200);
        assert_eq!(behind.snapshot(NOW + 1_200).remaining, Some(7.0));
        assert_eq!(
            behind.snapshot(NOW + 1_200).window_ends_at,
            Some(NOW + 2_000)
        );
    }

    #[test]
    fn alone_from_a_cold_start_the_first_reading_sets_the_share() {
        let mut state = AdmissionState::default();
        state.decide_alone(NOW);
        assert_eq!(
            admit_all(&mut state, &of_process(1), NOW),
            1,
            "cold: one asks"
        );
        state.learn(&Answer::Served(Some(reading(9.0, None))), 1, NOW, NOW + 5);
        state.release(of_process(1).holder);
        // Alone in the scope: the whole limit, the probe included.
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 5), 9);
    }

    #[test]
    fn a_process_alone_counts_the_processes_seen_lately_and_at_least_itself() {
        let mut state = AdmissionState::default();
        state.learn(
            &Answer::Served(Some(reading(10.0, Some(NOW + 100_000)))),
            1,
            NOW,
            NOW,
        );
        assert!(state.try_admit(&of_process(2), NOW).is_ok());
        state.release(of_process(2).holder);
        // Process 2 was last seen over a minute ago: process 1 is alone in the scope.
        let later = NOW + MEMBER_HORIZON_MS;
        state.decide_alone(later);
        assert_eq!(admit_all(&mut state, &of_process(1), later), 10);
    }

    #[test]
    fn requests_in_flight_count_against_the_quota() {
        let mut state = AdmissionState::default();
        state.observe(&reading(5.0, None), NOW, NOW);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW), 5);
        let wait = state.try_admit(&QUOTA_ONLY, NOW).unwrap_err();
        assert_eq!(
            wait, RECHECK_MS,
            "in-flight answers may free it: look again soon"
        );
        // Two answers come back reporting what the server counted.
        state.release(0);
        state.observe(&reading(4.0, None), NOW + 10, NOW + 10);
        state.release(0);
        state.observe(&reading(3.0, None), NOW + 10, NOW + 10);
        assert_eq!(
            admit_all(&mut state, &QUOTA_ONLY, NOW + 10),
            0,
            "3 left, 3 in flight"
        );
    }

    #[test]
    fn an_out_of_order_higher_remaining_does_not_raise_the_estimate() {
        let mut state = AdmissionState::default();
        state.observe(&reading(2.0, None), NOW, NOW);
        state.observe(&reading(7.0, None), NOW + 5, NOW + 5);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 5), 2);
    }

    #[test]
    fn a_missing_reset_derives_the_window_from_the_first_reading() {
        let mut state = AdmissionState::default();
        state.observe(&reading(1.0, None), NOW, NOW);
        state.observe(&reading(0.0, None), NOW + 20_000, NOW + 20_000);
        assert_eq!(
            state.try_admit(&QUOTA_ONLY, NOW + 20_000),
            Err(DERIVED_WINDOW_MS - 20_000),
            "nothing in flight: wait for the window first seen at NOW to end"
        );
        // The window rolls over: the estimate refills to the limit.
        assert_eq!(
            admit_all(&mut state, &QUOTA_ONLY, NOW + DERIVED_WINDOW_MS),
            10
        );
    }

    #[test]
    fn a_reported_reset_bounds_the_window_and_a_later_one_starts_a_new_window() {
        let mut state = AdmissionState::default();
        state.observe(&reading(3.0, None), NOW, NOW);
        state.observe(&reading(0.0, Some(NOW + 4_000)), NOW + 1_000, NOW + 1_000);
        assert_eq!(state.try_admit(&QUOTA_ONLY, NOW + 1_000), Err(3_000));
        // A late answer of the next window reports a later reset: it is trusted as new.
        state.observe(&reading(8.0, Some(NOW + 64_000)), NOW + 5_000, NOW + 5_000);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 5_000), 8);
        // A stale reset in the past is not a window end, and cannot raise the estimate.
        for _ in 0..8 {
            state.release(0);
        }
        state.observe(&reading(9.0, Some(NOW)), NOW + 6_000, NOW + 6_000);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 6_000), 8);
    }

    #[test]
    fn a_late_answer_from_the_window_before_does_not_hold_the_host_for_a_minute() {
        let mut state = AdmissionState::default();
        state.observe(&reading(1.0, Some(NOW + 2_000)), NOW, NOW);
        let after = NOW + 2_000;
        // Dispatched in the first window, answered after it ended, no reset (AniList's success).
        state.observe(&reading(0.0, None), NOW + 500, after + 10);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, after + 10), 10);
        // A reset already past belongs to a window that is over, whenever it was dispatched.
        let mut state = AdmissionState::default();
        state.observe(&reading(0.0, Some(NOW - 1_000)), NOW, NOW);
        assert_eq!(state.try_admit(&QUOTA_ONLY, NOW), Ok(()));
    }

    #[test]
    fn an_answer_dispatched_in_the_current_window_still_counts() {
        let mut state = AdmissionState::default();
        state.observe(&reading(1.0, Some(NOW + 2_000)), NOW, NOW);
        let after = NOW + 2_000;
        state.observe(&reading(0.0, None), after + 5, after + 10);
        assert!(state.try_admit(&QUOTA_ONLY, after + 10).is_err());
    }

    #[test]
    fn the_floor_keeps_quota_in_reserve() {
        let mut state = AdmissionState::default();
        state.observe(&reading(6.0, None), NOW, NOW);
        let rules = Rules {
            floor: 4,
            ..QUOTA_ONLY
        };
        assert_eq!(admit_all(&mut state, &rules, NOW), 3);
    }

    #[test]
    fn the_ceiling_holds_without_headers_and_slides() {
        let mut state = unmetered();
        let rules = Rules {
            ceiling: Some(Ceiling {
                max_requests: 3,
                window_ms: 1_000,
            }),
            ..QUOTA_ONLY
        };
        // Each request is answered at once: it counts from the end of its answer's millisecond.
        let send = |state: &mut AdmissionState, at| {
            state.try_admit(&rules, at)?;
            state.release(rules.holder);
            state.count_sent(at);
            Ok::<(), u64>(())
        };
        assert!(send(&mut state, NOW).is_ok());
        assert!(send(&mut state, NOW + 400).is_ok());
        assert!(send(&mut state, NOW + 500).is_ok());
        assert_eq!(send(&mut state, NOW + 600), Err(401));
        assert_eq!(send(&mut state, NOW + 1_000), Err(1));
        assert!(send(&mut state, NOW + 1_001).is_ok());
        assert_eq!(send(&mut state, NOW + 1_001), Err(400));
    }

    #[test]
    fn the_ceiling_counts_a_request_in_flight_until_a_window_after_its_answer() {
        let mut state = AdmissionState::default();
        let ceiling = Ceiling {
            max_requests: 2,
            window_ms: 1_000,
        };
        let rules = |holder| Rules {
            server_quota: false,
            ceiling: Some(ceiling),
            holder,
            ..QUOTA_ONLY
        };
        assert!(state.try_admit(&rules(1), NOW).is_ok());
        assert!(state.try_admit(&rules(2), NOW).is_ok());
        // Both still connecting a window later: either may be written now.
        assert_eq!(state.try_admit(&rules(3), NOW + 1_500), Err(RECHECK_MS));
        state.release(1);
        state.count_sent(NOW + 1_600);
        assert_eq!(state.try_admit(&rules(3), NOW + 1_700), Err(901));
        state.release(2);
        state.count_sent(NOW + 2_000);
        assert_eq!(state.try_admit(&rules(3), NOW + 2_100), Err(501));
        assert_eq!(state.try_admit(&rules(3), NOW + 2_601), Ok(()));
    }

    #[test]
    fn the_stricter_of_ceiling_and_quota_wins() {
        let mut state = AdmissionState::default();
        state.observe(&reading(2.0, None), NOW, NOW);
        let rules = Rules {
            ceiling: Some(Ceiling {
                max_requests: 5,
                window_ms: 1_000,
            }),
            ..QUOTA_ONLY
        };
        assert_eq!(admit_all(&mut state, &rules, NOW), 2);
        let mut loose_quota = AdmissionState::default();
        loose_quota.observe(&reading(9.0, None), NOW, NOW);
        assert_eq!(admit_all(&mut loose_quota, &rules, NOW), 5);
    }

    #[test]
    fn the_server_quota_is_ignored_when_pacing_is_off() {
        let mut state = AdmissionState::default();
        state.observe(&reading(0.0, None), NOW, NOW);
        let rules = Rules {
            server_quota: false,
            ..QUOTA_ONLY
        };
        assert!(state.try_admit(&rules, NOW).is_ok());
    }

    #[test]
    fn an_expired_lease_frees_its_reservation_and_a_release_removes_its_own_only() {
        let mut state = AdmissionState::default();
        state.observe(&reading(2.0, None), NOW, NOW);
        let leased = |holder| Rules {
            holder,
            lease_ms: Some(1_000),
            ..QUOTA_ONLY
        };
        assert!(state.try_admit(&leased(1), NOW).is_ok());
        assert!(state.try_admit(&leased(2), NOW + 500).is_ok());
        assert!(state.try_admit(&leased(3), NOW + 500).is_err());
        // Holder 1 was killed: its lease ends at NOW + 1000 and frees its place.
        assert!(state.try_admit(&leased(3), NOW + 1_000).is_ok());
        state.release(1);
        assert_eq!(
            state.snapshot(NOW + 1_000).in_flight,
            2,
            "1 held nothing any more"
        );
        state.release(2);
        assert_eq!(state.snapshot(NOW + 1_000).in_flight, 1);
    }

    #[test]
    fn adopting_takes_the_live_reservations_of_the_named_holders_once() {
        let leased = |holder, lease_ms| Rules {
            holder,
            lease_ms: Some(lease_ms),
            ..QUOTA_ONLY
        };
        let mut local = unmetered();
        for (holder, lease_ms) in [(1, 1_000), (2, 1_000), (3, 10), (4, 1_000)] {
            assert!(local.try_admit(&leased(holder, lease_ms), NOW).is_ok());
        }
        let mut fleet = unmetered();
        assert!(fleet.try_admit(&leased(2, 1_000), NOW).is_ok());
        fleet.adopt(&local, &[1, 2, 3], NOW + 100);
        let mut held: Vec<u64> = fleet.holders().collect();
        held.sort_unstable();
        assert_eq!(
            held,
            [1, 2],
            "2 was there already, 3's lease is over, 4 was not named"
        );
        assert_eq!(fleet.in_flight[1], local.in_flight[0], "with its lease");
    }

    #[test]
    fn snapshots_show_the_estimate_and_a_window_that_ended_as_refilled() {
        let mut state = AdmissionState::default();
        assert_eq!(state.snapshot(NOW).limit, None);
        state.observe(&reading(4.0, Some(NOW + 2_000)), NOW, NOW);
        assert!(state.try_admit(&QUOTA_ONLY, NOW).is_ok());
        assert_eq!(
            state.snapshot(NOW),
            AdmissionSnapshot {
                limit: Some(10.0),
                remaining: Some(4.0),
                in_flight: 1,
                window_ends_at: Some(NOW + 2_000),
                learned_limit: None,
                processes: 1,
                share: Some(10),
                alone: false,
            }
        );
        let later = state.snapshot(NOW + 2_000);
        assert_eq!((later.remaining, later.window_ends_at), (Some(10.0), None));
    }

    #[test]
    fn the_state_round_trips_through_serde() {
        let mut state = AdmissionState::default();
        state.observe(&reading(4.0, Some(NOW + 2_000)), NOW, NOW);
        let rules = Rules {
            ceiling: Some(Ceiling {
                max_requests: 3,
                window_ms: 1_000,
            }),
            lease_ms: Some(60_000),
            holder: 7,
            ..QUOTA_ONLY
        };
        assert!(state.try_admit(&rules, NOW).is_ok());
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(
            serde_json::from_str::<AdmissionState>(&text).unwrap(),
            state
        );
    }
}
