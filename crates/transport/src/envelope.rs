//! Reading a 2xx GraphQL body: success, strict failure, or accepted partial data.
//!
//! AniList reports many failures inside HTTP 200 envelopes, so the breaker and the retry policy
//! need the upstream status an error entry carries (transport.md 1.9). The body is scanned with
//! borrowed raw values: only the envelope's skeleton is parsed here, and the result is handed on
//! as the exact JSON text of the value the caller receives, for JavaScript to parse once.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::error::TransportError;
use crate::rate_limit::RateLimitInfo;

#[derive(Debug, PartialEq)]
pub enum Envelope {
    /// The JSON text of the call's result.
    Success(String),
    /// `allowPartialData`: the result, and the error that still has to be reported and counted.
    Partial { result: String, error: TransportError },
    Failure(TransportError),
}

#[derive(Deserialize)]
struct Body<'a> {
    #[serde(borrow, default)]
    data: Option<&'a RawValue>,
    #[serde(borrow, default)]
    errors: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct ErrorEntry {
    #[serde(default)]
    message: serde_json::Value,
    #[serde(default)]
    status: serde_json::Value,
}

/// Classify a 2xx body. `None` when it is not JSON at all (decisions D11 makes that an API error).
pub fn classify(
    text: &str,
    allow_partial: bool,
    rate_limit: Option<RateLimitInfo>,
    content_type: Option<String>,
) -> Option<Envelope> {
    let Ok(body) = serde_json::from_str::<Body>(text) else {
        // Valid JSON that is not an envelope object has nothing to unwrap; anything else is not JSON.
        return serde_json::from_str::<&RawValue>(text).ok().map(|_| Envelope::Success(text.to_string()));
    };
    let roots = body.data.and_then(|d| serde_json::from_str::<HashMap<String, &RawValue>>(d.get()).ok());
    let result = || match &roots {
        Some(roots) if roots.len() == 1 => roots.values().next().map(|v| v.get().to_string()).unwrap_or_default(),
        _ => text.to_string(),
    };
    let entries: Vec<ErrorEntry> = match body.errors {
        Some(raw) => serde_json::from_str(raw.get()).unwrap_or_default(),
        None => Vec::new(),
    };
    if entries.is_empty() {
        return Some(Envelope::Success(result()));
    }
    let status = entries.iter().find_map(|e| upstream_status(&e.status)).unwrap_or(200);
    let messages: Vec<String> = entries
        .iter()
        .map(|e| match &e.message {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Null => "Unknown GraphQL error".to_string(),
            other => other.to_string(),
        })
        .collect();
    let error = TransportError::graphql(
        status,
        &messages,
        body.errors.map(|e| e.get().to_string()).unwrap_or_else(|| "[]".into()),
        body.data.map(|d| d.get().to_string()).unwrap_or_else(|| "null".into()),
        rate_limit,
        content_type,
    );
    let has_data = roots.as_ref().is_some_and(|r| r.values().any(|v| v.get() != "null"));
    if allow_partial && has_data {
        return Some(Envelope::Partial { result: result(), error });
    }
    Some(Envelope::Failure(error))
}

/// An entry's `status` when it is a number that can be an HTTP status (strings are skipped).
fn upstream_status(value: &serde_json::Value) -> Option<u16> {
    let n = value.as_f64()?;
    (n.fract() == 0.0 && (100.0..=599.0).contains(&n)).then_some(n as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn classify_strict(text: &str) -> Envelope {
        classify(text, false, None, None).expect("json")
    }

    #[test]
    fn a_single_root_is_unwrapped_to_its_exact_text() {
        assert_eq!(classify_strict(r#"{"data":{"Media":{"id":1,"t":"x"}}}"#), Envelope::Success(r#"{"id":1,"t":"x"}"#.into()));
        assert_eq!(classify_strict(r#"{"data":{"Media":null}}"#), Envelope::Success("null".into()));
    }

    #[test]
    fn several_roots_or_no_data_return_the_whole_body() {
        for body in [r#"{"data":{"a":1,"b":2}}"#, r#"{"data":{}}"#, r#"{"data":null}"#, r#"{"other":1}"#, "[1,2]", r#"{"errors":[]}"#] {
            assert_eq!(classify_strict(body), Envelope::Success(body.into()), "{body}");
        }
    }

    #[test]
    fn errors_fail_with_the_first_numeric_status() {
        let body = r#"{"data":null,"errors":[{"message":"a","status":"500"},{"message":"b","status":404}]}"#;
        let Envelope::Failure(error) = classify_strict(body) else { panic!("should fail") };
        assert_eq!(error.code, ErrorCode::GraphQl);
        assert_eq!(error.status, Some(404));
        assert_eq!(error.message, "The request failed with GraphQL errors: a; b");
        assert_eq!(error.graphql_data.as_deref(), Some("null"));
    }

    #[test]
    fn status_less_errors_report_200() {
        let Envelope::Failure(error) = classify_strict(r#"{"errors":[{"message":"bad field"}]}"#) else { panic!() };
        assert_eq!(error.status, Some(200));
    }

    #[test]
    fn partial_data_needs_the_opt_in_and_a_non_null_root() {
        let body = r#"{"data":{"Media":{"id":1}},"errors":[{"message":"m","status":503}]}"#;
        assert!(matches!(classify_strict(body), Envelope::Failure(_)));
        let Some(Envelope::Partial { result, error }) = classify(body, true, None, None) else { panic!() };
        assert_eq!(result, r#"{"id":1}"#);
        assert_eq!(error.status, Some(503));
        let null_root = r#"{"data":{"Media":null},"errors":[{"message":"m"}]}"#;
        assert!(matches!(classify(null_root, true, None, None), Some(Envelope::Failure(_))));
        let two_roots = r#"{"data":{"a":null,"b":{"id":2}},"errors":[{"message":"m"}]}"#;
        assert_eq!(classify(two_roots, true, None, None), Some(Envelope::Partial { result: two_roots.into(), error: match classify_strict(two_roots) { Envelope::Failure(e) => e, _ => panic!() } }));
    }

    #[test]
    fn non_json_is_not_an_envelope() {
        assert_eq!(classify("<html>oops</html>", false, None, None), None);
        assert_eq!(classify("", false, None, None), None);
    }
}
