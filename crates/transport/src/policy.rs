//! The per-request retry decision: whether a failed attempt is worth repeating, and after how long.
//!
//! Only failures that a later identical attempt can plausibly avoid are retried: statuses the
//! caller listed (decisions D4: the list is the whole truth, 429 included), and network errors
//! and timeouts when the policy allows them. Everything that describes the request itself (a
//! 4xx, a GraphQL error without an upstream status, a local failure) would fail the same way
//! again, so retrying it only adds load.
//!
//! Waits grow exponentially so that a struggling upstream sees less traffic the longer it
//! struggles, and use *full jitter* (a uniform pick between zero and the cap) so that many
//! clients failing at the same instant do not come back at the same instant. A wait the server
//! dictated is different: it is a statement about when capacity returns, so it is used as is,
//! never jittered, only capped at [`SERVER_WAIT_CAP_MS`].
//!
//! This module looks at one request only. The cross-request limits (retry budget, circuit
//! breaker) are applied by the caller on top of its answer.

use crate::random::RandomSource;
use crate::retry_after::SERVER_WAIT_CAP_MS;

/// The resolved `retry` option of one request.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryPolicy {
    /// Retries after the first attempt; `maxRetries + 1` attempts at most.
    pub max_retries: u32,
    pub base_delay_ms: f64,
    pub max_delay_ms: f64,
    /// The only statuses retried (decisions D4).
    pub retry_on_status: Vec<u16>,
    pub retry_on_network_error: bool,
    pub jitter: bool,
}

impl Default for RetryPolicy {
    /// The documented defaults: three retries with caps of 250, 500 and 1000 ms.
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay_ms: 250.0,
            max_delay_ms: 5_000.0,
            retry_on_status: vec![429, 500, 502, 503, 504],
            retry_on_network_error: true,
            jitter: true,
        }
    }
}

/// How a failed attempt is classified for the retry decision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FailureClass {
    /// An HTTP error status, or the upstream status carried by a GraphQL envelope error entry. `server_wait_ms` is from retry_after::server_directed_wait_ms (uncapped).
    Status {
        status: u16,
        server_wait_ms: Option<u64>,
    },
    /// A GraphQL envelope error without an upstream status: a caller query bug, never retried.
    StatuslessEnvelope,
    Network,
    Timeout,
    Aborted,
    CircuitOpen,
    /// Caller-side or local failures no retry can fix (auth, validation, unknown, non-JSON 2xx body).
    Fatal,
}

/// The wait before a retry, and where it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RetryWait {
    /// Exponential backoff (already jittered when the policy says so).
    Backoff { delay_ms: u64 },
    /// A server-directed wait: never jittered; `delay_ms` is capped at SERVER_WAIT_CAP_MS, `uncapped_ms` is what the server asked for.
    ServerDirected { delay_ms: u64, uncapped_ms: u64 },
}

impl RetryWait {
    /// The time actually slept before the retry.
    pub fn delay_ms(&self) -> u64 {
        match *self {
            RetryWait::Backoff { delay_ms } | RetryWait::ServerDirected { delay_ms, .. } => {
                delay_ms
            }
        }
    }
}

/// cap = floor(min(base_delay_ms * 2^attempt_index, max_delay_ms)), saturating, never overflowing (attempt_index can be large).
pub fn backoff_cap_ms(policy: &RetryPolicy, attempt_index: u32) -> u64 {
    // 2^1023 is the largest finite power of two; beyond it the product would be infinite, and
    // `0 * inf` would be NaN for a zero base. Any growth that large is clamped by `max_delay_ms`.
    let exponent = attempt_index.min(f64::MAX_EXP as u32 - 1) as i32;
    let uncapped = policy.base_delay_ms * 2f64.powi(exponent);
    // `as` saturates, so a huge `max_delay_ms` becomes u64::MAX rather than wrapping.
    uncapped.min(policy.max_delay_ms).floor() as u64
}

/// Full jitter: uniform integer in [0, cap]; with jitter off exactly cap.
pub fn backoff_delay_ms(policy: &RetryPolicy, attempt_index: u32, rng: &dyn RandomSource) -> u64 {
    let cap = backoff_cap_ms(policy, attempt_index);
    if policy.jitter {
        rng.below_inclusive(cap)
    } else {
        cap
    }
}

/// The per-attempt retry decision, ignoring budget and breaker (the caller applies those): None = do not retry.
///
/// `attempt_index` is the zero-based index of the attempt that just failed; attempt_index >= max_retries -> None.
/// Status: retried only if in retry_on_status (D4: the list is authoritative, 429 included only when listed); if a server wait is given -> ServerDirected, else Backoff.
/// Network and Timeout: Backoff if retry_on_network_error. Everything else: None.
pub fn retry_wait(
    policy: &RetryPolicy,
    failure: FailureClass,
    attempt_index: u32,
    rng: &dyn RandomSource,
) -> Option<RetryWait> {
    if attempt_index >= policy.max_retries {
        return None;
    }
    let backoff = || RetryWait::Backoff {
        delay_ms: backoff_delay_ms(policy, attempt_index, rng),
    };
    match failure {
        FailureClass::Status {
            status,
            server_wait_ms,
        } => {
            if !policy.retry_on_status.contains(&status) {
                return None;
            }
            Some(match server_wait_ms {
                Some(uncapped_ms) => RetryWait::ServerDirected {
                    delay_ms: uncapped_ms.min(SERVER_WAIT_CAP_MS),
                    uncapped_ms,
                },
                None => backoff(),
            })
        }
        FailureClass::Network | FailureClass::Timeout => {
            policy.retry_on_network_error.then(backoff)
        }
        FailureClass::StatuslessEnvelope
        | FailureClass::Aborted
        | FailureClass::CircuitOpen
        | FailureClass::Fatal => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::SeededRandom;

    /// A source that always answers its upper bound, to expose the cap through the jitter path.
    struct AlwaysMax;
    impl RandomSource for AlwaysMax {
        fn below_inclusive(&self, max: u64) -> u64 {
            max
        }
    }

    fn no_jitter() -> RetryPolicy {
        RetryPolicy {
            jitter: false,
            ..RetryPolicy::default()
        }
    }

    fn status(status: u16) -> FailureClass {
        FailureClass::Status {
            status,
            server_wait_ms: None,
        }
    }

    #[test]
    fn default_caps_double_from_the_base() {
        let policy = RetryPolicy::default();
        let caps: Vec<u64> = (0..6)
            .map(|attempt| backoff_cap_ms(&policy, attempt))
            .collect();
        assert_eq!(caps, [250, 500, 1_000, 2_000, 4_000, 5_000]);
    }

    #[test]
    fn caps_are_floored_and_saturate_for_huge_attempts() {
        let policy = RetryPolicy {
            base_delay_ms: 0.75,
            max_delay_ms: 1e300,
            ..RetryPolicy::default()
        };
        assert_eq!(backoff_cap_ms(&policy, 0), 0);
        assert_eq!(backoff_cap_ms(&policy, 1), 1);
        assert_eq!(backoff_cap_ms(&policy, u32::MAX), u64::MAX);
        let bounded = RetryPolicy::default();
        assert_eq!(backoff_cap_ms(&bounded, u32::MAX), 5_000);
    }

    #[test]
    fn zero_base_never_becomes_nan() {
        let policy = RetryPolicy {
            base_delay_ms: 0.0,
            ..RetryPolicy::default()
        };
        assert_eq!(backoff_cap_ms(&policy, u32::MAX), 0);
    }

    #[test]
    fn jitter_off_waits_exactly_the_cap() {
        let policy = no_jitter();
        let rng = SeededRandom::new(1);
        assert_eq!(backoff_delay_ms(&policy, 2, &rng), 1_000);
    }

    #[test]
    fn full_jitter_spans_zero_to_the_cap() {
        let policy = RetryPolicy {
            base_delay_ms: 4.0,
            ..RetryPolicy::default()
        };
        let rng = SeededRandom::new(7);
        let mut seen = [false; 5];
        for _ in 0..500 {
            let delay = backoff_delay_ms(&policy, 0, &rng);
            assert!(delay <= 4, "{delay} exceeds the cap");
            seen[delay as usize] = true;
        }
        assert_eq!(seen, [true; 5], "every integer in [0, cap] should occur");
        assert_eq!(backoff_delay_ms(&policy, 1, &AlwaysMax), 8);
    }

    #[test]
    fn listed_statuses_back_off() {
        let policy = no_jitter();
        let rng = SeededRandom::new(1);
        for code in [429, 500, 502, 503, 504] {
            assert_eq!(
                retry_wait(&policy, status(code), 1, &rng),
                Some(RetryWait::Backoff { delay_ms: 500 })
            );
        }
    }

    #[test]
    fn unlisted_statuses_are_not_retried_429_included() {
        let rng = SeededRandom::new(1);
        for code in [400, 401, 404, 501, 200] {
            assert_eq!(
                retry_wait(&RetryPolicy::default(), status(code), 0, &rng),
                None,
                "{code}"
            );
        }
        let without_429 = RetryPolicy {
            retry_on_status: vec![503],
            ..RetryPolicy::default()
        };
        let rate_limited = FailureClass::Status {
            status: 429,
            server_wait_ms: Some(1_000),
        };
        assert_eq!(retry_wait(&without_429, rate_limited, 0, &rng), None);
    }

    #[test]
    fn server_waits_are_capped_and_never_jittered() {
        let policy = RetryPolicy::default();
        let short = FailureClass::Status {
            status: 429,
            server_wait_ms: Some(1_500),
        };
        assert_eq!(
            retry_wait(&policy, short, 0, &AlwaysMax),
            Some(RetryWait::ServerDirected {
                delay_ms: 1_500,
                uncapped_ms: 1_500
            })
        );
        let long = FailureClass::Status {
            status: 503,
            server_wait_ms: Some(600_000),
        };
        let wait = retry_wait(&policy, long, 0, &AlwaysMax);
        assert_eq!(
            wait,
            Some(RetryWait::ServerDirected {
                delay_ms: SERVER_WAIT_CAP_MS,
                uncapped_ms: 600_000
            })
        );
        assert_eq!(wait.map(|w| w.delay_ms()), Some(SERVER_WAIT_CAP_MS));
    }

    #[test]
    fn network_errors_and_timeouts_follow_the_flag() {
        let rng = SeededRandom::new(1);
        let policy = no_jitter();
        for failure in [FailureClass::Network, FailureClass::Timeout] {
            assert_eq!(
                retry_wait(&policy, failure, 0, &rng),
                Some(RetryWait::Backoff { delay_ms: 250 })
            );
            let off = RetryPolicy {
                retry_on_network_error: false,
                ..no_jitter()
            };
            assert_eq!(retry_wait(&off, failure, 0, &rng), None);
        }
    }

    #[test]
    fn unfixable_failures_are_never_retried() {
        let rng = SeededRandom::new(1);
        for failure in [
            FailureClass::StatuslessEnvelope,
            FailureClass::Aborted,
            FailureClass::CircuitOpen,
            FailureClass::Fatal,
        ] {
            assert_eq!(
                retry_wait(&RetryPolicy::default(), failure, 0, &rng),
                None,
                "{failure:?}"
            );
        }
    }

    #[test]
    fn the_attempt_count_is_bounded_by_max_retries() {
        let rng = SeededRandom::new(1);
        let policy = RetryPolicy {
            max_retries: 2,
            ..no_jitter()
        };
        assert!(retry_wait(&policy, FailureClass::Network, 1, &rng).is_some());
        assert_eq!(retry_wait(&policy, FailureClass::Network, 2, &rng), None);
        let server_wait = FailureClass::Status {
            status: 429,
            server_wait_ms: Some(10),
        };
        assert_eq!(retry_wait(&policy, server_wait, 2, &rng), None);
        let never = RetryPolicy {
            max_retries: 0,
            ..no_jitter()
        };
        assert_eq!(retry_wait(&never, FailureClass::Timeout, 0, &rng), None);
    }
}
