//! Observability events: what the hooks of transport.md 1.10 receive, built only when the
//! matching hook is configured, and delivered in order through a sink the caller provides.

use std::future::Future;
use std::sync::Arc;

use crate::error::TransportError;
use crate::rate_limit::RateLimitInfo;
use crate::shared_state::Notice;

/// The part every payload shares.
#[derive(Clone, Debug, PartialEq)]
pub struct Context {
    pub request_id: Arc<str>,
    pub url: Arc<str>,
    pub method: &'static str,
    /// One-based.
    pub attempt: u32,
    /// A coalesced call (`coalesce: true`, see `attempt::coalesce`): the request id of the call
    /// whose request it shared.
    pub coalesced_with: Option<Arc<str>>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct FailureReport {
    pub context: Context,
    pub error: TransportError,
    /// `onRetry` (a retry is scheduled and the hook exists) or `onError`.
    pub via_retry_hook: bool,
    pub next_delay_ms: Option<u64>,
    /// Sum of the waits scheduled before this one; absent when zero.
    pub retry_wait_ms: Option<u64>,
    pub budget_exhausted: bool,
    /// Circuit fast-fails only.
    pub host: Option<String>,
    pub retry_after_ms: Option<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    RequestStart(Context),
    Response {
        context: Context,
        /// The HTTP status of the attempt's answer; None for a cache hit or a coalesced follower.
        status: Option<u16>,
        /// The network attempt only (decisions D6).
        duration_ms: f64,
        rate_limit: Option<RateLimitInfo>,
        /// `Some(true)` for a response served by the cache, `Some(false)` for a cacheable read
        /// that went to the network; None when the cache was not involved.
        cache_hit: Option<bool>,
        /// The response was written to the cache.
        cache_write: bool,
        /// Total pacing wait of the request so far, stagger excluded; absent when zero.
        paced_ms: Option<u64>,
    },
    Pace {
        context: Context,
        delay_ms: u64,
        aborted: bool,
    },
    Failure(Box<FailureReport>),
    CircuitOpen {
        context: Context,
        host: String,
        failures: u32,
    },
    CircuitClose {
        context: Context,
        host: String,
    },
    /// The slot's shared state fell back to its local copy, or rejoined Redis. Always sent, hook
    /// or not: it is a diagnostic (`SHARED_STATE_UNAVAILABLE` / `SHARED_STATE_REJOINED`).
    SharedState {
        context: Context,
        notice: Notice,
        /// The upstream host whose decision switched.
        host: String,
        /// `host:port` of the Redis server (never its credentials).
        redis: String,
    },
}

/// Where events go. `emit` resolves once the event has been handled, so a sink that runs
/// hooks elsewhere (the JavaScript thread) keeps them in order and ahead of the call's result.
pub trait EventSink: Send + Sync {
    fn emit(&self, event: Event) -> impl Future<Output = ()> + Send;
}

/// A call without hooks has no sink (`None`): the loop never builds an event for it, since no
/// hook bit is set. One sink type for calls with hooks and without keeps a single copy of the
/// call's future (two would each be compiled, and a caller choosing between them at run time
/// would carry room for both in every task).
impl<S: EventSink> EventSink for Option<S> {
    async fn emit(&self, event: Event) {
        if let Some(sink) = self {
            sink.emit(event).await;
        }
    }
}
