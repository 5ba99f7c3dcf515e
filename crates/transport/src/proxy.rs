//! Which HTTP proxy a connection goes through: the environment's `HTTP_PROXY`, `HTTPS_PROXY`,
//! `ALL_PROXY` and `NO_PROXY` (read once per slot, when it is built), or the slot's `proxy`
//! option. The rules, and how they differ from axios's `proxy-from-env`, are in
//! docs/proxies-and-tls.md ("Proxies"); the connection itself is made by [`crate::connector`].
//!
//! A proxy URL's userinfo becomes the `Proxy-Authorization: Basic` credentials and is never
//! reported: everything that names a proxy uses [`ProxyServer::display`], userinfo as `***`
//! ([`redact_userinfo`], the rule for every reported URL).

use std::net::IpAddr;
use std::sync::Arc;

use http::Uri;

use crate::request::{redact_userinfo, whatwg_url, Origin};

/// An HTTP proxy (`http://[user:pass@]host[:port]`).
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct ProxyServer {
    pub host: String,
    pub port: u16,
    /// The `Proxy-Authorization` header value, from the URL's userinfo.
    authorization: Option<String>,
    display: String,
}

impl std::fmt::Debug for ProxyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.display)
    }
}

impl ProxyServer {
    /// Parse a proxy URL, which must be `http://` (decisions D40: a value without a scheme is
    /// refused, not guessed). The error says what is wrong and how to write it, without
    /// repeating the URL, which may carry a password.
    pub fn parse(url: &str) -> Result<Self, String> {
        let url = url.trim();
        if !url.contains("://") {
            return Err(
                "it has no scheme; write it in full as http://host:port (for example \"http://proxy.example:3128\")"
                    .into(),
            );
        }
        let uri: Uri = url.parse().map_err(|_| {
            "it is not a valid URL; write it as http://host:port or http://user:password@host:port, with any @ or : in the credentials percent-encoded".to_string()
        })?;
        if uri.scheme_str().map(|s| s.to_ascii_lowercase()).as_deref() != Some("http") {
            return Err("only http:// proxies are supported".into());
        }
        const NO_HOST: &str = "it has no host; write it as http://host:port";
        let authority = uri.authority().ok_or(NO_HOST)?;
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        if host.is_empty() {
            return Err(NO_HOST.into());
        }
        // The port as `new URL` reads it: one it rejects (99999, -1, 1e3) refuses the URL
        // instead of sending the credentials to port 80 (D30).
        let port = whatwg_url(url)
            .map_err(|rejected| format!("it is {rejected}"))?
            .port()
            .unwrap_or(80);
        let userinfo = authority
            .as_str()
            .rsplit_once('@')
            .map(|(userinfo, _)| userinfo);
        let authorization = userinfo.map(|userinfo| {
            let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
            let credentials = format!("{}:{}", percent_decode(user), percent_decode(password));
            format!("Basic {}", base64(credentials.as_bytes()))
        });
        let shown_host = if host.contains(':') {
            format!("[{host}]")
        } else {
            host.clone()
        };
        let userinfo_part = userinfo
            .map(|userinfo| format!("{userinfo}@"))
            .unwrap_or_default();
        let display =
            redact_userinfo(&format!("http://{userinfo_part}{shown_host}:{port}")).into_owned();
        Ok(Self {
            host,
            port,
            authorization,
            display,
        })
    }

    /// The `Proxy-Authorization` value, when the URL carried credentials.
    pub fn authorization(&self) -> Option<&str> {
        self.authorization.as_deref()
    }

    /// The proxy as errors report it: `http://host:port`, credentials as `***`.
    pub fn display(&self) -> &str {
        &self.display
    }
}

/// The environment variables proxies are read from, each also in lower case.
pub const ENVIRONMENT_VARIABLES: [&str; 4] = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"];

/// The proxy choice of one slot: none, one proxy for everything, or per-scheme proxies with
/// exceptions (the environment).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ProxyRules {
    http: Option<Arc<ProxyServer>>,
    https: Option<Arc<ProxyServer>>,
    no_proxy: NoProxy,
}

impl ProxyRules {
    /// Every connection goes through `server`; `NO_PROXY` does not apply (as in axios, an
    /// explicit proxy replaces the environment).
    pub fn fixed(server: Arc<ProxyServer>) -> Self {
        Self {
            http: Some(server.clone()),
            https: Some(server),
            no_proxy: NoProxy::default(),
        }
    }

    /// `lookup(name)` gives an environment variable (the binding reads them in JavaScript,
    /// D38). Lower case wins over upper case, a scheme's own variable over `ALL_PROXY`; empty
    /// values count as unset. A proxy of another scheme (`https://`, `socks5://`) is ignored,
    /// as docs/proxies-and-tls.md says; a value without a scheme or that is not a URL fails,
    /// naming the variable but not its value (D40).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        let [http, https, all, no_proxy] = ENVIRONMENT_VARIABLES;
        let get = |name: &str| {
            [name.to_ascii_lowercase(), name.to_string()]
                .into_iter()
                .find_map(|key| {
                    lookup(&key)
                        .filter(|v| !v.trim().is_empty())
                        .map(|v| (key, v))
                })
        };
        let proxy = |name: &str| -> Result<Option<Arc<ProxyServer>>, String> {
            let Some((key, url)) = get(name).or_else(|| get(all)) else {
                return Ok(None);
            };
            let scheme = url.trim().split_once("://").map(|(scheme, _)| scheme);
            if scheme.is_some_and(|scheme| !scheme.eq_ignore_ascii_case("http")) {
                return Ok(None);
            }
            ProxyServer::parse(&url)
                .map(|server| Some(Arc::new(server)))
                .map_err(|reason| {
                    format!("The environment variable {key} is not a usable proxy URL: {reason}.")
                })
        };
        Ok(Self {
            http: proxy(http)?,
            https: proxy(https)?,
            no_proxy: NoProxy::parse(&get(no_proxy).map(|(_, v)| v).unwrap_or_default()),
        })
    }

    /// No proxy can apply: the slot shares the default pool.
    pub fn is_direct(&self) -> bool {
        self.http.is_none() && self.https.is_none()
    }

    /// The proxy a connection to `origin` goes through, if any.
    pub fn for_origin(&self, origin: &Origin) -> Option<&Arc<ProxyServer>> {
        let proxy = if origin.https {
            self.https.as_ref()
        } else {
            self.http.as_ref()
        }?;
        (!self.no_proxy.matches(&origin.host, origin.port)).then_some(proxy)
    }
}

/// `NO_PROXY`: comma or space separated entries, each `*` (everything), an IP address, a CIDR
/// range, or a host name that matches itself and its subdomains (a leading `.` or `*.`: only
/// the subdomains), each optionally with `:port`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
struct NoProxy {
    everything: bool,
    entries: Vec<Exception>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Exception {
    pattern: Pattern,
    port: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Pattern {
    Ip(IpAddr),
    Range(IpAddr, u8),
    /// The domain and its subdomains.
    Domain(String),
    /// Subdomains only.
    Subdomains(String),
}

impl NoProxy {
    fn parse(text: &str) -> Self {
        let mut rules = Self::default();
        for entry in text
            .split([',', ' ', '\t', '\n'])
            .map(str::trim)
            .filter(|e| !e.is_empty())
        {
            if entry == "*" {
                rules.everything = true;
            } else if let Some(exception) = Exception::parse(&entry.to_ascii_lowercase()) {
                rules.entries.push(exception);
            }
        }
        rules
    }

    fn matches(&self, host: &str, port: u16) -> bool {
        if self.everything {
            return true;
        }
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.');
        let ip: Option<IpAddr> = host.parse().ok();
        self.entries
            .iter()
            .any(|e| e.port.is_none_or(|p| p == port) && e.pattern.matches(host, ip))
    }
}

impl Exception {
    fn parse(entry: &str) -> Option<Self> {
        if let Some((address, bits)) = entry.split_once('/') {
            let address: IpAddr = address
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse()
                .ok()?;
            let bits: u8 = bits.parse().ok()?;
            let max = if address.is_ipv4() { 32 } else { 128 };
            return (bits <= max).then_some(Self {
                pattern: Pattern::Range(address, bits),
                port: None,
            });
        }
        if let Ok(ip) = entry
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            return Some(Self {
                pattern: Pattern::Ip(ip),
                port: None,
            });
        }
        // `host:port` or `[v6]:port`; a bare IPv6 address was handled above.
        let (host, port) = match entry.rsplit_once(':') {
            Some((host, port)) => (host, Some(port.parse::<u16>().ok()?)),
            None => (entry, None),
        };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .trim_end_matches('.');
        let pattern = if let Ok(ip) = host.parse::<IpAddr>() {
            Pattern::Ip(ip)
        } else if let Some(domain) = host.strip_prefix("*.").or_else(|| host.strip_prefix('.')) {
            Pattern::Subdomains(domain.to_string())
        } else {
            Pattern::Domain(host.to_string())
        };
        if matches!(&pattern, Pattern::Domain(d) | Pattern::Subdomains(d) if d.is_empty()) {
            return None;
        }
        Some(Self { pattern, port })
    }
}

impl Pattern {
    fn matches(&self, host: &str, ip: Option<IpAddr>) -> bool {
        let is_subdomain = |domain: &str| {
            host.len() > domain.len()
                && host.ends_with(domain)
                && host[..host.len() - domain.len()].ends_with('.')
        };
        match self {
            Pattern::Ip(address) => ip == Some(*address),
            Pattern::Range(network, bits) => ip.is_some_and(|ip| in_range(ip, *network, *bits)),
            Pattern::Domain(domain) => host == domain || is_subdomain(domain),
            Pattern::Subdomains(domain) => is_subdomain(domain),
        }
    }
}

fn in_range(ip: IpAddr, network: IpAddr, bits: u8) -> bool {
    let prefix = |value: u128, width: u8| {
        if bits == 0 {
            0
        } else {
            value >> (width - bits)
        }
    };
    match (ip, network) {
        (IpAddr::V4(ip), IpAddr::V4(net)) => {
            prefix(u32::from(ip).into(), 32) == prefix(u32::from(net).into(), 32)
        }
        (IpAddr::V6(ip), IpAddr::V6(net)) => {
            prefix(u128::from(ip), 128) == prefix(u128::from(net), 128)
        }
        _ => false,
    }
}

/// `%XX` escapes decoded (userinfo in a URL is percent-encoded); invalid escapes stay as they are.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |at: usize| bytes.get(at).and_then(|b| (*b as char).to_digit(16));
        let escaped = match (bytes[i], hex(i + 1), hex(i + 2)) {
            (b'%', Some(high), Some(low)) => Some((high * 16 + low) as u8),
            _ => None,
        };
        match escaped {
            Some(byte) => {
                out.push(byte);
                i += 3;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            out.push(if i <= chunk.len() {
                ALPHABET[(n >> shift) as usize & 63] as char
            } else {
                '='
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;
