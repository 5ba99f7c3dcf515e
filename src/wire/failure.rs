//! Failures as plain objects for the JavaScript facade, which turns them into its error classes.
//!
//! [`ErrorDescription`] is the one shape of a failure on the wire, whichever way it travels: as
//! an outbox message, inside a hook event, or thrown by a call that fails before dispatch.

use napi::bindgen_prelude::ToNapiValue;
use napi::{sys, Env, Error, Status};
use serde::Serialize;

use anilink_transport::error::{ErrorCode, ErrorDetail};
use anilink_transport::rate_limit::RateLimitInfo;

use crate::wire::typescript::wire_shape;

/// The code of an invalid option or argument, which the facade throws as a `TypeError`; the
/// other codes are the transport's [`ErrorCode`](anilink_transport::error::ErrorCode)s.
pub const TYPE_ERROR: &str = "TYPE_ERROR";

wire_shape! {
    /// The upstream's quota from `x-ratelimit-*` headers; `reset` is Unix epoch seconds.
    #[derive(Clone, Serialize)]
    pub struct RateLimit as "RateLimitInfo" {
        limit: f64,
        remaining: f64,
        reset: f64,
    }
}

impl From<&RateLimitInfo> for RateLimit {
    fn from(info: &RateLimitInfo) -> Self {
        Self {
            limit: info.limit,
            remaining: info.remaining,
            reset: info.reset,
        }
    }
}

wire_shape! {
    /// Every field of a failure that applies; absent ones are left out. Bodies, GraphQL `errors`
    /// and `data` stay JSON text: the facade parses them when it builds the error.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ErrorDescription<'a> {
        pub code: &'static str as "WireErrorCode",
        pub message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub status: Option<u16>,
        /// The response body, as text.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub body: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub rate_limit: Option<RateLimit>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub content_type: Option<&'a str>,
        /// The envelope's `errors`, as JSON text.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub graphql_errors: Option<&'a str>,
        /// The envelope's `data`, as JSON text.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub graphql_data: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub timeout_ms: Option<u64>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub aborted_during_pacing: bool as "true",
        #[serde(skip_serializing_if = "<[String]>::is_empty")]
        pub details: &'a [String],
        /// Socket-level description of a network failure (never secrets).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub reason: Option<&'a str>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub request_id: Option<&'a str>,
    }
}

impl<'a> ErrorDescription<'a> {
    pub fn of(error: &'a ErrorDetail) -> Self {
        Self {
            code: error.code.as_str(),
            message: &error.message,
            status: error.status,
            body: error.body.as_deref(),
            rate_limit: error.rate_limit.as_ref().map(RateLimit::from),
            content_type: error.content_type.as_deref(),
            graphql_errors: error.graphql_errors.as_deref(),
            graphql_data: error.graphql_data.as_deref(),
            timeout_ms: error.timeout_ms,
            aborted_during_pacing: error.aborted_during_pacing,
            details: &error.details,
            reason: error.reason.as_deref(),
            request_id: error.request_id.as_deref(),
        }
    }

    /// An invalid option: the facade throws it as a `TypeError`, with no other field.
    pub fn type_error(message: &'a str) -> Self {
        static NOTHING_ELSE: ErrorDetail = ErrorDetail::blank(ErrorCode::Unknown);
        Self {
            code: TYPE_ERROR,
            message,
            ..Self::of(&NOTHING_ELSE)
        }
    }
}

/// The declarations of this module's shapes, for the generated typings.
#[cfg(test)]
pub fn declarations() -> Vec<String> {
    use crate::wire::typescript::WireShape;
    vec![RateLimit::declaration(), ErrorDescription::declaration()]
}

/// Fail the current napi call with `description` as the thrown value: the one path by which a
/// call that fails before dispatch (invalid variables, options or arguments) reaches the facade,
/// which rejects the call's promise with the matching error class.
pub fn throw(env: &Env, description: &ErrorDescription<'_>) -> Error {
    // Through JSON's value model, as the outbox delivers descriptions: every number a number.
    let value = match serde_json::to_value(description) {
        Ok(value) => value,
        Err(error) => return Error::from_reason(error.to_string()),
    };
    // SAFETY: called on the JavaScript thread, inside the napi call that `env` belongs to.
    match unsafe { serde_json::Value::to_napi_value(env.raw(), value) } {
        Ok(raw) => {
            unsafe { sys::napi_throw(env.raw(), raw) };
            Error::new(Status::PendingException, description.message.to_string())
        }
        Err(error) => error,
    }
}
