//! One decision on the fleet's state: read the scope's state and version, run the Rust
//! mechanism on it, write it back only if the version is unchanged (an atomic compare-and-set
//! on the server), and on a conflict start over, a bounded number of times and never past the
//! decision's deadline. The mechanisms stay written once (the same state machines as in one
//! process); the store only carries bytes.

use std::future::Future;

use tokio::time::{Duration, Instant};

use crate::host_state::HostState;
use crate::random::RandomSource;
use crate::timers::{self, timeout_at};

/// Attempts of one decision before it gives up and decides locally (all within `timeoutMs`).
/// Decisions of one slot are serialised in the process, so only other processes (or slots)
/// contend for a scope; a local decision is the exception, since what it admits the fleet
/// does not see until the slot's next decision on the scope.
pub const MAX_CAS_ATTEMPTS: u32 = 32;
/// After a lost compare-and-set, a random pause up to this long, so contenders spread out;
/// shortened to what is left before the deadline.
pub const CONFLICT_PAUSE_MAX_MS: u64 = 3;

/// Where scope states live: Redis, or an in-memory fake in tests.
pub trait StateBackend: Send + Sync {
    /// The stored state and its version; `(0, None)` when the key does not exist.
    fn read(
        &self,
        key: &str,
    ) -> impl Future<Output = Result<(u64, Option<Vec<u8>>), String>> + Send;

    /// Store `state` as version `version + 1`, with a `ttl_ms` expiry, if the stored version is
    /// still `version`; false when another writer came first.
    fn write_if(
        &self,
        key: &str,
        version: u64,
        state: &[u8],
        ttl_ms: u64,
    ) -> impl Future<Output = Result<bool, String>> + Send;
}

/// Why a decision could not use the fleet's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UpdateError {
    /// Redis failed; the cause, for the diagnostic.
    Unavailable(String),
    /// Redis did not answer before the deadline, and had not answered this decision with a lost
    /// write either: silence, an outage.
    Silent,
    /// Other writers won every attempt, or kept winning until the deadline: Redis works, this
    /// one decision is made locally.
    Contended,
}

/// Run `decide` on the scope's state atomically, within `timeout`; returns its result and the
/// state as written (or as read, when `decide` changed nothing and nothing was written).
/// `random` spreads the pauses between attempts.
pub async fn update<B: StateBackend, R>(
    backend: &B,
    key: &str,
    ttl_ms: u64,
    timeout: Duration,
    random: &dyn RandomSource,
    decide: &mut impl FnMut(&mut HostState) -> R,
) -> Result<(R, HostState), UpdateError> {
    let deadline = Instant::now() + timeout;
    // A round trip cut off by the deadline after a lost write is contention: Redis answered.
    // (Every attempt after the first follows a lost write.)
    let out_of_time = |attempt: u32| {
        if attempt > 0 {
            UpdateError::Contended
        } else {
            UpdateError::Silent
        }
    };
    for attempt in 0..MAX_CAS_ATTEMPTS {
        if attempt > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(UpdateError::Contended);
            }
            let pause = Duration::from_millis(random.below_inclusive(CONFLICT_PAUSE_MAX_MS));
            timers::sleep(pause.min(left)).await;
        }
        let (version, stored) = timeout_at(deadline, backend.read(key))
            .await
            .map_err(|_| out_of_time(attempt))?
            .map_err(UpdateError::Unavailable)?;
        // A state this version cannot read (another release's format) is started afresh.
        let mut state: HostState = stored
            .as_deref()
            .and_then(|bytes| serde_json::from_slice(bytes).ok())
            .unwrap_or_default();
        let result = decide(&mut state);
        let written =
            serde_json::to_vec(&state).map_err(|e| UpdateError::Unavailable(e.to_string()))?;
        if stored.as_deref() == Some(written.as_slice()) {
            return Ok((result, state));
        }
        if timeout_at(deadline, backend.write_if(key, version, &written, ttl_ms))
            .await
            .map_err(|_| out_of_time(attempt))?
            .map_err(UpdateError::Unavailable)?
        {
            return Ok((result, state));
        }
    }
    Err(UpdateError::Contended)
}

#[cfg(test)]
pub(crate) mod fake {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
    use std::sync::Mutex;

    use super::StateBackend;

    impl FakeBackend {
        async fn round_trip(&self) {
            let latency = self.latency_ms.load(Ordering::SeqCst);
            if latency > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(latency)).await;
            }
        }
    }

    /// One stored scope: version, state, TTL.
    pub type Entry = (u64, Vec<u8>, u64);

    /// An in-memory store; `conflicts` makes the next N writes lose to a phantom writer,
    /// `down` fails every call, and `latency_ms` delays every answer (on tokio's clock).
    #[derive(Default)]
    pub struct FakeBackend {
        pub entries: Mutex<HashMap<String, Entry>>,
        pub conflicts: AtomicU32,
        pub down: std::sync::atomic::AtomicBool,
        pub latency_ms: AtomicU64,
        pub writes: AtomicU32,
        /// Writes refused because another writer came first.
        pub lost: AtomicU32,
    }

    impl StateBackend for FakeBackend {
        async fn read(&self, key: &str) -> Result<(u64, Option<Vec<u8>>), String> {
            self.round_trip().await;
            if self.down.load(Ordering::SeqCst) {
                return Err("connection refused".into());
            }
            let entries = self.entries.lock().unwrap();
            Ok(entries
                .get(key)
                .map_or((0, None), |(v, s, _)| (*v, Some(s.clone()))))
        }

        async fn write_if(
            &self,
            key: &str,
            version: u64,
            state: &[u8],
            ttl_ms: u64,
        ) -> Result<bool, String> {
            self.round_trip().await;
            if self.down.load(Ordering::SeqCst) {
                return Err("connection refused".into());
            }
            // A round trip: other tasks run between a read and its write.
            tokio::task::yield_now().await;
            let mut entries = self.entries.lock().unwrap();
            let stored = entries.get(key).map_or(0, |(v, _, _)| *v);
            let phantom = self
                .conflicts
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                .is_ok();
            if phantom || stored != version {
                self.lost.fetch_add(1, Ordering::SeqCst);
                if phantom {
                    let entry = entries.entry(key.to_string()).or_default();
                    entry.0 += 1;
                }
                return Ok(false);
            }
            self.writes.fetch_add(1, Ordering::SeqCst);
            entries.insert(key.to_string(), (version + 1, state.to_vec(), ttl_ms));
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use super::fake::FakeBackend;
    use super::*;
    use crate::random::SeededRandom;

    const ROOMY: Duration = Duration::from_secs(1);

    async fn run<R>(
        backend: &FakeBackend,
        timeout: Duration,
        mut decide: impl FnMut(&mut HostState) -> R,
    ) -> Result<(R, HostState), UpdateError> {
        update(
            backend,
            "k",
            1_000,
            timeout,
            &SeededRandom::new(7),
            &mut decide,
        )
        .await
    }

    #[tokio::test(start_paused = true)]
    async fn a_conflict_is_retried_on_fresh_state() {
        let backend = FakeBackend::default();
        backend.conflicts.store(2, Ordering::SeqCst);
        let mut runs = 0;
        let (result, state) = run(&backend, ROOMY, |s| {
            runs += 1;
            s.pace_deadline = Some(42);
            "decided"
        })
        .await
        .unwrap();
        assert_eq!(
            (result, state.pace_deadline, runs),
            ("decided", Some(42), 3)
        );
        let entries = backend.entries.lock().unwrap();
        let (version, bytes, ttl) = &entries["k"];
        assert_eq!(
            (*version, *ttl),
            (3, 1_000),
            "two phantom writes, then ours, with its TTL"
        );
        let stored: HostState = serde_json::from_slice(bytes).unwrap();
        assert_eq!(stored.pace_deadline, Some(42));
    }

    #[tokio::test(start_paused = true)]
    async fn repeated_conflicts_give_up() {
        let backend = FakeBackend::default();
        backend.conflicts.store(MAX_CAS_ATTEMPTS, Ordering::SeqCst);
        let outcome = run(&backend, ROOMY, |s| s.pace_deadline = Some(1)).await;
        assert_eq!(outcome.unwrap_err(), UpdateError::Contended);
        assert_eq!(backend.lost.load(Ordering::SeqCst), MAX_CAS_ATTEMPTS);
    }

    #[tokio::test(start_paused = true)]
    async fn conflicts_never_pause_past_the_deadline() {
        // 32 pauses of up to 3 ms (about 46 ms on average) do not fit in 20 ms.
        let backend = FakeBackend::default();
        backend.conflicts.store(MAX_CAS_ATTEMPTS, Ordering::SeqCst);
        let timeout = Duration::from_millis(20);
        let started = Instant::now();
        let outcome = run(&backend, timeout, |s| s.pace_deadline = Some(1)).await;
        assert_eq!(outcome.unwrap_err(), UpdateError::Contended);
        assert_eq!(
            started.elapsed(),
            timeout,
            "the last pause ends at the deadline"
        );
        assert!(backend.lost.load(Ordering::SeqCst) < MAX_CAS_ATTEMPTS);
    }

    #[tokio::test(start_paused = true)]
    async fn the_deadline_reached_while_redis_answers_is_contention() {
        // Every write lost, every answer 8 ms: the deadline cuts a round trip off mid-way.
        let backend = FakeBackend::default();
        backend.conflicts.store(u32::MAX, Ordering::SeqCst);
        backend.latency_ms.store(8, Ordering::SeqCst);
        let timeout = Duration::from_millis(50);
        let started = Instant::now();
        let outcome = run(&backend, timeout, |s| s.pace_deadline = Some(1)).await;
        assert_eq!(outcome.unwrap_err(), UpdateError::Contended);
        assert_eq!(started.elapsed(), timeout);
        assert!(backend.lost.load(Ordering::SeqCst) >= 2);
    }

    #[tokio::test(start_paused = true)]
    async fn no_answer_before_the_deadline_is_silence() {
        let backend = FakeBackend::default();
        backend.latency_ms.store(30, Ordering::SeqCst);
        let timeout = Duration::from_millis(50);
        let started = Instant::now();
        let outcome = run(&backend, timeout, |s| s.pace_deadline = Some(1)).await;
        assert_eq!(
            outcome.unwrap_err(),
            UpdateError::Silent,
            "the read answered, the write did not: no lost write, so silence"
        );
        assert_eq!(started.elapsed(), timeout);
    }

    #[tokio::test]
    async fn an_unchanged_state_is_not_written() {
        let backend = FakeBackend::default();
        run(&backend, ROOMY, |s| s.pace_deadline = Some(1))
            .await
            .unwrap();
        let (deadline, _) = run(&backend, ROOMY, |s| s.pace_deadline).await.unwrap();
        assert_eq!(deadline, Some(1));
        assert_eq!(backend.writes.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_backend_error_is_reported_with_its_cause() {
        let backend = FakeBackend::default();
        backend.down.store(true, Ordering::SeqCst);
        let outcome = run(&backend, ROOMY, |_| ()).await;
        assert_eq!(
            outcome.unwrap_err(),
            UpdateError::Unavailable("connection refused".into())
        );
    }
}
