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
//! is tested with a scripted exchange on paused time (`composition_tests`). `gates` decides
//! admission before dispatch, `outcome` turns what an exchange produced into a result or a
//! classified failure, `conclude` accounts for it and decides the retry, `report` builds the
//! events; `coalesce` is the branch a coalescing read takes instead of running the loop alone.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

// Tokio's clock, so durations follow virtual time in the composition tests.
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::admission::QuotaReading;
use crate::clock::Clock;
use crate::error::TransportError;
use crate::events::EventSink;
use crate::exchange::Exchange;
use crate::host_state::HostState;
use crate::host_store::HostStore;
use crate::options::ResolvedOptions;
use crate::pool::Pool;
use crate::random::RandomSource;
use crate::rate_limit::QuotaHeaders;
use crate::redirect;
use crate::request::RequestSpec;
use crate::timers;
use cache_use::CacheUse;
use coalesce::CoalesceKey;
pub use coalesce::{Coalescer, LeaderOutcome};
use conclude::Conclusion;
use gates::Gate;
use report::{FailureExtras, Reporter};
pub use result::{CallResult, Completed, ResultText};

mod cache_use;
mod coalesce;
#[cfg(test)]
mod composition_tests;
mod conclude;
mod gates;
mod outcome;
mod report;
mod result;
#[cfg(test)]
mod tests;

/// What a call needs besides its request: the client's per-host state, time and randomness.
pub struct ClientEnv<'a> {
    pub hosts: &'a HostStore,
    pub clock: &'a dyn Clock,
    pub rng: &'a dyn RandomSource,
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

/// One call as the transport runs it: the request, its resolved options, where its events go
/// and what cancels it. One value from the binding down to the attempt loop, so no layer
/// threads the four of them (and whatever comes next) as separate arguments.
pub struct CallInputs<'a, S> {
    pub spec: &'a RequestSpec,
    pub options: &'a ResolvedOptions,
    pub sink: &'a S,
    pub cancel: &'a CancellationToken,
}

impl<S> Clone for CallInputs<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for CallInputs<'_, S> {}

/// Run one logical request on `pool`, the connection pool chosen when the call started (so a
/// teardown after that never moves it to a new pool or lifts its socket cap), or join an
/// identical read in flight in `coalescer` when the call coalesces.
pub async fn execute<S: EventSink>(
    coalescer: &Coalescer<LeaderOutcome>,
    env: &ClientEnv<'_>,
    pool: Arc<Pool>,
    call: CallInputs<'_, S>,
) -> Result<Completed, TransportError> {
    let request_id = new_request_id();
    let Some(key) = CoalesceKey::for_call(call.spec, call.options) else {
        return execute_on(env, &pool, call, request_id).await;
    };
    let pool = &pool;
    let attempts = move |request_id| execute_on(env, pool, call, request_id);
    // Boxed: only coalescing calls carry the room for leading or following a group.
    Box::pin(coalesce::lead_or_follow(
        coalescer, key, call, request_id, attempts,
    ))
    .await
}

/// One logical request under `request_id` over any [`Exchange`]: the production pool (from
/// [`execute`], after coalescing), or a scripted one in tests.
pub async fn execute_on<S: EventSink>(
    env: &ClientEnv<'_>,
    exchange: &impl Exchange,
    call: CallInputs<'_, S>,
    request_id: Arc<str>,
) -> Result<Completed, TransportError> {
    let CallInputs {
        spec,
        options,
        sink,
        cancel,
    } = call;
    let mut call = AttemptLoop {
        env,
        spec,
        options,
        cancel,
        token: next_request_token(),
        state_key: env.hosts.key_for(spec),
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

struct AttemptLoop<'a, S: EventSink> {
    env: &'a ClientEnv<'a>,
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

impl<'a, S: EventSink> AttemptLoop<'a, S> {
    /// One decision on the host's state, through the store (local or shared); a switch of the
    /// shared state to its local copy or back is reported on the way.
    async fn host_state<R>(&self, decide: impl FnMut(&mut HostState) -> R) -> R {
        let now = self.env.clock.now_ms();
        let (result, notice) = self
            .env
            .hosts
            .with(&self.spec.host, self.state_key.as_deref(), now, decide)
            .await;
        self.report_notice(notice).await;
        result
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
                Gate::Aborted => {
                    // As an already-aborted signal's dispatch would have ended (D22).
                    let error = TransportError::aborted();
                    self.events.request_start().await;
                    self.events
                        .report_response(None, 0.0, None, None, false)
                        .await;
                    self.events
                        .report_failure(&error, FailureExtras::default())
                        .await;
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
                let reading = quota_headers.and_then(QuotaReading::of);
                let settled = outcome::settle(
                    dispatched,
                    quota_headers,
                    self.spec,
                    self.options.allow_partial_data,
                    || self.env.clock.now_ms(),
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
