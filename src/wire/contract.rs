//! The contract between the binding and the JavaScript facade, defined here once: the kinds of
//! outbox messages, the call flags, the error codes and the failure messages. `lib/call.cjs`
//! and `lib/errors.cjs` read them from [`contract`] when they load, so no number or text of the
//! contract is copied into JavaScript.

use napi_derive::napi;

use anilink_transport::error::{messages, ErrorCode};

use crate::outbox::Kind;
use crate::wire::failure::TYPE_ERROR;

/// Call flag: the call has an AbortSignal, so it can be cancelled by its id.
pub const CANCELLABLE: u32 = 1;
/// Call flag: its AbortSignal had fired before the call started (decisions D22).
pub const ALREADY_ABORTED: u32 = 2;
/// Call flag: a diagnostics channel has a subscriber, so the call sends every event, hooks or not.
pub const OBSERVED: u32 = 4;

/// The second element of an outbox message, `[callId, kind, payload?]`.
#[napi(object)]
pub struct MessageKinds {
    pub value: u8,
    pub nothing: u8,
    pub failure: u8,
    pub event: u8,
}

/// The bits of a call's `flags` argument.
#[napi(object)]
pub struct CallFlags {
    pub cancellable: u32,
    pub already_aborted: u32,
    pub observed: u32,
}

/// One entry of the public `AniLinkErrorCodes`: `API` → `"API_ERROR"`.
#[napi(object)]
pub struct ErrorCodeEntry {
    pub key: String,
    pub code: String,
}

/// The failure messages; `{name}` marks where a template takes a value.
#[napi(object)]
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

#[napi(object)]
pub struct Contract {
    pub kinds: MessageKinds,
    pub flags: CallFlags,
    /// In the order `AniLinkErrorCodes` lists them.
    pub error_codes: Vec<ErrorCodeEntry>,
    /// The code of a failure the facade throws as a `TypeError` (an invalid option).
    pub type_error_code: String,
    pub messages: FailureMessages,
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

/// The binding's side of the contract with the facade, read once when the facade loads.
#[napi(catch_unwind)]
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
    }
}
