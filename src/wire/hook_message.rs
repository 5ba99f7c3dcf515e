//! A transport event as the facade receives it: the hook to call and its arguments, in the
//! shape the hooks of transport.md 1.10 document.

use serde::Serialize;

use anilink_transport::events::{Context, Event, FailureReport};
use anilink_transport::options::{Hook, HookSet};

use crate::wire::diagnostic::{self, Diagnostic};
use crate::wire::failure::{ErrorDescription, RateLimit};
use crate::wire::typescript::wire_shape;
#[cfg(test)]
use crate::wire::typescript::TsType;

/// The `hook` of a message that carries a diagnostic record (shared state fell back or
/// rejoined) instead of a hook's context: no hook has this name, the facade routes it as every
/// other diagnostic (lib/diagnostics.cjs).
pub const DIAGNOSTIC_HOOK: &str = "diagnostic";

wire_shape! {
    /// `{ hook, ctx, error? }`: the hook to call, its context argument, and for `onError` and
    /// `onRetry` the failure (its first argument).
    #[derive(Serialize)]
    pub struct HookMessage<'a> {
        pub hook: &'static str as "HookName | DiagnosticHook",
        pub ctx: HookContext<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        pub error: Option<ErrorDescription<'a>>,
        /// Observed calls only (diagnostics channels): the call has no such hook, so the facade
        /// publishes the event and calls nothing.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        pub unhooked: bool as "true",
        /// Observed calls only: the HTTP status of the answer an `onResponse` event reports.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub status: Option<u16>,
    }
}

wire_shape! {
    /// What every hook's context carries.
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Common<'a> as "RequestContext" {
        /// A UUID v4 shared by every hook of one logical request and by its error.
        request_id: &'a str,
        url: &'a str,
        method: &'static str as "HttpMethod",
        /// One-based attempt number.
        attempt: u32,
        /// Present (true) on every hook of a call that shared an identical read in flight (`coalesce`).
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        coalesced: bool as "true",
        /// With `coalesced`: the `requestId` of the call whose request it shared.
        #[serde(skip_serializing_if = "Option::is_none")]
        leader_request_id: Option<&'a str>,
    }
}

wire_shape! {
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ResponseContext<'a> {
        #[serde(flatten)]
        common: Common<'a>,
        /// The network attempt only (pacing waits are reported by onPace / pacedMs).
        duration_ms: f64,
        #[serde(skip_serializing_if = "Option::is_none")]
        rate_limit: Option<RateLimit>,
        /// true when served by the response cache (durationMs 0); false for a cacheable read that went to the network.
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_hit: Option<bool>,
        /// Present (true) when the response was written to the cache.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        cache_write: bool,
        /// Total pacing wait of this request so far (stagger excluded); absent when none.
        #[serde(skip_serializing_if = "Option::is_none")]
        paced_ms: Option<u64>,
    }
}

wire_shape! {
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct PaceContext<'a> {
        #[serde(flatten)]
        common: Common<'a>,
        delay_ms: u64,
        /// Present (true) when the wait was aborted by the caller's signal.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        aborted: bool,
    }
}

wire_shape! {
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct RequestErrorContext<'a> {
        #[serde(flatten)]
        common: Common<'a>,
        code: &'static str as "AniLinkErrorCode",
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        #[serde(skip_serializing_if = "Option::is_none")]
        rate_limit: Option<RateLimit>,
        /// Present when a retry is scheduled: the wait before it.
        #[serde(skip_serializing_if = "Option::is_none")]
        next_delay_ms: Option<u64>,
        /// Total of the retry waits scheduled before this report; absent when none.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_wait_ms: Option<u64>,
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// Terminal report only: the retry budget stopped a retry the policy wanted.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        budget_exhausted: bool,
        /// Circuit fast-fails only.
        #[serde(skip_serializing_if = "Option::is_none")]
        host: Option<&'a str>,
    }
}

wire_shape! {
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CircuitOpenContext<'a> {
        #[serde(flatten)]
        common: Common<'a>,
        host: &'a str,
        failures: u32,
    }
}

wire_shape! {
    #[derive(Clone, Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CircuitCloseContext<'a> {
        #[serde(flatten)]
        common: Common<'a>,
        host: &'a str,
    }
}

/// The context of each hook: the common fields, then the hook's own (absent ones left out).
#[derive(Clone, Serialize)]
#[serde(untagged)]
pub enum HookContext<'a> {
    RequestStart(Common<'a>),
    Response(ResponseContext<'a>),
    Pace(PaceContext<'a>),
    Failure(RequestErrorContext<'a>),
    CircuitOpen(CircuitOpenContext<'a>),
    CircuitClose(CircuitCloseContext<'a>),
    Diagnostic(Diagnostic<'a>),
}

#[cfg(test)]
impl TsType for HookContext<'_> {
    fn ts() -> String {
        [
            Common::ts(),
            ResponseContext::ts(),
            PaceContext::ts(),
            RequestErrorContext::ts(),
            CircuitOpenContext::ts(),
            CircuitCloseContext::ts(),
            Diagnostic::ts(),
        ]
        .join(" | ")
    }
}

/// The declarations of this module's shapes, for the generated typings.
#[cfg(test)]
pub fn declarations() -> Vec<String> {
    use crate::wire::typescript::WireShape;
    vec![
        Common::declaration(),
        ResponseContext::declaration(),
        PaceContext::declaration(),
        RequestErrorContext::declaration(),
        CircuitOpenContext::declaration(),
        CircuitCloseContext::declaration(),
        Diagnostic::declaration(),
        HookMessage::declaration(),
    ]
}

fn common(ctx: &Context) -> Common<'_> {
    Common {
        request_id: &ctx.request_id,
        url: &ctx.url,
        method: ctx.method,
        attempt: ctx.attempt,
        coalesced: ctx.coalesced_with.is_some(),
        leader_request_id: ctx.coalesced_with.as_deref(),
    }
}

impl<'a> HookMessage<'a> {
    pub fn of(event: &'a Event) -> Self {
        let (hook, ctx) = match event {
            Event::RequestStart(ctx) => (
                Hook::OnRequestStart.key(),
                HookContext::RequestStart(common(ctx)),
            ),
            Event::Response {
                context,
                status: _,
                duration_ms,
                rate_limit,
                cache_hit,
                cache_write,
                paced_ms,
            } => (
                Hook::OnResponse.key(),
                HookContext::Response(ResponseContext {
                    common: common(context),
                    duration_ms: *duration_ms,
                    rate_limit: rate_limit.as_ref().map(RateLimit::from),
                    cache_hit: *cache_hit,
                    cache_write: *cache_write,
                    paced_ms: *paced_ms,
                }),
            ),
            Event::Pace {
                context,
                delay_ms,
                aborted,
            } => (
                Hook::OnPace.key(),
                HookContext::Pace(PaceContext {
                    common: common(context),
                    delay_ms: *delay_ms,
                    aborted: *aborted,
                }),
            ),
            Event::Failure(report) => return Self::failure(report),
            Event::SharedState {
                context,
                notice,
                host,
                redis,
            } => (
                DIAGNOSTIC_HOOK,
                HookContext::Diagnostic(diagnostic::shared_state(context, notice, host, redis)),
            ),
            Event::CircuitOpen {
                context,
                host,
                failures,
            } => (
                Hook::OnCircuitOpen.key(),
                HookContext::CircuitOpen(CircuitOpenContext {
                    common: common(context),
                    host,
                    failures: *failures,
                }),
            ),
            Event::CircuitClose { context, host } => (
                Hook::OnCircuitClose.key(),
                HookContext::CircuitClose(CircuitCloseContext {
                    common: common(context),
                    host,
                }),
            ),
        };
        Self {
            hook,
            ctx,
            error: None,
            unhooked: false,
            status: None,
        }
    }

    /// What an observed call's message adds: whether a hook takes it, and the answer's status.
    pub fn observe(&mut self, event: &Event, hooks: HookSet) {
        self.unhooked = !is_hooked(hooks, self.hook);
        if let Event::Response { status, .. } = event {
            self.status = *status;
        }
    }

    fn failure(report: &'a FailureReport) -> Self {
        let error = &report.error;
        let ctx = HookContext::Failure(RequestErrorContext {
            common: common(&report.context),
            code: error.code.as_str(),
            status: error.status,
            rate_limit: error.rate_limit.as_ref().map(RateLimit::from),
            next_delay_ms: report.next_delay_ms,
            retry_wait_ms: report.retry_wait_ms,
            retry_after_ms: report.retry_after_ms,
            budget_exhausted: report.budget_exhausted,
            host: report.host.as_deref(),
        });
        // The hook's error names the request of the event it comes with.
        let description = ErrorDescription {
            request_id: Some(&report.context.request_id),
            ..ErrorDescription::of(error)
        };
        Self {
            hook: if report.via_retry_hook {
                Hook::OnRetry.key()
            } else {
                Hook::OnError.key()
            },
            ctx,
            error: Some(description),
            unhooked: false,
            status: None,
        }
    }

    /// The request this message is about (the id a substitute failure must carry).
    pub fn request_id(&self) -> &'a str {
        match &self.ctx {
            HookContext::RequestStart(common)
            | HookContext::Response(ResponseContext { common, .. })
            | HookContext::Pace(PaceContext { common, .. })
            | HookContext::Failure(RequestErrorContext { common, .. })
            | HookContext::CircuitOpen(CircuitOpenContext { common, .. })
            | HookContext::CircuitClose(CircuitCloseContext { common, .. }) => common.request_id,
            HookContext::Diagnostic(diagnostic) => diagnostic.request_id.unwrap_or_default(),
        }
    }
}

/// Whether the call has the hook named `key` (a diagnostic is no hook's: always delivered).
fn is_hooked(hooks: HookSet, key: &str) -> bool {
    Hook::ALL
        .iter()
        .find(|hook| hook.key() == key)
        .is_none_or(|hook| hooks.has(*hook))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use anilink_transport::error::TransportError;
    use anilink_transport::shared_state::Notice;

    use super::*;
    use crate::wire::typescript::{declared_keys, object_keys, WireShape};

    fn context() -> Context {
        Context {
            request_id: Arc::from("r-1"),
            url: Arc::from("http://127.0.0.1/x"),
            method: "POST",
            attempt: 2,
            coalesced_with: None,
        }
    }

    fn json(event: &Event) -> String {
        serde_json::to_string(&HookMessage::of(event)).expect("serializable")
    }

    #[test]
    fn a_response_lists_the_common_fields_then_its_own_and_leaves_absent_ones_out() {
        let event = Event::Response {
            context: context(),
            status: Some(200),
            duration_ms: 1.5,
            rate_limit: None,
            cache_hit: Some(false),
            cache_write: false,
            paced_ms: None,
        };
        assert_eq!(
            json(&event),
            r#"{"hook":"onResponse","ctx":{"requestId":"r-1","url":"http://127.0.0.1/x","method":"POST","attempt":2,"durationMs":1.5,"cacheHit":false}}"#
        );
    }

    #[test]
    fn an_observed_call_marks_events_no_hook_takes_and_gives_the_status() {
        let event = Event::Response {
            context: context(),
            status: Some(503),
            duration_ms: 1.5,
            rate_limit: None,
            cache_hit: None,
            cache_write: false,
            paced_ms: None,
        };
        let mut message = HookMessage::of(&event);
        message.observe(&event, HookSet(Hook::OnError as u32).observed());
        assert_eq!(
            serde_json::to_string(&message).expect("serializable"),
            r#"{"hook":"onResponse","ctx":{"requestId":"r-1","url":"http://127.0.0.1/x","method":"POST","attempt":2,"durationMs":1.5},"unhooked":true,"status":503}"#
        );
    }

    #[test]
    fn a_coalesced_call_names_the_request_it_shared() {
        let event = Event::RequestStart(Context {
            coalesced_with: Some(Arc::from("r-0")),
            ..context()
        });
        assert_eq!(
            json(&event),
            r#"{"hook":"onRequestStart","ctx":{"requestId":"r-1","url":"http://127.0.0.1/x","method":"POST","attempt":2,"coalesced":true,"leaderRequestId":"r-0"}}"#
        );
    }

    #[test]
    fn a_failure_goes_to_on_retry_with_the_error_named_after_its_request() {
        let event = Event::Failure(Box::new(FailureReport {
            context: context(),
            error: TransportError::timeout(30),
            via_retry_hook: true,
            next_delay_ms: Some(100),
            retry_wait_ms: None,
            budget_exhausted: false,
            host: None,
            retry_after_ms: None,
        }));
        assert_eq!(
            json(&event),
            r#"{"hook":"onRetry","ctx":{"requestId":"r-1","url":"http://127.0.0.1/x","method":"POST","attempt":2,"code":"TIMEOUT_ERROR","nextDelayMs":100},"error":{"code":"TIMEOUT_ERROR","message":"The request timed out.","timeoutMs":30,"requestId":"r-1"}}"#
        );
    }

    #[test]
    fn a_shared_state_record_is_a_diagnostic_with_every_field_its_typings_declare_but_option() {
        let event = Event::SharedState {
            context: context(),
            notice: Notice::Rejoined,
            host: "example.org".into(),
            redis: "127.0.0.1:6379".into(),
        };
        let message = serde_json::to_value(HookMessage::of(&event)).expect("serializable");
        assert_eq!(message["hook"], DIAGNOSTIC_HOOK);
        assert_eq!(message["ctx"]["kind"], "shared-state");
        assert_eq!(message["ctx"]["code"], "SHARED_STATE_REJOINED");
        let mut declared = declared_keys(&[Diagnostic::declaration()]);
        declared.retain(|key| key != "option");
        assert_eq!(object_keys(&message["ctx"]), declared);
    }

    #[test]
    fn a_message_with_every_field_has_exactly_the_keys_its_typings_declare() {
        let mut error = TransportError::timeout(30);
        error.status = Some(503);
        error.body = Some("down".into());
        error.rate_limit = Some(anilink_transport::rate_limit::RateLimitInfo {
            limit: 90.0,
            remaining: 0.0,
            reset: 1.0,
        });
        error.content_type = Some("text/plain".into());
        error.graphql_errors = Some("[]".into());
        error.graphql_data = Some("null".into());
        error.aborted_during_pacing = true;
        error.details = vec!["a detail".into()];
        error.reason = Some("ECONNRESET".into());
        let event = Event::Failure(Box::new(FailureReport {
            context: Context {
                coalesced_with: Some(Arc::from("r-0")),
                ..context()
            },
            error,
            via_retry_hook: false,
            next_delay_ms: Some(1),
            retry_wait_ms: Some(2),
            budget_exhausted: true,
            host: Some("example.org".into()),
            retry_after_ms: Some(3),
        }));
        let mut message = HookMessage::of(&event);
        message.unhooked = true;
        message.status = Some(503);
        let json = serde_json::to_value(&message).expect("serializable");

        assert_eq!(
            object_keys(&json),
            declared_keys(&[HookMessage::declaration()])
        );
        assert_eq!(
            object_keys(&json["ctx"]),
            declared_keys(&[Common::declaration(), RequestErrorContext::declaration()])
        );
        assert_eq!(
            object_keys(&json["error"]),
            declared_keys(&[ErrorDescription::declaration()])
        );
        assert_eq!(
            object_keys(&json["error"]["rateLimit"]),
            declared_keys(&[RateLimit::declaration()])
        );
    }
}
