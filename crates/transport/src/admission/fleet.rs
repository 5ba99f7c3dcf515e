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

/// While a copy decides without the fleet (D39 c): what this process may admit per window.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Alone {
    /// The processes seen in the scope when the fleet went out of reach.
    pub(super) processes: u32,
    /// The window the allowance is for; None while the scope had no reading yet.
    pub(super) window_started_ms: Option<u64>,
    pub(super) allowance: u32,
    pub(super) admitted: u32,
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

    /// The processes that admitted requests in the scope within [`MEMBER_HORIZON_MS`].
    pub(super) fn processes_seen(&self, now_ms: u64) -> u32 {
        self.members
            .iter()
            .filter(|m| m.seen_ms + MEMBER_HORIZON_MS > now_ms)
            .count() as u32
    }

    /// Whether this process has admitted its share of the window (always false with the fleet).
    pub(super) fn share_spent(&mut self, quota: &ServerQuota) -> bool {
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::{admit_all, reading, NOW, QUOTA_ONLY};
    use super::super::*;
    use super::MEMBER_HORIZON_MS;

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
            Err(990),
            "its share is spent: the window's end"
        );
        // Next window: a quarter of the limit (10), rounded down; its 2 in flight count.
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 1_000), 2);
        // The fleet's state read again ends it.
        state.alone = None;
        assert_eq!(admit_all(&mut state, &of_process(1), NOW + 1_000), 5);
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
}
