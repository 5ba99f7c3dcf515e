//! What TLS trusts, as Node does plus the system store: the bundled Mozilla roots (the ones
//! Node ships), the operating system's trust store, and the PEM file named by
//! `NODE_EXTRA_CA_CERTS`. Read once per process, when the first TLS connection is made (Node
//! reads `NODE_EXTRA_CA_CERTS` once at startup too). An unreadable file or certificate is
//! skipped: Node has already warned about the same file when it started. The HTTPS connections
//! and the shared state's `rediss://` connection use the same trust and the same handshake.

use std::path::Path;
use std::sync::{Arc, OnceLock};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use rustls::RootCertStore;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::client::TlsStream;

/// The TLS client configuration every HTTPS connection shares (it offers ALPN `http/1.1`).
pub fn client_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let roots = root_store(
                std::env::var_os("NODE_EXTRA_CA_CERTS")
                    .as_deref()
                    .map(Path::new),
            );
            let mut config = rustls::ClientConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_safe_default_protocol_versions()
            .map(|builder| builder.with_root_certificates(roots).with_no_client_auth())
            .unwrap_or_else(|_| {
                // The ring provider always supports the default versions; this branch only
                // exists so that no panic can ever cross into JavaScript.
                rustls::ClientConfig::builder()
                    .with_root_certificates(RootCertStore::empty())
                    .with_no_client_auth()
            });
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Arc::new(config)
        })
        .clone()
}

/// The same trust for a protocol that negotiates no ALPN (Redis).
pub fn client_config_without_alpn() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut config = (*client_config()).clone();
            config.alpn_protocols.clear();
            Arc::new(config)
        })
        .clone()
}

/// TLS over `stream` to `host` (a name or an IP literal, brackets allowed), its certificate
/// verified for that name. A failure is described for a message, with what to do when the
/// certificate's issuer is not trusted.
pub async fn handshake<S>(
    config: Arc<rustls::ClientConfig>,
    host: &str,
    stream: S,
) -> Result<TlsStream<S>, String>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let bare_host = host.trim_start_matches('[').trim_end_matches(']');
    let name = ServerName::try_from(bare_host.to_string())
        .map_err(|e| format!("invalid TLS server name {host}: {e}"))?;
    tokio_rustls::TlsConnector::from(config)
        .connect(name, stream)
        .await
        .map_err(|e| describe_handshake_failure(host, &e))
}

fn describe_handshake_failure(host: &str, error: &std::io::Error) -> String {
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

fn root_store(extra: Option<&Path>) -> RootCertStore {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
    if let Some(path) = extra.filter(|p| !p.as_os_str().is_empty()) {
        roots.add_parsable_certificates(pem_certificates(path));
    }
    roots
}

/// Every certificate of a PEM file; other PEM sections and unparseable ones are skipped.
fn pem_certificates(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .map(|certs| certs.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_extra_file_adds_nothing_and_the_bundled_roots_stay() {
        let bundled = webpki_roots::TLS_SERVER_ROOTS.len();
        let without = root_store(None).len();
        assert!(without >= bundled);
        assert_eq!(
            root_store(Some(Path::new("/nonexistent/ca.pem"))).len(),
            without
        );
        assert!(pem_certificates(Path::new("/nonexistent/ca.pem")).is_empty());
    }
}
