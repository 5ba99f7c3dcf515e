//! A circuit breaker per upstream host: stop sending requests to a host that keeps failing.
//!
//! Retries and budgets still send traffic to a host that is down; the breaker stops it. After
//! `threshold` consecutive *availability* failures (network errors, timeouts, 429s, 5xx), new
//! requests fail at once with `CIRCUIT_OPEN_ERROR` instead of queueing behind a dead upstream,
//! which both spares the upstream and gives callers a fast, explicit answer. Once the open
//! period has passed, a single request is let through as a probe; its outcome decides whether
//! traffic resumes.
//!
//! Only evidence about the upstream's health moves the breaker. A 4xx proves the upstream
//! answered, so it resets the streak like a success does; otherwise a caller bug producing 404s
//! between occasional 500s could trip the breaker on healthy traffic. A GraphQL error without an
//! upstream status says nothing either way and leaves the state alone (neutral).
//!
//! Choices that go beyond the original package (see `decisions.md`):
//! - The open period runs from the *last* availability failure (D7): a request already in flight
//!   when the breaker tripped, failing later, extends it; one succeeding closes it (D17).
//! - Each failed probe doubles the next open period, up to 8x, so an upstream that needs a
//!   little longer than `cooldownMs` to recover is not hit by a probe every cooldown forever.
//! - The probe belongs to the request that reserved it (D8). Other requests finishing while it
//!   is out cannot settle it, so a slow request started before the trip cannot close the breaker
//!   on the probe's behalf, and the probe's own outcome is never lost.
//!
//! The configuration is passed into each call because it is read from each request's options
//! while the state is shared by every request to the host.

use serde::{Deserialize, Serialize};

/// The resolved `circuitBreaker` option.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BreakerConfig {
    /// Consecutive availability failures that open the breaker.
    pub threshold: u32,
    /// The open period before the first probe; doubled per failed probe, at most 8x.
    pub cooldown_ms: u64,
}

/// How an attempt's outcome counts for the breaker.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// A response that resolved the request (including accepted partial data).
    Success,
    /// Evidence the upstream is unavailable: network error, timeout, 429, 5xx (HTTP or envelope).
    Availability,
    /// Evidence the upstream answered, though the attempt failed: 4xx, abort in flight, unknown.
    Reachability,
    /// No evidence either way: a GraphQL envelope error without an upstream status, a non-JSON 2xx.
    Neutral,
}

/// The breaker's answer before an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Dispatch the attempt; `probe` is true when it is the half-open probe.
    Proceed { probe: bool },
    /// Fail with `CIRCUIT_OPEN_ERROR`. `retry_after_ms` is the rest of the open period, `None`
    /// while a probe is out (`probing: true`), since then the answer depends on the probe.
    FastFail {
        retry_after_ms: Option<u64>,
        probing: bool,
    },
}

/// A state change worth an `onCircuitOpen` / `onCircuitClose` event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transition {
    Opened { failures: u32 },
    Closed,
}

/// The breaker as `getTransportState()` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BreakerSnapshot {
    pub consecutive_failures: u32,
    /// The instant the current open period is measured from; `None` when closed or half-open.
    pub opened_at: Option<u64>,
    pub probe_in_flight: bool,
    pub failed_probes: u32,
}

/// The largest power of two applied to the cooldown: 2^3 = 8x.
const MAX_WIDENING_DOUBLINGS: u32 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
enum Phase {
    #[default]
    Closed,
    /// Fast-failing; the open period is measured from `since`.
    Open { since: u64 },
    /// The request `probe_owner` is the probe (since `since`); everyone else fast-fails until
    /// it settles.
    HalfOpen { probe_owner: u64, since: u64 },
}

/// One host's breaker state.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Breaker {
    phase: Phase,
    /// Consecutive availability failures; kept through the open period for snapshots.
    consecutive_failures: u32,
    /// Failed probes since the breaker last closed; widens the open period.
    failed_probes: u32,
}

impl Breaker {
    /// Called before each attempt. `request` identifies the logical request (all its attempts share it).
    pub fn admit(&mut self, config: &BreakerConfig, now_ms: u64, request: u64) -> Admission {
        match self.phase {
            Phase::Closed => Admission::Proceed { probe: false },
            Phase::Open { since } => {
                let probe_allowed_at = since.saturating_add(self.open_period_ms(config));
                if now_ms < probe_allowed_at {
                    Admission::FastFail {
                        retry_after_ms: Some(probe_allowed_at - now_ms),
                        probing: false,
                    }
                } else {
                    self.phase = Phase::HalfOpen {
                        probe_owner: request,
                        since: now_ms,
                    };
                    Admission::Proceed { probe: true }
                }
            }
            // The owner asking again keeps its reservation rather than being locked out by it.
            Phase::HalfOpen { probe_owner, .. } if probe_owner == request => {
                Admission::Proceed { probe: true }
            }
            Phase::HalfOpen { .. } => Admission::FastFail {
                retry_after_ms: None,
                probing: true,
            },
        }
    }

    /// Called once per settled attempt that reached the admit step (not for aborts during backoff).
    ///
    /// Only attempts that were admitted (`Proceed`) settle; a fast-failed admission is not an
    /// outcome and must not be recorded.
    pub fn record(
        &mut self,
        config: &BreakerConfig,
        outcome: Outcome,
        now_ms: u64,
        request: u64,
    ) -> Option<Transition> {
        match (self.phase, outcome) {
            (Phase::Closed, Outcome::Availability) => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                (self.consecutive_failures >= config.threshold).then(|| {
                    self.phase = Phase::Open { since: now_ms };
                    Transition::Opened {
                        failures: self.consecutive_failures,
                    }
                })
            }
            (Phase::Closed, Outcome::Success | Outcome::Reachability) => {
                self.consecutive_failures = 0;
                None
            }
            // D7: a request in flight when the breaker tripped extends the period it failed in;
            // `max` keeps a clock step backwards from shortening it.
            (Phase::Open { since }, Outcome::Availability) => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                self.phase = Phase::Open {
                    since: since.max(now_ms),
                };
                None
            }
            // D17: the upstream answered a request already in flight, so it is back.
            (Phase::Open { .. }, Outcome::Success | Outcome::Reachability) => Some(self.close()),
            // D8: while a probe is out, only its owner settles the breaker.
            (Phase::HalfOpen { probe_owner, .. }, _) if probe_owner != request => None,
            (Phase::HalfOpen { .. }, Outcome::Availability) => {
                self.failed_probes = self.failed_probes.saturating_add(1);
                self.phase = Phase::Open { since: now_ms };
                None
            }
            // A success proves recovery; a 4xx, an abort or a status-less envelope error at least
            // does not prove unavailability, and leaving the breaker half-open would strand it.
            (
                Phase::HalfOpen { .. },
                Outcome::Success | Outcome::Reachability | Outcome::Neutral,
            ) => Some(self.close()),
            (Phase::Closed | Phase::Open { .. }, Outcome::Neutral) => None,
        }
    }

    /// The request was aborted during its pre-dispatch pacing wait: closes the breaker only if that request owns the half-open probe.
    pub fn pacing_aborted(&mut self, request: u64) -> Option<Transition> {
        self.holds_probe(request).then(|| self.close())
    }

    /// Whether `request` is the half-open probe.
    pub fn holds_probe(&self, request: u64) -> bool {
        matches!(self.phase, Phase::HalfOpen { probe_owner, .. } if probe_owner == request)
    }

    /// A probe out for `lease_ms` or longer is taken to be lost (its worker was killed: shared
    /// state) and the breaker is open again with its probe due, so the next request probes.
    pub fn expire_probe(&mut self, config: &BreakerConfig, now_ms: u64, lease_ms: u64) {
        if let Phase::HalfOpen { since, .. } = self.phase {
            if now_ms.saturating_sub(since) >= lease_ms {
                self.phase = Phase::Open {
                    since: since.saturating_sub(self.open_period_ms(config)),
                };
            }
        }
    }

    pub fn snapshot(&self) -> BreakerSnapshot {
        BreakerSnapshot {
            consecutive_failures: self.consecutive_failures,
            opened_at: match self.phase {
                Phase::Open { since } => Some(since),
                Phase::Closed | Phase::HalfOpen { .. } => None,
            },
            probe_in_flight: matches!(self.phase, Phase::HalfOpen { .. }),
            failed_probes: self.failed_probes,
        }
    }

    /// The cooldown widened by the failed probes: x2 per failed probe, at most x8.
    fn open_period_ms(&self, config: &BreakerConfig) -> u64 {
        let doublings = self.failed_probes.min(MAX_WIDENING_DOUBLINGS);
        config.cooldown_ms.saturating_mul(1 << doublings)
    }

    fn close(&mut self) -> Transition {
        *self = Self::default();
        Transition::Closed
    }
}

#[cfg(test)]
mod tests;
