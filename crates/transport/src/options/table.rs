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
        "signal" => signal: () = rules::signal;
        /// Read by JavaScript only; validated here with the rest.
        "exposeRawAxiosError" => expose_raw_axios_error: () = rules::checked_boolean;
        "retry" => retry: RetrySetting = rules::retry;
        "paceWithRateLimit" => pace_with_rate_limit: bool = parse_bool, resolved bool = or(true);
        "rateLimitFloor" => rate_limit_floor: u32 = rules::rate_limit_floor, resolved u32 = or(DEFAULT_RATE_LIMIT_FLOOR);
        "circuitBreaker" => circuit_breaker: Option<BreakerConfig> = rules::breaker, resolved Option<BreakerConfig> = or(None);
        "retryBudget" => retry_budget: Option<BudgetConfig> = rules::budget, resolved Option<BudgetConfig> = or(None);
        "maxSockets" => max_sockets: u32 = rules::max_sockets;
        "maxFreeSockets" => max_free_sockets: u32 = rules::max_free_sockets;
        "onError" => on_error: () = require_function;
        "onRetry" => on_retry: () = require_function;
        "onRequestStart" => on_request_start: () = require_function;
        "onResponse" => on_response: () = require_function;
        "onPace" => on_pace: () = require_function;
        /// Read by JavaScript only (hook failures are routed there).
        "onHookError" => on_hook_error: () = require_function;
        /// Read by JavaScript only; validated here with the rest.
        "diagnostics" => diagnostics: () = rules::diagnostics;
        "onCircuitOpen" => on_circuit_open: () = require_function;
        "onCircuitClose" => on_circuit_close: () = require_function;
        "ignorePaceDeadline" => ignore_pace_deadline: bool = parse_bool, resolved bool = or(false);
        "allowPartialData" => allow_partial_data: bool = parse_bool, resolved bool = or(false);
        /// `null` turns a slot's cache off for one request.
        "responseCache" => response_cache: Option<Arc<ResponseCache>> = rules::response_cache, resolved Option<Arc<ResponseCache>> = or(None);
        "bypassResponseCache" => bypass_response_cache: bool = parse_bool, resolved bool = or(false);
        /// Largest response body read; a larger one fails the attempt (decisions D28).
        "maxResponseBytes" => max_response_bytes: u64 = rules::byte_limit, resolved u64 = or(DEFAULT_MAX_RESPONSE_BYTES);
        /// `false` (no proxy) or one proxy URL for everything; resolved None: the environment's
        /// rules, as read when the slot was built.
        "proxy" => proxy: Arc<ProxyRules> = rules::proxy, resolved Option<Arc<ProxyRules>> = given;
        /// Client-side ceiling for admission (our extension); `null`/`false` off.
        "rateLimit" => rate_limit: Option<Ceiling> = rules::rate_limit, resolved Option<Ceiling> = or(None);
        /// Identical reads in flight share one request (our extension, module `coalesce`).
        "coalesce" => coalesce: bool = parse_bool, resolved bool = or(false);
        /// Redis-backed per-host state for a fleet (our extension); `false`/`null` off. A slot
        /// option only: [`PartialOptions::parse_request_key`] refuses it per request.
        /// Redirects followed inside one attempt (decisions D36); 0 leaves a 3xx as its status error.
        "maxRedirects" => max_redirects: u32 = rules::max_redirects, resolved u32 = or(DEFAULT_MAX_REDIRECTS);
        "sharedState" => shared_state: Option<Arc<SharedStateConfig>> = rules::shared_state, resolved Option<Arc<SharedStateConfig>> = or(None);
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
pub const SLOT_ONLY_KEYS: &[&str] = &["sharedState"];

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
