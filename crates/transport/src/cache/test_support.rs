//! Helpers the cache's tests share: a hand-moved clock, keys and request descriptions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Method};
use serde_json::Value;

use super::{CacheConfig, CacheHint, CacheKey, Lookup, ResponseCache};
use crate::clock::Clock;
use crate::error::Protocol;
use crate::request::{RequestSpec, ResultShape};

/// A clock the test moves by hand.
#[derive(Clone, Default)]
pub struct ManualClock(Arc<AtomicU64>);

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

impl ManualClock {
    pub fn advance(&self, ms: u64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

pub fn cache(ttl_ms: u64, max_entries: u32) -> (ResponseCache, ManualClock) {
    let clock = ManualClock::default();
    (
        ResponseCache::with_clock(
            CacheConfig {
                ttl_ms,
                max_entries,
                shared: false,
            },
            Box::new(clock.clone()),
        ),
        clock,
    )
}

pub fn get_key(url: &str) -> CacheKey {
    CacheKey::new("GET", url, None, None)
}

pub fn text(value: &str) -> Arc<str> {
    Arc::from(value)
}

pub fn hit(cache: &ResponseCache, key: &CacheKey) -> Option<String> {
    match cache.get(key) {
        Lookup::Hit(value) => Some(value.to_string()),
        Lookup::Miss { .. } => None,
    }
}

pub fn spec(
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
    protocol: Protocol,
) -> RequestSpec {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.insert(
            http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            HeaderValue::from_str(value).unwrap(),
        );
    }
    let shape = if protocol == Protocol::GraphQl {
        ResultShape::GraphQl
    } else {
        ResultShape::Rest
    };
    RequestSpec::new(method, url, map, Bytes::from(body), protocol, shape).unwrap()
}

/// A GraphQL `POST` to `http://api.test/` with the hint its provider would give it.
pub fn graphql_spec(document: &str, hint: CacheHint) -> RequestSpec {
    let body =
        serde_json::to_vec(&serde_json::json!({ "query": document, "variables": Value::Null }))
            .unwrap();
    let mut spec = spec(
        Method::POST,
        "http://api.test/",
        &[],
        body,
        Protocol::GraphQl,
    );
    spec.is_write = matches!(hint, CacheHint::Write(_));
    spec.cache_hint = hint;
    spec
}
