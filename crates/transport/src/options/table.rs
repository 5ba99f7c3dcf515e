//! The transport options, one row each: key, field, parser, and how it resolves. Adding an
//! option is a row here plus its parser in [`rules`](super::rules) (or a shared one).

use std::sync::Arc;
use std::time::Duration;

use super::declare::transport_options;
use super::parse::{parse_bool, require_function};
use super::rules;
use super::settings::{
    Hook, HookSet, KeyState, PoolBounds, RetrySetting, DEFAULT_MAX_FREE_SOCKETS,
    DEFAULT_MAX_REDIRECTS, DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_MAX_SOCKETS,
    DEFAULT_RATE_LIMIT_FLOOR, DEFAULT_TIMEOUT_MS,
};
use super::value::{OptValue, OptionError};
use crate::admission::Ceiling;
use crate::breaker::BreakerConfig;
use crate::budget::BudgetConfig;
use crate::cache::ResponseCache;
use crate::policy::RetryPolicy;
use crate::proxy::ProxyRules;
use crate::shared_state::SharedStateConfig;

transport_options! {
    options {
        "timeout" => timeout_ms: u64 = rules::timeout;
            ts "number", default "`30000`",
            "Per-attempt deadline in ms covering connect, headers and body (and the redirects the attempt follows); not run while waiting for a socket of a saturated pool. A finite number ≥ 0; `0` disables.";
        "signal" => signal: () = rules::signal;
            ts "AbortSignal", default "–",
            "Cancels the request: in flight, during retry backoff and during pacing waits. An `AbortSignal`.";
        /// Read by JavaScript only; validated here with the rest.
        "exposeRawAxiosError" => expose_raw_axios_error: () = rules::checked_boolean;
            ts "boolean", default "`false`",
            "Attach a redacted description of the raw failure as `rawAxiosError` / `cause`. A boolean.";
        "retry" => retry: RetrySetting = rules::retry;
            ts "boolean | Partial<RetryPolicy>", default "the default policy",
            "`false` sends once; `true` or omitted uses the defaults (mutations and REST writes: not retried unless set). A policy `{ maxRetries, baseDelayMs, maxDelayMs, retryOnStatus, retryOnNetworkError, jitter }` (integer ≥ 0; finite ≥ 0; finite ≥ 0; integers 100–599; boolean; boolean) replaces the slot's whole policy, its other knobs from the defaults; unknown keys are rejected.";
        "paceWithRateLimit" => pace_with_rate_limit: bool = parse_bool, resolved bool = or(true);
            ts "boolean", default "`true`",
            "Proactive pacing and quota-aware admission from `x-ratelimit-*` headers. A boolean.";
        "rateLimitFloor" => rate_limit_floor: u32 = rules::rate_limit_floor, resolved u32 = or(DEFAULT_RATE_LIMIT_FLOOR);
            ts "number", default "`1`",
            "Pace once `remaining` falls below this. An integer ≥ 0; `0` disables floor pacing.";
        "circuitBreaker" => circuit_breaker: Option<BreakerConfig> = rules::breaker, resolved Option<BreakerConfig> = or(None);
            ts "CircuitBreakerOptions", default "off",
            "Fast-fails a host after `threshold` consecutive availability failures, for `cooldownMs`: `{ threshold: integer ≥ 1, cooldownMs: finite ≥ 0 }`; `null` turns it off.";
        "retryBudget" => retry_budget: Option<BudgetConfig> = rules::budget, resolved Option<BudgetConfig> = or(None);
            ts "RetryBudget", default "off",
            "Caps retries across all requests of a provider client, per upstream host, in fixed windows: `{ maxRetriesPerWindow: integer ≥ 0, windowMs: finite > 0 }`.";
        "maxSockets" => max_sockets: u32 = rules::max_sockets;
            ts "number", default "`20`",
            "Hard cap on concurrent connections per host (selects a dedicated pool). An integer ≥ 0; `0` means 1, as in the original.";
        "maxFreeSockets" => max_free_sockets: u32 = rules::max_free_sockets;
            ts "number", default "`5`",
            "Idle connections kept per host (selects a dedicated pool). An integer ≥ 0.";
        "onError" => on_error: () = require_function;
            ts "OnErrorHandler", default "–",
            "Called with the error and its context when a request fails for good (and for attempts that will be retried, unless `onRetry` is set). A function.";
        "onRetry" => on_retry: () = require_function;
            ts "OnErrorHandler", default "–",
            "Called with the error and its context for an attempt that will be retried (its context has `nextDelayMs`), instead of `onError`. A function.";
        "onRequestStart" => on_request_start: () = require_function;
            ts "OnRequestStartHandler", default "–",
            "Called as each attempt starts. A function.";
        "onResponse" => on_response: () = require_function;
            ts "OnResponseHandler", default "–",
            "Called with each answer an attempt got (or the response cache served). A function.";
        "onPace" => on_pace: () = require_function;
            ts "OnPaceHandler", default "–",
            "Called when a request waits for the rate-limit window. A function.";
        /// Read by JavaScript only (hook failures are routed there).
        "onHookError" => on_hook_error: () = require_function;
            ts "OnHookErrorHandler", default "–",
            "Called with the hook's name and an error when a hook throws or rejects (the failure is ignored otherwise). A function.";
        /// Read by JavaScript only; validated here with the rest.
        "diagnostics" => diagnostics: () = rules::diagnostics;
            ts "DiagnosticsMode", default "`\"warn\"`",
            "What happens to a diagnostic no `onHookError` takes: `\"warn\"` writes it with `console.warn`, `\"hook\"` and `\"silent\"` stay quiet.";
        "onCircuitOpen" => on_circuit_open: () = require_function;
            ts "OnCircuitOpenHandler", default "–",
            "Called when a host's circuit opens. A function.";
        "onCircuitClose" => on_circuit_close: () = require_function;
            ts "OnCircuitCloseHandler", default "–",
            "Called when a host's circuit closes again. A function.";
        "ignorePaceDeadline" => ignore_pace_deadline: bool = parse_bool, resolved bool = or(false);
            ts "boolean", default "`false`",
            "Bypass the shared pacing deadline for this call. A boolean.";
        "allowPartialData" => allow_partial_data: bool = parse_bool, resolved bool = or(false);
            ts "boolean", default "`false`",
            "Resolve GraphQL envelopes that carry errors and some data (AniList). A boolean.";
        /// `null` turns a slot's cache off for one request.
        "responseCache" => response_cache: Option<Arc<ResponseCache>> = rules::response_cache, resolved Option<Arc<ResponseCache>> = or(None);
            ts "ResponseCache | null", default "–",
            "Serve GETs and GraphQL queries from this cache and write successful ones back: a `ResponseCache` instance; `null` turns a slot's cache off for the call.";
        "bypassResponseCache" => bypass_response_cache: bool = parse_bool, resolved bool = or(false);
            ts "boolean", default "`false`",
            "Skip the cache lookup and write-back for this call (a write still invalidates). A boolean.";
        /// Largest response body read; a larger one fails the attempt (decisions D28).
        "maxResponseBytes" => max_response_bytes: u64 = rules::byte_limit, resolved u64 = or(DEFAULT_MAX_RESPONSE_BYTES);
            ts "number", default "`67108864` (64 MiB)",
            "Largest response body read, in bytes (an integer ≥ 1). A larger body fails the call with `NETWORK_ERROR` (its `reason` names the limit) as soon as it passes the limit; it is not retried and does not count for the circuit breaker.";
        /// `false` (no proxy) or one proxy URL for everything; resolved None: the environment's
        /// rules, as read when the slot was built.
        "proxy" => proxy: Arc<ProxyRules> = rules::proxy, resolved Option<Arc<ProxyRules>> = given;
            ts "string | false", default "the environment",
            "An `http://[user:pass@]host[:port]` proxy for every request (the environment's `HTTP_PROXY`/`HTTPS_PROXY`/`NO_PROXY` are then ignored), or `false` for no proxy. Unset: the environment, as read when the slot was built.";
        /// Client-side ceiling for admission (our extension); `null`/`false` off.
        "rateLimit" => rate_limit: Option<Ceiling> = rules::rate_limit, resolved Option<Ceiling> = or(None);
            ts "RateLimitCeiling | null | false", default "off",
            "Client-side admission ceiling per host (our extension): at most `maxRequests` (integer ≥ 1) dispatches in any `windowMs` (finite > 0), with or without rate-limit headers; the stricter of it and the server's quota wins. `null` or `false` turns it off.";
        /// Identical reads in flight share one request (our extension, module `coalesce`).
        "coalesce" => coalesce: bool = parse_bool, resolved bool = or(false);
            ts "boolean", default "`false`",
            "Identical reads in flight at the same time (same request, credential and outcome-shaping options) share one request and its answer; writes never do (our extension). A boolean.";
        /// Redis-backed per-host state for a fleet (our extension); `false`/`null` off. A slot
        /// option only: [`PartialOptions::parse_request_key`] refuses it per request.
        /// Redirects followed inside one attempt (decisions D36); 0 leaves a 3xx as its status error.
        "maxRedirects" => max_redirects: u32 = rules::max_redirects, resolved u32 = or(DEFAULT_MAX_REDIRECTS);
            ts "number", default "`5`",
            "Redirects (301, 302, 303, 307, 308) followed inside one attempt, as the original's client followed them; credentials are dropped when a redirect leaves the request's origin. One more redirect fails the attempt with `NETWORK_ERROR`. An integer ≥ 0; `0` returns the redirect as the status error it is.";
        "sharedState" => shared_state: Option<Arc<SharedStateConfig>> = rules::shared_state, resolved Option<Arc<SharedStateConfig>> = or(None);
            ts "SharedStateOptions | null | false", default "off",
            "Share per-host state with other processes through Redis (our extension): `{ redis, keyPrefix?, timeoutMs?, leaseMs? }`; `false`, `null` or absent: off. A slot option, refused per request.";
        /// Past this many requests in a window, one in flight at a time until the announced
        /// limit is proven (decisions D42, our extension); a slot option, whose default is the
        /// provider's (the provider catalog applies it).
        "degradedLimit" => degraded_limit: Option<u32> = rules::degraded_limit, resolved Option<u32> = or(None);
            ts "number | false", default "the provider's",
            "The quota an upstream enforces while degraded, below the one its headers announce (our extension). Once a window's served and in-flight requests reach it, further requests go one at a time until a success reports more served in a window without a 429 (the announced limit is proven, until a 429 the estimate did not predict shows the headers lie again), so a degraded upstream reveals itself with one 429 instead of one per request in flight. Does nothing while `rateLimitFloor` is `0` or `paceWithRateLimit` is `false`. An integer ≥ 1; `false` or `0` turns it off. A slot option, refused per request.";
    }
    derived {
        /// Per-attempt deadline (decisions D9); None when disabled with 0.
        timeout: Option<Duration> = timeout;
        /// None when retries are off (explicitly, or by D1 for writes).
        retry: Option<RetryPolicy> = retry;
        /// Custom socket bounds select a dedicated pool; None uses the default pool.
        pool_bounds: Option<PoolBounds> = pool_bounds;
        hooks: HookSet = hooks;
    }
}

/// The given value, or `default`.
fn or<T: Clone>(default: T) -> impl FnOnce(Option<&T>) -> T {
    move |given| given.cloned().unwrap_or(default)
}

/// The given value, if any: None leaves the choice to the caller.
fn given<T: Clone>(value: Option<&T>) -> Option<T> {
    value.cloned()
}

fn timeout(options: &PartialOptions, _: bool) -> Option<Duration> {
    let ms = options
        .timeout_ms
        .value()
        .copied()
        .unwrap_or(DEFAULT_TIMEOUT_MS);
    (ms > 0).then(|| Duration::from_millis(ms))
}

fn retry(options: &PartialOptions, is_write: bool) -> Option<RetryPolicy> {
    match options.retry.value() {
        Some(RetrySetting::Disabled) => None,
        Some(RetrySetting::Defaults) => Some(RetryPolicy::default()),
        Some(RetrySetting::Custom(policy)) => Some(policy.clone()),
        None if is_write => None,
        None => Some(RetryPolicy::default()),
    }
}

fn pool_bounds(options: &PartialOptions, _: bool) -> Option<PoolBounds> {
    match (
        options.max_sockets.value(),
        options.max_free_sockets.value(),
    ) {
        (None, None) => None,
        (sockets, free) => Some(PoolBounds {
            max_sockets: sockets.copied().unwrap_or(DEFAULT_MAX_SOCKETS),
            max_free_sockets: free.copied().unwrap_or(DEFAULT_MAX_FREE_SOCKETS),
        }),
    }
}

fn hooks(options: &PartialOptions, _: bool) -> HookSet {
    HookSet(
        Hook::ALL
            .iter()
            .filter(|hook| options.is_set(hook.key()))
            .fold(0, |bits, hook| bits | *hook as u32),
    )
}

/// Options that configure the slot's client itself, so they cannot change per call.
pub const SLOT_ONLY_KEYS: &[&str] = &["degradedLimit", "sharedState"];

impl PartialOptions {
    /// [`PartialOptions::parse_key`] for per-request options: a slot-only key is refused.
    pub fn parse_request_key(&mut self, key: &str, value: &OptValue) -> Result<bool, OptionError> {
        if SLOT_ONLY_KEYS.contains(&key) && !matches!(value, OptValue::Undefined) {
            return Err(OptionError(format!(
                "{key} is a slot option and cannot be given per request: set it in the provider's slot (new AniLink({{ anilist: {{ {key}: ... }} }}) or the options of new AniLink(token, options))."
            )));
        }
        self.parse_key(key, value)
    }
}
