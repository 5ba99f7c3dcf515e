//! How the loop's steps become events: each is built only when its hook is configured, and
//! handed to the sink in the order the steps run (transport.md 1.10).

use crate::breaker::Transition;
use crate::error::TransportError;
use crate::events::{Context, Event, EventSink, FailureReport};
use crate::options::Hook;
use crate::rate_limit::RateLimitInfo;

use super::Call;

/// What a failure report carries beyond the error, by the path that reports it.
#[derive(Default)]
pub(super) struct FailureExtras {
    pub(super) next_delay_ms: Option<u64>,
    pub(super) budget_exhausted: bool,
    pub(super) host: Option<String>,
    pub(super) retry_after_ms: Option<u64>,
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

impl<S: EventSink> Call<'_, S> {
    pub(super) fn context(&self) -> Context {
        Context {
            request_id: self.request_id.clone(),
            url: self.url.clone(),
            method: method_name(&self.spec.method),
            attempt: self.attempt + 1,
        }
    }

    pub(super) fn wants(&self, hook: Hook) -> bool {
        self.options.hooks.has(hook)
    }

    pub(super) async fn emit_if(&self, hook: Hook, build: impl FnOnce() -> Event) {
        if self.wants(hook) {
            self.sink.emit(build()).await;
        }
    }

    pub(super) async fn report_failure(&self, error: &TransportError, report: FailureExtras) {
        let via_retry_hook = report.next_delay_ms.is_some() && self.wants(Hook::OnRetry);
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
                    host: self.spec.host.clone(),
                    failures,
                })
                .await
            }
            Some(Transition::Closed) => {
                self.emit_if(Hook::OnCircuitClose, || Event::CircuitClose {
                    context: self.context(),
                    host: self.spec.host.clone(),
                })
                .await
            }
            None => {}
        }
    }

    pub(super) async fn report_response(
        &self,
        duration_ms: f64,
        rate_limit: Option<RateLimitInfo>,
        cache_hit: Option<bool>,
        cache_write: bool,
    ) {
        self.emit_if(Hook::OnResponse, || Event::Response {
            context: self.context(),
            duration_ms,
            rate_limit,
            cache_hit,
            cache_write,
            paced_ms: (self.paced_ms > 0).then_some(self.paced_ms),
        })
        .await;
    }
}
