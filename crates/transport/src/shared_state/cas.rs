//! One decision on the fleet's state: read the scope's state and version, run the Rust
//! mechanism on it, write it back only if the version is unchanged (an atomic compare-and-set
//! on the server), and on a conflict start over, a bounded number of times. The mechanisms
//! stay written once (the same state machines as in one process); the store only carries bytes.

use std::future::Future;

use crate::host_state::HostState;

/// Attempts of one decision before it gives up and decides locally (all within `timeoutMs`).
/// Decisions of one slot are serialised in the process, so only other processes (or slots)
/// contend for a scope; a local decision is the exception, since what it admits the fleet
/// does not see.
pub const MAX_CAS_ATTEMPTS: u32 = 32;
/// After a lost compare-and-set, a random pause up to this long, so contenders spread out.
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
    /// Other writers won every attempt: Redis works, this one decision is made locally.
    Contended,
}

/// Run `decide` on the scope's state atomically; returns its result and the state as written
/// (or as read, when `decide` changed nothing and nothing was written).
pub async fn update<B: StateBackend, R>(
    backend: &B,
    key: &str,
    ttl_ms: u64,
    decide: &mut impl FnMut(&mut HostState) -> R,
) -> Result<(R, HostState), UpdateError> {
    for attempt in 0..MAX_CAS_ATTEMPTS {
        if attempt > 0 {
            let pause = fastrand::u64(0..=CONFLICT_PAUSE_MAX_MS);
            tokio::time::sleep(std::time::Duration::from_millis(pause)).await;
        }
        let (version, stored) = backend.read(key).await.map_err(UpdateError::Unavailable)?;
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
        if backend
            .write_if(key, version, &written, ttl_ms)
            .await
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
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::sync::Mutex;

    use super::StateBackend;

    /// One stored scope: version, state, TTL.
    pub type Entry = (u64, Vec<u8>, u64);

    /// An in-memory store; `conflicts` makes the next N writes lose to a phantom writer, and
    /// `down` fails every call.
    #[derive(Default)]
    pub struct FakeBackend {
        pub entries: Mutex<HashMap<String, Entry>>,
        pub conflicts: AtomicU32,
        pub down: std::sync::atomic::AtomicBool,
        pub writes: AtomicU32,
        /// Writes refused because another writer came first.
        pub lost: AtomicU32,
    }

    impl StateBackend for FakeBackend {
        async fn read(&self, key: &str) -> Result<(u64, Option<Vec<u8>>), String> {
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

    #[tokio::test(start_paused = true)]
    async fn a_conflict_is_retried_on_fresh_state() {
        let backend = FakeBackend::default();
        backend.conflicts.store(2, Ordering::SeqCst);
        let mut runs = 0;
        let (result, state) = update(&backend, "k", 1_000, &mut |s| {
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
        let outcome = update(&backend, "k", 1_000, &mut |s| s.pace_deadline = Some(1)).await;
        assert_eq!(outcome.unwrap_err(), UpdateError::Contended);
    }

    #[tokio::test]
    async fn an_unchanged_state_is_not_written() {
        let backend = FakeBackend::default();
        update(&backend, "k", 1_000, &mut |s| s.pace_deadline = Some(1))
            .await
            .unwrap();
        let (deadline, _) = update(&backend, "k", 1_000, &mut |s| s.pace_deadline)
            .await
            .unwrap();
        assert_eq!(deadline, Some(1));
        assert_eq!(backend.writes.load(Ordering::SeqCst), 1);
    }

    #[tokio::test]
    async fn a_backend_error_is_reported_with_its_cause() {
        let backend = FakeBackend::default();
        backend.down.store(true, Ordering::SeqCst);
        let outcome = update(&backend, "k", 1_000, &mut |_| ()).await;
        assert_eq!(
            outcome.unwrap_err(),
            UpdateError::Unavailable("connection refused".into())
        );
    }
}
