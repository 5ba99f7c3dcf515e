//! What the response cache does for one call (transport.md 1.12): a read looked up before any
//! gate, a write that invalidates once it succeeds. A fleet-wide cache (D41) is read in the
//! slot's Redis while Redis answers, and its local copy only while Redis is away.

use std::sync::Arc;

use super::AttemptLoop;
use crate::cache::{CacheKey, Lookup, ResponseCache};
use crate::events::{Event, EventSink};
use crate::options::{Hook, ResolvedOptions};
use crate::request::RequestSpec;
use crate::shared_state::fleet_cache::FleetRead;
use crate::shared_state::Notice;

pub(super) enum CacheUse<'a> {
    Off,
    /// A cacheable read: looked up first, written back after a clean success unless an
    /// invalidation since `generation` (seen at the miss) affects it.
    Read {
        cache: &'a ResponseCache,
        key: CacheKey,
        generation: u64,
        /// A fleet-wide cache whose Redis answered the miss: the scope's generation then, to
        /// write back against in Redis instead of locally.
        fleet_generation: Option<u64>,
    },
    /// A write: once it succeeds, drops the entries it may have changed.
    InvalidateOnSuccess(&'a ResponseCache),
}

impl<'a> CacheUse<'a> {
    /// A write invalidates even with `bypassResponseCache` (it is not served by the cache);
    /// a read whose auth guard will fail, or that bypasses the cache, never touches it.
    pub(super) fn plan(spec: &RequestSpec, options: &'a ResolvedOptions) -> Self {
        let Some(cache) = options.response_cache.as_deref() else {
            return CacheUse::Off;
        };
        if spec.is_write {
            return CacheUse::InvalidateOnSuccess(cache);
        }
        if options.bypass_response_cache || spec.missing_auth.is_some() {
            return CacheUse::Off;
        }
        match CacheKey::for_request(spec) {
            Some(key) => CacheUse::Read {
                cache,
                key,
                generation: 0,
                fleet_generation: None,
            },
            None => CacheUse::Off,
        }
    }

    /// The call's cache when it is fleet-wide.
    fn shared_cache(&self) -> Option<&'a ResponseCache> {
        match self {
            CacheUse::Off => None,
            CacheUse::Read { cache, .. } | CacheUse::InvalidateOnSuccess(cache) => {
                Some(*cache).filter(|cache| cache.is_shared())
            }
        }
    }
}

impl<'a, S: EventSink> AttemptLoop<'a, S> {
    /// Report a switch of the slot's Redis link (to its local copy, or back). On a rejoin, a
    /// fleet-wide cache forgets what it kept locally meanwhile: the fleet's writes since then
    /// never reached that copy, and the next outage must not serve it.
    pub(super) async fn report_notice(&self, notice: Option<Notice>) {
        let Some(notice) = notice else {
            return;
        };
        if notice == Notice::Rejoined {
            if let Some(cache) = self.cache.shared_cache() {
                cache.clear();
            }
        }
        let redis = self.env.hosts.redis_address().unwrap_or_default();
        self.events.shared_state(notice, redis).await;
    }

    /// A fleet-wide cache's read in Redis, on a slot that shares state: None when the local
    /// cache decides (not fleet-wide, no `sharedState`, or Redis away).
    async fn read_fleet(&self) -> Option<FleetRead> {
        let CacheUse::Read { cache, key, .. } = &self.cache else {
            return None;
        };
        let fleet = self.env.hosts.fleet().filter(|_| cache.is_shared())?;
        let now = self.env.clock.now_ms();
        // Boxed, as every Redis round trip of a call: a cold path that would otherwise make
        // every call's future carry its state.
        let (read, notice) =
            Box::pin(fleet.cache_read(&self.spec.host, key, cache.config(), now)).await;
        self.report_notice(notice).await;
        match &read {
            FleetRead::Hit(_) => cache.count_fleet_read(true),
            FleetRead::Miss { .. } => cache.count_fleet_read(false),
            FleetRead::Local => return None,
        }
        Some(read)
    }

    /// Serve a cacheable read from the cache, or remember the generation its miss saw.
    pub(super) async fn read_cache(&mut self) -> Option<Arc<str>> {
        let fleet = self.read_fleet().await;
        let CacheUse::Read {
            cache,
            key,
            generation,
            fleet_generation,
        } = &mut self.cache
        else {
            return None;
        };
        // While Redis answers, a fleet-wide cache is read there only: a local copy could not
        // learn of another process's write.
        let lookup = match fleet {
            Some(FleetRead::Hit(text)) => Lookup::Hit(text),
            Some(FleetRead::Miss { generation: seen }) => {
                *fleet_generation = Some(seen);
                return None;
            }
            Some(FleetRead::Local) | None => cache.get(key),
        };
        match lookup {
            Lookup::Miss { generation: seen } => {
                *generation = seen;
                None
            }
            Lookup::Hit(text) => {
                self.events.request_start().await;
                self.events
                    .emit_if(Hook::OnResponse, || Event::Response {
                        context: self.events.context(),
                        status: None,
                        duration_ms: 0.0,
                        rate_limit: None,
                        cache_hit: Some(true),
                        cache_write: false,
                        paced_ms: None,
                    })
                    .await;
                Some(text)
            }
        }
    }

    /// `cacheHit: false` on the success and envelope-error paths of a cacheable read.
    pub(super) fn cacheable_miss(&self) -> Option<bool> {
        matches!(self.cache, CacheUse::Read { .. }).then_some(false)
    }
}
