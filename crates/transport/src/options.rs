//! Transport options: parsing and validation (decisions D10), shallow merging, resolution.
//!
//! The binding converts each JavaScript option value into an [`OptValue`] and nothing more;
//! every rule about what is valid lives here, so it is tested without Node. An invalid value is
//! never coerced: it is an [`OptionError`] that names the option, the rule and what was given.
//!
//! Merging is shallow and per key, as in the original: a per-request `retry: { maxRetries: 1 }`
//! replaces the slot's whole policy, and its other knobs fall back to the built-in defaults. A
//! key present with the value `undefined` overrides the slot's value with the default.

use std::sync::Arc;
use std::time::Duration;

use crate::breaker::BreakerConfig;
use crate::budget::BudgetConfig;
use crate::cache::ResponseCache;
use crate::policy::RetryPolicy;
use crate::proxy::{ProxyRules, ProxyServer};

/// A JavaScript value as the option parser needs to see it.
#[derive(Clone, Debug, PartialEq)]
pub enum OptValue {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<OptValue>),
    Object(Vec<(String, OptValue)>),
    Function,
    AbortSignal,
    /// A JavaScript `ResponseCache` instance: the native cache it wraps.
    ResponseCache(Arc<ResponseCache>),
    /// Any other value; the string is its JavaScript type, for messages.
    Other(&'static str),
}

impl OptValue {
    /// How the value reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            OptValue::Undefined => "undefined".into(),
            OptValue::Null => "null".into(),
            OptValue::Bool(b) => b.to_string(),
            OptValue::Number(n) => format_number(*n),
            OptValue::String(s) => format!("{s:?}"),
            OptValue::Array(items) => format!(
                "[{}]",
                items.iter().map(OptValue::describe).collect::<Vec<_>>().join(", ")
            ),
            OptValue::Object(_) => "an object".into(),
            OptValue::Function => "a function".into(),
            OptValue::AbortSignal => "an AbortSignal".into(),
            OptValue::ResponseCache(_) => "a ResponseCache".into(),
            OptValue::Other(kind) => format!("a value of type {kind}"),
        }
    }
}

fn format_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity".into() } else { "-Infinity".into() }
    } else if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// An invalid option: becomes a JavaScript `TypeError` with this message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError(pub String);

impl std::fmt::Display for OptionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionError {}

/// The 23 transport option keys of the original, in its order (messages list them so), then
/// ours.
pub const TRANSPORT_OPTION_KEYS: [&str; 25] = [
    "timeout",
    "signal",
    "exposeRawAxiosError",
    "retry",
    "paceWithRateLimit",
    "rateLimitFloor",
    "circuitBreaker",
    "retryBudget",
    "maxSockets",
    "maxFreeSockets",
    "onError",
    "onRetry",
    "onRequestStart",
    "onResponse",
    "onPace",
    "onHookError",
    "diagnostics",
    "onCircuitOpen",
    "onCircuitClose",
    "ignorePaceDeadline",
    "allowPartialData",
    "responseCache",
    "bypassResponseCache",
    "maxResponseBytes",
    "proxy",
];

/// Hooks the transport emits events for; the bit tells the attempt loop whether to build one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Hook {
    OnRequestStart = 1,
    OnResponse = 2,
    OnError = 4,
    OnRetry = 8,
    OnPace = 16,
    OnCircuitOpen = 32,
    OnCircuitClose = 64,
}

impl Hook {
    pub const ALL: [Hook; 7] = [
        Hook::OnRequestStart,
        Hook::OnResponse,
        Hook::OnError,
        Hook::OnRetry,
        Hook::OnPace,
        Hook::OnCircuitOpen,
        Hook::OnCircuitClose,
    ];

    pub fn key(self) -> &'static str {
        match self {
            Hook::OnRequestStart => "onRequestStart",
            Hook::OnResponse => "onResponse",
            Hook::OnError => "onError",
            Hook::OnRetry => "onRetry",
            Hook::OnPace => "onPace",
            Hook::OnCircuitOpen => "onCircuitOpen",
            Hook::OnCircuitClose => "onCircuitClose",
        }
    }

    fn from_key(key: &str) -> Option<Hook> {
        Hook::ALL.into_iter().find(|h| h.key() == key)
    }
}

/// The set of hooks configured for a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookSet(pub u32);

impl HookSet {
    pub fn has(self, hook: Hook) -> bool {
        self.0 & hook as u32 != 0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// One option in a partial option set: absent, present as `undefined`, or set.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Slot<T> {
    #[default]
    Absent,
    Unset,
    Set(T),
}

impl<T: Clone> Slot<T> {
    /// `{...base, ...over}` for one key.
    fn merged(base: &Slot<T>, over: &Slot<T>) -> Slot<T> {
        match over {
            Slot::Absent => base.clone(),
            other => other.clone(),
        }
    }

    fn value(&self) -> Option<&T> {
        match self {
            Slot::Set(v) => Some(v),
            _ => None,
        }
    }
}

/// `retry` as given: off, the defaults, or a policy already overlaid on the defaults.
#[derive(Clone, Debug, PartialEq)]
pub enum RetrySetting {
    Disabled,
    Defaults,
    Custom(RetryPolicy),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Diagnostics {
    Warn,
    Hook,
    Silent,
}

/// Options as given at one level (slot or request), validated but not yet defaulted.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PartialOptions {
    pub timeout_ms: Slot<u64>,
    pub expose_raw_error: Slot<bool>,
    pub retry: Slot<RetrySetting>,
    pub pace_with_rate_limit: Slot<bool>,
    pub rate_limit_floor: Slot<u32>,
    pub circuit_breaker: Slot<Option<BreakerConfig>>,
    pub retry_budget: Slot<Option<BudgetConfig>>,
    pub max_sockets: Slot<u32>,
    pub max_free_sockets: Slot<u32>,
    pub diagnostics: Slot<Diagnostics>,
    pub ignore_pace_deadline: Slot<bool>,
    pub allow_partial_data: Slot<bool>,
    pub bypass_response_cache: Slot<bool>,
    /// `null` turns a slot's cache off for one request.
    pub response_cache: Slot<Option<Arc<ResponseCache>>>,
    /// `false` (no proxy) or one proxy URL for everything; otherwise the environment's.
    pub proxy: Slot<Arc<ProxyRules>>,
    pub max_response_bytes: Slot<u64>,
    /// Per hook: absent, explicitly undefined, or a function.
    pub hooks: [Slot<()>; 7],
}

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const DEFAULT_RATE_LIMIT_FLOOR: u32 = 1;
/// 64 MiB: far above any AniList or MAL answer, far below what would strain the process (D28).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 64 << 20;

/// Options of one call after merging and defaulting: what the attempt loop reads.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedOptions {
    /// Per-attempt deadline (decisions D9); None when disabled with 0.
    pub timeout: Option<Duration>,
    pub timeout_ms: u64,
    /// None when retries are off (explicitly, or by D1 for writes).
    pub retry: Option<RetryPolicy>,
    pub pace_with_rate_limit: bool,
    pub rate_limit_floor: u32,
    pub circuit_breaker: Option<BreakerConfig>,
    pub retry_budget: Option<BudgetConfig>,
    /// Custom socket bounds select a dedicated pool; None uses the default pool.
    pub pool_bounds: Option<PoolBounds>,
    pub ignore_pace_deadline: bool,
    pub allow_partial_data: bool,
    pub expose_raw_error: bool,
    pub hooks: HookSet,
    pub response_cache: Option<Arc<ResponseCache>>,
    pub bypass_response_cache: bool,
    /// None: the environment's proxy rules, as read when the slot was built.
    pub proxy: Option<Arc<ProxyRules>>,
    /// Largest response body read; a larger one fails the attempt (decisions D28).
    pub max_response_bytes: u64,
}

/// Socket bounds of a dedicated pool (decisions D13): `maxSockets`, `maxFreeSockets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoolBounds {
    pub max_sockets: u32,
    pub max_free_sockets: u32,
}

pub const DEFAULT_MAX_SOCKETS: u32 = 20;
pub const DEFAULT_MAX_FREE_SOCKETS: u32 = 5;

impl PoolBounds {
    pub const DEFAULT: PoolBounds = PoolBounds {
        max_sockets: DEFAULT_MAX_SOCKETS,
        max_free_sockets: DEFAULT_MAX_FREE_SOCKETS,
    };
}

impl PartialOptions {
    /// `{...self, ...over}`, per key.
    pub fn merged_with(&self, over: &PartialOptions) -> PartialOptions {
        let mut hooks: [Slot<()>; 7] = Default::default();
        for (i, hook) in hooks.iter_mut().enumerate() {
            *hook = Slot::merged(&self.hooks[i], &over.hooks[i]);
        }
        PartialOptions {
            timeout_ms: Slot::merged(&self.timeout_ms, &over.timeout_ms),
            expose_raw_error: Slot::merged(&self.expose_raw_error, &over.expose_raw_error),
            retry: Slot::merged(&self.retry, &over.retry),
            pace_with_rate_limit: Slot::merged(&self.pace_with_rate_limit, &over.pace_with_rate_limit),
            rate_limit_floor: Slot::merged(&self.rate_limit_floor, &over.rate_limit_floor),
            circuit_breaker: Slot::merged(&self.circuit_breaker, &over.circuit_breaker),
            retry_budget: Slot::merged(&self.retry_budget, &over.retry_budget),
            max_sockets: Slot::merged(&self.max_sockets, &over.max_sockets),
            max_free_sockets: Slot::merged(&self.max_free_sockets, &over.max_free_sockets),
            diagnostics: Slot::merged(&self.diagnostics, &over.diagnostics),
            ignore_pace_deadline: Slot::merged(&self.ignore_pace_deadline, &over.ignore_pace_deadline),
            allow_partial_data: Slot::merged(&self.allow_partial_data, &over.allow_partial_data),
            bypass_response_cache: Slot::merged(&self.bypass_response_cache, &over.bypass_response_cache),
            response_cache: Slot::merged(&self.response_cache, &over.response_cache),
            proxy: Slot::merged(&self.proxy, &over.proxy),
            max_response_bytes: Slot::merged(&self.max_response_bytes, &over.max_response_bytes),
            hooks,
        }
    }

    /// Apply the defaults. `is_write` is a mutation or REST write: with `retry` left unset it is
    /// not retried (decisions D1); an explicit `true` or policy object opts in.
    pub fn resolve(&self, is_write: bool) -> ResolvedOptions {
        let retry = match self.retry.value() {
            Some(RetrySetting::Disabled) => None,
            Some(RetrySetting::Defaults) => Some(RetryPolicy::default()),
            Some(RetrySetting::Custom(policy)) => Some(policy.clone()),
            None if is_write => None,
            None => Some(RetryPolicy::default()),
        };
        let timeout_ms = self.timeout_ms.value().copied().unwrap_or(DEFAULT_TIMEOUT_MS);
        let pool_bounds = match (self.max_sockets.value(), self.max_free_sockets.value()) {
            (None, None) => None,
            (sockets, free) => Some(PoolBounds {
                max_sockets: sockets.copied().unwrap_or(DEFAULT_MAX_SOCKETS),
                max_free_sockets: free.copied().unwrap_or(DEFAULT_MAX_FREE_SOCKETS),
            }),
        };
        let mut hooks = 0;
        for (i, hook) in Hook::ALL.iter().enumerate() {
            if matches!(self.hooks[i], Slot::Set(())) {
                hooks |= *hook as u32;
            }
        }
        ResolvedOptions {
            timeout: (timeout_ms > 0).then(|| Duration::from_millis(timeout_ms)),
            timeout_ms,
            retry,
            pace_with_rate_limit: self.pace_with_rate_limit.value().copied().unwrap_or(true),
            rate_limit_floor: self.rate_limit_floor.value().copied().unwrap_or(DEFAULT_RATE_LIMIT_FLOOR),
            circuit_breaker: self.circuit_breaker.value().copied().flatten(),
            retry_budget: self.retry_budget.value().copied().flatten(),
            pool_bounds,
            ignore_pace_deadline: self.ignore_pace_deadline.value().copied().unwrap_or(false),
            allow_partial_data: self.allow_partial_data.value().copied().unwrap_or(false),
            expose_raw_error: self.expose_raw_error.value().copied().unwrap_or(false),
            hooks: HookSet(hooks),
            response_cache: self.response_cache.value().cloned().flatten(),
            bypass_response_cache: self.bypass_response_cache.value().copied().unwrap_or(false),
            proxy: self.proxy.value().cloned(),
            max_response_bytes: self.max_response_bytes.value().copied().unwrap_or(DEFAULT_MAX_RESPONSE_BYTES),
        }
    }

    /// Parse one transport option. Returns false when `key` is not a transport option, so the
    /// caller can try its own keys (auth fields, `baseUrl`) or reject it.
    pub fn parse_key(&mut self, key: &str, value: &OptValue) -> Result<bool, OptionError> {
        if matches!(value, OptValue::Undefined) {
            return Ok(self.unset(key));
        }
        match key {
            "timeout" => self.timeout_ms = Slot::Set(parse_timeout(value)?),
            "retry" => self.retry = Slot::Set(parse_retry(value)?),
            "rateLimitFloor" => {
                self.rate_limit_floor = Slot::Set(parse_integer(value, 0).ok_or_else(|| {
                    invalid(
                        "rateLimitFloor must be a finite, non-negative integer (0 disables floor-based pacing)",
                        value,
                    )
                })?)
            }
            "circuitBreaker" => self.circuit_breaker = Slot::Set(parse_breaker(value)?),
            "retryBudget" => self.retry_budget = Slot::Set(parse_budget(value)?),
            "maxSockets" => {
                // 0 means 1, as the original normalises it (decisions D21).
                self.max_sockets = Slot::Set(parse_integer(value, 0).map(|n| n.max(1)).ok_or_else(|| {
                    invalid("maxSockets must be an integer greater than or equal to 0 (0 means 1)", value)
                })?)
            }
            "maxFreeSockets" => {
                self.max_free_sockets = Slot::Set(parse_integer(value, 0).ok_or_else(|| {
                    invalid("maxFreeSockets must be an integer greater than or equal to 0", value)
                })?)
            }
            "diagnostics" => self.diagnostics = Slot::Set(parse_diagnostics(value)?),
            "maxResponseBytes" => self.max_response_bytes = Slot::Set(parse_byte_limit(value)?),
            "exposeRawAxiosError" => self.expose_raw_error = Slot::Set(parse_bool(key, value)?),
            "paceWithRateLimit" => self.pace_with_rate_limit = Slot::Set(parse_bool(key, value)?),
            "ignorePaceDeadline" => self.ignore_pace_deadline = Slot::Set(parse_bool(key, value)?),
            "allowPartialData" => self.allow_partial_data = Slot::Set(parse_bool(key, value)?),
            "bypassResponseCache" => self.bypass_response_cache = Slot::Set(parse_bool(key, value)?),
            "onHookError" => require_function(key, value)?,
            "signal" => {
                if value != &OptValue::AbortSignal {
                    return Err(invalid("signal must be an AbortSignal", value));
                }
            }
            "proxy" => self.proxy = Slot::Set(parse_proxy(value)?),
            "responseCache" => {
                self.response_cache = Slot::Set(match value {
                    OptValue::ResponseCache(cache) => Some(cache.clone()),
                    OptValue::Null => None,
                    other => return Err(invalid("responseCache must be a ResponseCache instance", other)),
                })
            }
            _ => match Hook::from_key(key) {
                Some(hook) => {
                    require_function(key, value)?;
                    self.hooks[hook_index(hook)] = Slot::Set(());
                }
                None => return Ok(false),
            },
        }
        Ok(true)
    }

    fn unset(&mut self, key: &str) -> bool {
        match key {
            "timeout" => self.timeout_ms = Slot::Unset,
            "retry" => self.retry = Slot::Unset,
            "rateLimitFloor" => self.rate_limit_floor = Slot::Unset,
            "circuitBreaker" => self.circuit_breaker = Slot::Unset,
            "retryBudget" => self.retry_budget = Slot::Unset,
            "maxSockets" => self.max_sockets = Slot::Unset,
            "maxFreeSockets" => self.max_free_sockets = Slot::Unset,
            "diagnostics" => self.diagnostics = Slot::Unset,
            "exposeRawAxiosError" => self.expose_raw_error = Slot::Unset,
            "paceWithRateLimit" => self.pace_with_rate_limit = Slot::Unset,
            "ignorePaceDeadline" => self.ignore_pace_deadline = Slot::Unset,
            "allowPartialData" => self.allow_partial_data = Slot::Unset,
            "bypassResponseCache" => self.bypass_response_cache = Slot::Unset,
            "responseCache" => self.response_cache = Slot::Unset,
            "proxy" => self.proxy = Slot::Unset,
            "maxResponseBytes" => self.max_response_bytes = Slot::Unset,
            "onHookError" | "signal" => {}
            _ => match Hook::from_key(key) {
                Some(hook) => self.hooks[hook_index(hook)] = Slot::Unset,
                None => return false,
            },
        }
        true
    }
}

fn hook_index(hook: Hook) -> usize {
    Hook::ALL.iter().position(|h| *h == hook).unwrap_or(0)
}

pub(crate) fn invalid(rule: &str, value: &OptValue) -> OptionError {
    OptionError(format!("{rule} (received {}).", value.describe()))
}

fn require_function(key: &str, value: &OptValue) -> Result<(), OptionError> {
    match value {
        OptValue::Function => Ok(()),
        other => Err(invalid(&format!("{key} must be a function"), other)),
    }
}

pub(crate) fn parse_bool(key: &str, value: &OptValue) -> Result<bool, OptionError> {
    match value {
        OptValue::Bool(b) => Ok(*b),
        other => Err(invalid(&format!("{key} must be a boolean"), other)),
    }
}

/// A finite integer not below `min` that fits u32.
pub(crate) fn parse_integer(value: &OptValue, min: u32) -> Option<u32> {
    match value {
        OptValue::Number(n) if n.is_finite() && n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(u32::MAX) => {
            Some(*n as u32)
        }
        _ => None,
    }
}

/// A finite number not below zero (or above it when `positive`), as whole milliseconds.
pub(crate) fn parse_millis(value: &OptValue, positive: bool) -> Option<u64> {
    match value {
        OptValue::Number(n) if n.is_finite() && (*n > 0.0 || (!positive && *n == 0.0)) => {
            Some(n.ceil().min(u64::MAX as f64) as u64)
        }
        _ => None,
    }
}

fn parse_timeout(value: &OptValue) -> Result<u64, OptionError> {
    parse_millis(value, false)
        .ok_or_else(|| invalid("timeout must be a finite number greater than or equal to 0", value))
}

/// `proxy`: `false` ignores the environment, a URL string replaces it. The message describes
/// a bad URL without repeating it (it may carry a password: decisions D31).
fn parse_proxy(value: &OptValue) -> Result<Arc<ProxyRules>, OptionError> {
    const RULE: &str = "proxy must be false (no proxy) or an http:// proxy URL such as \"http://proxy.example:3128\"";
    match value {
        OptValue::Bool(false) => Ok(Arc::new(ProxyRules::default())),
        OptValue::String(url) => match ProxyServer::parse(url) {
            Ok(server) => Ok(Arc::new(ProxyRules::fixed(Arc::new(server)))),
            Err(reason) => Err(OptionError(format!("{RULE} (received a string that is not one: {reason})."))),
        },
        other => Err(invalid(RULE, other)),
    }
}

/// `maxResponseBytes`: a whole number of bytes, at least 1 and exactly representable in JavaScript.
fn parse_byte_limit(value: &OptValue) -> Result<u64, OptionError> {
    match value {
        OptValue::Number(n) if n.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(n) => Ok(*n as u64),
        other => Err(invalid("maxResponseBytes must be an integer number of bytes greater than or equal to 1", other)),
    }
}

fn parse_diagnostics(value: &OptValue) -> Result<Diagnostics, OptionError> {
    match value {
        OptValue::String(s) if s == "warn" => Ok(Diagnostics::Warn),
        OptValue::String(s) if s == "hook" => Ok(Diagnostics::Hook),
        OptValue::String(s) if s == "silent" => Ok(Diagnostics::Silent),
        other => Err(OptionError(format!(
            "Invalid diagnostics {}: it must be one of \"warn\", \"hook\", or \"silent\".",
            other.describe()
        ))),
    }
}

/// The fields of an object option, rejecting keys it does not know (a typo must not pass silently).
pub(crate) fn object_fields<'a>(
    option: &str,
    value: &'a OptValue,
    known: &[&str],
) -> Result<Vec<(&'a str, &'a OptValue)>, OptionError> {
    let OptValue::Object(fields) = value else {
        return Err(invalid(&format!("{option} must be an object"), value));
    };
    let mut out = Vec::with_capacity(fields.len());
    for (key, field) in fields {
        if !known.contains(&key.as_str()) {
            return Err(OptionError(format!(
                "Unknown key \"{key}\" in {option}. Valid keys are: {}.",
                known.join(", ")
            )));
        }
        if !matches!(field, OptValue::Undefined) {
            out.push((key.as_str(), field));
        }
    }
    Ok(out)
}

fn parse_retry(value: &OptValue) -> Result<RetrySetting, OptionError> {
    const KEYS: [&str; 6] = [
        "maxRetries",
        "baseDelayMs",
        "maxDelayMs",
        "retryOnStatus",
        "retryOnNetworkError",
        "jitter",
    ];
    match value {
        OptValue::Bool(false) => return Ok(RetrySetting::Disabled),
        OptValue::Bool(true) => return Ok(RetrySetting::Defaults),
        OptValue::Object(_) => {}
        other => {
            return Err(invalid("retry must be true, false or a retry policy object", other));
        }
    }
    let mut policy = RetryPolicy::default();
    for (key, field) in object_fields("retry", value, &KEYS)? {
        match key {
            "maxRetries" => {
                policy.max_retries = parse_integer(field, 0).ok_or_else(|| {
                    invalid("retry.maxRetries must be an integer greater than or equal to 0", field)
                })?
            }
            "baseDelayMs" => {
                policy.base_delay_ms = parse_delay(field).ok_or_else(|| {
                    invalid("retry.baseDelayMs must be a finite number greater than or equal to 0", field)
                })?
            }
            "maxDelayMs" => {
                policy.max_delay_ms = parse_delay(field).ok_or_else(|| {
                    invalid("retry.maxDelayMs must be a finite number greater than or equal to 0", field)
                })?
            }
            "retryOnStatus" => policy.retry_on_status = parse_status_list(field)?,
            "retryOnNetworkError" => policy.retry_on_network_error = parse_bool("retry.retryOnNetworkError", field)?,
            _ => policy.jitter = parse_bool("retry.jitter", field)?,
        }
    }
    Ok(RetrySetting::Custom(policy))
}

fn parse_delay(value: &OptValue) -> Option<f64> {
    match value {
        OptValue::Number(n) if n.is_finite() && *n >= 0.0 => Some(*n),
        _ => None,
    }
}

fn parse_status_list(value: &OptValue) -> Result<Vec<u16>, OptionError> {
    const RULE: &str = "retry.retryOnStatus must be an array of integer HTTP statuses from 100 to 599";
    let OptValue::Array(items) = value else {
        return Err(invalid(RULE, value));
    };
    items
        .iter()
        .map(|item| match item {
            OptValue::Number(n) if n.fract() == 0.0 && (100.0..=599.0).contains(n) => Ok(*n as u16),
            _ => Err(invalid(RULE, value)),
        })
        .collect()
}

fn parse_breaker(value: &OptValue) -> Result<Option<BreakerConfig>, OptionError> {
    if matches!(value, OptValue::Null) {
        return Ok(None);
    }
    let fields = object_fields("circuitBreaker", value, &["threshold", "cooldownMs"])?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let threshold = field("threshold")
        .and_then(|v| parse_integer(v, 1))
        .ok_or_else(|| invalid("circuitBreaker.threshold must be an integer greater than or equal to 1", field("threshold").unwrap_or(&OptValue::Undefined)))?;
    let cooldown_ms = field("cooldownMs")
        .and_then(|v| parse_millis(v, false))
        .ok_or_else(|| invalid("circuitBreaker.cooldownMs must be a finite number greater than or equal to 0", field("cooldownMs").unwrap_or(&OptValue::Undefined)))?;
    Ok(Some(BreakerConfig { threshold, cooldown_ms }))
}

fn parse_budget(value: &OptValue) -> Result<Option<BudgetConfig>, OptionError> {
    if matches!(value, OptValue::Null) {
        return Ok(None);
    }
    let fields = object_fields("retryBudget", value, &["maxRetriesPerWindow", "windowMs"])?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let max_retries_per_window = field("maxRetriesPerWindow")
        .and_then(|v| parse_integer(v, 0))
        .ok_or_else(|| invalid("retryBudget.maxRetriesPerWindow must be an integer greater than or equal to 0", field("maxRetriesPerWindow").unwrap_or(&OptValue::Undefined)))?;
    let window_ms = field("windowMs")
        .and_then(|v| parse_millis(v, true))
        .ok_or_else(|| invalid("retryBudget.windowMs must be a finite number greater than 0", field("windowMs").unwrap_or(&OptValue::Undefined)))?;
    Ok(Some(BudgetConfig { max_retries_per_window, window_ms }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, OptValue)]) -> Result<PartialOptions, OptionError> {
        let mut options = PartialOptions::default();
        for (key, value) in pairs {
            assert!(options.parse_key(key, value)?, "{key} should be a transport key");
        }
        Ok(options)
    }

    fn obj(pairs: &[(&str, OptValue)]) -> OptValue {
        OptValue::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    #[test]
    fn defaults_match_the_documented_policy() {
        let resolved = PartialOptions::default().resolve(false);
        assert_eq!(resolved.timeout, Some(Duration::from_millis(30_000)));
        assert_eq!(resolved.retry, Some(RetryPolicy::default()));
        assert!(resolved.pace_with_rate_limit);
        assert_eq!(resolved.rate_limit_floor, 1);
        assert_eq!(resolved.circuit_breaker, None);
        assert_eq!(resolved.pool_bounds, None);
        assert!(resolved.hooks.is_empty());
        assert_eq!(resolved.max_response_bytes, 64 * 1024 * 1024);
    }

    #[test]
    fn writes_are_not_retried_unless_opted_in() {
        assert_eq!(PartialOptions::default().resolve(true).retry, None);
        let opted = parse(&[("retry", OptValue::Bool(true))]).unwrap();
        assert_eq!(opted.resolve(true).retry, Some(RetryPolicy::default()));
        let policy = parse(&[("retry", obj(&[("maxRetries", OptValue::Number(1.0))]))]).unwrap();
        assert_eq!(policy.resolve(true).retry.map(|p| p.max_retries), Some(1));
    }

    #[test]
    fn a_policy_object_overlays_the_defaults() {
        let options = parse(&[(
            "retry",
            obj(&[("maxRetries", OptValue::Number(5.0)), ("jitter", OptValue::Bool(false)), ("baseDelayMs", OptValue::Undefined)]),
        )])
        .unwrap();
        let policy = options.resolve(false).retry.unwrap();
        assert_eq!(policy.max_retries, 5);
        assert!(!policy.jitter);
        assert_eq!(policy.base_delay_ms, 250.0);
    }

    #[test]
    fn per_request_options_replace_slot_options_per_key() {
        let slot = parse(&[
            ("retry", obj(&[("maxRetries", OptValue::Number(5.0)), ("baseDelayMs", OptValue::Number(10.0))])),
            ("timeout", OptValue::Number(100.0)),
        ])
        .unwrap();
        let request = parse(&[("retry", obj(&[("maxRetries", OptValue::Number(1.0))]))]).unwrap();
        let resolved = slot.merged_with(&request).resolve(false);
        let policy = resolved.retry.unwrap();
        assert_eq!(policy.max_retries, 1);
        assert_eq!(policy.base_delay_ms, 250.0, "other knobs come from the built-in defaults");
        assert_eq!(resolved.timeout_ms, 100, "keys the request does not give stay");
    }

    #[test]
    fn an_explicit_undefined_restores_the_default() {
        let slot = parse(&[("timeout", OptValue::Number(100.0)), ("onError", OptValue::Function)]).unwrap();
        let request = parse(&[("timeout", OptValue::Undefined), ("onError", OptValue::Undefined)]).unwrap();
        let resolved = slot.merged_with(&request).resolve(false);
        assert_eq!(resolved.timeout_ms, DEFAULT_TIMEOUT_MS);
        assert!(!resolved.hooks.has(Hook::OnError));
    }

    #[test]
    fn socket_bounds_select_a_dedicated_pool() {
        let options = parse(&[("maxSockets", OptValue::Number(20.0))]).unwrap();
        assert_eq!(options.resolve(false).pool_bounds, Some(PoolBounds { max_sockets: 20, max_free_sockets: 5 }));
        let zero = parse(&[("maxSockets", OptValue::Number(0.0))]).unwrap();
        assert_eq!(zero.resolve(false).pool_bounds.map(|b| b.max_sockets), Some(1), "0 means 1 (D21)");
    }

    #[test]
    fn hooks_are_recorded_in_the_hook_set() {
        let options = parse(&[("onRetry", OptValue::Function), ("onPace", OptValue::Function)]).unwrap();
        let hooks = options.resolve(false).hooks;
        assert!(hooks.has(Hook::OnRetry) && hooks.has(Hook::OnPace));
        assert!(!hooks.has(Hook::OnError));
    }

    #[test]
    fn every_invalid_value_names_the_option_and_the_rule() {
        let cases: Vec<(&str, OptValue, &str)> = vec![
            ("timeout", OptValue::Number(-1.0), "timeout must be a finite number greater than or equal to 0 (received -1)."),
            ("timeout", OptValue::Number(f64::INFINITY), "timeout must be a finite number"),
            ("timeout", OptValue::String("5".into()), "(received \"5\")"),
            ("rateLimitFloor", OptValue::Number(1.5), "rateLimitFloor must be a finite, non-negative integer"),
            ("rateLimitFloor", OptValue::Number(-1.0), "rateLimitFloor must be"),
            ("retry", OptValue::String("yes".into()), "retry must be true, false or a retry policy object"),
            ("retry", obj(&[("maxRetries", OptValue::Number(-1.0))]), "retry.maxRetries must be an integer"),
            ("retry", obj(&[("maxRetries", OptValue::Number(1.5))]), "retry.maxRetries must be an integer"),
            ("retry", obj(&[("baseDelayMs", OptValue::Number(f64::NAN))]), "retry.baseDelayMs must be a finite number"),
            ("retry", obj(&[("retryOnStatus", OptValue::Array(vec![OptValue::Number(99.0)]))]), "retry.retryOnStatus must be an array"),
            ("retry", obj(&[("retryOnStatus", OptValue::Number(503.0))]), "retry.retryOnStatus must be an array"),
            ("retry", obj(&[("jitter", OptValue::String("no".into()))]), "retry.jitter must be a boolean"),
            ("retry", obj(&[("maxRetry", OptValue::Number(1.0))]), "Unknown key \"maxRetry\" in retry. Valid keys are: maxRetries"),
            ("circuitBreaker", obj(&[("threshold", OptValue::Number(0.0)), ("cooldownMs", OptValue::Number(1.0))]), "circuitBreaker.threshold must be an integer greater than or equal to 1"),
            ("circuitBreaker", obj(&[("threshold", OptValue::Number(2.0))]), "circuitBreaker.cooldownMs must be a finite number greater than or equal to 0 (received undefined)."),
            ("retryBudget", obj(&[("maxRetriesPerWindow", OptValue::Number(1.0)), ("windowMs", OptValue::Number(0.0))]), "retryBudget.windowMs must be a finite number greater than 0"),
            ("retryBudget", obj(&[("windowMs", OptValue::Number(10.0))]), "retryBudget.maxRetriesPerWindow must be an integer"),
            ("maxSockets", OptValue::Number(-1.0), "maxSockets must be an integer greater than or equal to 0 (0 means 1)"),
            ("maxSockets", OptValue::Number(0.5), "maxSockets must be an integer"),
            ("maxFreeSockets", OptValue::Number(-1.0), "maxFreeSockets must be an integer greater than or equal to 0"),
            ("diagnostics", OptValue::String("loud".into()), "Invalid diagnostics \"loud\": it must be one of \"warn\", \"hook\", or \"silent\"."),
            ("onError", OptValue::Bool(true), "onError must be a function"),
            ("onHookError", OptValue::Number(1.0), "onHookError must be a function"),
            ("signal", OptValue::Object(vec![]), "signal must be an AbortSignal"),
            ("paceWithRateLimit", OptValue::String("true".into()), "paceWithRateLimit must be a boolean"),
            ("timeout", OptValue::Null, "timeout must be a finite number"),
            ("responseCache", OptValue::Object(vec![]), "responseCache must be a ResponseCache instance (received an object)."),
            ("proxy", OptValue::Bool(true), "proxy must be false (no proxy) or an http:// proxy URL such as \"http://proxy.example:3128\" (received true)."),
            ("proxy", OptValue::String("socks5://u:pw@p:1".into()), "(received a string that is not one: only http:// proxies are supported)."),
            ("proxy", OptValue::Null, "proxy must be false"),
            ("maxResponseBytes", OptValue::Number(0.0), "maxResponseBytes must be an integer number of bytes greater than or equal to 1 (received 0)."),
            ("maxResponseBytes", OptValue::Number(1.5), "maxResponseBytes must be an integer"),
            ("maxResponseBytes", OptValue::Number(f64::INFINITY), "maxResponseBytes must be an integer"),
            ("maxResponseBytes", OptValue::String("1".into()), "maxResponseBytes must be an integer"),
        ];
        for (key, value, expected) in cases {
            let err = parse(&[(key, value.clone())]).expect_err(&format!("{key}: {value:?} should be rejected"));
            assert!(err.0.contains(expected), "{key}: {:?} lacks {expected:?}", err.0);
        }
    }

    #[test]
    fn null_turns_object_features_off() {
        let options = parse(&[("circuitBreaker", OptValue::Null), ("retryBudget", OptValue::Null)]).unwrap();
        let resolved = options.resolve(false);
        assert_eq!(resolved.circuit_breaker, None);
        assert_eq!(resolved.retry_budget, None);
    }

    #[test]
    fn a_response_cache_is_shared_by_reference_and_null_turns_it_off() {
        let cache = Arc::new(ResponseCache::new(Default::default()));
        let slot = parse(&[("responseCache", OptValue::ResponseCache(cache.clone()))]).unwrap();
        let resolved = slot.resolve(false);
        assert!(resolved.response_cache.as_ref().is_some_and(|c| Arc::ptr_eq(c, &cache)));
        assert!(!resolved.bypass_response_cache);
        let off = parse(&[("responseCache", OptValue::Null), ("bypassResponseCache", OptValue::Bool(true))]).unwrap();
        let merged = slot.merged_with(&off).resolve(false);
        assert!(merged.response_cache.is_none());
        assert!(merged.bypass_response_cache);
    }

    #[test]
    fn proxy_false_turns_the_environment_off_and_a_url_replaces_it() {
        assert_eq!(PartialOptions::default().resolve(false).proxy, None, "default: the environment");
        let off = parse(&[("proxy", OptValue::Bool(false))]).unwrap().resolve(false).proxy.unwrap();
        assert!(off.is_direct());
        let slot = parse(&[("proxy", OptValue::String("http://user:pw@p:3128".into()))]).unwrap();
        assert!(!slot.resolve(false).proxy.unwrap().is_direct());
        let request = parse(&[("proxy", OptValue::Undefined)]).unwrap();
        assert_eq!(slot.merged_with(&request).resolve(false).proxy, None, "undefined restores the environment");
    }

    #[test]
    fn a_bad_proxy_url_is_never_echoed() {
        let err = parse(&[("proxy", OptValue::String("https://user:hunter2@p:1".into()))]).unwrap_err();
        assert!(!err.0.contains("hunter2"), "{}", err.0);
    }

    #[test]
    fn unknown_keys_are_left_to_the_caller() {
        let mut options = PartialOptions::default();
        assert_eq!(options.parse_key("authToken", &OptValue::String("t".into())), Ok(false));
        assert_eq!(options.parse_key("timeout", &OptValue::Number(5.0)), Ok(true));
    }

    #[test]
    fn every_documented_key_is_understood() {
        for key in TRANSPORT_OPTION_KEYS {
            let mut options = PartialOptions::default();
            assert_eq!(options.parse_key(key, &OptValue::Undefined), Ok(true), "{key}");
        }
    }
}
