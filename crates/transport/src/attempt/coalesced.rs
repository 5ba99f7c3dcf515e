//! A call under `coalesce: true` (module [`coalesce`](crate::coalesce)): it leads a group and
//! runs the attempt loop, or follows one and settles with the leader's outcome. A follower
//! reports `onRequestStart` when it joins, then `onResponse` (`durationMs` 0: it had no network
//! attempt) or `onError`, each with `coalesced: true` and the leader's request id. A follower
//! whose leader was aborted joins again, so it reports `onRequestStart` once more: as a
//! follower of the next leader, or without `coalesced` as that leader itself.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::report::{FailureExtras, Reporter};
use super::{execute_on, new_request_id, CallResult, Completed, ResultText, Shared};
use crate::coalesce::{CoalesceKey, Coalescer, Follow, Role};
use crate::error::TransportError;
use crate::events::EventSink;
use crate::exchange::Exchange;
use crate::options::ResolvedOptions;
use crate::request::RequestSpec;

/// What a leader hands its followers: its result (shared text, never re-read) or its error.
pub type LeaderOutcome = Result<CallResult, TransportError>;

/// Run one call, joining an identical read in flight when its options allow it.
pub(super) async fn execute_coalesced(
    coalescer: &Coalescer<LeaderOutcome>,
    shared: &Shared<'_>,
    exchange: &impl Exchange,
    spec: &RequestSpec,
    options: &ResolvedOptions,
    sink: &impl EventSink,
    cancel: &CancellationToken,
) -> Result<Completed, TransportError> {
    let request_id = new_request_id();
    let Some(key) = CoalesceKey::for_call(spec, options) else {
        return execute_on(shared, exchange, spec, options, sink, cancel, request_id).await;
    };
    // Boxed: only coalescing calls carry the room for leading or following a group.
    Box::pin(lead_or_follow(
        coalescer, key, shared, exchange, spec, options, sink, cancel, request_id,
    ))
    .await
}

/// Lead the group of identical reads in flight, follow its leader, or go alone.
#[allow(clippy::too_many_arguments)]
async fn lead_or_follow(
    coalescer: &Coalescer<LeaderOutcome>,
    key: CoalesceKey,
    shared: &Shared<'_>,
    exchange: &impl Exchange,
    spec: &RequestSpec,
    options: &ResolvedOptions,
    sink: &impl EventSink,
    cancel: &CancellationToken,
    request_id: Arc<str>,
) -> Result<Completed, TransportError> {
    loop {
        let lead = match coalescer.join(&key, &request_id) {
            Role::Lead(lead) => lead,
            Role::Alone => {
                return execute_on(shared, exchange, spec, options, sink, cancel, request_id).await
            }
            Role::Follow(group) => {
                match follow(group, spec, options, sink, cancel, &request_id).await {
                    Some(outcome) => return outcome,
                    // The leader left without an outcome: lead or follow the next request.
                    None => continue,
                }
            }
        };
        let mut outcome =
            execute_on(shared, exchange, spec, options, sink, cancel, request_id).await;
        // A failure after the leader's own abort is not the request's outcome: its followers
        // join again (`lead` dropped unsettled) rather than fail by another caller's signal.
        if !(cancel.is_cancelled() && outcome.is_err()) {
            lead.settle(|| shareable(&mut outcome));
        }
        return outcome;
    }
}

/// The leader's outcome for its followers; a fresh result text moves behind an `Arc` once,
/// so each follower receives it without a copy.
fn shareable(outcome: &mut Result<Completed, TransportError>) -> LeaderOutcome {
    match outcome {
        Ok(completed) => {
            if let Some(ResultText::Fresh(text)) = &mut completed.result {
                let text: Arc<str> = Arc::from(std::mem::take(text));
                completed.result = Some(ResultText::Cached(text));
            }
            Ok(completed.result.clone())
        }
        Err(error) => Err(error.clone()),
    }
}

/// Wait for the leader's outcome (None: the group ended without one), or this call's own abort.
async fn follow(
    group: Follow<LeaderOutcome>,
    spec: &RequestSpec,
    options: &ResolvedOptions,
    sink: &impl EventSink,
    cancel: &CancellationToken,
    request_id: &Arc<str>,
) -> Option<Result<Completed, TransportError>> {
    let events = Reporter::new(sink, options.hooks, request_id.clone(), spec)
        .coalesced_with(group.leader_request_id.clone());
    events.request_start().await;
    let outcome = tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(TransportError::aborted()),
        outcome = group.outcome() => outcome?,
    };
    Some(match outcome {
        Ok(result) => {
            events.report_response(None, 0.0, None, None, false).await;
            Ok(Completed {
                result,
                request_id: request_id.clone(),
            })
        }
        Err(mut error) => {
            error.request_id = Some(request_id.to_string());
            events
                .report_failure(&error, FailureExtras::default())
                .await;
            Err(error)
        }
    })
}
