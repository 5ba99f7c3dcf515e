//! The groups of identical reads in flight: the key two calls must share to be one request
//! (a digest of method, URL, headers and body, plus the options that shape an outcome), and the
//! group a call leads or follows. Generic over the outcome it hands on, so it knows nothing of
//! the attempt loop; the call-level protocol around it is in the parent module.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};
use tokio::sync::watch;

use crate::cache::CacheHint;
use crate::options::{HookSet, ResolvedOptions};
use crate::request::RequestSpec;

/// What a request must match to join a group: its digest, and the options that shape its outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct CoalesceKey {
    /// SHA-256 of method, URL, headers and body: the key never holds a credential itself.
    digest: [u8; 32],
    /// The call's options without its hooks, which never change an outcome.
    options: ResolvedOptions,
}

impl CoalesceKey {
    /// The key of a call that may coalesce, or None: coalescing off for it, a write (the
    /// provider's classification), or a request its auth guard fails before any I/O.
    pub fn for_call(spec: &RequestSpec, options: &ResolvedOptions) -> Option<Self> {
        let is_read = !spec.is_write && matches!(spec.cache_hint, CacheHint::Read { .. });
        if !options.coalesce || !is_read || spec.missing_auth.is_some() {
            return None;
        }
        let mut hasher = Sha256::new();
        let mut part = |bytes: &[u8]| {
            hasher.update((bytes.len() as u64).to_be_bytes());
            hasher.update(bytes);
        };
        part(spec.method.as_str().as_bytes());
        part(spec.url.as_bytes());
        let mut headers: Vec<(&str, &[u8])> = spec
            .headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_bytes()))
            .collect();
        // Stable: repeated headers keep the order they are sent in.
        headers.sort_by_key(|(name, _)| *name);
        for (name, value) in headers {
            part(name.as_bytes());
            part(value);
        }
        // The body chunk by chunk (an AniList document is shared, not copied per call).
        hasher.update((spec.body.len() as u64).to_be_bytes());
        for chunk in spec.body.chunks() {
            hasher.update(chunk);
        }
        Some(Self {
            digest: hasher.finalize().into(),
            options: ResolvedOptions {
                hooks: HookSet::default(),
                ..options.clone()
            },
        })
    }
}

/// The groups in flight of one provider slot, each sharing its leader's outcome `T`.
pub struct Coalescer<T> {
    groups: Mutex<HashMap<[u8; 32], Group<T>>>,
    next_group: AtomicU64,
}

struct Group<T> {
    id: u64,
    options: ResolvedOptions,
    leader_request_id: Arc<str>,
    outcome: watch::Receiver<Option<T>>,
}

/// A call's part in coalescing.
pub enum Role<'a, T> {
    /// No identical read in flight: this call dispatches and shares its outcome.
    Lead(Lead<'a, T>),
    /// An identical read is in flight: wait for its outcome.
    Follow(Follow<T>),
    /// The same request is in flight under other options: dispatch alone, share nothing.
    Alone,
}

impl<T> Default for Coalescer<T> {
    fn default() -> Self {
        Self {
            groups: Mutex::new(HashMap::new()),
            next_group: AtomicU64::new(1),
        }
    }
}

impl<T: Clone> Coalescer<T> {
    /// Join the group of `key`, or start one led by the call `request_id`.
    pub fn join(&self, key: &CoalesceKey, request_id: &Arc<str>) -> Role<'_, T> {
        let mut groups = self.lock();
        if let Some(group) = groups.get(&key.digest) {
            if group.options != key.options {
                return Role::Alone;
            }
            return Role::Follow(Follow {
                leader_request_id: group.leader_request_id.clone(),
                outcome: group.outcome.clone(),
            });
        }
        let (sender, outcome) = watch::channel(None);
        let id = self.next_group.fetch_add(1, Ordering::Relaxed);
        groups.insert(
            key.digest,
            Group {
                id,
                options: key.options.clone(),
                leader_request_id: request_id.clone(),
                outcome,
            },
        );
        Role::Lead(Lead {
            coalescer: self,
            digest: key.digest,
            id,
            sender,
        })
    }
}

impl<T> Coalescer<T> {
    /// Groups in flight (tests).
    #[cfg(test)]
    fn in_flight(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Group<T>>> {
        // The map is left consistent by every operation, so a panic elsewhere cannot poison it.
        self.groups.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn close(&self, digest: &[u8; 32], id: u64) {
        let mut groups = self.lock();
        if groups.get(digest).is_some_and(|group| group.id == id) {
            groups.remove(digest);
        }
    }
}

/// The leading call of a group. Dropped without [`Lead::settle`], it ends the group without an
/// outcome and its followers join again.
pub struct Lead<'a, T> {
    coalescer: &'a Coalescer<T>,
    digest: [u8; 32],
    id: u64,
    sender: watch::Sender<Option<T>>,
}

impl<T: Clone> Lead<'_, T> {
    /// Close the group to newcomers (a call starting now sends its own request), then hand the
    /// outcome `share()` builds to the followers, if any joined.
    pub fn settle(self, share: impl FnOnce() -> T) {
        self.coalescer.close(&self.digest, self.id);
        // The group's own receiver left the map with it: what remains are the followers.
        if self.sender.receiver_count() > 0 {
            self.sender.send_replace(Some(share()));
        }
    }
}

impl<T> Drop for Lead<'_, T> {
    fn drop(&mut self) {
        self.coalescer.close(&self.digest, self.id);
    }
}

/// A call waiting for the outcome of an identical read in flight.
pub struct Follow<T> {
    pub leader_request_id: Arc<str>,
    outcome: watch::Receiver<Option<T>>,
}

impl<T: Clone> Follow<T> {
    /// The leader's outcome, or None when the group ended without one (join again).
    pub async fn outcome(mut self) -> Option<T> {
        loop {
            if let Some(outcome) = self.outcome.borrow_and_update().clone() {
                return Some(outcome);
            }
            if self.outcome.changed().await.is_err() {
                return self.outcome.borrow().clone();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use bytes::Bytes;
    use http::header::{HeaderValue, AUTHORIZATION};
    use http::{HeaderMap, Method};

    use super::*;
    use crate::error::{Protocol, TransportError};
    use crate::options::{OptValue, PartialOptions};
    use crate::request::ResultShape;

    fn options(extra: &[(&str, OptValue)]) -> ResolvedOptions {
        let mut partial = PartialOptions::default();
        partial
            .parse_key("coalesce", &OptValue::Bool(true))
            .unwrap();
        for (key, value) in extra {
            partial.parse_key(key, value).unwrap();
        }
        partial.resolve(false)
    }

    fn query(body: &str, token: Option<&str>) -> RequestSpec {
        let mut headers = HeaderMap::new();
        if let Some(token) = token {
            let value = HeaderValue::from_str(&format!("Bearer {token}")).unwrap();
            headers.insert(AUTHORIZATION, value);
        }
        let mut spec = RequestSpec::new(
            Method::POST,
            "http://127.0.0.1:1/",
            headers,
            Bytes::from(body.to_string()),
            Protocol::GraphQl,
            ResultShape::GraphQl,
        )
        .unwrap();
        spec.is_write = false;
        spec.cache_hint = CacheHint::Read { scope: None };
        spec
    }

    fn key(spec: &RequestSpec, options: &ResolvedOptions) -> CoalesceKey {
        CoalesceKey::for_call(spec, options).expect("a read with coalesce on has a key")
    }

    fn id(text: &str) -> Arc<str> {
        Arc::from(text)
    }

    type Outcome = Result<&'static str, TransportError>;

    fn lead<'a>(
        coalescer: &'a Coalescer<Outcome>,
        key: &CoalesceKey,
        name: &str,
    ) -> Lead<'a, Outcome> {
        match coalescer.join(key, &id(name)) {
            Role::Lead(lead) => lead,
            _ => panic!("{name} should lead"),
        }
    }

    fn follow(coalescer: &Coalescer<Outcome>, key: &CoalesceKey, name: &str) -> Follow<Outcome> {
        match coalescer.join(key, &id(name)) {
            Role::Follow(follow) => follow,
            _ => panic!("{name} should follow"),
        }
    }

    #[tokio::test]
    async fn followers_receive_the_leaders_outcome_and_the_group_then_closes() {
        let coalescer = Coalescer::<Outcome>::default();
        let key = key(&query(r#"{"query":"{ a }"}"#, None), &options(&[]));
        let leader = lead(&coalescer, &key, "leader");
        let followers: Vec<_> = (0..3)
            .map(|_| follow(&coalescer, &key, "follower"))
            .collect();
        assert!(followers.iter().all(|f| &*f.leader_request_id == "leader"));
        leader.settle(|| Ok("answer"));
        assert_eq!(coalescer.in_flight(), 0, "settling closes the group");
        for follow in followers {
            assert_eq!(follow.outcome().await, Some(Ok("answer")));
        }
        assert!(
            matches!(coalescer.join(&key, &id("later")), Role::Lead(_)),
            "a call after the outcome sends its own request"
        );
    }

    #[tokio::test]
    async fn an_error_fans_out_to_every_follower() {
        let coalescer = Coalescer::<Outcome>::default();
        let key = key(&query("{}", None), &options(&[]));
        let leader = lead(&coalescer, &key, "leader");
        let (a, b) = (follow(&coalescer, &key, "a"), follow(&coalescer, &key, "b"));
        leader.settle(|| Err(TransportError::timeout(30)));
        for follow in [a, b] {
            let error = follow.outcome().await.unwrap().unwrap_err();
            assert_eq!(error, TransportError::timeout(30));
        }
    }

    #[tokio::test]
    async fn a_leader_that_leaves_unsettled_sends_its_followers_to_join_again() {
        let coalescer = Coalescer::<Outcome>::default();
        let key = key(&query("{}", None), &options(&[]));
        let leader = lead(&coalescer, &key, "aborted");
        let a = follow(&coalescer, &key, "a");
        let b = follow(&coalescer, &key, "b");
        drop(leader);
        assert_eq!(a.outcome().await, None, "no outcome: join again");
        let next = lead(&coalescer, &key, "a");
        assert_eq!(b.outcome().await, None);
        let b = follow(&coalescer, &key, "b");
        assert_eq!(&*b.leader_request_id, "a");
        next.settle(|| Ok("second"));
        assert_eq!(b.outcome().await, Some(Ok("second")));
    }

    #[tokio::test]
    async fn a_follower_that_leaves_changes_nothing_for_the_others() {
        let coalescer = Coalescer::<Outcome>::default();
        let key = key(&query("{}", None), &options(&[]));
        let leader = lead(&coalescer, &key, "leader");
        let gone = follow(&coalescer, &key, "gone");
        let stays = follow(&coalescer, &key, "stays");
        drop(gone);
        assert_eq!(coalescer.in_flight(), 1, "the request goes on");
        leader.settle(|| Ok("answer"));
        assert_eq!(stays.outcome().await, Some(Ok("answer")));
    }

    #[test]
    fn a_leader_without_followers_builds_nothing_to_share() {
        let coalescer = Coalescer::<Outcome>::default();
        let key = key(&query("{}", None), &options(&[]));
        let leader = lead(&coalescer, &key, "alone");
        leader.settle(|| panic!("nobody to share with"));
        assert_eq!(coalescer.in_flight(), 0);
    }

    #[test]
    fn writes_guarded_reads_and_calls_without_the_option_have_no_key() {
        let read = query("{}", None);
        assert!(CoalesceKey::for_call(&read, &PartialOptions::default().resolve(false)).is_none());
        let mut write = read.clone();
        write.is_write = true;
        assert!(CoalesceKey::for_call(&write, &options(&[])).is_none());
        let mut unclassified = read.clone();
        unclassified.cache_hint = CacheHint::None;
        assert!(CoalesceKey::for_call(&unclassified, &options(&[])).is_none());
        let mut guarded = read;
        guarded.missing_auth = Some("query.viewer".into());
        assert!(CoalesceKey::for_call(&guarded, &options(&[])).is_none());
    }

    #[test]
    fn keys_differ_by_body_credential_and_url_but_not_by_hooks() {
        let plain = options(&[]);
        let base = key(&query(r#"{"variables":{"id":1}}"#, Some("t1")), &plain);
        let other_variables = key(&query(r#"{"variables":{"id":2}}"#, Some("t1")), &plain);
        let other_token = key(&query(r#"{"variables":{"id":1}}"#, Some("t2")), &plain);
        let anonymous = key(&query(r#"{"variables":{"id":1}}"#, None), &plain);
        let mut elsewhere = query(r#"{"variables":{"id":1}}"#, Some("t1"));
        elsewhere.url = "http://127.0.0.1:1/?x".into();
        let elsewhere = key(&elsewhere, &plain);
        for other in [&other_variables, &other_token, &anonymous, &elsewhere] {
            assert_ne!(other.digest, base.digest);
        }
        let with_hook = options(&[("onResponse", OptValue::Function)]);
        assert_eq!(
            key(&query(r#"{"variables":{"id":1}}"#, Some("t1")), &with_hook),
            base,
            "hooks never change an outcome"
        );
    }

    #[test]
    fn the_same_request_under_options_that_shape_its_outcome_runs_alone() {
        let coalescer = Coalescer::<Outcome>::default();
        let spec = query("{}", None);
        let _lead = lead(&coalescer, &key(&spec, &options(&[])), "leader");
        for (name, value) in [
            ("allowPartialData", OptValue::Bool(true)),
            ("maxResponseBytes", OptValue::Number(10.0)),
            ("timeout", OptValue::Number(5.0)),
            ("retry", OptValue::Bool(false)),
            ("bypassResponseCache", OptValue::Bool(true)),
            ("maxRedirects", OptValue::Number(0.0)),
        ] {
            let other = key(&spec, &options(&[(name, value)]));
            assert!(
                matches!(coalescer.join(&other, &id("other")), Role::Alone),
                "{name} shapes the outcome"
            );
        }
        assert_eq!(coalescer.in_flight(), 1, "a call alone opens no group");
    }
}
