//! Opening the connections the pool lends: TCP to the origin or its proxy, a `CONNECT` tunnel
//! for an https origin behind a proxy, then TLS (trust from [`crate::trust`]). Plain HTTP
//! through a proxy needs no tunnel: the exchange sends its requests in absolute form on the
//! proxy connection.

use std::sync::Arc;

use bytes::BytesMut;
use http::StatusCode;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::TransportError;
use crate::http1::response_head::{self, ResponseHead};
use crate::http1::{Connection, Stream};
use crate::proxy::ProxyServer;
use crate::request::Origin;
use crate::trust::Trust;

/// The most a proxy may send before the head that answers `CONNECT` is complete.
const MAX_TUNNEL_RESPONSE: usize = 16 * 1024;

/// A new connection to `origin`, through `proxy` when one applies.
pub async fn connect(
    origin: &Origin,
    proxy: Option<&Arc<ProxyServer>>,
    trust: &Trust,
) -> Result<Connection, TransportError> {
    let Some(proxy) = proxy else {
        let tcp = dial(&origin.host, origin.port).await.map_err(|e| {
            TransportError::network(format!(
                "connect to {}:{} failed: {e}",
                origin.host, origin.port
            ))
        })?;
        return secure(origin, tcp, trust).await;
    };
    let mut tcp = dial(&proxy.host, proxy.port).await.map_err(|e| {
        TransportError::network(format!("connect to proxy {} failed: {e}", proxy.display()))
    })?;
    if origin.https {
        tunnel(&mut tcp, origin, proxy).await?;
    }
    secure(origin, tcp, trust).await
}

pub(crate) async fn dial(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let tcp =
        TcpStream::connect((host.trim_start_matches('[').trim_end_matches(']'), port)).await?;
    // Requests are small and latency-bound: do not let Nagle hold them back.
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

async fn secure(
    origin: &Origin,
    tcp: TcpStream,
    trust: &Trust,
) -> Result<Connection, TransportError> {
    if !origin.https {
        return Ok(Connection::new(Stream::Plain(tcp)));
    }
    let tls = crate::trust::handshake(trust.client_config(), &origin.host, tcp)
        .await
        .map_err(TransportError::network)?;
    Ok(Connection::new(Stream::Tls(Box::new(tls))))
}

/// Ask the proxy for a tunnel to `origin` and check that it opened one.
async fn tunnel<S: AsyncRead + AsyncWrite + Unpin>(
    tcp: &mut S,
    origin: &Origin,
    proxy: &ProxyServer,
) -> Result<(), TransportError> {
    let target = format!("{}:{}", origin.host, origin.port);
    let failed = |what: String| {
        TransportError::network(format!(
            "proxy {} {what} (tunnel to {target})",
            proxy.display()
        ))
    };
    let mut head = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n");
    if let Some(authorization) = proxy.authorization() {
        head.push_str("Proxy-Authorization: ");
        head.push_str(authorization);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    tcp.write_all(head.as_bytes())
        .await
        .map_err(|e| failed(format!("could not be written to: {e}")))?;
    let mut answer = BytesMut::with_capacity(1024);
    let mut received = 0;
    let head = loop {
        let read = tcp
            .read_buf(&mut answer)
            .await
            .map_err(|e| failed(format!("connection failed during CONNECT: {e}")))?;
        if read == 0 {
            return Err(failed(
                "closed the connection before answering CONNECT".into(),
            ));
        }
        received += read;
        let head = final_head(&mut answer).map_err(|e| {
            failed(format!(
                "answered CONNECT with something that is not HTTP ({e})"
            ))
        })?;
        match head {
            Some(head) => break head,
            None if received > MAX_TUNNEL_RESPONSE => {
                return Err(failed("sent an oversized answer to CONNECT".into()))
            }
            None => {}
        }
    };
    match head.status {
        // The origin speaks only after the TLS client hello: bytes already here are not its.
        200..=299 if !answer.is_empty() => Err(failed("sent data after accepting CONNECT".into())),
        200..=299 => Ok(()),
        status => {
            let reason = StatusCode::from_u16(status)
                .ok()
                .and_then(|known| known.canonical_reason())
                .map(|reason| format!(" {reason}"))
                .unwrap_or_default();
            Err(failed(format!("refused CONNECT: {status}{reason}")))
        }
    }
}

/// The first final head at the start of `answer`, with the interim (1xx) ones before it taken
/// off; None while it has not all arrived. Parsed as every response head is
/// ([`response_head::parse`]).
fn final_head(answer: &mut BytesMut) -> Result<Option<ResponseHead>, String> {
    loop {
        match response_head::parse(answer, false)? {
            Some(head) if head.is_interim() => continue,
            head => return Ok(head),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origin() -> Origin {
        Origin {
            https: true,
            host: "api.example".into(),
            port: 443,
        }
    }

    /// Run `tunnel` against a scripted proxy that answers `answer` (then closes when `close`),
    /// returning the outcome and what the client wrote.
    async fn against(
        proxy_url: &str,
        answer: &'static [u8],
        close: bool,
    ) -> (Result<(), TransportError>, String) {
        let (mut client, mut proxy) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let mut request = vec![0u8; 4096];
            let read = proxy.read(&mut request).await.unwrap();
            proxy.write_all(answer).await.unwrap();
            if !close {
                // Keep the proxy's end open until the client is done.
                let _ = proxy.read(&mut [0u8; 1]).await;
            }
            String::from_utf8_lossy(&request[..read]).into_owned()
        });
        let proxy = ProxyServer::parse(proxy_url).unwrap();
        // Bounded, so a tunnel that waits for the head's end fails here instead of hanging.
        let outcome = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            tunnel(&mut client, &origin(), &proxy),
        )
        .await
        .expect("the tunnel should refuse an endless head, not wait for its end");
        drop(client);
        (outcome, server.await.unwrap())
    }

    fn reason(outcome: Result<(), TransportError>) -> String {
        outcome
            .expect_err("the tunnel should fail")
            .reason
            .clone()
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn a_2xx_answer_opens_the_tunnel_after_any_interim_answers() {
        let answers: [&[u8]; 2] = [
            b"HTTP/1.1 200 Connection Established\r\n\r\n",
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 Connection Established\r\n\r\n",
        ];
        for answer in answers {
            let (outcome, request) = against("http://u:p@proxy:3128", answer, false).await;
            assert!(outcome.is_ok(), "{outcome:?}");
            assert!(
                request
                    .starts_with("CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n"),
                "{request}"
            );
            assert!(
                request.contains("Proxy-Authorization: Basic dTpw\r\n"),
                "{request}"
            );
        }
    }

    #[tokio::test]
    async fn refusals_and_broken_answers_name_the_redacted_proxy() {
        let cases: [(&[u8], bool, &str); 6] = [
            (
                b"HTTP/1.1 403 Forbidden\r\n\r\n",
                true,
                "refused CONNECT: 403 Forbidden",
            ),
            (
                b"HTTP/1.1 407 Whatever\r\nContent-Length: 5\r\n\r\nhello",
                true,
                "refused CONNECT: 407 Proxy Authentication Required",
            ),
            (b"", true, "closed the connection before answering CONNECT"),
            (
                b"HTTP/1.1 200 OK\r\n",
                true,
                "closed the connection before answering CONNECT",
            ),
            (
                b"HTTP/1.1 200 OK\r\n\r\nhello",
                false,
                "sent data after accepting CONNECT",
            ),
            (
                b"SSH-2.0-OpenSSH\r\n\r\n",
                true,
                "answered CONNECT with something that is not HTTP",
            ),
        ];
        for (answer, close, expected) in cases {
            let text = reason(against("http://u:secret@proxy:3128", answer, close).await.0);
            assert!(
                text.starts_with("proxy http://***@proxy:3128 ") && text.contains(expected),
                "{text}"
            );
            assert!(
                text.ends_with("(tunnel to api.example:443)") && !text.contains("secret"),
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn an_endless_answer_head_is_refused() {
        for endless_interim in [false, true] {
            let text = reason(endless_answer(endless_interim).await);
            assert!(
                text.contains("sent an oversized answer to CONNECT"),
                "{text}"
            );
        }
    }

    async fn endless_answer(endless_interim: bool) -> Result<(), TransportError> {
        let (mut client, mut proxy) = tokio::io::duplex(64 * 1024);
        let server = tokio::spawn(async move {
            let _ = proxy.read(&mut [0u8; 4096]).await;
            // A head that never ends: one header line that goes on and on, or interim answers
            // one after another.
            let (start, line): (&[u8], &[u8]) = if endless_interim {
                (b"", b"HTTP/1.1 100 Continue\r\n\r\n")
            } else {
                (b"HTTP/1.1 200 OK\r\nX-Padding: ", &[b'x'; 1024])
            };
            proxy.write_all(start).await.unwrap();
            while proxy.write_all(line).await.is_ok() {}
        });
        let proxy = ProxyServer::parse("http://proxy:3128").unwrap();
        // Bounded, so a tunnel that waits for the head's end fails here instead of hanging.
        let outcome = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            tunnel(&mut client, &origin(), &proxy),
        )
        .await
        .expect("the tunnel should refuse an endless head, not wait for its end");
        drop(client);
        server.await.unwrap();
        outcome
    }
}
