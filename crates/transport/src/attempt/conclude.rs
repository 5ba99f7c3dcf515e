//! What an attempt does once its answer (or failure) is read: the cache write-back or
//! invalidation, the hooks, breaker and pacing accounting, then the retry decision (policy
//! first, budget second). Kept apart from the loop because it is its own future: what it holds
//! across its awaits is stored only while it runs, not in every call's future beside the exchange.

use std::sync::Arc;

use super::cache_use::CacheUse;
use super::outcome::{self, FailedAnswer, Failure, Settled};
use super::report::FailureExtras;
use super::{AttemptLoop, CallResult, ResultText};
use crate::admission::{Answer, QuotaReading};
use crate::breaker::{Outcome, Transition};
use crate::budget::{self, BudgetVerdict};
use crate::error::TransportError;
use crate::events::EventSink;
use crate::pacing;
use crate::policy::{self, FailureClass};
use crate::rate_limit::RateLimitInfo;

use super::gates::InFlight;

impl<'a, S: EventSink> AttemptLoop<'a, S> {
    /// Everything an attempt does once its answer (or failure) is read: account for it, then
    /// finish the call or say how long to wait before the next attempt. Its own future, so
    /// what it keeps across its awaits is stored only while it runs, not beside the exchange
    /// in every call's future (hundreds of bytes per call in flight).
    pub(super) async fn conclude(
        &mut self,
        settled: Settled,
        reading: Option<QuotaReading>,
        status: Option<u16>,
        duration_ms: f64,
        in_flight: InFlight<'a>,
        is_probe: bool,
    ) -> Conclusion {
        let failure = match settled {
            Settled::Success {
                result,
                partial,
                rate_limit,
            } => {
                let (outcome, pace_deadline) = self.success_accounting(&partial, rate_limit);
                let transition = self
                    .settle(in_flight, Answer::Served(reading), outcome, pace_deadline)
                    .await;
                let result = self
                    .finish_success(status, duration_ms, result, partial, rate_limit, transition)
                    .await;
                return Conclusion::Done(Ok(result));
            }
            Settled::Failed(failure) => failure,
        };
        // Like pacing, admission learns the quota from successes; of the failures, only a 429
        // tells it something (its window, and whether the headers overstated the quota).
        let answer = if failure.error.status == Some(429) {
            Answer::RateLimited(reading)
        } else {
            Answer::Failed
        };
        let transition = self.settle(in_flight, answer, failure.outcome, None).await;
        match failure.answer {
            FailedAnswer::Envelope(rate_limit) => {
                self.events
                    .report_response(
                        status,
                        duration_ms,
                        rate_limit,
                        self.cacheable_miss(),
                        false,
                    )
                    .await
            }
            FailedAnswer::Bare => {
                self.events
                    .report_response(status, duration_ms, None, None, false)
                    .await
            }
        }
        self.events.announce(transition).await;

        let (wait, budget_exhausted) = self.decide_retry(&failure, is_probe).await;
        let Failure { error, .. } = failure;
        let Some(delay_ms) = wait else {
            self.pace_after_terminal(&error).await;
            self.events
                .report_failure(
                    &error,
                    FailureExtras {
                        budget_exhausted,
                        ..Default::default()
                    },
                )
                .await;
            return Conclusion::Done(Err(error));
        };
        self.events
            .report_failure(
                &error,
                FailureExtras {
                    next_delay_ms: Some(delay_ms),
                    ..Default::default()
                },
            )
            .await;
        Conclusion::Retry { delay_ms }
    }

    /// Cache write-back or invalidation, `onResponse`, the partial-data report, then the
    /// breaker's `transition` (decided with the pacing bookkeeping in [`AttemptLoop::settle`]); the
    /// response itself is never held back (transport.md 1.3 step 7).
    async fn finish_success(
        &self,
        status: Option<u16>,
        duration_ms: f64,
        result: CallResult,
        partial: Option<TransportError>,
        rate_limit: Option<RateLimitInfo>,
        transition: Option<Transition>,
    ) -> CallResult {
        let (result, cache_write) = match (&self.cache, result) {
            // Partial data is never cached; neither is `undefined` (an empty body).
            (
                CacheUse::Read {
                    cache,
                    key,
                    generation,
                    fleet_generation,
                },
                Some(ResultText::Fresh(text)),
            ) if partial.is_none() => {
                let shared: Arc<str> = Arc::from(text);
                let stored = match (fleet_generation, self.env.hosts.fleet()) {
                    (Some(seen), Some(fleet)) => {
                        let now = self.env.clock.now_ms();
                        let (stored, notice) = Box::pin(fleet.cache_write(
                            &self.spec.host,
                            key,
                            *seen,
                            &shared,
                            cache.config(),
                            now,
                        ))
                        .await;
                        self.report_notice(notice).await;
                        stored
                    }
                    _ => cache.set_if_fresh(key, *generation, shared.clone()),
                };
                (Some(ResultText::Cached(shared)), stored)
            }
            (CacheUse::InvalidateOnSuccess(cache), result) => {
                cache.invalidate_after_write(self.spec);
                if let Some(fleet) = self.env.hosts.fleet().filter(|_| cache.is_shared()) {
                    let now = self.env.clock.now_ms();
                    let notice =
                        Box::pin(fleet.cache_invalidate(self.spec, cache.config(), now)).await;
                    self.report_notice(notice).await;
                }
                (result, false)
            }
            (_, result) => (result, false),
        };
        self.events
            .report_response(
                status,
                duration_ms,
                rate_limit,
                self.cacheable_miss(),
                cache_write,
            )
            .await;
        if let Some(error) = &partial {
            self.events
                .report_failure(error, FailureExtras::default())
                .await;
        }
        self.events.announce(transition).await;
        result
    }

    /// Policy first, then budget (decisions D3). Returns the delay and whether the budget was
    /// what stopped a retry the policy wanted.
    async fn decide_retry(&self, failure: &Failure, is_probe: bool) -> (Option<u64>, bool) {
        // A failed probe is never retried; neither is anything when retries are off.
        let Some(policy) = self.options.retry.as_ref().filter(|_| !is_probe) else {
            return (None, false);
        };
        let wanted = policy::retry_wait(policy, failure.class, self.events.attempt, self.env.rng);
        let Some(config) = self.options.retry_budget else {
            return (wanted.map(|w| w.delay_ms()), false);
        };
        if failure.class == FailureClass::Aborted {
            return (None, false);
        }
        let now = self.env.clock.now_ms();
        self.host_state(|s| {
            let window = budget::window_for_failure(&mut s.budget, &config, now);
            match &wanted {
                None => (None, false),
                Some(wait) => match window.try_spend(&config, wait, now) {
                    BudgetVerdict::Spent => (Some(wait.delay_ms()), false),
                    BudgetVerdict::Exhausted => (None, true),
                    BudgetVerdict::WindowTooShort => (None, false),
                },
            }
        })
        .await
    }

    /// A terminal 429 with quota metadata paces the host's next request (transport.md 1.7.4).
    async fn pace_after_terminal(&self, error: &TransportError) {
        if !self.options.pace_with_rate_limit || error.status != Some(429) {
            return;
        }
        let Some(info) = error.rate_limit else { return };
        let now = self.env.clock.now_ms();
        let deadline = pacing::deadline_after_terminal_429(&info, now);
        self.host_state(|s| pacing::record_deadline(&mut s.pace_deadline, deadline, now))
            .await;
    }

    /// What a success tells the breaker (partial data can count as a failure) and pacing (a
    /// deadline when the quota is nearly spent).
    fn success_accounting(
        &self,
        partial: &Option<TransportError>,
        rate_limit: Option<RateLimitInfo>,
    ) -> (Outcome, Option<u64>) {
        let now = self.env.clock.now_ms();
        let outcome = match partial {
            None => Outcome::Success,
            Some(error) => outcome::envelope_classes(error, now).1,
        };
        let pace_deadline = rate_limit
            .filter(|_| self.options.pace_with_rate_limit)
            .and_then(|info| {
                pacing::deadline_after_success(&info, self.options.rate_limit_floor, now)
            });
        (outcome, pace_deadline)
    }

    /// The request is answered (or failed), in one host-state decision: fold what its answer
    /// tells admission and release it, account its `outcome` to the breaker (the transition is
    /// announced by the caller, after `onResponse`), then record a success's pace deadline.
    async fn settle(
        &self,
        mut in_flight: InFlight<'_>,
        answer: Answer,
        outcome: Outcome,
        pace_deadline: Option<u64>,
    ) -> Option<Transition> {
        let breaker = self.options.circuit_breaker;
        let floor = self.quota_rules().floor;
        let now = self.env.clock.now_ms();
        let transition = self
            .host_state(|s| {
                s.admission
                    .learn(&answer, floor, in_flight.token, in_flight.admitted_ms, now);
                in_flight.leave(s, now);
                let transition =
                    breaker.and_then(|config| s.breaker.record(&config, outcome, now, self.token));
                if let Some(deadline) = pace_deadline {
                    pacing::record_deadline(&mut s.pace_deadline, deadline, now);
                }
                transition
            })
            .await;
        in_flight.settled = true;
        transition
    }
}

/// How an attempt ends ([`AttemptLoop::conclude`]): the call's outcome, or another attempt after a wait.
pub(super) enum Conclusion {
    Done(Result<CallResult, TransportError>),
    Retry { delay_ms: u64 },
}
