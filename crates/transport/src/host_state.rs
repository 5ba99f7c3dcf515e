//! Cross-request state of one provider client, per upstream host: breaker, budget window,
//! pacing deadline and admission estimate together, so one lock covers each decision that reads several of them.
//!
//! Bounded to [`MAX_HOSTS`] hosts, least recently used out, so a client pointed at many hosts
//! (or a stream of distinct URLs) cannot grow without limit.
//!
//! [`HostStore`] is the seam the attempt loop talks to: the in-process [`HostStates`], or the
//! fleet's state in Redis ([`SharedHostStates`]). An enum, not a trait object, so the local
//! path stays a plain synchronous call inside the loop's future (no boxing, no allocation).

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::admission::{AdmissionSnapshot, AdmissionState};
use crate::breaker::{Breaker, BreakerSnapshot};
use crate::budget::BudgetWindow;
use crate::random::ThreadRandom;
use crate::request::RequestSpec;
use crate::shared_state::redis_backend::{self, RedisBackend};
use crate::shared_state::{Notice, SharedHostStates, SharedStateConfig};

pub const MAX_HOSTS: usize = 64;

/// Serialised as it is (serde) when a fleet shares it through Redis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    /// A call with a breaker configured has reached this host: its breaker shows in snapshots.
    pub breaker_used: bool,
    pub breaker: Breaker,
    pub budget: Option<BudgetWindow>,
    pub pace_deadline: Option<u64>,
    pub admission: AdmissionState,
}

#[derive(Debug, Default)]
pub struct HostStates {
    /// Most recently used last.
    hosts: Mutex<Vec<(String, HostState)>>,
}

/// A copy of one host's state for `getTransportState()`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSnapshot {
    pub host: String,
    /// None when no call with a breaker configured has reached the host.
    pub breaker: Option<BreakerSnapshot>,
    pub budget: Option<BudgetWindow>,
    pub pace_deadline: Option<u64>,
    /// None while no response has reported a quota and nothing is in flight.
    pub admission: Option<AdmissionSnapshot>,
}

impl HostSnapshot {
    pub fn of(host: &str, state: &HostState, now_ms: u64) -> HostSnapshot {
        let admission = state.admission.snapshot(now_ms);
        HostSnapshot {
            host: host.to_string(),
            breaker: state.breaker_used.then(|| state.breaker.snapshot()),
            budget: state.budget,
            pace_deadline: state.pace_deadline,
            admission: (admission.limit.is_some() || admission.in_flight > 0).then_some(admission),
        }
    }
}

impl HostStates {
    /// Run `f` on the host's state, creating it and refreshing its recency.
    pub fn with<R>(&self, host: &str, f: impl FnOnce(&mut HostState) -> R) -> R {
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let index = match hosts.iter().position(|(h, _)| h == host) {
            Some(index) => index,
            None => {
                if hosts.len() >= MAX_HOSTS {
                    hosts.remove(0);
                }
                hosts.push((host.to_string(), HostState::default()));
                hosts.len() - 1
            }
        };
        let entry = hosts.remove(index);
        hosts.push(entry);
        let last = hosts.len() - 1;
        f(&mut hosts[last].1)
    }

    /// Read every host without creating, rolling, clearing or reordering anything.
    pub fn snapshot(&self, now_ms: u64) -> Vec<HostSnapshot> {
        let hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        hosts
            .iter()
            .map(|(host, state)| HostSnapshot::of(host, state, now_ms))
            .collect()
    }
}

/// Where a slot's per-host state lives.
pub enum HostStore {
    Local(HostStates),
    Shared(SharedHostStates<RedisBackend>),
}

/// What `getTransportState()` says of the store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingMode {
    Off,
    Redis,
    LocalFallback,
}

impl SharingMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SharingMode::Off => "off",
            SharingMode::Redis => "redis",
            SharingMode::LocalFallback => "local-fallback",
        }
    }
}

impl HostStore {
    /// The store of a slot: shared when `sharedState` is set (keys name `provider`).
    pub fn new(shared: Option<&Arc<SharedStateConfig>>, provider: &str) -> Self {
        let Some(config) = shared else {
            return HostStore::Local(HostStates::default());
        };
        match redis_backend::backend_for(&config.redis) {
            Ok(backend) => HostStore::Shared(SharedHostStates::new(
                config.clone(),
                provider,
                backend,
                Box::new(ThreadRandom),
            )),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_separate_and_bounded() {
        let states = HostStates::default();
        states.with("a", |s| s.pace_deadline = Some(1));
        states.with("b", |s| s.pace_deadline = Some(2));
        assert_eq!(states.with("a", |s| s.pace_deadline), Some(1));
        for i in 0..MAX_HOSTS {
            states.with(&format!("h{i}"), |_| ());
        }
        let snapshot = states.snapshot(0);
        assert_eq!(snapshot.len(), MAX_HOSTS);
        assert!(
            snapshot.iter().all(|h| h.host != "a" && h.host != "b"),
            "oldest hosts are evicted"
        );
    }

    #[test]
    fn snapshots_do_not_reorder() {
        let states = HostStates::default();
        states.with("a", |_| ());
        states.with("b", |_| ());
        let first: Vec<String> = states.snapshot(0).into_iter().map(|h| h.host).collect();
        let second: Vec<String> = states.snapshot(0).into_iter().map(|h| h.host).collect();
        assert_eq!(first, second);
    }
}
