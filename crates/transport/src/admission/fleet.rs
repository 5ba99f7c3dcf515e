//! Admission across a fleet that shares state: which processes admitted requests in a scope
//! lately, and what one process may admit on its own while the fleet's state is out of reach
//! (decisions D39 c): its share of the last known quota, so processes that lose Redis together
//! still stay under the quota together.

use serde::{Deserialize, Serialize};

use super::{AdmissionState, ServerQuota, DERIVED_WINDOW_MS};

/// Processes count in a scope's fleet for this long after their latest admission.
pub(super) const MEMBER_HORIZON_MS: u64 = DERIVED_WINDOW_MS;

/// The process a holder token belongs to: tokens carry it in their high half.
pub(super) fn process_of(holder: u64) -> u64 {
    holder >> 32
}

/// A process that admitted requests in the scope, and when it last did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Member {
    pub(super) process: u64,
    pub(super) seen_ms: u64,
}

/// Members refresh their entry on a decision that admits nothing at most this often: a
/// waiting process counts in the fleet without a write on every wait.
const MEMBER_REFRESH_MS: u64 = 1_000;

/// While a copy decides without the fleet (D39 c): what this process may admit per window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Alone {
    /// The processes seen in the scope when the fleet went out of reach, this one included.
    /// Counted at the first decision alone, where the asker is known: a process that had only
    /// waited so far is not among the copy's members yet.
    pub(super) processes: Option<u32>,
    /// The window the allowance is for; None while the scope had no reading yet.
    pub(super) window_started_ms: Option<u64>,
    pub(super) pool: Pool,
    pub(super) admitted: u32,
}

/// What the processes alone divide between them in the window `Alone` is for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Pool {
    /// No reading yet: nothing beyond the one request that asks for the quota.
    Unknown,
    /// What was left of the window under way (its estimate less every request in flight):
    /// each share rounds down, to nothing when little was left.
    Left(f64),
    /// A whole window's limit in force: each share at least one request.
    Window(f64),
}

impl Alone {
    pub(super) fn allowance(&self, processes: u32) -> u32 {
        match self.pool {
            Pool::Unknown => 0,
            Pool::Left(left) => (left / f64::from(processes.max(1))).floor() as u32,
            Pool::Window(limit) => share_of(limit, processes),
        }
    }
}

/// The estimate is being checked again after a rejoin ([`AdmissionState::rejoined`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct Recheck {
    /// The request that asks, once admitted.
    pub(super) probe: Option<u64>,
}

/// One process's part of a window's `limit` among `processes`: rounded down, at least one.
pub(super) fn share_of(limit: f64, processes: u32) -> u32 {
    ((limit / f64::from(processes.max(1))).floor() as u32).max(1)
}

impl AdmissionState {
    /// `process` admitted a request at `now_ms`; processes not seen for a while are forgotten.
    pub(super) fn seen(&mut self, process: u64, now_ms: u64) {
        self.members
            .retain(|m| m.process != process && m.seen_ms + MEMBER_HORIZON_MS > now_ms);
        self.members.push(Member {
            process,
            seen_ms: now_ms,
        });
    }

    /// `process` asks for admission at `now_ms`: it competes for the quota whether or not it
    /// is admitted, so it counts among the processes that share it (refreshed at most every
    /// [`MEMBER_REFRESH_MS`], so waiting costs the fleet's state no write per decision).
    pub(super) fn asked(&mut self, process: u64, now_ms: u64) {
        let fresh = self
            .members
            .iter()
            .any(|m| m.process == process && m.seen_ms + MEMBER_REFRESH_MS > now_ms);
        if !fresh {
            self.seen(process, now_ms);
        }
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
        let in_flight = self.in_flight.len() as f64;
        self.alone = Some(Alone {
            processes: None,
            window_started_ms: self.server.map(|q| q.window_started_ms),
            pool: self.server.map_or(Pool::Unknown, |q| {
                Pool::Left((q.remaining - in_flight).max(0.0))
            }),
            admitted: 0,
        });
    }

    /// This process is back on the fleet's state after an outage. That state may be behind
    /// (a failed-over Redis loses its last writes; the processes still alone add requests it
    /// does not count), so until an answer tells the quota again, one request at a time goes
    /// out on it (as at a cold start, D39 a), and its 429 teaches no limit.
    pub fn rejoined(&mut self) {
        if self.server.is_some() {
            self.recheck = Some(Recheck { probe: None });
        }
    }

    /// While the estimate awaits an answer after a rejoin: whether the request that asks is
    /// still in flight.
    pub(super) fn recheck_pending(&self) -> bool {
        self.recheck
            .and_then(|recheck| recheck.probe)
            .is_some_and(|probe| self.in_flight.iter().any(|r| r.holder == probe))
    }

    /// The processes that admitted or asked in the scope within [`MEMBER_HORIZON_MS`].
    pub(super) fn processes_seen(&self, now_ms: u64) -> u32 {
        self.members
            .iter()
            .filter(|m| m.seen_ms + MEMBER_HORIZON_MS > now_ms)
            .count() as u32
    }

    /// Whether this process has admitted its share of the window (always false with the
    /// fleet). The asker is among the members by now ([`asked`](Self::asked) came first).
    pub(super) fn share_spent(&mut self, quota: &ServerQuota, now_ms: u64) -> bool {
        let in_force = self.limit_in_force(quota.limit);
        let seen = self.processes_seen(now_ms);
        let Some(alone) = &mut self.alone else {
            return false;
        };
        let processes = *alone.processes.get_or_insert(seen.max(1));
        if alone.window_started_ms != Some(quota.window_started_ms) {
            if alone.window_started_ms.is_some() {
                // A window after the fleet went out of reach: a share of all of it.
                alone.pool = Pool::Window(in_force);
                alone.admitted = 0;
            } else {
                // The first reading of a cold scope: a share of what it says is left and of
                // the request that asked (answered, so counted in it), which stays counted.
                alone.pool = Pool::Left(quota.remaining + f64::from(alone.admitted));
            }
            alone.window_started_ms = Some(quota.window_started_ms);
        }
        alone.admitted >= alone.allowance(processes)
    }
}

impl AdmissionState {
    /// Fold into this state (the fleet's, read again after local decisions) what `local` (this
    /// process's copy) learned meanwhile: the answers it received lowered its estimate of the
    /// window, and the fleet's state has not seen them (its Redis may even be a failed-over
    /// replica a few writes behind). The same window keeps the lower `remaining`; a window
    /// `local` knows and the fleet does not yet replaces the fleet's; the lower learned limit
    /// stays, as does the lesser proof of the announced limit (D42). Reservations are not
    /// touched ([`adopt`](Self::adopt) carries those).
    pub fn absorb(&mut self, local: &AdmissionState, now_ms: u64) {
        self.roll(now_ms);
        if let Some(learned) = local.learned_limit {
            self.learned_limit = Some(self.learned_limit.map_or(learned, |l| l.min(learned)));
        }
        // The lesser proof: a lie the copy saw undoes it (D42); a proof the copy alone saw is
        // earned again at the cost of one request at a time.
        self.proven_served = self.proven_served.min(local.proven_served);
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
            ours.end_reported |= theirs.end_reported;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{admit_all, reading, NOW, QUOTA_ONLY};
    use super::super::*;
    use super::{MEMBER_HORIZON_MS, MEMBER_REFRESH_MS};
    use crate::shared_state::link::REJOIN_INTERVAL_MS;

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
            0,
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
            0,
            NOW,
            NOW,
        );
        // The copy went on alone in the same window: 4 more answers.
        let mut local = fleet.clone();
        local.learn(
            &Answer::Served(Some(reading(5.0, None))),
            1,
            0,
            NOW + 10,
            NOW + 20,
        );
        let mut absorbed = fleet.clone();
        absorbed.absorb(&local, NOW + 30);
        assert_eq!(absorbed.snapshot(NOW + 30).remaining, Some(5.0));
        // The fleet's own lower reading stays.
        // The copy heard the window's reset the fleet's state missed: the earlier end holds.
        let mut derived = AdmissionState::default();
        derived.learn(&Answer::Served(Some(reading(9.0, None))), 1, 0, NOW, NOW);
        let mut heard = derived.clone();
        heard.learn(
            &Answer::Served(Some(reading(0.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW + 5,
        );
        derived.absorb(&heard, NOW + 10);
        assert_eq!(derived.snapshot(NOW + 10).window_ends_at, Some(NOW + 1_000));
        let mut lower = fleet.clone();
        lower.learn(
            &Answer::Served(Some(reading(2.0, None))),
            1,
            0,
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
            0,
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
        state.learn(
            &Answer::Served(Some(reading(9.0, None))),
            1,
            0,
            NOW,
            NOW + 5,
        );
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
            0,
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
    fn a_process_that_only_waited_counts_among_the_fleet_and_waiting_writes_little() {
        let mut fleet = AdmissionState::default();
        fleet.learn(
            &Answer::Served(Some(reading(9.0, Some(NOW + 100_000)))),
            1,
            0,
            NOW,
            NOW,
        );
        // Process 1 holds the last 9 requests of the window; process 2 asks and waits.
        assert_eq!(admit_all(&mut fleet, &of_process(1), NOW), 9);
        assert!(fleet.try_admit(&of_process(2), NOW).is_err());
        assert_eq!(fleet.snapshot(NOW).processes, 2, "the waiter is a member");
        let before = fleet.clone();
        assert!(fleet
            .try_admit(&of_process(2), NOW + MEMBER_REFRESH_MS - 1)
            .is_err());
        assert_eq!(fleet, before, "a wait soon after changes nothing to write");
        // Both fall back on copies of this state; process 1's requests are answered alone.
        let mut waiter = fleet.clone();
        waiter.decide_alone(NOW + 10);
        let mut holder = fleet.clone();
        holder.decide_alone(NOW + 10);
        for _ in 0..9 {
            holder.release(of_process(1).holder);
        }
        // Nothing was left beyond the 9 in flight: neither admits in this window.
        assert_eq!(admit_all(&mut waiter, &of_process(2), NOW + 10), 0);
        assert_eq!(admit_all(&mut holder, &of_process(1), NOW + 10), 0);
    }

    #[test]
    fn a_process_alone_counts_itself_though_the_copy_never_saw_it_admit() {
        let mut fleet = AdmissionState::default();
        fleet.learn(
            &Answer::Served(Some(reading(10.0, Some(NOW + 100_000)))),
            1,
            0,
            NOW,
            NOW,
        );
        for process in [1, 2] {
            assert!(fleet.try_admit(&of_process(process), NOW).is_ok());
            fleet.release(of_process(process).holder);
        }
        // Process 3's copy was read before it asked: it is the third, not one of two.
        let mut copy = fleet.clone();
        copy.decide_alone(NOW + 10);
        assert_eq!(admit_all(&mut copy, &of_process(3), NOW + 10), 3);
        assert_eq!(copy.snapshot(NOW + 10).share, Some(3));
    }

    #[test]
    fn a_429_decided_alone_closes_the_window_but_teaches_no_limit() {
        let mut state = AdmissionState::default();
        state.learn(
            &Answer::Served(Some(reading(8.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW,
        );
        state.decide_alone(NOW);
        assert_eq!(admit_all(&mut state, &of_process(1), NOW), 8);
        // The other processes spent the window: the estimate alone could not know.
        state.learn(
            &Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW + 5,
        );
        state.release(of_process(1).holder);
        assert!(state.try_admit(&of_process(1), NOW + 5).is_err());
        assert_eq!(state.snapshot(NOW + 5).learned_limit, None);
    }

    #[test]
    fn after_a_rejoin_one_request_asks_and_its_429_teaches_no_limit() {
        let mut state = AdmissionState::default();
        state.learn(
            &Answer::Served(Some(reading(9.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW,
        );
        state.rejoined();
        assert!(state.try_admit(&of_process(1), NOW).is_ok());
        assert_eq!(state.try_admit(&of_process(2), NOW), Err(RECHECK_MS));
        // The estimate had lagged: the window was spent.
        state.learn(
            &Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW + 5,
        );
        state.release(of_process(1).holder);
        assert_eq!(state.snapshot(NOW + 5).learned_limit, None);
        assert_eq!(state.try_admit(&of_process(2), NOW + 5), Err(995));
        // A probe that fails without an answer gives the turn to the next request.
        let mut failed = AdmissionState::default();
        failed.learn(
            &Answer::Served(Some(reading(9.0, Some(NOW + 1_000)))),
            1,
            0,
            NOW,
            NOW,
        );
        failed.rejoined();
        assert!(failed.try_admit(&of_process(1), NOW).is_ok());
        failed.learn(&Answer::Failed, 1, 0, NOW, NOW + 5);
        failed.release(of_process(1).holder);
        assert!(failed.try_admit(&of_process(2), NOW + 5).is_ok());
        assert_eq!(failed.try_admit(&of_process(2), NOW + 5), Err(RECHECK_MS));
        // A cold state has no estimate to check.
        let mut cold = AdmissionState::default();
        cold.rejoined();
        assert_eq!(cold, AdmissionState::default());
    }
}
