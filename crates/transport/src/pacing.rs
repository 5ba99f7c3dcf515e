//! Rate-limit pacing: wait for the quota to refill instead of spending a request on a 429.
//!
//! Both upstreams say how much quota is left and when it resets. When a successful response
//! reports the quota below the floor, or a request finally gives up on a 429, the reset instant
//! is stored for the host and the *next* request waits for it before dispatch. The response that
//! noticed the exhaustion is still returned at once: pacing delays future work, never the
//! answer already in hand.
//!
//! The stored deadline only ever moves later while it is in the future (two responses racing
//! must not shorten each other's wait), is capped at five minutes from when it was recorded (a
//! bogus or distant reset must not freeze a client; if the quota is still gone after five
//! minutes, the next 429 records a new deadline), and stays in place after a wait completes so
//! that snapshots keep showing it until it has elapsed.
//!
//! Waiters get a small random stagger on top of the deadline: requests queued behind the same
//! deadline would otherwise all fire in the same millisecond and drain the fresh quota at once.
//! Pacing time is reported separately from an attempt's `durationMs` (decisions D6).

use crate::random::RandomSource;
use crate::rate_limit::RateLimitInfo;

/// The longest one pacing deadline can lie ahead of the moment it is recorded.
pub const MAX_PACE_WAIT_MS: u64 = 300_000;
/// The largest random stagger added to a pacing wait.
pub const MAX_STAGGER_MS: u64 = 500;

/// After a successful response: Some(deadline) when remaining < floor (strict), deadline = min(reset*1000, now + MAX_PACE_WAIT_MS). floor 0 never paces unless remaining is negative.
pub fn deadline_after_success(info: &RateLimitInfo, floor: u32, now_ms: u64) -> Option<u64> {
    (info.remaining < f64::from(floor)).then(|| capped_reset_deadline(info, now_ms))
}

/// After a terminal 429 carrying rate-limit info: min(reset*1000, now + MAX_PACE_WAIT_MS).
pub fn deadline_after_terminal_429(info: &RateLimitInfo, now_ms: u64) -> u64 {
    capped_reset_deadline(info, now_ms)
}

fn capped_reset_deadline(info: &RateLimitInfo, now_ms: u64) -> u64 {
    info.reset_at_ms()
        .min(now_ms.saturating_add(MAX_PACE_WAIT_MS))
}

/// Store a deadline for one host: d <= now clears the slot only if it is empty or itself stale; otherwise slot = max(existing, d).
pub fn record_deadline(slot: &mut Option<u64>, deadline_ms: u64, now_ms: u64) {
    if deadline_ms > now_ms {
        *slot = Some(slot.map_or(deadline_ms, |existing| existing.max(deadline_ms)));
    } else if slot.is_none_or(|existing| existing <= now_ms) {
        *slot = None;
    }
}

/// A pacing wait before dispatch: the time until the deadline, plus a random stagger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaceWait {
    /// Time until the deadline; this is what `onPace` reports and `pacedMs` accumulates.
    pub delay_ms: u64,
    /// Extra random time slept after `delay_ms`, so waiters do not all fire together.
    pub stagger_ms: u64,
}

/// Before dispatch: None when no deadline or it has passed (a stale deadline is cleared from the slot). Otherwise delay = deadline - now, stagger uniform in [0, min(MAX_STAGGER_MS, delay/10)]. The slot is kept (it stays visible in snapshots until a later wait finds it elapsed).
pub fn plan_wait(slot: &mut Option<u64>, now_ms: u64, rng: &dyn RandomSource) -> Option<PaceWait> {
    let deadline_ms = (*slot)?;
    if deadline_ms <= now_ms {
        *slot = None;
        return None;
    }
    let delay_ms = deadline_ms - now_ms;
    let stagger_ms = rng.below_inclusive(MAX_STAGGER_MS.min(delay_ms / 10));
    Some(PaceWait {
        delay_ms,
        stagger_ms,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeededRandom;

    const NOW_MS: u64 = 1_700_000_000_000;

    fn quota(remaining: f64, reset_seconds: f64) -> RateLimitInfo {
        RateLimitInfo {
            limit: 90.0,
            remaining,
            reset: reset_seconds,
        }
    }

    /// Reset 30 s after `NOW_MS`.
    const SOON: f64 = 1_700_000_030.0;

    #[test]
    fn success_paces_only_strictly_below_the_floor() {
        assert_eq!(
            deadline_after_success(&quota(0.0, SOON), 1, NOW_MS),
            Some(NOW_MS + 30_000)
        );
        assert_eq!(deadline_after_success(&quota(1.0, SOON), 1, NOW_MS), None);
        assert_eq!(
            deadline_after_success(&quota(4.0, SOON), 5, NOW_MS),
            Some(NOW_MS + 30_000)
        );
        assert_eq!(deadline_after_success(&quota(5.0, SOON), 5, NOW_MS), None);
    }

    #[test]
    fn floor_zero_paces_only_a_negative_remaining() {
        assert_eq!(deadline_after_success(&quota(0.0, SOON), 0, NOW_MS), None);
        assert_eq!(
            deadline_after_success(&quota(-1.0, SOON), 0, NOW_MS),
            Some(NOW_MS + 30_000)
        );
    }

    #[test]
    fn deadlines_are_capped_at_five_minutes() {
        let in_an_hour = 1_700_003_600.0;
        assert_eq!(
            deadline_after_success(&quota(0.0, in_an_hour), 1, NOW_MS),
            Some(NOW_MS + MAX_PACE_WAIT_MS)
        );
        assert_eq!(
            deadline_after_terminal_429(&quota(3.0, in_an_hour), NOW_MS),
            NOW_MS + MAX_PACE_WAIT_MS
        );
        assert_eq!(
            deadline_after_terminal_429(&quota(3.0, SOON), NOW_MS),
            NOW_MS + 30_000
        );
    }

    #[test]
    fn recording_keeps_the_later_deadline() {
        let mut slot = None;
        record_deadline(&mut slot, NOW_MS + 5_000, NOW_MS);
        assert_eq!(slot, Some(NOW_MS + 5_000));
        record_deadline(&mut slot, NOW_MS + 2_000, NOW_MS);
        assert_eq!(slot, Some(NOW_MS + 5_000));
        record_deadline(&mut slot, NOW_MS + 9_000, NOW_MS);
        assert_eq!(slot, Some(NOW_MS + 9_000));
    }

    #[test]
    fn a_past_deadline_does_not_clear_a_live_one() {
        let mut slot = Some(NOW_MS + 5_000);
        record_deadline(&mut slot, NOW_MS - 1, NOW_MS);
        assert_eq!(slot, Some(NOW_MS + 5_000));
        record_deadline(&mut slot, NOW_MS, NOW_MS);
        assert_eq!(slot, Some(NOW_MS + 5_000));
    }

    #[test]
    fn a_past_deadline_clears_a_stale_one() {
        let mut slot = Some(NOW_MS);
        record_deadline(&mut slot, NOW_MS - 10, NOW_MS);
        assert_eq!(slot, None);
        let mut empty = None;
        record_deadline(&mut empty, 0, NOW_MS);
        assert_eq!(empty, None);
    }

    #[test]
    fn no_deadline_means_no_wait() {
        let mut slot = None;
        assert_eq!(plan_wait(&mut slot, NOW_MS, &SeededRandom::new(1)), None);
    }

    #[test]
    fn an_elapsed_deadline_is_cleared_without_waiting() {
        for deadline in [NOW_MS, NOW_MS - 1] {
            let mut slot = Some(deadline);
            assert_eq!(plan_wait(&mut slot, NOW_MS, &SeededRandom::new(1)), None);
            assert_eq!(slot, None);
        }
    }

    #[test]
    fn a_future_deadline_waits_and_stays_recorded() {
        let mut slot = Some(NOW_MS + 3_000);
        let wait = plan_wait(&mut slot, NOW_MS, &SeededRandom::new(1));
        assert_eq!(wait.map(|w| w.delay_ms), Some(3_000));
        assert_eq!(
            slot,
            Some(NOW_MS + 3_000),
            "the deadline stays visible until it elapses"
        );
    }

    #[test]
    fn stagger_is_bounded_by_a_tenth_of_the_delay_and_500_ms() {
        let rng = SeededRandom::new(3);
        for (delay_ms, bound) in [(9, 0), (10, 1), (2_000, 200), (5_000, 500), (60_000, 500)] {
            let mut largest = 0;
            for _ in 0..400 {
                let mut slot = Some(NOW_MS + delay_ms);
                let wait = plan_wait(&mut slot, NOW_MS, &rng).expect("a future deadline paces");
                assert_eq!(wait.delay_ms, delay_ms);
                assert!(
                    wait.stagger_ms <= bound,
                    "stagger {} above {bound}",
                    wait.stagger_ms
                );
                largest = largest.max(wait.stagger_ms);
            }
            assert!(
                largest * 10 >= bound * 9,
                "stagger for {delay_ms} ms never neared {bound}"
            );
        }
    }
}
