//! Failures as plain objects for the JavaScript facade, which turns them into its error classes.

use serde_json::{json, Map, Value};

use anilink_transport::error::TransportError;
use anilink_transport::rate_limit::RateLimitInfo;

pub fn rate_limit_json(info: &RateLimitInfo) -> Value {
    json!({ "limit": info.limit, "remaining": info.remaining, "reset": info.reset })
}

/// Every field of the error that applies; absent ones are left out.
pub fn describe(error: &TransportError) -> Value {
    let mut out = Map::new();
    out.insert("code".into(), error.code.as_str().into());
    out.insert("message".into(), error.message.clone().into());
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            out.insert(key.into(), value);
        }
    };
    put("status", error.status.map(Value::from));
    put("body", error.body.clone().map(Value::from));
    put("rateLimit", error.rate_limit.as_ref().map(rate_limit_json));
    put("contentType", error.content_type.clone().map(Value::from));
    put("graphqlErrors", error.graphql_errors.clone().map(Value::from));
    put("graphqlData", error.graphql_data.clone().map(Value::from));
    put("timeoutMs", error.timeout_ms.map(Value::from));
    put("abortedDuringPacing", error.aborted_during_pacing.then_some(Value::Bool(true)));
    put("details", (!error.details.is_empty()).then(|| error.details.clone().into()));
    put("reason", error.reason.clone().map(Value::from));
    put("requestId", error.request_id.clone().map(Value::from));
    Value::Object(out)
}

/// An invalid option: the facade throws it as a `TypeError`.
pub fn type_error(message: impl Into<String>) -> Value {
    json!({ "code": "TYPE_ERROR", "message": message.into() })
}
