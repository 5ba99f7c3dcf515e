//! The shared transport of anilink-api-wrapper, in pure Rust.
//!
//! It takes a request description and resolved options, and returns the response text or a
//! typed [`TransportError`], emitting [`events::Event`]s to a sink it is given. It knows nothing
//! of AniList, MAL, JavaScript or napi: the provider catalogs sit above it, the binding above them.
//!
//! One module per mechanism, composed by [`attempt`] in the order of the specification:
//! response cache read, auth guard, breaker admission, pacing wait, dispatch, envelope classification, breaker
//! accounting, pacing bookkeeping, retry decision (policy, then budget), backoff wait.

pub mod admission;
pub mod attempt;
pub mod breaker;
pub mod budget;
pub mod cache;
pub mod client;
pub mod clock;
pub mod connector;
pub mod decode;
pub mod envelope;
pub mod error;
pub mod events;
pub mod exchange;
pub mod executor;
pub mod host_state;
pub mod host_store;
pub mod http1;
pub mod numbers;
pub mod options;
pub mod pacing;
pub mod policy;
pub mod pool;
pub mod proxy;
pub mod random;
pub mod rate_limit;
pub mod redirect;
pub mod request;
pub mod retry_after;
pub mod shared_state;
pub mod timers;
pub mod trust;

pub use client::ProviderClient;
pub use error::{ErrorCode, TransportError};
