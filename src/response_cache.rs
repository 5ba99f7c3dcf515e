//! `ResponseCache`: the JavaScript class over the transport's cache (api.md §7).
//!
//! Pass one as the `responseCache` option (slot or request) and the transport reads and
//! writes it natively; these methods are for callers who manage entries themselves. Values
//! are stored as their JSON text, so they must be JSON-serialisable (every API result is);
//! a value `structuredClone` or `JSON.stringify` cannot encode is not stored (an entry already
//! there stays). Only what the transport itself could store is stored: a `GET`, or a GraphQL
//! `POST` whose document is a query. Every read returns a fresh copy.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi::Env;
use napi_derive::napi;

use anilink_providers::anilist::body_hint;
use anilink_transport::cache::{CacheConfig, CacheHint, CacheKey, Lookup, ResponseCache as Cache};
use anilink_transport::options::OptValue;

use crate::cache_class::ResponseCache;
use crate::convert::option_value;
use crate::wire::snapshot::CacheCounters;

/// Throw a JavaScript `TypeError` (api.md §7) and report it as the pending exception.
fn throw_type_error(env: &Env, message: String) -> Error {
    match env.throw_type_error(&message, None) {
        Ok(()) => Error::new(Status::PendingException, message),
        Err(error) => error,
    }
}

/// The text an entry stores: `JSON.stringify(response)`, or None for a payload that cannot be
/// stored faithfully: one `structuredClone` refuses (a function or symbol anywhere in it,
/// which JSON would silently drop) or one JSON cannot encode.
fn stored_text(env: &Env, response: Unknown<'_>) -> Result<Option<String>> {
    let clone: Function<'_, Unknown<'_>, Unknown<'_>> =
        env.get_global()?.get_named_property("structuredClone")?;
    // A refusal (a DataCloneError) is an answer here, not a failure of `set`.
    if clone.call(response).is_err() {
        return Ok(None);
    }
    json_text(env, response)
}

/// `JSON.stringify(value)`; None for what it cannot encode (it returns `undefined` or throws).
fn json_text(env: &Env, value: Unknown<'_>) -> Result<Option<String>> {
    let json: Object<'_> = env.get_global()?.get_named_property("JSON")?;
    let stringify: Function<'_, Unknown<'_>, Unknown<'_>> = json.get_named_property("stringify")?;
    match stringify.call(value) {
        Ok(text) if text.get_type()? == ValueType::String => {
            Ok(Some(unsafe { text.cast::<String>()? }))
        }
        _ => Ok(None),
    }
}

/// An entry's key, and whether the transport itself could store one under it.
struct EntryKey {
    key: CacheKey,
    cacheable: bool,
}

/// The key the transport would use for these parts. `data` is the request body: a string is
/// the body text, an object is serialised (its key order does not matter either way, JSON
/// bodies are hashed in a stable form). `authKey` defaults to `"none"`.
fn key(
    env: &Env,
    method: Unknown<'_>,
    url: Unknown<'_>,
    data: Option<Unknown<'_>>,
    auth_key: Option<Unknown<'_>>,
) -> Result<EntryKey> {
    let method = string_argument(env, "method", method)?;
    let url = string_argument(env, "url", url)?;
    let auth_key = match auth_key {
        Some(value) if !matches!(value.get_type()?, ValueType::Undefined | ValueType::Null) => {
            Some(string_argument(env, "authKey", value)?)
        }
        _ => None,
    };
    let (method, url, auth_key) = (method.as_str(), url.as_str(), auth_key.as_deref());
    let body = match data {
        None => None,
        Some(value) => match value.get_type()? {
            ValueType::Undefined | ValueType::Null => None,
            ValueType::String => Some(unsafe { value.cast::<String>()? }),
            _ => json_text(env, value)?,
        },
    };
    let body = body.as_deref().map(str::as_bytes);
    // The document rule is the transport's own (`body_hint`): a query is a read, scoped like
    // the transport's AniList queries so that mutations invalidate it the same way.
    let read_scope = match body.map_or(CacheHint::None, body_hint) {
        CacheHint::Read { scope } => Some(scope),
        _ => None,
    };
    let scope = if method.eq_ignore_ascii_case("GET") {
        Some(read_scope.flatten())
    } else if method.eq_ignore_ascii_case("POST") {
        read_scope
    } else {
        None
    };
    Ok(EntryKey {
        key: CacheKey::new(method, url, body, auth_key).with_scope(scope.clone().flatten()),
        cacheable: scope.is_some(),
    })
}

/// A string argument, or a TypeError naming it and what was given instead (a Symbol, a number…).
fn string_argument(env: &Env, name: &str, value: Unknown<'_>) -> Result<String> {
    // The value's type is enough to describe it; its content is never read.
    let kind = match value.get_type()? {
        ValueType::String => return unsafe { value.cast::<String>() },
        ValueType::Undefined => OptValue::Undefined,
        ValueType::Null => OptValue::Null,
        ValueType::Boolean => OptValue::Bool(false),
        ValueType::Number => OptValue::Number(0.0),
        ValueType::Symbol => OptValue::Other("symbol"),
        ValueType::BigInt => OptValue::Other("bigint"),
        ValueType::Function => OptValue::Function,
        _ => OptValue::Other("object"),
    }
    .kind();
    Err(throw_type_error(
        env,
        format!("ResponseCache: {name} must be a string (received {kind})."),
    ))
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

#[napi]
impl ResponseCache {
    /// `new ResponseCache({ ttlMs = 60000, maxEntries = 128, cloneOnRead = true, shared = false })`;
    /// throws a TypeError naming the option and the rule for an invalid one. `shared: true`
    /// keeps the entries in the Redis of the slot's `sharedState` (fleet-wide).
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, options: Option<Unknown<'_>>) -> Result<Self> {
        let options = match options {
            Some(value) => option_value(&env, value, "options", 0)?,
            None => OptValue::Undefined,
        };
        let config = CacheConfig::parse(&options).map_err(|e| throw_type_error(&env, e.0))?;
        Ok(Self {
            cache: Arc::new(Cache::new(config)),
        })
    }

    /// The cached value (a fresh copy), or `undefined` on a miss or an expired entry.
    #[napi(catch_unwind)]
    pub fn get<'env>(
        &self,
        env: &'env Env,
        method: Unknown<'_>,
        url: Unknown<'_>,
        data: Option<Unknown<'_>>,
        auth_key: Option<Unknown<'_>>,
    ) -> Result<Either<Unknown<'env>, Undefined>> {
        let key = key(env, method, url, data, auth_key)?.key;
        let Lookup::Hit(text) = self.cache.get(&key) else {
            return Ok(Either::B(()));
        };
        let json: Object<'_> = env.get_global()?.get_named_property("JSON")?;
        let parse: Function<'_, &str, Unknown<'env>> = json.get_named_property("parse")?;
        parse.call(&text).map(Either::A)
    }

    /// Store `response` under the key of these parts, when the transport could have stored it
    /// (a `GET`, or a GraphQL `POST` whose document is a query) and it can be stored faithfully.
    #[napi(catch_unwind)]
    pub fn set(
        &self,
        env: Env,
        method: Unknown<'_>,
        url: Unknown<'_>,
        data: Option<Unknown<'_>>,
        auth_key: Option<Unknown<'_>>,
        response: Unknown<'_>,
    ) -> Result<()> {
        let entry = key(&env, method, url, data, auth_key)?;
        if !entry.cacheable {
            return Ok(());
        }
        if let Some(text) = stored_text(&env, response)? {
            self.cache.set(&entry.key, Arc::from(text));
        }
        Ok(())
    }

    /// Store `response` unless an invalidation affecting its key happened since
    /// `generationAtRead` (from `getGeneration()` before the read); returns whether it was stored.
    // One parameter per argument of the documented JavaScript signature.
    #[allow(clippy::too_many_arguments)]
    #[napi(catch_unwind)]
    pub fn set_if_fresh(
        &self,
        env: Env,
        method: Unknown<'_>,
        url: Unknown<'_>,
        data: Option<Unknown<'_>>,
        auth_key: Option<Unknown<'_>>,
        generation_at_read: f64,
        response: Unknown<'_>,
    ) -> Result<bool> {
        let entry = key(&env, method, url, data, auth_key)?;
        if !entry.cacheable {
            return Ok(false);
        }
        let generation = if generation_at_read.is_finite() && generation_at_read >= 0.0 {
            generation_at_read as u64
        } else {
            0
        };
        Ok(match stored_text(&env, response)? {
            Some(text) => self
                .cache
                .set_if_fresh(&entry.key, generation, Arc::from(text)),
            None => false,
        })
    }

    /// Bumped by every invalidation (`delete*`, `clear`, and writes through the transport).
    #[napi(catch_unwind)]
    pub fn get_generation(&self) -> f64 {
        self.cache.generation() as f64
    }

    /// Delete one entry; returns whether it existed.
    #[napi(catch_unwind)]
    pub fn delete(
        &self,
        env: Env,
        method: Unknown<'_>,
        url: Unknown<'_>,
        data: Option<Unknown<'_>>,
        auth_key: Option<Unknown<'_>>,
    ) -> Result<bool> {
        let key = key(&env, method, url, data, auth_key)?.key;
        Ok(self.cache.delete(&key))
    }

    /// Delete every entry at or under `urlPrefix` (path-boundary aware); returns how many.
    #[napi(catch_unwind)]
    pub fn delete_matching(&self, env: Env, url_prefix: Unknown<'_>) -> Result<u32> {
        Ok(count(self.cache.delete_matching(&string_argument(
            &env,
            "urlPrefix",
            url_prefix,
        )?)))
    }

    /// Delete every entry for `url` (any query string, method, body or auth); returns how many.
    #[napi(catch_unwind)]
    pub fn delete_all_for_url(&self, env: Env, url: Unknown<'_>) -> Result<u32> {
        Ok(count(
            self.cache
                .delete_all_for_url(&string_argument(&env, "url", url)?),
        ))
    }

    #[napi(catch_unwind)]
    pub fn clear(&self) {
        self.cache.clear();
    }

    /// Frozen lifetime counters (the wire's `ResponseCacheStats`). A fleet-wide cache
    /// (`shared: true`) adds `shared: true`, `fleetHits` and `fleetMisses` (reads its Redis
    /// answered); the local counters count only what the local copy served.
    #[napi(
        catch_unwind,
        ts_return_type = "Readonly<import('./types/wire.generated').ResponseCacheStats>"
    )]
    pub fn stats<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        let counters = env.to_js_value(&CacheCounters::of(&self.cache))?;
        // SAFETY: a struct serializes as an object.
        let mut object = unsafe { counters.cast::<Object>() }?;
        object.freeze()?;
        Ok(object)
    }
}
