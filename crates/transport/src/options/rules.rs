//! The rule of each transport option (decisions D10): one parser per option, each with the
//! message that names the option, the rule and what was given. Every parser has the shape the
//! table calls, `(key, value) -> Result<T, OptionError>`; the value is never `undefined` (the
//! table handles that as "unset").

use std::sync::Arc;

use super::parse::{invalid, object_fields, parse_bool, parse_integer, parse_millis};
use super::settings::RetrySetting;
use super::value::{OptValue, OptionError};
use crate::admission::Ceiling;
use crate::breaker::BreakerConfig;
use crate::budget::BudgetConfig;
use crate::cache::ResponseCache;
use crate::policy::RetryPolicy;
use crate::proxy::{ProxyRules, ProxyServer};
use crate::shared_state::config::{
    RedisTarget, SharedStateConfig, DEFAULT_KEY_PREFIX, DEFAULT_LEASE_MS, DEFAULT_TIMEOUT_MS,
};

/// `exposeRawAxiosError`: only JavaScript reads it (it attaches the raw failure), but its rule
/// is checked here with every other option's, so the one message of D10 has one owner.
pub(super) fn checked_boolean(key: &str, value: &OptValue) -> Result<(), OptionError> {
    parse_bool(key, value).map(drop)
}

pub(super) fn signal(_: &str, value: &OptValue) -> Result<(), OptionError> {
    match value {
        OptValue::AbortSignal => Ok(()),
        other => Err(invalid("signal must be an AbortSignal", other)),
    }
}

pub(super) fn timeout(_: &str, value: &OptValue) -> Result<u64, OptionError> {
    parse_millis(value, false).ok_or_else(|| {
        invalid(
            "timeout must be a finite number greater than or equal to 0",
            value,
        )
    })
}

pub(super) fn rate_limit_floor(_: &str, value: &OptValue) -> Result<u32, OptionError> {
    parse_integer(value, 0).ok_or_else(|| {
        invalid(
            "rateLimitFloor must be a finite, non-negative integer (0 disables floor-based pacing)",
            value,
        )
    })
}

/// `degradedLimit` (decisions D42): `false` or `0` turn it off.
pub(super) fn degraded_limit(_: &str, value: &OptValue) -> Result<Option<u32>, OptionError> {
    if matches!(value, OptValue::Bool(false)) {
        return Ok(None);
    }
    parse_integer(value, 0)
        .map(|limit| (limit > 0).then_some(limit))
        .ok_or_else(|| {
            invalid(
                "degradedLimit must be an integer greater than or equal to 1 (the quota the upstream enforces while degraded), or false or 0 to turn it off",
                value,
            )
        })
}

/// 0 means 1, as the original normalises it (decisions D21).
pub(super) fn max_sockets(_: &str, value: &OptValue) -> Result<u32, OptionError> {
    parse_integer(value, 0).map(|n| n.max(1)).ok_or_else(|| {
        invalid(
            "maxSockets must be an integer greater than or equal to 0 (0 means 1)",
            value,
        )
    })
}

pub(super) fn max_free_sockets(_: &str, value: &OptValue) -> Result<u32, OptionError> {
    parse_integer(value, 0).ok_or_else(|| {
        invalid(
            "maxFreeSockets must be an integer greater than or equal to 0",
            value,
        )
    })
}

pub(super) fn max_redirects(_: &str, value: &OptValue) -> Result<u32, OptionError> {
    parse_integer(value, 0).ok_or_else(|| {
        invalid(
            "maxRedirects must be an integer greater than or equal to 0 (0 returns a redirect as its status error)",
            value,
        )
    })
}

/// `diagnostics`: JavaScript routes hook failures by it; the rule is checked here (see
/// [`checked_boolean`]).
pub(super) fn diagnostics(_: &str, value: &OptValue) -> Result<(), OptionError> {
    match value {
        OptValue::String(s) if matches!(s.as_str(), "warn" | "hook" | "silent") => Ok(()),
        other => Err(OptionError(format!(
            "Invalid diagnostics {}: it must be one of \"warn\", \"hook\", or \"silent\".",
            other.describe()
        ))),
    }
}

/// `responseCache`: a `ResponseCache` instance, or `null` to turn a slot's cache off for one
/// request.
pub(super) fn response_cache(
    _: &str,
    value: &OptValue,
) -> Result<Option<Arc<ResponseCache>>, OptionError> {
    const RULE: &str = "responseCache must be a ResponseCache instance";
    match value {
        OptValue::ResponseCache(native) => native
            .clone()
            .downcast::<ResponseCache>()
            .map(Some)
            .map_err(|_| invalid(RULE, value)),
        OptValue::Null => Ok(None),
        other => Err(invalid(RULE, other)),
    }
}

/// `proxy`: `false` ignores the environment, a URL string replaces it. The message describes
/// a bad URL without repeating it (it may carry a password: decisions D31).
pub(super) fn proxy(_: &str, value: &OptValue) -> Result<Arc<ProxyRules>, OptionError> {
    const RULE: &str = "proxy must be false (no proxy) or an http:// proxy URL such as \"http://proxy.example:3128\"";
    match value {
        OptValue::Bool(false) => Ok(Arc::new(ProxyRules::default())),
        OptValue::String(url) => match ProxyServer::parse(url) {
            Ok(server) => Ok(Arc::new(ProxyRules::fixed(Arc::new(server)))),
            Err(reason) => Err(OptionError(format!(
                "{RULE} (received a string that is not one: {reason})."
            ))),
        },
        other => Err(invalid(RULE, other)),
    }
}

/// `maxResponseBytes`: a whole number of bytes, at least 1 and exactly representable in JavaScript.
pub(super) fn byte_limit(_: &str, value: &OptValue) -> Result<u64, OptionError> {
    match value {
        OptValue::Number(n) if n.fract() == 0.0 && (1.0..=9_007_199_254_740_991.0).contains(n) => {
            Ok(*n as u64)
        }
        other => Err(invalid(
            "maxResponseBytes must be an integer number of bytes greater than or equal to 1",
            other,
        )),
    }
}

pub(super) fn retry(_: &str, value: &OptValue) -> Result<RetrySetting, OptionError> {
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
            return Err(invalid(
                "retry must be true, false or a retry policy object",
                other,
            ));
        }
    }
    let mut policy = RetryPolicy::default();
    for (key, field) in object_fields("retry", value, &KEYS)? {
        match key {
            "maxRetries" => {
                policy.max_retries = parse_integer(field, 0).ok_or_else(|| {
                    invalid(
                        "retry.maxRetries must be an integer greater than or equal to 0",
                        field,
                    )
                })?
            }
            "baseDelayMs" => {
                policy.base_delay_ms = parse_delay(field).ok_or_else(|| {
                    invalid(
                        "retry.baseDelayMs must be a finite number greater than or equal to 0",
                        field,
                    )
                })?
            }
            "maxDelayMs" => {
                policy.max_delay_ms = parse_delay(field).ok_or_else(|| {
                    invalid(
                        "retry.maxDelayMs must be a finite number greater than or equal to 0",
                        field,
                    )
                })?
            }
            "retryOnStatus" => policy.retry_on_status = parse_status_list(field)?,
            "retryOnNetworkError" => {
                policy.retry_on_network_error = parse_bool("retry.retryOnNetworkError", field)?
            }
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
    const RULE: &str =
        "retry.retryOnStatus must be an array of integer HTTP statuses from 100 to 599";
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

/// `circuitBreaker`: `{ threshold, cooldownMs }`, both required, or `null` for off.
pub(super) fn breaker(_: &str, value: &OptValue) -> Result<Option<BreakerConfig>, OptionError> {
    if matches!(value, OptValue::Null) {
        return Ok(None);
    }
    let fields = object_fields("circuitBreaker", value, &["threshold", "cooldownMs"])?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let threshold = field("threshold")
        .and_then(|v| parse_integer(v, 1))
        .ok_or_else(|| {
            invalid(
                "circuitBreaker.threshold must be an integer greater than or equal to 1",
                field("threshold").unwrap_or(&OptValue::Undefined),
            )
        })?;
    let cooldown_ms = field("cooldownMs")
        .and_then(|v| parse_millis(v, false))
        .ok_or_else(|| {
            invalid(
                "circuitBreaker.cooldownMs must be a finite number greater than or equal to 0",
                field("cooldownMs").unwrap_or(&OptValue::Undefined),
            )
        })?;
    Ok(Some(BreakerConfig {
        threshold,
        cooldown_ms,
    }))
}

/// `retryBudget`: `{ maxRetriesPerWindow, windowMs }`, both required, or `null` for off.
/// `rateLimit`: the client-side admission ceiling; `null` or `false` turns it off.
pub(super) fn rate_limit(_: &str, value: &OptValue) -> Result<Option<Ceiling>, OptionError> {
    if matches!(value, OptValue::Null | OptValue::Bool(false)) {
        return Ok(None);
    }
    let fields = object_fields("rateLimit", value, &["maxRequests", "windowMs"])?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let max_requests = field("maxRequests")
        .and_then(|v| parse_integer(v, 1))
        .ok_or_else(|| {
            invalid(
                "rateLimit.maxRequests must be an integer greater than 0",
                field("maxRequests").unwrap_or(&OptValue::Undefined),
            )
        })?;
    let window_ms = field("windowMs")
        .and_then(|v| parse_millis(v, true))
        .ok_or_else(|| {
            invalid(
                "rateLimit.windowMs must be a finite number greater than 0",
                field("windowMs").unwrap_or(&OptValue::Undefined),
            )
        })?;
    Ok(Some(Ceiling {
        max_requests,
        window_ms,
    }))
}

pub(super) fn budget(_: &str, value: &OptValue) -> Result<Option<BudgetConfig>, OptionError> {
    if matches!(value, OptValue::Null) {
        return Ok(None);
    }
    let fields = object_fields("retryBudget", value, &["maxRetriesPerWindow", "windowMs"])?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    let max_retries_per_window = field("maxRetriesPerWindow")
        .and_then(|v| parse_integer(v, 0))
        .ok_or_else(|| {
            invalid(
                "retryBudget.maxRetriesPerWindow must be an integer greater than or equal to 0",
                field("maxRetriesPerWindow").unwrap_or(&OptValue::Undefined),
            )
        })?;
    let window_ms = field("windowMs")
        .and_then(|v| parse_millis(v, true))
        .ok_or_else(|| {
            invalid(
                "retryBudget.windowMs must be a finite number greater than 0",
                field("windowMs").unwrap_or(&OptValue::Undefined),
            )
        })?;
    Ok(Some(BudgetConfig {
        max_retries_per_window,
        window_ms,
    }))
}

/// `sharedState`: `{ redis, keyPrefix?, timeoutMs?, leaseMs? }`, or `false`/`null` for off. A bad
/// URL is described without repeating it (it may carry a password: decisions D31).
pub(super) fn shared_state(
    _: &str,
    value: &OptValue,
) -> Result<Option<Arc<SharedStateConfig>>, OptionError> {
    const OBJECT_RULE: &str =
        "sharedState must be false, null or an object such as { redis: \"redis://127.0.0.1:6379\" }";
    match value {
        OptValue::Null | OptValue::Bool(false) => return Ok(None),
        // A string here is most likely the URL itself, password included: never echoed.
        OptValue::String(_) => {
            return Err(OptionError(format!("{OBJECT_RULE} (received a string).")))
        }
        OptValue::Object(_) => {}
        other => return Err(invalid(OBJECT_RULE, other)),
    }
    let fields = object_fields(
        "sharedState",
        value,
        &["redis", "keyPrefix", "timeoutMs", "leaseMs"],
    )?;
    let field = |name: &str| fields.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
    const URL_RULE: &str = "sharedState.redis must be a redis:// or rediss:// (TLS) [user:password@]host:port[/db] URL such as \"redis://127.0.0.1:6379\"";
    let redis = match field("redis") {
        Some(OptValue::String(url)) => RedisTarget::parse(url).map_err(|reason| {
            OptionError(format!(
                "{URL_RULE} (received a string that is not one: {reason})."
            ))
        })?,
        Some(other) => return Err(invalid(URL_RULE, other)),
        None => return Err(OptionError(format!("{URL_RULE} (received undefined)."))),
    };
    let key_prefix = match field("keyPrefix") {
        None => DEFAULT_KEY_PREFIX.to_string(),
        Some(OptValue::String(prefix))
            if !prefix.is_empty() && !prefix.contains(['{', '}']) && prefix.len() <= 128 =>
        {
            prefix.clone()
        }
        Some(other) => {
            return Err(invalid(
                "sharedState.keyPrefix must be a non-empty string of at most 128 characters without { or }",
                other,
            ))
        }
    };
    let millis = |name: &str, default: u64, rule: &str| match field(name) {
        None => Ok(default),
        Some(v) => parse_millis(v, true).ok_or_else(|| invalid(rule, v)),
    };
    let timeout_ms = millis(
        "timeoutMs",
        DEFAULT_TIMEOUT_MS,
        "sharedState.timeoutMs must be a finite number of milliseconds greater than 0",
    )?;
    let lease_ms = millis(
        "leaseMs",
        DEFAULT_LEASE_MS,
        "sharedState.leaseMs must be a finite number of milliseconds greater than 0",
    )?;
    Ok(Some(Arc::new(SharedStateConfig {
        redis,
        key_prefix,
        timeout_ms,
        lease_ms,
    })))
}
