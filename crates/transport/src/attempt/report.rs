//! How the loop's steps become events: each is built only when its hook is configured (or the
//! call is observed), and
//! handed to the sink in the order the steps run (transport.md 1.10). The reporter also keeps
//! the counters the payloads carry (attempt, pacing and retry waits), which the loop advances.

use std::sync::{Arc, OnceLock};

use crate::breaker::Transition;
use crate::error::TransportError;
use crate::events::{Context, Event, EventSink, FailureReport};
use crate::options::{Hook, HookSet};
use crate::rate_limit::RateLimitInfo;
use crate::request::{redact_userinfo, RequestSpec};
use crate::shared_state::Notice;

/// What a failure report carries beyond the error, by the path that reports it.
#[derive(Default)]
pub(super) struct FailureExtras {
    pub(super) next_delay_ms: Option<u64>,
    pub(super) budget_exhausted: bool,
    pub(super) host: Option<String>,
    pub(super) retry_after_ms: Option<u64>,
}

pub(super) struct Reporter<'a, S: EventSink> {
    sink: &'a S,
    hooks: HookSet,
    pub(super) request_id: Arc<str>,
    /// The request URL as hooks see it (userinfo redacted), made by the first event: a call
    /// without hooks never needs it.
    url: OnceLock<Arc<str>>,
    request_url: &'a str,
    method: &'static str,
    host: &'a str,
    /// Zero-based index of the current attempt.
    pub(super) attempt: u32,
    /// Pacing waits so far, stagger excluded.
    pub(super) paced_ms: u64,
    /// Backoff waits scheduled so far.
    pub(super) retry_wait_ms: u64,
    /// A follower's leader (see [`Context::coalesced_with`]).
    coalesced_with: Option<Arc<str>>,
}

impl<'a, S: EventSink> Reporter<'a, S> {
    pub(super) fn new(
        sink: &'a S,
        hooks: HookSet,
        request_id: Arc<str>,
        spec: &'a RequestSpec,
    ) -> Self {
        Self {
            sink,
            hooks,
            request_id,
            url: OnceLock::new(),
            request_url: &spec.url,
            method: method_name(&spec.method),
            host: &spec.host,
            attempt: 0,
            paced_ms: 0,
            retry_wait_ms: 0,
            coalesced_with: None,
        }
    }

    /// The reporter of a call that follows the request of `leader_request_id`.
    pub(super) fn coalesced_with(self, leader_request_id: Arc<str>) -> Self {
        Self {
            coalesced_with: Some(leader_request_id),
            ..self
        }
    }

    pub(super) fn context(&self) -> Context {
        Context {
            request_id: self.request_id.clone(),
            url: self
                .url
                .get_or_init(|| Arc::from(redact_userinfo(self.request_url).as_ref()))
                .clone(),
            method: self.method,
            attempt: self.attempt + 1,
            coalesced_with: self.coalesced_with.clone(),
        }
    }

    pub(super) async fn emit_if(&self, hook: Hook, build: impl FnOnce() -> Event) {
        if self.hooks.emits(hook) {
            self.sink.emit(build()).await;
        }
    }

    /// A shared-state switch: a diagnostic every call delivers, whatever its hooks.
    pub(super) async fn shared_state(&self, notice: Notice, redis: String) {
        self.sink
            .emit(Event::SharedState {
                context: self.context(),
                notice,
                host: self.host.to_string(),
                redis,
            })
            .await;
    }

    pub(super) async fn request_start(&self) {
        self.emit_if(Hook::OnRequestStart, || Event::RequestStart(self.context()))
            .await;
    }

    pub(super) async fn report_failure(&self, error: &TransportError, report: FailureExtras) {
        let via_retry_hook = report.next_delay_ms.is_some() && self.hooks.has(Hook::OnRetry);
        let hook = if via_retry_hook {
            Hook::OnRetry
        } else {
            Hook::OnError
        };
        self.emit_if(hook, || {
            Event::Failure(Box::new(FailureReport {
                context: self.context(),
                error: error.clone(),
                via_retry_hook,
                next_delay_ms: report.next_delay_ms,
                retry_wait_ms: (self.retry_wait_ms > 0).then_some(self.retry_wait_ms),
                budget_exhausted: report.budget_exhausted,
                host: report.host,
                retry_after_ms: report.retry_after_ms,
            }))
        })
        .await;
    }

    pub(super) async fn announce(&self, transition: Option<Transition>) {
        match transition {
            Some(Transition::Opened { failures }) => {
                self.emit_if(Hook::OnCircuitOpen, || Event::CircuitOpen {
                    context: self.context(),
                    host: self.host.to_string(),
                    failures,
                })
                .await
            }
            Some(Transition::Closed) => {
                self.emit_if(Hook::OnCircuitClose, || Event::CircuitClose {
                    context: self.context(),
                    host: self.host.to_string(),
                })
                .await
            }
            None => {}
        }
    }

    pub(super) async fn report_response(
        &self,
        status: Option<u16>,
        duration_ms: f64,
        rate_limit: Option<RateLimitInfo>,
        cache_hit: Option<bool>,
        cache_write: bool,
    ) {
        self.emit_if(Hook::OnResponse, || Event::Response {
            context: self.context(),
            status,
            duration_ms,
            rate_limit,
            cache_hit,
            cache_write,
            paced_ms: (self.paced_ms > 0).then_some(self.paced_ms),
        })
        .await;
    }
}

fn method_name(method: &http::Method) -> &'static str {
    match *method {
        http::Method::GET => "GET",
        http::Method::POST => "POST",
        http::Method::PUT => "PUT",
        http::Method::PATCH => "PATCH",
        http::Method::DELETE => "DELETE",
        http::Method::HEAD => "HEAD",
        _ => "OPTIONS",
    }
}
