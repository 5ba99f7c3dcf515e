//! Shared state against a real `redis-server` (started here on a free 127.0.0.1 port, no
//! persistence, killed after): two slots of one scope see one admission estimate and one
//! breaker; with Redis killed their decisions fall back and go on; restarted, they rejoin.
//! Skipped, saying so, only where `redis-server` is not installed, and never under CI.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anilink_transport::admission::{Answer, QuotaReading, Rules};
use anilink_transport::breaker::{Admission, BreakerConfig, Outcome};
use anilink_transport::error::Protocol;
use anilink_transport::host_store::{HostStore, SharingMode};
use anilink_transport::request::{RequestSpec, ResultShape};
use anilink_transport::shared_state::{Notice, RedisTarget, SharedStateConfig};

const NOW: u64 = 1_700_000_000_000;
const HOST: &str = "api.test";

struct RedisServer {
    child: Child,
    dir: PathBuf,
}

impl RedisServer {
    fn start(port: u16, dir: PathBuf) -> Self {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no"])
            .arg("--dir")
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Self { child, dir }
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn redis_installed() -> bool {
    let installed = Command::new("redis-server")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !installed {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must install redis-server (.ci/run does)"
        );
        eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
    }
    installed
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn spec() -> RequestSpec {
    RequestSpec::new(
        http::Method::GET,
        "http://api.test/x",
        http::HeaderMap::new(),
        bytes::Bytes::new(),
        Protocol::Rest,
        ResultShape::Rest,
    )
    .unwrap()
}

const BREAKER: BreakerConfig = BreakerConfig {
    threshold: 2,
    cooldown_ms: 60_000,
};

fn rules(holder: u64) -> Rules {
    Rules {
        server_quota: true,
        floor: 1,
        degraded_limit: None,
        ceiling: None,
        holder,
        lease_ms: Some(60_000),
    }
}

#[tokio::test]
async fn two_slots_share_one_scope_fall_back_without_redis_and_rejoin() {
    if !redis_installed() {
        return;
    }
    let port = free_port();
    let dir = std::env::temp_dir().join(format!("anilink-redis-{}-{port}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut server = RedisServer::start(port, dir.clone());
    let config = Arc::new(SharedStateConfig {
        redis: RedisTarget::parse(&format!("redis://127.0.0.1:{port}")).unwrap(),
        key_prefix: "it".into(),
        timeout_ms: 500,
        lease_ms: 60_000,
    });
    let (a, b) = (
        HostStore::new(Some(&config), "anilist", &Default::default()),
        HostStore::new(Some(&config), "anilist", &Default::default()),
    );
    let key = a.key_for(&spec()).unwrap();
    assert_eq!(key, "it:{anilist:api.test:anonymous}:state");

    // One admission estimate: a learns the quota, b's reservations count for a.
    let reading = QuotaReading {
        limit: 5.0,
        remaining: 2.0,
        reset_ms: Some(NOW + 30_000),
    };
    let (_, notice) = a
        .with(HOST, Some(&key), NOW, |s| {
            s.admission
                .learn(&Answer::Served(Some(reading)), 1, 0, NOW, NOW)
        })
        .await;
    assert_eq!(notice, None);
    for holder in [1, 2] {
        let (admitted, _) = b
            .with(HOST, Some(&key), NOW, |s| {
                s.admission.try_admit(&rules(holder), NOW)
            })
            .await;
        assert_eq!(admitted, Ok(()));
    }
    let (verdict, _) = a
        .with(HOST, Some(&key), NOW, |s| {
            s.admission.try_admit(&rules(3), NOW)
        })
        .await;
    assert!(
        verdict.is_err(),
        "b's two requests in flight use what is left"
    );
    assert_eq!(a.snapshot(NOW)[0].admission.unwrap().in_flight, 2);

    // One breaker: a's failures open it for b.
    for request in [10, 11] {
        a.with(HOST, Some(&key), NOW, |s| {
            s.breaker_used = true;
            s.breaker.admit(&BREAKER, NOW, request);
            s.breaker
                .record(&BREAKER, Outcome::Availability, NOW, request)
        })
        .await;
    }
    let (admission, _) = b
        .with(HOST, Some(&key), NOW + 1, |s| {
            s.breaker.admit(&BREAKER, NOW + 1, 12)
        })
        .await;
    assert!(matches!(admission, Admission::FastFail { .. }));

    // The key expires.
    let client = redis::Client::open(format!("redis://127.0.0.1:{port}")).unwrap();
    let mut raw = client.get_multiplexed_async_connection().await.unwrap();
    let ttl: i64 = redis::cmd("PTTL")
        .arg(&key)
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 300_000, "PTTL {ttl}");
    drop(raw);

    // Redis killed: decisions go on locally, from the last fleet state, with one notice.
    server.kill();
    let (admission, notice) = a
        .with(HOST, Some(&key), NOW + 2, |s| {
            s.breaker.admit(&BREAKER, NOW + 2, 13)
        })
        .await;
    assert!(
        matches!(admission, Admission::FastFail { .. }),
        "local copy"
    );
    assert!(
        matches!(notice, Some(Notice::Unavailable { .. })),
        "{notice:?}"
    );
    assert_eq!(a.mode(), SharingMode::LocalFallback);
    let (_, notice) = a
        .with(HOST, Some(&key), NOW + 3, |s| {
            s.pace_deadline = Some(NOW + 100)
        })
        .await;
    assert_eq!(notice, None, "one notice per outage");

    // Restarted (empty): the next try after the interval rejoins.
    let _server = RedisServer::start(port, dir);
    let (deadline, notice) = a
        .with(HOST, Some(&key), NOW + 1_000, |s| s.pace_deadline)
        .await;
    assert_eq!(notice, Some(Notice::Rejoined));
    assert_eq!(deadline, None, "the fleet's (new, empty) state again");
    assert_eq!(a.mode(), SharingMode::Redis);
}
