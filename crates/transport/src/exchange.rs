//! One HTTP exchange on a pooled connection: request out, whole response in.
//!
//! The one subtle case is the stale keep-alive connection: the server closed an idle
//! connection at the moment we reused it. That failure says nothing about the upstream's
//! health, so it is resent once on a fresh connection, uncharged and without counting as a
//! retry, but only when the request cannot have been processed: hyper reports it unsent, or it
//! is a read (query or GET) and the connection died before a single response byte (the server
//! closed it as idle just as the request arrived, which its kernel answers with a reset).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::header::{HOST, PROXY_AUTHORIZATION};
use http::{HeaderMap, HeaderValue, Request, Uri};
use http_body_util::BodyExt;

use crate::body::SendBody;
use crate::decode::{Decoded, Encoding, ACCEPT_ENCODING};
use crate::error::{describe, TransportError};
use crate::pool::{Pool, Slot};
use crate::proxy::ProxyServer;
use crate::request::RequestSpec;
use crate::timers;

pub struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// One HTTP round trip as the attempt loop sees it: the seam between the loop and the network,
/// so the loop's composition is tested with a scripted exchange, without sockets. The loop is
/// generic over it (static dispatch): production pays no box or vtable per attempt.
pub trait Exchange: Sync {
    /// Send `spec` and read the whole response, refusing a body larger than `max_body_bytes`;
    /// `timeout` bounds the round trip (the implementation decides where it starts, D32).
    fn send(
        &self,
        spec: &RequestSpec,
        max_body_bytes: u64,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<RawResponse, TransportError>> + Send;
}

/// The production exchange: a pooled connection, with the stale keep-alive resend below the seam.
impl Exchange for Arc<Pool> {
    fn send(
        &self,
        spec: &RequestSpec,
        max_body_bytes: u64,
        timeout: Option<Duration>,
    ) -> impl Future<Output = Result<RawResponse, TransportError>> + Send {
        send(self, spec, max_body_bytes, timeout)
    }
}

/// Send `spec` and read the whole response, refusing a body larger than `max_body_bytes`.
/// `timeout` starts once the pool has room for the request (decisions D32): waiting for a
/// socket of a saturated pool is not timed (the caller's cancellation still ends it); the
/// connect, the request and the whole response are.
pub async fn send(
    pool: &Arc<Pool>,
    spec: &RequestSpec,
    max_body_bytes: u64,
    timeout: Option<Duration>,
) -> Result<RawResponse, TransportError> {
    let slot = pool.slot(&spec.origin).await?;
    let exchange = exchange(pool, slot, spec, max_body_bytes);
    match timeout {
        Some(limit) => timers::timeout(limit, exchange)
            .await
            .unwrap_or_else(|_| Err(TransportError::timeout(limit.as_millis() as u64))),
        None => exchange.await,
    }
}

async fn exchange(
    pool: &Arc<Pool>,
    slot: Slot,
    spec: &RequestSpec,
    max_body_bytes: u64,
) -> Result<RawResponse, TransportError> {
    let mut fresh = false;
    let mut slot = Some(slot);
    loop {
        let mut lease = match slot.take() {
            Some(slot) => slot.connect(&spec.origin, fresh).await?,
            None => pool.lease(&spec.origin, fresh).await?,
        };
        let request = build_request(spec, lease.forward_proxy.as_deref())?;
        match lease.sender.try_send_request(request).await {
            Ok(response) => {
                let (mut parts, body) = response.into_parts();
                // A body refused half-way leaves the connection unusable: the lease drops with it.
                // Decoding sits in front of the limit, so the limit counts decoded bytes.
                let body = match Encoding::take_from(&mut parts.headers)? {
                    None => read_body(body, max_body_bytes).await?,
                    Some(encoding) => {
                        read_body(Decoded::new(body, encoding), max_body_bytes).await?
                    }
                };
                lease.release();
                return Ok(RawResponse {
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    body,
                });
            }
            Err(mut failure) => {
                let unsent = failure.take_message().is_some();
                let error = failure.into_error();
                let stale =
                    lease.reused && (unsent || (!spec.is_write && closed_before_response(&error)));
                if stale && !fresh {
                    fresh = true;
                    continue;
                }
                let mut reason = describe(&error);
                if let Some(proxy) = &lease.forward_proxy {
                    reason.push_str(&format!(" (through proxy {})", proxy.display()));
                }
                return Err(TransportError::network(reason));
            }
        }
    }
}

/// Read a whole body, but never more than `limit` bytes: a declared length (Content-Length)
/// above it fails before anything is read, and a body without one (chunked, close-delimited)
/// fails at the first frame that would pass it, so memory stays bounded by the limit (D28).
/// Any body layer (decompression) can sit in front of it: the limit applies to what it yields.
pub async fn read_body<B>(body: B, limit: u64) -> Result<Bytes, TransportError>
where
    B: http_body::Body<Data = Bytes>,
    B::Error: std::error::Error,
{
    if body.size_hint().lower() > limit {
        return Err(TransportError::response_too_large(limit));
    }
    let mut body = std::pin::pin!(body);
    let mut collected = bytes::BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| TransportError::network(describe(&e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        if (collected.len() + data.len()) as u64 > limit {
            return Err(TransportError::response_too_large(limit));
        }
        collected.extend_from_slice(&data);
    }
    Ok(collected.freeze())
}

/// The headers a request gets beyond its spec's: host, accept-encoding, proxy-authorization,
/// and the content-length hyper writes.
const HEADERS_ADDED_PER_REQUEST: usize = 4;

/// `proxy`: plain HTTP through that proxy, so the target is the absolute URL and the proxy's
/// credentials ride along.
fn build_request(
    spec: &RequestSpec,
    proxy: Option<&ProxyServer>,
) -> Result<Request<SendBody>, TransportError> {
    let mut request = Request::new(SendBody::new(&spec.body));
    *request.method_mut() = spec.method.clone();
    *request.uri_mut() = match proxy {
        Some(_) => {
            let path = spec
                .wire
                .origin_form
                .path_and_query()
                .map_or("/", |p| p.as_str());
            Uri::try_from(format!("http://{}{path}", spec.host))
                .map_err(|e| TransportError::unknown(format!("could not build the request: {e}")))?
        }
        None => spec.wire.origin_form.clone(),
    };
    let headers = request.headers_mut();
    // Not a clone: a clone has no spare room, so what is added below regrew (and copied) the
    // header list of every request, twice.
    headers.reserve(spec.headers.len() + HEADERS_ADDED_PER_REQUEST);
    for (name, value) in spec.headers.iter() {
        headers.append(name.clone(), value.clone());
    }
    headers.insert(HOST, spec.wire.host.clone());
    if !headers.contains_key(http::header::ACCEPT_ENCODING) {
        headers.insert(
            http::header::ACCEPT_ENCODING,
            HeaderValue::from_static(ACCEPT_ENCODING),
        );
    }
    if let Some(authorization) = proxy.and_then(ProxyServer::authorization) {
        let value = HeaderValue::from_str(authorization)
            .map_err(|_| TransportError::unknown("unusable proxy credentials".to_string()))?;
        headers.insert(PROXY_AUTHORIZATION, value);
    }
    Ok(request)
}

/// The connection ended (EOF or reset) before a single response byte. On a reused
/// connection that is the keep-alive race: the server closed the idle connection as our
/// request arrived, and its kernel answered the unread bytes with a reset (Node's server does
/// exactly this). A server that had read the request could also reset, so only reads, which
/// a duplicate cannot harm, are resent on this evidence.
fn closed_before_response(error: &hyper::Error) -> bool {
    if error.is_incomplete_message() || error.is_canceled() {
        return true;
    }
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            return matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::BrokenPipe
                    | std::io::ErrorKind::ConnectionAborted
            );
        }
        source = cause.source();
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Frame;
    use http_body_util::{Full, StreamBody};

    fn chunked(
        chunks: &[&'static [u8]],
    ) -> impl http_body::Body<Data = Bytes, Error = std::io::Error> {
        let frames: Vec<Result<Frame<Bytes>, std::io::Error>> = chunks
            .iter()
            .map(|c| Ok(Frame::data(Bytes::from_static(c))))
            .collect();
        StreamBody::new(futures_util::stream::iter(frames))
    }

    #[tokio::test]
    async fn a_body_within_the_limit_is_read_whole() {
        assert_eq!(
            read_body(Full::new(Bytes::from_static(b"12345")), 5)
                .await
                .unwrap(),
            Bytes::from_static(b"12345")
        );
        assert_eq!(
            read_body(chunked(&[b"12", b"345"]), 5).await.unwrap(),
            Bytes::from_static(b"12345")
        );
    }

    #[tokio::test]
    async fn a_declared_length_above_the_limit_fails_before_reading() {
        let error = read_body(Full::new(Bytes::from_static(b"123456")), 5)
            .await
            .unwrap_err();
        assert_eq!(error.code, crate::ErrorCode::Network);
        assert_eq!(error.response_limit, Some(5));
        assert!(error
            .reason
            .as_deref()
            .unwrap()
            .contains("maxResponseBytes (5 bytes)"));
    }

    /// A call's task is as large as its largest state: opening a connection is boxed (in the
    /// pool), so calls waiting on their responses (10,000 at once in the bench) do not each carry
    /// room for a TCP connect and a TLS handshake. It was 4,664 bytes, 1,152 with the box.
    #[test]
    fn an_exchange_waiting_for_its_response_stays_small() {
        use crate::error::Protocol;
        use crate::request::ResultShape;
        let client = crate::ProviderClient::new(Default::default(), "test");
        let spec = RequestSpec::new(
            http::Method::POST,
            "https://anilist.test/",
            HeaderMap::new(),
            Bytes::new(),
            Protocol::GraphQl,
            ResultShape::GraphQl,
        )
        .unwrap();
        let options = client.options(None, false);
        let pool = client.pool(&options);
        let exchange = send(&pool, &spec, 1024, None);
        let size = std::mem::size_of_val(&exchange);
        assert!(size <= 1536, "the exchange future is {size} bytes");
    }

    #[test]
    fn a_request_has_room_for_the_content_length_hyper_adds() {
        use crate::error::Protocol;
        use crate::request::ResultShape;
        use http::header::{ACCEPT, CONTENT_LENGTH, CONTENT_TYPE};
        let mut spec_headers = HeaderMap::new();
        spec_headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        spec_headers.insert(ACCEPT, HeaderValue::from_static("application/json"));
        let spec = RequestSpec::new(
            http::Method::POST,
            "https://anilist.test/",
            spec_headers,
            Bytes::from_static(b"{}"),
            Protocol::GraphQl,
            ResultShape::GraphQl,
        )
        .unwrap();
        let mut request = build_request(&spec, None).unwrap();
        let names: Vec<_> = request.headers().keys().map(|n| n.as_str()).collect();
        assert_eq!(names, ["content-type", "accept", "host", "accept-encoding"]);
        // A header's address moves when the list is reallocated.
        let host = |r: &Request<SendBody>| r.headers().get(HOST).unwrap() as *const HeaderValue;
        let before = host(&request);
        request
            .headers_mut()
            .insert(CONTENT_LENGTH, HeaderValue::from(2u64));
        assert_eq!(host(&request), before, "adding content-length reallocated");
    }

    #[tokio::test]
    async fn an_undeclared_length_fails_at_the_frame_that_passes_the_limit() {
        let error = read_body(chunked(&[b"123", b"456", b"789"]), 5)
            .await
            .unwrap_err();
        assert_eq!(error.response_limit, Some(5));
    }
}
