//! [`SharedHostStates`]: the per-host state of a slot kept in Redis, one key per scope, with
//! the slot's own copy as the fallback. Every decision asks Redis ([`cas::update`]) unless the
//! slot is in fallback ([`Link`]); a Redis error or no answer within `timeoutMs` is an outage and
//! makes that decision local. Contention (other writers winning every attempt, or until the
//! deadline, while Redis answers) makes only that one decision local, without a fallback. The local copy is the last fleet state read for the host, so a fallback
//! starts from the fleet's view rather than from nothing, and it keeps deciding (responses,
//! reservations, breaker) while Redis is away. The requests a local decision admits are carried
//! into the fleet's state by the scope's next Redis decision (the rejoin, after an outage), in
//! the same compare-and-set, so the other processes count them while they are in flight; and
//! the requests a local decision settled are released from the fleet's state there too (else
//! the reservations they took through Redis would hold the fleet's quota until their lease).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::cas::{self, StateBackend, UpdateError};
use super::config::SharedStateConfig;
use super::link::{Link, Notice};
use super::scope::{credential_id, state_key};
use crate::cache::fleet::FleetInvalidation;
use crate::host_state::{HostSnapshot, HostState, HostStates};
use crate::pacing::MAX_PACE_WAIT_MS;
use crate::random::RandomSource;
use crate::request::RequestSpec;

/// A key untouched this long expires (its TTL is refreshed by every write): longer than any
/// window or deadline the mechanisms keep (at most [`MAX_PACE_WAIT_MS`]) or a lease.
fn ttl_ms(config: &SharedStateConfig) -> u64 {
    config.lease_ms.max(MAX_PACE_WAIT_MS)
}

/// What a scope's local decisions did since its last Redis decision, for the next one to carry
/// into the fleet's state (with the local copy's estimate of the window, which the answers
/// received meanwhile lowered).
#[derive(Clone, Debug, Default)]
struct Unshared {
    /// The holders of requests admitted locally and still held in the local copy.
    admitted: Vec<u64>,
    /// The holders whose requests a local decision released: the reservations they may hold
    /// in the fleet's state (taken through Redis) are released there.
    released: Vec<u64>,
}

pub struct SharedHostStates<B> {
    config: Arc<SharedStateConfig>,
    /// The provider part of the keys (`anilist`, `mal`).
    provider: String,
    backend: Arc<B>,
    link: Mutex<Link>,
    /// One Redis decision of the slot at a time: its own calls never conflict with each other.
    turn: tokio::sync::Mutex<()>,
    local: HostStates,
    /// The scopes decided locally since their last Redis decision, and what those decisions
    /// did that the fleet's state has not seen.
    unshared: Mutex<HashMap<String, Unshared>>,
    /// A fleet-wide response cache's invalidations that Redis missed (writes that succeeded
    /// while it was away), by upstream host: the first cache operation after the rejoin
    /// applies them (`fleet_cache`).
    deferred_invalidations: Mutex<Vec<(String, FleetInvalidation)>>,
    /// Spreads the pauses after lost compare-and-sets.
    random: Box<dyn RandomSource>,
}

impl<B: StateBackend> SharedHostStates<B> {
    pub fn new(
        config: Arc<SharedStateConfig>,
        provider: &str,
        backend: Arc<B>,
        random: Box<dyn RandomSource>,
    ) -> Self {
        Self {
            config,
            provider: provider.to_string(),
            backend,
            link: Mutex::default(),
            turn: tokio::sync::Mutex::new(()),
            local: HostStates::default(),
            unshared: Mutex::default(),
            deferred_invalidations: Mutex::default(),
            random,
        }
    }

    /// The key of the scope `spec` belongs to (its host and its credentials).
    pub fn key_for(&self, spec: &RequestSpec) -> String {
        state_key(
            &self.config.key_prefix,
            &self.provider,
            &spec.host,
            &credential_id(&spec.headers),
        )
    }

    pub fn lease_ms(&self) -> u64 {
        self.config.lease_ms
    }

    /// `host:port` of the Redis server, for diagnostics.
    pub fn redis_address(&self) -> String {
        self.config.redis.address()
    }

    /// Run `decide` on the fleet's state of `key`, or on the local copy when Redis is not
    /// asked, does not answer in time or is contended; the notice says when that switched.
    pub async fn with<R>(
        &self,
        host: &str,
        key: &str,
        now_ms: u64,
        mut decide: impl FnMut(&mut HostState) -> R,
    ) -> (R, Option<Notice>) {
        // The slot's turn first (its own decisions queue here, not in Redis); then only the
        // Redis round trips count against timeoutMs. Behind a decision that timed out, the
        // queue finds the slot in fallback and decides locally at once.
        let _turn = self.turn.lock().await;
        if !self.lock_link().try_claim(now_ms) {
            return (self.decide_locally(host, key, now_ms, decide), None);
        }
        let unshared = self.lock_unshared().get(key).cloned();
        let carried = unshared
            .as_ref()
            .map(|unshared| (unshared, self.local.with(host, |s| s.admission.clone())));
        let rejoining = self.lock_link().in_fallback();
        let mut with_unshared = |fleet: &mut HostState| {
            if let Some((unshared, local)) = &carried {
                for holder in &unshared.released {
                    fleet.admission.release(*holder);
                }
                fleet.admission.absorb(local, now_ms);
                fleet.admission.adopt(local, &unshared.admitted, now_ms);
            }
            if rejoining {
                fleet.admission.rejoined();
            }
            decide(fleet)
        };
        let outcome = cas::update(
            &*self.backend,
            key,
            ttl_ms(&self.config),
            Duration::from_millis(self.config.timeout_ms),
            &*self.random,
            &mut with_unshared,
        )
        .await;
        match outcome {
            Ok((result, fleet)) => {
                self.local.with(host, |state| *state = fleet);
                if unshared.is_some() {
                    self.lock_unshared().remove(key);
                }
                (result, self.lock_link().succeeded())
            }
            Err(UpdateError::Contended) => (self.decide_locally(host, key, now_ms, decide), None),
            Err(UpdateError::Silent) => self.decide_in_outage(
                host,
                key,
                now_ms,
                format!(
                    "no answer within {} ms (sharedState.timeoutMs)",
                    self.config.timeout_ms
                ),
                decide,
            ),
            Err(UpdateError::Unavailable(cause)) => {
                self.decide_in_outage(host, key, now_ms, cause, decide)
            }
        }
    }

    /// Redis is away: fall back (saying so once per outage) and decide locally.
    fn decide_in_outage<R>(
        &self,
        host: &str,
        key: &str,
        now_ms: u64,
        cause: String,
        decide: impl FnOnce(&mut HostState) -> R,
    ) -> (R, Option<Notice>) {
        let notice = self.lock_link().failed(now_ms, cause);
        (self.decide_locally(host, key, now_ms, decide), notice)
    }

    /// Decide on the local copy, within this process's share of the quota until the fleet's
    /// state is read again, noting the requests it admits for the fleet (and forgetting those
    /// the copy no longer holds: released, or their lease over).
    fn decide_locally<R>(
        &self,
        host: &str,
        key: &str,
        now_ms: u64,
        decide: impl FnOnce(&mut HostState) -> R,
    ) -> R {
        let (result, before, held) = self.local.with(host, |state| {
            state.admission.decide_alone(now_ms);
            let before: Vec<u64> = state.admission.holders().collect();
            let result = decide(state);
            (
                result,
                before,
                state.admission.holders().collect::<Vec<u64>>(),
            )
        });
        let mut unshared = self.lock_unshared();
        let unshared = unshared.entry(key.to_string()).or_default();
        unshared
            .released
            .extend(before.iter().filter(|holder| !held.contains(holder)));
        unshared.admitted.retain(|holder| held.contains(holder));
        unshared
            .admitted
            .extend(held.iter().filter(|holder| !before.contains(holder)));
        result
    }

    /// One Redis round trip outside the state's decisions (the fleet cache's), on the same link:
    /// in fallback only the claimed rejoin try asks (else None at once), and a failure or no
    /// answer within `timeoutMs` is an outage like a decision's, with the same single notice.
    pub(super) async fn on_redis<T>(
        &self,
        now_ms: u64,
        op: impl std::future::Future<Output = Result<T, String>>,
    ) -> (Option<T>, Option<Notice>) {
        if !self.lock_link().try_claim(now_ms) {
            return (None, None);
        }
        let limit = Duration::from_millis(self.config.timeout_ms);
        let cause = match crate::timers::timeout(limit, op).await {
            Ok(Ok(value)) => return (Some(value), self.lock_link().succeeded()),
            Ok(Err(cause)) => cause,
            Err(_) => format!(
                "no answer within {} ms (sharedState.timeoutMs)",
                self.config.timeout_ms
            ),
        };
        (None, self.lock_link().failed(now_ms, cause))
    }

    pub(super) fn deferred_invalidations(
        &self,
    ) -> MutexGuard<'_, Vec<(String, FleetInvalidation)>> {
        self.deferred_invalidations
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn backend(&self) -> &B {
        &self.backend
    }

    pub(super) fn key_prefix(&self) -> &str {
        &self.config.key_prefix
    }

    pub(super) fn provider(&self) -> &str {
        &self.provider
    }

    /// The local copy only, synchronously (a call dropped mid-flight releases here; its
    /// reservation in Redis ends with its lease).
    pub fn with_local<R>(&self, host: &str, f: impl FnOnce(&mut HostState) -> R) -> R {
        self.local.with(host, f)
    }

    pub fn in_fallback(&self) -> bool {
        self.lock_link().in_fallback()
    }

    /// The hosts as last read from Redis (or as decided locally while in fallback).
    pub fn snapshot(&self, now_ms: u64) -> Vec<HostSnapshot> {
        self.local.snapshot(now_ms)
    }

    fn lock_link(&self) -> MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock_unshared(&self) -> MutexGuard<'_, HashMap<String, Unshared>> {
        self.unshared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::super::cas::fake::FakeBackend;
    use super::super::config::RedisTarget;
    use super::super::link::REJOIN_INTERVAL_MS;
    use super::*;
    use crate::admission::{Rules, RECHECK_MS};
    use crate::random::SeededRandom;

    fn config(timeout_ms: u64) -> Arc<SharedStateConfig> {
        Arc::new(SharedStateConfig {
            redis: RedisTarget::parse("redis://user:pw@127.0.0.1:6379").unwrap(),
            key_prefix: "t".into(),
            timeout_ms,
            lease_ms: 1_000,
        })
    }

    fn slot<B: StateBackend>(timeout_ms: u64, backend: &Arc<B>) -> SharedHostStates<B> {
        let random = Box::new(SeededRandom::new(11));
        SharedHostStates::new(config(timeout_ms), "anilist", backend.clone(), random)
    }

    fn store(backend: &Arc<FakeBackend>) -> SharedHostStates<FakeBackend> {
        slot(50, backend)
    }

    #[tokio::test]
    async fn two_slots_on_one_scope_share_one_state() {
        let backend = Arc::new(FakeBackend::default());
        let (a, b) = (store(&backend), store(&backend));
        a.with("h", "k", 0, |s| s.pace_deadline = Some(7)).await;
        let (seen, notice) = b.with("h", "k", 0, |s| s.pace_deadline).await;
        assert_eq!((seen, notice), (Some(7), None));
        let (other, _) = b
            .with("h", "other-credential", 0, |s| s.pace_deadline)
            .await;
        assert_eq!(other, None, "another scope's key is another state");
        assert_eq!(
            b.snapshot(0)[0].pace_deadline,
            None,
            "the snapshot shows the last read"
        );
        let entries = backend.entries.lock().unwrap();
        assert_eq!(entries["k"].2, MAX_PACE_WAIT_MS, "every write sets the TTL");
    }

    #[tokio::test]
    async fn an_outage_falls_back_once_keeps_deciding_locally_and_rejoins_once() {
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        slot.with("h", "k", 0, |s| s.pace_deadline = Some(1)).await;
        backend.down.store(true, Ordering::SeqCst);
        let (seen, notice) = slot.with("h", "k", 10, |s| s.pace_deadline).await;
        assert_eq!(seen, Some(1), "the local copy is the last fleet state");
        assert!(
            matches!(notice, Some(Notice::Unavailable { cause }) if cause == "connection refused")
        );
        assert!(slot.in_fallback());
        let (_, notice) = slot.with("h", "k", 20, |s| s.pace_deadline = Some(2)).await;
        assert_eq!(notice, None, "one diagnostic per outage");
        backend.down.store(false, Ordering::SeqCst);
        let (_, notice) = slot.with("h", "k", 30, |_| ()).await;
        assert_eq!(notice, None, "not tried again before the interval");
        let (seen, notice) = slot
            .with("h", "k", 10 + REJOIN_INTERVAL_MS, |s| s.pace_deadline)
            .await;
        assert_eq!(
            (seen, notice),
            (Some(1), Some(Notice::Rejoined)),
            "the fleet's value again"
        );
        assert!(!slot.in_fallback());
    }

    #[tokio::test]
    async fn in_an_outage_a_slot_admits_its_share_until_the_fleet_is_read_again() {
        use crate::admission::{Answer, QuotaReading};
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        let rules = |process: u64, request: u64| Rules {
            server_quota: true,
            floor: 1,
            ..leased((process << 32) | request)
        };
        let reading = QuotaReading {
            limit: 8.0,
            remaining: 8.0,
            reset_ms: Some(60_000),
        };
        slot.with("h", "k", 0, |s| {
            s.admission
                .learn(&Answer::Served(Some(reading)), 1, 0, 0, 0)
        })
        .await;
        // Two processes admit and finish a request each through Redis.
        for process in [1, 2] {
            let (admitted, _) = slot
                .with("h", "k", 0, |s| {
                    s.admission.try_admit(&rules(process, 0), 0)
                })
                .await;
            assert_eq!(admitted, Ok(()));
            slot.with("h", "k", 0, |s| s.admission.release(process << 32))
                .await;
        }
        backend.down.store(true, Ordering::SeqCst);
        let mut admitted = 0;
        while slot
            .with("h", "k", 10, |s| {
                s.admission.try_admit(&rules(1, admitted + 1), 10)
            })
            .await
            .0
            .is_ok()
        {
            admitted += 1;
        }
        assert_eq!(admitted, 4, "half of the 8 left, not all of them");
        backend.down.store(false, Ordering::SeqCst);
        let rejoin_at = 10 + REJOIN_INTERVAL_MS;
        let (_, notice) = slot
            .with("h", "k", rejoin_at, |s| {
                s.admission.try_admit(&rules(1, 99), rejoin_at)
            })
            .await;
        assert_eq!(notice, Some(Notice::Rejoined));
        assert_eq!(
            slot.with_local("h", |s| s.admission.snapshot(rejoin_at).in_flight),
            5,
            "the fleet's estimate again, with the 4 admitted alone carried in"
        );
        // That estimate may be behind: one request asks until an answer tells the quota.
        let (second, _) = slot
            .with("h", "k", rejoin_at, |s| {
                s.admission.try_admit(&rules(1, 100), rejoin_at)
            })
            .await;
        assert_eq!(second, Err(RECHECK_MS));
        let answered = QuotaReading {
            remaining: 7.0,
            ..reading
        };
        slot.with("h", "k", rejoin_at + 5, |s| {
            s.admission.learn(
                &Answer::Served(Some(answered)),
                1,
                0,
                rejoin_at,
                rejoin_at + 5,
            );
            s.admission.release((1 << 32) | 99);
        })
        .await;
        let mut admitted = 0;
        while slot
            .with("h", "k", rejoin_at + 5, |s| {
                s.admission
                    .try_admit(&rules(1, 200 + admitted), rejoin_at + 5)
            })
            .await
            .0
            .is_ok()
        {
            admitted += 1;
        }
        assert_eq!(
            admitted, 3,
            "open again: 7 left by the answer, the 4 admitted alone still in flight"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn repeated_conflicts_decide_locally_without_leaving_redis() {
        let backend = Arc::new(FakeBackend::default());
        // 32 lost writes and their pauses (about 46 ms) take longer than the 20 ms timeout:
        // still contention, not an outage.
        let slot = slot(20, &backend);
        backend
            .conflicts
            .store(cas::MAX_CAS_ATTEMPTS, Ordering::SeqCst);
        let (_, notice) = slot.with("h", "k", 0, |s| s.pace_deadline = Some(3)).await;
        assert_eq!(notice, None, "contention is not an outage");
        assert!(!slot.in_fallback());
        assert_eq!(slot.with_local("h", |s| s.pace_deadline), Some(3));
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_but_answering_redis_under_contention_stays_shared() {
        // Every answer 8 ms, every write lost: the 50 ms run out while Redis answers.
        let backend = Arc::new(FakeBackend::default());
        backend.conflicts.store(u32::MAX, Ordering::SeqCst);
        backend.latency_ms.store(8, Ordering::SeqCst);
        let slot = store(&backend);
        let (_, notice) = slot.with("h", "k", 0, |s| s.pace_deadline = Some(3)).await;
        assert_eq!(notice, None);
        assert!(!slot.in_fallback());
        assert_eq!(slot.with_local("h", |s| s.pace_deadline), Some(3));
        backend.conflicts.store(0, Ordering::SeqCst);
        let (seen, notice) = slot.with("h", "k", 10, |s| s.pace_deadline).await;
        assert_eq!(
            (seen, notice),
            (None, None),
            "the next decision asks Redis again"
        );
    }

    fn leased(holder: u64) -> Rules {
        Rules {
            server_quota: false,
            floor: 0,
            degraded_limit: None,
            ceiling: None,
            holder,
            lease_ms: Some(1_000),
        }
    }

    /// What another process of the fleet sees in flight on the scope at `now_ms`.
    async fn fleet_in_flight(backend: &Arc<FakeBackend>, now_ms: u64) -> u32 {
        let (in_flight, _) = store(backend)
            .with("h", "k", now_ms, |s| s.admission.snapshot(now_ms).in_flight)
            .await;
        in_flight
    }

    #[tokio::test]
    async fn requests_admitted_through_redis_and_settled_in_an_outage_are_released_on_rejoin() {
        // A failover: the fleet's state (reservations of 1 to 4) outlives the outage, but the
        // releases decided meanwhile reached only the local copy.
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        for holder in 1..=4 {
            let (admitted, _) = slot
                .with("h", "k", 10, |s| s.admission.try_admit(&leased(holder), 10))
                .await;
            assert_eq!(admitted, Ok(()));
        }
        assert_eq!(fleet_in_flight(&backend, 10).await, 4);
        backend.down.store(true, Ordering::SeqCst);
        for holder in [1, 2, 3] {
            slot.with("h", "k", 20, |s| s.admission.release(holder))
                .await;
        }
        // 3 is retried while Redis is away: admitted again, on the local copy.
        let (admitted, _) = slot
            .with("h", "k", 30, |s| s.admission.try_admit(&leased(3), 30))
            .await;
        assert_eq!(admitted, Ok(()));

        backend.down.store(false, Ordering::SeqCst);
        let rejoin_at = 20 + REJOIN_INTERVAL_MS;
        let (_, notice) = slot.with("h", "k", rejoin_at, |_| ()).await;
        assert_eq!(notice, Some(Notice::Rejoined));
        assert_eq!(
            fleet_in_flight(&backend, rejoin_at).await,
            2,
            "4 (never settled) and the retry of 3; not their lease's worth of stale reservations"
        );
        assert!(slot.lock_unshared().is_empty(), "nothing left to release");
    }

    #[tokio::test]
    async fn requests_admitted_in_an_outage_join_the_fleet_on_rejoin_and_are_released_there() {
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        backend.down.store(true, Ordering::SeqCst);
        for holder in 1..=4 {
            let (admitted, _) = slot
                .with("h", "k", 10, |s| s.admission.try_admit(&leased(holder), 10))
                .await;
            assert_eq!(admitted, Ok(()));
        }
        slot.with("h", "k", 20, |s| s.admission.release(4)).await;
        slot.with_local("h", |s| s.admission.release(3));
        assert!(slot.in_fallback());

        backend.down.store(false, Ordering::SeqCst);
        let rejoin_at = 10 + REJOIN_INTERVAL_MS;
        let (_, notice) = slot.with("h", "k", rejoin_at, |_| ()).await;
        assert_eq!(notice, Some(Notice::Rejoined));
        assert_eq!(
            fleet_in_flight(&backend, rejoin_at).await,
            2,
            "1 and 2 still in flight; 3 and 4 released during the outage"
        );
        assert_eq!(
            backend.writes.load(Ordering::SeqCst),
            1,
            "pushed by the rejoining decision's own compare-and-set"
        );

        for holder in [1, 2] {
            slot.with("h", "k", rejoin_at, |s| s.admission.release(holder))
                .await;
        }
        assert_eq!(fleet_in_flight(&backend, rejoin_at).await, 0);
        assert!(slot.lock_unshared().is_empty(), "nothing left to push");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_admitted_under_contention_joins_the_fleet_with_the_next_decision() {
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        backend
            .conflicts
            .store(cas::MAX_CAS_ATTEMPTS, Ordering::SeqCst);
        let (admitted, notice) = slot
            .with("h", "k", 0, |s| s.admission.try_admit(&leased(1), 0))
            .await;
        assert_eq!((admitted, notice), (Ok(()), None));
        assert_eq!(fleet_in_flight(&backend, 0).await, 0, "decided locally");
        slot.with("h", "k", 0, |_| ()).await;
        assert_eq!(fleet_in_flight(&backend, 0).await, 1);
    }

    #[tokio::test]
    async fn concurrent_decisions_of_one_slot_take_turns() {
        let backend = Arc::new(FakeBackend::default());
        let slot = store(&backend);
        let add = |amount: u64| {
            let slot = &slot;
            async move {
                slot.with("h", "k", 0, move |s| {
                    s.pace_deadline = Some(s.pace_deadline.unwrap_or(0) + amount)
                })
                .await
            }
        };
        tokio::join!(add(1), add(2), add(3), add(4));
        assert_eq!(
            slot.with_local("h", |s| s.pace_deadline),
            Some(10),
            "every decision applied once, on the state the previous one wrote"
        );
        assert_eq!(
            backend.lost.load(Ordering::SeqCst),
            0,
            "no compare-and-set was lost"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_slow_redis_times_out_into_fallback() {
        struct Slow;
        impl StateBackend for Slow {
            async fn read(&self, _: &str) -> Result<(u64, Option<Vec<u8>>), String> {
                tokio::time::sleep(Duration::from_secs(5)).await;
                Ok((0, None))
            }
            async fn write_if(&self, _: &str, _: u64, _: &[u8], _: u64) -> Result<bool, String> {
                Ok(true)
            }
        }
        let slot = slot(50, &Arc::new(Slow));
        let started = tokio::time::Instant::now();
        let (_, notice) = slot.with("h", "k", 0, |_| ()).await;
        assert_eq!(started.elapsed(), Duration::from_millis(50));
        assert!(
            matches!(notice, Some(Notice::Unavailable { cause }) if cause.contains("within 50 ms"))
        );
    }

    #[test]
    fn keys_name_the_provider_host_and_credential_digest() {
        let backend = Arc::new(FakeBackend::default());
        let spec = RequestSpec::new(
            http::Method::GET,
            "http://h:1/x",
            http::HeaderMap::new(),
            bytes::Bytes::new(),
            crate::error::Protocol::Rest,
            crate::request::ResultShape::Rest,
        )
        .unwrap();
        let key = store(&backend).key_for(&spec);
        assert_eq!(key, "t:{anilist:h:1:anonymous}:state");
    }
}
