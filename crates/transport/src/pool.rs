//! Keep-alive connection pools: the native stand-in for Node's HTTP agents (decisions D13).
//!
//! A [`Pool`] holds, per origin, at most `max_sockets` connections in use at once (a hard cap:
//! a request waits for a permit before it may take or open a connection) and keeps at most
//! `max_free_sockets` of them idle over time, reused last-in first-out so the warmest connection
//! serves next and the coldest ones age out. A connection is never closed when it is given back
//! (unless `max_free_sockets` is 0): answers that arrive together free many connections before
//! JavaScript starts the calls that follow, which need them all (issue 37). Those above
//! `max_free_sockets` are closed once they stayed idle for [`SURPLUS_GRACE`]. Idle connections
//! are watched, and one the server closes or resets is dropped at once (module `origin`).
//!
//! The [`PoolRegistry`] shares one default pool among all requests that set no bounds and use
//! no proxy, and caches dedicated pools per bound pair and proxy configuration, least recently
//! used first out (module `registry`). Connections come from [`connector`]. Every request holds its own reference
//! to its pool, so evicting or destroying a pool never fails a request in flight: it finishes,
//! and its connection is then closed instead of kept.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::OwnedSemaphorePermit;

use crate::connector;
use crate::error::TransportError;
use crate::executor;
use crate::http1::Connection;
use crate::options::settings::PoolBounds;
use crate::proxy::{ProxyRules, ProxyServer};
use crate::request::Origin;
use crate::trust::Trust;

mod origin;
mod registry;

use origin::OriginPool;

pub use registry::{PoolRegistry, MAX_CACHED_POOLS};

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
        self.claim_socket(origin)
            .await?
            .connect(origin, fresh)
            .await
    }

    /// Wait until fewer than `max_sockets` connections to `origin` are in use and claim one:
    /// the wait a saturated pool imposes, which is not part of an attempt's timeout (D32).
    pub async fn claim_socket(
        self: &Arc<Self>,
        origin: &Origin,
    ) -> Result<SocketClaim, TransportError> {
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
        Ok(SocketClaim {
            origin_pool,
            pool: self.clone(),
            permit,
        })
    }
}

/// A claimed place under `max_sockets`, not yet a connection.
pub struct SocketClaim {
    origin_pool: Arc<OriginPool>,
    pool: Arc<Pool>,
    permit: OwnedSemaphorePermit,
}

impl SocketClaim {
    /// The connection for this claim: the warmest idle one, or (with `fresh`, or none idle) a new one.
    pub async fn connect(self, origin: &Origin, fresh: bool) -> Result<Lease, TransportError> {
        let SocketClaim {
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
