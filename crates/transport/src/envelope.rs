//! Reading a 2xx GraphQL body: success, strict failure, or accepted partial data (decisions D29).
//!
//! AniList reports many failures inside HTTP 200 envelopes, so the breaker and the retry policy
//! need the upstream status an error entry carries (transport.md 1.9). What counts is what
//! `JSON.parse` sees in the same bytes: any depth, duplicate keys resolved by the last one, and
//! an `errors` member that is neither `null` nor `[]` is a failure whatever its entries look
//! like. The body is scanned iteratively (no recursion, so no depth limit), only the envelope's
//! skeleton is decoded, and the result is handed on as the exact JSON text of the value the
//! caller receives, for JavaScript to parse once.

use crate::error::TransportError;
use crate::rate_limit::RateLimitInfo;

#[derive(Debug, PartialEq)]
pub enum Envelope {
    /// The JSON text of the call's result.
    Success(String),
    /// `allowPartialData`: the result, and the error that still has to be reported and counted.
    Partial { result: String, error: TransportError },
    Failure(TransportError),
}

/// The message of an entry that has no string `message` (or is not an object at all).
const GENERIC_MESSAGE: &str = crate::error::messages::GRAPHQL_ENTRY;

/// Classify a 2xx body. `None` when it is not JSON at all (decisions D11 makes that an API error).
pub fn classify(
    text: &str,
    allow_partial: bool,
    rate_limit: Option<RateLimitInfo>,
    content_type: Option<String>,
) -> Option<Envelope> {
    let value = parse_document(text)?;
    let Some(members) = object_members(text, value) else {
        // Valid JSON that is not an envelope object has nothing to unwrap.
        return Some(Envelope::Success(text.to_string()));
    };
    let data = last_member(&members, "data");
    let errors = last_member(&members, "errors");
    let roots = data.and_then(|d| object_members(text, d)).map(distinct_members);
    let result = || match &roots {
        Some(roots) if roots.len() == 1 => slice(text, roots[0].1).to_string(),
        _ => text.to_string(),
    };
    let Some(errors) = errors.filter(|e| !is_null_or_empty_array(text, *e)) else {
        return Some(Envelope::Success(result()));
    };
    let entries = array_items(text, errors).unwrap_or_default();
    let status = entries.iter().find_map(|entry| entry_status(text, *entry)).unwrap_or(200);
    let mut messages: Vec<String> = entries.iter().map(|entry| entry_message(text, *entry)).collect();
    if messages.is_empty() {
        // `errors` is an object, a string, a number…: still a failure, with what can be said.
        messages.push(GENERIC_MESSAGE.to_string());
    }
    let error = TransportError::graphql(
        status,
        &messages,
        slice(text, errors).to_string(),
        data.map(|d| slice(text, d).to_string()).unwrap_or_else(|| "null".into()),
        rate_limit,
        content_type,
    );
    let has_data = roots.as_ref().is_some_and(|r| r.iter().any(|(_, v)| slice(text, *v) != "null"));
    if allow_partial && has_data {
        return Some(Envelope::Partial { result: result(), error });
    }
    Some(Envelope::Failure(error))
}

/// Whether `text` is one JSON value as `JSON.parse` reads it (the REST result rule, D11).
pub fn is_json(text: &str) -> bool {
    parse_document(text).is_some()
}

/// The upstream status an `errors` array carries (its first entry whose `status` is an integer
/// 100–599), from the array's JSON text; None when there is none or it is not JSON. The one
/// owner of that rule: the JavaScript error class asks it too.
pub fn errors_status(errors_json: &str) -> Option<u16> {
    let value = parse_document(errors_json)?;
    array_items(errors_json, value)?.into_iter().find_map(|entry| entry_status(errors_json, entry))
}

/// A value's byte range in the text.
type Span = (usize, usize);

fn slice(text: &str, span: Span) -> &str {
    &text[span.0..span.1]
}

fn entry_status(text: &str, entry: Span) -> Option<u16> {
    let members = object_members(text, entry)?;
    let status = slice(text, last_member(&members, "status")?);
    let n: f64 = status.parse().ok().filter(|_| status.starts_with(|c: char| c == '-' || c.is_ascii_digit()))?;
    (n.fract() == 0.0 && (100.0..=599.0).contains(&n)).then_some(n as u16)
}

fn entry_message(text: &str, entry: Span) -> String {
    object_members(text, entry)
        .and_then(|members| last_member(&members, "message"))
        .and_then(|m| serde_json::from_str::<String>(slice(text, m)).ok())
        .unwrap_or_else(|| GENERIC_MESSAGE.to_string())
}

fn is_null_or_empty_array(text: &str, span: Span) -> bool {
    let value = slice(text, span);
    value == "null" || array_items(text, span).is_some_and(|items| items.is_empty())
}

/// The last value given for `name` (as `JSON.parse` keeps it).
fn last_member(members: &[(String, Span)], name: &str) -> Option<Span> {
    members.iter().rev().find(|(key, _)| key == name).map(|(_, span)| *span)
}

/// Members with duplicate keys resolved (the last value wins), in first-appearance order.
fn distinct_members(members: Vec<(String, Span)>) -> Vec<(String, Span)> {
    let mut out: Vec<(String, Span)> = Vec::with_capacity(members.len());
    for (key, span) in members {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some(existing) => existing.1 = span,
            None => out.push((key, span)),
        }
    }
    out
}

/// A key as `JSON.parse` decodes it; a key serde cannot decode (a lone surrogate escape) is
/// compared by its raw text, which cannot equal `data`, `errors`, `message` or `status`.
fn decode_key(raw: &str) -> String {
    serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())
}

/// The whole text as one JSON value (surrounding whitespace allowed), or None.
fn parse_document(text: &str) -> Option<Span> {
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    let end = skip_value(bytes, start)?;
    (skip_ws(bytes, end) == bytes.len()).then_some((start, end))
}

/// The members of a valid object value, or None when the value is not an object.
fn object_members(text: &str, span: Span) -> Option<Vec<(String, Span)>> {
    let bytes = text.as_bytes();
    if bytes.get(span.0) != Some(&b'{') {
        return None;
    }
    let mut members = Vec::new();
    let mut at = skip_ws(bytes, span.0 + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some(members);
    }
    loop {
        let key_end = skip_string(bytes, at)?;
        let key = decode_key(&text[at..key_end]);
        at = skip_ws(bytes, key_end) + 1; // the colon
        let value_start = skip_ws(bytes, at);
        let value_end = skip_value(bytes, value_start)?;
        members.push((key, (value_start, value_end)));
        at = skip_ws(bytes, value_end);
        if bytes.get(at) == Some(&b'}') {
            return Some(members);
        }
        at = skip_ws(bytes, at + 1); // the comma
    }
}

/// The items of a valid array value, or None when the value is not an array.
fn array_items(text: &str, span: Span) -> Option<Vec<Span>> {
    let bytes = text.as_bytes();
    if bytes.get(span.0) != Some(&b'[') {
        return None;
    }
    let mut items = Vec::new();
    let mut at = skip_ws(bytes, span.0 + 1);
    if bytes.get(at) == Some(&b']') {
        return Some(items);
    }
    loop {
        let end = skip_value(bytes, at)?;
        items.push((at, end));
        at = skip_ws(bytes, end);
        if bytes.get(at) == Some(&b']') {
            return Some(items);
        }
        at = skip_ws(bytes, at + 1);
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        at += 1;
    }
    at
}

/// Validate the JSON value starting at `at` (RFC 8259, as `JSON.parse` accepts it) and return
/// where it ends. Iterative: nesting is tracked on a heap stack, so any depth is fine.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    /// What the scanner expects next inside the innermost container.
    #[derive(Clone, Copy, PartialEq)]
    enum Open {
        Object,
        Array,
    }
    let mut stack: Vec<Open> = Vec::new();
    let mut at = at;
    loop {
        // A value.
        at = skip_ws(bytes, at);
        match bytes.get(at)? {
            b'{' => {
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b'}') {
                    at += 1;
                } else {
                    at = skip_ws(bytes, skip_string(bytes, at)?);
                    if bytes.get(at) != Some(&b':') {
                        return None;
                    }
                    stack.push(Open::Object);
                    at += 1;
                    continue;
                }
            }
            b'[' => {
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b']') {
                    at += 1;
                } else {
                    stack.push(Open::Array);
                    continue;
                }
            }
            b'"' => at = skip_string(bytes, at)?,
            b't' => at = skip_literal(bytes, at, b"true")?,
            b'f' => at = skip_literal(bytes, at, b"false")?,
            b'n' => at = skip_literal(bytes, at, b"null")?,
            _ => at = skip_number(bytes, at)?,
        }
        // After a value: close containers, or move to the next member or item.
        loop {
            let Some(open) = stack.last().copied() else { return Some(at) };
            at = skip_ws(bytes, at);
            match (open, bytes.get(at)?) {
                (Open::Object, b'}') | (Open::Array, b']') => {
                    stack.pop();
                    at += 1;
                }
                (Open::Array, b',') => {
                    at += 1;
                    break;
                }
                (Open::Object, b',') => {
                    at = skip_ws(bytes, skip_string(bytes, skip_ws(bytes, at + 1))?);
                    if bytes.get(at) != Some(&b':') {
                        return None;
                    }
                    at += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
}

fn skip_literal(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    bytes.get(at..at + literal.len()).filter(|b| *b == literal).map(|_| at + literal.len())
}

/// A string starting at `at` (its opening quote); returns the index after the closing quote.
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    loop {
        match *bytes.get(at)? {
            b'"' => return Some(at + 1),
            b'\\' => {
                match bytes.get(at + 1)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                    b'u' => {
                        let hex = bytes.get(at + 2..at + 6)?;
                        if !hex.iter().all(u8::is_ascii_hexdigit) {
                            return None;
                        }
                        at += 6;
                    }
                    _ => return None,
                }
            }
            0x00..=0x1f => return None,
            _ => at += 1,
        }
    }
}

/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
fn skip_number(bytes: &[u8], at: usize) -> Option<usize> {
    let digits = |mut at: usize| {
        let start = at;
        while bytes.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        (at > start).then_some(at)
    };
    let mut at = at;
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    at = if bytes.get(at) == Some(&b'0') { at + 1 } else { digits(at)? };
    if bytes.get(at) == Some(&b'.') {
        at = digits(at + 1)?;
    }
    if matches!(bytes.get(at), Some(b'e' | b'E')) {
        at += 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        at = digits(at)?;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn classify_strict(text: &str) -> Envelope {
        classify(text, false, None, None).expect("json")
    }

    #[test]
    fn a_single_root_is_unwrapped_to_its_exact_text() {
        assert_eq!(classify_strict(r#"{"data":{"Media":{"id":1,"t":"x"}}}"#), Envelope::Success(r#"{"id":1,"t":"x"}"#.into()));
        assert_eq!(classify_strict(r#"{"data":{"Media":null}}"#), Envelope::Success("null".into()));
    }

    #[test]
    fn several_roots_or_no_data_return_the_whole_body() {
        for body in [r#"{"data":{"a":1,"b":2}}"#, r#"{"data":{}}"#, r#"{"data":null}"#, r#"{"other":1}"#, "[1,2]", r#"{"errors":[]}"#] {
            assert_eq!(classify_strict(body), Envelope::Success(body.into()), "{body}");
        }
    }

    #[test]
    fn errors_fail_with_the_first_numeric_status() {
        let body = r#"{"data":null,"errors":[{"message":"a","status":"500"},{"message":"b","status":404}]}"#;
        let Envelope::Failure(error) = classify_strict(body) else { panic!("should fail") };
        assert_eq!(error.code, ErrorCode::GraphQl);
        assert_eq!(error.status, Some(404));
        assert_eq!(error.message, "The request failed with GraphQL errors: a; b");
        assert_eq!(error.graphql_data.as_deref(), Some("null"));
    }

    #[test]
    fn status_less_errors_report_200() {
        let Envelope::Failure(error) = classify_strict(r#"{"errors":[{"message":"bad field"}]}"#) else { panic!() };
        assert_eq!(error.status, Some(200));
    }

    #[test]
    fn partial_data_needs_the_opt_in_and_a_non_null_root() {
        let body = r#"{"data":{"Media":{"id":1}},"errors":[{"message":"m","status":503}]}"#;
        assert!(matches!(classify_strict(body), Envelope::Failure(_)));
        let Some(Envelope::Partial { result, error }) = classify(body, true, None, None) else { panic!() };
        assert_eq!(result, r#"{"id":1}"#);
        assert_eq!(error.status, Some(503));
        let null_root = r#"{"data":{"Media":null},"errors":[{"message":"m"}]}"#;
        assert!(matches!(classify(null_root, true, None, None), Some(Envelope::Failure(_))));
        let two_roots = r#"{"data":{"a":null,"b":{"id":2}},"errors":[{"message":"m"}]}"#;
        assert_eq!(classify(two_roots, true, None, None), Some(Envelope::Partial { result: two_roots.into(), error: match classify_strict(two_roots) { Envelope::Failure(e) => e, _ => panic!() } }));
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
            assert!(error.message.contains(GENERIC_MESSAGE), "{body}: {}", error.message);
        }
        for body in [r#"{"errors":null,"data":{"a":1}}"#, r#"{"errors":[],"data":{"a":1}}"#, r#"{"errors":[ ],"data":{"a":1}}"#] {
            assert_eq!(classify_strict(body), Envelope::Success("1".into()), "{body}");
        }
    }

    #[test]
    fn only_an_integer_status_from_100_to_599_counts() {
        assert_eq!(failure_of(r#"{"errors":[null,{"message":"m","status":500}]}"#).status, Some(500));
        assert_eq!(failure_of(r#"{"errors":[{"status":1e400},{"status":503}]}"#).status, Some(503));
        assert_eq!(failure_of(r#"{"errors":[{"status":5e2}]}"#).status, Some(500));
        assert_eq!(failure_of(r#"{"errors":[{"status":500.5},{"status":99},{"status":600},{"status":"500"}]}"#).status, Some(200));
        assert_eq!(errors_status(r#"[{"status":429}]"#), Some(429));
        assert_eq!(errors_status(r#"[{"status":-429}]"#), None);
        assert_eq!(errors_status("not json"), None);
    }

    #[test]
    fn duplicate_keys_resolve_to_the_last_as_json_parse_does() {
        let error = failure_of(r#"{"errors":[],"data":{"Media":1},"errors":[{"message":"late","status":502}]}"#);
        assert_eq!(error.status, Some(502));
        assert_eq!(classify_strict(r#"{"errors":[{"message":"early"}],"errors":null,"data":{"a":1}}"#), Envelope::Success("1".into()));
        assert_eq!(classify_strict(r#"{"data":{"a":1},"data":{"b":2}}"#), Envelope::Success("2".into()));
        assert_eq!(classify_strict(r#"{"data":{"a":1,"a":2}}"#), Envelope::Success("2".into()), "one distinct root");
        assert_eq!(failure_of(r#"{"errors":[{"message":"a","message":"b"}]}"#).message, "The request failed with GraphQL errors: b");
        assert_eq!(failure_of(r#"{"\u0065rrors":[1]}"#).code, ErrorCode::GraphQl, "keys compare decoded");
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
                2 => out.push_str(["0", "-1", "200", "429", "500", "503", "599", "600", "99", "5e2", "500.5", "1e300", "-0"][rng.usize(0..13)]),
                3 => out.push_str(["\"\"", "\"m\"", "\"500\"", "\"\\u0041\\n\"", "\"é\""][rng.usize(0..5)]),
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
            let errors = value.get("errors").filter(|e| !e.is_null() && e.as_array().is_none_or(|a| !a.is_empty()));
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
                    let data_roots = value.get("data").and_then(|d| d.as_object()).filter(|r| r.len() == 1);
                    let expected = match data_roots {
                        Some(roots) => roots.values().next().cloned().unwrap_or_default(),
                        None => value.clone(),
                    };
                    assert_eq!(serde_json::from_str::<serde_json::Value>(&result).ok(), Some(expected), "{text}");
                }
                (errors, outcome) => panic!("{text}: errors {errors:?} but {outcome:?}"),
            }
        }
        assert!(failures > 500, "the generator produces failures ({failures})");
    }
}
