//! Keep-alive connection pools: the native stand-in for Node's HTTP agents (decisions D13).
//!
//! A [`Pool`] holds, per origin, at most `max_sockets` connections in use at once (a hard cap:
//! a request waits for a permit before it may take or open a connection) and keeps at most
//! `max_free_sockets` of them idle over time, reused last-in first-out so the warmest connection
//! serves next and the coldest ones age out. A connection is never closed when it is given back
//! (unless `max_free_sockets` is 0): answers that arrive together free many connections before
//! JavaScript starts the calls that follow, which need them all (issue 37). Those above
//! `max_free_sockets` are closed once they stayed idle for [`SURPLUS_GRACE`]. Idle connections
//! are watched, and one the server closes or resets is dropped at once ([`Keeper`]).
//!
//! The [`PoolRegistry`] shares one default pool among all requests that set no bounds and use
//! no proxy, and caches dedicated pools per bound pair and proxy configuration, least recently
//! used first out. Connections come from [`connector`]. Every request holds its own reference
//! to its pool, so evicting or destroying a pool never fails a request in flight: it finishes,
//! and its connection is then closed instead of kept.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};

use crate::connector;
use crate::error::TransportError;
use crate::executor;
use crate::http1::Connection;
use crate::options::settings::PoolBounds;
use crate::proxy::{ProxyRules, ProxyServer};
use crate::request::Origin;
use crate::timers::{self, Watched};
use crate::trust::Trust;

/// Dedicated pools kept in the cache; the least recently used one beyond this is parked.
pub const MAX_CACHED_POOLS: usize = 8;

/// How long a connection above `max_free_sockets` may stay idle before it is closed: ample time
/// for JavaScript to start the calls that follow a batch of answers (a worker thread's answers
/// reach it through a hop, on a loaded loop), short enough that the bound holds over time.
pub const SURPLUS_GRACE: Duration = Duration::from_secs(1);

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
    bounds: PoolBounds,
    idle: Mutex<Idle>,
    /// Requests waiting for a permit: a connection given back while one waits goes to it.
    waiting: AtomicUsize,
}

/// An origin's idle connections and the keepers watching them.
#[derive(Default)]
struct Idle {
    /// Oldest first: a call takes the newest of its own home, the trim closes the oldest.
    connections: Vec<IdleConnection>,
    /// The homes whose [`Keeper`] runs, each with the waker that tells it a connection was added
    /// (None until it is first polled, and while it is being polled).
    keepers: Vec<(u32, Option<Waker>)>,
}

struct IdleConnection {
    /// The [`executor::home`] whose reactor watches the socket: a call takes only one of its own
    /// thread's, so it never waits on another thread's event loop.
    home: u32,
    since: Instant,
    connection: Connection,
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
        origin_pool.keep(home, connection);
        // The permit is released after this, so a waiter always finds the connection kept.
    }
}

impl OriginPool {
    fn new(bounds: PoolBounds) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(bounds.max_sockets as usize)),
            bounds,
            idle: Mutex::default(),
            waiting: AtomicUsize::new(0),
        }
    }

    /// Keep a connection given back idle, and have its home's [`Keeper`] watch it.
    fn keep(self: &Arc<Self>, home: u32, connection: Connection) {
        let mut idle = lock(&self.idle);
        // A connection a waiting request will take is not idle: hand it over rather than close
        // it and make that request dial a new one (as Node's agents do). `max_free_sockets: 0`
        // keeps no other, as with Node; otherwise up to `max_sockets`, all that can run at once.
        let waiting = self.waiting.load(Ordering::Acquire);
        let room = match self.bounds.max_free_sockets {
            0 => waiting,
            _ => waiting.max(self.bounds.max_sockets as usize),
        };
        if idle.connections.len() >= room {
            return; // the connection drops here, closing its socket
        }
        idle.connections.push(IdleConnection {
            home,
            since: Instant::now(),
            connection,
        });
        let keeper = idle.keepers.iter_mut().find(|(of, _)| *of == home);
        if let Some((_, waker)) = keeper {
            let waker = waker.take();
            drop(idle);
            if let Some(waker) = waker {
                waker.wake();
            }
            return;
        }
        idle.keepers.push((home, None));
        drop(idle);
        let keeper = Keeper {
            origin_pool: Arc::downgrade(self),
            home,
            trim: None,
        };
        if !executor::spawn(Box::pin(keeper)) {
            // Nowhere to watch it from (no runtime: never the case for a call): keep nothing.
            let mut idle = lock(&self.idle);
            idle.keepers.retain(|(of, _)| *of != home);
            idle.connections.retain(|kept| kept.home != home);
        }
    }

    /// The warmest idle connection of `home`.
    fn take_idle(&self, home: u32) -> Option<Connection> {
        let mut idle = lock(&self.idle);
        let at = idle
            .connections
            .iter()
            .rposition(|kept| kept.home == home)?;
        Some(idle.connections.remove(at).connection)
    }

    /// One look of `home`'s [`Keeper`]: drop the connections the server closed, close those
    /// above `max_free_sockets` that stayed idle for [`SURPLUS_GRACE`] (oldest first), and say
    /// whether any is left to watch and when the next one ages out.
    fn tend(&self, home: u32, cx: &mut Context<'_>) -> Tended {
        let mut closed = Vec::new();
        let tended = {
            let mut idle = lock(&self.idle);
            let Idle {
                connections,
                keepers,
            } = &mut *idle;
            let mut at = 0;
            while at < connections.len() {
                let kept = &mut connections[at];
                if kept.home == home && kept.connection.poll_unusable(cx) {
                    closed.push(connections.remove(at));
                } else {
                    at += 1;
                }
            }
            let max_free = self.bounds.max_free_sockets as usize;
            let now = Instant::now();
            let oldest_of_home = |connections: &[IdleConnection]| {
                connections.iter().position(|kept| kept.home == home)
            };
            while connections.len() > max_free {
                match oldest_of_home(connections) {
                    Some(at) if connections[at].since + SURPLUS_GRACE <= now => {
                        closed.push(connections.remove(at));
                    }
                    _ => break,
                }
            }
            match oldest_of_home(connections) {
                None => {
                    keepers.retain(|(of, _)| *of != home);
                    Tended::Done
                }
                Some(oldest) => {
                    if let Some((_, waker)) = keepers.iter_mut().find(|(of, _)| *of == home) {
                        *waker = Some(cx.waker().clone());
                    }
                    Tended::Watching {
                        trim_at: (connections.len() > max_free)
                            .then(|| connections[oldest].since + SURPLUS_GRACE),
                    }
                }
            }
        };
        // Closed outside the lock: closing a socket is a system call.
        drop(closed);
        tended
    }

    /// Close every idle connection and stop the keepers (teardown).
    fn close_idle(&self) {
        let Idle {
            connections,
            keepers,
        } = std::mem::take(&mut *lock(&self.idle));
        drop(connections);
        wake_keepers(keepers);
    }
}

impl Drop for OriginPool {
    fn drop(&mut self) {
        // Keepers hold the pool weakly: woken, they find it gone and end.
        let idle = std::mem::take(self.idle.get_mut().unwrap_or_else(|e| e.into_inner()));
        wake_keepers(idle.keepers);
    }
}

fn wake_keepers(keepers: Vec<(u32, Option<Waker>)>) {
    for waker in keepers.into_iter().filter_map(|(_, waker)| waker) {
        waker.wake();
    }
}

/// What a [`Keeper`] found.
enum Tended {
    /// Its home keeps no idle connection here any more.
    Done,
    /// It watches some; `trim_at`: when the oldest of them is due to be closed as surplus.
    Watching { trim_at: Option<Instant> },
}

/// Watches the idle connections one home keeps for an origin, on that home's own loop (where
/// their sockets are registered): a connection the server closes or resets is dropped, its
/// descriptor closed, as soon as the reactor reports it (Node's agents drop theirs on the
/// socket's `close`), rather than held until the host is used again. It runs while the home has
/// idle connections there and sleeps between events: an idle process gets no wake-up from it
/// (decisions D12), only one timer when a surplus is to be closed.
struct Keeper {
    origin_pool: Weak<OriginPool>,
    home: u32,
    /// Armed while the origin keeps more than `max_free_sockets` idle, for the instant given.
    trim: Option<(Instant, Pin<Box<Watched<Sleep>>>)>,
}

impl Future for Keeper {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        let Some(origin_pool) = this.origin_pool.upgrade() else {
            return Poll::Ready(());
        };
        loop {
            let trim_at = match origin_pool.tend(this.home, cx) {
                Tended::Done => return Poll::Ready(()),
                Tended::Watching { trim_at: None } => {
                    this.trim = None;
                    return Poll::Pending;
                }
                Tended::Watching {
                    trim_at: Some(trim_at),
                } => trim_at,
            };
            let timer = match &mut this.trim {
                Some((armed, timer)) if *armed == trim_at => timer,
                unarmed => {
                    &mut unarmed
                        .insert((trim_at, Box::pin(timers::sleep_until(trim_at))))
                        .1
                }
            };
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            this.trim = None; // due: the next look closes it
        }
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
        let created = Arc::new(OriginPool::new(self.bounds));
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
                let popped = origin_pool.take_idle(home);
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
            origin_pool.close_idle();
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
mod idle_tests;

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
