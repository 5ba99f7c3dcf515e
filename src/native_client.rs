//! `NativeClient`: one provider slot of an `AniLink` instance, as the JavaScript facade sees it.
//!
//! The slot's rules live in [`anilink_providers::slot`]; this module converts the facade's
//! object into the values those rules read, registers the client its calls name by id
//! ([`crate::client_registry`]) and answers the facade's questions about it.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;
use serde_json::Value;

use anilink_providers::slot::{self, EndpointSettings, SlotReader};
use anilink_transport::ProviderClient;

use crate::client_registry::{self, RegisteredClient};
use crate::convert::{enumerable_keys, invalid_arg, option_value};
use crate::driver;
use crate::outbox::Outbox;
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

impl From<Provider> for slot::Provider {
    fn from(provider: Provider) -> Self {
        match provider {
            Provider::AniList => slot::Provider::AniList,
            Provider::Mal => slot::Provider::Mal,
            Provider::External => slot::Provider::External,
        }
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

/// Every environment variable a slot reads, by exact name: the facade reads these from
/// `process.env` when it builds a slot (decisions D38), as the contract lists them (gathered by
/// the generator's test into lib/contract.generated.json).
#[cfg(test)]
pub fn slot_environment_variables() -> Vec<String> {
    slot::endpoint_variables()
        .chain([driver::IO_THREAD_VARIABLE])
        .map(str::to_string)
        .chain(anilink_transport::client::environment_variables())
        .collect()
}

#[napi]
pub struct NativeClient {
    client: Rc<RegisteredClient>,
    id: u32,
    /// What rebuilds the endpoint with a new token.
    endpoint_settings: EndpointSettings,
}

impl Drop for NativeClient {
    fn drop(&mut self) {
        client_registry::release(self.id);
    }
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
    /// (the kinds are the contract's `kinds`), on the JavaScript thread.
    #[napi(factory, catch_unwind)]
    pub fn create(
        env: Env,
        provider: Provider,
        slot: Object<'_>,
        environment: SlotEnvironment,
        on_batch: Function<'_, String, ()>,
    ) -> Result<Self> {
        let provider = slot::Provider::from(provider);
        let mut reader = SlotReader::new(provider);
        for key in enumerable_keys(&slot)? {
            let value = option_value(&env, slot.get_named_property::<Unknown>(&key)?, &key, 0)?;
            reader.read(key, &value).map_err(invalid_arg)?;
        }
        let variable = |name: &str| environment.variables.get(name).cloned();
        let settings = reader.finish(variable).map_err(invalid_arg)?;
        let javascript_thread =
            driver::wants_javascript_thread(variable(driver::IO_THREAD_VARIABLE).as_deref())
                .map(|wanted| wanted && environment.libuv);
        let client = Rc::new(RegisteredClient {
            provider_client: Arc::new(
                ProviderClient::new(settings.options, provider.name(), variable)
                    .map_err(invalid_arg)?,
            ),
            javascript_thread,
            endpoint: RefCell::new(settings.endpoint),
            outbox: Outbox::new(on_batch)?,
        });
        Ok(Self {
            id: client_registry::register(client.clone()),
            client,
            endpoint_settings: settings.endpoint_settings,
        })
    }

    /// Whether this slot's TLS connections skip certificate verification
    /// (`NODE_TLS_REJECT_UNAUTHORIZED=0` when it was built, decisions D37): the facade warns.
    #[napi(getter)]
    pub fn skips_certificate_verification(&self) -> bool {
        self.client.provider_client.skips_certificate_verification()
    }

    /// Where this slot's calls run on this thread: `"javascript"` (driven by its own event
    /// loop) or `"worker"` (a tokio worker thread); see [`driver`]. Throws when
    /// `ANILINK_IO_THREAD` was invalid.
    #[napi(catch_unwind)]
    pub fn io_thread(&self, env: Env) -> Result<&'static str> {
        Ok(match self.client.driver(&env)? {
            Some(_) => "javascript",
            None => "worker",
        })
    }

    /// What [`crate::start`]'s entry points take to name this client.
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }

    /// Send `token` from now on (a refreshed access token); calls already started keep theirs.
    #[napi(catch_unwind)]
    pub fn set_token(&self, token: String) -> Result<()> {
        if self.endpoint_settings.provider() == slot::Provider::External {
            return Err(invalid_arg(
                "an external client has no token of its own".into(),
            ));
        }
        let endpoint = self
            .endpoint_settings
            .endpoint(Some(&token))
            .map_err(invalid_arg)?;
        *self.client.endpoint.borrow_mut() = endpoint;
        Ok(())
    }

    /// A frozen-by-the-facade copy of the slot's cross-request state (api.md §6, decisions D20),
    /// with the stats of the slot's response cache when it has one.
    #[napi(catch_unwind)]
    pub fn snapshot(&self) -> Result<Value> {
        let own_host = self.client.endpoint.borrow().host();
        snapshot::transport_state(&self.client.provider_client, own_host.as_deref())
            .map_err(|error| Error::from_reason(error.to_string()))
    }
}
