//! A provider client: one slot's options and its cross-request state (decisions D2, D19).
//!
//! Every `AniLink` provider slot owns one, so its breaker, budget windows and pacing deadlines
//! are shared by all its operations and never by another slot or instance, unless the slot's
//! `sharedState` shares them with a fleet through Redis (per provider, host and credential).
//! The slot's options are resolved once here; a call without per-request options reuses them.

use std::sync::Arc;

use crate::attempt::{self, CallInputs, ClientEnv, Coalescer, Completed, LeaderOutcome};
use crate::cache::ResponseCache;
use crate::clock::{Clock, SystemClock};
use crate::error::TransportError;
use crate::events::EventSink;
use crate::host_state::HostSnapshot;
use crate::host_store::{HostStore, SharingMode};
use crate::options::{PartialOptions, ResolvedOptions};
use crate::pool::{Pool, PoolRegistry};
use crate::proxy::{self, ProxyRules};
use crate::random::{RandomSource, ThreadRandom};
use crate::trust::{self, Trust};

/// Every environment variable a slot's transport reads (proxies, trust), by exact name.
pub fn environment_variables() -> Vec<String> {
    let proxies = proxy::ENVIRONMENT_VARIABLES
        .iter()
        .flat_map(|name| [name.to_string(), name.to_ascii_lowercase()]);
    proxies
        .chain(trust::ENVIRONMENT_VARIABLES.map(String::from))
        .collect()
}

pub struct ProviderClient {
    slot: PartialOptions,
    read: Arc<ResolvedOptions>,
    write: Arc<ResolvedOptions>,
    hosts: HostStore,
    /// The slot's coalescing groups in flight (`coalesce: true`).
    coalescer: Coalescer<LeaderOutcome>,
    /// `HTTP_PROXY`, `HTTPS_PROXY`, `NO_PROXY`… as they were when the slot was built.
    environment_proxy: Arc<ProxyRules>,
    /// What its TLS connections trust, from the environment when the slot was built.
    trust: Arc<Trust>,
    clock: Box<dyn Clock>,
    rng: Box<dyn RandomSource>,
}

impl ProviderClient {
    /// `provider` names the slot's shared state in Redis keys (`anilist`, `mal`);
    /// `environment(name)` gives the environment variables of [`environment_variables`] as the
    /// program sees them now (the binding reads them in JavaScript, decisions D38). Fails when
    /// the environment names a proxy that is not a URL and the slot has no `proxy` of its own
    /// to replace it (the message names the variable, never its value).
    pub fn new(
        slot: PartialOptions,
        provider: &str,
        environment: impl Fn(&str) -> Option<String>,
    ) -> Result<Self, String> {
        Self::with_time(
            slot,
            provider,
            environment,
            Box::new(SystemClock),
            Box::new(ThreadRandom),
        )
    }

    pub fn with_time(
        slot: PartialOptions,
        provider: &str,
        environment: impl Fn(&str) -> Option<String>,
        clock: Box<dyn Clock>,
        rng: Box<dyn RandomSource>,
    ) -> Result<Self, String> {
        let read = slot.resolve(false);
        let environment_proxy = match ProxyRules::from_lookup(&environment) {
            Ok(rules) => rules,
            // Never used: the slot's own proxy (or `false`) replaces the environment.
            Err(_) if read.proxy.is_some() => ProxyRules::default(),
            Err(reason) => return Err(reason),
        };
        let trust = Arc::new(Trust::from_lookup(&environment));
        Ok(Self {
            hosts: HostStore::new(read.shared_state.as_ref(), provider, &trust),
            read: Arc::new(read),
            write: Arc::new(slot.resolve(true)),
            slot,
            coalescer: Coalescer::default(),
            environment_proxy: Arc::new(environment_proxy),
            trust,
            clock,
            rng,
        })
    }

    /// The options of one call: the slot's, or the per-request ones merged over them.
    pub fn options(
        &self,
        request: Option<&PartialOptions>,
        is_write: bool,
    ) -> Arc<ResolvedOptions> {
        match request {
            None if is_write => self.write.clone(),
            None => self.read.clone(),
            Some(request) => Arc::new(self.slot.merged_with(request).resolve(is_write)),
        }
    }

    /// The connection pool a call with these options uses. Taken when the call starts, so a
    /// `destroyCachedAgents()` after that cannot move the call to another pool.
    pub fn pool(&self, options: &ResolvedOptions) -> Arc<Pool> {
        let proxy = options.proxy.as_ref().unwrap_or(&self.environment_proxy);
        PoolRegistry::global().pool(options.pool_bounds, proxy, &self.trust)
    }

    /// Whether this slot's TLS connections skip certificate verification (decisions D37).
    pub fn skips_certificate_verification(&self) -> bool {
        self.trust.skips_verification()
    }

    pub async fn execute<S: EventSink>(
        &self,
        pool: Arc<Pool>,
        call: CallInputs<'_, S>,
    ) -> Result<Completed, TransportError> {
        let env = ClientEnv {
            hosts: &self.hosts,
            clock: self.clock.as_ref(),
            rng: self.rng.as_ref(),
        };
        attempt::execute(&self.coalescer, &env, pool, call).await
    }

    /// Each host's state: with shared state, the fleet's as last read from Redis.
    pub fn snapshot(&self) -> Vec<HostSnapshot> {
        self.hosts.snapshot(self.clock.now_ms())
    }

    pub fn sharing_mode(&self) -> SharingMode {
        self.hosts.mode()
    }

    /// The slot's own response cache (per-request caches are not the slot's state).
    pub fn response_cache(&self) -> Option<&ResponseCache> {
        self.read.response_cache.as_deref()
    }

    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    #[test]
    fn a_slot_reads_only_variables_it_names() {
        let asked = RefCell::new(Vec::new());
        ProviderClient::new(Default::default(), "test", |name| {
            asked.borrow_mut().push(name.to_string());
            None
        })
        .unwrap();
        let named = environment_variables();
        let asked = asked.into_inner();
        assert!(asked
            .iter()
            .any(|name| name == "NODE_TLS_REJECT_UNAUTHORIZED"));
        assert!(asked.iter().any(|name| name == "https_proxy"));
        for name in asked {
            assert!(named.contains(&name), "{name} is read but not named");
        }
    }
}
