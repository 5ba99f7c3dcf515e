//! The contract between the binding and the JavaScript facade, defined here once: the kinds of
//! outbox messages, the call flags, the error codes and the failure messages, the slot schema
//! (token field per provider, credential fields, `baseUrl`), every upstream URL with the
//! environment variable that overrides it, the variables a slot reads (decisions D38), the
//! hook names, and what each hook's events mean to the diagnostics channels. [`contract`]
//! gathers them into `lib/contract.generated.json`, which the facade reads as it loads: no
//! number, name or text of the contract is copied into JavaScript, and loading the package
//! needs no native call, so the addon itself loads only when first needed (issue 40,
//! start-up). The `wire::generated` test writes the file and fails when it drifts.

use std::collections::HashMap;

use napi_derive::napi;

#[cfg(test)]
pub use facts::contract;

/// Call flag: the call has an AbortSignal, so it can be cancelled by its id.
pub const CANCELLABLE: u32 = 1;
/// Call flag: its AbortSignal had fired before the call started (decisions D22).
pub const ALREADY_ABORTED: u32 = 2;
/// Call flag: a diagnostics channel has a subscriber, so the call sends every event, hooks or not.
pub const OBSERVED: u32 = 4;

/// The contract's facts, gathered by the generator's test only: a build of the addon carries
/// them in the facade's generated file, not as a native call.
#[cfg(test)]
mod facts {
    use serde::Serialize;

    use anilink_providers::slot::schema::{self as slot_schema, Overridable, ProviderSlot};
    use anilink_transport::error::{messages, ErrorCode};
    use anilink_transport::options::Hook;

    use super::{ALREADY_ABORTED, CANCELLABLE, OBSERVED};
    use crate::native_client::slot_environment_variables;
    use crate::outbox::Kind;
    use crate::wire::channels::{BreakerState, SharedStateSwitch};
    use crate::wire::diagnostic::{DiagnosticKind, SharedStateCode};
    use crate::wire::failure::TYPE_ERROR;
    use crate::wire::hook_message::DIAGNOSTIC_HOOK;

    /// The second element of an outbox message, `[callId, kind, payload?]`.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct MessageKinds {
        pub value: u8,
        pub nothing: u8,
        pub failure: u8,
        pub event: u8,
    }

    /// The bits of a call's `flags` argument.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CallFlags {
        pub cancellable: u32,
        pub already_aborted: u32,
        pub observed: u32,
    }

    /// One entry of the public `AniLinkErrorCodes`: `API` → `"API_ERROR"`.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ErrorCodeEntry {
        pub key: String,
        pub code: String,
    }

    /// The failure messages; `{name}` marks where a template takes a value.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct FailureMessages {
        pub network: String,
        pub timeout: String,
        pub aborted: String,
        pub unknown: String,
        pub auth: String,
        /// `{auth}`, `{operation}`.
        pub auth_for_operation: String,
        /// `{status}`.
        pub http_status: String,
        /// `{messages}`.
        pub graphql: String,
        /// An entry of `errors` without a string message.
        pub graphql_entry: String,
        /// `{details}`.
        pub validation: String,
    }

    /// A URL's default and the environment variable that replaces it when set and not blank.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct OverridableUrl {
        pub default: String,
        pub variable: String,
    }

    impl From<Overridable> for OverridableUrl {
        fn from(url: Overridable) -> Self {
            Self {
                default: url.default.to_string(),
                variable: url.variable.to_string(),
            }
        }
    }

    /// One provider's slot fields besides the transport options.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ProviderSlotSchema {
        pub token_field: String,
        /// The API endpoint: the binding reads its variable when it builds the slot.
        pub api: OverridableUrl,
    }

    impl From<&ProviderSlot> for ProviderSlotSchema {
        fn from(slot: &ProviderSlot) -> Self {
            Self {
                token_field: slot.token_field.to_string(),
                api: slot.api.into(),
            }
        }
    }

    /// What a provider slot takes besides the transport options.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SlotSchema {
        pub anilist: ProviderSlotSchema,
        pub mal: ProviderSlotSchema,
        /// The credential fields every provider slot takes after its token field.
        pub auth_fields: Vec<String>,
        /// The field that replaces a slot's API endpoint.
        pub base_url_field: String,
    }

    /// The URLs the facade itself calls, read per call with their overrides.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct FacadeUrls {
        pub anilist_token: OverridableUrl,
        pub mal_token: OverridableUrl,
        pub id_mapping: OverridableUrl,
    }

    /// What the events of each hook mean to the diagnostics channels (lib/channels.cjs), so the
    /// facade publishes them without a hook name of its own.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct ChannelEvents {
        /// An attempt starts (`anilink:attempt:start`).
        pub attempt_start: Vec<String>,
        /// The open attempt got its answer (published when the attempt ends).
        pub answer: Vec<String>,
        /// A failure report: it ends the open attempt with its retry decision (`anilink:attempt:end`).
        pub failure: Vec<String>,
        /// A pacing wait (`anilink:admission`).
        pub admission: Vec<String>,
        /// A host's breaker changed state (`anilink:breaker`).
        pub breaker: Vec<BreakerTransition>,
        /// A shared-state diagnostic (`anilink:shared-state`).
        pub shared_state: SharedStateEvents,
    }

    /// A hook whose event means a breaker's new state.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct BreakerTransition {
        pub hook: String,
        /// A [`BreakerState`]: `open` or `closed`.
        pub state: String,
    }

    /// How a shared-state diagnostic arrives: under the diagnostic pseudo-hook, with its kind, and
    /// the state each of its codes means.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SharedStateEvents {
        pub hook: String,
        pub kind: String,
        pub states: Vec<SharedStateTransition>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct SharedStateTransition {
        pub code: String,
        /// A [`SharedStateSwitch`]: `fallback` or `rejoined`.
        pub state: String,
    }

    /// What a hook's event is to the diagnostics channels; a new hook does not compile until it
    /// has one.
    enum ChannelRole {
        AttemptStart,
        Answer,
        Failure,
        Admission,
        Breaker(BreakerState),
    }

    fn channel_role(hook: Hook) -> ChannelRole {
        match hook {
            Hook::OnRequestStart => ChannelRole::AttemptStart,
            Hook::OnResponse => ChannelRole::Answer,
            Hook::OnError | Hook::OnRetry => ChannelRole::Failure,
            Hook::OnPace => ChannelRole::Admission,
            Hook::OnCircuitOpen => ChannelRole::Breaker(BreakerState::Open),
            Hook::OnCircuitClose => ChannelRole::Breaker(BreakerState::Closed),
        }
    }

    /// The state a shared-state code means on `anilink:shared-state`.
    fn shared_state(code: SharedStateCode) -> SharedStateSwitch {
        match code {
            SharedStateCode::Unavailable => SharedStateSwitch::Fallback,
            SharedStateCode::Rejoined => SharedStateSwitch::Rejoined,
        }
    }

    fn channel_events() -> ChannelEvents {
        let mut events = ChannelEvents {
            attempt_start: Vec::new(),
            answer: Vec::new(),
            failure: Vec::new(),
            admission: Vec::new(),
            breaker: Vec::new(),
            shared_state: SharedStateEvents {
                hook: DIAGNOSTIC_HOOK.to_string(),
                kind: DiagnosticKind::SharedState.as_str().to_string(),
                states: [SharedStateCode::Unavailable, SharedStateCode::Rejoined]
                    .into_iter()
                    .map(|code| SharedStateTransition {
                        code: code.as_str().to_string(),
                        state: shared_state(code).as_str().to_string(),
                    })
                    .collect(),
            },
        };
        for hook in Hook::ALL {
            let key = hook.key().to_string();
            match channel_role(hook) {
                ChannelRole::AttemptStart => events.attempt_start.push(key),
                ChannelRole::Answer => events.answer.push(key),
                ChannelRole::Failure => events.failure.push(key),
                ChannelRole::Admission => events.admission.push(key),
                ChannelRole::Breaker(state) => events.breaker.push(BreakerTransition {
                    hook: key,
                    state: state.as_str().to_string(),
                }),
            }
        }
        events
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct Contract {
        pub kinds: MessageKinds,
        pub flags: CallFlags,
        /// In the order `AniLinkErrorCodes` lists them.
        pub error_codes: Vec<ErrorCodeEntry>,
        /// The code of a failure the facade throws as a `TypeError` (an invalid option).
        pub type_error_code: String,
        pub messages: FailureMessages,
        pub slot: SlotSchema,
        pub urls: FacadeUrls,
        /// Every environment variable a slot reads, by exact name: the facade reads these from
        /// `process.env` when it builds a slot (decisions D38).
        pub slot_environment: Vec<String>,
        /// The hooks the transport calls, by option key.
        pub hooks: Vec<String>,
        /// The `hook` of an event message that carries a diagnostic record instead of a context.
        pub diagnostic_hook: String,
        pub channel_events: ChannelEvents,
    }

    /// The key of a code in the public `AniLinkErrorCodes` object (api.md §5).
    fn public_key(code: ErrorCode) -> &'static str {
        match code {
            ErrorCode::Api => "API",
            ErrorCode::GraphQl => "GRAPHQL",
            ErrorCode::Rest => "REST",
            ErrorCode::Network => "NETWORK",
            ErrorCode::Timeout => "TIMEOUT",
            ErrorCode::Aborted => "ABORTED",
            ErrorCode::CircuitOpen => "CIRCUIT",
            ErrorCode::Auth => "AUTH",
            ErrorCode::Validation => "VALIDATION",
            ErrorCode::Unknown => "UNKNOWN",
        }
    }

    /// The binding's side of the contract with the facade, as `lib/contract.generated.json` holds it.
    pub fn contract() -> Contract {
        Contract {
            kinds: MessageKinds {
                value: Kind::Value as u8,
                nothing: Kind::Nothing as u8,
                failure: Kind::Failure as u8,
                event: Kind::Event as u8,
            },
            flags: CallFlags {
                cancellable: CANCELLABLE,
                already_aborted: ALREADY_ABORTED,
                observed: OBSERVED,
            },
            error_codes: ErrorCode::ALL
                .iter()
                .map(|&code| ErrorCodeEntry {
                    key: public_key(code).to_string(),
                    code: code.as_str().to_string(),
                })
                .collect(),
            type_error_code: TYPE_ERROR.to_string(),
            messages: FailureMessages {
                network: messages::NETWORK.to_string(),
                timeout: messages::TIMEOUT.to_string(),
                aborted: messages::ABORTED.to_string(),
                unknown: messages::UNKNOWN.to_string(),
                auth: messages::AUTH.to_string(),
                auth_for_operation: messages::AUTH_FOR_OPERATION.to_string(),
                http_status: messages::HTTP_STATUS.to_string(),
                graphql: messages::GRAPHQL.to_string(),
                graphql_entry: messages::GRAPHQL_ENTRY.to_string(),
                validation: messages::VALIDATION.to_string(),
            },
            slot: SlotSchema {
                anilist: (&slot_schema::ANILIST).into(),
                mal: (&slot_schema::MAL).into(),
                auth_fields: strings(&slot_schema::AUTH_FIELDS),
                base_url_field: slot_schema::BASE_URL_FIELD.to_string(),
            },
            urls: FacadeUrls {
                anilist_token: slot_schema::ANILIST_TOKEN.into(),
                mal_token: slot_schema::MAL_TOKEN.into(),
                id_mapping: slot_schema::ID_MAPPING.into(),
            },
            slot_environment: slot_environment_variables(),
            hooks: Hook::ALL
                .iter()
                .map(|hook| hook.key().to_string())
                .collect(),
            diagnostic_hook: DIAGNOSTIC_HOOK.to_string(),
            channel_events: channel_events(),
        }
    }

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|item| item.to_string()).collect()
    }

    mod tests {
        use super::*;

        #[test]
        fn every_hook_means_one_thing_to_the_diagnostics_channels() {
            let events = channel_events();
            let mut hooks: Vec<String> = [
                events.attempt_start,
                events.answer,
                events.failure,
                events.admission,
            ]
            .concat();
            hooks.extend(events.breaker.into_iter().map(|transition| transition.hook));
            hooks.sort();
            let mut all: Vec<String> = Hook::ALL.iter().map(|hook| hook.key().into()).collect();
            all.sort();
            assert_eq!(hooks, all);
            assert_eq!(events.shared_state.hook, DIAGNOSTIC_HOOK);
            let codes: Vec<&str> = events
                .shared_state
                .states
                .iter()
                .map(|transition| transition.code.as_str())
                .collect();
            let declared: Vec<&str> = SharedStateCode::ALL
                .iter()
                .map(|code| code.as_str())
                .collect();
            assert_eq!(codes, declared);
        }
    }
}

/// A failure template of the contract's `messages` with each `{name}` replaced, by the
/// transport's one rule ([`fill`](anilink_transport::error::fill)): the JavaScript error classes
/// build their messages with it when a caller constructs one.
#[napi(catch_unwind)]
pub fn fill_message(template: String, values: HashMap<String, String>) -> String {
    let values: Vec<(&str, &str)> = values
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    anilink_transport::error::fill(&template, &values)
}
