//! Which fleet state a request shares: one Redis key per (provider, upstream host, credential
//! identity), `<keyPrefix>:{<provider>:<host>:<credential-id>}:state`. The `{…}` hash tag keeps a
//! scope on one Redis Cluster slot. The credential id is a one-way digest, never the credential.

use http::HeaderMap;
use sha2::{Digest, Sha256};

use crate::request::may_carry_credential;

/// The credential id of a request without credentials.
pub const ANONYMOUS: &str = "anonymous";

/// A digest of every header that may carry a credential (`Authorization`, a client-id header,
/// anything not plainly about the body), so requests with different credentials never share a
/// scope; [`ANONYMOUS`] when there is none. 16 hex digits of a SHA-256: enough to keep tokens
/// apart, and it cannot be reversed into the token.
pub fn credential_id(headers: &HeaderMap) -> String {
    let mut credentials: Vec<(&str, &[u8])> = headers
        .iter()
        .filter(|(name, value)| may_carry_credential(name, value))
        .map(|(name, value)| (name.as_str(), value.as_bytes()))
        .collect();
    if credentials.is_empty() {
        return ANONYMOUS.to_string();
    }
    credentials.sort_unstable();
    let mut digest = Sha256::new();
    digest.update(b"anilink-credential\n");
    for (name, value) in credentials {
        digest.update(name.as_bytes());
        digest.update(b":");
        digest.update(value);
        digest.update(b"\n");
    }
    digest
        .finalize()
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The Redis key of one scope's state.
pub fn state_key(prefix: &str, provider: &str, host: &str, credential_id: &str) -> String {
    format!("{prefix}:{{{provider}:{host}:{credential_id}}}:state")
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::header::{AUTHORIZATION, CONTENT_TYPE};
    use http::HeaderValue;

    fn with_token(token: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        headers.insert(
            AUTHORIZATION,
            HeaderValue::from_str(&format!("Bearer {token}")).unwrap(),
        );
        headers
    }

    #[test]
    fn different_credentials_never_share_and_the_id_hides_the_token() {
        let a = credential_id(&with_token("token-a"));
        let b = credential_id(&with_token("token-b"));
        assert_ne!(a, b);
        assert_eq!(a, credential_id(&with_token("token-a")), "stable");
        assert_eq!(a.len(), 16);
        assert!(!a.contains("token"));
        let mut client_id = HeaderMap::new();
        client_id.insert("x-mal-client-id", HeaderValue::from_static("abc"));
        assert_ne!(credential_id(&client_id), ANONYMOUS);
        let mut plain = HeaderMap::new();
        plain.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        assert_eq!(credential_id(&plain), ANONYMOUS);
    }

    #[test]
    fn keys_carry_the_hash_tag() {
        assert_eq!(
            state_key("anilink", "anilist", "graphql.anilist.co", ANONYMOUS),
            "anilink:{anilist:graphql.anilist.co:anonymous}:state"
        );
    }
}
