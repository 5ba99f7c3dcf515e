//! Opening the connections the pool lends: TCP to the origin or its proxy, a `CONNECT` tunnel
//! for an https origin behind a proxy, TLS (trust from [`crate::trust`]), then the HTTP/1.1
//! handshake. Plain HTTP through a proxy needs no tunnel: the exchange sends its requests in
//! absolute form on the proxy connection.

use std::sync::Arc;

use hyper_util::rt::TokioIo;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::TransportError;
use crate::pool::Sender;
use crate::proxy::ProxyServer;
use crate::request::Origin;

/// The longest `CONNECT` answer head accepted from a proxy.
const MAX_TUNNEL_RESPONSE: usize = 16 * 1024;

/// A new connection to `origin`, through `proxy` when one applies.
pub async fn connect(
    origin: &Origin,
    proxy: Option<&Arc<ProxyServer>>,
) -> Result<Sender, TransportError> {
    let Some(proxy) = proxy else {
        let tcp = dial(&origin.host, origin.port).await.map_err(|e| {
            TransportError::network(format!(
                "connect to {}:{} failed: {e}",
                origin.host, origin.port
            ))
        })?;
        return secure_and_handshake(origin, tcp).await;
    };
    let mut tcp = dial(&proxy.host, proxy.port).await.map_err(|e| {
        TransportError::network(format!("connect to proxy {} failed: {e}", proxy.display()))
    })?;
    if origin.https {
        tunnel(&mut tcp, origin, proxy).await?;
    }
    secure_and_handshake(origin, tcp).await
}

async fn dial(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let tcp =
        TcpStream::connect((host.trim_start_matches('[').trim_end_matches(']'), port)).await?;
    // Requests are small and latency-bound: do not let Nagle hold them back.
    let _ = tcp.set_nodelay(true);
    Ok(tcp)
}

async fn secure_and_handshake(origin: &Origin, tcp: TcpStream) -> Result<Sender, TransportError> {
    if !origin.https {
        return handshake(TokioIo::new(tcp)).await;
    }
    let bare_host = origin
        .host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    let name = rustls::pki_types::ServerName::try_from(bare_host).map_err(|e| {
        TransportError::network(format!("invalid TLS server name {}: {e}", origin.host))
    })?;
    let tls = tokio_rustls::TlsConnector::from(crate::trust::client_config())
        .connect(name, tcp)
        .await
        .map_err(|e| TransportError::network(describe_tls_failure(&origin.host, &e)))?;
    handshake(TokioIo::new(tls)).await
}

/// A handshake failure, with what to do when the server's issuer is not trusted.
fn describe_tls_failure(host: &str, error: &std::io::Error) -> String {
    let untrusted = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())
        .is_some_and(|e| {
            matches!(
                e,
                rustls::Error::InvalidCertificate(rustls::CertificateError::UnknownIssuer)
            )
        });
    let hint = if untrusted {
        " (the certificate's issuer is not trusted: add its CA certificate to the system trust store or to the PEM file named by NODE_EXTRA_CA_CERTS)"
    } else {
        ""
    };
    format!("TLS handshake with {host} failed: {error}{hint}")
}

/// Ask the proxy for a tunnel to `origin` and check that it opened one.
async fn tunnel(
    tcp: &mut TcpStream,
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
    let mut response = Vec::with_capacity(256);
    let mut chunk = [0u8; 1024];
    let end = loop {
        let read = tcp
            .read(&mut chunk)
            .await
            .map_err(|e| failed(format!("connection failed during CONNECT: {e}")))?;
        if read == 0 {
            return Err(failed(
                "closed the connection before answering CONNECT".into(),
            ));
        }
        response.extend_from_slice(&chunk[..read]);
        if let Some(end) = response.windows(4).position(|w| w == b"\r\n\r\n") {
            break end + 4;
        }
        if response.len() > MAX_TUNNEL_RESPONSE {
            return Err(failed("sent an oversized answer to CONNECT".into()));
        }
    };
    let status_line = String::from_utf8_lossy(&response[..end])
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    let status = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse::<u16>().ok());
    match status {
        Some(200..=299) if end == response.len() => Ok(()),
        // The origin speaks only after the TLS client hello: bytes already here are not its.
        Some(200..=299) => Err(failed("sent data after accepting CONNECT".into())),
        Some(_) => {
            let answer: String = status_line
                .split_once(' ')
                .map(|(_, answer)| answer)
                .unwrap_or_default()
                .chars()
                .take(120)
                .collect();
            Err(failed(format!("refused CONNECT: {answer}")))
        }
        None => Err(failed(
            "answered CONNECT with something that is not HTTP".into(),
        )),
    }
}

async fn handshake<T>(io: TokioIo<T>) -> Result<Sender, TransportError>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| TransportError::network(format!("HTTP handshake failed: {e}")))?;
    // The connection task ends (and the socket closes) once every sender is dropped.
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender)
}
