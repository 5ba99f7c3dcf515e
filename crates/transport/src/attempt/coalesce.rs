//! Coalescing identical reads (`coalesce: true`, our extension): a read whose request is the
//! same as one already in flight does not dispatch; it waits for that request's outcome.
//!
//! One call of a group leads: it runs the attempt loop as any call does (its cache lookup,
//! admission, retries, hooks), and on settling hands its outcome to the followers that joined
//! meanwhile. A follower's own abort leaves only that follower. If the leader leaves without an
//! outcome of the request's own (its caller aborted it, or its future was dropped), the group
//! ends without one: every follower joins again, so one of them leads a new request and the
//! others follow it. Nobody is failed by someone else's signal.
//!
//! Requests are the same when method, URL, body bytes and every header (credentials included)
//! are. Bytes, not a canonical JSON form: a body carries the caller's variables in the caller's
//! key order, and sorting them would cost every coalescing call what only differently ordered
//! twins gain (the response cache's key does sort them, as it hashes the body anyway). The
//! options that shape an outcome must be equal too (all resolved options but the hooks), so a
//! call with another `allowPartialData`, `maxResponseBytes`, `maxRedirects`, retry policy or
//! cache never shares another's answer. Only reads join: a write, or a request whose auth guard
//! will fail, has no key.
//!
//! A call under `coalesce: true` leads a group and runs the attempt loop, or follows one and
//! settles with the leader's outcome. A follower reports `onRequestStart` when it joins, then
//! `onResponse` (`durationMs` 0: it had no network attempt) or `onError`, each with
//! `coalesced: true` and the leader's request id. A follower whose leader was aborted joins
//! again, so it reports `onRequestStart` once more: as a follower of the next leader, or without
//! `coalesced` as that leader itself. [`attempt::execute`](super::execute) decides whether a
//! call coalesces and hands this module the attempt loop to run when it leads.

mod group;

use std::future::Future;
use std::sync::Arc;

use super::report::{FailureExtras, Reporter};
use super::{CallInputs, CallResult, Completed, ResultText};
use crate::error::TransportError;
use crate::events::EventSink;
pub(super) use group::CoalesceKey;
pub use group::Coalescer;
use group::{Follow, Role};

/// What a leader hands its followers: its result (shared text, never re-read) or its error.
pub type LeaderOutcome = Result<CallResult, TransportError>;

/// Lead the group of identical reads in flight (running `attempts`, the call's own attempt
/// loop), follow its leader, or go alone.
pub(super) async fn lead_or_follow<S: EventSink, Attempts>(
    coalescer: &Coalescer<LeaderOutcome>,
    key: CoalesceKey,
    call: CallInputs<'_, S>,
    request_id: Arc<str>,
    attempts: impl FnOnce(Arc<str>) -> Attempts,
) -> Result<Completed, TransportError>
where
    Attempts: Future<Output = Result<Completed, TransportError>>,
{
    loop {
        let lead = match coalescer.join(&key, &request_id) {
            Role::Lead(lead) => lead,
            Role::Alone => return attempts(request_id).await,
            Role::Follow(group) => {
                match follow(group, call, &request_id).await {
                    Some(outcome) => return outcome,
                    // The leader left without an outcome: lead or follow the next request.
                    None => continue,
                }
            }
        };
        let mut outcome = attempts(request_id).await;
        // A failure after the leader's own abort is not the request's outcome: its followers
        // join again (`lead` dropped unsettled) rather than fail by another caller's signal.
        if !(call.cancel.is_cancelled() && outcome.is_err()) {
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
async fn follow<S: EventSink>(
    group: Follow<LeaderOutcome>,
    call: CallInputs<'_, S>,
    request_id: &Arc<str>,
) -> Option<Result<Completed, TransportError>> {
    let CallInputs {
        spec,
        options,
        sink,
        cancel,
    } = call;
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
