//! The `sharedState` slot option: which Redis holds the fleet's per-host state, under which key
//! prefix, and how long the transport waits for it. Parsed here; nothing else reads the URL.

use std::fmt;

pub const DEFAULT_KEY_PREFIX: &str = "anilink";
/// Long enough for a Redis in another zone or region: a decision is two round trips (read,
/// then compare-and-set), so this holds up to about 400 ms each. A Redis that stops answering
/// costs the decision that finds out this long, once per outage.
pub const DEFAULT_TIMEOUT_MS: u64 = 1_000;
pub const DEFAULT_LEASE_MS: u64 = 60_000;
const DEFAULT_PORT: u16 = 6379;

/// Where the shared state lives and how the transport treats it.
#[derive(Clone, PartialEq, Eq)]
pub struct SharedStateConfig {
    pub redis: RedisTarget,
    pub key_prefix: String,
    /// A Redis operation slower than this falls back to local state for that decision.
    pub timeout_ms: u64,
    /// How long an in-flight reservation (or a breaker probe) holds at most.
    pub lease_ms: u64,
}

/// A parsed `redis[s]://[user[:password]@]host[:port][/db]` URL (`rediss://`: TLS). `Debug` and
/// [`RedisTarget::address`] never show the credentials (decisions D31); only
/// [`RedisTarget::url`] carries them, for the connection itself.
#[derive(Clone, PartialEq, Eq)]
pub struct RedisTarget {
    url: String,
    host: String,
    port: u16,
    tls: bool,
}

impl RedisTarget {
    /// The rule of a valid URL, and why a given one is not; the reason never repeats the URL.
    pub fn parse(url: &str) -> Result<RedisTarget, &'static str> {
        let (rest, tls) = match (url.strip_prefix("redis://"), url.strip_prefix("rediss://")) {
            (Some(rest), _) => (rest, false),
            (_, Some(rest)) => (rest, true),
            _ => return Err("it does not start with redis:// or rediss://"),
        };
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
        // An IPv6 literal keeps its brackets; the port is what follows the last colon after it.
        let host_end = host_port.rfind(']').map_or(0, |i| i + 1);
        let (host, port) = match host_port[host_end..].rfind(':') {
            Some(colon) => {
                let port = host_port[host_end + colon + 1..]
                    .parse::<u16>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or("its port is not a number from 1 to 65535")?;
                (&host_port[..host_end + colon], port)
            }
            None => (host_port, DEFAULT_PORT),
        };
        if host.is_empty() || host.contains(['/', '?', '#', ' ']) {
            return Err("it has no host");
        }
        if !path.is_empty() && path.parse::<u16>().is_err() {
            return Err("its path must be a database number, such as /0");
        }
        let target = RedisTarget {
            url: url.to_string(),
            host: host.to_string(),
            port,
            tls,
        };
        // The client that will connect must read it the same way.
        if target.connection_info().is_err() {
            return Err("the Redis client cannot read it");
        }
        Ok(target)
    }

    /// What the Redis client needs to dial and to log in (address, user, password, database).
    /// The client is built without TLS of its own ([`RedisTarget::tls`] is ours), so it reads
    /// the URL as `redis://`.
    pub fn connection_info(&self) -> redis::RedisResult<redis::ConnectionInfo> {
        redis::IntoConnectionInfo::into_connection_info(format!("redis://{}", self.rest()))
    }

    /// Whether the connection is TLS (`rediss://`), verified against the transport's trust.
    pub fn tls(&self) -> bool {
        self.tls
    }

    fn scheme(&self) -> &'static str {
        if self.tls {
            "rediss"
        } else {
            "redis"
        }
    }

    /// The URL after its `scheme://`.
    fn rest(&self) -> &str {
        &self.url[self.scheme().len() + "://".len()..]
    }

    /// The URL as given, credentials included: for connecting only, never for a message.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// `text` with the URL's credentials (if any) masked: for messages that quote a client error.
    pub fn redact(&self, text: &str) -> String {
        let userinfo = self
            .rest()
            .split('/')
            .next()
            .and_then(|authority| authority.rsplit_once('@'))
            .map(|(userinfo, _)| userinfo);
        let mut text = text.replace(&self.url, &format!("{self:?}"));
        if let Some(userinfo) = userinfo.filter(|u| !u.is_empty()) {
            text = text.replace(userinfo, "***");
            if let Some((_, password)) = userinfo.split_once(':').filter(|(_, p)| !p.is_empty()) {
                text = text.replace(password, "***");
            }
        }
        text
    }

    /// The host as written in the URL (an IPv6 literal keeps its brackets) and the port.
    pub fn host_and_port(&self) -> (&str, u16) {
        (&self.host, self.port)
    }

    /// `host:port`, for messages and diagnostics.
    pub fn address(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }
}

impl fmt::Debug for RedisTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.scheme(), self.address())
    }
}

impl fmt::Debug for SharedStateConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedStateConfig")
            .field("redis", &self.redis)
            .field("key_prefix", &self.key_prefix)
            .field("timeout_ms", &self.timeout_ms)
            .field("lease_ms", &self.lease_ms)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_parse_to_an_address_without_credentials() {
        let target = RedisTarget::parse("redis://user:s3cret@10.0.0.5:6380/2").unwrap();
        assert_eq!(target.address(), "10.0.0.5:6380");
        assert!(!format!("{target:?}").contains("s3cret"));
        assert_eq!(target.url(), "redis://user:s3cret@10.0.0.5:6380/2");
        assert_eq!(
            target.redact("auth failed for s3cret at redis://user:s3cret@10.0.0.5:6380/2"),
            "auth failed for *** at redis://10.0.0.5:6380"
        );
        assert_eq!(
            RedisTarget::parse("redis://localhost").unwrap().address(),
            "localhost:6379"
        );
        assert_eq!(
            RedisTarget::parse("redis://[::1]:7000").unwrap().address(),
            "[::1]:7000"
        );
    }

    #[test]
    fn rediss_urls_are_tls_and_read_like_redis_urls() {
        let target = RedisTarget::parse("rediss://app:s3cret@cache.example:6380/1").unwrap();
        assert!(target.tls());
        assert!(!RedisTarget::parse("redis://h").unwrap().tls());
        assert_eq!(format!("{target:?}"), "rediss://cache.example:6380");
        assert_eq!(
            target.redact("WRONGPASS for app:s3cret at rediss://app:s3cret@cache.example:6380/1"),
            "WRONGPASS for *** at rediss://cache.example:6380"
        );
        let info = target.connection_info().unwrap();
        let login = info.redis_settings();
        assert_eq!(
            (login.username(), login.password()),
            (Some("app"), Some("s3cret"))
        );
        assert_eq!(login.db(), 1);
    }

    #[test]
    fn bad_urls_say_why() {
        assert!(RedisTarget::parse("http://h:1")
            .unwrap_err()
            .contains("rediss://"));
        assert!(RedisTarget::parse("rediss://h:0").is_err());
        assert!(RedisTarget::parse("redis://h:0").is_err());
        assert!(RedisTarget::parse("redis://h:99999").is_err());
        assert!(RedisTarget::parse("redis://:pw@/0").is_err());
        assert!(RedisTarget::parse("redis://h:1/x").is_err());
    }
}
