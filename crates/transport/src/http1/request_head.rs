//! The bytes of a request line and its headers.

use http::header::{ACCEPT_ENCODING, CONNECTION, CONTENT_LENGTH, HOST, TRANSFER_ENCODING};
use http::Method;
use std::io::Write;

use crate::decode;
use crate::proxy::ProxyServer;
use crate::request::RequestSpec;

/// What a request's head takes beyond its headers' names and values: the request line, the
/// separators, and the headers added here. Reserved up front so the head is built in one
/// allocation.
const HEAD_OVERHEAD: usize = 160;

/// The head of `spec`'s request. With `proxy`, plain HTTP goes through that proxy: the target
/// is the absolute URL and the proxy's credentials ride along. The framing is always ours
/// (a `Content-Length`), so a caller's `Content-Length`, `Transfer-Encoding` or `Host` is not
/// sent; every other header is, in its order.
pub fn encode(spec: &RequestSpec, proxy: Option<&ProxyServer>) -> Vec<u8> {
    let path = spec
        .wire
        .origin_form
        .path_and_query()
        .map_or("/", |p| p.as_str());
    let header_bytes: usize = spec
        .headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    let mut head = Vec::with_capacity(HEAD_OVERHEAD + path.len() + spec.host.len() + header_bytes);
    head.extend_from_slice(spec.method.as_str().as_bytes());
    head.push(b' ');
    if proxy.is_some() {
        head.extend_from_slice(b"http://");
        head.extend_from_slice(spec.host.as_bytes());
    }
    head.extend_from_slice(path.as_bytes());
    head.extend_from_slice(b" HTTP/1.1\r\n");
    for (name, value) in spec.headers.iter() {
        if name == CONTENT_LENGTH || name == TRANSFER_ENCODING || name == HOST {
            continue;
        }
        line(&mut head, name.as_str(), value.as_bytes());
    }
    line(&mut head, "host", spec.wire.host.as_bytes());
    if !spec.headers.contains_key(ACCEPT_ENCODING) {
        line(
            &mut head,
            "accept-encoding",
            decode::ACCEPT_ENCODING.as_bytes(),
        );
    }
    if let Some(authorization) = proxy.and_then(ProxyServer::authorization) {
        line(&mut head, "proxy-authorization", authorization.as_bytes());
    }
    let length = spec.body.len();
    if length > 0 || matches!(spec.method, Method::POST | Method::PUT | Method::PATCH) {
        // Writing into a Vec cannot fail.
        let _ = write!(head, "content-length: {length}\r\n");
    }
    head.extend_from_slice(b"\r\n");
    head
}

/// Whether the caller asked for the connection to close after this request.
pub fn asks_to_close(spec: &RequestSpec) -> bool {
    spec.headers
        .get_all(CONNECTION)
        .iter()
        .any(|value| has_token(value.as_bytes(), b"close"))
}

/// Whether a comma-separated header value lists `token` (ASCII case-insensitive).
pub(crate) fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|item| item.trim_ascii().eq_ignore_ascii_case(token))
}

fn line(head: &mut Vec<u8>, name: &str, value: &[u8]) {
    head.extend_from_slice(name.as_bytes());
    head.extend_from_slice(b": ");
    head.extend_from_slice(value);
    head.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Protocol;
    use crate::request::ResultShape;
    use bytes::Bytes;
    use http::{HeaderMap, HeaderValue};

    fn spec(
        method: Method,
        url: &str,
        headers: &[(&'static str, &'static str)],
        body: &'static [u8],
    ) -> RequestSpec {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(*name, HeaderValue::from_static(value));
        }
        RequestSpec::new(
            method,
            url,
            map,
            Bytes::from_static(body),
            Protocol::Rest,
            ResultShape::Rest,
        )
        .unwrap()
    }

    fn text(head: Vec<u8>) -> String {
        String::from_utf8(head).unwrap()
    }

    #[test]
    fn a_post_carries_its_headers_in_order_then_host_encoding_and_length() {
        let spec = spec(
            Method::POST,
            "https://graphql.anilist.co/",
            &[
                ("content-type", "application/json"),
                ("accept", "application/json"),
            ],
            b"{}",
        );
        assert_eq!(
            text(encode(&spec, None)),
            "POST / HTTP/1.1\r\ncontent-type: application/json\r\naccept: application/json\r\nhost: graphql.anilist.co\r\naccept-encoding: gzip, br\r\ncontent-length: 2\r\n\r\n"
        );
    }

    #[test]
    fn a_get_has_no_length_and_keeps_its_query_and_port() {
        let spec = spec(
            Method::GET,
            "http://127.0.0.1:8080/v2/anime?q=a&limit=2",
            &[],
            b"",
        );
        assert_eq!(
            text(encode(&spec, None)),
            "GET /v2/anime?q=a&limit=2 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\naccept-encoding: gzip, br\r\n\r\n"
        );
        let empty_post = super::tests::spec(Method::POST, "http://h/", &[], b"");
        assert!(text(encode(&empty_post, None)).ends_with("content-length: 0\r\n\r\n"));
    }

    #[test]
    fn the_callers_framing_and_host_are_replaced_and_its_encoding_kept() {
        let spec = spec(
            Method::POST,
            "http://h/",
            &[
                ("content-length", "99"),
                ("transfer-encoding", "chunked"),
                ("host", "elsewhere"),
                ("accept-encoding", "identity"),
            ],
            b"abc",
        );
        assert_eq!(
            text(encode(&spec, None)),
            "POST / HTTP/1.1\r\naccept-encoding: identity\r\nhost: h\r\ncontent-length: 3\r\n\r\n"
        );
    }

    #[test]
    fn through_a_proxy_the_target_is_absolute_with_the_proxys_credentials() {
        let proxy = ProxyServer::parse("http://user:pass@proxy:3128").unwrap();
        let spec = spec(Method::GET, "http://api.example:8080/a?b=1", &[], b"");
        let head = text(encode(&spec, Some(&proxy)));
        assert!(
            head.starts_with("GET http://api.example:8080/a?b=1 HTTP/1.1\r\n"),
            "{head}"
        );
        assert!(
            head.contains("\r\nproxy-authorization: Basic dXNlcjpwYXNz\r\n"),
            "{head}"
        );
    }

    #[test]
    fn connection_close_is_found_among_the_tokens() {
        assert!(asks_to_close(&spec(
            Method::GET,
            "http://h/",
            &[("connection", "TE, Close")],
            b""
        )));
        assert!(!asks_to_close(&spec(
            Method::GET,
            "http://h/",
            &[("connection", "keep-alive")],
            b""
        )));
        assert!(!has_token(b"closed", b"close"));
    }
}
