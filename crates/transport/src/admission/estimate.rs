//! The server-quota estimate: what the upstream's rate-limit headers and 429s say is left in the
//! current window, folded so it only ever goes down within a window, ignores answers from a
//! window already over, and learns a lower limit when a 429 shows the headers overstate it
//! (the rules are in the parent module's doc).

use serde::{Deserialize, Serialize};

use super::fleet::process_of;
use super::{AdmissionState, Answer, QuotaReading, Rules, DERIVED_WINDOW_MS, RECHECK_MS};
use crate::pacing::MAX_PACE_WAIT_MS;
use crate::shared_state::link::REJOIN_INTERVAL_MS;

/// How often a waiter looks again while one request past `degradedLimit` is in flight (D42).
pub(super) const SERIAL_RECHECK_MS: u64 = 5;

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
    /// The window's end is one the upstream reported, not a derived one.
    #[serde(default)]
    pub(super) end_reported: bool,
}

impl AdmissionState {
    /// Fold what the answer to `holder`'s request, dispatched at `dispatched_ms`, tells into the
    /// estimate (rules in the module doc).
    pub fn learn(
        &mut self,
        answer: &Answer,
        floor: u32,
        holder: u64,
        dispatched_ms: u64,
        now_ms: u64,
    ) {
        match answer {
            Answer::Served(Some(reading)) => {
                self.check_for_crowd(holder, reading, now_ms);
                if self.observe(reading, dispatched_ms, now_ms) {
                    self.prove(reading);
                }
            }
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

    /// Fold a reading into the estimate; false when it belongs to a window already over.
    pub(super) fn observe(
        &mut self,
        reading: &QuotaReading,
        dispatched_ms: u64,
        now_ms: u64,
    ) -> bool {
        self.roll(now_ms);
        let stale_reset = reading.reset_ms.is_some_and(|reset| reset <= now_ms);
        // Without a reset, the reading cannot say which window it counted the request in.
        let older_window = reading.reset_ms.is_none()
            && self
                .server
                .is_some_and(|q| dispatched_ms < q.window_started_ms);
        if stale_reset || older_window {
            return false;
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
            end_reported: reset_ms.is_some(),
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
                    end_reported: current.end_reported || reset.is_some(),
                    ..current
                },
            },
        });
        true
    }

    /// A success of the current window, without a 429 in it, proves the headers up to what it
    /// reports served (D42). A refusal's reading proves nothing.
    fn prove(&mut self, reading: &QuotaReading) {
        if self.server.is_some_and(|q| !q.rate_limited) {
            let served = (reading.limit - reading.remaining).min(reading.limit);
            self.proven_served = self.proven_served.max(served);
        }
    }

    /// A 429 when the estimate said this request fit (at least `floor` left, counting it): the
    /// headers overstate the quota. The limit in force becomes what the window served, and
    /// nothing more is admitted until the 429's reset (the server's timeout). Any other 429
    /// leaves the waiting to the retry policy (its Retry-After) and pacing; every 429 keeps its
    /// window from counting as clean. A 429 on an estimate known to leave requests out teaches
    /// no limit but still closes the window until its reset: one decided alone (the fleet's
    /// other requests are not counted, D39 c), one while the estimate is checked again after a
    /// rejoin, and one while another client uses the credential (D43).
    fn refused(&mut self, reading: Option<&QuotaReading>, floor: u32, now_ms: u64) {
        self.roll(now_ms);
        let predicted = self.alone.is_none() && self.recheck.is_none() && !self.crowded(now_ms);
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
            // The headers lied: what they proved before no longer holds (D42).
            self.proven_served = 0.0;
        }
        quota.remaining = 0.0;
        let reset_ms = reading
            .and_then(|r| r.reset_ms)
            .filter(|&reset| reset > now_ms)
            .map(|reset| reset.min(now_ms.saturating_add(MAX_PACE_WAIT_MS)));
        quota.end_reported |= reset_ms.is_some();
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
        let end_reported = quota.end_reported;
        quota.remaining = in_force;
        quota.window_end_ms = None;
        quota.window_started_ms = end;
        quota.rate_limited = false;
        quota.end_reported = false;
        self.crowd_window_ended(end_reported);
    }

    pub(super) fn server_wait(&mut self, rules: &Rules, process: u64, now_ms: u64) -> Option<u64> {
        let wait = self.quota_wait(rules, process, now_ms);
        // Alone, a waiter asks again at least as often as the fleet's state may be tried: a
        // decision that finds Redis back ends the share (a failover takes a second or two,
        // while an unknown window's end may be a minute away).
        if self.alone.is_some() {
            return wait.map(|wait_ms| wait_ms.min(REJOIN_INTERVAL_MS));
        }
        wait
    }

    fn quota_wait(&mut self, rules: &Rules, process: u64, now_ms: u64) -> Option<u64> {
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
        if available < f64::from(rules.floor) {
            // No end known (the window ended, no reading since) and the limit in force below the
            // floor: only a reading could free room, so one request asks, as at a cold start.
            if quota.window_end_ms.is_none() {
                return (in_flight > 0).then_some(RECHECK_MS);
            }
            return Some(if in_flight > 0 {
                until_reset.min(RECHECK_MS)
            } else {
                until_reset
            });
        }
        // Another client's requests would be counted as this scope's: it waits for nothing.
        let past = rules
            .degraded_limit
            .filter(|_| !self.crowded(now_ms))
            .map_or(0.0, |limit| self.in_flight_past(&quota, limit, in_flight));
        // The one request past the degraded limit is answered soon: look again sooner than
        // RECHECK_MS, so a proven limit costs little more than that one round trip.
        (past >= 1.0).then_some(until_reset.min(SERIAL_RECHECK_MS))
    }

    /// How many requests in flight are past `degraded_limit` in the window, while the announced
    /// limit above it is not proven (D42): the window's served requests (by its estimate)
    /// count first, then those in flight. 0 once proven, or when the limit in force is not
    /// above the degraded one (a learned limit already holds the requests past it).
    fn in_flight_past(&self, quota: &ServerQuota, degraded_limit: u32, in_flight: u32) -> f64 {
        let degraded = f64::from(degraded_limit);
        let in_force = self.limit_in_force(quota.limit);
        if in_force <= degraded || self.proven_served > degraded {
            return 0.0;
        }
        let served = in_force - quota.remaining;
        let in_flight = f64::from(in_flight);
        (served + in_flight - degraded).clamp(0.0, in_flight)
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
        state.learn(&Answer::Failed, 1, 0, NOW, NOW + 5);
        state.release(0);
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, NOW + 5), 1);
        state.learn(
            &Answer::Served(Some(reading(6.0, None))),
            1,
            0,
            NOW,
            NOW + 10,
        );
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
        state.learn(&Answer::Served(Some(reading(7.0, None))), 1, 0, NOW, NOW);
        let timeout_ends = NOW + 3_000;
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(timeout_ends))));
        state.learn(&refusal, 1, 0, NOW, NOW + 10);
        assert_eq!(state.learned_limit, Some(3.0));
        // A success of that window answered after the 429 was served too.
        state.learn(
            &Answer::Served(Some(reading(6.0, None))),
            1,
            0,
            NOW,
            NOW + 20,
        );
        assert_eq!(state.learned_limit, Some(4.0));
        // Later 429s of the same window were predicted (nothing left): they teach nothing.
        state.learn(&refusal, 1, 0, NOW, NOW + 30);
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
            0,
            timeout_ends,
            timeout_ends,
        );
        assert_eq!(admit_all(&mut state, &QUOTA_ONLY, timeout_ends), 3);
    }

    #[test]
    fn a_limit_that_is_not_a_positive_whole_number_holds_nothing_back() {
        for limit in ["0", "-3", "0.4"] {
            let mut state = AdmissionState::default();
            let reading = QuotaReading::from_headers(Some(limit), Some("0"), None);
            state.learn(&Answer::Served(reading), 1, 0, NOW, NOW);
            for _ in 0..100 {
                assert_eq!(state.try_admit(&QUOTA_ONLY, NOW), Ok(()), "limit {limit}");
            }
        }
    }

    #[test]
    fn a_floor_above_the_limit_lets_one_request_ask_once_the_window_ends() {
        let mut state = AdmissionState::default();
        let rules = Rules {
            floor: 20,
            ..QUOTA_ONLY
        };
        state.learn(&Answer::Served(Some(reading(3.0, None))), 20, 0, NOW, NOW);
        assert_eq!(state.try_admit(&rules, NOW), Err(DERIVED_WINDOW_MS));
        // Refilled to 10, still below the floor, and no end known: one asks, the rest wait.
        let ended = NOW + DERIVED_WINDOW_MS;
        assert_eq!(state.try_admit(&rules, ended), Ok(()));
        assert_eq!(state.try_admit(&rules, ended), Err(RECHECK_MS));
        state.release(0);
        state.learn(
            &Answer::Served(Some(reading(9.0, None))),
            20,
            0,
            ended,
            ended + 5,
        );
        assert_eq!(state.try_admit(&rules, ended + 5), Err(DERIVED_WINDOW_MS));
    }

    #[test]
    fn a_429_on_a_cold_scope_leaves_the_wait_to_the_retry_policy() {
        let mut cold = AdmissionState::default();
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 5_000))));
        cold.learn(&refusal, 1, 0, NOW, NOW);
        assert_eq!(
            cold.try_admit(&QUOTA_ONLY, NOW),
            Ok(()),
            "still cold, not held"
        );
    }

    #[test]
    fn the_learned_limit_rises_by_one_per_clean_window_up_to_the_announced_one() {
        let mut state = AdmissionState::default();
        state.learn(&Answer::Served(Some(reading(2.0, None))), 1, 0, NOW, NOW);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000))));
        state.learn(&refusal, 1, 0, NOW, NOW);
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
                0,
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
        state.learn(&Answer::Served(Some(reading(1.0, None))), 2, 0, NOW, NOW);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 2_000))));
        state.learn(&refusal, 2, 0, NOW, NOW);
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
        off.learn(&Answer::Served(Some(reading(9.0, None))), 0, 0, NOW, NOW);
        off.learn(&refusal, 0, 0, NOW, NOW);
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

/// `degradedLimit` (D42): past it, one request in flight at a time until the announced limit
/// is proven.
#[cfg(test)]
mod degraded_limit_tests {
    use super::super::tests::{admit_all, reading, NOW, QUOTA_ONLY};
    use super::super::*;
    use super::SERIAL_RECHECK_MS;

    /// Announced 10 (by `reading`), degraded 4.
    const DEGRADED: Rules = Rules {
        degraded_limit: Some(4),
        ..QUOTA_ONLY
    };

    fn served(remaining: f64, reset_ms: Option<u64>) -> Answer {
        Answer::Served(Some(reading(remaining, reset_ms)))
    }

    #[test]
    fn past_the_degraded_limit_requests_go_one_at_a_time_until_a_success_proves_more() {
        let mut state = AdmissionState::default();
        state.learn(&served(8.0, None), 1, 0, NOW, NOW);
        // 2 served: 2 more reach 4, and the 5th goes alone.
        assert_eq!(admit_all(&mut state, &DEGRADED, NOW), 3);
        assert_eq!(state.try_admit(&DEGRADED, NOW), Err(SERIAL_RECHECK_MS));
        // An answer reporting 4 served proves nothing: the one past 4 is still in flight.
        state.release(0);
        state.learn(&served(6.0, None), 1, 0, NOW, NOW + 5);
        assert_eq!(state.try_admit(&DEGRADED, NOW + 5), Err(SERIAL_RECHECK_MS));
        // One reporting 5 served, in a window without a 429: the announced 10 holds.
        state.release(0);
        state.learn(&served(5.0, None), 1, 0, NOW, NOW + 10);
        assert_eq!(
            admit_all(&mut state, &DEGRADED, NOW + 10),
            4,
            "5 left, 1 in flight"
        );
        // Proven for the scope: the next window opens up at once.
        for _ in 0..5 {
            state.release(0);
        }
        let next_window = NOW + DERIVED_WINDOW_MS;
        assert_eq!(admit_all(&mut state, &DEGRADED, next_window), 10);
    }

    #[test]
    fn a_degraded_upstream_refuses_only_the_one_request_past_the_limit() {
        let mut state = AdmissionState::default();
        state.learn(&served(6.0, None), 1, 0, NOW, NOW);
        assert_eq!(admit_all(&mut state, &DEGRADED, NOW), 1, "the 5th, alone");
        // Refused while the headers said 6 left: the lie is revealed, 4 learned.
        let timeout_ends = NOW + 3_000;
        state.learn(
            &Answer::RateLimited(Some(reading(0.0, Some(timeout_ends)))),
            1,
            0,
            NOW,
            NOW + 5,
        );
        state.release(0);
        assert_eq!(state.snapshot(NOW + 5).learned_limit, Some(4.0));
        // The learned limit holds the requests past 4: the serial rule has nothing to add.
        assert_eq!(admit_all(&mut state, &DEGRADED, timeout_ends), 4);
    }

    #[test]
    fn a_lie_undoes_the_proof() {
        let mut state = AdmissionState::default();
        let window_ends = NOW + 1_000;
        state.learn(&served(4.0, Some(window_ends)), 1, 0, NOW, NOW);
        assert_eq!(state.proven_served, 6.0);
        // The next window: proven, so no request waits past 4.
        assert_eq!(admit_all(&mut state, &DEGRADED, window_ends), 10);
        for _ in 0..10 {
            state.release(0);
        }
        // A 429 while the headers said 6 left: they lie now.
        state.learn(&served(6.0, None), 1, 0, window_ends, window_ends + 5);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(window_ends + 3_000))));
        state.learn(&refusal, 1, 0, window_ends, window_ends + 10);
        assert_eq!(state.proven_served, 0.0);
        // Were the learned limit gone, past 4 would go one at a time again.
        state.learned_limit = None;
        assert_eq!(admit_all(&mut state, &DEGRADED, window_ends + 3_000), 5);
    }

    #[test]
    fn a_429_the_estimate_predicted_or_one_with_admission_off_keeps_the_proof() {
        let mut state = AdmissionState::default();
        state.learn(&served(3.0, Some(NOW + 1_000)), 1, 0, NOW, NOW);
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000))));
        state.learn(&served(0.0, Some(NOW + 1_000)), 1, 0, NOW, NOW + 5);
        state.learn(&refusal, 1, 0, NOW, NOW + 10);
        assert_eq!(state.proven_served, 10.0, "10 served, then nothing left");
        let mut off = AdmissionState::default();
        off.learn(&served(3.0, None), 0, 0, NOW, NOW);
        off.learn(&refusal, 0, 0, NOW, NOW + 5);
        assert_eq!(off.proven_served, 7.0);
    }

    #[test]
    fn a_refusal_proves_nothing_though_its_headers_say_all_was_served() {
        let mut cold = AdmissionState::default();
        let refusal = Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000))));
        cold.learn(&refusal, 1, 0, NOW, NOW);
        assert_eq!(cold.proven_served, 0.0);
        // Nor does a success answered after a 429 of its window.
        let mut warm = AdmissionState::default();
        warm.learn(&served(8.0, Some(NOW + 1_000)), 1, 0, NOW, NOW);
        warm.learn(&refusal, 1, 0, NOW, NOW + 5);
        warm.learn(&served(1.0, Some(NOW + 1_000)), 1, 0, NOW, NOW + 10);
        assert_eq!(
            warm.proven_served, 0.0,
            "the lie undid what the window had proved, and the success after it proves nothing"
        );
    }

    #[test]
    fn off_when_not_given_or_when_the_server_quota_is_not_followed() {
        let fresh = || {
            let mut state = AdmissionState::default();
            state.learn(&served(8.0, None), 1, 0, NOW, NOW);
            state
        };
        assert_eq!(admit_all(&mut fresh(), &QUOTA_ONLY, NOW), 8);
        // `rateLimitFloor: 0` or `paceWithRateLimit: false` turn the server quota off.
        let not_followed = Rules {
            server_quota: false,
            ..DEGRADED
        };
        let mut state = fresh();
        for _ in 0..20 {
            assert_eq!(state.try_admit(&not_followed, NOW), Ok(()));
        }
        // A limit at or above the announced one has nothing to prove.
        let above = Rules {
            degraded_limit: Some(10),
            ..QUOTA_ONLY
        };
        assert_eq!(admit_all(&mut fresh(), &above, NOW), 8);
    }

    #[test]
    fn the_proof_is_shared_state_that_older_states_read_as_unproven() {
        let mut state = AdmissionState::default();
        state.learn(&served(4.0, Some(NOW + 1_000)), 1, 0, NOW, NOW);
        let text = serde_json::to_string(&state).unwrap();
        assert_eq!(
            serde_json::from_str::<AdmissionState>(&text).unwrap(),
            state
        );
        // A state a process without D42 wrote has no proof: one request at a time past 4.
        let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert!(old
            .as_object_mut()
            .unwrap()
            .remove("proven_served")
            .is_some());
        let mut read: AdmissionState = serde_json::from_value(old).unwrap();
        assert_eq!(read.proven_served, 0.0);
        assert_eq!(admit_all(&mut read, &DEGRADED, NOW), 1);
        // A copy that saw a lie while alone takes the fleet's proof away on the rejoin.
        let mut fleet = state.clone();
        let mut lied = state.clone();
        lied.proven_served = 0.0;
        fleet.absorb(&lied, NOW + 10);
        assert_eq!(fleet.proven_served, 0.0);
    }
}
