//! How long a failing server asked us to wait.
//!
//! A 429 or 503 may say when trying again is worthwhile. Honouring that is cheaper for both
//! sides than exponential guessing: retrying a 429 before its quota resets just buys another 429.
//! Only those two statuses are read (decisions D5); anywhere else `Retry-After` has no agreed
//! meaning for a failure. A 429 without the header still usually carries `x-ratelimit-reset`,
//! which says the same thing as an absolute instant.
//!
//! The value returned is the server's wish, *uncapped*. The retry budget needs it that way: a
//! window must not be committed to a retry whose real wait outlives the window, even though the
//! wait actually slept is capped at [`SERVER_WAIT_CAP_MS`].

use std::time::UNIX_EPOCH;

use crate::numbers::{js_number, trim_js_whitespace, whole_ms};
use crate::rate_limit::RateLimitInfo;

/// The longest server-directed wait actually slept before a retry.
pub const SERVER_WAIT_CAP_MS: u64 = 60_000;

/// The server-directed wait for a failed response, UNCAPPED (the budget gate compares the uncapped value; the caller caps with SERVER_WAIT_CAP_MS).
///
/// D5: `Retry-After` (delta seconds incl. fractions like "1.5" -> 1500, or an HTTP-date -> max(0, date-now)) is honoured on status 429 and 503;
/// a 429 without a usable Retry-After falls back to x-ratelimit-reset: max(0, reset*1000 - now). Negative, empty or unparseable Retry-After is ignored
/// (then the 429 fallback applies; a 503 gets None). Any other status -> None.
pub fn server_directed_wait_ms(
    status: u16,
    retry_after: Option<&str>,
    rate_limit: Option<&RateLimitInfo>,
    now_ms: u64,
) -> Option<u64> {
    let header_wait = || retry_after.and_then(|value| retry_after_wait_ms(value, now_ms));
    match status {
        429 => header_wait()
            .or_else(|| rate_limit.map(|info| info.reset_at_ms().saturating_sub(now_ms))),
        503 => header_wait(),
        _ => None,
    }
}

/// A `Retry-After` value as milliseconds from `now_ms`: delta seconds as JavaScript's `Number()`
/// reads them, else an HTTP-date. A date already past means "now" (0).
fn retry_after_wait_ms(value: &str, now_ms: u64) -> Option<u64> {
    let value = trim_js_whitespace(value);
    if value.is_empty() {
        return None;
    }
    match js_number(value) {
        Some(seconds) if seconds.is_finite() && seconds >= 0.0 => Some(whole_ms(seconds * 1000.0)),
        // A number, but negative or infinite: not a usable instruction.
        Some(_) => None,
        None => {
            let date = httpdate::parse_http_date(value).ok()?;
            // httpdate cannot represent instants before the epoch; treat them as past anyway.
            let date_ms = date
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis();
            let date_ms = u64::try_from(date_ms).unwrap_or(u64::MAX);
            Some(date_ms.saturating_sub(now_ms))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2023-11-14T22:13:20Z, written as an HTTP-date below.
    const NOW_MS: u64 = 1_700_000_000_000;

    fn quota_resetting_at(reset_seconds: f64) -> RateLimitInfo {
        RateLimitInfo {
            limit: 90.0,
            remaining: 0.0,
            reset: reset_seconds,
        }
    }

    #[test]
    fn delta_seconds_on_429_and_503() {
        assert_eq!(
            server_directed_wait_ms(429, Some("2"), None, NOW_MS),
            Some(2_000)
        );
        assert_eq!(
            server_directed_wait_ms(503, Some("2"), None, NOW_MS),
            Some(2_000)
        );
        assert_eq!(
            server_directed_wait_ms(429, Some("0"), None, NOW_MS),
            Some(0)
        );
    }

    #[test]
    fn fractional_and_javascript_number_forms() {
        assert_eq!(
            server_directed_wait_ms(429, Some("1.5"), None, NOW_MS),
            Some(1_500)
        );
        assert_eq!(
            server_directed_wait_ms(429, Some("1.1"), None, NOW_MS),
            Some(1_100)
        );
        assert_eq!(
            server_directed_wait_ms(429, Some(" 1e1 "), None, NOW_MS),
            Some(10_000)
        );
        assert_eq!(
            server_directed_wait_ms(429, Some("0x3"), None, NOW_MS),
            Some(3_000)
        );
    }

    #[test]
    fn the_wait_is_not_capped_here() {
        assert_eq!(
            server_directed_wait_ms(429, Some("600"), None, NOW_MS),
            Some(600_000)
        );
        assert_eq!(
            server_directed_wait_ms(503, Some("1e300"), None, NOW_MS),
            Some(u64::MAX)
        );
    }

    #[test]
    fn http_dates_measure_from_now() {
        let ninety_seconds_later = "Tue, 14 Nov 2023 22:14:50 GMT";
        assert_eq!(
            server_directed_wait_ms(429, Some(ninety_seconds_later), None, NOW_MS),
            Some(90_000)
        );
        assert_eq!(
            server_directed_wait_ms(503, Some(ninety_seconds_later), None, NOW_MS),
            Some(90_000)
        );
        // The obsolete RFC 850 and asctime forms name the same instant.
        assert_eq!(
            server_directed_wait_ms(429, Some("Tuesday, 14-Nov-23 22:14:50 GMT"), None, NOW_MS),
            Some(90_000)
        );
        assert_eq!(
            server_directed_wait_ms(429, Some("Tue Nov 14 22:14:50 2023"), None, NOW_MS),
            Some(90_000)
        );
    }

    #[test]
    fn a_past_http_date_means_no_wait() {
        let an_hour_earlier = "Tue, 14 Nov 2023 21:13:20 GMT";
        assert_eq!(
            server_directed_wait_ms(429, Some(an_hour_earlier), None, NOW_MS),
            Some(0)
        );
    }

    #[test]
    fn unusable_retry_after_on_429_falls_back_to_the_rate_limit_reset() {
        let quota = quota_resetting_at(1_700_000_030.5);
        for header in [
            None,
            Some(""),
            Some("  "),
            Some("-5"),
            Some("soon"),
            Some("Infinity"),
        ] {
            assert_eq!(
                server_directed_wait_ms(429, header, Some(&quota), NOW_MS),
                Some(30_500),
                "{header:?}"
            );
        }
    }

    #[test]
    fn retry_after_wins_over_the_rate_limit_reset() {
        let quota = quota_resetting_at(1_700_000_030.0);
        assert_eq!(
            server_directed_wait_ms(429, Some("4"), Some(&quota), NOW_MS),
            Some(4_000)
        );
    }

    #[test]
    fn a_reset_already_past_means_no_wait() {
        let quota = quota_resetting_at(1_699_999_990.0);
        assert_eq!(
            server_directed_wait_ms(429, None, Some(&quota), NOW_MS),
            Some(0)
        );
    }

    #[test]
    fn a_429_with_nothing_usable_has_no_server_wait() {
        assert_eq!(server_directed_wait_ms(429, None, None, NOW_MS), None);
        assert_eq!(server_directed_wait_ms(429, Some("-1"), None, NOW_MS), None);
    }

    #[test]
    fn a_503_never_uses_the_rate_limit_reset() {
        let quota = quota_resetting_at(1_700_000_030.0);
        assert_eq!(
            server_directed_wait_ms(503, None, Some(&quota), NOW_MS),
            None
        );
        assert_eq!(
            server_directed_wait_ms(503, Some("later"), Some(&quota), NOW_MS),
            None
        );
    }

    #[test]
    fn other_statuses_ignore_every_hint() {
        let quota = quota_resetting_at(1_700_000_030.0);
        for status in [200, 400, 404, 500, 502, 504] {
            assert_eq!(
                server_directed_wait_ms(status, Some("5"), Some(&quota), NOW_MS),
                None,
                "{status}"
            );
        }
    }

    /// Random header text (digits, signs, exponents, radix prefixes, dates, junk, Unicode
    /// spaces) never panics, and whatever is read obeys the rules: only 429 and 503 give a wait,
    /// a number gives its own value in ms, a rate-limit triple is all finite or absent.
    #[test]
    fn random_header_values_parse_safely_and_by_the_rules() {
        const PIECES: [&str; 24] = [
            "0",
            "1",
            "9",
            "-",
            "+",
            ".",
            "e",
            "E",
            "x",
            "0x",
            "0b",
            "1e400",
            "Infinity",
            "NaN",
            " ",
            "\u{a0}",
            "\u{feff}",
            "_",
            "abc",
            "Wed, 21 Oct 2015 07:28:00 GMT",
            "Sun, 06 Nov 2094 08:49:37 GMT",
            ",",
            "\u{85}",
            "٣",
        ];
        let mut rng = fastrand::Rng::with_seed(5);
        for _ in 0..50_000 {
            let text: String = (0..rng.usize(0..5))
                .map(|_| PIECES[rng.usize(0..PIECES.len())])
                .collect();
            let status = [200, 429, 500, 503][rng.usize(0..4)];
            let wait = server_directed_wait_ms(status, Some(&text), None, NOW_MS);
            if !matches!(status, 429 | 503) {
                assert_eq!(wait, None, "{text:?}");
            }
            if let (Some(wait), Some(seconds)) = (wait, js_number(&text)) {
                assert!(seconds.is_finite() && seconds >= 0.0, "{text:?}");
                assert_eq!(wait, whole_ms(seconds * 1000.0), "{text:?}");
            }
            if let Some(info) = RateLimitInfo::from_headers(Some(&text), Some(&text), Some(&text)) {
                assert!(
                    info.limit.is_finite() && info.remaining.is_finite() && info.reset.is_finite(),
                    "{text:?}"
                );
                let fallback = server_directed_wait_ms(429, None, Some(&info), NOW_MS);
                assert_eq!(fallback, Some(info.reset_at_ms().saturating_sub(NOW_MS)));
            }
        }
    }
}
