//! The opt-in response cache (transport.md 1.12): which requests it serves, how they are
//! keyed, LRU and TTL bookkeeping, generations, and the invalidation a successful write causes.
//!
//! Values are the result JSON text the transport returns, shared behind an `Arc`: a hit copies
//! nothing in Rust, and JavaScript parses a fresh object from the text on every read, so a
//! caller can never mutate what the cache holds. That is `cloneOnRead: true` for every read;
//! `cloneOnRead: false` is accepted (and validated) for compatibility and reads the same way.
//!
//! Keys never contain a secret (decisions D18): a bearer token becomes the first 16 hex digits
//! of its SHA-256, and a request carrying any other credential header is not cached at all.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use http::header::{ACCEPT, ACCEPT_ENCODING, AUTHORIZATION, CONTENT_LENGTH, CONTENT_TYPE, USER_AGENT};
use http::{HeaderMap, Method};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::clock::{Clock, SystemClock};
use crate::error::Protocol;
use crate::options::parse::{object_fields, parse_bool, parse_integer, parse_millis};
use crate::options::value::{OptValue, OptionError};
use crate::request::RequestSpec;

pub const DEFAULT_TTL_MS: u64 = 60_000;
pub const DEFAULT_MAX_ENTRIES: u32 = 128;

/// Invalidations remembered for [`ResponseCache::set_if_fresh`]. A read that overlapped more
/// of them than this is not written back (it cannot prove it was unaffected).
const INVALIDATION_LOG_LIMIT: usize = 64;

/// `new ResponseCache(options)`, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// 0 stores nothing.
    pub ttl_ms: u64,
    pub max_entries: u32,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self { ttl_ms: DEFAULT_TTL_MS, max_entries: DEFAULT_MAX_ENTRIES }
    }
}

impl CacheConfig {
    /// Parse the constructor's options object (`undefined`/`null` take the defaults).
    pub fn parse(options: &OptValue) -> Result<Self, OptionError> {
        let mut config = Self::default();
        if matches!(options, OptValue::Undefined | OptValue::Null) {
            return Ok(config);
        }
        if !matches!(options, OptValue::Object(_)) {
            return Err(OptionError(format!(
                "ResponseCache options must be an object (received {}).",
                options.describe()
            )));
        }
        let fields = object_fields("ResponseCache options", options, &["ttlMs", "maxEntries", "cloneOnRead"])?;
        for (key, value) in fields {
            match key {
                "ttlMs" => {
                    config.ttl_ms = parse_millis(value, false)
                        .ok_or_else(|| rule("ttlMs must be a finite, non-negative number", value))?
                }
                "maxEntries" => {
                    config.max_entries = parse_integer(value, 1)
                        .ok_or_else(|| rule("maxEntries must be a finite, positive integer", value))?
                }
                // Every read already returns a fresh copy (see the module comment).
                _ => {
                    parse_bool("cloneOnRead", value)?;
                }
            }
        }
        Ok(config)
    }
}

fn rule(text: &str, value: &OptValue) -> OptionError {
    OptionError(format!("{text} (received {}).", value.describe()))
}

/// What one entry is stored under, with the parts invalidation matches on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    /// `METHOD:canonicalUrl:bodyHash:authKey`.
    text: Arc<str>,
    method: String,
    /// The URL with its query parameters sorted and its fragment dropped.
    url: String,
    /// The single root field of a GraphQL query body; None when there is none or several.
    root_field: Option<String>,
}

impl CacheKey {
    /// A key from its parts, as `ResponseCache.get/set/delete` take them. `body` is the request
    /// body text: JSON (object keys are sorted before hashing, so key order does not matter)
    /// or anything else, hashed as it is. `auth_key` defaults to `none`.
    pub fn new(method: &str, url: &str, body: Option<&[u8]>, auth_key: Option<&str>) -> Self {
        let parsed = body.map(|bytes| (bytes, serde_json::from_slice::<Value>(bytes).ok()));
        let body = parsed.as_ref().map(|(bytes, json)| match json {
            Some(json) => BodyText::Json(json),
            None => BodyText::Raw(bytes),
        });
        Self::build(method, url, body, auth_key.unwrap_or("none"))
    }

    /// The key of a request the transport may serve from the cache, or None when it must not:
    /// not a read, a credential other than a bearer token, or a GraphQL document that is not
    /// query-shaped.
    pub fn for_request(spec: &RequestSpec) -> Option<Self> {
        let auth = auth_key(&spec.headers)?;
        if spec.method == Method::GET {
            return Some(Self::build("GET", &spec.url, None, &auth));
        }
        if spec.method != Method::POST || spec.protocol != Protocol::GraphQl || spec.is_write {
            return None;
        }
        let body: Value = serde_json::from_slice(&spec.body.to_vec()).ok()?;
        if !is_query_shaped(body.get("query")?.as_str()?) {
            return None;
        }
        Some(Self::build("POST", &spec.url, Some(BodyText::Json(&body)), &auth))
    }

    fn build(method: &str, url: &str, body: Option<BodyText<'_>>, auth_key: &str) -> Self {
        let method = method.to_ascii_uppercase();
        let url = canonical_url(url);
        let (body_hash, root_field) = match body {
            None => ("none".to_string(), None),
            Some(BodyText::Raw(bytes)) => (short_sha256(bytes), None),
            Some(BodyText::Json(json)) => {
                let mut stable = String::new();
                write_stable_json(json, &mut stable);
                let root = json.get("query").and_then(Value::as_str).and_then(single_root_field);
                (short_sha256(stable.as_bytes()), root)
            }
        };
        let text = Arc::from(format!("{method}:{url}:{body_hash}:{auth_key}"));
        Self { text, method, url, root_field }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }
}

enum BodyText<'a> {
    Json(&'a Value),
    Raw(&'a [u8]),
}

/// First 16 hex digits of the SHA-256 of `bytes`.
fn short_sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// JSON with every object's keys sorted, so equal values hash equally whatever their key order.
fn write_stable_json(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut fields: Vec<_> = map.iter().collect();
            fields.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, field)) in fields.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_stable_json(field, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_stable_json(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The URL with its fragment dropped and its query parameters stably sorted by name, so
/// `?a=1&b=2` and `?b=2&a=1` are one entry (repeated names keep their order: it can matter).
pub fn canonical_url(url: &str) -> String {
    let url = url.split('#').next().unwrap_or(url);
    let Some((base, query)) = url.split_once('?') else {
        return url.to_string();
    };
    let mut params: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
    if params.is_empty() {
        return base.to_string();
    }
    params.sort_by_key(|p| p.split('=').next().unwrap_or(p));
    format!("{base}?{}", params.join("&"))
}

/// `bearer:<hash>` for a bearer token, `none` without credentials, None (do not cache) for any
/// other header that may carry one: custom `Authorization` schemes, `X-MAL-CLIENT-ID`, API
/// keys. Unknown headers count as credentials, so a new one fails closed.
pub fn auth_key(headers: &HeaderMap) -> Option<String> {
    let mut key = "none".to_string();
    for (name, value) in headers {
        if [CONTENT_TYPE, ACCEPT, ACCEPT_ENCODING, CONTENT_LENGTH, USER_AGENT].contains(name) || value.is_empty() {
            continue;
        }
        if name != AUTHORIZATION {
            return None;
        }
        let token = value.to_str().ok()?.strip_prefix("Bearer ")?.trim();
        if token.is_empty() {
            return None;
        }
        key = format!("bearer:{}", short_sha256(token.as_bytes()));
    }
    Some(key)
}

/// A GraphQL document the cache may serve: after leading `#` comment and blank lines, it
/// opens with `{` or with the `query` keyword followed (somewhere) by a selection set.
pub fn is_query_shaped(document: &str) -> bool {
    let mut rest = document;
    loop {
        let trimmed = rest.trim_start();
        if !trimmed.starts_with('#') {
            rest = trimmed;
            break;
        }
        rest = trimmed.split_once('\n').map_or("", |(_, after)| after);
    }
    if rest.starts_with('{') {
        return true;
    }
    match rest.strip_prefix("query") {
        Some(after) => {
            !after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '_') && after.contains('{')
        }
        None => false,
    }
}

/// A GraphQL token, as far as finding root fields needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'a> {
    Name(&'a str),
    Punct(u8),
    Spread,
    Text,
}

/// Tokens of a GraphQL document; comments and whitespace dropped, strings reduced to [`Token::Text`].
fn tokens(document: &str) -> Vec<Token<'_>> {
    let bytes = document.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                i += 3;
                while i < bytes.len() && !bytes[i..].starts_with(b"\"\"\"") {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 3;
                out.push(Token::Text);
                continue;
            }
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
                out.push(Token::Text);
                continue;
            }
            b'.' if bytes[i..].starts_with(b"...") => {
                out.push(Token::Spread);
                i += 3;
                continue;
            }
            c if c.is_ascii_alphanumeric() || c == b'_' => {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token::Name(&document[start..i]));
                continue;
            }
            c if c.is_ascii_whitespace() || c == b',' => {}
            c => out.push(Token::Punct(c)),
        }
        i += 1;
    }
    out
}

/// Skip a balanced `open … close` group starting at `tokens[i]` (which is `open`); returns the
/// index after it.
fn skip_group(tokens: &[Token<'_>], mut i: usize, open: u8, close: u8) -> usize {
    let mut depth = 0usize;
    while i < tokens.len() {
        match tokens[i] {
            Token::Punct(c) if c == open => depth += 1,
            Token::Punct(c) if c == close => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The root fields of the document's first operation (fragment definitions skipped), by field
/// name (aliases resolved). None when the root selects a fragment, or no operation is found:
/// such a document cannot be attributed to a field.
pub fn root_fields(document: &str) -> Option<Vec<&str>> {
    let tokens = tokens(document);
    let mut i = 0;
    // Find the operation's selection set.
    loop {
        match *tokens.get(i)? {
            Token::Name("fragment") => {
                while !matches!(tokens.get(i)?, Token::Punct(b'{')) {
                    i += 1;
                }
                i = skip_group(&tokens, i, b'{', b'}');
            }
            Token::Punct(b'(') => i = skip_group(&tokens, i, b'(', b')'),
            Token::Punct(b'{') => break,
            _ => i += 1,
        }
    }
    i += 1;
    let mut fields = Vec::new();
    loop {
        match *tokens.get(i)? {
            Token::Punct(b'}') => return Some(fields),
            Token::Spread => return None,
            Token::Punct(b'(') => i = skip_group(&tokens, i, b'(', b')'),
            Token::Punct(b'{') => i = skip_group(&tokens, i, b'{', b'}'),
            // A directive's name is not a field.
            Token::Punct(b'@') => i += 2,
            Token::Name(name) => {
                if tokens.get(i + 1) == Some(&Token::Punct(b':')) {
                    let Token::Name(field) = *tokens.get(i + 2)? else { return None };
                    fields.push(field);
                    i += 3;
                } else {
                    fields.push(name);
                    i += 1;
                }
            }
            _ => i += 1,
        }
    }
}

/// The root field a cached query answers, when it has exactly one.
fn single_root_field(document: &str) -> Option<String> {
    match root_fields(document)?.as_slice() {
        [field] => Some((*field).to_string()),
        _ => None,
    }
}

/// The cached root fields an AniList mutation can change (transport.md 1.12); None for a
/// mutation the table does not know, which drops every entry at the endpoint.
pub fn fields_affected_by(mutation_field: &str) -> Option<&'static [&'static str]> {
    const MEDIA_LIST: &[&str] = &["MediaList", "MediaListCollection", "Page", "Media", "User", "Viewer", "Activity"];
    const FAVOURITES: &[&str] = &["Favourites", "User", "Viewer", "Media", "Character", "Staff", "Studio", "Page"];
    const REVIEWS: &[&str] = &["Review", "Page", "Media", "User", "Viewer"];
    const USER: &[&str] = &["User", "Viewer", "Follower", "Following", "Page", "MediaList", "MediaListCollection", "Media"];
    match mutation_field {
        "SaveMediaListEntry" | "UpdateMediaListEntries" | "DeleteMediaListEntry" => Some(MEDIA_LIST),
        "ToggleFavourite" | "UpdateFavouriteOrder" => Some(FAVOURITES),
        "SaveReview" | "DeleteReview" | "RateReview" => Some(REVIEWS),
        "UpdateUser" => Some(USER),
        _ => None,
    }
}

/// The resource a REST write changed: its URL without query, fragment, trailing slash and one
/// trailing `my_list_status` segment. None unless that ends in a numeric id (a write to a
/// collection says nothing precise about which cached reads it changed).
pub fn rest_resource_prefix(url: &str) -> Option<String> {
    let url = url.split(['#', '?']).next().unwrap_or(url).trim_end_matches('/');
    let url = url.strip_suffix("/my_list_status").unwrap_or(url);
    let (_, last) = url.rsplit_once('/')?;
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())).then(|| url.to_string())
}

/// `url` is `prefix` itself or continues it with a path, query or fragment.
fn is_under(url: &str, prefix: &str) -> bool {
    url.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?', '#']))
}

/// The URL without its query string: what "every entry for this URL" compares.
fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

/// One invalidation, kept for a while so an in-flight read it affects is not written back.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Invalidation {
    All,
    Key(Arc<str>),
    /// Every entry at or under the prefix (`deleteMatching`).
    Under(String),
    /// Every `GET` entry at or under the prefix (a REST write).
    GetsUnder(String),
    /// Every entry for this URL, whatever its query, method, body or auth (`deleteAllForUrl`,
    /// an unmapped mutation).
    Url(String),
    /// `POST` entries at the URL answering one of the fields, or no single field (a mapped mutation).
    RootFields { url: String, fields: Vec<&'static str> },
}

impl Invalidation {
    fn affects(&self, key: &CacheKey) -> bool {
        match self {
            Invalidation::All => true,
            Invalidation::Key(text) => *text == key.text,
            Invalidation::Under(prefix) => is_under(&key.url, prefix),
            Invalidation::GetsUnder(prefix) => key.method == "GET" && is_under(&key.url, prefix),
            Invalidation::Url(url) => without_query(&key.url) == url,
            Invalidation::RootFields { url, fields } => {
                key.method == "POST"
                    && key.url == *url
                    && key.root_field.as_deref().is_none_or(|root| fields.contains(&root))
            }
        }
    }
}

/// Lifetime counters (`stats()`); they never reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub entries: u64,
    pub hits: u64,
    pub misses: u64,
    pub expirations: u64,
    pub evictions: u64,
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
        let Some(entry) = self.entries.remove(text) else { return false };
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
            let expired = self.entries.get(text).is_none_or(|entry| entry.expires_at <= now_ms);
            if !expired {
                break;
            }
            let text = text.clone();
            self.remove(&text);
        }
    }

    fn invalidate(&mut self, invalidation: Invalidation) -> usize {
        self.generation += 1;
        let doomed: Vec<Arc<str>> =
            self.entries.values().filter(|e| invalidation.affects(&e.key)).map(|e| e.key.text.clone()).collect();
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
            && self.log.iter().filter(|(g, _)| *g > generation).all(|(_, inv)| !inv.affects(key))
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
        f.debug_struct("ResponseCache").field("config", &self.config).finish_non_exhaustive()
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
        Self { config, clock, state: Mutex::default() }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counts exactly one of hit, miss or expiration. An expired entry is deleted here.
    pub fn get(&self, key: &CacheKey) -> Lookup {
        let now = self.clock.now_ms();
        let mut state = self.state();
        let generation = state.generation;
        let found = state.entries.get(&key.text).map(|e| (e.expires_at <= now, e.value.clone()));
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
            let Some((_, oldest)) = state.by_use.pop_first() else { break };
            state.remove(&oldest);
            state.stats.evictions += 1;
        }
        let used = state.next_tick();
        let written = state.next_tick();
        state.by_use.insert(used, key.text.clone());
        state.by_write.insert(written, key.text.clone());
        let expires_at = now.saturating_add(self.config.ttl_ms);
        state.entries.insert(key.text.clone(), Entry { key: key.clone(), value, expires_at, used, written });
        true
    }

    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// Delete one entry; returns whether it existed.
    pub fn delete(&self, key: &CacheKey) -> bool {
        self.state().invalidate(Invalidation::Key(key.text.clone())) > 0
    }

    /// Delete every entry at or under `prefix` (path-boundary aware: `/anime/21` does not match
    /// `/anime/212`); returns how many.
    pub fn delete_matching(&self, prefix: &str) -> usize {
        let prefix = canonical_url(prefix);
        self.state().invalidate(Invalidation::Under(prefix.trim_end_matches('/').to_string()))
    }

    /// Delete every entry for `url` (its query string ignored); returns how many.
    pub fn delete_all_for_url(&self, url: &str) -> usize {
        self.state().invalidate(Invalidation::Url(without_query(url).to_string()))
    }

    pub fn clear(&self) {
        self.state().invalidate(Invalidation::All);
    }

    pub fn stats(&self) -> CacheStats {
        let state = self.state();
        CacheStats { entries: state.entries.len() as u64, ..state.stats }
    }

    /// After a successful write that was not served by the cache: drop what it may have
    /// changed (transport.md 1.12). A GraphQL mutation drops the queries its root fields can
    /// affect (every entry at the endpoint for a mutation the table does not know); a REST
    /// write drops the `GET`s of the resource it names. Returns how many entries were dropped.
    pub fn invalidate_after_write(&self, spec: &RequestSpec) -> usize {
        let invalidation = match spec.protocol {
            Protocol::GraphQl => mutation_invalidation(spec),
            Protocol::Rest => match rest_resource_prefix(&spec.url) {
                Some(prefix) => Invalidation::GetsUnder(prefix),
                None => return 0,
            },
        };
        self.state().invalidate(invalidation)
    }
}

fn mutation_invalidation(spec: &RequestSpec) -> Invalidation {
    let url = canonical_url(&spec.url);
    let body: Option<Value> = serde_json::from_slice(&spec.body.to_vec()).ok();
    let document = body.as_ref().and_then(|b| b.get("query")).and_then(Value::as_str).unwrap_or("");
    // Every root field must be in the table; the union of their lists is what they can change.
    let mut affected: Vec<&'static str> = Vec::new();
    for field in root_fields(document).unwrap_or_default() {
        let Some(fields) = fields_affected_by(field) else {
            return Invalidation::Url(without_query(&url).to_string());
        };
        for field in fields {
            if !affected.contains(field) {
                affected.push(field);
            }
        }
    }
    if affected.is_empty() {
        return Invalidation::Url(without_query(&url).to_string());
    }
    Invalidation::RootFields { url, fields: affected }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    use bytes::Bytes;
    use http::HeaderValue;

    use crate::request::ResultShape;

    /// A clock the test moves by hand.
    #[derive(Clone, Default)]
    struct ManualClock(Arc<AtomicU64>);

    impl Clock for ManualClock {
        fn now_ms(&self) -> u64 {
            self.0.load(Ordering::SeqCst)
        }
    }

    impl ManualClock {
        fn advance(&self, ms: u64) {
            self.0.fetch_add(ms, Ordering::SeqCst);
        }
    }

    fn cache(ttl_ms: u64, max_entries: u32) -> (ResponseCache, ManualClock) {
        let clock = ManualClock::default();
        (ResponseCache::with_clock(CacheConfig { ttl_ms, max_entries }, Box::new(clock.clone())), clock)
    }

    fn get_key(url: &str) -> CacheKey {
        CacheKey::new("GET", url, None, None)
    }

    fn text(value: &str) -> Arc<str> {
        Arc::from(value)
    }

    fn hit(cache: &ResponseCache, key: &CacheKey) -> Option<String> {
        match cache.get(key) {
            Lookup::Hit(value) => Some(value.to_string()),
            Lookup::Miss { .. } => None,
        }
    }

    fn obj(pairs: &[(&str, OptValue)]) -> OptValue {
        OptValue::Object(pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }

    fn graphql_body(document: &str, variables: Value) -> Vec<u8> {
        serde_json::to_vec(&serde_json::json!({ "query": document, "variables": variables })).unwrap()
    }

    fn spec(method: Method, url: &str, headers: &[(&str, &str)], body: Vec<u8>, protocol: Protocol) -> RequestSpec {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
        }
        let shape = if protocol == Protocol::GraphQl { ResultShape::GraphQl } else { ResultShape::Rest };
        RequestSpec::new(method, url, map, Bytes::from(body), protocol, shape).unwrap()
    }

    fn graphql_spec(document: &str, headers: &[(&str, &str)]) -> RequestSpec {
        let mut spec = spec(Method::POST, "http://api.test/", headers, graphql_body(document, Value::Null), Protocol::GraphQl);
        spec.is_write = !is_query_shaped(document);
        spec
    }

    #[test]
    fn construction_applies_defaults_and_rejects_invalid_options() {
        assert_eq!(CacheConfig::parse(&OptValue::Undefined), Ok(CacheConfig { ttl_ms: 60_000, max_entries: 128 }));
        let custom = obj(&[("ttlMs", OptValue::Number(0.0)), ("maxEntries", OptValue::Number(2.0)), ("cloneOnRead", OptValue::Bool(false))]);
        assert_eq!(CacheConfig::parse(&custom), Ok(CacheConfig { ttl_ms: 0, max_entries: 2 }));
        let cases = [
            (obj(&[("ttlMs", OptValue::Number(-1.0))]), "ttlMs must be a finite, non-negative number (received -1)."),
            (obj(&[("ttlMs", OptValue::Number(f64::INFINITY))]), "ttlMs must be a finite, non-negative number"),
            (obj(&[("maxEntries", OptValue::Number(0.0))]), "maxEntries must be a finite, positive integer (received 0)."),
            (obj(&[("maxEntries", OptValue::Number(1.5))]), "maxEntries must be a finite, positive integer"),
            (obj(&[("cloneOnRead", OptValue::String("yes".into()))]), "cloneOnRead must be a boolean"),
            (obj(&[("ttl", OptValue::Number(1.0))]), "Unknown key \"ttl\" in ResponseCache options"),
            (OptValue::Number(5.0), "ResponseCache options must be an object"),
        ];
        for (options, expected) in cases {
            let error = CacheConfig::parse(&options).expect_err(expected);
            assert!(error.0.contains(expected), "{:?} lacks {expected:?}", error.0);
        }
    }

    #[test]
    fn a_stored_value_is_returned_until_its_ttl_passes_then_counted_as_an_expiration() {
        let (cache, clock) = cache(1_000, 10);
        let key = get_key("http://api.test/anime/1");
        assert!(cache.set(&key, text("{\"id\":1}")));
        clock.advance(999);
        assert_eq!(hit(&cache, &key).as_deref(), Some("{\"id\":1}"));
        clock.advance(1);
        assert_eq!(hit(&cache, &key), None);
        assert_eq!(hit(&cache, &key), None);
        assert_eq!(cache.stats(), CacheStats { entries: 0, hits: 1, misses: 1, expirations: 1, evictions: 0 });
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
        assert_eq!(cache.stats().entries, 2, "a and b expired and were purged by the write");
        assert_eq!(cache.stats().expirations, 0, "only reads count expirations");
    }

    #[test]
    fn the_least_recently_used_entry_is_evicted_and_reads_refresh_recency() {
        let (cache, _) = cache(10_000, 2);
        let (a, b, c) = (get_key("http://api.test/a"), get_key("http://api.test/b"), get_key("http://api.test/c"));
        cache.set(&a, text("1"));
        cache.set(&b, text("2"));
        assert!(hit(&cache, &a).is_some(), "a is now the most recent");
        cache.set(&c, text("3"));
        assert!(hit(&cache, &b).is_none(), "b was the least recently used");
        assert!(hit(&cache, &a).is_some() && hit(&cache, &c).is_some());
        assert_eq!(cache.stats().evictions, 1);
        cache.set(&a, text("1b"));
        assert_eq!(cache.stats().evictions, 1, "overwriting a key evicts nothing");
        assert_eq!(hit(&cache, &a).as_deref(), Some("1b"));
    }

    #[test]
    fn query_parameter_order_does_not_matter_but_values_do() {
        assert_eq!(canonical_url("http://h/p?b=2&a=1#frag"), "http://h/p?a=1&b=2");
        assert_eq!(canonical_url("http://h/p?"), "http://h/p");
        assert_eq!(canonical_url("http://h/p?a=2&a=1"), "http://h/p?a=2&a=1", "repeated names keep their order");
        assert_eq!(get_key("http://h/p?a=1&b=2"), get_key("http://h/p?b=2&a=1"));
        assert_ne!(get_key("http://h/p?a=1"), get_key("http://h/p?a=2"));
    }

    #[test]
    fn keys_have_the_documented_shape_and_json_bodies_hash_independently_of_key_order() {
        assert_eq!(get_key("http://h/p").as_str(), "GET:http://h/p:none:none");
        let one = CacheKey::new("post", "http://h/", Some(br#"{"query":"{ Media { id } }","variables":{"a":1,"b":2}}"#), Some("bearer:x"));
        let two = CacheKey::new("POST", "http://h/", Some(br#"{"variables":{"b":2,"a":1},"query":"{ Media { id } }"}"#), Some("bearer:x"));
        assert_eq!(one, two);
        let stable_hash = short_sha256(br#"{"query":"{ Media { id } }","variables":{"a":1,"b":2}}"#);
        assert_eq!(stable_hash.len(), 16);
        assert_eq!(one.as_str(), format!("POST:http://h/:{stable_hash}:bearer:x"));
        let other = CacheKey::new("POST", "http://h/", Some(br#"{"query":"{ Media { id } }","variables":{"a":2,"b":2}}"#), Some("bearer:x"));
        assert_ne!(one, other);
        assert_ne!(CacheKey::new("POST", "http://h/", Some(b"not json"), None), CacheKey::new("POST", "http://h/", Some(b"not json!"), None));
    }

    #[test]
    fn bearer_tokens_are_hashed_and_other_credentials_are_not_cached() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(http::HeaderName::from_bytes(name.as_bytes()).unwrap(), HeaderValue::from_str(value).unwrap());
            }
            map
        };
        assert_eq!(auth_key(&headers(&[("accept", "application/json")])).as_deref(), Some("none"));
        let bearer = auth_key(&headers(&[("authorization", "Bearer secret-token")])).unwrap();
        assert_eq!(bearer, format!("bearer:{}", &format!("{:x}", Sha256::digest(b"secret-token"))[..16]));
        assert!(!bearer.contains("secret"));
        assert_ne!(bearer, auth_key(&headers(&[("authorization", "Bearer other")])).unwrap());
        assert_eq!(auth_key(&headers(&[("x-mal-client-id", "cid")])), None);
        assert_eq!(auth_key(&headers(&[("authorization", "Basic abc")])), None);
        assert_eq!(auth_key(&headers(&[("x-api-key", "k")])), None);
    }

    #[test]
    fn only_reads_and_query_shaped_graphql_posts_are_cacheable() {
        let get = spec(Method::GET, "http://api.test/anime/1?fields=id", &[("authorization", "Bearer t")], vec![], Protocol::Rest);
        assert!(CacheKey::for_request(&get).is_some());
        let with_client_id = spec(Method::GET, "http://api.test/anime/1", &[("x-mal-client-id", "cid")], vec![], Protocol::Rest);
        assert_eq!(CacheKey::for_request(&with_client_id), None);
        let patch = spec(Method::PATCH, "http://api.test/anime/1/my_list_status", &[], b"score=1".to_vec(), Protocol::Rest);
        assert_eq!(CacheKey::for_request(&patch), None);
        for document in ["{ Media(id: 1) { id } }", "query Q($id: Int) { Media(id: $id) { id } }", "# note\n\n  # more\nquery { Viewer { id } }"] {
            assert!(CacheKey::for_request(&graphql_spec(document, &[])).is_some(), "{document}");
        }
        for document in ["mutation { SaveMediaListEntry(mediaId: 1) { id } }", "queryX { a }", "fragment F on Media { id }"] {
            assert_eq!(CacheKey::for_request(&graphql_spec(document, &[])), None, "{document}");
        }
        let rest_post = spec(Method::POST, "http://api.test/x", &[], b"{\"query\":\"{ a }\"}".to_vec(), Protocol::Rest);
        assert_eq!(CacheKey::for_request(&rest_post), None);
    }

    #[test]
    fn query_shape_follows_the_documented_pattern() {
        assert!(is_query_shaped("{ a }"));
        assert!(is_query_shaped("  query{ a }"));
        assert!(is_query_shaped("#c1\n#c2\nquery Name { a }"));
        assert!(!is_query_shaped("query"));
        assert!(!is_query_shaped("queryable { a }"));
        assert!(!is_query_shaped("mutation { a }"));
        assert!(!is_query_shaped("subscription { a }"));
        assert!(!is_query_shaped("# only a comment"));
    }

    #[test]
    fn root_fields_resolve_aliases_and_skip_arguments_directives_and_fragments() {
        assert_eq!(root_fields("{ Media(id: 1) { id } }"), Some(vec!["Media"]));
        assert_eq!(
            root_fields("query Q($f: MediaFilter = {a: \"}\"}) { m: Media(search: \"{x}\") @include(if: true) { id } Page { media { id } } }"),
            Some(vec!["Media", "Page"])
        );
        assert_eq!(root_fields("fragment F on Media { id title }\nquery { Media { ...F } }"), Some(vec!["Media"]));
        assert_eq!(root_fields("{ ...Root }"), None);
        assert_eq!(root_fields("# { NotThis }\n{ Viewer { id } }"), Some(vec!["Viewer"]));
        assert_eq!(root_fields("\"\"\"doc { x }\"\"\" query { User { id } }"), Some(vec!["User"]));
        assert_eq!(root_fields("query"), None);
        assert_eq!(single_root_field("{ A { id } B { id } }"), None);
    }

    #[test]
    fn the_mutation_table_matches_the_specification() {
        assert_eq!(fields_affected_by("SaveMediaListEntry").map(|f| f.contains(&"Activity")), Some(true));
        assert_eq!(fields_affected_by("ToggleFavourite").map(|f| f.contains(&"Studio")), Some(true));
        assert_eq!(fields_affected_by("RateReview").map(|f| f.contains(&"Review")), Some(true));
        assert_eq!(fields_affected_by("UpdateUser").map(|f| f.contains(&"Following")), Some(true));
        assert_eq!(fields_affected_by("SaveMediaListEntry").map(|f| f.contains(&"Character")), Some(false));
        assert_eq!(fields_affected_by("DeleteActivity"), None);
    }

    fn store_query(cache: &ResponseCache, document: &str) -> CacheKey {
        let key = CacheKey::for_request(&graphql_spec(document, &[])).unwrap();
        assert!(cache.set(&key, text("{}")));
        key
    }

    #[test]
    fn a_mapped_mutation_drops_only_the_queries_it_can_affect_and_unattributable_ones() {
        let (cache, _) = cache(10_000, 16);
        let media = store_query(&cache, "{ Media(id: 1) { id } }");
        let character = store_query(&cache, "{ Character(id: 1) { id } }");
        let multi = store_query(&cache, "{ Media(id: 2) { id } Character(id: 2) { id } }");
        let get = get_key("http://api.test/");
        cache.set(&get, text("{}"));
        let removed = cache.invalidate_after_write(&graphql_spec("mutation { SaveMediaListEntry(mediaId: 1, status: CURRENT) { id } }", &[]));
        assert_eq!(removed, 2);
        assert!(hit(&cache, &media).is_none() && hit(&cache, &multi).is_none());
        assert!(hit(&cache, &character).is_some(), "Character is not in SaveMediaListEntry's list");
        assert!(hit(&cache, &get).is_some(), "a mapped mutation only drops POST entries");
        let aliased = cache.invalidate_after_write(&graphql_spec("mutation { fav: ToggleFavourite(characterId: 1) { anime { nodes { id } } } }", &[]));
        assert_eq!(aliased, 1, "the alias is resolved to ToggleFavourite, which affects Character");
    }

    #[test]
    fn an_unmapped_mutation_drops_every_entry_at_the_endpoint() {
        let (cache, _) = cache(10_000, 16);
        store_query(&cache, "{ Character(id: 1) { id } }");
        cache.set(&get_key("http://api.test/?x=1"), text("{}"));
        let elsewhere = get_key("http://other.test/");
        cache.set(&elsewhere, text("{}"));
        assert_eq!(cache.invalidate_after_write(&graphql_spec("mutation { DeleteActivity(id: 1) { deleted } }", &[])), 2);
        assert!(hit(&cache, &elsewhere).is_some());
    }

    #[test]
    fn a_rest_write_drops_the_gets_of_its_numeric_resource_across_auth_keys() {
        let (cache, _) = cache(10_000, 16);
        let keys: Vec<CacheKey> = [
            ("http://api.test/v2/anime/21?fields=id", "bearer:a"),
            ("http://api.test/v2/anime/21/my_list_status", "bearer:b"),
            ("http://api.test/v2/anime/21", "none"),
            ("http://api.test/v2/anime/212", "bearer:a"),
            ("http://api.test/v2/anime/2", "bearer:a"),
        ]
        .iter()
        .map(|(url, auth)| CacheKey::new("GET", url, None, Some(auth)))
        .collect();
        for key in &keys {
            cache.set(key, text("{}"));
        }
        let post_key = CacheKey::new("POST", "http://api.test/v2/anime/21", Some(b"{}"), None);
        cache.set(&post_key, text("{}"));
        let patch = spec(Method::PATCH, "http://api.test/v2/anime/21/my_list_status?x=1", &[], b"score=9".to_vec(), Protocol::Rest);
        assert_eq!(cache.invalidate_after_write(&patch), 3);
        assert!(hit(&cache, &keys[3]).is_some() && hit(&cache, &keys[4]).is_some());
        assert!(hit(&cache, &post_key).is_some(), "only GET entries are dropped");
    }

    #[test]
    fn the_rest_prefix_needs_a_numeric_last_segment() {
        assert_eq!(rest_resource_prefix("http://h/v2/anime/21/my_list_status").as_deref(), Some("http://h/v2/anime/21"));
        assert_eq!(rest_resource_prefix("http://h/v2/manga/7/?a=1#f").as_deref(), Some("http://h/v2/manga/7"));
        assert_eq!(rest_resource_prefix("http://h/v2/users/@me"), None);
        assert_eq!(rest_resource_prefix("http://h/v2/anime/abc/my_list_status"), None);
        let (cache, _) = cache(10_000, 4);
        let key = get_key("http://h/v2/users/@me");
        cache.set(&key, text("{}"));
        let write = spec(Method::PATCH, "http://h/v2/users/@me", &[], vec![], Protocol::Rest);
        assert_eq!(cache.invalidate_after_write(&write), 0);
        assert_eq!(cache.generation(), 0, "nothing was invalidated");
    }

    #[test]
    fn a_write_back_is_dropped_when_an_overlapping_invalidation_affects_its_key() {
        let (cache, _) = cache(10_000, 16);
        let anime = get_key("http://h/v2/anime/1?fields=id");
        let other = get_key("http://h/v2/anime/2");
        let (Lookup::Miss { generation: anime_gen }, Lookup::Miss { generation: other_gen }) = (cache.get(&anime), cache.get(&other)) else {
            panic!("both must miss");
        };
        cache.invalidate_after_write(&spec(Method::PATCH, "http://h/v2/anime/1/my_list_status", &[], vec![], Protocol::Rest));
        assert!(cache.generation() > anime_gen);
        assert!(!cache.set_if_fresh(&anime, anime_gen, text("stale")));
        assert!(cache.set_if_fresh(&other, other_gen, text("fine")), "an unrelated invalidation does not block it");
        assert!(cache.set_if_fresh(&anime, cache.generation(), text("fresh")));
        cache.clear();
        assert!(!cache.set_if_fresh(&other, other_gen, text("x")), "clear affects everything");
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
    fn deletes_report_what_they_removed() {
        let (cache, _) = cache(10_000, 16);
        for url in ["http://h/v2/anime/21", "http://h/v2/anime/21/pictures", "http://h/v2/anime/212", "http://h/v2/anime/21?fields=a"] {
            cache.set(&get_key(url), text("{}"));
        }
        assert!(cache.delete(&get_key("http://h/v2/anime/21/pictures")));
        assert!(!cache.delete(&get_key("http://h/v2/anime/21/pictures")));
        assert_eq!(cache.delete_matching("http://h/v2/anime/21/"), 2, "/anime/212 is not under /anime/21");
        cache.set(&get_key("http://h/v2/anime/212?x=1"), text("{}"));
        cache.set(&CacheKey::new("POST", "http://h/v2/anime/212", Some(b"{}"), None), text("{}"));
        assert_eq!(cache.delete_all_for_url("http://h/v2/anime/212?ignored=1"), 3);
        cache.set(&get_key("http://h/a"), text("{}"));
        cache.clear();
        assert_eq!(cache.stats().entries, 0);
        assert_eq!(cache.generation(), 5);
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
        assert_eq!(cache.stats(), CacheStats { entries: 0, hits: 1, misses: 1, expirations: 0, evictions: 1 });
    }
}
