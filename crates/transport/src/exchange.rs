//! One HTTP exchange on a pooled connection: request out, whole response in.
//!
//! The one subtle case is the stale keep-alive connection: the server closed an idle
//! connection at the moment we reused it. That failure says nothing about the upstream's
//! health, so it is resent once on a fresh connection, uncharged and without counting as a
//! retry, but only when the request cannot have been processed: not one byte of it was
//! accepted, or it is a read (query or GET) and the connection died before a single response
//! byte (the server closed it as idle just as the request arrived, which its kernel answers
//! with a reset). A connection found closed before the request is written is not even tried.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Method};
use http_body_util::BodyExt;

use crate::decode::{decode_all, Encoding};
use crate::error::{describe, TransportError};
use crate::http1::request_head;
use crate::http1::response_head::ResponseHead;
use crate::pool::{Pool, SocketClaim};
use crate::request::RequestSpec;
use crate::timers;

pub struct RawResponse {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// How long the round trip ran under its timeout (not its wait for a free socket): what a
    /// redirect's next hop no longer has of the attempt's timeout.
    pub timed: Duration,
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
    let claim = pool.claim_socket(&spec.origin).await?;
    let started = tokio::time::Instant::now();
    let exchange = exchange(pool, claim, spec, max_body_bytes);
    let mut response = match timeout {
        Some(limit) => timers::timeout(limit, exchange)
            .await
            .unwrap_or_else(|_| Err(TransportError::timeout(limit.as_millis() as u64))),
        None => exchange.await,
    }?;
    response.timed = started.elapsed();
    Ok(response)
}

async fn exchange(
    pool: &Arc<Pool>,
    claim: SocketClaim,
    spec: &RequestSpec,
    max_body_bytes: u64,
) -> Result<RawResponse, TransportError> {
    let mut fresh = false;
    let mut claim = Some(claim);
    let keep_open = !request_head::asks_to_close(spec);
    let to_head_request = spec.method == Method::HEAD;
    loop {
        let mut lease = match claim.take() {
            Some(claim) => claim.connect(&spec.origin, fresh).await?,
            None => pool.lease(&spec.origin, fresh).await?,
        };
        let head = request_head::encode(spec, lease.forward_proxy.as_deref());
        let sent = lease
            .connection
            .send(&head, spec.body.chunks(), to_head_request)
            .await;
        match sent {
            Ok(ResponseHead {
                status,
                mut headers,
                framing,
                keep_alive,
            }) => {
                let body = lease.connection.body(framing, keep_open && keep_alive);
                // A body refused half-way leaves the connection unusable: the lease drops with it.
                // Decoding sits in front of the limit, so the limit counts decoded bytes.
                let codings = Encoding::take_from(&mut headers)?;
                let body = if codings.is_empty() {
                    read_body(body, max_body_bytes).await?
                } else {
                    read_body(decode_all(body, &codings), max_body_bytes).await?
                };
                lease.release();
                return Ok(RawResponse {
                    status,
                    headers,
                    body,
                    timed: Duration::ZERO,
                });
            }
            Err(failure) => {
                let stale = lease.reused
                    && (failure.sent_nothing()
                        || (!spec.is_write && failure.died_before_response()));
                if stale && !fresh {
                    fresh = true;
                    continue;
                }
                let mut reason = describe(&failure);
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
    // A body that arrives in one frame (most do) is returned as it is, without a copy.
    let mut first: Option<Bytes> = None;
    let mut collected = bytes::BytesMut::new();
    let mut length = 0u64;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| TransportError::network(describe(&e)))?;
        let Ok(data) = frame.into_data() else {
            continue;
        };
        length += data.len() as u64;
        if length > limit {
            return Err(TransportError::response_too_large(limit));
        }
        match first.take() {
            None if collected.is_empty() => first = Some(data),
            None => collected.extend_from_slice(&data),
            Some(earlier) => {
                collected.extend_from_slice(&earlier);
                collected.extend_from_slice(&data);
            }
        }
    }
    Ok(first.unwrap_or_else(|| collected.freeze()))
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
        let client = crate::ProviderClient::new(Default::default(), "test", |_| None).unwrap();
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

    #[tokio::test]
    async fn an_undeclared_length_fails_at_the_frame_that_passes_the_limit() {
        let error = read_body(chunked(&[b"123", b"456", b"789"]), 5)
            .await
            .unwrap_err();
        assert_eq!(error.response_limit, Some(5));
    }
}
