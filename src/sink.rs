//! Transport events as hook messages in the client's outbox.
//!
//! An event is queued and the transport goes on: the outbox keeps a call's messages in order,
//! so its hooks run in order and before its promise settles, and a slow hook never holds up
//! the network. Calls without hooks get [`NoEvents`](anilink_transport::events::NoEvents).

use serde_json::{json, Map, Value};

use anilink_transport::events::{Context, Event, EventSink};

use crate::failure::{describe, rate_limit_json};
use crate::outbox::{Kind, Outbox, Payload};

pub struct HookEvents {
    pub outbox: Outbox,
    pub call_id: u32,
}

impl EventSink for HookEvents {
    async fn emit(&self, event: Event) {
        self.outbox.send(self.call_id, Kind::Event, Payload::Json(&payload(&event)));
    }
}

fn context(ctx: &Context) -> Map<String, Value> {
    let mut map = Map::new();
    map.insert("requestId".into(), ctx.request_id.as_ref().into());
    map.insert("url".into(), ctx.url.as_ref().into());
    map.insert("method".into(), ctx.method.into());
    map.insert("attempt".into(), ctx.attempt.into());
    map
}

/// `{ hook, ctx, error? }`: the hook to call and its payload, optional keys absent.
fn payload(event: &Event) -> Value {
    let (hook, ctx, error) = match event {
        Event::RequestStart(ctx) => ("onRequestStart", context(ctx), None),
        Event::Response { context: ctx, duration_ms, rate_limit, cache_hit, cache_write, paced_ms } => {
            let mut map = context(ctx);
            map.insert("durationMs".into(), json!(duration_ms));
            if let Some(info) = rate_limit {
                map.insert("rateLimit".into(), rate_limit_json(info));
            }
            if let Some(hit) = cache_hit {
                map.insert("cacheHit".into(), (*hit).into());
            }
            if *cache_write {
                map.insert("cacheWrite".into(), true.into());
            }
            if let Some(paced) = paced_ms {
                map.insert("pacedMs".into(), (*paced).into());
            }
            ("onResponse", map, None)
        }
        Event::Pace { context: ctx, delay_ms, aborted } => {
            let mut map = context(ctx);
            map.insert("delayMs".into(), (*delay_ms).into());
            if *aborted {
                map.insert("aborted".into(), true.into());
            }
            ("onPace", map, None)
        }
        Event::Failure(report) => {
            let mut map = context(&report.context);
            map.insert("code".into(), report.error.code.as_str().into());
            if let Some(status) = report.error.status {
                map.insert("status".into(), status.into());
            }
            if let Some(info) = &report.error.rate_limit {
                map.insert("rateLimit".into(), rate_limit_json(info));
            }
            let optional = [
                ("nextDelayMs", report.next_delay_ms),
                ("retryWaitMs", report.retry_wait_ms),
                ("retryAfterMs", report.retry_after_ms),
            ];
            for (key, value) in optional {
                if let Some(value) = value {
                    map.insert(key.into(), value.into());
                }
            }
            if report.budget_exhausted {
                map.insert("budgetExhausted".into(), true.into());
            }
            if let Some(host) = &report.host {
                map.insert("host".into(), host.clone().into());
            }
            let mut error = describe(&report.error);
            if let Value::Object(fields) = &mut error {
                fields.insert("requestId".into(), report.context.request_id.as_ref().into());
            }
            let hook = if report.via_retry_hook { "onRetry" } else { "onError" };
            (hook, map, Some(error))
        }
        Event::CircuitOpen { context: ctx, host, failures } => {
            let mut map = context(ctx);
            map.insert("host".into(), host.clone().into());
            map.insert("failures".into(), (*failures).into());
            ("onCircuitOpen", map, None)
        }
        Event::CircuitClose { context: ctx, host } => {
            let mut map = context(ctx);
            map.insert("host".into(), host.clone().into());
            ("onCircuitClose", map, None)
        }
    };
    let mut out = Map::new();
    out.insert("hook".into(), hook.into());
    out.insert("ctx".into(), Value::Object(ctx));
    if let Some(error) = error {
        out.insert("error".into(), error);
    }
    Value::Object(out)
}
