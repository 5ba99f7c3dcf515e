//! Unit tests of the loop's helpers; its composition is tested in `composition_tests`.

use super::*;
use crate::cache::ResponseCache;
use crate::request::ResultShape;

#[test]
fn the_cache_plan_follows_the_pipeline_rules() {
    use crate::error::Protocol;
    use crate::options::{OptValue, PartialOptions};
    use http::HeaderMap;

    let cache = Arc::new(ResponseCache::new(Default::default()));
    let options = |extra: &[(&str, OptValue)]| {
        let mut partial = PartialOptions::default();
        partial
            .parse_key("responseCache", &OptValue::ResponseCache(cache.clone()))
            .unwrap();
        for (key, value) in extra {
            partial.parse_key(key, value).unwrap();
        }
        partial.resolve(false)
    };
    let get = RequestSpec::new(
        http::Method::GET,
        "http://h/anime/1",
        HeaderMap::new(),
        Default::default(),
        Protocol::Rest,
        ResultShape::Rest,
    )
    .unwrap();
    let plain = options(&[]);
    assert!(matches!(
        CacheUse::plan(&get, &plain),
        CacheUse::Read { .. }
    ));
    let bypass = options(&[("bypassResponseCache", OptValue::Bool(true))]);
    assert!(matches!(CacheUse::plan(&get, &bypass), CacheUse::Off));
    let mut guarded = get.clone();
    guarded.missing_auth = Some("mal.user.me".into());
    assert!(
        matches!(CacheUse::plan(&guarded, &plain), CacheUse::Off),
        "a failing auth guard skips the cache"
    );
    let patch = RequestSpec::new(
        http::Method::PATCH,
        "http://h/anime/1/my_list_status",
        HeaderMap::new(),
        Default::default(),
        Protocol::Rest,
        ResultShape::Rest,
    )
    .unwrap();
    assert!(
        matches!(
            CacheUse::plan(&patch, &bypass),
            CacheUse::InvalidateOnSuccess(_)
        ),
        "a bypassed write still invalidates"
    );
    assert!(matches!(
        CacheUse::plan(&get, &PartialOptions::default().resolve(false)),
        CacheUse::Off
    ));
}

#[test]
fn request_ids_are_uuid_v4() {
    let id = new_request_id();
    assert_eq!(id.len(), 36);
    for (at, c) in id.char_indices() {
        match at {
            8 | 13 | 18 | 23 => assert_eq!(c, '-', "{id}"),
            _ => assert!(matches!(c, '0'..='9' | 'a'..='f'), "{id}"),
        }
    }
    assert_eq!(&id[14..15], "4");
    assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"));
    assert_ne!(id, new_request_id());
}

/// Every call's task carries its whole future while it waits for its response (10,000 at once
/// in the bench's memory scenario), and it is moved on spawn and on each stage change. The
/// cold parts are boxed: a shared-state decision's Redis round trips (~2.9 KB), leading or
/// following a coalesced group, and one sink type serves calls with and without hooks; what an
/// attempt does after its answer is its own future, stored only while it runs. It was 4,720
/// bytes; 2,304 with the boxes; 2,072 with the attempt's conclusion apart (2,432 before); 2,120
/// with our own HTTP/1 connection, whose socket and read buffer sit in the lease where hyper's
/// request channel had a sender (while each connection lost hyper's ~26 KB); 2,192 with
/// redirects (D36: the dispatch's own references and the time a hop ran under its timeout; the
/// chain itself is boxed).
#[test]
fn a_call_waiting_for_its_response_stays_small() {
    struct Discard;
    impl EventSink for Discard {
        async fn emit(&self, _event: crate::events::Event) {}
    }
    let client = crate::ProviderClient::new(Default::default(), "test", |_| None).unwrap();
    let spec = RequestSpec::new(
        http::Method::POST,
        "https://anilist.test/",
        http::HeaderMap::new(),
        bytes::Bytes::new(),
        crate::error::Protocol::GraphQl,
        ResultShape::GraphQl,
    )
    .unwrap();
    let options = client.options(None, false);
    let cancel = CancellationToken::new();
    let sink: Option<Discard> = None;
    let call = client.execute(
        client.pool(&options),
        CallInputs {
            spec: &spec,
            options: &options,
            sink: &sink,
            cancel: &cancel,
        },
    );
    let size = std::mem::size_of_val(&call);
    assert!(size <= 2_192, "a call's future is {size} bytes");
}
