//! What the response cache needs to know about one request, said by the provider that built
//! it. The provider fills the hint in from its catalog (which documents are query-shaped, which
//! root field a query answers, what a mutation or a REST write can change), so the cache keeps
//! its rules in neutral terms and names no provider operation, field or path.

use std::borrow::Cow;

/// A tag that scoped invalidations match (a GraphQL provider uses the root field a query answers).
pub type Scope = Cow<'static, str>;

/// How the response cache treats one request (transport.md 1.12).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum CacheHint {
    /// Neither served from the cache nor invalidating anything.
    #[default]
    None,
    /// A read the cache may serve and store. `scope` is what scoped invalidations match; a read
    /// without one cannot be attributed, so every scoped invalidation at its URL drops it.
    Read { scope: Option<Scope> },
    /// A write: what its success drops from the cache.
    Write(Invalidates),
}

/// The entries a successful write drops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Invalidates {
    /// Every `GET` entry at this URL prefix, or under it after a `/`, `?` or `#`.
    GetsUnder(String),
    /// The `POST` entries at the request's URL whose scope is one of these, or that have none.
    Scopes(Vec<Scope>),
    /// Every entry at the request's URL, whatever its query, method, body or auth.
    Url,
}
