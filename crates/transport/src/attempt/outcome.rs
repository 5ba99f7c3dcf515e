//! What one attempt's exchange amounts to: a result, or a failure classified twice, once for
//! the retry policy ([`FailureClass`]) and once for the breaker ([`Outcome`]). Pure: it emits
//! nothing and touches no shared state, so the loop decides when each consequence happens.

use std::borrow::Cow;

use http::HeaderMap;

use crate::breaker::Outcome;
use crate::envelope::{self, Envelope};
use crate::error::{ErrorCode, TransportError};
use crate::exchange::RawResponse;
use crate::policy::FailureClass;
use crate::rate_limit::{QuotaHeaders, RateLimitInfo};
use crate::request::{RequestSpec, ResultShape};
use crate::retry_after;

use super::result::{CallResult, ResultText};

/// A failed attempt with what the breaker and the retry policy need to know about it.
pub(super) struct Failure {
    pub error: TransportError,
    pub class: FailureClass,
    pub outcome: Outcome,
    pub answer: FailedAnswer,
}

/// What `onResponse` says about a failed attempt.
pub(super) enum FailedAnswer {
    /// A strict GraphQL envelope failure: reported as the response it came in, with its quota
    /// and the cache's miss (transport.md 1.3 step 7).
    Envelope(Option<RateLimitInfo>),
    /// Any other failure: reported without quota (transport.md 1.3 step 8.1; the error has it).
    Bare,
}

pub(super) enum Settled {
    Success {
        result: CallResult,
        partial: Option<TransportError>,
        rate_limit: Option<RateLimitInfo>,
    },
    Failed(Failure),
}

/// U+FEFF in UTF-8.
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Classify what the exchange produced. `quota` is what its headers report (read once, by the
/// caller, which admission needs too); `now_ms` (wall clock) is read only by failures that
/// carry a server-directed wait.
pub(super) fn settle(
    dispatched: Result<RawResponse, TransportError>,
    quota: Option<QuotaHeaders>,
    spec: &RequestSpec,
    allow_partial_data: bool,
    now_ms: impl Fn() -> u64,
) -> Settled {
    let response = match dispatched {
        Ok(response) => response,
        Err(error) => {
            let (class, outcome) = match error.code {
                // Our own limit, not the upstream's health (D28).
                ErrorCode::Network if error.response_limit.is_some() => {
                    (FailureClass::Fatal, Outcome::Neutral)
                }
                ErrorCode::Network => (FailureClass::Network, Outcome::Availability),
                ErrorCode::Timeout => (FailureClass::Timeout, Outcome::Availability),
                ErrorCode::Aborted => (FailureClass::Aborted, Outcome::Reachability),
                _ => (FailureClass::Fatal, Outcome::Reachability),
            };
            return Settled::Failed(Failure {
                error,
                class,
                outcome,
                answer: FailedAnswer::Bare,
            });
        }
    };
    // Pacing and the retry decision need the whole triple: a partial one is treated as absent.
    let rate_limit = quota.and_then(RateLimitInfo::complete);
    // Both only borrowed: a success copies nothing but its result, a failure what it keeps.
    let content_type = header(&response.headers, http::header::CONTENT_TYPE);
    // A leading byte order mark is dropped, as axios (the original's client) drops it before
    // parsing. Valid UTF-8 is checked word by word; only a body that is not takes the lossy path.
    let body = response
        .body
        .strip_prefix(UTF8_BOM)
        .unwrap_or(&response.body);
    let text = match std::str::from_utf8(body) {
        Ok(valid) => Cow::Borrowed(valid),
        Err(_) => String::from_utf8_lossy(body),
    };
    let status = response.status;
    if !(200..300).contains(&status) {
        let server_wait_ms = retry_after::server_directed_wait_ms(
            status,
            header(&response.headers, http::header::RETRY_AFTER),
            rate_limit.as_ref(),
            now_ms(),
        );
        let error = TransportError::http_status(
            spec.protocol,
            status,
            text.into_owned(),
            rate_limit,
            content_type.map(str::to_string),
        );
        return Settled::Failed(Failure {
            error,
            class: FailureClass::Status {
                status,
                server_wait_ms,
            },
            outcome: status_outcome(status),
            answer: FailedAnswer::Bare,
        });
    }
    match spec.shape {
        ResultShape::Nothing => {
            return Settled::Success {
                result: None,
                partial: None,
                rate_limit,
            }
        }
        ResultShape::Rest => {
            return Settled::Success {
                result: rest_result(text.into_owned()),
                partial: None,
                rate_limit,
            }
        }
        ResultShape::GraphQl => {}
    }
    match envelope::classify(&text, allow_partial_data, rate_limit, content_type) {
        Some(Envelope::Success(result)) => Settled::Success {
            result: Some(ResultText::Fresh(result)),
            partial: None,
            rate_limit,
        },
        Some(Envelope::Partial { result, error }) => Settled::Success {
            result: Some(ResultText::Fresh(result)),
            partial: Some(error),
            rate_limit,
        },
        Some(Envelope::Failure(error)) => {
            let (class, outcome) = envelope_classes(&error, now_ms());
            Settled::Failed(Failure {
                error,
                class,
                outcome,
                answer: FailedAnswer::Envelope(rate_limit),
            })
        }
        None => Settled::Failed(Failure {
            error: TransportError::unparseable_graphql_body(
                status,
                text.into_owned(),
                rate_limit,
                content_type.map(str::to_string),
            ),
            class: FailureClass::Fatal,
            outcome: Outcome::Neutral,
            answer: FailedAnswer::Bare,
        }),
    }
}

/// Availability failures (429, 5xx) advance the breaker's streak; other answers prove the
/// upstream is reachable.
fn status_outcome(status: u16) -> Outcome {
    if status == 429 || status >= 500 {
        Outcome::Availability
    } else {
        Outcome::Reachability
    }
}

/// A GraphQL envelope error: without an upstream status it is a query bug, neutral for the
/// breaker and never retried; with one it counts like the HTTP status it carries.
pub(super) fn envelope_classes(error: &TransportError, now_ms: u64) -> (FailureClass, Outcome) {
    match error.status {
        Some(status) if status != 200 => {
            let server_wait_ms = retry_after::server_directed_wait_ms(
                status,
                None,
                error.rate_limit.as_ref(),
                now_ms,
            );
            (
                FailureClass::Status {
                    status,
                    server_wait_ms,
                },
                status_outcome(status),
            )
        }
        _ => (FailureClass::StatuslessEnvelope, Outcome::Neutral),
    }
}

/// A REST body as the result: JSON as it is, any other text as a JSON string (the body
/// verbatim, transport.md 1.9), nothing for an empty body (decisions D11).
fn rest_result(text: String) -> CallResult {
    if text.trim().is_empty() {
        return None;
    }
    if envelope::is_json(&text) {
        return Some(ResultText::Fresh(text));
    }
    serde_json::to_string(&text).ok().map(ResultText::Fresh)
}

fn header(headers: &HeaderMap, name: http::header::HeaderName) -> Option<&str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rest_bodies_become_json_text() {
        assert_eq!(
            rest_result(r#"{"a":1}"#.into()).as_deref(),
            Some(r#"{"a":1}"#)
        );
        assert_eq!(
            rest_result("plain text".into()).as_deref(),
            Some(r#""plain text""#)
        );
        assert_eq!(rest_result("  \n".into()), None);
    }

    #[test]
    fn statuses_split_into_availability_and_reachability() {
        assert_eq!(status_outcome(429), Outcome::Availability);
        assert_eq!(status_outcome(503), Outcome::Availability);
        assert_eq!(status_outcome(404), Outcome::Reachability);
    }
}
