//! The fleet tier of a shared cache (`new ResponseCache({ shared: true })` on a slot with
//! `sharedState`; our extension, decisions D41): what is stored in Redis, under which keys, and
//! which stored entries a successful write drops. Only the layout and the choices live here,
//! without sockets; the round trips are `shared_state::fleet_cache`.
//!
//! One scope per provider and upstream host, three keys on one Cluster slot (the `{…}` hash
//! tag): `index` (a sorted set: entry id → expiry, epoch ms of the Redis clock), `meta` (a hash:
//! entry id → what invalidation matches on, plus the scope's invalidation generation) and
//! `values` (a hash: entry id → the result's JSON text). The credential is not part of the
//! scope but of the entry id, as in the local key: a write drops the entries it affects
//! whatever their token, as the local cache does, and that must be one atomic scope.

use sha2::{Digest, Sha256};

use super::hint::CacheHint;
use super::key::CacheKey;
use super::policy::Invalidation;
use crate::request::RequestSpec;

/// A result larger than this is returned but not shared (the local tier may still keep it):
/// one answer must not fill the fleet's Redis.
pub const MAX_SHARED_VALUE_BYTES: usize = 1 << 20;

/// The field of the `meta` hash holding the scope's invalidation generation (ids are hex, so
/// they can never be this).
pub const GENERATION_FIELD: &str = "#gen";

/// The Redis keys of one scope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetKeys {
    pub index: String,
    pub meta: String,
    pub values: String,
}

impl FleetKeys {
    pub fn new(prefix: &str, provider: &str, host: &str) -> Self {
        let scope = format!("{prefix}:{{{provider}:{host}:cache}}");
        Self {
            index: format!("{scope}:index"),
            meta: format!("{scope}:meta"),
            values: format!("{scope}:values"),
        }
    }
}

/// The id an entry is stored under: 32 hex digits of the SHA-256 of its key text, so neither
/// the URL nor the (already hashed) credential appears in Redis as a key or a field name.
pub fn entry_id(key: &CacheKey) -> String {
    Sha256::digest(key.as_str().as_bytes())
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the `meta` hash keeps of an entry for invalidation: `METHOD\nscope\nurl` (an empty
/// scope is none). None when the entry must not be shared: a URL carrying userinfo (it could
/// hold a password) or a value over [`MAX_SHARED_VALUE_BYTES`].
pub fn shared_description(key: &CacheKey, value_len: usize) -> Option<String> {
    let authority = key
        .url
        .split_once("://")
        .map_or("", |(_, rest)| rest.split(['/', '?']).next().unwrap_or(""));
    if authority.contains('@') || value_len > MAX_SHARED_VALUE_BYTES {
        return None;
    }
    let scope = key.scope.as_deref().unwrap_or("");
    Some(format!("{}\n{scope}\n{}", key.method, key.url))
}

/// The key parts an invalidation matches, read back from a `meta` description.
fn parse_description(text: &str) -> Option<CacheKey> {
    let mut parts = text.splitn(3, '\n');
    let (method, scope, url) = (parts.next()?, parts.next()?, parts.next()?);
    let scope = (!scope.is_empty()).then(|| scope.to_string().into());
    Some(CacheKey::new(method, url, None, None).with_scope(scope))
}

/// What a successful write drops from the fleet's scope: the same [`Invalidation`] the local
/// cache applies, so the rule has one owner.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FleetInvalidation(Invalidation);

impl FleetInvalidation {
    /// None for a request that is not a write with an invalidation hint (it drops nothing).
    pub fn after_write(spec: &RequestSpec) -> Option<Self> {
        let CacheHint::Write(invalidates) = &spec.cache_hint else {
            return None;
        };
        Some(Self(Invalidation::after_write(&spec.url, invalidates)))
    }

    /// Every entry of the scope: what many deferred invalidations collapse into.
    pub fn everything() -> Self {
        Self(Invalidation::All)
    }

    /// The ids among a scope's `meta` fields (id, description) that this write affects. The
    /// generation field, and a description that cannot be read, are never dropped here (an
    /// unreadable one expires with its entry).
    pub fn doomed<'a>(&self, meta: impl IntoIterator<Item = (&'a str, &'a str)>) -> Vec<String> {
        meta.into_iter()
            .filter(|(id, _)| *id != GENERATION_FIELD)
            .filter(|(_, text)| parse_description(text).is_some_and(|key| self.0.affects(&key)))
            .map(|(id, _)| id.to_string())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::hint::{Invalidates, Scope};
    use crate::cache::test_support::{get_key, graphql_spec, spec};
    use crate::error::Protocol;
    use http::Method;

    #[test]
    fn a_scope_is_one_cluster_slot_and_ids_hide_the_url_and_the_token() {
        let keys = FleetKeys::new("anilink", "anilist", "graphql.anilist.co");
        assert_eq!(
            keys.index,
            "anilink:{anilist:graphql.anilist.co:cache}:index"
        );
        for key in [&keys.meta, &keys.values] {
            assert!(key.starts_with("anilink:{anilist:graphql.anilist.co:cache}:"));
        }
        let token = CacheKey::new(
            "GET",
            "http://h/items/1",
            None,
            Some("bearer:0123456789abcdef"),
        );
        let id = entry_id(&token);
        assert_eq!(id.len(), 32);
        assert!(id.bytes().all(|b| b.is_ascii_hexdigit()));
        assert!(!id.contains("0123456789abcdef") && !id.contains("items"));
        assert_ne!(
            id,
            entry_id(&CacheKey::new("GET", "http://h/items/1", None, None)),
            "two credentials never share an entry"
        );
        assert_eq!(id, entry_id(&token), "stable across processes");
    }

    #[test]
    fn descriptions_keep_no_credential_and_bound_what_is_shared() {
        let key = CacheKey::new("GET", "http://h/items/1?b=2&a=1", None, Some("bearer:feed"))
            .with_scope(Some(Scope::from("Item")));
        let text = shared_description(&key, 10).unwrap();
        assert_eq!(text, "GET\nItem\nhttp://h/items/1?a=1&b=2");
        assert!(
            !text.contains("feed"),
            "the auth part of the key is not described"
        );
        let parsed = parse_description(&text).unwrap();
        assert_eq!(
            (parsed.method.as_str(), parsed.url.as_str(), parsed.scope),
            ("GET", key.url.as_str(), key.scope.clone())
        );
        assert_eq!(shared_description(&key, MAX_SHARED_VALUE_BYTES + 1), None);
        assert!(shared_description(&key, MAX_SHARED_VALUE_BYTES).is_some());
        let with_password = get_key("http://user:pw@h/items/1");
        assert_eq!(shared_description(&with_password, 1), None);
        assert!(shared_description(&get_key("http://h/items/1?who=a@b"), 1).is_some());
    }

    /// The meta hash of a scope holding these entries, as `HGETALL` returns it.
    fn meta_of(keys: &[CacheKey]) -> Vec<(String, String)> {
        let mut meta: Vec<(String, String)> = keys
            .iter()
            .map(|key| (entry_id(key), shared_description(key, 1).unwrap()))
            .collect();
        meta.push((GENERATION_FIELD.to_string(), "3".to_string()));
        meta
    }

    fn doomed(invalidation: &FleetInvalidation, keys: &[CacheKey]) -> Vec<String> {
        let meta = meta_of(keys);
        let mut ids =
            invalidation.doomed(meta.iter().map(|(id, text)| (id.as_str(), text.as_str())));
        ids.sort();
        ids
    }

    fn ids(keys: &[&CacheKey]) -> Vec<String> {
        let mut ids: Vec<String> = keys.iter().map(|key| entry_id(key)).collect();
        ids.sort();
        ids
    }

    #[test]
    fn a_scoped_mutation_drops_what_the_local_cache_drops() {
        let read = |document: &str, scope: Option<&'static str>| {
            CacheKey::for_request(&graphql_spec(
                document,
                CacheHint::Read {
                    scope: scope.map(Scope::from),
                },
            ))
            .unwrap()
        };
        let item = read("{ Item(id: 1) { id } }", Some("Item"));
        let other = read("{ Other(id: 1) { id } }", Some("Other"));
        let unattributed = read("{ Item(id: 2) { id } Other(id: 2) { id } }", None);
        let get = get_key("http://api.test/");
        let write = graphql_spec(
            "mutation { SaveItem(id: 1) { id } }",
            CacheHint::Write(Invalidates::Scopes(vec![Scope::from("Item")])),
        );
        let invalidation = FleetInvalidation::after_write(&write).unwrap();
        assert_eq!(
            doomed(
                &invalidation,
                &[item.clone(), other, unattributed.clone(), get]
            ),
            ids(&[&item, &unattributed])
        );
    }

    #[test]
    fn a_rest_write_drops_the_gets_of_its_resource_whatever_the_token() {
        let keys: Vec<CacheKey> = [
            ("http://api.test/v2/items/21?fields=id", "bearer:a"),
            ("http://api.test/v2/items/21/status", "bearer:b"),
            ("http://api.test/v2/items/212", "bearer:a"),
        ]
        .iter()
        .map(|(url, auth)| CacheKey::new("GET", url, None, Some(auth)))
        .collect();
        let mut patch = spec(
            Method::PATCH,
            "http://api.test/v2/items/21/status",
            &[],
            b"score=9".to_vec(),
            Protocol::Rest,
        );
        patch.cache_hint =
            CacheHint::Write(Invalidates::GetsUnder("http://api.test/v2/items/21".into()));
        let invalidation = FleetInvalidation::after_write(&patch).unwrap();
        assert_eq!(doomed(&invalidation, &keys), ids(&[&keys[0], &keys[1]]));
        patch.cache_hint = CacheHint::None;
        assert_eq!(
            FleetInvalidation::after_write(&patch),
            None,
            "a write without a hint drops nothing and bumps no generation"
        );
    }

    #[test]
    fn the_generation_and_unreadable_fields_are_never_dropped() {
        let write = graphql_spec("mutation { X { id } }", CacheHint::Write(Invalidates::Url));
        let invalidation = FleetInvalidation::after_write(&write).unwrap();
        let meta = [
            (GENERATION_FIELD, "7"),
            ("abc", "garbage"),
            ("def", "GET\n\nhttp://api.test/"),
        ];
        assert_eq!(invalidation.doomed(meta), vec!["def".to_string()]);
    }
}
