//! What a provider slot accepts besides transport options, and every upstream URL the package
//! knows with the environment variable that overrides it (decisions D14). Written here only:
//! the binding reads the slot from it and exports all of it in its contract, which the
//! facade reads instead of holding copies.

use crate::requests::{ANILIST_DEFAULT_URL, MAL_DEFAULT_URL};

/// A URL's default and the environment variable that replaces it when set and not blank.
#[derive(Clone, Copy, Debug)]
pub struct Overridable {
    pub default: &'static str,
    pub variable: &'static str,
}

/// The fields of one provider's slot that are not transport options.
#[derive(Clone, Copy, Debug)]
pub struct ProviderSlot {
    /// `anilist` or `mal`: how messages and the transport's per-host state name the provider.
    pub name: &'static str,
    /// The field that holds the access token.
    pub token_field: &'static str,
    /// The API endpoint, which [`BASE_URL_FIELD`] overrides per slot (the environment
    /// variable is read by the facade when the slot is built, decisions D38).
    pub api: Overridable,
    /// The quota the provider documents for its degraded mode, below the one its headers
    /// announce: the slot's [`DEGRADED_LIMIT_FIELD`] default (decisions D42).
    pub degraded_limit: Option<u32>,
}

pub const ANILIST: ProviderSlot = ProviderSlot {
    name: "anilist",
    token_field: "authToken",
    api: Overridable {
        default: ANILIST_DEFAULT_URL,
        variable: "ANILINK_ANILIST_URL",
    },
    // docs.anilist.co/guide/rate-limiting: 90 per minute, 30 while the API is degraded, the
    // headers still announcing 90.
    degraded_limit: Some(30),
};

pub const MAL: ProviderSlot = ProviderSlot {
    name: "mal",
    token_field: "accessToken",
    api: Overridable {
        default: MAL_DEFAULT_URL,
        variable: "ANILINK_MAL_URL",
    },
    degraded_limit: None,
};

/// The transport option whose default is the provider's [`ProviderSlot::degraded_limit`].
pub const DEGRADED_LIMIT_FIELD: &str = "degradedLimit";

/// The slot field that replaces the API endpoint.
pub const BASE_URL_FIELD: &str = "baseUrl";

/// What [`BASE_URL_FIELD`] accepts, as the documentation's option table says it.
pub const BASE_URL_RULE: &str = "The provider's API endpoint: an absolute `http://` or `https://` URL, parsed as `new URL` parses it (a port above 65535 is a `TypeError`).";

/// The slot's token-refresh callbacks: functions, where the other credential fields are strings.
pub const TOKEN_REFRESH_CALLBACKS: [&str; 2] = ["onTokenRefresh", "onTokenRefreshError"];

/// The credential fields every provider slot takes after its token field.
pub const AUTH_FIELDS: [&str; 5] = [
    "refreshToken",
    "clientId",
    "clientSecret",
    TOKEN_REFRESH_CALLBACKS[0],
    TOKEN_REFRESH_CALLBACKS[1],
];

/// The OAuth token endpoints, read by the facade's token exchanges per call.
pub const ANILIST_TOKEN: Overridable = Overridable {
    default: "https://anilist.co/api/v2/oauth/token",
    variable: "ANILINK_ANILIST_TOKEN_URL",
};

pub const MAL_TOKEN: Overridable = Overridable {
    default: "https://myanimelist.net/v1/oauth2/token",
    variable: "ANILINK_MAL_TOKEN_URL",
};

/// The id-mapping service of `mapExternalIds`, read by the facade per call.
pub const ID_MAPPING: Overridable = Overridable {
    default: "https://arm.haglund.dev",
    variable: "ANILINK_ARM_URL",
};
