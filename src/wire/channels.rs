//! The payloads of the diagnostics channels (docs/hooks-and-diagnostics.md, "Observability"),
//! declared here once: their TypeScript is generated from these declarations, and the keys each
//! payload carries are exported ([`channel_payloads`]).
//!
//! The facade builds the payloads (lib/channels.cjs) from the hook messages of an observed call,
//! and only while a channel has a subscriber: a call nobody observes asks for no events at all,
//! so nothing here costs it anything. Building them here instead would mean keeping each call's
//! open attempt on the native side and sending its end before the call's result, for no fact the
//! hook messages do not already carry. What keeps the facade's payloads and these declarations
//! together is `__test__/channels.spec.ts`, which holds every payload published during a
//! retried call, a breaker opening, an admission wait and a shared-state fallback to these keys.

use napi_derive::napi;
use serde::Serialize;

use crate::wire::diagnostic::SharedStateCode;
use crate::wire::typescript::{camel, has_serde, wire_enum, wire_shape};

/// The keys a channel payload carries: always, or only when they apply.
#[napi(object)]
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PayloadKeys {
    pub required: Vec<String>,
    pub optional: Vec<String>,
}

impl PayloadKeys {
    /// The keys of a shape whose fields are `fields` (name, attributes as `stringify!` writes
    /// them), camel-cased as serde writes them; a flattened field's keys are its shape's own.
    fn of(fields: &[(&str, &[&str])]) -> Self {
        let mut keys = Self::default();
        for (name, attributes) in fields {
            if has_serde(attributes, "flatten") {
                continue;
            }
            let list = if has_serde(attributes, "skip_serializing_if") {
                &mut keys.optional
            } else {
                &mut keys.required
            };
            list.push(camel(name));
        }
        keys
    }

    /// These keys (of a flattened shape) and those of `extending`, the shape that flattens it.
    fn with(mut self, extending: Self) -> Self {
        self.required.extend(extending.required);
        self.optional.extend(extending.optional);
        self
    }
}

/// A channel payload: a wire shape that also lists its keys (for [`channel_payloads`]).
macro_rules! channel_payload {
    (
        $(#[$attribute:meta])*
        pub struct $name:ident $(as $ts_name:literal)? {
            $(
                $(#[$field_attribute:meta])*
                $field:ident : $field_ty:ty $(as $field_ts:literal)?
            ),* $(,)?
        }
    ) => {
        wire_shape! {
            $(#[$attribute])*
            pub struct $name $(as $ts_name)? {
                $( $(#[$field_attribute])* $field: $field_ty $(as $field_ts)?, )*
            }
        }

        impl $name {
            /// The keys of this shape's own fields.
            fn keys() -> PayloadKeys {
                PayloadKeys::of(&[$((stringify!($field), &[$(stringify!($field_attribute)),*])),*])
            }
        }
    };
}

channel_payload! {
    /// The context of the tracing channel `anilink:call`, filled as the call runs.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CallChannelContext {
        /// Set with the first attempt.
        request_id: Option<String> as "string | undefined",
        /// `anilist`, `mal`, or `external` (token endpoints).
        provider: String,
        /// The catalog key (`query.media`, `anime.details`…), `custom`, or `post`.
        operation: String,
        /// Set with the first attempt.
        method: Option<String> as "string | undefined",
        /// Set with the first attempt; userinfo redacted.
        url: Option<String> as "string | undefined",
        /// The last HTTP status answered, if any.
        status: Option<u16> as "number | undefined",
        /// The error code of a failed call (`AniLinkErrorCodes`).
        code: Option<String> as "string | undefined",
        attempts: u32,
        retries: u32,
        /// Total pacing and quota-admission wait, ms.
        paced_ms: f64,
        coalesced: bool,
        /// Served by the response cache.
        cached: bool,
        /// Set by the tracing channel: the resolved value (`asyncStart`/`asyncEnd`).
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<()> as "unknown",
        /// Set by the tracing channel: the rejection (`error`, `asyncStart`, `asyncEnd`).
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<()> as "unknown",
    }
}

channel_payload! {
    /// What every event payload shares: the call it belongs to (the `anilink:call` context) and
    /// its request.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CallEvent {
        call: CallChannelContext,
        request_id: String,
    }
}

channel_payload! {
    /// `anilink:attempt:start`
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AttemptStartMessage {
        #[serde(flatten)]
        event: CallEvent,
        /// One-based.
        attempt: u32,
        method: String,
        url: String,
        /// A coalesced call: the request it shares.
        #[serde(skip_serializing_if = "Option::is_none")]
        leader_request_id: Option<String>,
    }
}

channel_payload! {
    /// `anilink:attempt:end`
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AttemptEndMessage {
        #[serde(flatten)]
        event: CallEvent,
        attempt: u32,
        method: String,
        url: String,
        status: Option<u16> as "number | undefined",
        /// The network attempt only; absent when it failed before an answer.
        duration_ms: Option<f64> as "number | undefined",
        /// `abandoned`: a coalesced follower whose leader went away without an outcome; it
        /// starts over.
        outcome: String as "'success' | 'cached' | 'retry' | 'failure' | 'abandoned'",
        /// The error code of a failed attempt.
        #[serde(skip_serializing_if = "Option::is_none")]
        code: Option<String>,
        will_retry: bool,
        /// The wait before the next attempt.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_delay_ms: Option<u64>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        budget_exhausted: bool as "true",
    }
}

channel_payload! {
    /// `anilink:admission`: a pacing or quota-admission wait before an attempt.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct AdmissionMessage {
        #[serde(flatten)]
        event: CallEvent,
        attempt: u32,
        url: String,
        wait_ms: u64,
        /// The call was aborted during the wait (`waitMs` is what elapsed).
        aborted: bool,
    }
}

channel_payload! {
    /// `anilink:breaker`: a host's circuit opened or closed.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BreakerMessage {
        #[serde(flatten)]
        event: CallEvent,
        host: String,
        state: BreakerState,
        /// Consecutive failures that opened it.
        #[serde(skip_serializing_if = "Option::is_none")]
        failures: Option<u32>,
    }
}

channel_payload! {
    /// `anilink:shared-state`: the slot's shared state fell back to local decisions, or rejoined
    /// Redis.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SharedStateMessage {
        #[serde(flatten)]
        event: CallEvent,
        host: String,
        /// `host:port` of the Redis server.
        redis: String,
        state: SharedStateSwitch,
        code: SharedStateCode,
    }
}

wire_enum! {
    /// A host's breaker after a transition (`anilink:breaker`).
    // The facade builds the payload; the binding's build names the values only in the
    // contract, which a test gathers (src/wire/contract.rs).
    #[cfg_attr(not(test), allow(dead_code))]
    pub enum BreakerState {
        Open = "open",
        Closed = "closed",
    }
}

wire_enum! {
    /// Where a slot's shared state went (`anilink:shared-state`).
    // The facade builds the payload; the binding's build names the values only in the
    // contract, which a test gathers (src/wire/contract.rs).
    #[cfg_attr(not(test), allow(dead_code))]
    pub enum SharedStateSwitch {
        Fallback = "fallback",
        Rejoined = "rejoined",
    }
}

/// The keys of each channel's payload, by the facade's name of the channel (`CHANNEL_NAMES` in
/// lib/channels.cjs; `call` is the context of `anilink:call`).
#[napi(object)]
pub struct ChannelPayloads {
    pub call: PayloadKeys,
    pub attempt_start: PayloadKeys,
    pub attempt_end: PayloadKeys,
    pub admission: PayloadKeys,
    pub breaker: PayloadKeys,
    pub shared_state: PayloadKeys,
}

/// The keys of each channel's payload, for the test that holds what the facade publishes to
/// them. Not in the contract the facade reads as it loads (lib/contract.generated.json): the
/// facade never needs these keys.
#[napi(catch_unwind)]
pub fn channel_payloads() -> ChannelPayloads {
    let event = CallEvent::keys;
    ChannelPayloads {
        call: CallChannelContext::keys(),
        attempt_start: event().with(AttemptStartMessage::keys()),
        attempt_end: event().with(AttemptEndMessage::keys()),
        admission: event().with(AdmissionMessage::keys()),
        breaker: event().with(BreakerMessage::keys()),
        shared_state: event().with(SharedStateMessage::keys()),
    }
}

/// The declarations of this module's shapes, for the generated typings.
#[cfg(test)]
pub fn declarations() -> Vec<String> {
    use crate::wire::typescript::WireShape;
    vec![
        CallChannelContext::declaration(),
        CallEvent::declaration(),
        AttemptStartMessage::declaration(),
        AttemptEndMessage::declaration(),
        AdmissionMessage::declaration(),
        BreakerMessage::declaration(),
        SharedStateMessage::declaration(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::typescript::{declared_properties, WireShape};

    fn listed(keys: PayloadKeys) -> Vec<String> {
        let optional = keys.optional.into_iter().map(|key| format!("{key}?"));
        let mut keys: Vec<String> = keys.required.into_iter().chain(optional).collect();
        keys.sort();
        keys
    }

    #[test]
    fn the_exported_keys_are_those_each_payload_declares() {
        let payloads = channel_payloads();
        let event = CallEvent::declaration();
        let cases = [
            (payloads.call, vec![CallChannelContext::declaration()]),
            (
                payloads.attempt_start,
                vec![event.clone(), AttemptStartMessage::declaration()],
            ),
            (
                payloads.attempt_end,
                vec![event.clone(), AttemptEndMessage::declaration()],
            ),
            (
                payloads.admission,
                vec![event.clone(), AdmissionMessage::declaration()],
            ),
            (
                payloads.breaker,
                vec![event.clone(), BreakerMessage::declaration()],
            ),
            (
                payloads.shared_state,
                vec![event, SharedStateMessage::declaration()],
            ),
        ];
        for (keys, declarations) in cases {
            assert_eq!(listed(keys), declared_properties(&declarations));
        }
    }

    #[test]
    fn a_payload_lists_what_it_always_carries_apart_from_what_applies() {
        let keys = channel_payloads().breaker;
        assert_eq!(keys.required, ["call", "requestId", "host", "state"]);
        assert_eq!(keys.optional, ["failures"]);
    }
}
