//! Where a slot's per-host state lives: the seam the attempt loop talks to, either the
//! in-process [`HostStates`] or the fleet's state in Redis ([`SharedHostStates`]). An enum, not
//! a trait object, so the local path stays a plain synchronous call inside the loop's future
//! (no boxing, no allocation). Its own module, apart from the state it stores, so the shared
//! store can build on that state without an import cycle.

use std::sync::Arc;

use crate::host_state::{HostSnapshot, HostState, HostStates};
use crate::random::ThreadRandom;
use crate::request::RequestSpec;
use crate::shared_state::redis_backend::{self, RedisBackend};
use crate::shared_state::{Notice, SharedHostStates, SharedStateConfig};
use crate::trust::Trust;

/// Where a slot's per-host state lives.
pub enum HostStore {
    Local(HostStates),
    /// Boxed: far larger than the local store, which most slots use.
    Shared(Box<SharedHostStates<RedisBackend>>),
}

/// What `getTransportState()` says of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingMode {
    Off,
    Redis,
    LocalFallback,
}

impl SharingMode {
    /// Every mode, for the typings generated from the snapshot's shape.
    pub const ALL: [SharingMode; 3] = [
        SharingMode::Off,
        SharingMode::Redis,
        SharingMode::LocalFallback,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            SharingMode::Off => "off",
            SharingMode::Redis => "redis",
            SharingMode::LocalFallback => "local-fallback",
        }
    }
}

impl HostStore {
    /// The store of a slot: shared when `sharedState` is set (keys name `provider`; a
    /// `rediss://` server is verified with the slot's `trust`).
    pub fn new(
        shared: Option<&Arc<SharedStateConfig>>,
        provider: &str,
        trust: &Arc<Trust>,
    ) -> Self {
        let Some(config) = shared else {
            return HostStore::Local(HostStates::default());
        };
        match redis_backend::backend_for(&config.redis, trust) {
            Ok(backend) => HostStore::Shared(Box::new(SharedHostStates::new(
                config.clone(),
                provider,
                backend,
                Box::new(ThreadRandom),
            ))),
            // The option parser checked the URL with the same client: not expected.
            Err(_) => HostStore::Local(HostStates::default()),
        }
    }

    /// The scope key of a call, computed once per call; None for a local store.
    pub fn key_for(&self, spec: &RequestSpec) -> Option<String> {
        match self {
            HostStore::Local(_) => None,
            HostStore::Shared(shared) => Some(shared.key_for(spec)),
        }
    }

    /// How long a reservation or a probe holds at most: None (until released) in one process.
    pub fn lease_ms(&self) -> Option<u64> {
        match self {
            HostStore::Local(_) => None,
            HostStore::Shared(shared) => Some(shared.lease_ms()),
        }
    }

    /// Run one decision on the host's state (`key` from [`HostStore::key_for`]).
    pub async fn with<R>(
        &self,
        host: &str,
        key: Option<&str>,
        now_ms: u64,
        decide: impl FnMut(&mut HostState) -> R,
    ) -> (R, Option<Notice>) {
        match (self, key) {
            // Boxed: the Redis round trips would otherwise make every call's task, shared or
            // not, carry their ~2.9 KB state while it waits for its response.
            (HostStore::Shared(shared), Some(key)) => {
                Box::pin(shared.with(host, key, now_ms, decide)).await
            }
            (HostStore::Shared(shared), None) => (shared.with_local(host, decide), None),
            (HostStore::Local(local), _) => (local.with(host, decide), None),
        }
    }

    /// The in-process state only, synchronously (for a `Drop`).
    pub fn with_local<R>(&self, host: &str, f: impl FnOnce(&mut HostState) -> R) -> R {
        match self {
            HostStore::Local(local) => local.with(host, f),
            HostStore::Shared(shared) => shared.with_local(host, f),
        }
    }

    pub fn mode(&self) -> SharingMode {
        match self {
            HostStore::Local(_) => SharingMode::Off,
            HostStore::Shared(shared) if shared.in_fallback() => SharingMode::LocalFallback,
            HostStore::Shared(_) => SharingMode::Redis,
        }
    }

    /// The fleet's Redis, for a fleet-wide response cache; None for a local store.
    pub fn fleet(&self) -> Option<&SharedHostStates<RedisBackend>> {
        match self {
            HostStore::Local(_) => None,
            HostStore::Shared(shared) => Some(shared.as_ref()),
        }
    }

    /// `host:port` of the Redis server, when shared.
    pub fn redis_address(&self) -> Option<String> {
        match self {
            HostStore::Local(_) => None,
            HostStore::Shared(shared) => Some(shared.redis_address()),
        }
    }

    pub fn snapshot(&self, now_ms: u64) -> Vec<HostSnapshot> {
        match self {
            HostStore::Local(local) => local.snapshot(now_ms),
            HostStore::Shared(shared) => shared.snapshot(now_ms),
        }
    }
}
