//! The opt-in response cache (transport.md 1.12), in four parts: [`config`] (the constructor's
//! options), [`key`] (what an entry is stored under, and which requests have a key), [`policy`]
//! (which entries an invalidation drops) and [`store`] (LRU, TTL, generations, counters), plus
//! [`fleet`] (the Redis layout of a fleet-wide cache). What
//! a request means to the cache, a provider says in its [`CacheHint`]: the cache itself names
//! no provider operation, field or path.
//!
//! Values are the result JSON text the transport returns, shared behind an `Arc`: a hit copies
//! nothing in Rust, and JavaScript parses a fresh object from the text on every read, so a
//! caller can never mutate what the cache holds. That is `cloneOnRead: true` for every read;
//! `cloneOnRead: false` is accepted (and validated) for compatibility and reads the same way.

pub mod config;
pub mod fleet;
pub mod hint;
pub mod key;
mod policy;
pub mod store;
#[cfg(test)]
pub(crate) mod test_support;

pub use config::{CacheConfig, DEFAULT_MAX_ENTRIES, DEFAULT_TTL_MS};
pub use hint::{CacheHint, Invalidates, Scope};
pub use key::{auth_key, canonical_url, CacheKey};
pub use store::{CacheStats, Lookup, ResponseCache};
