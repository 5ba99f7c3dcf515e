//! The entry points that start a call: each converts its own arguments and builds its request
//! on the client's endpoint; everything after that (per-call options, cancellation, hooks,
//! where the call runs, how its outcome reaches the outbox) is one path, [`dispatch`].
//!
//! A call's result arrives through the client's outbox; a failure before any I/O is thrown as
//! an error description instead (see [`throw`]).

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use anilink_providers::slot::NotBuilt;
use anilink_transport::attempt::{CallInputs, Completed};
use anilink_transport::error::TransportError;
use anilink_transport::executor::Task;
use anilink_transport::options::PartialOptions;
use anilink_transport::request::RequestSpec;

use crate::cancellation;
use crate::client_registry::{self, RegisteredClient};
use crate::convert::{enumerable_keys, invalid_arg, option_value};
use crate::outbox::{Kind, Payload};
use crate::sink::HookEvents;
use crate::wire::contract::{ALREADY_ABORTED, CANCELLABLE, OBSERVED};
use crate::wire::failure::{throw, ErrorDescription};

/// What every entry point takes after its own arguments: the call's per-request options, the
/// id the facade chose for it and its flags ([`CANCELLABLE`] | [`ALREADY_ABORTED`] | [`OBSERVED`]).
struct CallParameters<'env> {
    options: Option<Object<'env>>,
    call_id: u32,
    flags: u32,
}

/// Start a catalog operation of client `client`: AniList (`"query.media"`, variables, fields)
/// or MAL (`"anime.get"`, params, fields), the arguments and fields as JSON text with the
/// problems the facade found reading them.
// One parameter per argument of the JavaScript call; grouping them would only add a
// conversion on the hottest path.
#[allow(clippy::too_many_arguments)]
#[napi(catch_unwind)]
pub fn start_operation(
    env: Env,
    client: u32,
    operation: String,
    input: Option<String>,
    fields: Option<String>,
    problems: Option<Vec<String>>,
    options: Option<Object<'_>>,
    call_id: u32,
    flags: u32,
) -> Result<()> {
    let client = client_registry::lookup(client)?;
    let request = client.endpoint.borrow().operation(
        &operation,
        input.as_deref(),
        fields.as_deref(),
        problems.unwrap_or_default(),
    );
    start(
        &env,
        &client,
        request,
        CallParameters {
            options,
            call_id,
            flags,
        },
    )
}

/// Start `anilist.custom(document, variables)` of client `client`, the variables as JSON text.
#[allow(clippy::too_many_arguments)]
#[napi(catch_unwind)]
pub fn start_custom(
    env: Env,
    client: u32,
    document: String,
    variables: Option<String>,
    problems: Option<Vec<String>>,
    options: Option<Object<'_>>,
    call_id: u32,
    flags: u32,
) -> Result<()> {
    let client = client_registry::lookup(client)?;
    let request = client.endpoint.borrow().custom(
        &document,
        variables.as_deref(),
        problems.unwrap_or_default(),
    );
    start(
        &env,
        &client,
        request,
        CallParameters {
            options,
            call_id,
            flags,
        },
    )
}

/// Start a POST of external client `client` to `url`: `body` is sent as `content_type`, the
/// answer resolves as JSON (or text).
#[allow(clippy::too_many_arguments)]
#[napi(catch_unwind)]
pub fn start_post(
    env: Env,
    client: u32,
    url: String,
    content_type: String,
    body: String,
    options: Option<Object<'_>>,
    call_id: u32,
    flags: u32,
) -> Result<()> {
    let client = client_registry::lookup(client)?;
    let request = client.endpoint.borrow().post(&url, &content_type, body);
    start(
        &env,
        &client,
        request,
        CallParameters {
            options,
            call_id,
            flags,
        },
    )
}

/// Dispatch a built request, or fail: a request for the wrong kind of client is a broken
/// contract (InvalidArg), a refused one fails before dispatch as its error description.
fn start(
    env: &Env,
    client: &RegisteredClient,
    request: std::result::Result<RequestSpec, NotBuilt>,
    parameters: CallParameters<'_>,
) -> Result<()> {
    match request {
        Ok(spec) => dispatch(env, client, spec, parameters),
        Err(NotBuilt::WrongClient(message)) => Err(invalid_arg(message.into())),
        Err(NotBuilt::NotJson(error)) => Err(not_json(error)),
        Err(NotBuilt::Refused(error)) => Err(throw(env, &ErrorDescription::of(&error))),
    }
}

fn dispatch(
    env: &Env,
    client: &RegisteredClient,
    spec: RequestSpec,
    CallParameters {
        options,
        call_id,
        flags,
    }: CallParameters<'_>,
) -> Result<()> {
    let request_options = match options {
        Some(object) => Some(request_options(env, &object)?),
        None => None,
    };
    let driver = client.driver(env)?;
    let provider_client = client.provider_client.clone();
    let mut options = provider_client.options(request_options.as_ref(), spec.is_write);
    if flags & OBSERVED != 0 {
        let observed = options.hooks.observed();
        std::sync::Arc::make_mut(&mut options).hooks = observed;
    }
    let outbox = client.outbox.clone();
    let registration = cancellation::register(call_id, flags & CANCELLABLE != 0);
    if flags & ALREADY_ABORTED != 0 {
        registration.cancellation.cancel();
    }
    // Only a call with hooks, or observed, sends events: the resolved options are the one
    // place that decides which hooks a call has. A slot sharing state also sends its diagnostics.
    let events =
        (!options.hooks.is_empty() || options.shared_state.is_some()).then(|| HookEvents {
            outbox: outbox.clone(),
            call_id,
            hooks: options.hooks,
        });
    let pool = provider_client.pool(&options);
    outbox.call_started(env);
    // Boxed, so the task holds a pointer: unboxed, its future (kilobytes) was copied whole
    // by every move on the way into the task and by every stage change in it.
    let task: Task = Box::pin(async move {
        let call = CallInputs {
            spec: &spec,
            options: &options,
            sink: &events,
            cancel: &registration.cancellation,
        };
        let outcome = contained(provider_client.execute(pool, call)).await;
        drop(registration);
        match outcome {
            Ok(Completed {
                result: Some(result),
                request_id,
            }) => outbox.send(
                call_id,
                Kind::Value,
                Payload::Result {
                    json: &result,
                    request_id: &request_id,
                },
            ),
            Ok(Completed { result: None, .. }) => {
                outbox.send(call_id, Kind::Nothing, Payload::None)
            }
            Err(error) => outbox.send(
                call_id,
                Kind::Failure,
                Payload::Failure(&ErrorDescription::of(&error)),
            ),
        }
    });
    match driver {
        Some(driver) => driver.start(task),
        None => {
            napi::bindgen_prelude::spawn(task);
        }
    }
    Ok(())
}

/// Run a call so that a panic anywhere inside it becomes an `UNKNOWN_ERROR` failure of that
/// call instead of crossing into JavaScript. A plain function, not an `async fn`: one of those
/// would keep the call's future twice in every task (its argument and the future it awaits).
fn contained<T>(
    call: impl std::future::Future<Output = std::result::Result<T, TransportError>>,
) -> impl std::future::Future<Output = std::result::Result<T, TransportError>> {
    AssertUnwindSafe(call).catch_unwind().map(|caught| {
        caught.unwrap_or_else(|_| {
            Err(TransportError::unknown(
                "internal error (a panic was caught)",
            ))
        })
    })
}

/// Per-request transport options. Keys the transport does not know (the facade's `fields`)
/// are ignored here; invalid values are a TypeError before any I/O or hook (decisions D10).
fn request_options(env: &Env, object: &Object<'_>) -> Result<PartialOptions> {
    let mut options = PartialOptions::default();
    for key in enumerable_keys(object)? {
        let value = option_value(
            env,
            object.get_named_property::<Unknown>(&key)?,
            &format!("options.{key}"),
            0,
        )?;
        if let Err(error) = options.parse_request_key(&key, &value) {
            return Err(throw(env, &ErrorDescription::type_error(&error.0)));
        }
    }
    Ok(options)
}

/// The facade's JSON text of a caller's values did not parse (`lib/json-text.cjs` reads them
/// once and reports what JSON cannot carry as problems, decisions D33): the text is the
/// facade's own, so this is a broken contract, not bad input.
fn not_json(error: serde_json::Error) -> napi::Error {
    invalid_arg(format!("caller values must arrive as JSON text: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use anilink_transport::error::ErrorCode;

    #[tokio::test]
    async fn a_panic_inside_a_call_becomes_an_unknown_error() {
        let outcome: std::result::Result<(), TransportError> =
            contained(async { panic!("boom") }).await;
        let error = outcome.expect_err("the panic must surface as an error");
        assert_eq!(error.code, ErrorCode::Unknown);
        assert_eq!(error.message, "The request failed.");
    }

    #[test]
    fn containing_a_call_keeps_its_future_once() {
        let call = async {
            let room = [0u8; 4096];
            std::future::ready(()).await;
            Ok::<_, TransportError>(room.len())
        };
        let inner = std::mem::size_of_val(&call);
        let wrapped = std::mem::size_of_val(&contained(call));
        assert!(wrapped < inner + 64, "{inner} bytes became {wrapped}");
    }

    #[tokio::test]
    async fn results_pass_through_unchanged() {
        assert_eq!(contained(async { Ok::<_, TransportError>(7) }).await, Ok(7));
    }
}
