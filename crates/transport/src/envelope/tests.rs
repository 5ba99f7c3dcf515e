//! Classifying GraphQL envelopes: unwrapping the root, failures and their statuses, partial data,
//! and agreement with a reference parser on random documents.

use super::*;
use crate::error::ErrorCode;

fn classify_strict(text: &str) -> Envelope {
    classify(text, false, None, None).expect("json")
}

#[test]
fn a_single_root_is_unwrapped_to_its_exact_text() {
    assert_eq!(
        classify_strict(r#"{"data":{"Media":{"id":1,"t":"x"}}}"#),
        Envelope::Success(r#"{"id":1,"t":"x"}"#.into())
    );
    assert_eq!(
        classify_strict(r#"{"data":{"Media":null}}"#),
        Envelope::Success("null".into())
    );
}

#[test]
fn several_roots_or_no_data_return_the_whole_body() {
    for body in [
        r#"{"data":{"a":1,"b":2}}"#,
        r#"{"data":{}}"#,
        r#"{"data":null}"#,
        r#"{"other":1}"#,
        "[1,2]",
        r#"{"errors":[]}"#,
    ] {
        assert_eq!(
            classify_strict(body),
            Envelope::Success(body.into()),
            "{body}"
        );
    }
}

#[test]
fn errors_fail_with_the_first_numeric_status() {
    let body =
        r#"{"data":null,"errors":[{"message":"a","status":"500"},{"message":"b","status":404}]}"#;
    let Envelope::Failure(error) = classify_strict(body) else {
        panic!("should fail")
    };
    assert_eq!(error.code, ErrorCode::GraphQl);
    assert_eq!(error.status, Some(404));
    assert_eq!(
        error.message,
        "The request failed with GraphQL errors: a; b"
    );
    assert_eq!(error.graphql_data.as_deref(), Some("null"));
}

#[test]
fn status_less_errors_report_200() {
    let Envelope::Failure(error) = classify_strict(r#"{"errors":[{"message":"bad field"}]}"#)
    else {
        panic!()
    };
    assert_eq!(error.status, Some(200));
}

#[test]
fn partial_data_needs_the_opt_in_and_a_non_null_root() {
    let body = r#"{"data":{"Media":{"id":1}},"errors":[{"message":"m","status":503}]}"#;
    assert!(matches!(classify_strict(body), Envelope::Failure(_)));
    let Some(Envelope::Partial { result, error }) = classify(body, true, None, None) else {
        panic!()
    };
    assert_eq!(result, r#"{"id":1}"#);
    assert_eq!(error.status, Some(503));
    let null_root = r#"{"data":{"Media":null},"errors":[{"message":"m"}]}"#;
    assert!(matches!(
        classify(null_root, true, None, None),
        Some(Envelope::Failure(_))
    ));
    let two_roots = r#"{"data":{"a":null,"b":{"id":2}},"errors":[{"message":"m"}]}"#;
    assert_eq!(
        classify(two_roots, true, None, None),
        Some(Envelope::Partial {
            result: two_roots.into(),
            error: match classify_strict(two_roots) {
                Envelope::Failure(e) => e,
                _ => panic!(),
            }
        })
    );
}

#[test]
fn non_json_is_not_an_envelope() {
    assert_eq!(classify("<html>oops</html>", false, None, None), None);
    assert_eq!(classify("", false, None, None), None);
}

fn failure_of(body: &str) -> TransportError {
    match classify_strict(body) {
        Envelope::Failure(error) => error,
        other => panic!("{body} should fail, got {other:?}"),
    }
}

#[test]
fn any_errors_member_but_null_or_an_empty_array_is_a_failure() {
    for body in [
        r#"{"errors":[null]}"#,
        r#"{"errors":[1,2,3]}"#,
        r#"{"errors":"boom"}"#,
        r#"{"errors":{"message":"x"}}"#,
        r#"{"errors":0}"#,
        r#"{"errors":{}}"#,
        r#"{"data":{"Media":{"id":1}},"errors":[{}]}"#,
    ] {
        let error = failure_of(body);
        assert_eq!(error.code, ErrorCode::GraphQl, "{body}");
        assert_eq!(error.status, Some(200), "no usable status: {body}");
        assert!(
            error.message.contains(GENERIC_MESSAGE),
            "{body}: {}",
            error.message
        );
    }
    for body in [
        r#"{"errors":null,"data":{"a":1}}"#,
        r#"{"errors":[],"data":{"a":1}}"#,
        r#"{"errors":[ ],"data":{"a":1}}"#,
    ] {
        assert_eq!(
            classify_strict(body),
            Envelope::Success("1".into()),
            "{body}"
        );
    }
}

#[test]
fn only_an_integer_status_from_100_to_599_counts() {
    assert_eq!(
        failure_of(r#"{"errors":[null,{"message":"m","status":500}]}"#).status,
        Some(500)
    );
    assert_eq!(
        failure_of(r#"{"errors":[{"status":1e400},{"status":503}]}"#).status,
        Some(503)
    );
    assert_eq!(
        failure_of(r#"{"errors":[{"status":5e2}]}"#).status,
        Some(500)
    );
    assert_eq!(
        failure_of(
            r#"{"errors":[{"status":500.5},{"status":99},{"status":600},{"status":"500"}]}"#
        )
        .status,
        Some(200)
    );
    assert_eq!(errors_status(r#"[{"status":429}]"#), Some(429));
    assert_eq!(errors_status(r#"[{"status":-429}]"#), None);
    assert_eq!(errors_status("not json"), None);
}

#[test]
fn duplicate_keys_resolve_to_the_last_as_json_parse_does() {
    let error = failure_of(
        r#"{"errors":[],"data":{"Media":1},"errors":[{"message":"late","status":502}]}"#,
    );
    assert_eq!(error.status, Some(502));
    assert_eq!(
        classify_strict(r#"{"errors":[{"message":"early"}],"errors":null,"data":{"a":1}}"#),
        Envelope::Success("1".into())
    );
    assert_eq!(
        classify_strict(r#"{"data":{"a":1},"data":{"b":2}}"#),
        Envelope::Success("2".into())
    );
    assert_eq!(
        classify_strict(r#"{"data":{"a":1,"a":2}}"#),
        Envelope::Success("2".into()),
        "one distinct root"
    );
    assert_eq!(
        failure_of(r#"{"errors":[{"message":"a","message":"b"}]}"#).message,
        "The request failed with GraphQL errors: b"
    );
    assert_eq!(
        failure_of(r#"{"\u0065rrors":[1]}"#).code,
        ErrorCode::GraphQl,
        "keys compare decoded"
    );
}

#[test]
fn depth_is_unlimited() {
    let deep = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let body = format!(r#"{{"errors":[{{"message":{deep},"status":503}}]}}"#);
    let error = failure_of(&body);
    assert_eq!(error.status, Some(503));
    assert!(error.message.contains(GENERIC_MESSAGE));
    assert!(is_json(&deep));
    assert!(!is_json(&deep[1..]));
}

/// A seeded generator of JSON texts (valid or slightly broken), shallow enough for
/// serde_json's recursive parser, which serves as the reference: it agrees with `JSON.parse`
/// on validity and keeps the last of duplicate keys.
fn random_document(rng: &mut fastrand::Rng) -> String {
    fn value(rng: &mut fastrand::Rng, depth: u32, out: &mut String) {
        let keys = ["data", "errors", "message", "status", "Media", "x"];
        match rng.u32(0..if depth > 4 { 6 } else { 9 }) {
            0 => out.push_str("null"),
            1 => out.push_str(["true", "false"][rng.usize(0..2)]),
            2 => out.push_str(
                [
                    "0", "-1", "200", "429", "500", "503", "599", "600", "99", "5e2", "500.5",
                    "1e300", "-0",
                ][rng.usize(0..13)],
            ),
            3 => out
                .push_str(["\"\"", "\"m\"", "\"500\"", "\"\\u0041\\n\"", "\"é\""][rng.usize(0..5)]),
            4 | 5 => out.push_str(&format!("\"{}\"", keys[rng.usize(0..keys.len())])),
            6 | 7 => {
                out.push('{');
                for i in 0..rng.usize(0..4) {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&format!("\"{}\":", keys[rng.usize(0..keys.len())]));
                    value(rng, depth + 1, out);
                }
                out.push('}');
            }
            _ => {
                out.push('[');
                for i in 0..rng.usize(0..4) {
                    if i > 0 {
                        out.push(',');
                    }
                    value(rng, depth + 1, out);
                }
                out.push(']');
            }
        }
    }
    let mut out = String::new();
    value(rng, 0, &mut out);
    // Now and then, break it.
    if rng.u32(0..10) == 0 && !out.is_empty() {
        let at = rng.usize(0..out.len());
        if out.is_char_boundary(at) {
            out.insert(at, ['}', ']', ',', ':', '"', 'x'][rng.usize(0..6)]);
        }
    }
    out
}

#[test]
fn classification_matches_the_reference_parser_on_random_documents() {
    let mut rng = fastrand::Rng::with_seed(29);
    let mut failures = 0;
    for _ in 0..20_000 {
        let text = random_document(&mut rng);
        let reference = serde_json::from_str::<serde_json::Value>(&text);
        assert_eq!(is_json(&text), reference.is_ok(), "validity of {text}");
        let Ok(value) = reference else {
            assert_eq!(classify(&text, false, None, None), None, "{text}");
            continue;
        };
        let errors = value
            .get("errors")
            .filter(|e| !e.is_null() && e.as_array().is_none_or(|a| !a.is_empty()));
        let outcome = classify(&text, false, None, None).expect("valid JSON");
        match (errors, outcome) {
            (Some(errors), Envelope::Failure(error)) => {
                failures += 1;
                let expected = errors.as_array().and_then(|entries| {
                    entries.iter().find_map(|e| {
                        let n = e.get("status")?.as_f64()?;
                        (n.fract() == 0.0 && (100.0..=599.0).contains(&n)).then_some(n as u16)
                    })
                });
                assert_eq!(error.status, Some(expected.unwrap_or(200)), "{text}");
            }
            (None, Envelope::Success(result)) => {
                let data_roots = value
                    .get("data")
                    .and_then(|d| d.as_object())
                    .filter(|r| r.len() == 1);
                let expected = match data_roots {
                    Some(roots) => roots.values().next().cloned().unwrap_or_default(),
                    None => value.clone(),
                };
                assert_eq!(
                    serde_json::from_str::<serde_json::Value>(&result).ok(),
                    Some(expected),
                    "{text}"
                );
            }
            (errors, outcome) => panic!("{text}: errors {errors:?} but {outcome:?}"),
        }
    }
    assert!(
        failures > 500,
        "the generator produces failures ({failures})"
    );
}

#[test]
fn one_pass_records_the_root_members_and_those_of_object_valued_roots() {
    let text = r#"{"data":{"Media":{"id":1,"deep":{"x":2}},"list":[{"y":3}]},"errors":null,"n":4}"#;
    let skeleton = Skeleton::of(text).expect("valid");
    let recorded: Vec<(Option<usize>, &str, &str)> = skeleton
        .members
        .iter()
        .map(|m| (m.parent, slice(text, m.key), slice(text, m.value)))
        .collect();
    assert_eq!(
        recorded,
        [
            (
                None,
                r#""data""#,
                r#"{"Media":{"id":1,"deep":{"x":2}},"list":[{"y":3}]}"#
            ),
            (Some(0), r#""Media""#, r#"{"id":1,"deep":{"x":2}}"#),
            (Some(0), r#""list""#, r#"[{"y":3}]"#),
            (None, r#""errors""#, "null"),
            (None, r#""n""#, "4"),
        ]
    );
}
