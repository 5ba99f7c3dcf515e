//! The server-quota estimate: what the upstream's rate-limit headers and 429s say is left in the
//! current window, folded so it only ever goes down within a window, ignores answers from a
//! window already over, and learns a lower limit when a 429 shows the headers overstate it
//! (the rules are in the parent module's doc).

use serde::{Deserialize, Serialize};

use super::fleet::process_of;
use super::{AdmissionState, Answer, QuotaReading, DERIVED_WINDOW_MS, RECHECK_MS};
use crate::pacing::MAX_PACE_WAIT_MS;
use crate::shared_state::link::REJOIN_INTERVAL_MS;

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub(super) struct ServerQuota {
    pub(super) limit: f64,
    /// The lowest `remaining` reported in the current window.
    pub(super) remaining: f64,
    /// None after a window ended and before the next reading opened a new one.
    pub(super) window_end_ms: Option<u64>,
    /// When the current window began, as far as this estimate knows (the end of the one
    /// before; 0 for the first): a response to a request dispatched earlier belongs to an
    /// older window and says nothing about this one.
    #[serde(default)]
    pub(super) window_started_ms: u64,
    /// A 429 arrived in this window: it does not count as clean (D39 b).
    #[serde(default)]
    pub(super) rate_limited: bool,
}

impl AdmissionState {
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
    pub(super) fn limit_in_force(&self, announced: f64) -> f64 {
        self.learned_limit
            .map_or(announced, |learned| learned.min(announced))
    }

    pub(super) fn observe(&mut self, reading: &QuotaReading, dispatched_ms: u64, now_ms: u64) {
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
        self.recheck = None;
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
    /// window from counting as clean. A 429 on an estimate known to leave requests out teaches
    /// no limit but still closes the window until its reset: one decided alone (the fleet's
    /// other requests are not counted, D39 c) and one while the estimate is checked again
    /// after a rejoin.
    fn refused(&mut self, reading: Option<&QuotaReading>, floor: u32, now_ms: u64) {
        self.roll(now_ms);
        let predicted = self.alone.is_none() && self.recheck.is_none();
        self.recheck = None;
        let learned_limit = self.learned_limit;
        let Some(quota) = &mut self.server else {
            return;
        };
        quota.rate_limited = true;
        // `rateLimitFloor: 0` turns admission off: nothing was predicted.
        if floor == 0 || quota.remaining < f64::from(floor) {
            return;
        }
        if predicted {
            let in_force = learned_limit.map_or(quota.limit, |l| l.min(quota.limit));
            self.learned_limit = Some((in_force - quota.remaining).max(1.0));
        }
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
    pub(super) fn roll(&mut self, now_ms: u64) {
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

    pub(super) fn server_wait(&mut self, floor: u32, process: u64, now_ms: u64) -> Option<u64> {
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
        if self.share_spent(&quota, now_ms) {
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
}

#[cfg(test)]
mod tests {
    use super::super::tests::{admit_all, reading, unmetered, NOW, QUOTA_ONLY};
    use super::super::*;

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
}
