//! The entries: LRU and TTL bookkeeping, lifetime counters, and the generations and the log of
//! recent invalidations that keep a read which overlapped a write from being written back.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use super::config::CacheConfig;
use super::hint::CacheHint;
use super::key::{canonical_url, CacheKey};
use super::policy::{without_query, Invalidation};
use crate::clock::{Clock, SystemClock};
use crate::request::RequestSpec;

/// Invalidations remembered for [`ResponseCache::set_if_fresh`]. A read that overlapped more
/// of them than this is not written back (it cannot prove it was unaffected).
pub(super) const INVALIDATION_LOG_LIMIT: usize = 64;

/// Lifetime counters (`stats()`); they never reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: u64,
    pub hits: u64,
    pub misses: u64,
    pub expirations: u64,
    pub evictions: u64,
    /// Reads served from the fleet's Redis, and reads that asked it and missed (a fleet-wide
    /// cache only; the local counters above never count them).
    pub fleet_hits: u64,
    pub fleet_misses: u64,
}

struct Entry {
    key: CacheKey,
    value: Arc<str>,
    expires_at: u64,
    /// Recency tick (reads and writes refresh it).
    used: u64,
    /// Write tick: with one TTL per cache, write order is expiry order.
    written: u64,
}

#[derive(Default)]
struct State {
    entries: HashMap<Arc<str>, Entry>,
    by_use: BTreeMap<u64, Arc<str>>,
    by_write: BTreeMap<u64, Arc<str>>,
    tick: u64,
    generation: u64,
    /// Recent invalidations and the generation each one started.
    log: VecDeque<(u64, Invalidation)>,
    stats: CacheStats,
}

impl State {
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    fn remove(&mut self, text: &str) -> bool {
        let Some(entry) = self.entries.remove(text) else {
            return false;
        };
        self.by_use.remove(&entry.used);
        self.by_write.remove(&entry.written);
        true
    }

    fn touch(&mut self, text: &Arc<str>) {
        let tick = self.next_tick();
        if let Some(entry) = self.entries.get_mut(text) {
            self.by_use.remove(&entry.used);
            entry.used = tick;
            self.by_use.insert(tick, text.clone());
        }
    }

    fn purge_expired(&mut self, now_ms: u64) {
        while let Some((_, text)) = self.by_write.first_key_value() {
            let expired = self
                .entries
                .get(text)
                .is_none_or(|entry| entry.expires_at <= now_ms);
            if !expired {
                break;
            }
            let text = text.clone();
            self.remove(&text);
        }
    }

    fn invalidate(&mut self, invalidation: Invalidation) -> usize {
        self.generation += 1;
        let doomed: Vec<Arc<str>> = self
            .entries
            .values()
            .filter(|e| invalidation.affects(&e.key))
            .map(|e| e.key.text.clone())
            .collect();
        for text in &doomed {
            self.remove(text);
        }
        if self.log.len() == INVALIDATION_LOG_LIMIT {
            self.log.pop_front();
        }
        self.log.push_back((self.generation, invalidation));
        doomed.len()
    }

    /// No invalidation since `generation` can have affected `key`.
    fn is_fresh(&self, key: &CacheKey, generation: u64) -> bool {
        if generation >= self.generation {
            return true;
        }
        // Every invalidation after `generation` must still be in the log to be checked.
        let oldest_logged = self.log.front().map_or(u64::MAX, |(g, _)| *g);
        oldest_logged <= generation + 1
            && self
                .log
                .iter()
                .filter(|(g, _)| *g > generation)
                .all(|(_, inv)| !inv.affects(key))
    }
}

/// The cache one or more provider slots (and the JavaScript `ResponseCache` object) share.
pub struct ResponseCache {
    config: CacheConfig,
    clock: Box<dyn Clock>,
    state: Mutex<State>,
}

impl std::fmt::Debug for ResponseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseCache")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// Identity: two options hold "the same cache" only if it is the same object.
impl PartialEq for ResponseCache {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self, other)
    }
}

/// A read: the cached text, or a miss with the generation to write back against.
#[derive(Clone, Debug, PartialEq)]
pub enum Lookup {
    Hit(Arc<str>),
    Miss { generation: u64 },
}

impl ResponseCache {
    pub fn new(config: CacheConfig) -> Self {
        Self::with_clock(config, Box::new(SystemClock))
    }

    pub fn with_clock(config: CacheConfig, clock: Box<dyn Clock>) -> Self {
        Self {
            config,
            clock,
            state: Mutex::default(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts exactly one of hit, miss or expiration. An expired entry is deleted here.
    pub fn get(&self, key: &CacheKey) -> Lookup {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let generation = state.generation;
        let found = state
            .entries
            .get(&key.text)
            .map(|e| (e.expires_at <= now, e.value.clone()));
        match found {
            None => {
                state.stats.misses += 1;
                Lookup::Miss { generation }
            }
            Some((true, _)) => {
                state.remove(&key.text);
                state.stats.expirations += 1;
                Lookup::Miss { generation }
            }
            Some((false, value)) => {
                state.touch(&key.text);
                state.stats.hits += 1;
                Lookup::Hit(value)
            }
        }
    }

    /// Store `value`; returns whether it was stored (never with `ttlMs: 0`).
    pub fn set(&self, key: &CacheKey, value: Arc<str>) -> bool {
        let mut state = self.state();
        self.store(&mut state, key, value)
    }

    /// Store `value` unless an invalidation that affects `key` happened after `generation`
    /// (the generation seen when the read missed): the response may predate that write.
    pub fn set_if_fresh(&self, key: &CacheKey, generation: u64, value: Arc<str>) -> bool {
        let mut state = self.state();
        state.is_fresh(key, generation) && self.store(&mut state, key, value)
    }

    fn store(&self, state: &mut State, key: &CacheKey, value: Arc<str>) -> bool {
        if self.config.ttl_ms == 0 {
            return false;
        }
        let now = self.clock.now_ms();
        state.purge_expired(now);
        state.remove(&key.text);
        while state.entries.len() >= self.config.max_entries as usize {
            let Some((_, oldest)) = state.by_use.pop_first() else {
                break;
            };
            state.remove(&oldest);
            state.stats.evictions += 1;
        }
        let used = state.next_tick();
        let written = state.next_tick();
        state.by_use.insert(used, key.text.clone());
        state.by_write.insert(written, key.text.clone());
        let expires_at = now.saturating_add(self.config.ttl_ms);
        state.entries.insert(
            key.text.clone(),
            Entry {
                key: key.clone(),
                value,
                expires_at,
                used,
                written,
            },
        );
        true
    }

    /// Whether the entries live in the fleet's Redis on a slot with `sharedState`.
    pub fn is_shared(&self) -> bool {
        self.config.shared
    }

    pub fn config(&self) -> CacheConfig {
        self.config
    }

    /// Count one read the fleet's Redis answered: a hit or a miss.
    pub fn count_fleet_read(&self, hit: bool) {
        let stats = &mut self.state().stats;
        if hit {
            stats.fleet_hits += 1;
        } else {
            stats.fleet_misses += 1;
        }
    }

    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Delete one entry; returns whether it existed.
    pub fn delete(&self, key: &CacheKey) -> bool {
        self.state().invalidate(Invalidation::Key(key.text.clone())) > 0
    }

    /// Delete every entry at or under `prefix` (path-boundary aware: `/items/21` does not match
    /// `/items/212`); returns how many.
    pub fn delete_matching(&self, prefix: &str) -> usize {
        let prefix = canonical_url(prefix);
        self.state().invalidate(Invalidation::Under(
            prefix.trim_end_matches('/').to_string(),
        ))
    }

    /// Delete every entry for `url` (its query string ignored); returns how many.
    pub fn delete_all_for_url(&self, url: &str) -> usize {
        self.state()
            .invalidate(Invalidation::Url(without_query(url).to_string()))
    }

    pub fn clear(&self) {
        self.state().invalidate(Invalidation::All);
    }

    pub fn stats(&self) -> CacheStats {
        let state = self.state();
        CacheStats {
            entries: state.entries.len() as u64,
            ..state.stats
        }
    }

    /// After a successful write that was not served by the cache: drop what its provider said
    /// it may have changed ([`CacheHint::Write`]); a write without that hint drops nothing.
    /// Returns how many entries were dropped.
    pub fn invalidate_after_write(&self, spec: &RequestSpec) -> usize {
        let CacheHint::Write(invalidates) = &spec.cache_hint else {
            return 0;
        };
        self.state()
            .invalidate(Invalidation::after_write(&spec.url, invalidates))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::test_support::{cache, get_key, hit, text};

    #[test]
    fn a_stored_value_is_returned_until_its_ttl_passes_then_counted_as_an_expiration() {
        let (cache, clock) = cache(1_000, 10);
        let key = get_key("http://api.test/items/1");
        assert!(cache.set(&key, text("{\"id\":1}")));
        clock.advance(999);
        assert_eq!(hit(&cache, &key).as_deref(), Some("{\"id\":1}"));
        clock.advance(1);
        assert_eq!(hit(&cache, &key), None);
        assert_eq!(hit(&cache, &key), None);
        assert_eq!(
            cache.stats(),
            CacheStats {
                entries: 0,
                hits: 1,
                misses: 1,
                expirations: 1,
                evictions: 0,
                ..CacheStats::default()
            }
        );
    }

    #[test]
    fn a_zero_ttl_stores_nothing() {
        let (cache, _) = cache(0, 10);
        let key = get_key("http://api.test/x");
        assert!(!cache.set(&key, text("1")));
        assert_eq!(hit(&cache, &key), None);
        assert_eq!(cache.stats().entries, 0);
    }

    #[test]
    fn writes_purge_expired_entries() {
        let (cache, clock) = cache(100, 10);
        cache.set(&get_key("http://api.test/a"), text("1"));
        cache.set(&get_key("http://api.test/b"), text("2"));
        clock.advance(60);
        cache.set(&get_key("http://api.test/c"), text("3"));
        clock.advance(60);
        cache.set(&get_key("http://api.test/d"), text("4"));
        assert_eq!(
            cache.stats().entries,
            2,
            "a and b expired and were purged by the write"
        );
        assert_eq!(cache.stats().expirations, 0, "only reads count expirations");
    }

    #[test]
    fn the_least_recently_used_entry_is_evicted_and_reads_refresh_recency() {
        let (cache, _) = cache(10_000, 2);
        let (a, b, c) = (
            get_key("http://api.test/a"),
            get_key("http://api.test/b"),
            get_key("http://api.test/c"),
        );
        cache.set(&a, text("1"));
        cache.set(&b, text("2"));
        assert!(hit(&cache, &a).is_some(), "a is now the most recent");
        cache.set(&c, text("3"));
        assert!(hit(&cache, &b).is_none(), "b was the least recently used");
        assert!(hit(&cache, &a).is_some() && hit(&cache, &c).is_some());
        assert_eq!(cache.stats().evictions, 1);
        cache.set(&a, text("1b"));
        assert_eq!(
            cache.stats().evictions,
            1,
            "overwriting a key evicts nothing"
        );
        assert_eq!(hit(&cache, &a).as_deref(), Some("1b"));
    }

    #[test]
    fn a_read_that_outlived_the_invalidation_log_is_not_written_back() {
        let (cache, _) = cache(10_000, 16);
        let key = get_key("http://h/kept");
        let generation = cache.generation();
        for i in 0..=INVALIDATION_LOG_LIMIT {
            cache.delete(&get_key(&format!("http://h/other/{i}")));
        }
        assert!(!cache.set_if_fresh(&key, generation, text("1")));
        assert!(cache.set_if_fresh(&key, cache.generation() - 1, text("1")));
    }

    #[test]
    fn stats_are_lifetime_counters() {
        let (cache, _) = cache(10_000, 1);
        let (a, b) = (get_key("http://h/a"), get_key("http://h/b"));
        cache.get(&a);
        cache.set(&a, text("1"));
        cache.get(&a);
        cache.set(&b, text("2"));
        cache.clear();
        assert_eq!(
            cache.stats(),
            CacheStats {
                entries: 0,
                hits: 1,
                misses: 1,
                expirations: 0,
                evictions: 1,
                ..CacheStats::default()
            }
        );
    }
}
