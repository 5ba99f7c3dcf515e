//! Reading a caller's values where they lie, in the JSON text the facade wrote
//! (`lib/json-text.cjs`), for both catalogs.
//!
//! An object is read into its members, each value still a slice of the text; a value is read
//! further only as far as the rule checking it needs (its first character, a number, a string
//! with its escapes undone, an array's items). Nothing is built into a tree and written out
//! again: AniList splices the same text into its body, MAL turns each value into its path,
//! query or form text. Only a refused value is read whole, to be quoted in its message.

use std::borrow::{Borrow, Cow};
use std::collections::BTreeMap;
use std::fmt;

use serde::de::{Deserializer, Visitor};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Number, Value};

/// An object's members, each value still text. Sorted by name, a repeated name keeping its last
/// value, as a `serde_json` map reads them: problems come out in the order they always have,
/// whatever the order the caller wrote.
pub(crate) type Members<'a> = BTreeMap<Unescaped<'a>, &'a RawValue>;

/// A string of the text: borrowed unless it had escapes to undo.
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Unescaped<'a>(Cow<'a, str>);

impl Unescaped<'_> {
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }

    pub(crate) fn into_owned(self) -> String {
        self.0.into_owned()
    }
}

impl Borrow<str> for Unescaped<'_> {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl<'de> Deserialize<'de> for Unescaped<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct UnescapedVisitor;
        impl<'de> Visitor<'de> for UnescapedVisitor {
            type Value = Unescaped<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                text: &'de str,
            ) -> Result<Unescaped<'de>, E> {
                Ok(Unescaped(Cow::Borrowed(text)))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Unescaped<'de>, E> {
                Ok(Unescaped(Cow::Owned(text.to_owned())))
            }
        }
        deserializer.deserialize_str(UnescapedVisitor)
    }
}

/// Largest integer a JavaScript number represents exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub(crate) fn is_null(value: &RawValue) -> bool {
    value.get() == "null"
}

/// What a value is, from its first character (the text is already known to be JSON).
pub(crate) fn starts_with(value: &RawValue, first: u8) -> bool {
    value.get().as_bytes().first() == Some(&first)
}

pub(crate) fn is_number(value: &RawValue) -> bool {
    value
        .get()
        .as_bytes()
        .first()
        .is_some_and(|first| *first == b'-' || first.is_ascii_digit())
}

pub(crate) fn boolean_of(value: &RawValue) -> Option<bool> {
    match value.get() {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// A string value's text, escapes undone; None for any other value.
pub(crate) fn string_of(value: &RawValue) -> Option<Unescaped<'_>> {
    if starts_with(value, b'"') {
        serde_json::from_str(value.get()).ok()
    } else {
        None
    }
}

/// An array's items, each still text; None for any other value.
pub(crate) fn array_of(value: &RawValue) -> Option<Vec<&RawValue>> {
    starts_with(value, b'[')
        .then(|| serde_json::from_str(value.get()).ok())
        .flatten()
}

/// An object's members; None for any other value.
pub(crate) fn object_of(value: &RawValue) -> Option<Members<'_>> {
    starts_with(value, b'{')
        .then(|| serde_json::from_str(value.get()).ok())
        .flatten()
}

/// A whole number, whether the text wrote it as an integer or as a double: JavaScript has one
/// number type, so `2.0` (or `1e2`) coming from JS is an integer. Up to the largest integer a
/// double holds exactly, so the conversion is exact; anything fractional is not one.
pub(crate) fn whole_number(value: &RawValue) -> Option<i64> {
    if !is_number(value) {
        return None;
    }
    let number: Number = serde_json::from_str(value.get()).ok()?;
    if let Some(whole) = number.as_i64() {
        return Some(whole);
    }
    let double = number.as_f64()?;
    (double.fract() == 0.0 && double.abs() <= MAX_SAFE_INTEGER).then_some(double as i64)
}

/// A value read whole, only to be quoted in a message about it.
pub(crate) fn whole(value: &RawValue) -> Option<Value> {
    serde_json::from_str(value.get()).ok()
}

/// A value to be quoted as `serde_json` writes it (strings with their quotes, `1e21` for
/// `1e+21`): read whole and written again, so a message reads the same whatever spacing or
/// escapes the text had.
pub(crate) fn rewritten(value: &RawValue) -> String {
    whole(value).map_or_else(|| value.get().to_owned(), |value| value.to_string())
}

/// JSON text as a test writes it (it must be JSON).
#[cfg(test)]
pub(crate) fn raw(text: &str) -> &RawValue {
    serde_json::from_str(text).unwrap_or_else(|error| panic!("{text}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_borrowed_unless_they_had_escapes() {
        let plain = string_of(raw(r#""Frieren""#)).unwrap();
        assert!(matches!(plain.0, Cow::Borrowed("Frieren")));
        let escaped = string_of(raw(r#""F\u0072ieren\n""#)).unwrap();
        assert_eq!(escaped.as_str(), "Frieren\n");
        assert!(matches!(escaped.0, Cow::Owned(_)));
        assert_eq!(string_of(raw("3")), None);
    }

    #[test]
    fn whole_numbers_in_every_spelling_of_a_double() {
        for (text, expected) in [
            ("3", Some(3)),
            ("3.0", Some(3)),
            ("-2.0", Some(-2)),
            ("1e2", Some(100)),
            ("1E+2", Some(100)),
            ("-0", Some(0)),
            ("9007199254740991", Some(9_007_199_254_740_991)),
            ("9007199254740993.0", None),
            ("2.5", None),
            ("1e300", None),
            ("\"3\"", None),
            ("true", None),
        ] {
            assert_eq!(whole_number(raw(text)), expected, "{text}");
        }
    }

    #[test]
    fn a_repeated_member_keeps_its_last_value_as_a_serde_json_map_does() {
        let text = r#"{"b":1,"a":2,"b":3}"#;
        let members = object_of(raw(text)).unwrap();
        let read: Vec<(&str, &str)> = members
            .iter()
            .map(|(name, value)| (name.as_str(), value.get()))
            .collect();
        assert_eq!(read, [("a", "2"), ("b", "3")]);
        let value: Value = serde_json::from_str(text).unwrap();
        assert_eq!(value, serde_json::json!({ "a": 2, "b": 3 }));
    }
}
