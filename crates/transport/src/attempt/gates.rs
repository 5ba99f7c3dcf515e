//! The gates an attempt passes before it is dispatched: breaker admission, the pacing plan and
//! quota admission, decided together on the host's state so an attempt that need not wait takes
//! one lock (or one compare-and-set with shared state); a wait runs its own path and asks again.
//! An admitted attempt holds its place as an [`InFlight`], released when it settles or is dropped.

use std::time::Duration;

use tokio::time::Instant;

use super::{AttemptLoop, ClientEnv};
use crate::admission as quota;
use crate::breaker::Admission;
use crate::error::TransportError;
use crate::events::{Event, EventSink};
use crate::host_state::HostState;
use crate::options::Hook;
use crate::pacing;
use crate::timers;

impl<'a, S: EventSink> AttemptLoop<'a, S> {
    /// Breaker admission, the pacing plan and quota admission (in this order), as one
    /// host-state decision while none of them has to wait: one lock, or one compare-and-set
    /// with shared state, per attempt. A pacing or quota wait then runs its own path, which
    /// decides admission again once it is over.
    pub(super) async fn pass_gates(&mut self) -> Result<Gate<'a>, TransportError> {
        let breaker = self.options.circuit_breaker;
        let paces = self.options.pace_with_rate_limit && !self.options.ignore_pace_deadline;
        let rules = self.quota_rules();
        let lease_ms = self.env.hosts.lease_ms();
        let (rng, token) = (self.env.rng, self.token);
        let now = self.env.clock.now_ms();
        let decision = self
            .host_state(|s| {
                let mut is_probe = false;
                if let Some(config) = &breaker {
                    s.breaker_used = true;
                    if let Some(lease_ms) = lease_ms {
                        s.breaker.expire_probe(config, now, lease_ms);
                    }
                    match s.breaker.admit(config, now, token) {
                        Admission::Proceed { probe } => is_probe = probe,
                        Admission::FastFail {
                            retry_after_ms,
                            probing,
                        } => return GateDecision::CircuitOpen(retry_after_ms, probing),
                    }
                }
                if paces {
                    if let Some(wait) = pacing::plan_wait(&mut s.pace_deadline, now, rng) {
                        return GateDecision::Pace(is_probe, wait);
                    }
                }
                GateDecision::Quota(is_probe, s.admission.try_admit(&rules, now))
            })
            .await;
        let (is_probe, verdict) = match decision {
            GateDecision::CircuitOpen(retry_after_ms, probing) => {
                let threshold = breaker.map_or(0, |config| config.threshold);
                let error = TransportError::circuit_open(threshold, probing);
                return Ok(Gate::CircuitOpen(error, retry_after_ms));
            }
            GateDecision::Pace(is_probe, wait) => {
                self.wait_for_pace(wait).await?;
                (is_probe, None)
            }
            GateDecision::Quota(is_probe, verdict) => (is_probe, Some(verdict.map(|()| now))),
        };
        Ok(match self.admit_to_quota(rules, verdict).await? {
            Some(in_flight) => Gate::Open {
                is_probe,
                in_flight,
            },
            None => Gate::Aborted,
        })
    }

    /// The pacing wait [`pacing::plan_wait`] asked for, reported as `onPace`.
    async fn wait_for_pace(&mut self, wait: pacing::PaceWait) -> Result<(), TransportError> {
        let started = Instant::now();
        let total = Duration::from_millis(wait.delay_ms + wait.stagger_ms);
        let aborted = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => true,
            _ = timers::sleep(total) => false,
        };
        if aborted {
            let elapsed = (started.elapsed().as_millis() as u64).min(wait.delay_ms);
            let error = TransportError::aborted_during_pacing();
            return Err(self.pacing_aborted(elapsed, error).await);
        }
        self.report_paced(wait.delay_ms).await;
        Ok(())
    }

    /// `onPace` and `pacedMs` for a completed pacing or admission wait.
    async fn report_paced(&mut self, delay_ms: u64) {
        self.events
            .emit_if(Hook::OnPace, || Event::Pace {
                context: self.events.context(),
                delay_ms,
                aborted: false,
            })
            .await;
        self.events.paced_ms += delay_ms;
    }

    /// An abort during a pacing or admission wait: `onPace` with `aborted`, the breaker told;
    /// `error` says which wait it was.
    async fn pacing_aborted(&self, elapsed_ms: u64, error: TransportError) -> TransportError {
        self.events
            .emit_if(Hook::OnPace, || Event::Pace {
                context: self.events.context(),
                delay_ms: elapsed_ms,
                aborted: true,
            })
            .await;
        self.release_probe().await;
        error
    }

    /// A request that will not be dispatched gives up the breaker's probe if it holds it.
    async fn release_probe(&self) {
        let transition = self
            .host_state(|s| s.breaker.pacing_aborted(self.token))
            .await;
        self.events.announce(transition).await;
    }

    /// What quota admission applies to this call.
    pub(super) fn quota_rules(&self) -> quota::Rules {
        quota::Rules {
            server_quota: self.options.pace_with_rate_limit
                && self.options.rate_limit_floor > 0
                && !self.options.ignore_pace_deadline,
            floor: self.options.rate_limit_floor,
            degraded_limit: self.options.degraded_limit,
            ceiling: self.options.rate_limit,
            holder: self.token,
            lease_ms: self.env.hosts.lease_ms(),
        }
    }

    /// Wait until the host's quota estimate and the `rateLimit` ceiling admit one more request
    /// in flight (module [`admission`](crate::admission)); the wait is reported as pacing.
    /// `verdict`: the admission already decided with the other gates (Ok: admitted at that
    /// instant; Err: the wait it asked for), or None to decide now. None when the signal had
    /// fired before a wait began: nothing is admitted.
    async fn admit_to_quota(
        &mut self,
        rules: quota::Rules,
        mut verdict: Option<Result<u64, u64>>,
    ) -> Result<Option<InFlight<'a>>, TransportError> {
        let started = Instant::now();
        let mut waited = false;
        let admitted_ms = loop {
            let verdict = match verdict.take() {
                Some(verdict) => verdict,
                None => {
                    let now = self.env.clock.now_ms();
                    self.host_state(|s| s.admission.try_admit(&rules, now))
                        .await
                        .map(|()| now)
                }
            };
            let wait_ms = match verdict {
                Ok(admitted_ms) => break admitted_ms,
                Err(wait_ms) => wait_ms,
            };
            if !waited && self.cancel.is_cancelled() {
                // Already aborted, and no pacing deadline is pending: the original's abort
                // (decisions D22), not a wait that was cut short.
                self.release_probe().await;
                return Ok(None);
            }
            waited = true;
            let aborted = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => true,
                _ = timers::sleep(Duration::from_millis(wait_ms)) => false,
            };
            if aborted {
                let elapsed = started.elapsed().as_millis() as u64;
                let error = TransportError::aborted_during_admission();
                return Err(self.pacing_aborted(elapsed, error).await);
            }
        };
        if waited {
            self.report_paced(started.elapsed().as_millis() as u64)
                .await;
        }
        Ok(Some(InFlight {
            env: self.env,
            host: &self.spec.host,
            token: self.token,
            admitted_ms,
            under_ceiling: rules.ceiling.is_some(),
            settled: false,
        }))
    }
}

/// Where the gates before dispatch leave an attempt.
pub(super) enum Gate<'a> {
    /// Admitted (as the breaker's probe or not), holding its place in the quota.
    Open {
        is_probe: bool,
        in_flight: InFlight<'a>,
    },
    /// The breaker fails it fast, with its `retryAfterMs`.
    CircuitOpen(TransportError, Option<u64>),
    /// Its signal had fired when admission would have made it wait: a plain abort (D22).
    Aborted,
}

/// The one host-state decision of [`AttemptLoop::pass_gates`]: the first gate that refuses or must
/// wait, or the quota's verdict once the others let the attempt through.
enum GateDecision {
    CircuitOpen(Option<u64>, bool),
    Pace(bool, pacing::PaceWait),
    Quota(bool, Result<(), u64>),
}

/// One admitted request in flight on a host: released once settled
/// ([`AttemptLoop::settle`]), or when dropped (an abandoned call must not hold quota
/// forever; with shared state its reservation in Redis ends with its lease).
pub(super) struct InFlight<'a> {
    pub(super) env: &'a ClientEnv<'a>,
    pub(super) host: &'a str,
    pub(super) token: u64,
    /// When admission let it go: its response counts in the window open at that instant.
    pub(super) admitted_ms: u64,
    /// Counted by the `rateLimit` ceiling, which goes on counting it once it has left.
    pub(super) under_ceiling: bool,
    pub(super) settled: bool,
}

impl InFlight<'_> {
    /// Out of flight at `now_ms` (answered, failed or abandoned): its reservation is released,
    /// and the ceiling counts it from now, as it may have been written until now.
    pub(super) fn leave(&self, state: &mut HostState, now_ms: u64) {
        state.admission.release(self.token);
        if self.under_ceiling {
            state.admission.count_sent(now_ms);
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.settled {
            let now = self.env.clock.now_ms();
            self.env.hosts.with_local(self.host, |s| self.leave(s, now));
        }
    }
}
