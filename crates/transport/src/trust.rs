//! What TLS trusts, as Node does plus the system store: the bundled Mozilla roots (the ones
//! Node ships), the operating system's trust store (or the PEM file and folders named by
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` instead of it), and the PEM file named by
//! `NODE_EXTRA_CA_CERTS`; and whether certificates are verified at all
//! (`NODE_TLS_REJECT_UNAUTHORIZED=0` turns that off, decisions D37). The binding hands the
//! variables over when a slot is built (D38); each distinct setting's configuration is built
//! once per process. An unreadable file or certificate is skipped: Node has already warned
//! about the same file when it started. The HTTPS connections and the shared state's
//! `rediss://` connections use the same trust and the same handshake.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::client::TlsStream;

/// The environment variables trust is read from.
pub const ENVIRONMENT_VARIABLES: [&str; 4] =
    [EXTRA_CA_CERTS, CERT_FILE, CERT_DIR, REJECT_UNAUTHORIZED];
const EXTRA_CA_CERTS: &str = "NODE_EXTRA_CA_CERTS";
const CERT_FILE: &str = "SSL_CERT_FILE";
const CERT_DIR: &str = "SSL_CERT_DIR";
const REJECT_UNAUTHORIZED: &str = "NODE_TLS_REJECT_UNAUTHORIZED";

/// One slot's trust settings; the default is the system store with verification on.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Trust {
    extra_ca_certs: Option<PathBuf>,
    cert_file: Option<PathBuf>,
    /// `SSL_CERT_DIR`: folders separated as in `PATH`.
    cert_dirs: Vec<PathBuf>,
    skip_verification: bool,
}

impl Trust {
    /// `lookup(name)` gives an environment variable; empty values count as unset.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let path = |name: &str| lookup(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        Self {
            extra_ca_certs: path(EXTRA_CA_CERTS),
            cert_file: path(CERT_FILE),
            cert_dirs: lookup(CERT_DIR)
                .map(|dirs| std::env::split_paths(&dirs).collect())
                .unwrap_or_default(),
            // Only "0" turns verification off, as in Node.
            skip_verification: lookup(REJECT_UNAUTHORIZED).as_deref() == Some("0"),
        }
    }

    /// Whether server certificates go unchecked (D37).
    pub fn skips_verification(&self) -> bool {
        self.skip_verification
    }

    /// The TLS client configuration of connections made with these settings.
    pub fn client_config(&self) -> Arc<rustls::ClientConfig> {
        static CONFIGS: OnceLock<Mutex<HashMap<Trust, Arc<rustls::ClientConfig>>>> =
            OnceLock::new();
        let configs = CONFIGS.get_or_init(Default::default);
        if let Some(config) = configs.lock().ok().and_then(|c| c.get(self).cloned()) {
            return config;
        }
        let config = Arc::new(self.build());
        if let Ok(mut configs) = configs.lock() {
            configs.insert(self.clone(), config.clone());
        }
        config
    }

    /// The same trust for a protocol that negotiates no ALPN (Redis).
    pub fn client_config_without_alpn(&self) -> Arc<rustls::ClientConfig> {
        let mut config = (*self.client_config()).clone();
        config.alpn_protocols.clear();
        Arc::new(config)
    }

    fn build(&self) -> rustls::ClientConfig {
        let provider = Arc::new(provider());
        let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            // The ring provider always supports the default versions; the fallback only exists
            // so that no panic can ever cross into JavaScript.
            .unwrap_or_else(|_| rustls::ClientConfig::builder());
        let mut config = if self.skip_verification {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
                .with_no_client_auth()
        } else {
            builder
                .with_root_certificates(self.root_store())
                .with_no_client_auth()
        };
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        config
    }

    fn root_store(&self) -> RootCertStore {
        let mut roots = RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        // With neither variable set, rustls-native-certs looks them up in the C environment
        // itself: unset in `process.env` means unset there too, except in a program that
        // deleted one under Bun (whose `process.env` does not reach the C environment).
        if self.cert_file.is_none() && self.cert_dirs.is_empty() {
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        } else {
            let file = rustls_native_certs::load_certs_from_paths(self.cert_file.as_deref(), None);
            roots.add_parsable_certificates(file.certs);
            for dir in self.cert_dirs.iter().filter(|d| !d.as_os_str().is_empty()) {
                let certs = rustls_native_certs::load_certs_from_paths(None, Some(dir)).certs;
                roots.add_parsable_certificates(certs);
            }
        }
        if let Some(path) = &self.extra_ca_certs {
            roots.add_parsable_certificates(pem_certificates(path));
        }
        roots
    }
}

/// ring's suites and groups, TLS 1.3's AES-128-GCM-SHA256 offered first (as Firefox and Chrome
/// do; it is the suite every TLS 1.3 peer must implement, RFC 8446 9.1): its key schedule
/// hashes with SHA-256, which x86-64 and ARMv8 compute in hardware, where the default first
/// suite's SHA-384 is computed in software, about 45 µs of every handshake's client CPU on
/// the benchmark's machine (a server that follows the client's order picks it; one with its own
/// order is unaffected). The same suites are offered, only in another order.
fn provider() -> CryptoProvider {
    let mut provider = rustls::crypto::ring::default_provider();
    provider
        .cipher_suites
        .sort_by_key(|suite| suite.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    provider
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

/// Every certificate of a PEM file; other PEM sections and unparseable ones are skipped.
fn pem_certificates(path: &Path) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_file_iter(path)
        .map(|certs| certs.filter_map(Result::ok).collect())
        .unwrap_or_default()
}

/// Accepts any certificate (`NODE_TLS_REJECT_UNAUTHORIZED=0`), but still checks that the
/// server signed the handshake with the key of the certificate it sent.
#[derive(Debug)]
struct AnyCertificate(Arc<CryptoProvider>);

impl ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trust(pairs: &[(&str, &str)]) -> Trust {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Trust::from_lookup(|name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn a_missing_extra_file_adds_nothing_and_the_bundled_roots_stay() {
        let bundled = webpki_roots::TLS_SERVER_ROOTS.len();
        let without = Trust::default().root_store().len();
        assert!(without >= bundled);
        let with_missing = trust(&[(EXTRA_CA_CERTS, "/nonexistent/ca.pem")]);
        assert_eq!(with_missing.root_store().len(), without);
        assert!(pem_certificates(Path::new("/nonexistent/ca.pem")).is_empty());
    }

    #[test]
    fn only_zero_turns_verification_off() {
        assert!(trust(&[(REJECT_UNAUTHORIZED, "0")]).skips_verification());
        for value in ["1", "false", "", " 0", "no"] {
            assert!(!trust(&[(REJECT_UNAUTHORIZED, value)]).skips_verification());
        }
        assert!(!Trust::default().skips_verification());
    }

    #[test]
    fn aes_128_gcm_sha256_is_offered_first_and_no_suite_is_dropped() {
        let offered: Vec<_> = Trust::default()
            .client_config()
            .crypto_provider()
            .cipher_suites
            .iter()
            .map(|suite| suite.suite())
            .collect();
        assert_eq!(offered[0], rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
        let mut offered = offered;
        let mut defaults: Vec<_> = rustls::crypto::ring::default_provider()
            .cipher_suites
            .iter()
            .map(|suite| suite.suite())
            .collect();
        offered.sort_by_key(|suite| u16::from(*suite));
        defaults.sort_by_key(|suite| u16::from(*suite));
        assert_eq!(offered, defaults);
    }

    #[test]
    fn each_setting_builds_its_configuration_once() {
        let off = trust(&[(REJECT_UNAUTHORIZED, "0")]);
        assert!(Arc::ptr_eq(&off.client_config(), &off.client_config()));
        assert!(!Arc::ptr_eq(
            &off.client_config(),
            &Trust::default().client_config()
        ));
    }
}
