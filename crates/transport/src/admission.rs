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
//! - When the window ends the estimate refills to the limit in force. Until a reading tells the
//!   new window's end, a limit in force below the floor admits one request at a time (it asks
//!   for the quota, as at a cold start): nothing else could ever free room.
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
//! - The first 429 shows the lie only after every request in flight has reached the server, so
//!   each earns one (D42, our extension): past `degradedLimit` (what the upstream documents
//!   for its degraded mode; the provider catalog gives the default), requests of a window go one
//!   at a time, counting what the window served (by the estimate) and what is in flight, until
//!   a success reports more served in a window without a 429. That proves the announced limit
//!   until a 429 reveals a lie again. A learned limit at or below it leaves nothing to do.
//! - Requests of another client on the credential also bring 429s the estimate did not predict
//!   (D43, our extension): readings that count more than the scope can have sent show them,
//!   and while they do a 429 teaches nothing and `degradedLimit` holds nothing back (module
//!   `crowd`).
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

use crate::rate_limit::{epoch_ms, QuotaHeaders};

mod crowd;
mod estimate;
mod fleet;

use crowd::{Crowd, Mark};
use estimate::ServerQuota;
use fleet::{process_of, share_of, Alone, Member, Recheck};

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

/// The largest limit admission takes for a quota; above it the headers are absurd.
const MAX_LIMIT: f64 = u32::MAX as f64;

impl QuotaReading {
    /// From the x-ratelimit-* header values (looked up case-insensitively by the caller).
    pub fn from_headers(
        limit: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> Option<Self> {
        QuotaHeaders::parse(limit, remaining, reset).and_then(Self::of)
    }

    /// The quota admission can count on, if the headers state one: a limit that is not a
    /// whole number from 1 to [`MAX_LIMIT`] (`0`, `-3`, `0.4`) is none, since a limit of 0 would
    /// leave nothing to admit, ever; a negative remaining is nothing left.
    pub fn of(headers: QuotaHeaders) -> Option<Self> {
        let limit = headers.limit;
        if !(1.0..=MAX_LIMIT).contains(&limit) || limit.fract() != 0.0 {
            return None;
        }
        Some(Self {
            limit,
            remaining: headers.remaining.max(0.0),
            reset_ms: headers.reset.map(epoch_ms),
        })
    }
}

/// One request in flight: who holds it and until when. Across a fleet (shared state) the
/// lease frees the capacity of a worker killed mid-request; in one process it never expires.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
struct Reservation {
    holder: u64,
    expires_at: u64,
    /// How to check the reading its answer brings for another client's requests (D43); only
    /// a scope kept in one process has marks, so none is stored in a fleet's state.
    #[serde(skip)]
    mark: Option<Mark>,
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
    /// The most requests a success reported served in a window without a 429, since the last
    /// 429 that showed the headers lie: the announced limit is proven above any `degradedLimit`
    /// below this (D42).
    #[serde(default)]
    proven_served: f64,
    /// The processes that admitted or asked for admission in the scope lately.
    #[serde(default)]
    members: Vec<Member>,
    /// Set by a rejoin until an answer tells the quota again (D39 c).
    #[serde(default)]
    recheck: Option<Recheck>,
    /// What the scope knows of other clients' requests on the credential (D43); a fleet's
    /// state is not checked, so nothing of it is stored in Redis.
    #[serde(skip)]
    crowd: Crowd,
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
    /// Whether another client's requests on the credential were seen lately (D43).
    pub other_clients: bool,
    /// The most requests a window served without a 429 since the headers last lied: past
    /// `degradedLimit`, requests go one at a time until this exceeds it (D42).
    pub proven_served: f64,
}

/// How the attempt loop configures one admission decision.
#[derive(Clone, Copy, Debug)]
pub struct Rules {
    /// Whether the server's quota is followed (`paceWithRateLimit` on, `rateLimitFloor` not 0,
    /// no `ignorePaceDeadline`).
    pub server_quota: bool,
    /// At least 1 when `server_quota` is on.
    pub floor: u32,
    /// `degradedLimit` (D42): past it, one request in flight at a time until the announced
    /// limit is proven. Applies only with `server_quota`.
    pub degraded_limit: Option<u32>,
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
        self.asked(process_of(rules.holder), now_ms);
        let server_wait = rules
            .server_quota
            .then(|| self.server_wait(rules, process_of(rules.holder), now_ms))
            .flatten();
        let ceiling_wait = rules.ceiling.and_then(|c| self.ceiling_wait(&c, now_ms));
        let recheck_wait = (rules.server_quota && self.recheck_pending()).then_some(RECHECK_MS);
        match server_wait.max(ceiling_wait).max(recheck_wait) {
            Some(wait_ms) => Err(wait_ms.max(1)),
            None => {
                // A fleet's state cannot tell its processes' requests from others' (D43).
                let mark = rules.lease_ms.is_none().then(|| self.mark_dispatch());
                self.in_flight.push(Reservation {
                    holder: rules.holder,
                    expires_at: rules
                        .lease_ms
                        .map_or(u64::MAX, |lease| now_ms.saturating_add(lease)),
                    mark,
                });
                if let Some(alone) = &mut self.alone {
                    alone.admitted += 1;
                }
                if let Some(recheck) = self.recheck.as_mut().filter(|_| rules.server_quota) {
                    recheck.probe = Some(rules.holder);
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
                Some(alone) => Some(alone.allowance(alone.processes.unwrap_or(processes))),
                None => self
                    .server
                    .map(|q| share_of(self.limit_in_force(q.limit), processes)),
            },
            alone: self.alone.is_some(),
            other_clients: self.crowded(now_ms),
            proven_served: self.proven_served,
        }
    }

    /// The requests in flight count too: each may be written at any moment.
    fn ceiling_wait(&mut self, ceiling: &Ceiling, now_ms: u64) -> Option<u64> {
        while self
            .dispatches
            .front()
            .is_some_and(|&at| at.saturating_add(ceiling.window_ms) <= now_ms)
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
        // Saturating: a window too long for the clock (1e20 ms) holds forever, never wraps.
        Some(freeing.saturating_add(ceiling.window_ms) - now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(super) const NOW: u64 = 1_700_000_000_000;
    pub(super) const QUOTA_ONLY: Rules = Rules {
        server_quota: true,
        floor: 1,
        degraded_limit: None,
        ceiling: None,
        holder: 0,
        lease_ms: None,
    };

    pub(super) fn reading(remaining: f64, reset_ms: Option<u64>) -> QuotaReading {
        QuotaReading {
            limit: 10.0,
            remaining,
            reset_ms,
        }
    }

    /// Admit as many as the state allows at `now`.
    pub(super) fn admit_all(state: &mut AdmissionState, rules: &Rules, now: u64) -> u32 {
        let mut admitted = 0;
        while state.try_admit(rules, now).is_ok() {
            admitted += 1;
            assert!(admitted < 1_000, "admission never stopped");
        }
        admitted
    }

    /// A scope whose upstream answered without quota headers: nothing to wait for.
    pub(super) fn unmetered() -> AdmissionState {
        let mut state = AdmissionState::default();
        state.learn(&Answer::Served(None), 1, 0, NOW, NOW);
        state
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

    #[test]
    fn a_limit_that_is_not_a_positive_whole_number_is_no_reading() {
        for limit in ["0", "-3", "0.4", "90.5", "4294967296", "1e300"] {
            assert_eq!(
                QuotaReading::from_headers(Some(limit), Some("0"), Some("1700000000")),
                None,
                "limit {limit}"
            );
        }
        let largest = QuotaReading::from_headers(Some("4294967295"), Some("1"), None);
        assert_eq!(largest.map(|q| q.limit), Some(MAX_LIMIT));
        let negative = QuotaReading::from_headers(Some("90"), Some("-3"), None);
        assert_eq!(negative.map(|q| q.remaining), Some(0.0));
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
    fn a_ceiling_window_past_the_clock_holds_instead_of_wrapping() {
        let mut state = unmetered();
        let rules = Rules {
            ceiling: Some(Ceiling {
                max_requests: 1,
                window_ms: u64::MAX,
            }),
            ..QUOTA_ONLY
        };
        assert!(state.try_admit(&rules, NOW).is_ok());
        state.release(rules.holder);
        state.count_sent(NOW);
        assert_eq!(state.try_admit(&rules, NOW + 10), Err(u64::MAX - NOW - 10));
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
        // A success reporting 6 served, in a window without a 429.
        let answer = Answer::Served(Some(reading(4.0, Some(NOW + 2_000))));
        state.learn(&answer, 1, 0, NOW, NOW);
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
                other_clients: false,
                proven_served: 6.0,
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
