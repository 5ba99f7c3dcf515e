//! Transport options: parsing and validation (decisions D10), shallow merging, resolution.
//!
//! The binding converts each JavaScript option value into an [`OptValue`] and nothing more;
//! every rule about what is valid lives here, so it is tested without Node. An invalid value is
//! never coerced: it is an [`OptionError`] that names the option, the rule and what was given.
//!
//! Merging is shallow and per key, as in the original: a per-request `retry: { maxRetries: 1 }`
//! replaces the slot's whole policy, and its other knobs fall back to the built-in defaults. A
//! key present with the value `undefined` overrides the slot's value with the default.
//!
//! Each option is declared once, as a row of [`table`]: the row drives the key list, parsing,
//! unsetting, merging and resolving (see [`declare`] for what a row generates). The modules,
//! leaves first: [`value`] (the input and the error), [`parse`] (shared building blocks, also
//! used by the response cache's options), [`settings`] (what options hold), `rules` (each
//! option's parser and message), then the table.

pub mod declare;
pub mod parse;
mod rules;
pub mod settings;
pub mod table;
pub mod value;

pub use declare::OptionDoc;
pub use settings::{Hook, HookSet, KeyState, PoolBounds, RetrySetting};
pub use table::{PartialOptions, ResolvedOptions, TRANSPORT_OPTION_DOCS, TRANSPORT_OPTION_KEYS};
pub use value::{OptValue, OptionError};

#[cfg(test)]
mod tests;
