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

use anilink_transport::options::{OptValue, PartialOptions, TRANSPORT_OPTION_KEYS};

use crate::requests::{ANILIST_DEFAULT_URL, MAL_DEFAULT_URL};

pub use endpoint::{Endpoint, NotBuilt};

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
    /// The slot field that holds the access token.
    pub fn token_field(self) -> Option<&'static str> {
        match self {
            Provider::AniList => Some("authToken"),
            Provider::Mal => Some("accessToken"),
            Provider::External => None,
        }
    }

    /// The default endpoint and the environment variable that overrides it (decisions D14).
    pub fn default_base_url(self) -> Option<(&'static str, &'static str)> {
        match self {
            Provider::AniList => Some((ANILIST_DEFAULT_URL, "ANILINK_ANILIST_URL")),
            Provider::Mal => Some((MAL_DEFAULT_URL, "ANILINK_MAL_URL")),
            Provider::External => None,
        }
    }

    /// How the slot is named in messages and to the transport (`"anilist"`, …).
    pub fn name(self) -> &'static str {
        match self {
            Provider::AniList => "anilist",
            Provider::Mal => "mal",
            Provider::External => "external",
        }
    }
}

/// The environment variables that override a provider's endpoint, by exact name.
pub fn endpoint_variables() -> impl Iterator<Item = &'static str> {
    [Provider::AniList, Provider::Mal]
        .into_iter()
        .filter_map(Provider::default_base_url)
        .map(|(_, variable)| variable)
}

/// The auth fields every provider slot takes after its token field.
pub const AUTH_FIELDS_AFTER_TOKEN: [&str; 5] = [
    "refreshToken",
    "clientId",
    "clientSecret",
    "onTokenRefresh",
    "onTokenRefreshError",
];

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
        let known = key == token_field
            || key == "baseUrl"
            || AUTH_FIELDS_AFTER_TOKEN.contains(&key.as_str());
        if !known {
            return Err(format!(
                "Unknown credential key \"{key}\". Valid transport options are: {}. Provider auth fields are: {token_field}, {}. Endpoint option: baseUrl.",
                TRANSPORT_OPTION_KEYS.join(", "),
                AUTH_FIELDS_AFTER_TOKEN.join(", ")
            ));
        }
        let is_callback = key == "onTokenRefresh" || key == "onTokenRefreshError";
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
        let base_url = match self.provider.default_base_url() {
            Some((default, name)) => {
                let url = field("baseUrl")
                    .or_else(|| variable(name).filter(|value| !value.trim().is_empty()))
                    .unwrap_or_else(|| default.into());
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
        Ok(SlotSettings {
            endpoint: endpoint_settings.endpoint(token.as_deref())?,
            endpoint_settings,
            options: self.options,
        })
    }
}

#[cfg(test)]
mod tests;
