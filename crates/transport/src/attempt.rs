//! The attempt loop: one logical request, from the first attempt to its result.
//!
//! A cacheable read is first looked up in the response cache (transport.md 1.2 step 6): a hit
//! returns at once, before the breaker, pacing or the network. Then each attempt runs the steps
//! of transport.md 1.3 as amended by decisions.md: auth guard, breaker admission, pacing wait,
//! `onRequestStart`, dispatch under the per-attempt deadline,
//! classification, breaker accounting, pacing bookkeeping, then the retry decision (policy
//! first, budget second) and the backoff wait. Every wait races the caller's cancellation.
//!
//! The loop reaches the network only through [`Exchange`] (one round trip), so its composition
//! is tested with a scripted exchange on paused time (`composition_tests`). `outcome` turns
//! what an exchange produced into a result or a classified failure; `report` builds the events.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

// Tokio's clock, so durations follow virtual time in the composition tests.
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::admission::{self as quota, Answer, QuotaReading};
use crate::breaker::{Admission, Outcome, Transition};
use crate::budget::{self, BudgetVerdict};
use crate::cache::{CacheKey, Lookup, ResponseCache};
use crate::clock::Clock;
use crate::coalesce::Coalescer;
use crate::error::TransportError;
use crate::events::{Event, EventSink};
use crate::exchange::Exchange;
use crate::host_state::HostState;
use crate::host_store::HostStore;
use crate::options::{Hook, ResolvedOptions};
use crate::pacing;
use crate::policy::{self, FailureClass};
use crate::pool::Pool;
use crate::random::RandomSource;
use crate::rate_limit::{QuotaHeaders, RateLimitInfo};
use crate::redirect;
use crate::request::RequestSpec;
use crate::shared_state::fleet_cache::FleetRead;
use crate::shared_state::Notice;
use crate::timers;
pub use coalesced::LeaderOutcome;
use outcome::{FailedAnswer, Failure, Settled};
use report::{FailureExtras, Reporter};
pub use result::{CallResult, Completed, ResultText};

mod coalesced;
#[cfg(test)]
mod composition_tests;
mod outcome;
mod report;
mod result;
#[cfg(test)]
mod tests;

/// What a call needs besides its request: the client's per-host state, time and randomness.
pub struct Shared<'a> {
    pub hosts: &'a HostStore,
    pub clock: &'a dyn Clock,
    pub rng: &'a dyn RandomSource,
}

/// What the response cache does for one call (transport.md 1.12).
enum CacheUse<'a> {
    Off,
    /// A cacheable read: looked up first, written back after a clean success unless an
    /// invalidation since `generation` (seen at the miss) affects it.
    Read {
        cache: &'a ResponseCache,
        key: CacheKey,
        generation: u64,
        /// A fleet-wide cache whose Redis answered the miss: the scope's generation then, to
        /// write back against in Redis instead of locally.
        fleet_generation: Option<u64>,
    },
    /// A write: once it succeeds, drops the entries it may have changed.
    InvalidateOnSuccess(&'a ResponseCache),
}

impl<'a> CacheUse<'a> {
    /// A write invalidates even with `bypassResponseCache` (it is not served by the cache);
    /// a read whose auth guard will fail, or that bypasses the cache, never touches it.
    fn plan(spec: &RequestSpec, options: &'a ResolvedOptions) -> Self {
        let Some(cache) = options.response_cache.as_deref() else {
            return CacheUse::Off;
        };
        if spec.is_write {
            return CacheUse::InvalidateOnSuccess(cache);
        }
        if options.bypass_response_cache || spec.missing_auth.is_some() {
            return CacheUse::Off;
        }
        match CacheKey::for_request(spec) {
            Some(key) => CacheUse::Read {
                cache,
                key,
                generation: 0,
                fleet_generation: None,
            },
            None => CacheUse::Off,
        }
    }

    /// The call's cache when it is fleet-wide.
    fn shared_cache(&self) -> Option<&'a ResponseCache> {
        match self {
            CacheUse::Off => None,
            CacheUse::Read { cache, .. } | CacheUse::InvalidateOnSuccess(cache) => {
                Some(*cache).filter(|cache| cache.is_shared())
            }
        }
    }
}

static NEXT_REQUEST: AtomicU64 = AtomicU64::new(1);

/// A request token unique across a fleet, not only in this process: a random process prefix
/// in the high half, a counter in the low one. Shared state stores tokens (the breaker's probe
/// owner, admission reservations), and another process's must never match ours.
fn next_request_token() -> u64 {
    static PROCESS_PREFIX: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let prefix = *PROCESS_PREFIX.get_or_init(|| fastrand::u64(..) << 32);
    prefix | (NEXT_REQUEST.fetch_add(1, Ordering::Relaxed) & 0xffff_ffff)
}

/// Run one logical request on `pool`, the connection pool chosen when the call started (so a
/// teardown after that never moves it to a new pool or lifts its socket cap), or join an
/// identical read in flight in `coalescer` when the call coalesces.
pub async fn execute(
    coalescer: &Coalescer<LeaderOutcome>,
    shared: &Shared<'_>,
    pool: Arc<Pool>,
    spec: &RequestSpec,
    options: &ResolvedOptions,
    sink: &impl EventSink,
    cancel: &CancellationToken,
) -> Result<Completed, TransportError> {
    coalesced::execute_coalesced(coalescer, shared, &pool, spec, options, sink, cancel).await
}

/// One logical request under `request_id` over any [`Exchange`]: the production pool (from
/// [`execute`], after coalescing), or a scripted one in tests.
pub async fn execute_on(
    shared: &Shared<'_>,
    exchange: &impl Exchange,
    spec: &RequestSpec,
    options: &ResolvedOptions,
    sink: &impl EventSink,
    cancel: &CancellationToken,
    request_id: Arc<str>,
) -> Result<Completed, TransportError> {
    let mut call = Call {
        shared,
        spec,
        options,
        cancel,
        token: next_request_token(),
        state_key: shared.hosts.key_for(spec),
        cache: CacheUse::plan(spec, options),
        events: Reporter::new(sink, options.hooks, request_id, spec),
    };
    match call.run(exchange).await {
        Ok(result) => Ok(Completed {
            result,
            request_id: call.events.request_id,
        }),
        Err(mut error) => {
            error.request_id = Some(call.events.request_id.to_string());
            Err(error)
        }
    }
}

struct Call<'a, S: EventSink> {
    shared: &'a Shared<'a>,
    spec: &'a RequestSpec,
    options: &'a ResolvedOptions,
    cancel: &'a CancellationToken,
    /// Identifies this request to the breaker, so only it can settle a probe it owns (D8), and
    /// its admission reservations.
    token: u64,
    /// The scope of its shared state (Redis key), when the slot shares state.
    state_key: Option<String>,
    cache: CacheUse<'a>,
    /// The call's hooks, and the attempt counters they report.
    events: Reporter<'a, S>,
}

impl<'a, S: EventSink> Call<'a, S> {
    /// One decision on the host's state, through the store (local or shared); a switch of the
    /// shared state to its local copy or back is reported on the way.
    async fn host_state<R>(&self, decide: impl FnMut(&mut HostState) -> R) -> R {
        let now = self.shared.clock.now_ms();
        let (result, notice) = self
            .shared
            .hosts
            .with(&self.spec.host, self.state_key.as_deref(), now, decide)
            .await;
        self.report_notice(notice).await;
        result
    }

    /// Report a switch of the slot's Redis link (to its local copy, or back). On a rejoin, a
    /// fleet-wide cache forgets what it kept locally meanwhile: the fleet's writes since then
    /// never reached that copy, and the next outage must not serve it.
    async fn report_notice(&self, notice: Option<Notice>) {
        let Some(notice) = notice else {
            return;
        };
        if notice == Notice::Rejoined {
            if let Some(cache) = self.cache.shared_cache() {
                cache.clear();
            }
        }
        let redis = self.shared.hosts.redis_address().unwrap_or_default();
        self.events.shared_state(notice, redis).await;
    }

    /// A fleet-wide cache's read in Redis, on a slot that shares state: None when the local
    /// cache decides (not fleet-wide, no `sharedState`, or Redis away).
    async fn read_fleet(&self) -> Option<FleetRead> {
        let CacheUse::Read { cache, key, .. } = &self.cache else {
            return None;
        };
        let fleet = self.shared.hosts.fleet().filter(|_| cache.is_shared())?;
        let now = self.shared.clock.now_ms();
        // Boxed, as every Redis round trip of a call: a cold path that would otherwise make
        // every call's future carry its state.
        let (read, notice) =
            Box::pin(fleet.cache_read(&self.spec.host, key, cache.config(), now)).await;
        self.report_notice(notice).await;
        match &read {
            FleetRead::Hit(_) => cache.count_fleet_read(true),
            FleetRead::Miss { .. } => cache.count_fleet_read(false),
            FleetRead::Local => return None,
        }
        Some(read)
    }

    /// Serve a cacheable read from the cache, or remember the generation its miss saw.
    async fn read_cache(&mut self) -> Option<Arc<str>> {
        let fleet = self.read_fleet().await;
        let CacheUse::Read {
            cache,
            key,
            generation,
            fleet_generation,
        } = &mut self.cache
        else {
            return None;
        };
        // While Redis answers, a fleet-wide cache is read there only: a local copy could not
        // learn of another process's write.
        let lookup = match fleet {
            Some(FleetRead::Hit(text)) => Lookup::Hit(text),
            Some(FleetRead::Miss { generation: seen }) => {
                *fleet_generation = Some(seen);
                return None;
            }
            Some(FleetRead::Local) | None => cache.get(key),
        };
        match lookup {
            Lookup::Miss { generation: seen } => {
                *generation = seen;
                None
            }
            Lookup::Hit(text) => {
                self.events.request_start().await;
                self.events
                    .emit_if(Hook::OnResponse, || Event::Response {
                        context: self.events.context(),
                        status: None,
                        duration_ms: 0.0,
                        rate_limit: None,
                        cache_hit: Some(true),
                        cache_write: false,
                        paced_ms: None,
                    })
                    .await;
                Some(text)
            }
        }
    }

    /// `cacheHit: false` on the success and envelope-error paths of a cacheable read.
    fn cacheable_miss(&self) -> Option<bool> {
        matches!(self.cache, CacheUse::Read { .. }).then_some(false)
    }

    async fn run(&mut self, exchange: &impl Exchange) -> Result<CallResult, TransportError> {
        if let Some(text) = self.read_cache().await {
            return Ok(Some(ResultText::Cached(text)));
        }
        loop {
            if let Some(operation) = &self.spec.missing_auth {
                let error = TransportError::auth(Some(operation));
                self.events.request_start().await;
                self.events
                    .report_failure(&error, FailureExtras::default())
                    .await;
                return Err(error);
            }
            let (is_probe, in_flight) = match self.pass_gates().await? {
                Gate::Open {
                    is_probe,
                    in_flight,
                } => (is_probe, in_flight),
                Gate::CircuitOpen(error, retry_after_ms) => {
                    self.events.request_start().await;
                    let extras = FailureExtras {
                        host: Some(self.spec.host.to_string()),
                        retry_after_ms,
                        ..Default::default()
                    };
                    self.events.report_failure(&error, extras).await;
                    return Err(error);
                }
            };
            self.events.request_start().await;

            // The exchange, and what is read from its answer, in a block that ends before the
            // conclusion is awaited: the answer then moves into the conclusion's future instead
            // of also keeping its place in this one.
            let conclusion = {
                let started = Instant::now();
                let dispatched = tokio::select! {
                    biased;
                    _ = self.cancel.cancelled() => Err(TransportError::aborted()),
                    response = redirect::send(exchange, self.spec, self.options) => response,
                };
                let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
                let status = dispatched.as_ref().ok().map(|r| r.status);
                let quota_headers = dispatched
                    .as_ref()
                    .ok()
                    .and_then(|r| QuotaHeaders::read(&r.headers));
                let reading = quota_headers.map(QuotaReading::from);
                let settled = outcome::settle(
                    dispatched,
                    quota_headers,
                    self.spec,
                    self.options.allow_partial_data,
                    || self.shared.clock.now_ms(),
                );
                self.conclude(settled, reading, status, duration_ms, in_flight, is_probe)
            };
            let delay_ms = match conclusion.await {
                Conclusion::Done(outcome) => return outcome,
                Conclusion::Retry { delay_ms } => delay_ms,
            };
            self.events.retry_wait_ms += delay_ms;
            self.events.attempt += 1;
            tokio::select! {
                biased;
                // An abort during backoff records nothing new (transport.md 1.3 step 8.9).
                _ = self.cancel.cancelled() => return Err(TransportError::aborted()),
                _ = timers::sleep(Duration::from_millis(delay_ms)) => {}
            }
        }
    }

    /// Everything an attempt does once its answer (or failure) is read: account for it, then
    /// finish the call or say how long to wait before the next attempt. Its own future, so
    /// what it keeps across its awaits is stored only while it runs, not beside the exchange
    /// in every call's future (hundreds of bytes per call in flight).
    async fn conclude(
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

    /// Breaker admission, the pacing plan and quota admission (in this order), as one
    /// host-state decision while none of them has to wait: one lock, or one compare-and-set
    /// with shared state, per attempt. A pacing or quota wait then runs its own path, which
    /// decides admission again once it is over.
    async fn pass_gates(&mut self) -> Result<Gate<'a>, TransportError> {
        let breaker = self.options.circuit_breaker;
        let paces = self.options.pace_with_rate_limit && !self.options.ignore_pace_deadline;
        let rules = self.quota_rules();
        let lease_ms = self.shared.hosts.lease_ms();
        let (rng, token) = (self.shared.rng, self.token);
        let now = self.shared.clock.now_ms();
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
        let in_flight = self.admit_to_quota(rules, verdict).await?;
        Ok(Gate::Open {
            is_probe,
            in_flight,
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
            return Err(self.pacing_aborted(elapsed).await);
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

    /// An abort during a pacing or admission wait: `onPace` with `aborted`, the breaker told.
    async fn pacing_aborted(&self, elapsed_ms: u64) -> TransportError {
        self.events
            .emit_if(Hook::OnPace, || Event::Pace {
                context: self.events.context(),
                delay_ms: elapsed_ms,
                aborted: true,
            })
            .await;
        let transition = self
            .host_state(|s| s.breaker.pacing_aborted(self.token))
            .await;
        self.events.announce(transition).await;
        TransportError::aborted_during_pacing()
    }

    /// What quota admission applies to this call.
    fn quota_rules(&self) -> quota::Rules {
        quota::Rules {
            server_quota: self.options.pace_with_rate_limit
                && self.options.rate_limit_floor > 0
                && !self.options.ignore_pace_deadline,
            floor: self.options.rate_limit_floor,
            ceiling: self.options.rate_limit,
            holder: self.token,
            lease_ms: self.shared.hosts.lease_ms(),
        }
    }

    /// Wait until the host's quota estimate and the `rateLimit` ceiling admit one more request
    /// in flight (module [`admission`](crate::admission)); the wait is reported as pacing.
    /// `verdict`: the admission already decided with the other gates (Ok: admitted at that
    /// instant; Err: the wait it asked for), or None to decide now.
    async fn admit_to_quota(
        &mut self,
        rules: quota::Rules,
        mut verdict: Option<Result<u64, u64>>,
    ) -> Result<InFlight<'a>, TransportError> {
        let started = Instant::now();
        let mut waited = false;
        let admitted_ms = loop {
            let verdict = match verdict.take() {
                Some(verdict) => verdict,
                None => {
                    let now = self.shared.clock.now_ms();
                    self.host_state(|s| s.admission.try_admit(&rules, now))
                        .await
                        .map(|()| now)
                }
            };
            let wait_ms = match verdict {
                Ok(admitted_ms) => break admitted_ms,
                Err(wait_ms) => wait_ms,
            };
            waited = true;
            let aborted = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => true,
                _ = timers::sleep(Duration::from_millis(wait_ms)) => false,
            };
            if aborted {
                let elapsed = started.elapsed().as_millis() as u64;
                return Err(self.pacing_aborted(elapsed).await);
            }
        };
        if waited {
            self.report_paced(started.elapsed().as_millis() as u64)
                .await;
        }
        Ok(InFlight {
            shared: self.shared,
            host: &self.spec.host,
            token: self.token,
            admitted_ms,
            under_ceiling: rules.ceiling.is_some(),
            settled: false,
        })
    }

    /// Cache write-back or invalidation, `onResponse`, the partial-data report, then the
    /// breaker's `transition` (decided with the pacing bookkeeping in [`Call::settle`]); the
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
                let stored = match (fleet_generation, self.shared.hosts.fleet()) {
                    (Some(seen), Some(fleet)) => {
                        let now = self.shared.clock.now_ms();
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
                if let Some(fleet) = self.shared.hosts.fleet().filter(|_| cache.is_shared()) {
                    let now = self.shared.clock.now_ms();
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
        let wanted =
            policy::retry_wait(policy, failure.class, self.events.attempt, self.shared.rng);
        let Some(config) = self.options.retry_budget else {
            return (wanted.map(|w| w.delay_ms()), false);
        };
        if failure.class == FailureClass::Aborted {
            return (None, false);
        }
        let now = self.shared.clock.now_ms();
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
        let now = self.shared.clock.now_ms();
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
        let now = self.shared.clock.now_ms();
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
        let now = self.shared.clock.now_ms();
        let transition = self
            .host_state(|s| {
                s.admission
                    .learn(&answer, floor, in_flight.admitted_ms, now);
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

/// How an attempt ends ([`Call::conclude`]): the call's outcome, or another attempt after a wait.
enum Conclusion {
    Done(Result<CallResult, TransportError>),
    Retry { delay_ms: u64 },
}

/// Where the gates before dispatch leave an attempt.
enum Gate<'a> {
    /// Admitted (as the breaker's probe or not), holding its place in the quota.
    Open {
        is_probe: bool,
        in_flight: InFlight<'a>,
    },
    /// The breaker fails it fast, with its `retryAfterMs`.
    CircuitOpen(TransportError, Option<u64>),
}

/// The one host-state decision of [`Call::pass_gates`]: the first gate that refuses or must
/// wait, or the quota's verdict once the others let the attempt through.
enum GateDecision {
    CircuitOpen(Option<u64>, bool),
    Pace(bool, pacing::PaceWait),
    Quota(bool, Result<(), u64>),
}

/// One admitted request in flight on a host: released once settled
/// ([`Call::settle`]), or when dropped (an abandoned call must not hold quota
/// forever; with shared state its reservation in Redis ends with its lease).
struct InFlight<'a> {
    shared: &'a Shared<'a>,
    host: &'a str,
    token: u64,
    /// When admission let it go: its response counts in the window open at that instant.
    admitted_ms: u64,
    /// Counted by the `rateLimit` ceiling, which goes on counting it once it has left.
    under_ceiling: bool,
    settled: bool,
}

impl InFlight<'_> {
    /// Out of flight at `now_ms` (answered, failed or abandoned): its reservation is released,
    /// and the ceiling counts it from now, as it may have been written until now.
    fn leave(&self, state: &mut HostState, now_ms: u64) {
        state.admission.release(self.token);
        if self.under_ceiling {
            state.admission.count_sent(now_ms);
        }
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        if !self.settled {
            let now = self.shared.clock.now_ms();
            self.shared
                .hosts
                .with_local(self.host, |s| self.leave(s, now));
        }
    }
}

/// A random UUID v4, shared by every hook and stamped on the error. Written digit by digit:
/// every call makes one, and formatting it byte by byte cost ~9,000 instructions.
fn new_request_id() -> Arc<str> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut bytes = fastrand::u128(..).to_be_bytes();
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let mut text = [b'-'; 36];
    let mut at = 0;
    for (index, byte) in bytes.iter().enumerate() {
        if matches!(index, 4 | 6 | 8 | 10) {
            at += 1;
        }
        text[at] = HEX[usize::from(byte >> 4)];
        text[at + 1] = HEX[usize::from(byte & 0x0f)];
        at += 2;
    }
    Arc::from(std::str::from_utf8(&text).expect("hex digits and dashes"))
}
