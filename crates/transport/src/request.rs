//! What one logical request sends, prepared once before the attempt loop.

use std::sync::Arc;

use bytes::Bytes;
use http::header::{ACCEPT, ACCEPT_ENCODING, CONTENT_LENGTH, CONTENT_TYPE, USER_AGENT};
use http::{HeaderMap, HeaderName, HeaderValue, Method, Uri};

use crate::cache::hint::CacheHint;
use crate::error::{Protocol, TransportError};

/// A request body as a few shared chunks, so a large constant part (an AniList document) is
/// sent by reference instead of being copied into every request. The chunks sit behind one
/// shared pointer (none for an empty body): a request spec's clone shares them instead of
/// copying the list, and every attempt writes them from there (vectored, no copy).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Body(Option<Arc<Vec<Bytes>>>);

impl Body {
    pub fn from_chunks(chunks: Vec<Bytes>) -> Self {
        let chunks: Vec<Bytes> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        Self((!chunks.is_empty()).then(|| Arc::new(chunks)))
    }

    pub fn chunks(&self) -> &[Bytes] {
        self.0.as_deref().map_or(&[], Vec::as_slice)
    }

    pub fn len(&self) -> usize {
        self.chunks().iter().map(Bytes::len).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The whole body in one piece (tests and diagnostics).
    pub fn to_vec(&self) -> Vec<u8> {
        self.chunks().concat()
    }
}

impl From<Bytes> for Body {
    fn from(bytes: Bytes) -> Self {
        Self::from_chunks(vec![bytes])
    }
}

/// Where a connection goes: the pool key below the socket bounds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Origin {
    pub https: bool,
    pub host: String,
    pub port: u16,
}

/// How a successful body becomes the call's result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultShape {
    /// A GraphQL envelope: classified, single root unwrapped (transport.md 1.9).
    GraphQl,
    /// A REST body, returned verbatim; an empty body resolves `undefined` (decisions D11).
    Rest,
    /// A REST call whose success carries no result (MAL's list deletes answer `[]` or nothing):
    /// any 2xx resolves `undefined`.
    Nothing,
}

/// A provider builds one per endpoint and clones it for every call, so what a call never
/// changes (its URL's parts and its headers) is shared, not copied: a clone and its drop cost
/// a few reference counts instead of five allocations and frees.
#[derive(Clone, Debug)]
pub struct RequestSpec {
    pub method: Method,
    pub origin: Arc<Origin>,
    /// `new URL(url).host`: host, plus the port when it is not the scheme's default. Keys
    /// per-host state and appears in hooks.
    pub host: Arc<str>,
    /// The URL as hooks report it.
    pub url: Arc<str>,
    pub headers: Arc<HeaderMap>,
    pub body: Body,
    pub protocol: Protocol,
    pub shape: ResultShape,
    /// A mutation or REST write: never resent on a connection that may have delivered it.
    pub is_write: bool,
    /// Set when the operation needs a token the caller did not give: the attempt fails with
    /// `AUTH_ERROR` before the breaker can mask it (transport.md 1.3 step 2).
    pub missing_auth: Option<String>,
    /// What the response cache may do with it, said by the provider (a `GET` is a read until
    /// its provider says otherwise; anything else is neither read nor invalidating).
    pub cache_hint: CacheHint,
    /// The request line's target and the `Host` header, made from the URL once, so an attempt
    /// only shares them (an exchange used to format and parse both every time); behind one
    /// pointer, as every call in flight carries its spec (an inline `Uri` and `HeaderValue`
    /// were 128 bytes and three reference counts per call).
    pub(crate) wire: Arc<WireTarget>,
}

/// What every attempt of a request puts on the wire for its URL.
#[derive(Clone, Debug)]
pub(crate) struct WireTarget {
    /// The origin form (`/path?query`) sent to the server itself.
    pub origin_form: Uri,
    pub host: HeaderValue,
}

impl RequestSpec {
    /// Parse the URL. An unparseable one is a validation error before any hook (transport.md 1.3).
    pub fn new(
        method: Method,
        url: &str,
        headers: HeaderMap,
        body: Bytes,
        protocol: Protocol,
        shape: ResultShape,
    ) -> Result<Self, TransportError> {
        let unparseable =
            || TransportError::validation(vec!["Unparseable request URL".to_string()]);
        let (uri, origin, host) = parse_target(url).ok_or_else(unparseable)?;
        let wire = Arc::new(WireTarget {
            origin_form: Uri::builder()
                .path_and_query(uri.path_and_query().map_or("/", |p| p.as_str()))
                .build()
                .map_err(|_| unparseable())?,
            host: HeaderValue::from_str(&host).map_err(|_| unparseable())?,
        });
        let is_write = method != Method::GET && method != Method::HEAD;
        let cache_hint = if method == Method::GET {
            CacheHint::Read { scope: None }
        } else {
            CacheHint::None
        };
        Ok(Self {
            method,
            origin: Arc::new(origin),
            host: Arc::from(host),
            url: Arc::from(url),
            headers: Arc::new(headers),
            body: Body::from(body),
            protocol,
            shape,
            is_write,
            missing_auth: None,
            cache_hint,
            wire,
        })
    }
}

/// `url` as hooks may report it: userinfo (`user:password@`) replaced by `***` (D30, D18).
/// Whether a request header may carry a credential: any non-empty header not plainly about the
/// body or the client software. Unknown headers count, so a new credential header fails closed
/// (the response cache's key and the fleet's scope both follow this one rule).
pub fn may_carry_credential(name: &HeaderName, value: &HeaderValue) -> bool {
    !value.is_empty()
        && ![
            CONTENT_TYPE,
            ACCEPT,
            ACCEPT_ENCODING,
            CONTENT_LENGTH,
            USER_AGENT,
        ]
        .contains(name)
}

pub fn redact_userinfo(url: &str) -> std::borrow::Cow<'_, str> {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.into();
    };
    let authority_end = url[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| scheme_end + i);
    match url[scheme_end..authority_end].rfind('@') {
        Some(at) => format!("{}***{}", &url[..scheme_end], &url[scheme_end + at..]).into(),
        None => url.into(),
    }
}

/// What is wrong with a URL the WHATWG URL Standard rejects, said without the URL (it may carry
/// a password: decisions D31).
pub const WHATWG_REJECTED: &str = "a string that new URL() rejects; a port must be 0 to 65535";

/// `url` read by the WHATWG URL Standard, the rules of Node's `new URL` (decisions D30), for every
/// URL an option gives (`baseUrl`, `proxy`): what it rejects (a port above 65535, `1e3`, …) is
/// refused, never read some other way (a port that is not one must not become the default).
pub fn whatwg_url(url: &str) -> Result<url::Url, &'static str> {
    url::Url::parse(url).map_err(|_| WHATWG_REJECTED)
}

/// `new URL(url).host` of an absolute http(s) URL: the key of per-host state.
pub fn host_of(url: &str) -> Option<String> {
    parse_target(url).map(|(_, _, host)| host)
}

fn parse_target(url: &str) -> Option<(Uri, Origin, String)> {
    let uri: Uri = url.parse().ok()?;
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return None,
    };
    let authority = uri.authority()?;
    let hostname = authority.host().to_ascii_lowercase();
    if hostname.is_empty() {
        return None;
    }
    let default_port = if https { 443 } else { 80 };
    // A port that is not a u16 (99999) makes the URL invalid, as `new URL` says; it must
    // never fall back to the default port (D30). `host:` (empty port) is the default.
    let host_and_port = authority.as_str().rsplit('@').next().unwrap_or_default();
    let port = match host_and_port
        .get(authority.host().len()..)
        .unwrap_or_default()
    {
        "" | ":" => default_port,
        written => written.strip_prefix(':')?.parse::<u16>().ok()?,
    };
    let host = if port == default_port {
        hostname.clone()
    } else {
        format!("{hostname}:{port}")
    };
    Some((
        uri,
        Origin {
            https,
            host: hostname,
            port,
        },
        host,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(url: &str) -> Result<RequestSpec, TransportError> {
        RequestSpec::new(
            Method::POST,
            url,
            HeaderMap::new(),
            Bytes::new(),
            Protocol::GraphQl,
            ResultShape::GraphQl,
        )
    }

    /// Every call in flight holds its spec (10,000 at once in the bench's memory scenario):
    /// what calls share stays behind pointers. It was 376 bytes with the URL's parts inline.
    #[test]
    fn a_request_spec_stays_small() {
        let size = std::mem::size_of::<RequestSpec>();
        assert!(size <= 160, "a request spec is {size} bytes");
    }

    #[test]
    fn host_omits_the_default_port_like_the_url_api() {
        assert_eq!(
            &*spec("https://graphql.anilist.co").unwrap().host,
            "graphql.anilist.co"
        );
        assert_eq!(
            &*spec("https://graphql.anilist.co:443/").unwrap().host,
            "graphql.anilist.co"
        );
        assert_eq!(
            &*spec("http://127.0.0.1:8080/x").unwrap().host,
            "127.0.0.1:8080"
        );
        assert_eq!(spec("http://Example.COM/").unwrap().origin.port, 80);
    }

    #[test]
    fn userinfo_is_redacted_and_nothing_else_changes() {
        assert_eq!(
            redact_userinfo("http://user:secret@h:1/p?q=a@b"),
            "http://***@h:1/p?q=a@b"
        );
        assert_eq!(redact_userinfo("https://a@b@h/"), "https://***@h/");
        assert_eq!(redact_userinfo("https://h/p@x"), "https://h/p@x");
        assert_eq!(redact_userinfo("https://h"), "https://h");
    }

    #[test]
    fn a_port_outside_u16_is_invalid_and_never_the_default() {
        assert!(spec("http://127.0.0.1:99999/").is_err());
        assert!(spec("http://127.0.0.1:65536/").is_err());
        assert!(spec("http://u:p@127.0.0.1:70000/").is_err());
        assert_eq!(spec("http://127.0.0.1:65535/").unwrap().origin.port, 65535);
        assert_eq!(spec("http://u:p@h:8080/").unwrap().origin.port, 8080);
        assert_eq!(spec("http://[::1]:8080/").unwrap().origin.port, 8080);
        assert_eq!(spec("http://h:/").unwrap().origin.port, 80);
    }

    #[test]
    fn unparseable_urls_are_validation_errors() {
        for url in ["not a url", "ftp://x/", "http://", "/relative"] {
            let err = spec(url).expect_err(url);
            assert_eq!(
                err.details,
                vec!["Unparseable request URL".to_string()],
                "{url}"
            );
        }
    }

    #[test]
    fn posts_are_writes_unless_the_caller_says_otherwise() {
        assert!(spec("http://a/").unwrap().is_write);
        let get = RequestSpec::new(
            Method::GET,
            "http://a/",
            HeaderMap::new(),
            Bytes::new(),
            Protocol::Rest,
            ResultShape::Rest,
        )
        .unwrap();
        assert!(!get.is_write);
    }
}
