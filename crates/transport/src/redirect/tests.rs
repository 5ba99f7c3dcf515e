use bytes::Bytes;
use http::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, COOKIE, PROXY_AUTHORIZATION};
use http::{HeaderName, HeaderValue};

use super::*;
use crate::error::Protocol;
use crate::request::ResultShape;

const MAL_CLIENT_ID: HeaderName = HeaderName::from_static("x-mal-client-id");

/// A request to `url` carrying every credential header D36 names, a body and its type.
fn request(method: Method, url: &str) -> RequestSpec {
    let mut headers = HeaderMap::new();
    for (name, value) in [
        (AUTHORIZATION, "Bearer t"),
        (COOKIE, "session=s"),
        (PROXY_AUTHORIZATION, "Basic cA=="),
        (MAL_CLIENT_ID, "client"),
        (ACCEPT, "application/json"),
        (CONTENT_TYPE, "application/json"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    RequestSpec::new(
        method,
        url,
        headers,
        Bytes::from_static(b"{\"query\":\"{}\"}"),
        Protocol::Rest,
        ResultShape::Rest,
    )
    .unwrap()
}

fn located(location: &'static str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(LOCATION, HeaderValue::from_static(location));
    headers
}

fn hop(current: &RequestSpec, status: u16, location: &'static str) -> RequestSpec {
    next_request(current, &current.origin, status, &located(location)).unwrap()
}

fn header_names(spec: &RequestSpec) -> Vec<&str> {
    let mut names: Vec<&str> = spec.headers.keys().map(HeaderName::as_str).collect();
    names.sort_unstable();
    names
}

#[test]
fn only_the_five_redirect_statuses_redirect() {
    for status in [301, 302, 303, 307, 308] {
        assert!(is_redirect(status), "{status}");
    }
    for status in [200, 300, 304, 305, 306, 309, 400] {
        assert!(!is_redirect(status), "{status}");
    }
}

#[test]
fn a_307_or_308_sends_the_same_method_body_and_headers_again() {
    for status in [307, 308] {
        for method in [Method::POST, Method::PUT, Method::GET] {
            let first = request(method.clone(), "https://api.test/a");
            let next = hop(&first, status, "/b");
            assert_eq!(next.method, method);
            assert_eq!(next.body, first.body);
            assert_eq!(next.is_write, first.is_write);
            assert_eq!(next.headers, first.headers);
            assert_eq!(&*next.url, "https://api.test/b");
        }
    }
}

#[test]
fn a_301_or_302_after_a_post_continues_as_a_get_without_its_body() {
    for status in [301, 302] {
        let next = hop(&request(Method::POST, "https://api.test/a"), status, "/b");
        assert_eq!(next.method, Method::GET);
        assert!(next.body.is_empty());
        assert!(!next.is_write);
        assert_eq!(
            header_names(&next),
            [
                "accept",
                "authorization",
                "cookie",
                "proxy-authorization",
                "x-mal-client-id"
            ],
            "the body's type goes with the body; the same origin keeps its credentials"
        );
        for method in [Method::PUT, Method::DELETE, Method::GET] {
            let first = request(method.clone(), "https://api.test/a");
            let next = hop(&first, status, "/b");
            assert_eq!(next.method, method, "{status} after {method}");
            assert_eq!(next.body, first.body);
        }
    }
}

#[test]
fn a_303_continues_as_a_get_unless_it_answered_a_get_or_head() {
    for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
        let next = hop(&request(method.clone(), "https://api.test/a"), 303, "/b");
        assert_eq!(next.method, Method::GET, "303 after {method}");
        assert!(next.body.is_empty());
    }
    for method in [Method::GET, Method::HEAD] {
        let next = hop(&request(method.clone(), "https://api.test/a"), 303, "/b");
        assert_eq!(next.method, method);
    }
}

#[test]
fn locations_resolve_against_the_current_url() {
    let first = request(Method::GET, "http://api.test:8080/v2/anime/1?fields=id");
    for (location, expected) in [
        ("/top", "http://api.test:8080/top"),
        ("2", "http://api.test:8080/v2/anime/2"),
        ("../manga/1?x=y", "http://api.test:8080/v2/manga/1?x=y"),
        ("?page=2", "http://api.test:8080/v2/anime/1?page=2"),
        ("//cdn.test/p", "http://cdn.test/p"),
        ("HTTPS://Other.Test/p#frag", "https://other.test/p"),
    ] {
        assert_eq!(&*hop(&first, 302, location).url, expected, "{location}");
    }
    let second = hop(&first, 302, "/v3/x/");
    assert_eq!(&*hop(&second, 302, "y").url, "http://api.test:8080/v3/x/y");
}

#[test]
fn credentials_are_dropped_once_a_hop_leaves_the_requests_origin() {
    let first = request(Method::GET, "https://api.test/a");
    for location in [
        "https://api.test:8443/a",
        "https://other.test/a",
        "http://api.test/a",
        "http://api.test:443/a",
    ] {
        let next = hop(&first, 307, location);
        assert_eq!(
            header_names(&next),
            ["accept", "content-type"],
            "{location} is another origin"
        );
    }
    let kept = hop(&first, 307, "https://API.test:443/b");
    assert_eq!(
        kept.headers, first.headers,
        "the same origin, written otherwise"
    );

    let away = next_request(&first, &first.origin, 302, &located("https://other.test/")).unwrap();
    let back = next_request(&away, &first.origin, 302, &located("https://api.test/")).unwrap();
    assert_eq!(
        header_names(&back),
        ["accept", "content-type"],
        "dropped for the rest of the chain"
    );
}

#[test]
fn a_missing_unparseable_or_non_http_location_fails_the_attempt_naming_why() {
    let first = request(Method::GET, "https://api.test/a");
    let reason = |headers: HeaderMap| {
        let error = next_request(&first, &first.origin, 302, &headers).unwrap_err();
        assert_eq!(error.code, ErrorCode::Network);
        error.reason.clone().unwrap()
    };
    assert_eq!(
        reason(HeaderMap::new()),
        "a 302 redirect without a Location header"
    );
    assert_eq!(
        reason(located("ftp://files.test/secret?token=abc")),
        "a 302 redirect to a ftp: URL; only http: and https: Locations are followed"
    );
    assert_eq!(
        reason(located("http://[::1")),
        "a 302 redirect whose Location is not a valid URL"
    );
}

#[test]
fn a_location_byte_above_ascii_is_read_as_latin1_as_node_reads_it() {
    let first = request(Method::GET, "https://api.test/a");
    let mut latin1 = HeaderMap::new();
    latin1.insert(LOCATION, HeaderValue::from_bytes(b"/caf\xe9").unwrap());
    let next = next_request(&first, &first.origin, 302, &latin1).unwrap();
    assert_eq!(&*next.url, "https://api.test/caf%C3%A9");
}
