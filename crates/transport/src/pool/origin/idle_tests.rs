//! Idle connections over real sockets on 127.0.0.1: the batch that frees many at once keeps
//! them (issue 37), the surplus above `max_free_sockets` is closed once it stayed idle for
//! [`SURPLUS_GRACE`] (on tokio's paused clock), and one the server closes or resets is dropped
//! as soon as the reactor reports it (issue 35).

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use super::super::*;
use super::*;

/// Bounds in any test's time: a connection the server closed must be gone well within this.
const PROMPTLY: Duration = Duration::from_secs(1);

struct Server {
    origin: Origin,
    accepted: mpsc::UnboundedReceiver<TcpStream>,
}

impl Server {
    async fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("address").port();
        let (accepted_tx, accepted) = mpsc::unbounded_channel();
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                if accepted_tx.send(stream).is_err() {
                    return;
                }
            }
        });
        Server {
            origin: Origin {
                https: false,
                host: "127.0.0.1".into(),
                port,
            },
            accepted,
        }
    }

    async fn next_connection(&mut self) -> TcpStream {
        tokio::time::timeout(PROMPTLY, self.accepted.recv())
            .await
            .expect("the client connected")
            .expect("the server runs")
    }
}

fn default_pool() -> Arc<Pool> {
    Pool::new(
        Some(PoolBounds::DEFAULT),
        Arc::new(ProxyRules::default()),
        Arc::default(),
    )
}

async fn lease_all(pool: &Arc<Pool>, origin: &Origin, count: usize) -> Vec<Lease> {
    let mut leases = Vec::new();
    for _ in 0..count {
        leases.push(pool.lease(origin, false).await.expect("lease"));
    }
    leases
}

fn idle_count(pool: &Pool, origin: &Origin) -> usize {
    lock(&pool.origin_pool(origin).idle).connections.len()
}

/// Let spawned keepers run (on the paused clock, without letting time move).
async fn settle() {
    for _ in 0..10 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test]
async fn connections_freed_together_serve_the_calls_that_follow() {
    let server = Server::start().await;
    let pool = default_pool();
    let mut opened = 0;
    for _ in 0..5 {
        let leases = lease_all(&pool, &server.origin, 8).await;
        opened += leases.iter().filter(|lease| !lease.reused).count();
        // Eight answers arriving together: all eight free before the next calls start.
        for lease in leases {
            lease.release();
        }
    }
    assert_eq!(opened, 8, "five rounds of 8 in flight at default bounds");
}

#[tokio::test]
async fn the_surplus_is_closed_once_it_stayed_idle_for_the_grace_oldest_first() {
    let server = Server::start().await;
    let pool = default_pool();
    let origin = &server.origin;
    let leases = lease_all(&pool, origin, 8).await;
    tokio::time::pause();
    for lease in leases {
        lease.release();
    }
    settle().await;
    assert_eq!(idle_count(&pool, origin), 8, "nothing is closed on release");

    tokio::time::advance(SURPLUS_GRACE - Duration::from_millis(10)).await;
    settle().await;
    assert_eq!(idle_count(&pool, origin), 8, "not before the grace");
    // Three are used again meanwhile: their idle time starts over.
    for lease in lease_all(&pool, origin, 3).await {
        assert!(lease.reused);
        lease.release();
    }

    tokio::time::advance(Duration::from_millis(20)).await;
    settle().await;
    assert_eq!(
        idle_count(&pool, origin),
        5,
        "the three oldest surplus connections are closed"
    );
    let since: Vec<Instant> = lock(&pool.origin_pool(origin).idle)
        .connections
        .iter()
        .map(|kept| kept.since)
        .collect();
    assert_eq!(
        since
            .iter()
            .filter(|at| at.elapsed() < SURPLUS_GRACE)
            .count(),
        3,
        "the three used again are kept"
    );

    tokio::time::advance(SURPLUS_GRACE * 5).await;
    settle().await;
    assert_eq!(
        idle_count(&pool, origin),
        5,
        "maxFreeSockets stay as long as they last"
    );
}

#[tokio::test]
async fn max_free_sockets_zero_keeps_no_connection_given_back() {
    let server = Server::start().await;
    let pool = Pool::new(
        Some(PoolBounds {
            max_sockets: 4,
            max_free_sockets: 0,
        }),
        Arc::new(ProxyRules::default()),
        Arc::default(),
    );
    for lease in lease_all(&pool, &server.origin, 2).await {
        lease.release();
    }
    assert_eq!(idle_count(&pool, &server.origin), 0);
}

#[tokio::test]
async fn an_idle_connection_the_server_closes_or_resets_is_dropped_at_once() {
    let mut server = Server::start().await;
    let pool = default_pool();
    let origin = server.origin.clone();
    let leases = lease_all(&pool, &origin, 3).await;
    let mut closing = server.next_connection().await;
    let resetting = server.next_connection().await;
    let mut quiet = server.next_connection().await;
    for lease in leases {
        lease.release();
    }
    settle().await;
    assert_eq!(idle_count(&pool, &origin), 3);

    closing.shutdown().await.expect("FIN");
    resetting.set_zero_linger().expect("linger");
    drop(resetting); // RST
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(PROMPTLY, closing.read(&mut byte)).await;
    assert!(
        matches!(read, Ok(Ok(0))),
        "the client closed its end of the connection the server closed: {read:?}"
    );
    tokio::time::timeout(PROMPTLY, async {
        while idle_count(&pool, &origin) > 1 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the reset connection was dropped too");
    let still_open = tokio::time::timeout(Duration::from_millis(50), quiet.read(&mut byte)).await;
    assert!(still_open.is_err(), "the quiet connection is kept");
    assert!(pool.lease(&origin, false).await.expect("lease").reused);
}

#[tokio::test]
async fn teardown_closes_the_idle_connections_and_ends_their_keeper() {
    let mut server = Server::start().await;
    let pool = default_pool();
    let origin = server.origin.clone();
    pool.lease(&origin, false).await.expect("lease").release();
    let mut accepted = server.next_connection().await;
    settle().await;
    let origin_pool = pool.origin_pool(&origin);
    assert_eq!(Arc::weak_count(&origin_pool), 1, "one keeper watches");
    pool.release();
    settle().await;
    assert_eq!(Arc::weak_count(&origin_pool), 0, "the keeper ended");
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(PROMPTLY, accepted.read(&mut byte)).await;
    assert!(matches!(read, Ok(Ok(0))), "closed: {read:?}");
}

/// What the JavaScript thread's driver arms its loop's timer from (decisions D12: an idle
/// process keeps 0 wake-ups): a keeper names a deadline only while a surplus waits to close.
#[tokio::test]
async fn a_keeper_arms_no_timer_unless_a_surplus_waits_to_be_closed() {
    timers::watch_this_thread();
    let server = Server::start().await;
    let pool = default_pool();
    let origin = &server.origin;
    let mut leases = lease_all(&pool, origin, 7).await.into_iter();
    tokio::time::pause();
    for lease in leases.by_ref().take(5) {
        lease.release();
    }
    settle().await;
    assert_eq!(
        timers::earliest(),
        None,
        "maxFreeSockets idle need no timer"
    );

    let released_at = Instant::now();
    for lease in leases {
        lease.release();
    }
    settle().await;
    assert_eq!(timers::earliest(), Some(released_at + SURPLUS_GRACE));

    // tokio's timers fire on the millisecond tick after their deadline.
    tokio::time::advance(SURPLUS_GRACE + Duration::from_millis(1)).await;
    settle().await;
    assert_eq!(idle_count(&pool, origin), 5);
    assert_eq!(
        timers::earliest(),
        None,
        "nothing is armed once the surplus is closed"
    );
}
