//! The `x-ratelimit-*` quota a response reports, read here once for every mechanism.
//!
//! AniList and MAL both send a limit, the remaining count and an absolute reset instant (Unix
//! epoch *seconds*), though AniList sends the reset on its 429s only. [`QuotaHeaders`] is what
//! the headers say, the reset optional: admission reads it so. Pacing (after successes) and the
//! retry decision (the reset as a fallback wait for a 429) need the whole triple, a
//! [`RateLimitInfo`]: for them a half-present or garbled triple is treated as absent rather than
//! partially trusted, since acting on a remaining count without its reset instant could only guess.

use http::header::HeaderName;
use http::HeaderMap;

use crate::numbers::{js_number, whole_ms};

/// The quota's header names (MAL sends them as `X-RateLimit-*`; names compare without case).
pub const LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
pub const REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");
pub const RESET: HeaderName = HeaderName::from_static("x-ratelimit-reset");

/// The quota headers of one response: limit and remaining present and finite per
/// [`js_number`], the reset when it is too. Values are kept as the original reads them (its
/// `rateLimit`, its pacing); admission's own reading ([`crate::admission::QuotaReading`])
/// refuses the absurd ones.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct QuotaHeaders {
    pub limit: f64,
    pub remaining: f64,
    /// When the quota refills, in Unix epoch seconds (fractions allowed).
    pub reset: Option<f64>,
}

impl QuotaHeaders {
    /// From the three x-ratelimit-* header values (the caller looks names up case-insensitively).
    pub fn parse(
        limit: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> Option<Self> {
        let finite =
            |header: Option<&str>| header.and_then(js_number).filter(|value| value.is_finite());
        Some(Self {
            limit: finite(limit)?,
            remaining: finite(remaining)?,
            reset: finite(reset),
        })
    }

    /// From a response's headers, `x-ratelimit-*` in any case (MAL sends `X-RateLimit-*`).
    /// Names as constants: every response is read, and a name given as text is parsed first.
    pub fn read(headers: &HeaderMap) -> Option<Self> {
        let header = |name: &HeaderName| headers.get(name).and_then(|v| v.to_str().ok());
        Self::parse(header(&LIMIT), header(&REMAINING), header(&RESET))
    }
}

/// Epoch seconds as epoch milliseconds, rounded to the nearest millisecond (0 before the epoch).
pub fn epoch_ms(seconds: f64) -> u64 {
    whole_ms(seconds * 1000.0)
}

/// One response's rate-limit quota, each field as JavaScript's `Number()` read the header.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimitInfo {
    pub limit: f64,
    pub remaining: f64,
    /// When the quota refills, in Unix epoch seconds (fractions allowed).
    pub reset: f64,
}

impl RateLimitInfo {
    /// From the three x-ratelimit-* header values (the caller looks names up case-insensitively).
    /// All three must be present and finite per [`js_number`], else `None`.
    pub fn from_headers(
        limit: Option<&str>,
        remaining: Option<&str>,
        reset: Option<&str>,
    ) -> Option<Self> {
        Self::complete(QuotaHeaders::parse(limit, remaining, reset)?)
    }

    /// The whole triple, or None when the reset is missing.
    pub fn complete(headers: QuotaHeaders) -> Option<Self> {
        Some(Self {
            limit: headers.limit,
            remaining: headers.remaining,
            reset: headers.reset?,
        })
    }

    /// The reset instant in epoch milliseconds, rounded to the nearest millisecond (0 for a
    /// reset before the epoch).
    pub fn reset_at_ms(&self) -> u64 {
        epoch_ms(self.reset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_three_headers() {
        let info = RateLimitInfo::from_headers(Some("90"), Some(" 0 "), Some("1700000000"));
        assert_eq!(
            info,
            Some(RateLimitInfo {
                limit: 90.0,
                remaining: 0.0,
                reset: 1_700_000_000.0
            })
        );
    }

    #[test]
    fn any_missing_header_means_no_info() {
        assert_eq!(
            RateLimitInfo::from_headers(None, Some("1"), Some("2")),
            None
        );
        assert_eq!(
            RateLimitInfo::from_headers(Some("1"), None, Some("2")),
            None
        );
        assert_eq!(
            RateLimitInfo::from_headers(Some("1"), Some("2"), None),
            None
        );
    }

    #[test]
    fn any_non_finite_header_means_no_info() {
        assert_eq!(
            RateLimitInfo::from_headers(Some("abc"), Some("1"), Some("2")),
            None
        );
        assert_eq!(
            RateLimitInfo::from_headers(Some("1"), Some("Infinity"), Some("2")),
            None
        );
        assert_eq!(
            RateLimitInfo::from_headers(Some("1"), Some("2"), Some("1e400")),
            None
        );
    }

    #[test]
    fn javascript_number_forms_are_accepted() {
        // `Number("")` is 0, so an empty header is a present zero, as in the original.
        let info = RateLimitInfo::from_headers(Some("0x5A"), Some(""), Some("1.7e9"));
        assert_eq!(
            info,
            Some(RateLimitInfo {
                limit: 90.0,
                remaining: 0.0,
                reset: 1_700_000_000.0
            })
        );
    }

    #[test]
    fn one_reading_of_the_headers_serves_both_views() {
        let mut headers = HeaderMap::new();
        headers.insert("X-RateLimit-Limit", "90".parse().unwrap());
        headers.insert("x-ratelimit-remaining", "4".parse().unwrap());
        let partial = QuotaHeaders::read(&headers).expect("limit and remaining suffice");
        assert_eq!(partial.reset, None);
        assert_eq!(
            RateLimitInfo::complete(partial),
            None,
            "pacing needs the reset"
        );
        headers.insert("X-RATELIMIT-RESET", "1700000000.5".parse().unwrap());
        let whole = QuotaHeaders::read(&headers).and_then(RateLimitInfo::complete);
        assert_eq!(
            whole.map(|info| info.reset_at_ms()),
            Some(1_700_000_000_500)
        );
        headers.remove("x-ratelimit-limit");
        assert_eq!(QuotaHeaders::read(&headers), None);
    }

    #[test]
    fn reset_converts_to_epoch_milliseconds() {
        let info = RateLimitInfo {
            limit: 90.0,
            remaining: 3.0,
            reset: 1_700_000_000.25,
        };
        assert_eq!(info.reset_at_ms(), 1_700_000_000_250);
        assert_eq!(
            RateLimitInfo {
                reset: -5.0,
                ..info
            }
            .reset_at_ms(),
            0
        );
    }
}
