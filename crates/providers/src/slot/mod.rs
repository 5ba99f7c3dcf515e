//! A provider slot as the caller writes it (`new AniLink({ anilist: { … } })`), checked and
//! resolved into transport options and an endpoint.
//!
//! Here rather than in the binding so every rule of a slot (which keys it takes, what each must
//! be, which environment variable overrides its endpoint, how its `baseUrl` is parsed) has one
//! owner that tests reach without Node. The binding only converts JavaScript values into
//! [`OptValue`]s and hands them over one key at a time, in the object's order, so the first
//! problem found is the one reported.

mod base_url;
mod endpoint;
pub mod schema;

use anilink_transport::options::{KeyState, OptValue, PartialOptions, TRANSPORT_OPTION_KEYS};

pub use endpoint::{Endpoint, NotBuilt};
use schema::{ProviderSlot, AUTH_FIELDS, BASE_URL_FIELD, TOKEN_REFRESH_CALLBACKS};

/// Which client a slot builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    AniList,
    Mal,
    /// No provider: POSTs to absolute URLs given per call (the OAuth token endpoints, the
    /// id-mapping service), without credentials of its own.
    External,
}

impl Provider {
    /// Its slot's fields besides the transport options (none for an external client).
    pub fn schema(self) -> Option<&'static ProviderSlot> {
        match self {
            Provider::AniList => Some(&schema::ANILIST),
            Provider::Mal => Some(&schema::MAL),
            Provider::External => None,
        }
    }

    /// The slot field that holds the access token.
    pub fn token_field(self) -> Option<&'static str> {
        self.schema().map(|slot| slot.token_field)
    }

    /// How the slot is named in messages and to the transport (`"anilist"`, …).
    pub fn name(self) -> &'static str {
        self.schema().map_or("external", |slot| slot.name)
    }
}

/// The environment variables that override a provider's endpoint, by exact name.
pub fn endpoint_variables() -> impl Iterator<Item = &'static str> {
    [&schema::ANILIST, &schema::MAL]
        .into_iter()
        .map(|slot| slot.api.variable)
}

/// A slot, checked: its transport options and its endpoint, with what rebuilds the endpoint.
pub struct SlotSettings {
    pub options: PartialOptions,
    pub endpoint: Endpoint,
    pub endpoint_settings: EndpointSettings,
}

/// What builds a slot's endpoint, kept so a refreshed token can rebuild it.
pub struct EndpointSettings {
    provider: Provider,
    /// The WHATWG-normalized `baseUrl` (empty for an external client, which has none).
    base_url: String,
    client_id: Option<String>,
}

impl EndpointSettings {
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The endpoint with `token` as its credential (an external client has none).
    pub fn endpoint(&self, token: Option<&str>) -> Result<Endpoint, String> {
        Endpoint::new(
            self.provider,
            &self.base_url,
            token,
            self.client_id.as_deref(),
        )
    }
}

/// Reads a slot's keys one at a time: [`SlotReader::read`] each key in the object's order,
/// then [`SlotReader::finish`]. Every error is the message of a TypeError, naming the key
/// and the rule; a credential or a URL is described by its kind, never echoed (D31).
pub struct SlotReader {
    provider: Provider,
    options: PartialOptions,
    /// The string-valued auth fields and `baseUrl`, by key.
    strings: Vec<(String, String)>,
}

impl SlotReader {
    pub fn new(provider: Provider) -> Self {
        Self {
            provider,
            options: PartialOptions::default(),
            strings: Vec::new(),
        }
    }

    /// Take one key: a transport option, an auth field, or `baseUrl`.
    pub fn read(&mut self, key: String, value: &OptValue) -> Result<(), String> {
        if self.options.parse_key(&key, value).map_err(|e| e.0)? {
            return Ok(());
        }
        // An external client takes transport options only: no credentials, no endpoint.
        let Some(token_field) = self.provider.token_field() else {
            return Err(format!(
                "Unknown option key \"{key}\" for an external client. Valid transport options are: {}.",
                TRANSPORT_OPTION_KEYS.join(", ")
            ));
        };
        let known =
            key == token_field || key == BASE_URL_FIELD || AUTH_FIELDS.contains(&key.as_str());
        if !known {
            return Err(format!(
                "Unknown credential key \"{key}\". Valid transport options are: {}. Provider auth fields are: {token_field}, {}. Endpoint option: {BASE_URL_FIELD}.",
                TRANSPORT_OPTION_KEYS.join(", "),
                AUTH_FIELDS.join(", ")
            ));
        }
        let is_callback = TOKEN_REFRESH_CALLBACKS.contains(&key.as_str());
        match (value, is_callback) {
            (OptValue::Undefined | OptValue::Null, _) | (OptValue::Function, true) => Ok(()),
            (OptValue::String(text), false) => {
                self.strings.push((key, text.clone()));
                Ok(())
            }
            (other, true) => Err(format!(
                "{key} must be a function (received {}).",
                other.kind()
            )),
            (other, false) => Err(format!(
                "{key} must be a string (received {}).",
                other.kind()
            )),
        }
    }

    /// The slot, its endpoint built with its token: `baseUrl` wins over the provider's environment variable
    /// (read through `variable`; blank counts as unset), which wins over the default.
    pub fn finish(self, variable: impl Fn(&str) -> Option<String>) -> Result<SlotSettings, String> {
        let field = |name: &str| {
            self.strings
                .iter()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.clone())
        };
        let base_url = match self.provider.schema() {
            Some(slot) => {
                let url = field(BASE_URL_FIELD)
                    .or_else(|| {
                        variable(slot.api.variable).filter(|value| !value.trim().is_empty())
                    })
                    .unwrap_or_else(|| slot.api.default.into());
                base_url::whatwg_base_url(&url, self.provider.name())?
            }
            None => String::new(),
        };
        let endpoint_settings = EndpointSettings {
            provider: self.provider,
            base_url,
            client_id: field("clientId"),
        };
        let token = self.provider.token_field().and_then(field);
        let mut options = self.options;
        // Not given (or `undefined`): the provider's documented degraded limit (D42).
        if !matches!(options.degraded_limit, KeyState::Set(_)) {
            if let Some(limit) = self.provider.schema().and_then(|slot| slot.degraded_limit) {
                options.degraded_limit = KeyState::Set(Some(limit));
            }
        }
        Ok(SlotSettings {
            endpoint: endpoint_settings.endpoint(token.as_deref())?,
            endpoint_settings,
            options,
        })
    }
}

#[cfg(test)]
mod tests;
