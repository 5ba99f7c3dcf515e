//! The building blocks every option parser uses: the message shape of D10 (`{rule} (received
//! {value}).`), booleans, functions, integers, milliseconds, and the fields of an object
//! option. Shared by the transport options and the response cache's own options.

use super::value::{OptValue, OptionError};

/// The D10 message: the rule, then what was given.
pub(crate) fn invalid(rule: &str, value: &OptValue) -> OptionError {
    OptionError(format!("{rule} (received {}).", value.describe()))
}

pub(crate) fn require_function(key: &str, value: &OptValue) -> Result<(), OptionError> {
    match value {
        OptValue::Function => Ok(()),
        other => Err(invalid(&format!("{key} must be a function"), other)),
    }
}

pub(crate) fn parse_bool(key: &str, value: &OptValue) -> Result<bool, OptionError> {
    match value {
        OptValue::Bool(b) => Ok(*b),
        other => Err(invalid(&format!("{key} must be a boolean"), other)),
    }
}

/// A finite integer not below `min` that fits u32.
pub(crate) fn parse_integer(value: &OptValue, min: u32) -> Option<u32> {
    match value {
        OptValue::Number(n)
            if n.is_finite()
                && n.fract() == 0.0
                && *n >= f64::from(min)
                && *n <= f64::from(u32::MAX) =>
        {
            Some(*n as u32)
        }
        _ => None,
    }
}

/// A finite number not below zero (or above it when `positive`), as whole milliseconds.
pub(crate) fn parse_millis(value: &OptValue, positive: bool) -> Option<u64> {
    match value {
        OptValue::Number(n) if n.is_finite() && (*n > 0.0 || (!positive && *n == 0.0)) => {
            Some(n.ceil().min(u64::MAX as f64) as u64)
        }
        _ => None,
    }
}

/// The fields of an object option, rejecting keys it does not know (a typo must not pass
/// silently); fields given as `undefined` are left out, as if absent.
pub(crate) fn object_fields<'a>(
    option: &str,
    value: &'a OptValue,
    known: &[&str],
) -> Result<Vec<(&'a str, &'a OptValue)>, OptionError> {
    let OptValue::Object(fields) = value else {
        return Err(invalid(&format!("{option} must be an object"), value));
    };
    let mut out = Vec::with_capacity(fields.len());
    for (key, field) in fields {
        if !known.contains(&key.as_str()) {
            return Err(OptionError(format!(
                "Unknown key \"{key}\" in {option}. Valid keys are: {}.",
                known.join(", ")
            )));
        }
        if !matches!(field, OptValue::Undefined) {
            out.push((key.as_str(), field));
        }
    }
    Ok(out)
}
