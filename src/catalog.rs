//! The operation catalogs, as the facade needs them to build `anilist.*` and `mal.*`.

use napi_derive::napi;

use anilink_providers::{anilist, mal};

#[napi(object)]
pub struct AniListOperationInfo {
    /// `"query.media"`, `"query.page.medias"`, `"mutation.saveMediaListEntry"`.
    pub key: String,
    pub variables_optional: bool,
    pub accepts_fields: bool,
}

#[napi(catch_unwind)]
pub fn anilist_operations() -> Vec<AniListOperationInfo> {
    anilist::operations()
        .map(|op| AniListOperationInfo {
            key: op.key().to_string(),
            variables_optional: op.variables_optional(),
            accepts_fields: op.accepts_fields(),
        })
        .collect()
}

#[napi(object)]
pub struct MalOperationInfo {
    /// `"anime.get"`, `"user.me"`, …
    pub key: String,
    /// The operation takes no parameters: its first argument is the options object.
    pub options_first: bool,
    /// The 2.2.0 positional form (decisions D25): `"id"` for `(id, options?)`,
    /// `"id-payload"` for `(id, payload, options?)`; absent when there is none.
    pub legacy_arguments: Option<String>,
}

#[napi(catch_unwind)]
pub fn mal_operations() -> Vec<MalOperationInfo> {
    mal::operations()
        .map(|op| MalOperationInfo {
            key: op.key().to_string(),
            options_first: op.options_first(),
            legacy_arguments: match op.legacy_arguments() {
                mal::LegacyArguments::None => None,
                mal::LegacyArguments::Id => Some("id".to_string()),
                mal::LegacyArguments::IdAndPayload => Some("id-payload".to_string()),
            },
        })
        .collect()
}

/// `anilist.customPage`: the problems with a page document, or null when it is usable.
#[napi(catch_unwind)]
pub fn check_custom_page_document(document: String) -> Option<Vec<String>> {
    anilist::check_custom_page_document(&document).err()
}
