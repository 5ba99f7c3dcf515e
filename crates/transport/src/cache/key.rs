//! What an entry is stored under: `METHOD:canonicalUrl:bodyHash:authKey` (transport.md 1.12),
//! with the parts invalidation matches on.
//!
//! Keys never contain a secret (decisions D18): a bearer token becomes the first 16 hex digits
//! of its SHA-256, and a request carrying any other credential header is not cached at all.

use std::sync::Arc;

use http::header::AUTHORIZATION;
use http::{HeaderMap, Method};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::hint::{CacheHint, Scope};
use crate::request::{may_carry_credential, RequestSpec};

/// What one entry is stored under, with the parts invalidation matches on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    /// `METHOD:canonicalUrl:bodyHash:authKey`.
    pub(super) text: Arc<str>,
    pub(super) method: String,
    /// The URL with its query parameters sorted and its fragment dropped.
    pub(super) url: String,
    /// What scoped invalidations match ([`CacheHint::Read`]); not part of the key text.
    pub(super) scope: Option<Scope>,
}

impl CacheKey {
    /// A key from its parts, as `ResponseCache.get/set/delete` take them. `body` is the request
    /// body text: JSON (object keys are sorted before hashing, so key order does not matter)
    /// or anything else, hashed as it is. `auth_key` defaults to `none`. It has no scope until
    /// [`CacheKey::with_scope`] gives it one.
    pub fn new(method: &str, url: &str, body: Option<&[u8]>, auth_key: Option<&str>) -> Self {
        let parsed = body.map(|bytes| (bytes, serde_json::from_slice::<Value>(bytes).ok()));
        let body = parsed.as_ref().map(|(bytes, json)| match json {
            Some(json) => BodyText::Json(json),
            None => BodyText::Raw(bytes),
        });
        Self::build(method, url, body, auth_key.unwrap_or("none"))
    }

    /// The same key, matched by scoped invalidations as `scope`.
    pub fn with_scope(mut self, scope: Option<Scope>) -> Self {
        self.scope = scope;
        self
    }

    /// The key of a request the transport may serve from the cache, or None when it must not:
    /// not a read its provider marked cacheable ([`CacheHint::Read`]), a `POST` whose body is
    /// not JSON, or a credential other than a bearer token.
    pub fn for_request(spec: &RequestSpec) -> Option<Self> {
        let CacheHint::Read { scope } = &spec.cache_hint else {
            return None;
        };
        let auth = auth_key(&spec.headers)?;
        let key = if spec.method == Method::GET {
            Self::build("GET", &spec.url, None, &auth)
        } else if spec.method == Method::POST && !spec.is_write {
            let body: Value = serde_json::from_slice(&spec.body.to_vec()).ok()?;
            Self::build("POST", &spec.url, Some(BodyText::Json(&body)), &auth)
        } else {
            return None;
        };
        Some(key.with_scope(scope.clone()))
    }

    fn build(method: &str, url: &str, body: Option<BodyText<'_>>, auth_key: &str) -> Self {
        let method = method.to_ascii_uppercase();
        let url = canonical_url(url);
        let body_hash = match body {
            None => "none".to_string(),
            Some(BodyText::Raw(bytes)) => short_sha256(bytes),
            Some(BodyText::Json(json)) => {
                let mut stable = String::new();
                write_stable_json(json, &mut stable);
                short_sha256(stable.as_bytes())
            }
        };
        let text = Arc::from(format!("{method}:{url}:{body_hash}:{auth_key}"));
        Self {
            text,
            method,
            url,
            scope: None,
        }
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
    Sha256::digest(bytes)
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
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
/// other header that may carry one: custom `Authorization` schemes, client-id headers, API
/// keys. Unknown headers count as credentials, so a new one fails closed.
pub fn auth_key(headers: &HeaderMap) -> Option<String> {
    let mut key = "none".to_string();
    for (name, value) in headers {
        if !may_carry_credential(name, value) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::test_support::{get_key, graphql_spec, spec};
    use crate::error::Protocol;
    use http::HeaderValue;

    #[test]
    fn query_parameter_order_does_not_matter_but_values_do() {
        assert_eq!(
            canonical_url("http://h/p?b=2&a=1#frag"),
            "http://h/p?a=1&b=2"
        );
        assert_eq!(canonical_url("http://h/p?"), "http://h/p");
        assert_eq!(
            canonical_url("http://h/p?a=2&a=1"),
            "http://h/p?a=2&a=1",
            "repeated names keep their order"
        );
        assert_eq!(get_key("http://h/p?a=1&b=2"), get_key("http://h/p?b=2&a=1"));
        assert_ne!(get_key("http://h/p?a=1"), get_key("http://h/p?a=2"));
    }

    #[test]
    fn keys_have_the_documented_shape_and_json_bodies_hash_independently_of_key_order() {
        assert_eq!(get_key("http://h/p").as_str(), "GET:http://h/p:none:none");
        let one = CacheKey::new(
            "post",
            "http://h/",
            Some(br#"{"query":"{ Item { id } }","variables":{"a":1,"b":2}}"#),
            Some("bearer:x"),
        );
        let two = CacheKey::new(
            "POST",
            "http://h/",
            Some(br#"{"variables":{"b":2,"a":1},"query":"{ Item { id } }"}"#),
            Some("bearer:x"),
        );
        assert_eq!(one, two);
        let stable_hash = short_sha256(br#"{"query":"{ Item { id } }","variables":{"a":1,"b":2}}"#);
        assert_eq!(stable_hash.len(), 16);
        assert_eq!(
            one.as_str(),
            format!("POST:http://h/:{stable_hash}:bearer:x")
        );
        let other = CacheKey::new(
            "POST",
            "http://h/",
            Some(br#"{"query":"{ Item { id } }","variables":{"a":2,"b":2}}"#),
            Some("bearer:x"),
        );
        assert_ne!(one, other);
        assert_ne!(
            CacheKey::new("POST", "http://h/", Some(b"not json"), None),
            CacheKey::new("POST", "http://h/", Some(b"not json!"), None)
        );
        assert_eq!(
            one.clone().with_scope(Some("Item".into())).as_str(),
            one.as_str(),
            "the scope is not part of the key text"
        );
    }

    #[test]
    fn bearer_tokens_are_hashed_and_other_credentials_are_not_cached() {
        let headers = |pairs: &[(&str, &str)]| {
            let mut map = HeaderMap::new();
            for (name, value) in pairs {
                map.insert(
                    http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    HeaderValue::from_str(value).unwrap(),
                );
            }
            map
        };
        assert_eq!(
            auth_key(&headers(&[("accept", "application/json")])).as_deref(),
            Some("none")
        );
        let bearer = auth_key(&headers(&[("authorization", "Bearer secret-token")])).unwrap();
        assert_eq!(
            bearer,
            format!(
                "bearer:{}",
                &format!("{:x}", Sha256::digest(b"secret-token"))[..16]
            )
        );
        assert!(!bearer.contains("secret"));
        assert_ne!(
            bearer,
            auth_key(&headers(&[("authorization", "Bearer other")])).unwrap()
        );
        assert_eq!(auth_key(&headers(&[("x-client-id", "cid")])), None);
        assert_eq!(auth_key(&headers(&[("authorization", "Basic abc")])), None);
        assert_eq!(auth_key(&headers(&[("x-api-key", "k")])), None);
    }

    #[test]
    fn only_reads_and_posts_marked_as_reads_are_cacheable() {
        let get = spec(
            Method::GET,
            "http://api.test/items/1?fields=id",
            &[("authorization", "Bearer t")],
            vec![],
            Protocol::Rest,
        );
        assert!(
            CacheKey::for_request(&get).is_some(),
            "a GET is a read unless its provider says otherwise"
        );
        let mut opted_out = get.clone();
        opted_out.cache_hint = CacheHint::None;
        assert_eq!(CacheKey::for_request(&opted_out), None);
        let with_client_id = spec(
            Method::GET,
            "http://api.test/items/1",
            &[("x-client-id", "cid")],
            vec![],
            Protocol::Rest,
        );
        assert_eq!(CacheKey::for_request(&with_client_id), None);
        let patch = spec(
            Method::PATCH,
            "http://api.test/items/1/status",
            &[],
            b"score=1".to_vec(),
            Protocol::Rest,
        );
        assert_eq!(CacheKey::for_request(&patch), None);
        let read = CacheHint::Read {
            scope: Some("Item".into()),
        };
        let query = CacheKey::for_request(&graphql_spec("{ Item(id: 1) { id } }", read.clone()))
            .expect("a POST marked as a read");
        assert_eq!(
            query.scope.as_deref(),
            Some("Item"),
            "the key carries the hint's scope"
        );
        assert_eq!(
            CacheKey::for_request(&graphql_spec("query { Me { id } }", CacheHint::None)),
            None
        );
        let mut write = graphql_spec("mutation { X { id } }", read);
        write.is_write = true;
        assert_eq!(
            CacheKey::for_request(&write),
            None,
            "a write is never served from the cache"
        );
        let rest_post = spec(
            Method::POST,
            "http://api.test/x",
            &[],
            b"{\"query\":\"{ a }\"}".to_vec(),
            Protocol::Rest,
        );
        assert_eq!(CacheKey::for_request(&rest_post), None);
    }
}
