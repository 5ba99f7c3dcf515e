//! `NativeClient`: one provider slot of an `AniLink` instance, as the JavaScript facade sees it.

use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::rc::Rc;
use std::sync::Arc;

use futures_util::FutureExt;
use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use anilink_providers::requests::{token_request, AniListEndpoint, MalEndpoint};
use anilink_providers::slot_schema::{
    self, ProviderSlot, AUTH_FIELDS, BASE_URL_FIELD, TOKEN_REFRESH_CALLBACKS,
};
use anilink_transport::attempt::Completed;
use anilink_transport::error::TransportError;
use anilink_transport::options::{OptValue, PartialOptions, TRANSPORT_OPTION_KEYS};
use anilink_transport::request::{host_of, RequestSpec};
use anilink_transport::ProviderClient;

use crate::calls;
use crate::convert::{enumerable_keys, kind_of, option_value};
use crate::driver;
use crate::outbox::{Kind, Outbox, Payload};
use crate::sink::HookEvents;
use crate::wire::contract::{ALREADY_ABORTED, CANCELLABLE, OBSERVED};
use crate::wire::failure::{throw, ErrorDescription};
use crate::wire::snapshot;

/// Which client a `NativeClient` is, parsed once at the napi boundary.
#[napi(string_enum = "lowercase")]
#[derive(Clone, Copy)]
pub enum Provider {
    AniList,
    Mal,
    /// No provider: POSTs to absolute URLs given per call (the OAuth token endpoints, the
    /// id-mapping service), without credentials of its own.
    External,
}

impl Provider {
    /// Its slot's fields besides the transport options (none for an external client).
    fn slot(self) -> Option<&'static ProviderSlot> {
        match self {
            Provider::AniList => Some(&slot_schema::ANILIST),
            Provider::Mal => Some(&slot_schema::MAL),
            Provider::External => None,
        }
    }

    /// The slot field that holds the access token.
    fn token_field(self) -> Option<&'static str> {
        self.slot().map(|slot| slot.token_field)
    }

    fn name(self) -> &'static str {
        self.slot().map_or("external", |slot| slot.name)
    }
}

/// What the facade read of the process for one slot when it was built (decisions D38).
#[napi(object)]
pub struct SlotEnvironment {
    /// The variables of [`slot_environment_variables`] that are set, by name.
    pub variables: std::collections::HashMap<String, String>,
    /// Whether the runtime has libuv (Node does; Bun and Deno only stub it): without it, calls
    /// always run on the worker.
    pub libuv: bool,
}

/// Every environment variable a slot reads, by exact name (exported in the contract).
pub fn slot_environment_variables() -> Vec<String> {
    let endpoints = [&slot_schema::ANILIST, &slot_schema::MAL]
        .into_iter()
        .map(|slot| slot.api.variable.to_string());
    endpoints
        .chain([driver::IO_THREAD_VARIABLE.to_string()])
        .chain(anilink_transport::client::environment_variables())
        .collect()
}

enum Endpoint {
    AniList(Box<AniListEndpoint>),
    Mal(MalEndpoint),
    External,
}

struct Inner {
    client: ProviderClient,
}

/// What a call needs of its client. The entry points that start calls are plain functions
/// taking the client's id ([`start_operation`], [`start_custom`], [`start_post`]): as methods,
/// napi-rs would check `this`'s type tag, unwrap it and register a borrow of it on every call
/// (measured: the entry went from 13,098 to 10,217 instructions per call).
struct CallTarget {
    inner: Arc<Inner>,
    /// Whether its calls run on the JavaScript thread where they can, decided when the slot
    /// was built; an invalid `ANILINK_IO_THREAD` fails each call (nothing is sent).
    javascript_thread: std::result::Result<bool, String>,
    /// Read and replaced on the JavaScript thread only (calls build their request from it
    /// before dispatch), so a token refresh swaps it without a lock.
    endpoint: RefCell<Endpoint>,
    outbox: Outbox,
}

thread_local! {
    /// The live clients of this JavaScript thread, by id (an index; freed ids are reused).
    static CALL_TARGETS: RefCell<Vec<Option<Rc<CallTarget>>>> = const { RefCell::new(Vec::new()) };
}

fn register_target(target: Rc<CallTarget>) -> u32 {
    CALL_TARGETS.with_borrow_mut(|targets| {
        let id = match targets.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                targets.push(None);
                targets.len() - 1
            }
        };
        targets[id] = Some(target);
        id as u32
    })
}

fn call_target(id: u32) -> Result<Rc<CallTarget>> {
    CALL_TARGETS
        .with_borrow(|targets| targets.get(id as usize).cloned().flatten())
        .ok_or_else(|| invalid_arg(format!("no client has the id {id}")))
}

#[napi]
pub struct NativeClient {
    target: Rc<CallTarget>,
    id: u32,
    /// What rebuilds the endpoint with a new token.
    base_url: String,
    client_id: Option<String>,
}

impl Drop for NativeClient {
    fn drop(&mut self) {
        // `try_with`: at thread exit the registry may be gone already.
        let _ = CALL_TARGETS.try_with(|targets| {
            if let Some(slot) = targets.borrow_mut().get_mut(self.id as usize) {
                *slot = None;
            }
        });
    }
}

/// Fail a call before dispatch: `error` is thrown as its description (see [`throw`]).
fn fail_before_dispatch<T>(env: &Env, error: &TransportError) -> Result<T> {
    Err(throw(env, &ErrorDescription::of(error)))
}

pub(crate) fn invalid_arg(message: String) -> Error {
    Error::new(Status::InvalidArg, message)
}

#[napi]
impl NativeClient {
    /// Build the client of one provider slot from its credentials object: auth fields,
    /// transport options and `baseUrl` (an external client takes transport options only).
    /// Throws (InvalidArg) with a message naming the option and the rule for anything invalid;
    /// the facade rethrows it as TypeError.
    ///
    /// `environment` is what the facade read of the process when the slot was built (decisions
    /// D38). `on_batch(text)` receives this client's messages, `[[callId, kind, payload?], …]`
    /// (the kinds are in `contract().kinds`), on the JavaScript thread.
    #[napi(factory, catch_unwind)]
    pub fn create(
        env: Env,
        provider: Provider,
        slot: Object<'_>,
        environment: SlotEnvironment,
        on_batch: Function<'_, String, ()>,
    ) -> Result<Self> {
        let mut options = PartialOptions::default();
        let mut strings: Vec<(String, String)> = Vec::new();
        for key in enumerable_keys(&slot)? {
            let value = option_value(&env, slot.get_named_property::<Unknown>(&key)?, &key, 0)?;
            if options
                .parse_key(&key, &value)
                .map_err(|e| invalid_arg(e.0))?
            {
                continue;
            }
            let is_callback = TOKEN_REFRESH_CALLBACKS.contains(&key.as_str());
            // An external client takes transport options only: no credentials, no endpoint.
            let Some(token_field) = provider.token_field() else {
                return Err(invalid_arg(format!(
                    "Unknown option key \"{key}\" for an external client. Valid transport options are: {}.",
                    TRANSPORT_OPTION_KEYS.join(", ")
                )));
            };
            let known =
                key == token_field || key == BASE_URL_FIELD || AUTH_FIELDS.contains(&key.as_str());
            if !known {
                return Err(invalid_arg(format!(
                    "Unknown credential key \"{key}\". Valid transport options are: {}. Provider auth fields are: {token_field}, {}. Endpoint option: {BASE_URL_FIELD}.",
                    TRANSPORT_OPTION_KEYS.join(", "),
                    AUTH_FIELDS.join(", ")
                )));
            }
            match (&value, is_callback) {
                (OptValue::Undefined | OptValue::Null, _) => {}
                (OptValue::Function, true) => {}
                (OptValue::String(text), false) => strings.push((key, text.clone())),
                // Credentials and URLs are described by kind, never echoed (D31).
                (other, true) => {
                    return Err(invalid_arg(format!(
                        "{key} must be a function (received {}).",
                        kind_of(other)
                    )))
                }
                (other, false) => {
                    return Err(invalid_arg(format!(
                        "{key} must be a string (received {}).",
                        kind_of(other)
                    )))
                }
            }
        }
        let field = |name: &str| {
            strings
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        let variable = |name: &str| environment.variables.get(name).cloned();
        let base_url = match provider.slot() {
            Some(slot) => {
                let url = field(BASE_URL_FIELD)
                    .or_else(|| variable(slot.api.variable).filter(|v| !v.trim().is_empty()))
                    .unwrap_or_else(|| slot.api.default.into());
                whatwg_base_url(&env, &url, provider.name())?
            }
            None => String::new(),
        };
        let client_id = field("clientId");
        let token = provider.token_field().and_then(field);
        let endpoint = build_endpoint(provider, &base_url, token.as_deref(), client_id.as_deref())?;
        let javascript_thread =
            driver::wants_javascript_thread(variable(driver::IO_THREAD_VARIABLE).as_deref())
                .map(|wanted| wanted && environment.libuv);
        let target = Rc::new(CallTarget {
            inner: Arc::new(Inner {
                client: ProviderClient::new(options, provider.name(), variable)
                    .map_err(invalid_arg)?,
            }),
            javascript_thread,
            endpoint: RefCell::new(endpoint),
            outbox: Outbox::new(on_batch)?,
        });
        Ok(Self {
            id: register_target(target.clone()),
            target,
            base_url,
            client_id,
        })
    }

    /// Whether this slot's TLS connections skip certificate verification
    /// (`NODE_TLS_REJECT_UNAUTHORIZED=0` when it was built, decisions D37): the facade warns.
    #[napi(getter)]
    pub fn skips_certificate_verification(&self) -> bool {
        self.target.inner.client.skips_certificate_verification()
    }

    /// Where this slot's calls run on this thread: `"javascript"` (driven by its own event
    /// loop) or `"worker"` (a tokio worker thread); see [`driver`]. Throws when
    /// `ANILINK_IO_THREAD` was invalid.
    #[napi(catch_unwind)]
    pub fn io_thread(&self, env: Env) -> Result<&'static str> {
        Ok(match self.target.driver(&env)? {
            Some(_) => "javascript",
            None => "worker",
        })
    }

    /// What [`start_operation`], [`start_custom`] and [`start_post`] take to name this client.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Send `token` from now on (a refreshed access token); calls already started keep theirs.
    #[napi(catch_unwind)]
    pub fn set_token(&self, token: String) -> Result<()> {
        let provider = match &*self.target.endpoint.borrow() {
            Endpoint::AniList(_) => Provider::AniList,
            Endpoint::Mal(_) => Provider::Mal,
            Endpoint::External => {
                return Err(invalid_arg(
                    "an external client has no token of its own".into(),
                ))
            }
        };
        let endpoint = build_endpoint(
            provider,
            &self.base_url,
            Some(&token),
            self.client_id.as_deref(),
        )?;
        *self.target.endpoint.borrow_mut() = endpoint;
        Ok(())
    }

    /// A frozen-by-the-facade copy of the slot's cross-request state (api.md §6, decisions D20),
    /// with the stats of the slot's response cache when it has one.
    #[napi(catch_unwind)]
    pub fn snapshot(&self) -> Result<Value> {
        let inner = &self.target.inner;
        let own_host = match &*self.target.endpoint.borrow() {
            Endpoint::AniList(e) => host_of(e.url()),
            Endpoint::Mal(e) => host_of(e.url()),
            Endpoint::External => None,
        };
        snapshot::transport_state(&inner.client, own_host.as_deref())
            .map_err(|error| Error::from_reason(error.to_string()))
    }
}

impl CallTarget {
    /// The driver its calls run on, None for the worker.
    fn driver(&self, env: &Env) -> Result<Option<&'static driver::Driver>> {
        match &self.javascript_thread {
            Ok(true) => Ok(driver::of_this_thread(env)),
            Ok(false) => Ok(None),
            Err(message) => Err(invalid_arg(message.clone())),
        }
    }

    /// Start a catalog operation: AniList (`"query.media"`, variables, fields) or MAL
    /// (`"anime.get"`, params, fields), the arguments and fields as JSON text with the problems
    /// the facade found reading them. Its result arrives through the outbox; a failure before
    /// any I/O is thrown as an error description instead. `flags`: [`CANCELLABLE`] | [`ALREADY_ABORTED`].
    // One parameter per argument of the JavaScript call; grouping them would only add a
    // conversion on the hottest path.
    #[allow(clippy::too_many_arguments)]
    fn operation(
        &self,
        env: &Env,
        operation: String,
        input: Option<String>,
        fields: Option<String>,
        problems: Option<Vec<String>>,
        options: Option<Object<'_>>,
        call_id: u32,
        flags: u32,
    ) -> Result<()> {
        let mut problems = problems.unwrap_or_default();
        let input = caller_json(input)?.unwrap_or(Value::Null);
        let fields = caller_json(fields)?;
        let spec = match &*self.endpoint.borrow() {
            Endpoint::AniList(endpoint) => {
                let fields = anilist_fields(fields, &mut problems);
                without_problems(problems)
                    .and_then(|()| endpoint.operation(&operation, &input, fields.as_deref()))
            }
            Endpoint::Mal(endpoint) => without_problems(problems)
                .and_then(|()| endpoint.operation(&operation, &input, fields.as_ref())),
            Endpoint::External => {
                return Err(invalid_arg(
                    "an external client has no catalog operations".into(),
                ))
            }
        };
        self.start(env, spec, options, call_id, flags)
    }

    /// Start `anilist.custom(document, variables)`; returns as [`CallTarget::operation`].
    #[allow(clippy::too_many_arguments)]
    fn custom(
        &self,
        env: &Env,
        document: String,
        variables: Option<String>,
        problems: Option<Vec<String>>,
        options: Option<Object<'_>>,
        call_id: u32,
        flags: u32,
    ) -> Result<()> {
        let spec = match &*self.endpoint.borrow() {
            Endpoint::AniList(endpoint) => without_problems(problems.unwrap_or_default())
                .and_then(|()| endpoint.custom(&document, variables.as_deref())),
            _ => {
                return Err(invalid_arg(
                    "custom documents are an AniList feature".into(),
                ))
            }
        };
        self.start(env, spec, options, call_id, flags)
    }

    /// Start a POST of an external client to `url`: `body` is sent as `content_type`, the
    /// answer resolves as JSON (or text). Returns as [`CallTarget::operation`].
    #[allow(clippy::too_many_arguments)]
    fn post(
        &self,
        env: &Env,
        url: String,
        content_type: String,
        body: String,
        options: Option<Object<'_>>,
        call_id: u32,
        flags: u32,
    ) -> Result<()> {
        let Endpoint::External = &*self.endpoint.borrow() else {
            return Err(invalid_arg(
                "posts to absolute URLs need an external client".into(),
            ));
        };
        self.start(
            env,
            token_request(&url, &content_type, body),
            options,
            call_id,
            flags,
        )
    }

    /// Dispatch a built request, or fail before dispatch with the error that building it gave.
    fn start(
        &self,
        env: &Env,
        spec: std::result::Result<RequestSpec, TransportError>,
        options: Option<Object<'_>>,
        call_id: u32,
        flags: u32,
    ) -> Result<()> {
        match spec {
            Ok(spec) => self.dispatch(env, spec, options, call_id, flags),
            Err(error) => fail_before_dispatch(env, &error),
        }
    }

    fn dispatch(
        &self,
        env: &Env,
        spec: RequestSpec,
        options: Option<Object<'_>>,
        call_id: u32,
        flags: u32,
    ) -> Result<()> {
        let request_options = match options {
            Some(object) => Some(request_options(env, &object)?),
            None => None,
        };
        let driver = self.driver(env)?;
        let mut options = self
            .inner
            .client
            .options(request_options.as_ref(), spec.is_write);
        if flags & OBSERVED != 0 {
            let observed = options.hooks.observed();
            std::sync::Arc::make_mut(&mut options).hooks = observed;
        }
        let inner = self.inner.clone();
        let outbox = self.outbox.clone();
        let registration = calls::register(call_id, flags & CANCELLABLE != 0);
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
        let pool = inner.client.pool(&options);
        outbox.call_started(env);
        // Boxed, so the task holds a pointer: unboxed, its future (kilobytes) was copied whole
        // by every move on the way into the task and by every stage change in it.
        let call: driver::Call = Box::pin(async move {
            let outcome = contained(inner.client.execute(
                pool,
                &spec,
                &options,
                &events,
                &registration.cancellation,
            ))
            .await;
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
            Some(driver) => driver.start(call),
            None => {
                napi::bindgen_prelude::spawn(call);
            }
        }
        Ok(())
    }
}

/// Start a catalog operation of client `client` (see [`CallTarget::operation`]).
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
    call_target(client)?.operation(
        &env, operation, input, fields, problems, options, call_id, flags,
    )
}

/// Start `anilist.custom` of client `client` (see [`CallTarget::custom`]).
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
    call_target(client)?.custom(&env, document, variables, problems, options, call_id, flags)
}

/// Start a POST of external client `client` (see [`CallTarget::post`]).
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
    call_target(client)?.post(&env, url, content_type, body, options, call_id, flags)
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

/// `baseUrl` parsed by the WHATWG rules, with Node's own `URL` (decisions D30): what `new URL`
/// rejects (a port above 65535, …) is refused here, and the endpoint gets its normalized `href`.
fn whatwg_base_url(env: &Env, url: &str, provider: &str) -> Result<String> {
    let rule = format!("{provider} baseUrl must be an absolute http:// or https:// URL");
    let constructor: Function<'_, String, Unknown> = env.get_global()?.get_named_property("URL")?;
    let can_parse: Function<'_, String, bool> = constructor.get_named_property("canParse")?;
    if !can_parse.call(url.to_string())? {
        return Err(invalid_arg(format!(
            "{rule} (received a string that new URL() rejects; a port must be 0 to 65535)."
        )));
    }
    let parsed: Object<'_> = unsafe { constructor.new_instance(url.to_string())?.cast()? };
    let protocol: String = parsed.get_named_property("protocol")?;
    if protocol != "http:" && protocol != "https:" {
        return Err(invalid_arg(format!(
            "{rule} (received a URL with another scheme)."
        )));
    }
    parsed.get_named_property("href")
}

/// The endpoint of a provider slot with its credentials (an external client has none).
fn build_endpoint(
    provider: Provider,
    base_url: &str,
    token: Option<&str>,
    client_id: Option<&str>,
) -> Result<Endpoint> {
    Ok(match provider {
        Provider::AniList => Endpoint::AniList(Box::new(
            AniListEndpoint::new(base_url, token).map_err(invalid_arg)?,
        )),
        Provider::Mal => {
            Endpoint::Mal(MalEndpoint::new(base_url, token, client_id).map_err(invalid_arg)?)
        }
        Provider::External => Endpoint::External,
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

/// AniList `fields`: absent, or an array of dot-path strings.
fn anilist_fields(fields: Option<Value>, problems: &mut Vec<String>) -> Option<Vec<String>> {
    match fields {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.iter().all(Value::is_string) => Some(
            items
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        ),
        Some(other) => {
            problems.push(format!(
                "Invalid fields: {other}. Expected an array of field paths (strings)"
            ));
            None
        }
    }
}

/// The facade's reading of a call's values found nothing JSON cannot carry, or the call fails
/// with a validation error listing what it found.
fn without_problems(problems: Vec<String>) -> std::result::Result<(), TransportError> {
    if problems.is_empty() {
        Ok(())
    } else {
        Err(TransportError::validation(problems))
    }
}

/// A caller's variables, arguments or fields, as the facade wrote them (`lib/json-text.cjs`
/// reads them once and reports what JSON cannot carry as problems, decisions D33). The text is
/// the facade's own, so a parse failure is a broken contract, not bad input.
fn caller_json(text: Option<String>) -> Result<Option<Value>> {
    text.map(|text| serde_json::from_str(&text))
        .transpose()
        .map_err(|error| invalid_arg(format!("caller values must arrive as JSON text: {error}")))
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
