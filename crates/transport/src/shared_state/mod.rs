//! Per-host state shared by a fleet of processes through Redis (our extension; issue 15).

pub mod config;

pub use config::{RedisTarget, SharedStateConfig};
