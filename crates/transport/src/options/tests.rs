//! The option table's behaviour: defaults, merging, unsetting, and every D10 message.

use std::sync::Arc;
use std::time::Duration;

use super::settings::DEFAULT_TIMEOUT_MS;
use super::*;
use crate::cache::ResponseCache;
use crate::policy::RetryPolicy;

fn parse(pairs: &[(&str, OptValue)]) -> Result<PartialOptions, OptionError> {
    let mut options = PartialOptions::default();
    for (key, value) in pairs {
        assert!(
            options.parse_key(key, value)?,
            "{key} should be a transport key"
        );
    }
    Ok(options)
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
    assert_eq!(resolved.max_redirects, 5);
    let off = parse(&[("maxRedirects", OptValue::Number(0.0))]).unwrap();
    assert_eq!(off.resolve(false).max_redirects, 0);
}

#[test]
fn writes_are_not_retried_unless_opted_in() {
    assert_eq!(PartialOptions::default().resolve(true).retry, None);
    let opted = parse(&[("retry", OptValue::Bool(true))]).unwrap();
    assert_eq!(opted.resolve(true).retry, Some(RetryPolicy::default()));
    let policy = parse(&[(
        "retry",
        OptValue::object(&[("maxRetries", OptValue::Number(1.0))]),
    )])
    .unwrap();
    assert_eq!(policy.resolve(true).retry.map(|p| p.max_retries), Some(1));
}

#[test]
fn a_policy_object_overlays_the_defaults() {
    let options = parse(&[(
        "retry",
        OptValue::object(&[
            ("maxRetries", OptValue::Number(5.0)),
            ("jitter", OptValue::Bool(false)),
            ("baseDelayMs", OptValue::Undefined),
        ]),
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
        (
            "retry",
            OptValue::object(&[
                ("maxRetries", OptValue::Number(5.0)),
                ("baseDelayMs", OptValue::Number(10.0)),
            ]),
        ),
        ("timeout", OptValue::Number(100.0)),
    ])
    .unwrap();
    let request = parse(&[(
        "retry",
        OptValue::object(&[("maxRetries", OptValue::Number(1.0))]),
    )])
    .unwrap();
    let resolved = slot.merged_with(&request).resolve(false);
    let policy = resolved.retry.unwrap();
    assert_eq!(policy.max_retries, 1);
    assert_eq!(
        policy.base_delay_ms, 250.0,
        "other knobs come from the built-in defaults"
    );
    assert_eq!(
        resolved.timeout,
        Some(Duration::from_millis(100)),
        "keys the request does not give stay"
    );
}

#[test]
fn an_explicit_undefined_restores_the_default() {
    let slot = parse(&[
        ("timeout", OptValue::Number(100.0)),
        ("onError", OptValue::Function),
    ])
    .unwrap();
    let request = parse(&[
        ("timeout", OptValue::Undefined),
        ("onError", OptValue::Undefined),
    ])
    .unwrap();
    let resolved = slot.merged_with(&request).resolve(false);
    assert_eq!(
        resolved.timeout,
        Some(Duration::from_millis(DEFAULT_TIMEOUT_MS))
    );
    assert!(!resolved.hooks.has(Hook::OnError));
}

#[test]
fn socket_bounds_select_a_dedicated_pool() {
    let options = parse(&[("maxSockets", OptValue::Number(20.0))]).unwrap();
    assert_eq!(
        options.resolve(false).pool_bounds,
        Some(PoolBounds {
            max_sockets: 20,
            max_free_sockets: 5
        })
    );
    let zero = parse(&[("maxSockets", OptValue::Number(0.0))]).unwrap();
    assert_eq!(
        zero.resolve(false).pool_bounds.map(|b| b.max_sockets),
        Some(1),
        "0 means 1 (D21)"
    );
}

#[test]
fn hooks_are_recorded_in_the_hook_set() {
    let options = parse(&[
        ("onRetry", OptValue::Function),
        ("onPace", OptValue::Function),
    ])
    .unwrap();
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
        ("degradedLimit", OptValue::Number(2.5), "degradedLimit must be an integer greater than or equal to 1 (the quota the upstream enforces while degraded), or false or 0 to turn it off (received 2.5)."),
        ("degradedLimit", OptValue::Bool(true), "degradedLimit must be an integer greater than or equal to 1"),
        ("degradedLimit", OptValue::Null, "(received null)."),
        ("retry", OptValue::String("yes".into()), "retry must be true, false or a retry policy object"),
        ("retry", OptValue::object(&[("maxRetries", OptValue::Number(-1.0))]), "retry.maxRetries must be an integer"),
        ("retry", OptValue::object(&[("maxRetries", OptValue::Number(1.5))]), "retry.maxRetries must be an integer"),
        ("retry", OptValue::object(&[("baseDelayMs", OptValue::Number(f64::NAN))]), "retry.baseDelayMs must be a finite number"),
        ("retry", OptValue::object(&[("retryOnStatus", OptValue::Array(vec![OptValue::Number(99.0)]))]), "retry.retryOnStatus must be an array"),
        ("retry", OptValue::object(&[("retryOnStatus", OptValue::Number(503.0))]), "retry.retryOnStatus must be an array"),
        ("retry", OptValue::object(&[("jitter", OptValue::String("no".into()))]), "retry.jitter must be a boolean"),
        ("retry", OptValue::object(&[("maxRetry", OptValue::Number(1.0))]), "Unknown key \"maxRetry\" in retry. Valid keys are: maxRetries"),
        ("circuitBreaker", OptValue::object(&[("threshold", OptValue::Number(0.0)), ("cooldownMs", OptValue::Number(1.0))]), "circuitBreaker.threshold must be an integer greater than or equal to 1"),
        ("circuitBreaker", OptValue::object(&[("threshold", OptValue::Number(2.0))]), "circuitBreaker.cooldownMs must be a finite number greater than or equal to 0 (received undefined)."),
        ("retryBudget", OptValue::object(&[("maxRetriesPerWindow", OptValue::Number(1.0)), ("windowMs", OptValue::Number(0.0))]), "retryBudget.windowMs must be a finite number greater than 0"),
        ("retryBudget", OptValue::object(&[("windowMs", OptValue::Number(10.0))]), "retryBudget.maxRetriesPerWindow must be an integer"),
        ("rateLimit", OptValue::object(&[("maxRequests", OptValue::Number(0.0)), ("windowMs", OptValue::Number(1.0))]), "rateLimit.maxRequests must be an integer greater than 0 (received 0)."),
        ("rateLimit", OptValue::object(&[("maxRequests", OptValue::Number(85.0))]), "rateLimit.windowMs must be a finite number greater than 0 (received undefined)."),
        ("rateLimit", OptValue::object(&[("maxRequests", OptValue::Number(1.0)), ("windowMs", OptValue::Number(1.0)), ("burst", OptValue::Number(1.0))]), "Unknown key \"burst\" in rateLimit."),
        ("rateLimit", OptValue::Bool(true), "rateLimit must be an object"),
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
        ("maxRedirects", OptValue::Number(-1.0), "maxRedirects must be an integer greater than or equal to 0 (0 returns a redirect as its status error) (received -1)."),
        ("maxRedirects", OptValue::Number(2.5), "maxRedirects must be an integer"),
        ("maxRedirects", OptValue::Number(f64::NAN), "maxRedirects must be an integer"),
        ("maxRedirects", OptValue::Bool(true), "maxRedirects must be an integer"),
        ("maxRedirects", OptValue::Null, "maxRedirects must be an integer"),
    ];
    for (key, value, expected) in cases {
        let err = parse(&[(key, value.clone())])
            .expect_err(&format!("{key}: {value:?} should be rejected"));
        assert!(
            err.0.contains(expected),
            "{key}: {:?} lacks {expected:?}",
            err.0
        );
    }
}

#[test]
fn null_turns_object_features_off() {
    let options = parse(&[
        ("circuitBreaker", OptValue::Null),
        ("retryBudget", OptValue::Null),
        ("rateLimit", OptValue::Null),
    ])
    .unwrap();
    let resolved = options.resolve(false);
    assert_eq!(resolved.circuit_breaker, None);
    assert_eq!(resolved.retry_budget, None);
    assert_eq!(resolved.rate_limit, None);
    let off = parse(&[("rateLimit", OptValue::Bool(false))]).unwrap();
    assert_eq!(off.resolve(false).rate_limit, None);
    let on = parse(&[(
        "rateLimit",
        OptValue::object(&[
            ("maxRequests", OptValue::Number(85.0)),
            ("windowMs", OptValue::Number(60_000.0)),
        ]),
    )])
    .unwrap();
    assert_eq!(
        on.resolve(false).rate_limit,
        Some(crate::admission::Ceiling {
            max_requests: 85,
            window_ms: 60_000
        })
    );
}

#[test]
fn a_response_cache_is_shared_by_reference_and_null_turns_it_off() {
    let cache = Arc::new(ResponseCache::new(Default::default()));
    let slot = parse(&[("responseCache", OptValue::ResponseCache(cache.clone()))]).unwrap();
    let resolved = slot.resolve(false);
    assert!(resolved
        .response_cache
        .as_ref()
        .is_some_and(|c| Arc::ptr_eq(c, &cache)));
    assert!(!resolved.bypass_response_cache);
    let off = parse(&[
        ("responseCache", OptValue::Null),
        ("bypassResponseCache", OptValue::Bool(true)),
    ])
    .unwrap();
    let merged = slot.merged_with(&off).resolve(false);
    assert!(merged.response_cache.is_none());
    assert!(merged.bypass_response_cache);
}

#[test]
fn proxy_false_turns_the_environment_off_and_a_url_replaces_it() {
    assert_eq!(
        PartialOptions::default().resolve(false).proxy,
        None,
        "default: the environment"
    );
    let off = parse(&[("proxy", OptValue::Bool(false))])
        .unwrap()
        .resolve(false)
        .proxy
        .unwrap();
    assert!(off.is_direct());
    let slot = parse(&[("proxy", OptValue::String("http://user:pw@p:3128".into()))]).unwrap();
    assert!(!slot.resolve(false).proxy.unwrap().is_direct());
    let request = parse(&[("proxy", OptValue::Undefined)]).unwrap();
    assert_eq!(
        slot.merged_with(&request).resolve(false).proxy,
        None,
        "undefined restores the environment"
    );
}

#[test]
fn a_bad_proxy_url_is_never_echoed() {
    let err = parse(&[("proxy", OptValue::String("https://user:hunter2@p:1".into()))]).unwrap_err();
    assert!(!err.0.contains("hunter2"), "{}", err.0);
}

#[test]
fn unknown_keys_are_left_to_the_caller() {
    let mut options = PartialOptions::default();
    assert_eq!(
        options.parse_key("authToken", &OptValue::String("t".into())),
        Ok(false)
    );
    assert_eq!(
        options.parse_key("timeout", &OptValue::Number(5.0)),
        Ok(true)
    );
}

#[test]
fn every_documented_key_is_understood() {
    for key in TRANSPORT_OPTION_KEYS {
        let mut options = PartialOptions::default();
        assert_eq!(
            options.parse_key(key, &OptValue::Undefined),
            Ok(true),
            "{key}"
        );
    }
}

#[test]
fn the_key_list_keeps_the_original_order_then_ours() {
    let expected = [
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
        "rateLimit",
        "coalesce",
        "maxRedirects",
        "sharedState",
        "degradedLimit",
    ];
    assert_eq!(TRANSPORT_OPTION_KEYS, expected.as_slice());
}

#[test]
fn options_only_javascript_reads_are_still_validated_here() {
    for mode in ["warn", "hook", "silent"] {
        assert!(
            parse(&[("diagnostics", OptValue::String(mode.into()))]).is_ok(),
            "{mode}"
        );
    }
    assert!(parse(&[
        ("exposeRawAxiosError", OptValue::Bool(true)),
        ("onHookError", OptValue::Function)
    ])
    .is_ok());
    let err = parse(&[("exposeRawAxiosError", OptValue::Number(1.0))]).unwrap_err();
    assert_eq!(err.0, "exposeRawAxiosError must be a boolean (received 1).");
}

#[test]
fn a_native_object_that_is_not_a_response_cache_is_rejected() {
    let err = parse(&[("responseCache", OptValue::ResponseCache(Arc::new(7_u8)))]).unwrap_err();
    assert!(
        err.0
            .starts_with("responseCache must be a ResponseCache instance"),
        "{}",
        err.0
    );
}

#[test]
fn shared_state_parses_with_defaults_and_is_off_by_false_or_null() {
    let options = parse(&[(
        "sharedState",
        OptValue::object(&[("redis", OptValue::String("redis://127.0.0.1:6399".into()))]),
    )])
    .unwrap();
    let config = options.resolve(false).shared_state.expect("configured");
    assert_eq!(config.redis.address(), "127.0.0.1:6399");
    assert_eq!(config.key_prefix, "anilink");
    assert_eq!((config.timeout_ms, config.lease_ms), (1_000, 60_000));
    for off in [OptValue::Bool(false), OptValue::Null] {
        let options = parse(&[("sharedState", off)]).unwrap();
        assert_eq!(options.resolve(false).shared_state, None);
    }
}

#[test]
fn shared_state_rejects_bad_values_without_echoing_a_password() {
    let secret_url = OptValue::String("rediss://user:hunter2@h:1/db".into());
    let cases = [
        (
            OptValue::object(&[("redis", secret_url)]),
            "database number",
        ),
        (
            OptValue::object(&[("redis", OptValue::String("redis://u:hunter2@h:0".into()))]),
            "port",
        ),
        (
            OptValue::object(&[]),
            "sharedState.redis must be a redis://",
        ),
        (
            OptValue::object(&[
                ("redis", OptValue::String("redis://h".into())),
                ("timeoutMs", OptValue::Number(0.0)),
            ]),
            "sharedState.timeoutMs must be",
        ),
        (
            OptValue::object(&[
                ("redis", OptValue::String("redis://h".into())),
                ("leaseMs", OptValue::Number(f64::NAN)),
            ]),
            "sharedState.leaseMs must be",
        ),
        (
            OptValue::object(&[
                ("redis", OptValue::String("redis://h".into())),
                ("keyPrefix", OptValue::String("a{b}".into())),
            ]),
            "sharedState.keyPrefix must be",
        ),
        (
            OptValue::object(&[
                ("redis", OptValue::String("redis://h".into())),
                ("host", OptValue::String("x".into())),
            ]),
            "Unknown key \"host\" in sharedState",
        ),
        (
            OptValue::Bool(true),
            "sharedState must be false, null or an object",
        ),
        (
            OptValue::String("redis://u:hunter2@h".into()),
            "sharedState must be false, null or an object",
        ),
    ];
    for (value, expected) in cases {
        let message = parse(&[("sharedState", value)]).unwrap_err().0;
        assert!(message.contains(expected), "{message}");
        assert!(!message.contains("hunter2"), "{message}");
    }
}

#[test]
fn shared_state_is_refused_per_request() {
    let mut options = PartialOptions::default();
    let value = OptValue::object(&[("redis", OptValue::String("redis://h".into()))]);
    let message = options
        .parse_request_key("sharedState", &value)
        .unwrap_err()
        .0;
    assert!(
        message.contains("sharedState is a slot option"),
        "{message}"
    );
    assert!(options
        .parse_request_key("sharedState", &OptValue::Undefined)
        .unwrap());
    assert!(options
        .parse_request_key("timeout", &OptValue::Number(5.0))
        .unwrap());
}

#[test]
fn degraded_limit_is_a_slot_option_turned_off_by_false_or_0() {
    let limit = parse(&[("degradedLimit", OptValue::Number(30.0))]).unwrap();
    assert_eq!(limit.resolve(false).degraded_limit, Some(30));
    for off in [OptValue::Bool(false), OptValue::Number(0.0)] {
        let options = parse(&[("degradedLimit", off)]).unwrap();
        assert_eq!(options.resolve(false).degraded_limit, None);
    }
    assert_eq!(
        PartialOptions::default().resolve(false).degraded_limit,
        None
    );
    let message = PartialOptions::default()
        .parse_request_key("degradedLimit", &OptValue::Number(30.0))
        .unwrap_err()
        .0;
    assert!(
        message.starts_with("degradedLimit is a slot option and cannot be given per request"),
        "{message}"
    );
}
