//! Local validation of caller variables against the schema argument types, so that mistakes
//! surface as an `AniLinkValidationError` listing every problem, before any request is spent on
//! AniList's rate limit.
//!
//! The variables are read where they lie, in the caller's JSON text (`crate::json_text`): values
//! are borrowed slices of it, never a tree that is written out again, because that same text
//! goes into the request body as it is (`requests.rs`).

use serde_json::value::RawValue;
use serde_json::Value;

use super::catalog::{catalog, Catalog, InputType, Operation, ScalarCheck, TypeRef};
use crate::json_text::{
    array_of, boolean_of, is_null, is_number, object_of, starts_with, string_of, whole,
    whole_number, Members,
};

/// Validates caller variables against the operation's variable types and requirement rules.
/// `object` is the variables' JSON text, already known to be an object (`None` for `null`,
/// which counts as `{}`).
///
/// Checks scalars (`Int` an integer within the 32-bit range, `Float` a number, `String`,
/// `Boolean`, `ID` a string or an integer), enums (the message lists the allowed values), lists
/// (each element, with `[i]` in the path; a single value where a list is expected is checked as
/// one element, as GraphQL input coercion allows), input objects (recursively, unknown
/// properties rejected), missing non-null arguments, unknown variables, then the operation's
/// requirement rules (e.g. `media` needs at least one variable other than `asHtml`). Values in
/// messages are rendered as JSON; every problem is returned.
pub fn validate_variables(op: &Operation, object: Option<&str>) -> Result<(), Vec<String>> {
    let provided: Members = match object {
        None => Members::new(),
        Some(text) => serde_json::from_str(text).map_err(|error| {
            vec![format!(
                "Invalid variables: not JSON text ({error}). Expected an object."
            )]
        })?,
    };
    let mut checker = Checker {
        catalog: catalog(),
        problems: Vec::new(),
    };
    for (name, value) in &provided {
        match op.variable(name.as_str()) {
            Some(definition) => checker.check(&definition.type_ref, value, name.as_str()),
            None => checker
                .problems
                .push(format!("Unknown variable: {}", name.as_str())),
        }
    }
    for definition in op.non_null_variables.iter().map(|&at| &op.variables[at]) {
        if !provided.contains_key(definition.name.as_str()) {
            checker
                .problems
                .push(missing(&definition.name, &definition.type_ref));
        }
    }
    for requirement in &op.requirements {
        let satisfied = requirement.any_of.iter().any(|name| {
            provided
                .get(name.as_str())
                .is_some_and(|value| !is_null(value))
        });
        if !satisfied {
            checker.problems.push(requirement.message.clone());
        }
    }
    if checker.problems.is_empty() {
        Ok(())
    } else {
        Err(checker.problems)
    }
}

fn missing(path: &str, type_ref: &TypeRef) -> String {
    format!("Invalid {path}: undefined. Expected type: {type_ref}")
}

struct Checker {
    catalog: &'static Catalog,
    problems: Vec<String>,
}

impl Checker {
    fn check(&mut self, type_ref: &TypeRef, value: &RawValue, path: &str) {
        match type_ref {
            TypeRef::NonNull(inner) => {
                if is_null(value) {
                    self.problems.push(expected_type(path, value, type_ref));
                } else {
                    self.check_present(inner, type_ref, value, path);
                }
            }
            nullable => {
                if !is_null(value) {
                    self.check_present(nullable, type_ref, value, path);
                }
            }
        }
    }

    /// Checks a non-null value against `type_ref` (never `NonNull`); `shown` is the type named
    /// in messages, which keeps the `!` of the declaration.
    fn check_present(&mut self, type_ref: &TypeRef, shown: &TypeRef, value: &RawValue, path: &str) {
        match type_ref {
            TypeRef::List(element) => match array_of(value) {
                Some(items) => {
                    for (index, item) in items.into_iter().enumerate() {
                        self.check(element, item, &format!("{path}[{index}]"));
                    }
                }
                None => self.check(element, value, path),
            },
            TypeRef::Named(name) => self.check_named(name, shown, value, path),
            TypeRef::NonNull(inner) => self.check(inner, value, path),
        }
    }

    fn check_named(&mut self, name: &str, shown: &TypeRef, value: &RawValue, path: &str) {
        match self.catalog.input_types.get(name) {
            Some(InputType::Scalar { check }) => {
                if !scalar_matches(*check, value) {
                    self.problems.push(expected_type(path, value, shown));
                }
            }
            Some(InputType::Enum { values }) => {
                let known = string_of(value)
                    .is_some_and(|text| values.iter().any(|allowed| *allowed == text.as_str()));
                if !known {
                    self.problems.push(format!(
                        "Invalid {path}: {}. Expected one of: {}",
                        shown_value(value),
                        values.join(", ")
                    ));
                }
            }
            Some(InputType::InputObject { fields }) => match object_of(value) {
                Some(properties) => {
                    for (property, property_value) in &properties {
                        let property_path = format!("{path}.{}", property.as_str());
                        match fields.get(property.as_str()) {
                            Some(field_type) => {
                                self.check(field_type, property_value, &property_path)
                            }
                            None => self
                                .problems
                                .push(format!("Unknown property: {property_path}")),
                        }
                    }
                    for (field, field_type) in fields {
                        if field_type.is_non_null() && !properties.contains_key(field.as_str()) {
                            self.problems
                                .push(missing(&format!("{path}.{field}"), field_type));
                        }
                    }
                }
                None => self.problems.push(format!(
                    "Invalid {path}: {}. Expected an object.",
                    shown_value(value)
                )),
            },
            // Not reachable with the generated catalog (a unit test checks every type resolves).
            None => self.problems.push(expected_type(path, value, shown)),
        }
    }
}

fn expected_type(path: &str, value: &RawValue, shown: &TypeRef) -> String {
    format!(
        "Invalid {path}: {}. Expected type: {shown}",
        shown_value(value)
    )
}

/// A value in a message, as JavaScript's `JSON.stringify` writes it. Only a refused value is
/// ever read whole, and only to be shown.
fn shown_value(value: &RawValue) -> String {
    whole(value)
        .map(|value| js_json(&value))
        .unwrap_or_else(|| value.get().to_string())
}

/// A value as JavaScript's `JSON.stringify` writes it, so messages read the same as the
/// caller's input: integral numbers without `.0`, exponents with a sign (`1e+21`).
fn js_json(value: &Value) -> String {
    match value {
        Value::Number(number) => match number.as_f64() {
            Some(float) if number.is_f64() && float.fract() == 0.0 && float.abs() < 1e21 => {
                format!("{float:.0}")
            }
            _ => {
                let text = number.to_string();
                match text.split_once('e') {
                    Some((mantissa, exponent))
                        if exponent.starts_with(|c: char| c.is_ascii_digit()) =>
                    {
                        format!("{mantissa}e+{exponent}")
                    }
                    _ => text,
                }
            }
        },
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(js_json).collect::<Vec<_>>().join(",")
        ),
        Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .map(|(key, item)| format!("{}:{}", Value::from(key.as_str()), js_json(item)))
                .collect();
            format!("{{{}}}", members.join(","))
        }
        other => other.to_string(),
    }
}

fn scalar_matches(check: ScalarCheck, value: &RawValue) -> bool {
    match check {
        ScalarCheck::Int => whole_number(value).is_some_and(|number| i32::try_from(number).is_ok()),
        ScalarCheck::Float => is_number(value),
        ScalarCheck::String => starts_with(value, b'"'),
        ScalarCheck::Boolean => boolean_of(value).is_some(),
        ScalarCheck::Id => starts_with(value, b'"') || whole_number(value).is_some(),
        ScalarCheck::Any => true,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::anilist::operation;
    use crate::json_text::raw;

    /// Variables as the facade hands them over: JSON text, `null` as none.
    fn validate(key: &str, variables: Value) -> Result<(), Vec<String>> {
        let text = (!variables.is_null()).then(|| variables.to_string());
        validate_variables(operation(key).expect(key), text.as_deref())
    }

    fn problems(key: &str, variables: Value) -> Vec<String> {
        validate(key, variables).expect_err("variables should be rejected")
    }

    #[test]
    fn accepts_well_typed_variables() {
        assert_eq!(
            validate(
                "query.page.medias",
                json!({
                    "page": 1, "perPage": 50.0, "search": "Frieren", "type": "ANIME", "isAdult": false,
                    "sort": ["POPULARITY_DESC", "ID"], "genre_in": ["Action"], "startDate_greater": 20200101,
                    "countryOfOrigin": "JP", "format_in": null, "asHtml": true
                })
            ),
            Ok(())
        );
        assert_eq!(validate("query.viewer", Value::Null), Ok(()));
        assert_eq!(validate("query.viewer", json!({})), Ok(()));
    }

    #[test]
    fn int_must_be_a_32_bit_integer() {
        assert_eq!(validate("query.media", json!({ "id": 2147483647 })), Ok(()));
        assert_eq!(
            validate("query.media", json!({ "id": -2147483648 })),
            Ok(())
        );
        assert_eq!(
            problems("query.media", json!({ "id": 1.5 })),
            ["Invalid id: 1.5. Expected type: Int"]
        );
        assert_eq!(
            problems("query.media", json!({ "id": "1" })),
            ["Invalid id: \"1\". Expected type: Int"]
        );
        assert_eq!(
            problems("query.media", json!({ "id": 2147483648_i64 })),
            ["Invalid id: 2147483648. Expected type: Int"]
        );
        assert_eq!(
            problems("query.media", json!({ "id": true })),
            ["Invalid id: true. Expected type: Int"]
        );
        assert_eq!(
            problems("query.media", json!({ "startDate": 2.5e15 })),
            ["Invalid startDate: 2500000000000000. Expected type: FuzzyDateInt"]
        );
    }

    #[test]
    fn float_string_boolean() {
        assert_eq!(
            validate(
                "mutation.saveMediaListEntry",
                json!({ "mediaId": 1, "score": 7.5 })
            ),
            Ok(())
        );
        assert_eq!(
            validate(
                "mutation.saveMediaListEntry",
                json!({ "mediaId": 1, "score": 8 })
            ),
            Ok(())
        );
        assert_eq!(
            problems(
                "mutation.saveMediaListEntry",
                json!({ "mediaId": 1, "score": "8", "notes": 3, "private": "yes" })
            ),
            [
                "Invalid notes: 3. Expected type: String",
                "Invalid private: \"yes\". Expected type: Boolean",
                "Invalid score: \"8\". Expected type: Float",
            ]
        );
    }

    #[test]
    fn id_accepts_strings_and_integers() {
        assert!(scalar_matches(ScalarCheck::Id, raw(r#""abc""#)));
        assert!(scalar_matches(ScalarCheck::Id, raw("12")));
        assert!(scalar_matches(ScalarCheck::Id, raw("12.0")));
        assert!(!scalar_matches(ScalarCheck::Id, raw("1.5")));
        assert!(!scalar_matches(ScalarCheck::Id, raw("null")));
        assert!(!scalar_matches(ScalarCheck::Id, raw(r#"["1"]"#)));
    }

    #[test]
    fn enums_list_the_allowed_values() {
        assert_eq!(
            problems("query.media", json!({ "id": 1, "season": "AUTUMN" })),
            ["Invalid season: \"AUTUMN\". Expected one of: WINTER, SPRING, SUMMER, FALL"]
        );
        assert_eq!(
            problems("query.media", json!({ "id": 1, "type": 1 })),
            ["Invalid type: 1. Expected one of: ANIME, MANGA"]
        );
    }

    #[test]
    fn lists_check_each_element_with_its_index() {
        assert_eq!(
            problems(
                "query.media",
                json!({ "id_in": [1, "two", 3, null], "season": "FALL" })
            ),
            ["Invalid id_in[1]: \"two\". Expected type: Int"]
        );
        let sort = problems(
            "query.page.medias",
            json!({ "sort": ["SCORE_DESC", "BEST"] }),
        );
        assert_eq!(sort.len(), 1);
        assert!(
            sort[0].starts_with(
                "Invalid sort[1]: \"BEST\". Expected one of: ID, ID_DESC, TITLE_ROMAJI,"
            ),
            "{sort:?}"
        );
        // GraphQL input coercion: a single value stands for a one-element list.
        assert_eq!(
            validate("query.page.medias", json!({ "sort": "SCORE_DESC" })),
            Ok(())
        );
        assert_eq!(
            problems("query.page.medias", json!({ "id_in": "1" })),
            ["Invalid id_in: \"1\". Expected type: Int"]
        );
    }

    #[test]
    fn fuzzy_date_input_objects() {
        let ok = json!({ "mediaId": 1, "startedAt": { "year": 2024, "month": 1, "day": null }, "completedAt": {} });
        assert_eq!(validate("mutation.saveMediaListEntry", ok), Ok(()));
        assert_eq!(
            problems(
                "mutation.saveMediaListEntry",
                json!({ "mediaId": 1, "startedAt": { "year": "2024", "mnth": 1 }, "completedAt": 20240101 })
            ),
            [
                "Invalid completedAt: 20240101. Expected an object.",
                "Unknown property: startedAt.mnth",
                "Invalid startedAt.year: \"2024\". Expected type: Int",
            ]
        );
    }

    #[test]
    fn nested_input_lists_and_objects() {
        let ok = json!({ "notificationOptions": [{ "type": "ACTIVITY_LIKE", "enabled": false }], "animeListOptions": { "customLists": ["A"] } });
        assert_eq!(validate("mutation.updateUser", ok), Ok(()));
        let bad = problems(
            "mutation.updateUser",
            json!({ "notificationOptions": [{ "type": "NOPE" }, 3], "animeListOptions": { "customLists": [1] } }),
        );
        assert_eq!(bad.len(), 3, "{bad:?}");
        assert_eq!(
            bad[0],
            "Invalid animeListOptions.customLists[0]: 1. Expected type: String"
        );
        assert!(bad[1].starts_with(
            "Invalid notificationOptions[0].type: \"NOPE\". Expected one of: ACTIVITY_MESSAGE,"
        ));
        assert_eq!(
            bad[2],
            "Invalid notificationOptions[1]: 3. Expected an object."
        );
    }

    #[test]
    fn unknown_variables_are_rejected() {
        assert_eq!(
            problems("query.media", json!({ "id": 1, "idd": 2 })),
            ["Unknown variable: idd"]
        );
        assert_eq!(
            problems("query.viewer", json!({ "id": 1 })),
            ["Unknown variable: id"]
        );
    }

    #[test]
    fn non_null_arguments_must_be_given() {
        assert_eq!(
            problems("query.follower", json!({})),
            ["Invalid userId: undefined. Expected type: Int!"]
        );
        assert_eq!(
            problems("query.follower", json!({ "userId": null })),
            ["Invalid userId: null. Expected type: Int!"]
        );
        assert_eq!(
            problems("query.page.following", json!({ "userId": "x" })),
            ["Invalid userId: \"x\". Expected type: Int!"]
        );
        assert_eq!(
            problems("query.markdown", Value::Null),
            ["Invalid markdown: undefined. Expected type: String!"]
        );
        assert_eq!(
            validate("query.follower", json!({ "userId": 1, "sort": ["ID"] })),
            Ok(())
        );
    }

    #[test]
    fn media_needs_a_filter_other_than_as_html() {
        let rule = "The Media query requires at least one filter variable.";
        assert_eq!(problems("query.media", json!({})), [rule]);
        assert_eq!(problems("query.media", Value::Null), [rule]);
        assert_eq!(problems("query.media", json!({ "asHtml": true })), [rule]);
        assert_eq!(problems("query.media", json!({ "id": null })), [rule]);
        assert_eq!(
            validate(
                "query.media",
                json!({ "search": "Frieren", "asHtml": false })
            ),
            Ok(())
        );
        // Type problems and the rule are reported together.
        assert_eq!(
            problems("query.media", json!({ "asHtml": "yes" })),
            ["Invalid asHtml: \"yes\". Expected type: Boolean", rule]
        );
    }

    #[test]
    fn hoisted_variables_take_the_types_of_the_arguments_they_bind() {
        assert_eq!(
            validate(
                "query.user",
                json!({
                    "id": 1, "asHtml": true, "animeStatLimit": 5, "mangaStatLimit": 3,
                    "animeStatSort": ["COUNT_DESC"], "mangaStatSort": ["MEAN_SCORE", "ID"]
                })
            ),
            Ok(())
        );
        assert_eq!(
            problems(
                "query.user",
                json!({ "animeStatLimit": "5", "mangaStatSort": ["COUNT_DESC", "BEST"] })
            ),
            [
                "Invalid animeStatLimit: \"5\". Expected type: Int",
                "Invalid mangaStatSort[1]: \"BEST\". Expected one of: ID, ID_DESC, COUNT, COUNT_DESC, PROGRESS, PROGRESS_DESC, MEAN_SCORE, MEAN_SCORE_DESC",
            ]
        );
        assert_eq!(
            validate(
                "query.mediaListCollection",
                json!({ "userId": 1, "type": "MANGA", "scoreFormat": "POINT_10_DECIMAL" })
            ),
            Ok(())
        );
        assert_eq!(
            problems(
                "query.mediaListCollection",
                json!({ "userId": 1, "type": "MANGA", "scoreFormat": "POINT_7" })
            ),
            ["Invalid scoreFormat: \"POINT_7\". Expected one of: POINT_100, POINT_10_DECIMAL, POINT_10, POINT_5, POINT_3"]
        );
        // Presentation variables are no filter: the Media rule still wants one.
        assert_eq!(
            problems(
                "query.media",
                json!({ "scoreFormat": "POINT_5", "animeStatLimit": 1 })
            ),
            ["The Media query requires at least one filter variable."]
        );
    }

    #[test]
    fn media_list_collection_needs_a_user_and_a_type() {
        assert_eq!(
            problems("query.mediaListCollection", json!({})),
            [
                "The MediaListCollection query requires a userId or userName variable.",
                "The MediaListCollection query requires a type variable.",
            ]
        );
        assert_eq!(
            validate(
                "query.mediaListCollection",
                json!({ "userName": "someone", "type": "ANIME" })
            ),
            Ok(())
        );
    }

    #[test]
    fn every_problem_is_reported() {
        let all = problems(
            "query.page.medias",
            json!({ "page": "1", "type": "TV", "nope": 1, "genre_in": [1, 2] }),
        );
        assert_eq!(
            all,
            [
                "Invalid genre_in[0]: 1. Expected type: String",
                "Invalid genre_in[1]: 2. Expected type: String",
                "Unknown variable: nope",
                "Invalid page: \"1\". Expected type: Int",
                "Invalid type: \"TV\". Expected one of: ANIME, MANGA",
            ]
        );
    }

    #[test]
    fn values_are_rendered_like_javascript_json() {
        assert_eq!(js_json(&json!(2.0)), "2");
        assert_eq!(js_json(&json!(-0.5)), "-0.5");
        assert_eq!(js_json(&json!(1e21)), "1e+21");
        assert_eq!(js_json(&json!(1.5e-7)), "1.5e-7");
        assert_eq!(
            js_json(&json!({ "a": [1.0, "x", null, true] })),
            r#"{"a":[1,"x",null,true]}"#
        );
    }

    #[test]
    fn problems_come_in_name_order_whatever_order_the_caller_wrote() {
        let media = operation("query.page.medias").unwrap();
        let written = r#"{"type":"TV","page":"1","nope":1}"#;
        assert_eq!(
            validate_variables(media, Some(written)).unwrap_err(),
            [
                "Unknown variable: nope",
                "Invalid page: \"1\". Expected type: Int",
                "Invalid type: \"TV\". Expected one of: ANIME, MANGA",
            ]
        );
    }

    #[test]
    fn text_is_read_as_json_reads_it() {
        let media = operation("query.media").unwrap();
        for accepted in [
            r#"{"s\u0065ason":"F\u0041LL","id":1}"#,
            r#" { "id" : 1 , "asHtml" : false } "#,
            r#"{"id":1e0,"id_in":[1,2.0,null]}"#,
            // A repeated name keeps its last value, as a JSON object read into a map does.
            r#"{"id":"x","id":1}"#,
        ] {
            assert_eq!(
                validate_variables(media, Some(accepted)),
                Ok(()),
                "{accepted}"
            );
        }
        assert_eq!(
            validate_variables(media, Some(r#"{"id":1,"season":"f\u0041ll"}"#)).unwrap_err(),
            ["Invalid season: \"fAll\". Expected one of: WINTER, SPRING, SUMMER, FALL"]
        );
        assert_eq!(
            validate_variables(media, Some(r#"{"id":1.50}"#)).unwrap_err(),
            ["Invalid id: 1.5. Expected type: Int"],
            "a value is shown as JavaScript writes it, not as the text had it"
        );
        assert!(validate_variables(media, Some("{")).unwrap_err()[0]
            .starts_with("Invalid variables: not JSON text"));
    }
}
