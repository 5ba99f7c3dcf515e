//! Per-host state shared by a fleet of processes through Redis (our extension; issue 15).
//!
//! The seam is [`HostStore`](crate::host_store::HostStore): the attempt loop asks it for every
//! decision, and it runs the same Rust mechanisms either on the slot's in-process state or,
//! with `sharedState` set, on the scope's state in Redis ([`store`]): read, decide, write back by
//! compare-and-set ([`cas`]), falling back to the local copy on an error or a slow answer
//! ([`link`]). Keys and credential digests: [`scope`]. The connection: [`redis_backend`]. A
//! fleet-wide response cache rides on the same connection and link: [`fleet_cache`].

pub mod cas;
pub mod config;
pub mod fleet_cache;
pub mod link;
pub mod redis_backend;
pub mod scope;
pub mod store;

pub use config::{RedisTarget, SharedStateConfig};
pub use link::Notice;
pub use store::SharedHostStates;
