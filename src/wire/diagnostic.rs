//! The diagnostic records: the shape of every one (typed as `AniLinkDiagnostic`), and the
//! shared-state ones, which the binding builds (the facade builds the others).

use serde::Serialize;

use anilink_transport::events::Context;
use anilink_transport::shared_state::Notice;

use crate::wire::typescript::{wire_enum, wire_shape};

wire_shape! {
    /// A diagnostic record: what "warn" mode writes and what the error `onHookError` receives
    /// carries as `diagnostic` (docs/hooks-and-diagnostics.md). The binding builds the
    /// shared-state ones (a message's context under the diagnostic pseudo-hook); the facade
    /// builds the others with the same fields (lib/diagnostics.cjs and its callers).
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Diagnostic<'a> as "AniLinkDiagnostic" {
        source: &'static str as "'anilink'",
        kind: DiagnosticKind,
        hook_name: &'static str,
        /// `kind: 'shared-state'`: the slot fell back to its local state, or rejoined Redis.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<SharedStateCode>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub request_id: Option<&'a str>,
        /// `kind: 'shared-state'`: the upstream host whose decision switched.
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<&'a str>,
        /// `kind: 'shared-state'`: `host:port` of the Redis server (never its credentials).
        #[serde(skip_serializing_if = "Option::is_none")]
        redis: Option<&'a str>,
        /// `kind: 'unknown-option'`: the request option's name that was ignored.
        #[serde(skip_serializing_if = "Option::is_none")]
        option: Option<&'a str>,
        message: String,
    }
}

wire_enum! {
    /// What a diagnostic record reports.
    // The binding builds the shared-state records only; the facade builds the others.
    #[allow(dead_code)]
    pub enum DiagnosticKind {
        HookFailure = "hook-failure",
        StateOwner = "state-owner",
        TokenRefresh = "token-refresh",
        HttpMock = "http-mock",
        SharedState = "shared-state",
        UnknownOption = "unknown-option",
        InvalidOption = "invalid-option",
    }
}

wire_enum! {
    /// The code of a shared-state diagnostic (README, "Transport state").
    pub enum SharedStateCode {
        Unavailable = "SHARED_STATE_UNAVAILABLE",
        Rejoined = "SHARED_STATE_REJOINED",
    }
}

/// The `SHARED_STATE_UNAVAILABLE` / `SHARED_STATE_REJOINED` record (docs/hooks-and-diagnostics.md,
/// "Transport state").
pub fn shared_state<'a>(
    context: &'a Context,
    notice: &Notice,
    host: &'a str,
    redis: &'a str,
) -> Diagnostic<'a> {
    let (code, message) = match notice {
        Notice::Unavailable { cause } => (
            SharedStateCode::Unavailable,
            format!(
                "Shared state unavailable: Redis at {redis} did not serve a decision for {host} ({cause}). The slot decides on its local state until Redis answers again; calls go on."
            ),
        ),
        Notice::Rejoined => (
            SharedStateCode::Rejoined,
            format!("Shared state rejoined: Redis at {redis} answers again; {host} follows the fleet's state."),
        ),
    };
    Diagnostic {
        source: "anilink",
        kind: DiagnosticKind::SharedState,
        hook_name: "sharedState",
        code: Some(code),
        request_id: Some(&context.request_id),
        host: Some(host),
        redis: Some(redis),
        option: None,
        message,
    }
}
