//! Which entries an invalidation drops (transport.md 1.12). The caller's `delete*`/`clear`
//! and a successful write's [`Invalidates`] hint become one [`Invalidation`], kept in the
//! store's log for a while so an in-flight read it affects is not written back.

use super::hint::{Invalidates, Scope};
use super::key::{canonical_url, CacheKey};

/// One invalidation, matched against the keys of stored and in-flight entries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Invalidation {
    All,
    Key(std::sync::Arc<str>),
    /// Every entry at or under the prefix (`deleteMatching`).
    Under(String),
    /// Every `GET` entry at or under the prefix.
    GetsUnder(String),
    /// Every entry for this URL, whatever its query, method, body or auth.
    Url(String),
    /// `POST` entries at the URL whose scope is one of these, or that have none.
    Scopes {
        url: String,
        scopes: Vec<Scope>,
    },
}

impl Invalidation {
    /// What a successful write to `url` drops, as its provider described it.
    pub(super) fn after_write(url: &str, invalidates: &Invalidates) -> Self {
        match invalidates {
            Invalidates::GetsUnder(prefix) => Invalidation::GetsUnder(prefix.clone()),
            Invalidates::Scopes(scopes) => Invalidation::Scopes {
                url: canonical_url(url),
                scopes: scopes.clone(),
            },
            Invalidates::Url => Invalidation::Url(without_query(&canonical_url(url)).to_string()),
        }
    }

    pub(super) fn affects(&self, key: &CacheKey) -> bool {
        match self {
            Invalidation::All => true,
            Invalidation::Key(text) => *text == key.text,
            Invalidation::Under(prefix) => is_under(&key.url, prefix),
            Invalidation::GetsUnder(prefix) => key.method == "GET" && is_under(&key.url, prefix),
            Invalidation::Url(url) => without_query(&key.url) == url,
            Invalidation::Scopes { url, scopes } => {
                key.method == "POST"
                    && key.url == *url
                    && key
                        .scope
                        .as_ref()
                        .is_none_or(|scope| scopes.contains(scope))
            }
        }
    }
}

/// `url` is `prefix` itself or continues it with a path, query or fragment.
fn is_under(url: &str, prefix: &str) -> bool {
    url.strip_prefix(prefix)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with(['/', '?', '#']))
}

/// The URL without its query string: what "every entry for this URL" compares.
pub(super) fn without_query(url: &str) -> &str {
    url.split(['?', '#']).next().unwrap_or(url)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::hint::CacheHint;
    use crate::cache::test_support::{cache, get_key, graphql_spec, hit, spec, text};
    use crate::cache::ResponseCache;
    use crate::error::Protocol;
    use http::Method;

    fn read(scope: Option<&'static str>) -> CacheHint {
        CacheHint::Read {
            scope: scope.map(Scope::from),
        }
    }

    fn write(invalidates: Invalidates) -> CacheHint {
        CacheHint::Write(invalidates)
    }

    fn scopes(names: &[&'static str]) -> Invalidates {
        Invalidates::Scopes(names.iter().map(|name| Scope::from(*name)).collect())
    }

    fn store_query(cache: &ResponseCache, document: &str, scope: Option<&'static str>) -> CacheKey {
        let key = CacheKey::for_request(&graphql_spec(document, read(scope))).unwrap();
        assert!(cache.set(&key, text("{}")));
        key
    }

    #[test]
    fn a_scoped_write_drops_only_the_queries_in_scope_and_unattributable_ones() {
        let (cache, _) = cache(10_000, 16);
        let item = store_query(&cache, "{ Item(id: 1) { id } }", Some("Item"));
        let other = store_query(&cache, "{ Other(id: 1) { id } }", Some("Other"));
        let multi = store_query(&cache, "{ Item(id: 2) { id } Other(id: 2) { id } }", None);
        let get = get_key("http://api.test/");
        cache.set(&get, text("{}"));
        let item_writes = [
            "ItemEntry",
            "ItemCollection",
            "Page",
            "Item",
            "User",
            "Me",
            "Log",
        ];
        let removed = cache.invalidate_after_write(&graphql_spec(
            "mutation { SaveItem(id: 1) { id } }",
            write(scopes(&item_writes)),
        ));
        assert_eq!(removed, 2);
        assert!(hit(&cache, &item).is_none() && hit(&cache, &multi).is_none());
        assert!(
            hit(&cache, &other).is_some(),
            "Other is not in the write's scopes"
        );
        assert!(
            hit(&cache, &get).is_some(),
            "a scoped write only drops POST entries"
        );
        let other_writes = [
            "Marks", "User", "Me", "Item", "Other", "Team", "Maker", "Page",
        ];
        let aliased = cache.invalidate_after_write(&graphql_spec(
            "mutation { fav: MarkOther(id: 1) { id } }",
            write(scopes(&other_writes)),
        ));
        assert_eq!(aliased, 1, "Other is in this write's scopes");
    }

    #[test]
    fn an_unscoped_write_drops_every_entry_at_the_endpoint() {
        let (cache, _) = cache(10_000, 16);
        store_query(&cache, "{ Other(id: 1) { id } }", Some("Other"));
        cache.set(&get_key("http://api.test/?x=1"), text("{}"));
        let elsewhere = get_key("http://other.test/");
        cache.set(&elsewhere, text("{}"));
        assert_eq!(
            cache.invalidate_after_write(&graphql_spec(
                "mutation { DropEverything(id: 1) { done } }",
                write(Invalidates::Url)
            )),
            2
        );
        assert!(hit(&cache, &elsewhere).is_some());
    }

    #[test]
    fn a_prefix_write_drops_the_gets_of_its_resource_across_auth_keys() {
        let (cache, _) = cache(10_000, 16);
        let keys: Vec<CacheKey> = [
            ("http://api.test/v2/items/21?fields=id", "bearer:a"),
            ("http://api.test/v2/items/21/status", "bearer:b"),
            ("http://api.test/v2/items/21", "none"),
            ("http://api.test/v2/items/212", "bearer:a"),
            ("http://api.test/v2/items/2", "bearer:a"),
        ]
        .iter()
        .map(|(url, auth)| CacheKey::new("GET", url, None, Some(auth)))
        .collect();
        for key in &keys {
            cache.set(key, text("{}"));
        }
        let post_key = CacheKey::new("POST", "http://api.test/v2/items/21", Some(b"{}"), None);
        cache.set(&post_key, text("{}"));
        let mut patch = spec(
            Method::PATCH,
            "http://api.test/v2/items/21/status?x=1",
            &[],
            b"score=9".to_vec(),
            Protocol::Rest,
        );
        patch.cache_hint = write(Invalidates::GetsUnder("http://api.test/v2/items/21".into()));
        assert_eq!(cache.invalidate_after_write(&patch), 3);
        assert!(hit(&cache, &keys[3]).is_some() && hit(&cache, &keys[4]).is_some());
        assert!(
            hit(&cache, &post_key).is_some(),
            "only GET entries are dropped"
        );
    }

    #[test]
    fn a_write_without_an_invalidation_hint_drops_nothing_and_bumps_no_generation() {
        let (cache, _) = cache(10_000, 4);
        let key = get_key("http://h/v2/users/@me");
        cache.set(&key, text("{}"));
        let write = spec(
            Method::PATCH,
            "http://h/v2/users/@me",
            &[],
            vec![],
            Protocol::Rest,
        );
        assert_eq!(write.cache_hint, CacheHint::None);
        assert_eq!(cache.invalidate_after_write(&write), 0);
        assert_eq!(cache.generation(), 0, "nothing was invalidated");
        assert!(hit(&cache, &key).is_some());
    }

    #[test]
    fn a_write_back_is_dropped_when_an_overlapping_invalidation_affects_its_key() {
        use crate::cache::Lookup;
        let (cache, _) = cache(10_000, 16);
        let item = get_key("http://h/v2/items/1?fields=id");
        let other = get_key("http://h/v2/items/2");
        let (
            Lookup::Miss {
                generation: item_gen,
            },
            Lookup::Miss {
                generation: other_gen,
            },
        ) = (cache.get(&item), cache.get(&other))
        else {
            panic!("both must miss");
        };
        let mut patch = spec(
            Method::PATCH,
            "http://h/v2/items/1/status",
            &[],
            vec![],
            Protocol::Rest,
        );
        patch.cache_hint = write(Invalidates::GetsUnder("http://h/v2/items/1".into()));
        cache.invalidate_after_write(&patch);
        assert!(cache.generation() > item_gen);
        assert!(!cache.set_if_fresh(&item, item_gen, text("stale")));
        assert!(
            cache.set_if_fresh(&other, other_gen, text("fine")),
            "an unrelated invalidation does not block it"
        );
        assert!(cache.set_if_fresh(&item, cache.generation(), text("fresh")));
        cache.clear();
        assert!(
            !cache.set_if_fresh(&other, other_gen, text("x")),
            "clear affects everything"
        );
    }

    #[test]
    fn deletes_report_what_they_removed() {
        let (cache, _) = cache(10_000, 16);
        for url in [
            "http://h/v2/items/21",
            "http://h/v2/items/21/pictures",
            "http://h/v2/items/212",
            "http://h/v2/items/21?fields=a",
        ] {
            cache.set(&get_key(url), text("{}"));
        }
        assert!(cache.delete(&get_key("http://h/v2/items/21/pictures")));
        assert!(!cache.delete(&get_key("http://h/v2/items/21/pictures")));
        assert_eq!(
            cache.delete_matching("http://h/v2/items/21/"),
            2,
            "/items/212 is not under /items/21"
        );
        cache.set(&get_key("http://h/v2/items/212?x=1"), text("{}"));
        cache.set(
            &CacheKey::new("POST", "http://h/v2/items/212", Some(b"{}"), None),
            text("{}"),
        );
        assert_eq!(
            cache.delete_all_for_url("http://h/v2/items/212?ignored=1"),
            3
        );
        cache.set(&get_key("http://h/a"), text("{}"));
        cache.clear();
        assert_eq!(cache.stats().entries, 0);
        assert_eq!(cache.generation(), 5);
    }
}
