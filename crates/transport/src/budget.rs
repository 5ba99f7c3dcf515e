//! A retry budget: a cap on retries across all requests to one upstream host.
//!
//! `maxRetries` bounds the retries of one request, but not the amplification of a whole
//! workload. When an upstream degrades, every in-flight request starts retrying at once; a
//! thousand requests with three retries each become four thousand, which is the retry storm that
//! keeps a recovering service down. A budget shared by every request to a host turns that
//! multiplier into a fixed allowance per window: once it is spent, failures surface immediately
//! and the upstream sees only first attempts until the window ends.
//!
//! The windows are fixed, not sliding, which keeps the state to two numbers. A window opens at
//! the first *failure* after the previous one expired (decisions D3), not at the first request,
//! so a quiet period never leaves a stale half-used window behind. The price of fixed windows is
//! that retries clustered around a boundary can reach twice the allowance within one window's
//! span; callers wanting a strict bound set the allowance for that burst.
//!
//! A unit is spent when a retry is decided, before its wait: retries sleeping in backoff already
//! count, so a burst of failures cannot all pass the gate before any of them is recorded. A
//! server-directed wait that would end after the window is refused outright (nothing spent):
//! otherwise one window's allowance could be stretched across minutes of `Retry-After`.
//!
//! Keying by (provider client, upstream host) is the caller's job (decisions D2); this module
//! holds one host's window.

use serde::{Deserialize, Serialize};

use crate::policy::RetryWait;

/// The resolved `retryBudget` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BudgetConfig {
    /// Retries allowed per window; 0 disables retries for the host.
    pub max_retries_per_window: u32,
    pub window_ms: u64,
}

/// One host's current window: how much of it is spent and when it ends (epoch ms).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct BudgetWindow {
    pub retries_used: u32,
    pub window_ends_at: u64,
}

/// The budget's answer to a retry the policy wants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetVerdict {
    /// Allowed; one unit was spent.
    Spent,
    /// The window's allowance is used up.
    Exhausted,
    /// The server asked for a wait that would end after the window.
    WindowTooShort,
}

/// Called on every failed attempt while a budget is configured: starts a window when there is none or the previous one has expired (now >= window_ends_at), otherwise keeps it. Returns the live window.
pub fn window_for_failure<'slot>(
    slot: &'slot mut Option<BudgetWindow>,
    config: &BudgetConfig,
    now_ms: u64,
) -> &'slot mut BudgetWindow {
    let fresh = BudgetWindow {
        retries_used: 0,
        window_ends_at: now_ms.saturating_add(config.window_ms),
    };
    let live = slot
        .filter(|window| now_ms < window.window_ends_at)
        .unwrap_or(fresh);
    slot.insert(live)
}

impl BudgetWindow {
    /// Gate a retry the policy wants: Exhausted when retries_used >= max (nothing spent); WindowTooShort when the wait is ServerDirected and its UNCAPPED value would end after window_ends_at (nothing spent); otherwise spend one unit -> Spent.
    pub fn try_spend(
        &mut self,
        config: &BudgetConfig,
        wait: &RetryWait,
        now_ms: u64,
    ) -> BudgetVerdict {
        if self.retries_used >= config.max_retries_per_window {
            return BudgetVerdict::Exhausted;
        }
        if let RetryWait::ServerDirected { uncapped_ms, .. } = *wait {
            if now_ms.saturating_add(uncapped_ms) > self.window_ends_at {
                return BudgetVerdict::WindowTooShort;
            }
        }
        self.retries_used += 1;
        BudgetVerdict::Spent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: BudgetConfig = BudgetConfig {
        max_retries_per_window: 3,
        window_ms: 1_000,
    };
    const BACKOFF: RetryWait = RetryWait::Backoff { delay_ms: 100 };

    fn server_wait(uncapped_ms: u64) -> RetryWait {
        RetryWait::ServerDirected {
            delay_ms: uncapped_ms.min(60_000),
            uncapped_ms,
        }
    }

    /// A failure at `now_ms` that wants a retry: the verdict, as the attempt loop would get it.
    fn fail_and_retry(
        slot: &mut Option<BudgetWindow>,
        config: &BudgetConfig,
        now_ms: u64,
    ) -> BudgetVerdict {
        window_for_failure(slot, config, now_ms).try_spend(config, &BACKOFF, now_ms)
    }

    #[test]
    fn the_first_failure_opens_a_window() {
        let mut slot = None;
        let window = window_for_failure(&mut slot, &CONFIG, 5_000);
        assert_eq!(
            *window,
            BudgetWindow {
                retries_used: 0,
                window_ends_at: 6_000
            }
        );
        assert_eq!(
            slot,
            Some(BudgetWindow {
                retries_used: 0,
                window_ends_at: 6_000
            })
        );
    }

    #[test]
    fn spending_stops_at_the_allowance() {
        let mut slot = None;
        let verdicts: Vec<_> = (0..5)
            .map(|step| fail_and_retry(&mut slot, &CONFIG, 100 + step))
            .collect();
        use BudgetVerdict::{Exhausted, Spent};
        assert_eq!(verdicts, [Spent, Spent, Spent, Exhausted, Exhausted]);
        assert_eq!(
            slot.map(|w| w.retries_used),
            Some(3),
            "a refusal spends nothing"
        );
    }

    #[test]
    fn a_live_window_is_kept_until_its_end() {
        let mut slot = None;
        fail_and_retry(&mut slot, &CONFIG, 0);
        let window = window_for_failure(&mut slot, &CONFIG, 999);
        assert_eq!(
            *window,
            BudgetWindow {
                retries_used: 1,
                window_ends_at: 1_000
            }
        );
    }

    #[test]
    fn rollover_happens_exactly_at_window_ends_at() {
        let mut slot = None;
        for step in 0..3 {
            fail_and_retry(&mut slot, &CONFIG, step);
        }
        assert_eq!(
            fail_and_retry(&mut slot, &CONFIG, 999),
            BudgetVerdict::Exhausted
        );
        assert_eq!(
            fail_and_retry(&mut slot, &CONFIG, 1_000),
            BudgetVerdict::Spent
        );
        assert_eq!(
            slot,
            Some(BudgetWindow {
                retries_used: 1,
                window_ends_at: 2_000
            })
        );
    }

    #[test]
    fn after_expiry_the_next_window_starts_at_the_next_failure() {
        let mut slot = None;
        fail_and_retry(&mut slot, &CONFIG, 0);
        // Quiet until long after the window ended: nothing happens without a failure.
        assert_eq!(
            slot,
            Some(BudgetWindow {
                retries_used: 1,
                window_ends_at: 1_000
            })
        );
        let window = window_for_failure(&mut slot, &CONFIG, 4_321);
        assert_eq!(
            *window,
            BudgetWindow {
                retries_used: 0,
                window_ends_at: 5_321
            }
        );
    }

    #[test]
    fn worst_case_is_twice_the_allowance_within_one_window_span() {
        let config = BudgetConfig {
            max_retries_per_window: 5,
            window_ms: 1_000,
        };
        let mut slot = None;
        // A failure the policy does not retry (a 404, say) still opens the window at t=0.
        window_for_failure(&mut slot, &config, 0);
        // Five retries just before the boundary, five just after it.
        let mut spent_at = Vec::new();
        for now_ms in 995..1_005 {
            assert_eq!(
                fail_and_retry(&mut slot, &config, now_ms),
                BudgetVerdict::Spent,
                "at {now_ms}"
            );
            spent_at.push(now_ms);
        }
        assert_eq!(
            fail_and_retry(&mut slot, &config, 1_005),
            BudgetVerdict::Exhausted
        );
        assert_eq!(spent_at.len(), 2 * config.max_retries_per_window as usize);
        let span = spent_at[spent_at.len() - 1] - spent_at[0];
        assert!(
            span < config.window_ms,
            "{} retries within {span} ms",
            spent_at.len()
        );
    }

    #[test]
    fn a_server_wait_must_end_within_the_window_uncapped() {
        let mut slot = None;
        let window = window_for_failure(&mut slot, &CONFIG, 0);
        // Ends exactly at the window's end: allowed.
        assert_eq!(
            window.try_spend(&CONFIG, &server_wait(1_000), 0),
            BudgetVerdict::Spent
        );
        // One millisecond later than the window: refused, nothing spent.
        assert_eq!(
            window.try_spend(&CONFIG, &server_wait(701), 300),
            BudgetVerdict::WindowTooShort
        );
        assert_eq!(window.retries_used, 1);
        // The capped delay would fit a long window, but the uncapped wish decides.
        let long = BudgetConfig {
            max_retries_per_window: 3,
            window_ms: 90_000,
        };
        let mut long_slot = None;
        let long_window = window_for_failure(&mut long_slot, &long, 0);
        assert_eq!(
            long_window.try_spend(&long, &server_wait(120_000), 0),
            BudgetVerdict::WindowTooShort
        );
        assert_eq!(
            long_window.try_spend(&long, &server_wait(u64::MAX), 0),
            BudgetVerdict::WindowTooShort
        );
    }

    #[test]
    fn backoff_waits_are_not_gated_by_the_window_end() {
        let mut slot = None;
        let window = window_for_failure(&mut slot, &CONFIG, 0);
        let long_backoff = RetryWait::Backoff { delay_ms: 5_000 };
        assert_eq!(
            window.try_spend(&CONFIG, &long_backoff, 900),
            BudgetVerdict::Spent
        );
    }

    #[test]
    fn exhaustion_is_reported_before_the_window_gate() {
        let config = BudgetConfig {
            max_retries_per_window: 1,
            window_ms: 1_000,
        };
        let mut slot = None;
        assert_eq!(fail_and_retry(&mut slot, &config, 0), BudgetVerdict::Spent);
        let window = window_for_failure(&mut slot, &config, 10);
        assert_eq!(
            window.try_spend(&config, &server_wait(50_000), 10),
            BudgetVerdict::Exhausted
        );
    }

    #[test]
    fn an_allowance_of_zero_means_no_retries() {
        let config = BudgetConfig {
            max_retries_per_window: 0,
            window_ms: 1_000,
        };
        let mut slot = None;
        for now_ms in [0, 500, 1_000, 10_000] {
            assert_eq!(
                fail_and_retry(&mut slot, &config, now_ms),
                BudgetVerdict::Exhausted
            );
        }
        assert_eq!(slot.map(|w| w.retries_used), Some(0));
    }
}
