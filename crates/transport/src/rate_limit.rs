//! The `x-ratelimit-*` quota a response reports.
//!
//! AniList and MAL both send a limit, the remaining count and an absolute reset instant (Unix
//! epoch *seconds*). Pacing reads it after successes and the retry decision reads the reset as a
//! fallback wait for a 429. A half-present or garbled triple is treated as absent rather than
//! partially trusted: acting on a remaining count without its reset instant could only guess.

use crate::numbers::{js_number, whole_ms};

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
        let finite =
            |header: Option<&str>| header.and_then(js_number).filter(|value| value.is_finite());
        Some(Self {
            limit: finite(limit)?,
            remaining: finite(remaining)?,
            reset: finite(reset)?,
        })
    }

    /// The reset instant in epoch milliseconds, rounded to the nearest millisecond (0 for a
    /// reset before the epoch).
    pub fn reset_at_ms(&self) -> u64 {
        whole_ms(self.reset * 1000.0)
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
