//! The fleet tier of a shared response cache (decisions D41): its round trips on the slot's
//! Redis, on the link of the slot's shared state, so one outage is one diagnostic and one
//! rejoin for both. The layout and the choices (keys, ids, what a write drops, what is too big
//! to share) are the cache's ([`crate::cache::fleet`]); the scripts below only carry them out
//! atomically, and decide nothing but "the generation moved" and "oldest beyond the cap".

use std::future::Future;
use std::sync::{Arc, OnceLock};

use redis::Script;

use super::cas::StateBackend;
use super::link::Notice;
use super::store::SharedHostStates;
use crate::cache::fleet::{entry_id, shared_description, FleetInvalidation, FleetKeys};
use crate::cache::{CacheConfig, CacheKey};
use crate::request::RequestSpec;

/// The epoch ms of the Redis clock, so every process expires entries at the same instant.
const NOW_MS: &str = "local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
";

/// `KEYS`: index, meta, values. `ARGV[1]`: the entry id. Returns `{ generation, value }`, the
/// value `''` when absent or expired (a stored value is JSON, never empty).
const READ: &str = "
local gen = tonumber(redis.call('HGET', KEYS[2], '#gen') or '0')
local expires = redis.call('ZSCORE', KEYS[1], ARGV[1])
if expires and tonumber(expires) > now then
  return { gen, redis.call('HGET', KEYS[3], ARGV[1]) or '' }
end
return { gen, '' }
";

/// `KEYS`: index, meta, values. `ARGV`: generation seen at the miss, id, value, description,
/// TTL ms, cap. Refuses (-1) when an invalidation happened since the miss; otherwise purges
/// expired entries, stores this one, evicts the soonest-expiring beyond the cap, and makes
/// every key outlive its newest entry. Returns how many were evicted.
const WRITE: &str = "
if tonumber(redis.call('HGET', KEYS[2], '#gen') or '0') ~= tonumber(ARGV[1]) then return -1 end
local function drop(ids)
  for _, id in ipairs(ids) do
    redis.call('HDEL', KEYS[2], id)
    redis.call('HDEL', KEYS[3], id)
  end
end
drop(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now))
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local ttl = tonumber(ARGV[5])
redis.call('ZADD', KEYS[1], now + ttl, ARGV[2])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[4])
redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[6])
if over > 0 then
  drop(redis.call('ZRANGE', KEYS[1], 0, over - 1))
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, over - 1)
else
  over = 0
end
for i = 1, 3 do
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end
return over
";

/// `KEYS[1]`: meta. `ARGV[1]`: TTL ms for a meta hash this creates. Bumps the generation (so
/// no read that missed before it is written back) and returns every description.
const BEGIN_INVALIDATION: &str = "
redis.call('HINCRBY', KEYS[1], '#gen', 1)
if redis.call('PTTL', KEYS[1]) < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return redis.call('HGETALL', KEYS[1])
";

/// `KEYS`: index, meta, values. `ARGV`: the ids to drop.
const DROP: &str = "
for _, id in ipairs(ARGV) do
  redis.call('ZREM', KEYS[1], id)
  redis.call('HDEL', KEYS[2], id)
  redis.call('HDEL', KEYS[3], id)
end
return #ARGV
";

pub(super) fn read_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script::new(&format!("{NOW_MS}{READ}")))
}

pub(super) fn write_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script::new(&format!("{NOW_MS}{WRITE}")))
}

pub(super) fn begin_invalidation_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script::new(BEGIN_INVALIDATION))
}

pub(super) fn drop_script() -> &'static Script {
    static SCRIPT: OnceLock<Script> = OnceLock::new();
    SCRIPT.get_or_init(|| Script::new(DROP))
}

/// Invalidations kept per slot while Redis is away, before they collapse (see `defer`).
pub const MAX_DEFERRED_INVALIDATIONS: usize = 64;

/// One entry to store.
pub struct FleetEntry<'a> {
    pub id: &'a str,
    pub generation: u64,
    pub value: &'a str,
    pub description: &'a str,
    pub ttl_ms: u64,
    pub cap: u32,
}

/// Where a fleet cache's scopes live: Redis (`redis_backend`).
pub trait CacheBackend: Send + Sync {
    /// The scope's generation, and the entry's value when stored and not expired.
    fn cache_read(
        &self,
        keys: &FleetKeys,
        id: &str,
    ) -> impl Future<Output = Result<(u64, Option<String>), String>> + Send;

    /// Store `entry` unless the generation moved: Some(evicted), or None when it moved.
    fn cache_write(
        &self,
        keys: &FleetKeys,
        entry: FleetEntry<'_>,
    ) -> impl Future<Output = Result<Option<u64>, String>> + Send;

    /// Bump the generation and return the scope's `meta` fields.
    fn cache_begin_invalidation(
        &self,
        keys: &FleetKeys,
        ttl_ms: u64,
    ) -> impl Future<Output = Result<Vec<(String, String)>, String>> + Send;

    fn cache_drop(
        &self,
        keys: &FleetKeys,
        ids: Vec<String>,
    ) -> impl Future<Output = Result<(), String>> + Send;
}

/// What the fleet said of a cacheable read.
#[derive(Clone, Debug, PartialEq)]
pub enum FleetRead {
    Hit(Arc<str>),
    /// Not in the fleet's cache; write back against this generation.
    Miss {
        generation: u64,
    },
    /// Redis was not asked or did not answer: the process's own cache serves.
    Local,
}

impl<B: StateBackend + CacheBackend> SharedHostStates<B> {
    fn cache_keys(&self, host: &str) -> FleetKeys {
        FleetKeys::new(self.key_prefix(), self.provider(), host)
    }

    /// Read an entry, after applying the invalidations Redis missed while it was away.
    pub async fn cache_read(
        &self,
        host: &str,
        key: &CacheKey,
        config: CacheConfig,
        now_ms: u64,
    ) -> (FleetRead, Option<Notice>) {
        let keys = self.cache_keys(host);
        let id = entry_id(key);
        let work = async {
            self.apply_deferred(config).await?;
            self.backend().cache_read(&keys, &id).await
        };
        let (answer, notice) = self.on_redis(now_ms, work).await;
        let read = match answer {
            None => FleetRead::Local,
            Some((_, Some(value))) => FleetRead::Hit(Arc::from(value)),
            Some((generation, None)) => FleetRead::Miss { generation },
        };
        (read, notice)
    }

    /// Store a read's answer for the fleet, unless it is not shareable, or a write in the scope
    /// happened since its miss saw `generation`. Returns whether it was stored.
    pub async fn cache_write(
        &self,
        host: &str,
        key: &CacheKey,
        generation: u64,
        value: &str,
        config: CacheConfig,
        now_ms: u64,
    ) -> (bool, Option<Notice>) {
        let Some(description) = shared_description(key, value.len()) else {
            return (false, None);
        };
        if config.ttl_ms == 0 {
            return (false, None);
        }
        let keys = self.cache_keys(host);
        let id = entry_id(key);
        let entry = FleetEntry {
            id: &id,
            generation,
            value,
            description: &description,
            ttl_ms: config.ttl_ms,
            cap: config.max_entries,
        };
        let (written, notice) = self
            .on_redis(now_ms, self.backend().cache_write(&keys, entry))
            .await;
        (matches!(written, Some(Some(_))), notice)
    }

    /// After a successful write: drop from the fleet's scope what the local cache drops. When
    /// Redis does not take it, it is kept for the first cache operation after the rejoin.
    pub async fn cache_invalidate(
        &self,
        spec: &RequestSpec,
        config: CacheConfig,
        now_ms: u64,
    ) -> Option<Notice> {
        let invalidation = FleetInvalidation::after_write(spec)?;
        let work = async {
            self.apply_deferred(config).await?;
            self.invalidate(&spec.host, &invalidation, config).await
        };
        let (done, notice) = self.on_redis(now_ms, work).await;
        if done.is_none() {
            self.defer(&spec.host, invalidation);
        }
        notice
    }

    async fn invalidate(
        &self,
        host: &str,
        invalidation: &FleetInvalidation,
        config: CacheConfig,
    ) -> Result<(), String> {
        let keys = self.cache_keys(host);
        let backend = self.backend();
        // Bump first: a read that missed before this point is not written back after it.
        let meta = backend
            .cache_begin_invalidation(&keys, config.ttl_ms.max(1))
            .await?;
        let doomed =
            invalidation.doomed(meta.iter().map(|(id, text)| (id.as_str(), text.as_str())));
        if !doomed.is_empty() {
            backend.cache_drop(&keys, doomed).await?;
        }
        Ok(())
    }

    /// Keep an invalidation Redis missed; beyond [`MAX_DEFERRED_INVALIDATIONS`], a host's
    /// collapse into one that drops its whole scope.
    fn defer(&self, host: &str, invalidation: FleetInvalidation) {
        let mut deferred = self.deferred_invalidations();
        if deferred.len() >= MAX_DEFERRED_INVALIDATIONS {
            deferred.retain(|(other, _)| other != host);
            deferred.push((host.to_string(), FleetInvalidation::everything()));
        } else {
            deferred.push((host.to_string(), invalidation));
        }
    }

    /// Apply the deferred invalidations, in order; each one applied is forgotten (applying
    /// one twice, after a failure part way, drops nothing more than once).
    async fn apply_deferred(&self, config: CacheConfig) -> Result<(), String> {
        loop {
            let Some((host, invalidation)) = self.deferred_invalidations().first().cloned() else {
                return Ok(());
            };
            self.invalidate(&host, &invalidation, config).await?;
            let mut deferred = self.deferred_invalidations();
            if deferred.first() == Some(&(host, invalidation)) {
                deferred.remove(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Mutex;

    use super::*;
    use crate::cache::test_support::{get_key, graphql_spec};
    use crate::cache::{CacheHint, Invalidates, Scope};
    use crate::random::SeededRandom;
    use crate::shared_state::config::RedisTarget;
    use crate::shared_state::link::REJOIN_INTERVAL_MS;
    use crate::shared_state::SharedStateConfig;

    /// One scope in memory: the generation and the entries (id → description, value); it
    /// fails while `down`, and answers after `latency_ms`.
    #[derive(Default)]
    struct FakeRedis {
        generation: AtomicU64,
        entries: Mutex<HashMap<String, (String, String)>>,
        down: AtomicBool,
        latency_ms: AtomicU64,
    }

    impl FakeRedis {
        async fn round_trip(&self) -> Result<(), String> {
            let latency = self.latency_ms.load(Ordering::SeqCst);
            if latency > 0 {
                tokio::time::sleep(std::time::Duration::from_millis(latency)).await;
            }
            if self.down.load(Ordering::SeqCst) {
                return Err("connection refused".into());
            }
            Ok(())
        }
    }

    impl StateBackend for FakeRedis {
        async fn read(&self, _key: &str) -> Result<(u64, Option<Vec<u8>>), String> {
            self.round_trip().await.map(|()| (0, None))
        }

        async fn write_if(&self, _: &str, _: u64, _: &[u8], _: u64) -> Result<bool, String> {
            self.round_trip().await.map(|()| true)
        }
    }

    impl CacheBackend for FakeRedis {
        async fn cache_read(
            &self,
            _: &FleetKeys,
            id: &str,
        ) -> Result<(u64, Option<String>), String> {
            self.round_trip().await?;
            let value = self.entries.lock().unwrap().get(id).map(|(_, v)| v.clone());
            Ok((self.generation.load(Ordering::SeqCst), value))
        }

        async fn cache_write(
            &self,
            _: &FleetKeys,
            entry: FleetEntry<'_>,
        ) -> Result<Option<u64>, String> {
            self.round_trip().await?;
            if entry.generation != self.generation.load(Ordering::SeqCst) {
                return Ok(None);
            }
            let stored = (entry.description.to_string(), entry.value.to_string());
            self.entries
                .lock()
                .unwrap()
                .insert(entry.id.to_string(), stored);
            Ok(Some(0))
        }

        async fn cache_begin_invalidation(
            &self,
            _: &FleetKeys,
            _: u64,
        ) -> Result<Vec<(String, String)>, String> {
            self.round_trip().await?;
            self.generation.fetch_add(1, Ordering::SeqCst);
            let entries = self.entries.lock().unwrap();
            Ok(entries
                .iter()
                .map(|(id, (description, _))| (id.clone(), description.clone()))
                .collect())
        }

        async fn cache_drop(&self, _: &FleetKeys, ids: Vec<String>) -> Result<(), String> {
            self.round_trip().await?;
            let mut entries = self.entries.lock().unwrap();
            for id in ids {
                entries.remove(&id);
            }
            Ok(())
        }
    }

    fn slot(redis: &Arc<FakeRedis>) -> SharedHostStates<FakeRedis> {
        let config = Arc::new(SharedStateConfig {
            redis: RedisTarget::parse("redis://127.0.0.1:6379").unwrap(),
            key_prefix: "t".into(),
            timeout_ms: 50,
            lease_ms: 1_000,
        });
        SharedHostStates::new(
            config,
            "anilist",
            redis.clone(),
            Box::new(SeededRandom::new(3)),
        )
    }

    const CONFIG: CacheConfig = CacheConfig {
        ttl_ms: 1_000,
        max_entries: 8,
        shared: true,
    };

    fn read_key(document: &str, scope: &'static str) -> (RequestSpec, CacheKey) {
        let spec = graphql_spec(
            document,
            CacheHint::Read {
                scope: Some(Scope::from(scope)),
            },
        );
        let key = CacheKey::for_request(&spec).unwrap();
        (spec, key)
    }

    #[tokio::test]
    async fn one_process_stores_what_another_reads_and_a_write_drops_it_for_both() {
        let redis = Arc::new(FakeRedis::default());
        let (a, b) = (slot(&redis), slot(&redis));
        let (spec, key) = read_key("{ Item(id: 1) { id } }", "Item");
        let (read, _) = a.cache_read(&spec.host, &key, CONFIG, 0).await;
        assert_eq!(read, FleetRead::Miss { generation: 0 });
        assert_eq!(
            a.cache_write(&spec.host, &key, 0, "{\"id\":1}", CONFIG, 0)
                .await,
            (true, None)
        );
        assert_eq!(
            b.cache_read(&spec.host, &key, CONFIG, 0).await.0,
            FleetRead::Hit(Arc::from("{\"id\":1}"))
        );

        let write = graphql_spec(
            "mutation { SaveItem(id: 1) { id } }",
            CacheHint::Write(Invalidates::Scopes(vec![Scope::from("Item")])),
        );
        assert_eq!(b.cache_invalidate(&write, CONFIG, 0).await, None);
        assert_eq!(
            a.cache_read(&spec.host, &key, CONFIG, 0).await.0,
            FleetRead::Miss { generation: 1 }
        );
        assert_eq!(
            a.cache_write(&spec.host, &key, 0, "stale", CONFIG, 0).await,
            (false, None),
            "a read that missed before the write is not written back"
        );
        let unhinted = graphql_spec("mutation { X { id } }", CacheHint::None);
        assert_eq!(b.cache_invalidate(&unhinted, CONFIG, 0).await, None);
        assert_eq!(
            redis.generation.load(Ordering::SeqCst),
            1,
            "a write without a hint asks nothing"
        );
    }

    #[tokio::test]
    async fn what_is_not_shareable_never_reaches_redis() {
        let redis = Arc::new(FakeRedis::default());
        let a = slot(&redis);
        let key = get_key("http://user:pw@api.test/items/1");
        assert_eq!(
            a.cache_write("api.test", &key, 0, "{}", CONFIG, 0).await,
            (false, None)
        );
        let (spec, key) = read_key("{ Item(id: 2) { id } }", "Item");
        let off = CacheConfig {
            ttl_ms: 0,
            ..CONFIG
        };
        assert_eq!(
            a.cache_write(&spec.host, &key, 0, "{}", off, 0).await,
            (false, None)
        );
        assert!(redis.entries.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn an_outage_reads_locally_with_one_notice_and_the_next_try_rejoins() {
        let redis = Arc::new(FakeRedis::default());
        let a = slot(&redis);
        let (spec, key) = read_key("{ Item(id: 1) { id } }", "Item");
        redis.down.store(true, Ordering::SeqCst);
        let (read, notice) = a.cache_read(&spec.host, &key, CONFIG, 0).await;
        assert_eq!(read, FleetRead::Local);
        assert_eq!(
            notice,
            Some(Notice::Unavailable {
                cause: "connection refused".into()
            })
        );
        assert!(a.in_fallback());
        redis.down.store(false, Ordering::SeqCst);
        assert_eq!(
            a.cache_read(&spec.host, &key, CONFIG, 1).await,
            (FleetRead::Local, None),
            "no try before the rejoin interval"
        );
        assert_eq!(
            a.cache_read(&spec.host, &key, CONFIG, REJOIN_INTERVAL_MS)
                .await,
            (FleetRead::Miss { generation: 0 }, Some(Notice::Rejoined))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_redis_slower_than_timeout_ms_is_an_outage() {
        let redis = Arc::new(FakeRedis::default());
        let a = slot(&redis);
        redis.latency_ms.store(51, Ordering::SeqCst);
        let (spec, key) = read_key("{ Item(id: 1) { id } }", "Item");
        let (read, notice) = a.cache_read(&spec.host, &key, CONFIG, 0).await;
        assert_eq!(read, FleetRead::Local);
        assert_eq!(
            notice,
            Some(Notice::Unavailable {
                cause: "no answer within 50 ms (sharedState.timeoutMs)".into()
            })
        );
    }

    #[tokio::test]
    async fn a_write_redis_missed_is_applied_by_the_first_cache_operation_after_the_rejoin() {
        let redis = Arc::new(FakeRedis::default());
        let (a, b) = (slot(&redis), slot(&redis));
        let (spec, key) = read_key("{ Item(id: 1) { id } }", "Item");
        assert_eq!(
            a.cache_write(&spec.host, &key, 0, "{}", CONFIG, 0).await,
            (true, None)
        );
        let write = graphql_spec(
            "mutation { SaveItem(id: 1) { id } }",
            CacheHint::Write(Invalidates::Scopes(vec![Scope::from("Item")])),
        );
        redis.down.store(true, Ordering::SeqCst);
        assert!(matches!(
            b.cache_invalidate(&write, CONFIG, 0).await,
            Some(Notice::Unavailable { .. })
        ));
        assert_eq!(
            b.cache_invalidate(&write, CONFIG, 1).await,
            None,
            "in fallback: kept, not tried"
        );
        redis.down.store(false, Ordering::SeqCst);
        assert_eq!(
            a.cache_read(&spec.host, &key, CONFIG, 2).await.0,
            FleetRead::Hit(Arc::from("{}")),
            "the other process has not seen the write yet"
        );
        let (read, notice) = b
            .cache_read(&spec.host, &key, CONFIG, REJOIN_INTERVAL_MS)
            .await;
        assert_eq!(notice, Some(Notice::Rejoined));
        assert_eq!(
            read,
            FleetRead::Miss { generation: 2 },
            "both applied, in order"
        );
        assert!(b.deferred_invalidations().is_empty());
    }

    #[tokio::test]
    async fn many_deferred_invalidations_of_a_host_collapse_into_one_that_drops_its_scope() {
        let redis = Arc::new(FakeRedis::default());
        let a = slot(&redis);
        redis.down.store(true, Ordering::SeqCst);
        let write = graphql_spec("mutation { X { id } }", CacheHint::Write(Invalidates::Url));
        for now in 0..=MAX_DEFERRED_INVALIDATIONS as u64 {
            a.cache_invalidate(&write, CONFIG, now).await;
        }
        let deferred = a.deferred_invalidations().clone();
        assert_eq!(
            deferred,
            vec![("api.test".to_string(), FleetInvalidation::everything())]
        );
    }
}
