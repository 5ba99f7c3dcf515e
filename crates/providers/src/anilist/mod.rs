//! The AniList operation catalog: the 72 typed operations of `aniLink.anilist` (25 queries, 18
//! page queries, 29 mutations), their GraphQL documents, variable validation and `fields`
//! narrowing, plus the light checks applied to caller-written documents.
//!
//! Everything schema-derived lives in `catalog.json`, written by `scripts/generate-anilist.mjs`
//! from `data/anilist-schema.json`; this module only interprets it. The selection rules behind
//! the default documents, and the query budget they respect, are in `LIMITS.md`.

mod cache_hint;
mod catalog;
mod custom;
mod fields;
mod validate;

pub use cache_hint::{
    body_hint, for_document as custom_cache_hint, for_operation as operation_cache_hint,
};
pub use catalog::{operation, operations, Operation, OperationKind};
pub use custom::{analyze_custom_document, check_custom_page_document, CustomDocument};
pub use fields::document_for;
pub use validate::validate_variables;
