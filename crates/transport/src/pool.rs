//! Keep-alive connection pools: the native stand-in for Node's HTTP agents (decisions D13).
//!
//! A [`Pool`] holds, per origin, at most `max_sockets` connections in use at once (a hard cap:
//! a request waits for a permit before it may take or open a connection) and keeps at most
//! `max_free_sockets` of them idle, reused last-in first-out so the warmest connection serves
//! next and the coldest ones age out. The [`PoolRegistry`] shares one default pool among all
//! requests that set no bounds and use no proxy, and caches dedicated pools per bound pair and
//! proxy configuration, least recently used first out. Connections come from [`connector`]. Every request holds its own reference to its pool, so evicting or destroying a
//! pool never fails a request in flight: it finishes, and its connection is then closed
//! instead of kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::connector;
use crate::error::TransportError;
use crate::executor;
use crate::http1::Connection;
use crate::options::settings::PoolBounds;
use crate::proxy::{ProxyRules, ProxyServer};
use crate::request::Origin;
use crate::trust::Trust;

/// Dedicated pools kept in the cache; the least recently used one beyond this is parked.
pub const MAX_CACHED_POOLS: usize = 8;

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic while holding one of these locks cannot leave the data inconsistent (every
    // critical section is a single push, pop or insert), so poisoning is ignored.
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

pub struct Pool {
    bounds: PoolBounds,
    /// The bounds as the options gave them (None: the defaults), part of the registry key.
    key_bounds: Option<PoolBounds>,
    /// Which proxy each origin's connections go through.
    proxy: Arc<ProxyRules>,
    /// What its TLS connections trust: a connection is only reused under the same trust.
    trust: Arc<Trust>,
    origins: Mutex<HashMap<Origin, Arc<OriginPool>>>,
    /// Set by teardown: idle connections are closed and returned ones are not kept.
    released: AtomicBool,
}

struct OriginPool {
    permits: Arc<Semaphore>,
    /// Idle connections with the [`executor::home`] whose reactor watches each socket: a call
    /// takes only one of its own thread's, so it never waits on another thread's event loop.
    idle: Mutex<Vec<(u32, Connection)>>,
    /// Requests waiting for a permit: a connection given back while one waits goes to it.
    waiting: AtomicUsize,
}

/// A connection lent to one request, with the permit that counts it against `max_sockets`.
pub struct Lease {
    pub connection: Connection,
    /// The [`executor::home`] whose reactor watches the connection's socket.
    home: u32,
    /// The connection had served an earlier request (a stale-connection failure is possible).
    pub reused: bool,
    /// Plain HTTP through this proxy: requests go in absolute form, with its credentials.
    pub forward_proxy: Option<Arc<ProxyServer>>,
    origin_pool: Arc<OriginPool>,
    pool: Arc<Pool>,
    _permit: OwnedSemaphorePermit,
}

impl Lease {
    /// Give the connection back after its response was read completely.
    pub fn release(self) {
        let Lease {
            connection,
            home,
            origin_pool,
            pool,
            ..
        } = self;
        if pool.released.load(Ordering::Acquire) || !connection.reusable() {
            return;
        }
        let mut idle = lock(&origin_pool.idle);
        // A connection a waiting request will take is not idle: hand it over rather than close
        // it and make that request dial a new one (as Node's agents do).
        let keep = (pool.bounds.max_free_sockets as usize)
            .max(origin_pool.waiting.load(Ordering::Acquire));
        if idle.len() < keep {
            idle.push((home, connection));
        }
        // Otherwise the connection drops here, closing its socket. The permit is
        // released after this, so a waiter always finds the connection pushed above.
    }
}

impl Pool {
    fn new(key_bounds: Option<PoolBounds>, proxy: Arc<ProxyRules>, trust: Arc<Trust>) -> Arc<Self> {
        Arc::new(Self {
            bounds: key_bounds.unwrap_or(PoolBounds::DEFAULT),
            key_bounds,
            proxy,
            trust,
            origins: Mutex::new(HashMap::new()),
            released: AtomicBool::new(false),
        })
    }

    fn has_key(&self, bounds: Option<PoolBounds>, proxy: &ProxyRules, trust: &Trust) -> bool {
        self.key_bounds == bounds && *self.proxy == *proxy && *self.trust == *trust
    }

    fn origin_pool(&self, origin: &Origin) -> Arc<OriginPool> {
        let mut origins = lock(&self.origins);
        if let Some(existing) = origins.get(origin) {
            return existing.clone();
        }
        let created = Arc::new(OriginPool {
            permits: Arc::new(Semaphore::new(self.bounds.max_sockets as usize)),
            idle: Mutex::new(Vec::new()),
            waiting: AtomicUsize::new(0),
        });
        origins.insert(origin.clone(), created.clone());
        created
    }

    /// Take a connection to `origin`, waiting while `max_sockets` are in use. With `fresh`,
    /// idle connections are skipped (the stale-connection resend).
    pub async fn lease(
        self: &Arc<Self>,
        origin: &Origin,
        fresh: bool,
    ) -> Result<Lease, TransportError> {
        self.slot(origin).await?.connect(origin, fresh).await
    }

    /// Wait until fewer than `max_sockets` connections to `origin` are in use and claim one:
    /// the wait a saturated pool imposes, which is not part of an attempt's timeout (D32).
    pub async fn slot(self: &Arc<Self>, origin: &Origin) -> Result<Slot, TransportError> {
        let origin_pool = self.origin_pool(origin);
        let permit = match origin_pool.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                let _waiting = Waiting::new(&origin_pool.waiting);
                origin_pool
                    .permits
                    .clone()
                    .acquire_owned()
                    .await
                    .map_err(|_| TransportError::network("connection pool closed".into()))?
            }
        };
        Ok(Slot {
            origin_pool,
            pool: self.clone(),
            permit,
        })
    }
}

/// The warmest idle connection of `home`.
fn take_idle(idle: &Mutex<Vec<(u32, Connection)>>, home: u32) -> Option<Connection> {
    let mut idle = lock(idle);
    let at = idle.iter().rposition(|(driven_by, _)| *driven_by == home)?;
    Some(idle.remove(at).1)
}

/// A claimed place under `max_sockets`, not yet a connection.
pub struct Slot {
    origin_pool: Arc<OriginPool>,
    pool: Arc<Pool>,
    permit: OwnedSemaphorePermit,
}

impl Slot {
    /// The connection for this slot: the warmest idle one, or (with `fresh`, or none idle) a new one.
    pub async fn connect(self, origin: &Origin, fresh: bool) -> Result<Lease, TransportError> {
        let Slot {
            origin_pool,
            pool,
            permit,
        } = self;
        let proxy = pool.proxy.for_origin(origin).cloned();
        let forward_proxy = proxy.clone().filter(|_| !origin.https);
        let home = executor::home();
        if !fresh {
            loop {
                let popped = take_idle(&origin_pool.idle, home);
                let Some(mut connection) = popped else { break };
                // One the server closed while it was idle is dropped, not tried.
                if connection.is_open() {
                    return Ok(Lease {
                        connection,
                        home,
                        reused: true,
                        forward_proxy,
                        origin_pool,
                        pool,
                        _permit: permit,
                    });
                }
            }
        }
        // Boxed: opening a connection (TCP, tunnel, TLS) is the largest state of a call, and a
        // call that reuses a connection should not carry room for it while it waits.
        let connection = Box::pin(connector::connect(origin, proxy.as_ref(), &pool.trust)).await?;
        Ok(Lease {
            connection,
            home,
            reused: false,
            forward_proxy,
            origin_pool,
            pool,
            _permit: permit,
        })
    }
}

impl Pool {
    /// Close idle connections and keep no more; leases in flight finish normally, and requests
    /// still holding this pool keep its per-host caps (the semaphores stay).
    fn release(&self) {
        self.released.store(true, Ordering::Release);
        let origins: Vec<Arc<OriginPool>> = lock(&self.origins).values().cloned().collect();
        for origin_pool in origins {
            lock(&origin_pool.idle).clear();
        }
    }
}

/// Counts a request as waiting for as long as it waits, even when it is cancelled meanwhile.
struct Waiting<'a>(&'a AtomicUsize);

impl<'a> Waiting<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        counter.fetch_add(1, Ordering::AcqRel);
        Self(counter)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

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
    use super::*;

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
