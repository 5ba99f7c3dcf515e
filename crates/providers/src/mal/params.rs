//! Parameter rules: where a parameter goes on the wire and which values it accepts.
//!
//! A rule turns a value of the caller's JSON text into the exact text MyAnimeList receives,
//! reading it only as far as the rule needs (`crate::json_text`), or into an api.md §5 detail
//! string naming the offending key and value. Integers arrive from JavaScript as doubles, so a
//! whole-number double is an integer here; anything fractional, out of range or of the wrong
//! type is rejected rather than coerced (decisions D10 spirit).

use serde_json::value::RawValue;

use crate::json_text::{
    array_of, boolean_of, is_null, rewritten, string_of, whole_number, Members, Unescaped,
};

/// The normalised user name that addresses the token owner's own account.
pub(super) const OWN_ACCOUNT: &str = "@me";

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
        given: &'a Members<'_>,
    ) -> Result<Option<(&'a str, &'a RawValue)>, String> {
        let mut found = given
            .iter()
            .filter(|(key, value)| self.accepts_key(key.as_str()) && !is_null(value));
        let first = found.next();
        match (first, found.next()) {
            (Some(_), Some(_)) => Err(format!(
                "Conflicting variables: {} and {}. Give only one of them",
                self.name, self.wire
            )),
            (first, _) => Ok(first.map(|(key, value)| (key.as_str(), *value))),
        }
    }
}

impl Rule {
    /// The wire text for `value`, or the detail strings explaining why `key` rejects it.
    pub fn check(&self, key: &str, value: &RawValue) -> Result<String, Vec<String>> {
        let invalid =
            |expected: &str| vec![format!("Invalid {key}: {}. {expected}", rewritten(value))];
        match *self {
            Rule::PositiveInteger => whole_number(value)
                .filter(|number| *number >= 1)
                .map(|number| number.to_string())
                .ok_or_else(|| invalid("Expected a positive integer")),
            Rule::NonNegativeInteger => whole_number(value)
                .filter(|number| *number >= 0)
                .map(|number| number.to_string())
                .ok_or_else(|| invalid("Expected a non-negative integer")),
            Rule::IntegerFrom(min, max) => whole_number(value)
                .filter(|number| (min..=max).contains(number))
                .map(|number| number.to_string())
                .ok_or_else(|| invalid(&format!("Expected an integer from {min} to {max}"))),
            Rule::NonBlankText => string_of(value)
                .filter(|text| !text.as_str().trim().is_empty())
                .map(|text| text.as_str().to_owned())
                .ok_or_else(|| invalid("Expected a non-blank string")),
            Rule::Text => string_of(value)
                .map(|text| text.as_str().to_owned())
                .ok_or_else(|| invalid("Expected a string")),
            Rule::Username => string_of(value)
                .as_ref()
                .map(|name| name.as_str().trim())
                .filter(|name| !name.is_empty())
                .map(|name| {
                    if name.eq_ignore_ascii_case(OWN_ACCOUNT) {
                        OWN_ACCOUNT.to_owned()
                    } else {
                        name.to_owned()
                    }
                })
                .ok_or_else(|| invalid("Expected a non-blank user name")),
            Rule::OneOf(allowed) => string_of(value)
                .filter(|text| allowed.contains(&text.as_str()))
                .map(|text| text.as_str().to_owned())
                .ok_or_else(|| invalid(&format!("Expected one of: {}", allowed.join(", ")))),
            Rule::Boolean => boolean_of(value)
                .map(|flag| flag.to_string())
                .ok_or_else(|| invalid("Expected a boolean")),
            Rule::Tags => tags(key, value),
        }
    }
}

/// The comma-joined tag list; every bad element is named in one detail string each.
fn tags(key: &str, value: &RawValue) -> Result<String, Vec<String>> {
    let Some(items) = array_of(value) else {
        return Err(vec![format!(
            "Invalid {key}: {}. Expected an array of strings",
            rewritten(value)
        )]);
    };
    let mut accepted = Vec::with_capacity(items.len());
    let mut problems = Vec::new();
    for (index, item) in items.iter().enumerate() {
        match string_of(item) {
            Some(tag) if !tag.as_str().contains(',') => accepted.push(tag),
            _ => problems.push(format!(
                "Invalid {key}[{index}]: {}. Expected a string without commas",
                rewritten(item)
            )),
        }
    }
    if problems.is_empty() {
        Ok(accepted
            .iter()
            .map(Unescaped::as_str)
            .collect::<Vec<_>>()
            .join(","))
    } else {
        Err(problems)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json_text::{object_of, raw};

    #[test]
    fn username_is_trimmed_and_own_account_normalised() {
        assert_eq!(
            Rule::Username.check("username", raw(r#""  Xinil ""#)),
            Ok("Xinil".into())
        );
        assert_eq!(
            Rule::Username.check("username", raw(r#"" @ME ""#)),
            Ok("@me".into())
        );
        assert_eq!(
            Rule::Username.check("username", raw(r#""   ""#)),
            Err(vec![
                "Invalid username: \"   \". Expected a non-blank user name".to_owned()
            ])
        );
    }

    #[test]
    fn tags_join_and_reject_commas_and_non_strings() {
        assert_eq!(
            Rule::Tags.check("tags", raw(r#"["a", "b c"]"#)),
            Ok("a,b c".into())
        );
        assert_eq!(Rule::Tags.check("tags", raw("[]")), Ok(String::new()));
        assert_eq!(
            Rule::Tags.check("tags", raw(r#""a,b""#)),
            Err(vec![
                "Invalid tags: \"a,b\". Expected an array of strings".to_owned()
            ])
        );
        assert_eq!(
            Rule::Tags.check("tags", raw(r#"["ok", "x,y", 5]"#)),
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
        let given = object_of(raw(
            r#"{ "numWatchedEpisodes": 1, "num_watched_episodes": 2 }"#,
        ))
        .unwrap();
        assert_eq!(
            param.find_in(&given).map(|found| found.map(|(key, _)| key)),
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
