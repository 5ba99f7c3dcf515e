//! Parameter rules: where a parameter goes on the wire and which values it accepts.
//!
//! A rule turns a JSON value into the exact text MyAnimeList receives, or into an api.md §5
//! detail string naming the offending key and value. Integers arrive from JavaScript as doubles,
//! so a whole-number double is an integer here; anything fractional, out of range or of the
//! wrong type is rejected rather than coerced (decisions D10 spirit).

use serde_json::{Map, Value};

/// The normalised user name that addresses the token owner's own account.
pub(super) const OWN_ACCOUNT: &str = "@me";

/// Largest integer a JavaScript number represents exactly.
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

/// Where a parameter's value is sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Placement {
    /// A `{name}` segment of the path template.
    Path,
    /// A query-string pair, named by the MAL snake_case name.
    Query,
    /// A pair of the form-encoded list-status body.
    Form,
}

/// The values a parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Rule {
    /// An integer >= 1 (ids, years).
    PositiveInteger,
    /// An integer >= 0 (offsets, counters).
    NonNegativeInteger,
    /// An integer within inclusive bounds (limits, scores, priorities).
    IntegerFrom(i64, i64),
    /// A string with at least one non-whitespace character, sent as given.
    NonBlankText,
    /// Any string, including the empty string (list comments can be cleared).
    Text,
    /// A user name: trimmed, non-blank, `@me` in any case normalised to [`OWN_ACCOUNT`].
    Username,
    /// One of a closed set of MAL enum values.
    OneOf(&'static [&'static str]),
    Boolean,
    /// An array of tags, sent comma-joined, so a tag itself cannot contain a comma.
    Tags,
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug)]
pub(super) struct Param {
    /// The camelCase key of the JavaScript parameter object.
    pub name: &'static str,
    /// MAL's snake_case name (query name, form name, or path placeholder).
    pub wire: &'static str,
    pub rule: Rule,
    pub required: bool,
    pub placement: Placement,
}

impl Param {
    /// A required `{name}` path segment.
    pub const fn path(name: &'static str, rule: Rule) -> Param {
        Param {
            name,
            wire: name,
            rule,
            required: true,
            placement: Placement::Path,
        }
    }

    /// An optional query parameter.
    pub const fn query(name: &'static str, wire: &'static str, rule: Rule) -> Param {
        Param {
            name,
            wire,
            rule,
            required: false,
            placement: Placement::Query,
        }
    }

    /// An optional field of the list-status form body.
    pub const fn form(name: &'static str, wire: &'static str, rule: Rule) -> Param {
        Param {
            name,
            wire,
            rule,
            required: false,
            placement: Placement::Form,
        }
    }

    pub const fn required(self) -> Param {
        Param {
            required: true,
            ..self
        }
    }

    /// List-status bodies are documented with MAL's snake_case names while the rest of the API
    /// is camelCase, so body fields answer to both spellings.
    pub fn accepts_key(&self, key: &str) -> bool {
        key == self.name || (self.placement == Placement::Form && key == self.wire)
    }

    /// The key and value the caller gave for this parameter (`null` counts as absent), or a
    /// problem when both spellings of a body field were given.
    pub fn find_in<'a>(
        &self,
        given: &'a Map<String, Value>,
    ) -> Result<Option<(&'a str, &'a Value)>, String> {
        let mut found = given
            .iter()
            .filter(|(key, value)| self.accepts_key(key) && !value.is_null());
        let first = found.next();
        match (first, found.next()) {
            (Some(_), Some(_)) => Err(format!(
                "Conflicting variables: {} and {}. Give only one of them",
                self.name, self.wire
            )),
            (first, _) => Ok(first.map(|(key, value)| (key.as_str(), value))),
        }
    }
}

impl Rule {
    /// The wire text for `value`, or the detail strings explaining why `key` rejects it.
    pub fn check(&self, key: &str, value: &Value) -> Result<String, Vec<String>> {
        let invalid =
            |expected: &str| vec![format!("Invalid {key}: {}. {expected}", describe(value))];
        match *self {
            Rule::PositiveInteger => integer(value)
                .filter(|number| *number >= 1)
                .map(|number| number.to_string())
                .ok_or_else(|| invalid("Expected a positive integer")),
            Rule::NonNegativeInteger => integer(value)
                .filter(|number| *number >= 0)
                .map(|number| number.to_string())
                .ok_or_else(|| invalid("Expected a non-negative integer")),
            Rule::IntegerFrom(min, max) => integer(value)
                .filter(|number| (min..=max).contains(number))
                .map(|number| number.to_string())
                .ok_or_else(|| invalid(&format!("Expected an integer from {min} to {max}"))),
            Rule::NonBlankText => value
                .as_str()
                .filter(|text| !text.trim().is_empty())
                .map(str::to_owned)
                .ok_or_else(|| invalid("Expected a non-blank string")),
            Rule::Text => value
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid("Expected a string")),
            Rule::Username => value
                .as_str()
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(|name| {
                    if name.eq_ignore_ascii_case(OWN_ACCOUNT) {
                        OWN_ACCOUNT.to_owned()
                    } else {
                        name.to_owned()
                    }
                })
                .ok_or_else(|| invalid("Expected a non-blank user name")),
            Rule::OneOf(allowed) => value
                .as_str()
                .filter(|text| allowed.contains(text))
                .map(str::to_owned)
                .ok_or_else(|| invalid(&format!("Expected one of: {}", allowed.join(", ")))),
            Rule::Boolean => value
                .as_bool()
                .map(|flag| flag.to_string())
                .ok_or_else(|| invalid("Expected a boolean")),
            Rule::Tags => tags(key, value),
        }
    }
}

/// The comma-joined tag list; every bad element is named in one detail string each.
fn tags(key: &str, value: &Value) -> Result<String, Vec<String>> {
    let Some(items) = value.as_array() else {
        return Err(vec![format!(
            "Invalid {key}: {}. Expected an array of strings",
            describe(value)
        )]);
    };
    let mut accepted = Vec::with_capacity(items.len());
    let mut problems = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match item.as_str() {
            Some(tag) if !tag.contains(',') => accepted.push(tag),
            _ => problems.push(format!(
                "Invalid {key}[{index}]: {}. Expected a string without commas",
                describe(item)
            )),
        }
    }
    if problems.is_empty() {
        Ok(accepted.join(","))
    } else {
        Err(problems)
    }
}

/// An exactly representable whole number, whether JSON carried it as an integer or a double.
fn integer(value: &Value) -> Option<i64> {
    let number = value.as_number()?;
    if let Some(whole) = number.as_i64() {
        return Some(whole);
    }
    let double = number.as_f64()?;
    // The range check keeps the conversion exact; the fraction check keeps it honest.
    (double.fract() == 0.0 && double.abs() <= MAX_SAFE_INTEGER).then_some(double as i64)
}

/// A value as it appears in detail strings: JSON text, so strings show their quotes.
pub(super) fn describe(value: &Value) -> String {
    value.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_doubles_are_integers_and_fractions_are_not() {
        assert_eq!(integer(&json!(3)), Some(3));
        assert_eq!(integer(&json!(3.0)), Some(3));
        assert_eq!(integer(&json!(-2.0)), Some(-2));
        assert_eq!(integer(&json!(2.5)), None);
        assert_eq!(integer(&json!(1e300)), None);
        assert_eq!(integer(&json!("3")), None);
    }

    #[test]
    fn username_is_trimmed_and_own_account_normalised() {
        assert_eq!(
            Rule::Username.check("username", &json!("  Xinil ")),
            Ok("Xinil".into())
        );
        assert_eq!(
            Rule::Username.check("username", &json!(" @ME ")),
            Ok("@me".into())
        );
        assert_eq!(
            Rule::Username.check("username", &json!("   ")),
            Err(vec![
                "Invalid username: \"   \". Expected a non-blank user name".to_owned()
            ])
        );
    }

    #[test]
    fn tags_join_and_reject_commas_and_non_strings() {
        assert_eq!(
            Rule::Tags.check("tags", &json!(["a", "b c"])),
            Ok("a,b c".into())
        );
        assert_eq!(Rule::Tags.check("tags", &json!([])), Ok(String::new()));
        assert_eq!(
            Rule::Tags.check("tags", &json!("a,b")),
            Err(vec![
                "Invalid tags: \"a,b\". Expected an array of strings".to_owned()
            ])
        );
        assert_eq!(
            Rule::Tags.check("tags", &json!(["ok", "x,y", 5])),
            Err(vec![
                "Invalid tags[1]: \"x,y\". Expected a string without commas".to_owned(),
                "Invalid tags[2]: 5. Expected a string without commas".to_owned(),
            ])
        );
    }

    #[test]
    fn both_spellings_of_a_body_field_conflict() {
        let param = Param::form(
            "numWatchedEpisodes",
            "num_watched_episodes",
            Rule::NonNegativeInteger,
        );
        let given = json!({ "numWatchedEpisodes": 1, "num_watched_episodes": 2 });
        let given = given.as_object().cloned().unwrap_or_default();
        assert_eq!(
            param.find_in(&given),
            Err("Conflicting variables: numWatchedEpisodes and num_watched_episodes. Give only one of them".into())
        );
    }

    #[test]
    fn query_params_do_not_answer_to_their_wire_name() {
        let param = Param::query("rankingType", "ranking_type", Rule::Text);
        assert!(param.accepts_key("rankingType"));
        assert!(!param.accepts_key("ranking_type"));
    }
}
