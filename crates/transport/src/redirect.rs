//! Redirects, followed inside one attempt as the original's client followed them (decisions
//! D36): 307 and 308 send the same request again; 301 and 302 after a POST, and every 303
//! after anything but a GET or HEAD, continue as a GET without a body. Credentials never
//! follow a hop off the request's own origin.
//!
//! [`next_request`] is the rule (pure: the request a redirect answer asks for); [`send`] is
//! the attempt's dispatch with it: the hops go through the same [`Exchange`] (so through the
//! pool of each hop's origin, with its proxy and its stale keep-alive resend), and the
//! attempt's timeout covers them all, as one timer covered the original's whole chain. The
//! attempt loop above sees only the final answer: hooks, the response cache, the breaker and
//! pacing stay with the request's own URL and host.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use http::header::LOCATION;
use http::{HeaderMap, Method};

use crate::error::{ErrorCode, TransportError};
use crate::exchange::{Exchange, RawResponse};
use crate::options::ResolvedOptions;
use crate::request::{may_carry_credential, Body, Origin, RequestSpec};

/// The statuses that redirect; any other 3xx (300, 304, 305) is an answer like any status.
pub fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

/// The request a redirect answer to `current` asks for, its `Location` resolved against
/// `current`'s URL. `first` is the origin of the request the caller made: a hop anywhere else
/// (another scheme, host or port, so also https to http) loses every header that may carry a
/// credential, for the rest of the chain. A `Location` that is missing, unparseable or not
/// http(s) fails the attempt.
pub fn next_request(
    current: &RequestSpec,
    first: &Origin,
    status: u16,
    headers: &HeaderMap,
) -> Result<RequestSpec, TransportError> {
    let refused = |why: &str| TransportError::network(format!("a {status} redirect {why}"));
    let location = headers
        .get(LOCATION)
        .ok_or_else(|| refused("without a Location header"))?;
    // Read as Latin-1, as Node reads header values: a raw byte above 0x7f is a character that
    // the URL parser then percent-encodes.
    let location: String = location.as_bytes().iter().map(|&b| char::from(b)).collect();
    let mut target = url::Url::parse(&current.url)
        .ok()
        .and_then(|base| base.join(&location).ok())
        .ok_or_else(|| refused("whose Location is not a valid URL"))?;
    if !matches!(target.scheme(), "http" | "https") {
        // The scheme only: the rest of a foreign URL may carry a signed token.
        return Err(refused(&format!(
            "to a {}: URL; only http: and https: Locations are followed",
            target.scheme()
        )));
    }
    // A fragment never goes on the wire.
    target.set_fragment(None);

    let becomes_get = match status {
        301 | 302 => current.method == Method::POST,
        303 => current.method != Method::GET && current.method != Method::HEAD,
        _ => false,
    };
    let mut next = RequestSpec::new(
        current.method.clone(),
        target.as_str(),
        HeaderMap::new(),
        bytes::Bytes::new(),
        current.protocol,
        current.shape,
    )
    .map_err(|_| refused("whose Location is not a valid URL"))?;
    let leaves_origin = *next.origin != *first;
    next.headers = if becomes_get || leaves_origin {
        let kept = current.headers.iter().filter(|(name, value)| {
            // The body's description goes with the body.
            let describes_body = name.as_str().starts_with("content-");
            // Authorization, Cookie, Proxy-Authorization, X-MAL-CLIENT-ID (D36) and any
            // header not known to be harmless: the crate's one credential rule.
            let credential = may_carry_credential(name, value);
            (!becomes_get || !describes_body) && (!leaves_origin || !credential)
        });
        Arc::new(
            kept.map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
        )
    } else {
        current.headers.clone()
    };
    if becomes_get {
        next.method = Method::GET;
        next.body = Body::default();
        next.is_write = false;
    } else {
        next.body = current.body.clone();
        next.is_write = current.is_write;
    }
    next.cache_hint = current.cache_hint.clone();
    Ok(next)
}

/// The attempt's round trip: `spec` sent through `exchange`, and up to `maxRedirects`
/// redirects followed. A redirect past the limit fails the attempt with `NETWORK_ERROR`;
/// `maxRedirects: 0` returns the redirect itself (the loop makes it a status error).
pub async fn send(
    exchange: &impl Exchange,
    spec: &RequestSpec,
    options: &ResolvedOptions,
) -> Result<RawResponse, TransportError> {
    let response = exchange
        .send(spec, options.max_response_bytes, options.timeout)
        .await?;
    if options.max_redirects == 0 || !is_redirect(response.status) {
        return Ok(response);
    }
    // Boxed: few calls are redirected, and the others should not carry room for a chain.
    Box::pin(follow(exchange, spec, response, options)).await
}

async fn follow(
    exchange: &impl Exchange,
    first: &RequestSpec,
    mut response: RawResponse,
    options: &ResolvedOptions,
) -> Result<RawResponse, TransportError> {
    let mut current = Cow::Borrowed(first);
    let mut timed = response.timed;
    let mut followed = 0;
    while is_redirect(response.status) {
        if followed == options.max_redirects {
            return Err(TransportError::network(format!(
                "more than {followed} redirects (the last one a {}); raise maxRedirects to follow more",
                response.status
            )));
        }
        let next = next_request(&current, &first.origin, response.status, &response.headers)?;
        followed += 1;
        // One timeout for the whole chain: what earlier hops ran under it is spent.
        let left = match options.timeout {
            None => None,
            Some(limit) => match limit.checked_sub(timed).filter(|left| !left.is_zero()) {
                Some(left) => Some(left),
                None => return Err(timed_out(limit)),
            },
        };
        response = exchange
            .send(&next, options.max_response_bytes, left)
            .await
            .map_err(|error| match options.timeout {
                Some(limit) if error.code == ErrorCode::Timeout => timed_out(limit),
                _ => error,
            })?;
        timed += response.timed;
        current = Cow::Owned(next);
    }
    Ok(response)
}

/// The attempt's own timeout, not what was left of it when the last hop started.
fn timed_out(limit: Duration) -> TransportError {
    TransportError::timeout(limit.as_millis() as u64)
}

#[cfg(test)]
mod tests;
