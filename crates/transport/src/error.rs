//! One error type for every failure the transport can report, with a stable string code.
//!
//! The binding turns it into the JavaScript class of the same code (`AniLinkApiError`, …), so
//! every field a JS error needs is here. Nothing in it may carry a secret: bodies come from the
//! upstream, messages are fixed texts, and `reason` describes sockets, never headers.

use crate::rate_limit::RateLimitInfo;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    Api,
    GraphQl,
    Rest,
    Network,
    Timeout,
    Aborted,
    CircuitOpen,
    Auth,
    Validation,
    Unknown,
}

impl ErrorCode {
    /// Every code, in the order the JavaScript `AniLinkErrorCodes` lists them.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::Api,
        ErrorCode::GraphQl,
        ErrorCode::Rest,
        ErrorCode::Network,
        ErrorCode::Timeout,
        ErrorCode::Aborted,
        ErrorCode::CircuitOpen,
        ErrorCode::Auth,
        ErrorCode::Validation,
        ErrorCode::Unknown,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorCode::Api => "API_ERROR",
            ErrorCode::GraphQl => "GRAPHQL_ERROR",
            ErrorCode::Rest => "REST_ERROR",
            ErrorCode::Network => "NETWORK_ERROR",
            ErrorCode::Timeout => "TIMEOUT_ERROR",
            ErrorCode::Aborted => "ABORTED_ERROR",
            ErrorCode::CircuitOpen => "CIRCUIT_OPEN_ERROR",
            ErrorCode::Auth => "AUTH_ERROR",
            ErrorCode::Validation => "VALIDATION_ERROR",
            ErrorCode::Unknown => "UNKNOWN_ERROR",
        }
    }
}

/// Which protocol answered, because it decides the class of an HTTP failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    GraphQl,
    Rest,
}

/// A failure, boxed: results travel through every await of the attempt loop, and a pointer
/// keeps those futures (one per request in flight) small.
#[derive(Clone, Debug, PartialEq)]
pub struct TransportError(Box<ErrorDetail>);

/// What a [`TransportError`] says; read and written through it (`error.status`, …).
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorDetail {
    pub code: ErrorCode,
    pub message: String,
    /// HTTP status, or the upstream status of a GraphQL envelope error (200 when it had none).
    pub status: Option<u16>,
    /// The failing response's body text; the binding hands JavaScript the parsed JSON when it parses.
    pub body: Option<String>,
    pub rate_limit: Option<RateLimitInfo>,
    pub content_type: Option<String>,
    /// GraphQL envelope errors: the raw JSON text of the `errors` array.
    pub graphql_errors: Option<String>,
    /// GraphQL envelope errors: the raw JSON text of `data` (null when absent).
    pub graphql_data: Option<String>,
    pub timeout_ms: Option<u64>,
    pub aborted_during_pacing: bool,
    /// Validation problems, one sentence each.
    pub details: Vec<String>,
    /// Socket-level description of a network failure (no secrets: never headers or bodies).
    pub reason: Option<String>,
    /// Set when the response body passed `maxResponseBytes` (this limit): a failure that says
    /// nothing about the upstream's health, so never retried and streak-neutral (D28).
    pub response_limit: Option<u64>,
    pub request_id: Option<String>,
}

/// The fixed messages and message templates of the failures, written here only: the binding
/// exports them, and the JavaScript error classes build the same texts from them when a caller
/// constructs an error itself. A template's `{name}` is replaced by [`fill`].
pub mod messages {
    pub const NETWORK: &str = "The request failed due to a network error.";
    pub const TIMEOUT: &str = "The request timed out.";
    pub const ABORTED: &str = "The request was cancelled.";
    pub const ABORTED_PACING: &str =
        "The request was cancelled while waiting for the rate-limit window to reset.";
    pub const ABORTED_ADMISSION: &str =
        "The request was cancelled while waiting to be admitted under the rate limit.";
    pub const UNKNOWN: &str = "The request failed.";
    pub const AUTH: &str = "This operation requires an authentication token. Create an instance of AniLink and pass the token as an argument.";
    /// [`AUTH`] naming the operation that needs the token.
    pub const AUTH_FOR_OPERATION: &str = "{auth} (operation: {operation})";
    pub const HTTP_STATUS: &str = "API request failed with status {status}.";
    /// An entry of a GraphQL `errors` list without a string `message`.
    pub const GRAPHQL_ENTRY: &str = "Unknown GraphQL error";
    /// `{messages}`: the entries' messages joined with "; ".
    pub const GRAPHQL: &str = "The request failed with GraphQL errors: {messages}";
    /// `{details}`: one problem per line.
    pub const VALIDATION: &str = "Request variables are invalid:\n{details}";
}

/// `template` with each `{name}` replaced by its value, in one pass (an inserted value is never
/// searched again); an unknown `{name}` stays as it is. `lib/errors.cjs` fills them the same way.
pub fn fill(template: &str, values: &[(&str, &str)]) -> String {
    let mut text = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        text.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let value = after.find('}').and_then(|close| {
            values
                .iter()
                .find(|(name, _)| *name == &after[..close])
                .map(|(_, value)| (close, value))
        });
        match value {
            Some((close, value)) => {
                text.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                text.push('{');
                rest = after;
            }
        }
    }
    text.push_str(rest);
    text
}

impl std::ops::Deref for TransportError {
    type Target = ErrorDetail;

    fn deref(&self) -> &ErrorDetail {
        &self.0
    }
}

impl std::ops::DerefMut for TransportError {
    fn deref_mut(&mut self) -> &mut ErrorDetail {
        &mut self.0
    }
}

impl From<ErrorDetail> for TransportError {
    fn from(detail: ErrorDetail) -> Self {
        Self(Box::new(detail))
    }
}

impl ErrorDetail {
    /// A failure of `code` with nothing else said (not even a message): the one place that
    /// lists every field empty. The binding builds its own failures (a `TypeError`) on it too.
    pub const fn blank(code: ErrorCode) -> Self {
        Self {
            code,
            message: String::new(),
            status: None,
            body: None,
            rate_limit: None,
            content_type: None,
            graphql_errors: None,
            graphql_data: None,
            timeout_ms: None,
            aborted_during_pacing: false,
            details: Vec::new(),
            reason: None,
            response_limit: None,
            request_id: None,
        }
    }

    fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            ..Self::blank(code)
        }
    }
}

impl TransportError {
    /// A non-2xx HTTP response: `AniLinkApiError` from a GraphQL endpoint, `AniLinkRestError` from REST.
    pub fn http_status(
        protocol: Protocol,
        status: u16,
        body: String,
        rate_limit: Option<RateLimitInfo>,
        content_type: Option<String>,
    ) -> Self {
        let code = match protocol {
            Protocol::GraphQl => ErrorCode::Api,
            Protocol::Rest => ErrorCode::Rest,
        };
        ErrorDetail {
            status: Some(status),
            body: Some(body),
            rate_limit,
            content_type,
            ..ErrorDetail::new(
                code,
                fill(messages::HTTP_STATUS, &[("status", &status.to_string())]),
            )
        }
        .into()
    }

    /// A 2xx GraphQL answer whose body is not JSON (decisions D11).
    pub fn unparseable_graphql_body(
        status: u16,
        body: String,
        rate_limit: Option<RateLimitInfo>,
        content_type: Option<String>,
    ) -> Self {
        Self::http_status(Protocol::GraphQl, status, body, rate_limit, content_type)
    }

    pub fn graphql(
        status: u16,
        entries: &[String],
        errors_json: String,
        data_json: String,
        rate_limit: Option<RateLimitInfo>,
        content_type: Option<String>,
    ) -> Self {
        ErrorDetail {
            status: Some(status),
            graphql_errors: Some(errors_json),
            graphql_data: Some(data_json),
            rate_limit,
            content_type,
            ..ErrorDetail::new(
                ErrorCode::GraphQl,
                fill(messages::GRAPHQL, &[("messages", &entries.join("; "))]),
            )
        }
        .into()
    }

    pub fn network(reason: String) -> Self {
        ErrorDetail {
            reason: Some(reason),
            ..ErrorDetail::new(ErrorCode::Network, messages::NETWORK)
        }
        .into()
    }

    /// The response body passed `maxResponseBytes` (decisions D28); reading stopped there.
    pub fn response_too_large(limit: u64) -> Self {
        let mut error = Self::network(format!(
            "the response body exceeds maxResponseBytes ({limit} bytes); raise maxResponseBytes to accept it"
        ));
        error.response_limit = Some(limit);
        error
    }

    pub fn timeout(timeout_ms: u64) -> Self {
        ErrorDetail {
            timeout_ms: (timeout_ms > 0).then_some(timeout_ms),
            ..ErrorDetail::new(ErrorCode::Timeout, messages::TIMEOUT)
        }
        .into()
    }

    pub fn aborted() -> Self {
        ErrorDetail::new(ErrorCode::Aborted, messages::ABORTED).into()
    }

    pub fn aborted_during_pacing() -> Self {
        ErrorDetail {
            aborted_during_pacing: true,
            ..ErrorDetail::new(ErrorCode::Aborted, messages::ABORTED_PACING)
        }
        .into()
    }

    /// Aborted while quota admission held the request (no pacing deadline: the quota left, a
    /// request in flight at a cold start, the `rateLimit` ceiling). Reported as a pacing wait
    /// is (`abortedDuringPacing`), with its own reason.
    pub fn aborted_during_admission() -> Self {
        ErrorDetail {
            aborted_during_pacing: true,
            ..ErrorDetail::new(ErrorCode::Aborted, messages::ABORTED_ADMISSION)
        }
        .into()
    }

    pub fn circuit_open(threshold: u32, probing: bool) -> Self {
        let message = if probing {
            format!("The request failed fast: the circuit breaker is probing the upstream after {threshold} consecutive failures. Retrying is possible once the probe settles.")
        } else {
            format!("The request failed fast: the circuit breaker is open after {threshold} consecutive failures. Retrying is possible after the cooldown elapses.")
        };
        ErrorDetail::new(ErrorCode::CircuitOpen, message).into()
    }

    pub fn auth(operation: Option<&str>) -> Self {
        let message = match operation {
            Some(name) => fill(
                messages::AUTH_FOR_OPERATION,
                &[("auth", messages::AUTH), ("operation", name)],
            ),
            None => messages::AUTH.to_string(),
        };
        ErrorDetail::new(ErrorCode::Auth, message).into()
    }

    pub fn validation(details: Vec<String>) -> Self {
        ErrorDetail {
            message: fill(messages::VALIDATION, &[("details", &details.join("\n"))]),
            details,
            ..ErrorDetail::new(ErrorCode::Validation, String::new())
        }
        .into()
    }

    /// Anything unexpected, including a caught panic: never retried, resets the breaker streak.
    pub fn unknown(reason: impl Into<String>) -> Self {
        ErrorDetail {
            reason: Some(reason.into()),
            ..ErrorDetail::new(ErrorCode::Unknown, messages::UNKNOWN)
        }
        .into()
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for TransportError {}

/// The full cause chain: hyper's own message omits the socket error behind it.
pub(crate) fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_failures_take_their_class_from_the_protocol() {
        let api = TransportError::http_status(Protocol::GraphQl, 503, "x".into(), None, None);
        let rest = TransportError::http_status(Protocol::Rest, 503, "x".into(), None, None);
        assert_eq!(api.code, ErrorCode::Api);
        assert_eq!(rest.code, ErrorCode::Rest);
        assert_eq!(api.message, "API request failed with status 503.");
    }

    #[test]
    fn graphql_message_joins_every_entry() {
        let e = TransportError::graphql(
            200,
            &["a".into(), "b".into()],
            "[]".into(),
            "null".into(),
            None,
            None,
        );
        assert_eq!(e.message, "The request failed with GraphQL errors: a; b");
    }

    #[test]
    fn validation_message_lists_details_on_lines() {
        let e = TransportError::validation(vec![
            "Unknown variable: x".into(),
            "Unknown variable: y".into(),
        ]);
        assert_eq!(
            e.message,
            "Request variables are invalid:\nUnknown variable: x\nUnknown variable: y"
        );
        assert_eq!(e.details.len(), 2);
    }

    #[test]
    fn circuit_messages_differ_between_open_and_probing() {
        assert!(TransportError::circuit_open(5, false)
            .message
            .contains("after the cooldown elapses"));
        assert!(TransportError::circuit_open(5, true)
            .message
            .contains("once the probe settles"));
    }

    #[test]
    fn auth_message_names_the_operation() {
        assert_eq!(TransportError::auth(None).message, messages::AUTH);
        assert_eq!(
            TransportError::auth(Some("query.viewer")).message,
            format!("{} (operation: query.viewer)", messages::AUTH)
        );
    }

    #[test]
    fn fill_replaces_every_placeholder_and_leaves_other_braces() {
        assert_eq!(
            fill("{a}-{b}-{a} {c} {", &[("a", "1"), ("b", "2")]),
            "1-2-1 {c} {"
        );
        assert_eq!(fill("{a}", &[("a", "{b}"), ("b", "no")]), "{b}");
    }

    #[test]
    fn an_error_is_one_pointer_wide() {
        assert_eq!(
            std::mem::size_of::<TransportError>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn timeout_reports_only_a_positive_budget() {
        assert_eq!(TransportError::timeout(30).timeout_ms, Some(30));
        assert_eq!(TransportError::timeout(0).timeout_ms, None);
    }
}
