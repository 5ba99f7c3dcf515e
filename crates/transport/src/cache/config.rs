//! The cache's own options: `new ResponseCache({ ttlMs, maxEntries, cloneOnRead, shared })`,
//! validated.

use crate::options::parse::{object_fields, parse_bool, parse_integer, parse_millis};
use crate::options::value::{OptValue, OptionError};

pub const DEFAULT_TTL_MS: u64 = 60_000;
pub const DEFAULT_MAX_ENTRIES: u32 = 128;

/// `new ResponseCache(options)`, validated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// 0 stores nothing.
    pub ttl_ms: u64,
    pub max_entries: u32,
    /// Fleet-wide (our extension): on a slot with `sharedState`, entries live in that Redis
    /// (see [`super::fleet`]); `maxEntries` is then also the cap per Redis scope.
    pub shared: bool,
}

impl Default for CacheConfig {
    fn default() -> Self {
        Self {
            ttl_ms: DEFAULT_TTL_MS,
            max_entries: DEFAULT_MAX_ENTRIES,
            shared: false,
        }
    }
}

impl CacheConfig {
    /// Parse the constructor's options object (`undefined`/`null` take the defaults).
    pub fn parse(options: &OptValue) -> Result<Self, OptionError> {
        let mut config = Self::default();
        if matches!(options, OptValue::Undefined | OptValue::Null) {
            return Ok(config);
        }
        if !matches!(options, OptValue::Object(_)) {
            return Err(OptionError(format!(
                "ResponseCache options must be an object (received {}).",
                options.describe()
            )));
        }
        let fields = object_fields(
            "ResponseCache options",
            options,
            &["ttlMs", "maxEntries", "cloneOnRead", "shared"],
        )?;
        for (key, value) in fields {
            match key {
                "ttlMs" => {
                    config.ttl_ms = parse_millis(value, false)
                        .ok_or_else(|| rule("ttlMs must be a finite, non-negative number", value))?
                }
                "maxEntries" => {
                    config.max_entries = parse_integer(value, 1).ok_or_else(|| {
                        rule("maxEntries must be a finite, positive integer", value)
                    })?
                }
                "shared" => config.shared = parse_bool("shared", value)?,
                // Every read already returns a fresh copy (see the `cache` module comment).
                _ => {
                    parse_bool("cloneOnRead", value)?;
                }
            }
        }
        Ok(config)
    }
}

fn rule(text: &str, value: &OptValue) -> OptionError {
    OptionError(format!("{text} (received {}).", value.describe()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn construction_applies_defaults_and_rejects_invalid_options() {
        assert_eq!(
            CacheConfig::parse(&OptValue::Undefined),
            Ok(CacheConfig {
                ttl_ms: 60_000,
                max_entries: 128,
                shared: false
            })
        );
        let custom = OptValue::object(&[
            ("ttlMs", OptValue::Number(0.0)),
            ("maxEntries", OptValue::Number(2.0)),
            ("cloneOnRead", OptValue::Bool(false)),
            ("shared", OptValue::Bool(true)),
        ]);
        assert_eq!(
            CacheConfig::parse(&custom),
            Ok(CacheConfig {
                ttl_ms: 0,
                max_entries: 2,
                shared: true
            })
        );
        let cases = [
            (
                OptValue::object(&[("ttlMs", OptValue::Number(-1.0))]),
                "ttlMs must be a finite, non-negative number (received -1).",
            ),
            (
                OptValue::object(&[("ttlMs", OptValue::Number(f64::INFINITY))]),
                "ttlMs must be a finite, non-negative number",
            ),
            (
                OptValue::object(&[("maxEntries", OptValue::Number(0.0))]),
                "maxEntries must be a finite, positive integer (received 0).",
            ),
            (
                OptValue::object(&[("maxEntries", OptValue::Number(1.5))]),
                "maxEntries must be a finite, positive integer",
            ),
            (
                OptValue::object(&[("cloneOnRead", OptValue::String("yes".into()))]),
                "cloneOnRead must be a boolean",
            ),
            (
                OptValue::object(&[("shared", OptValue::String("redis://h".into()))]),
                "shared must be a boolean",
            ),
            (
                OptValue::object(&[("ttl", OptValue::Number(1.0))]),
                "Unknown key \"ttl\" in ResponseCache options",
            ),
            (
                OptValue::Number(5.0),
                "ResponseCache options must be an object",
            ),
        ];
        for (options, expected) in cases {
            let error = CacheConfig::parse(&options).expect_err(expected);
            assert!(
                error.0.contains(expected),
                "{:?} lacks {expected:?}",
                error.0
            );
        }
    }
}
