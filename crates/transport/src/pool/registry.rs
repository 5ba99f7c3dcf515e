//! The process-wide registry of pools: one default pool for the requests that set no bounds and
//! use no proxy, and a small least-recently-used cache of dedicated pools keyed by bounds, proxy
//! rules and trust, so options that differ per call do not open a pool per call. An evicted pool
//! is parked rather than destroyed, because requests in flight may still hold it.

use std::sync::{Arc, Mutex, OnceLock, Weak};

use super::{lock, Pool};
use crate::options::settings::PoolBounds;
use crate::proxy::ProxyRules;
use crate::trust::Trust;

/// Dedicated pools kept in the cache; the least recently used one beyond this is parked.
pub const MAX_CACHED_POOLS: usize = 8;

/// The process-wide set of pools that `destroyCachedAgents()` tears down.
#[derive(Default)]
pub struct PoolRegistry {
    state: Mutex<RegistryState>,
}

#[derive(Default)]
struct RegistryState {
    default: Option<Arc<Pool>>,
    /// Most recently used last.
    cached: Vec<Arc<Pool>>,
    /// Evicted pools that may still carry requests; they free themselves when those finish.
    parked: Vec<Weak<Pool>>,
}

impl PoolRegistry {
    pub fn global() -> &'static PoolRegistry {
        static REGISTRY: OnceLock<PoolRegistry> = OnceLock::new();
        REGISTRY.get_or_init(PoolRegistry::default)
    }

    /// The pool for these bounds, proxy rules and trust, created lazily: the default pool for
    /// no bounds, no proxy and the default trust.
    pub fn pool(
        &self,
        bounds: Option<PoolBounds>,
        proxy: &Arc<ProxyRules>,
        trust: &Arc<Trust>,
    ) -> Arc<Pool> {
        let mut state = lock(&self.state);
        if bounds.is_none() && proxy.is_direct() && **trust == Trust::default() {
            return state
                .default
                .get_or_insert_with(|| Pool::new(None, proxy.clone(), trust.clone()))
                .clone();
        }
        if let Some(index) = state
            .cached
            .iter()
            .position(|p| p.has_key(bounds, proxy, trust))
        {
            let pool = state.cached.remove(index);
            state.cached.push(pool.clone());
            return pool;
        }
        let pool = Pool::new(bounds, proxy.clone(), trust.clone());
        state.cached.push(pool.clone());
        if state.cached.len() > MAX_CACHED_POOLS {
            let evicted = state.cached.remove(0);
            // Parked, not destroyed: requests in flight keep it alive, and it is freed (its
            // idle connections closed) when the last of them lets go.
            state.parked.retain(|weak| weak.strong_count() > 0);
            state.parked.push(Arc::downgrade(&evicted));
        }
        pool
    }

    /// `destroyCachedAgents()`: release every cached, parked and default pool.
    pub fn destroy_all(&self) {
        let (default, cached, parked) = {
            let mut state = lock(&self.state);
            (
                state.default.take(),
                std::mem::take(&mut state.cached),
                std::mem::take(&mut state.parked),
            )
        };
        for pool in default
            .into_iter()
            .chain(cached)
            .chain(parked.iter().filter_map(Weak::upgrade))
        {
            pool.release();
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::*;
    use crate::proxy::ProxyServer;

    /// What the registry holds, for assertions.
    #[derive(Debug)]
    struct RegistryStats {
        default_alive: bool,
        cached: usize,
        parked_alive: usize,
    }

    impl PoolRegistry {
        fn stats(&self) -> RegistryStats {
            let state = lock(&self.state);
            RegistryStats {
                default_alive: state.default.is_some(),
                cached: state.cached.len(),
                parked_alive: state.parked.iter().filter(|w| w.strong_count() > 0).count(),
            }
        }
    }

    fn bounds(max_sockets: u32) -> Option<PoolBounds> {
        Some(PoolBounds {
            max_sockets,
            max_free_sockets: 1,
        })
    }

    fn direct() -> Arc<ProxyRules> {
        Arc::new(ProxyRules::default())
    }

    fn through(url: &str) -> Arc<ProxyRules> {
        Arc::new(ProxyRules::fixed(Arc::new(
            ProxyServer::parse(url).unwrap(),
        )))
    }

    #[test]
    fn pools_are_keyed_on_the_proxy_too() {
        let registry = PoolRegistry::default();
        let default = registry.pool(None, &direct(), &Arc::default());
        let proxied = registry.pool(None, &through("http://p:1"), &Arc::default());
        assert!(
            !Arc::ptr_eq(&default, &proxied),
            "a proxied slot never shares the direct pool"
        );
        assert_eq!(proxied.bounds, PoolBounds::DEFAULT);
        assert!(
            Arc::ptr_eq(
                &proxied,
                &registry.pool(None, &through("http://p:1"), &Arc::default())
            ),
            "equal rules share a pool"
        );
        assert!(!Arc::ptr_eq(
            &proxied,
            &registry.pool(None, &through("http://p:2"), &Arc::default())
        ));
        assert!(!Arc::ptr_eq(
            &proxied,
            &registry.pool(bounds(3), &through("http://p:1"), &Arc::default())
        ));
    }

    #[test]
    fn a_slot_that_skips_verification_never_shares_a_verified_pool() {
        let registry = PoolRegistry::default();
        let verified = registry.pool(None, &direct(), &Arc::default());
        let unverified = Arc::new(Trust::from_lookup(|name| {
            (name == "NODE_TLS_REJECT_UNAUTHORIZED").then(|| "0".to_string())
        }));
        let skipping = registry.pool(None, &direct(), &unverified);
        assert!(!Arc::ptr_eq(&verified, &skipping));
        assert!(Arc::ptr_eq(
            &skipping,
            &registry.pool(None, &direct(), &unverified)
        ));
    }

    #[test]
    fn identical_bounds_share_a_pool_and_the_default_is_separate() {
        let registry = PoolRegistry::default();
        let a = registry.pool(bounds(4), &direct(), &Arc::default());
        let b = registry.pool(bounds(4), &direct(), &Arc::default());
        assert!(Arc::ptr_eq(&a, &b));
        let default = registry.pool(None, &direct(), &Arc::default());
        assert!(!Arc::ptr_eq(&a, &default));
        assert_eq!(default.bounds, PoolBounds::DEFAULT);
        let explicit_default_bounds =
            registry.pool(Some(PoolBounds::DEFAULT), &direct(), &Arc::default());
        assert!(
            !Arc::ptr_eq(&explicit_default_bounds, &default),
            "custom bounds always get a dedicated pool"
        );
    }

    #[test]
    fn the_ninth_configuration_parks_the_least_recently_used_pool() {
        let registry = PoolRegistry::default();
        let in_flight = registry.pool(bounds(1), &direct(), &Arc::default());
        let second = registry.pool(bounds(2), &direct(), &Arc::default());
        for n in 3..=8 {
            registry.pool(bounds(n), &direct(), &Arc::default());
        }
        registry.pool(bounds(2), &direct(), &Arc::default()); // refreshed: bounds(1) stays the least recently used
        drop(registry.pool(bounds(9), &direct(), &Arc::default()));
        let stats = registry.stats();
        assert_eq!(stats.cached, MAX_CACHED_POOLS);
        assert_eq!(
            stats.parked_alive, 1,
            "the evicted pool lives on while a request holds it"
        );
        assert!(
            Arc::ptr_eq(
                &second,
                &registry.pool(bounds(2), &direct(), &Arc::default())
            ),
            "a recently used pool stays cached"
        );
        assert!(
            !Arc::ptr_eq(
                &in_flight,
                &registry.pool(bounds(1), &direct(), &Arc::default())
            ),
            "the evicted configuration gets a new pool"
        );
        drop(in_flight);
        assert_eq!(
            registry.stats().parked_alive,
            0,
            "a parked pool frees itself once unused"
        );
    }

    #[test]
    fn destroy_releases_everything_and_is_safe_twice() {
        let registry = PoolRegistry::default();
        let held = registry.pool(None, &direct(), &Arc::default());
        registry.pool(bounds(3), &direct(), &Arc::default());
        registry.destroy_all();
        registry.destroy_all();
        let stats = registry.stats();
        assert_eq!(
            (stats.default_alive, stats.cached, stats.parked_alive),
            (false, 0, 0)
        );
        assert!(
            held.released.load(Ordering::Acquire),
            "a held pool is marked so it keeps no connection"
        );
        let rebuilt = registry.pool(None, &direct(), &Arc::default());
        assert!(
            !Arc::ptr_eq(&held, &rebuilt),
            "the default pool is rebuilt lazily"
        );
    }
}
