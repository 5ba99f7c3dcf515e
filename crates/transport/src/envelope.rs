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
    Partial {
        result: String,
        error: TransportError,
    },
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
    let roots = data
        .and_then(|d| object_members(text, d))
        .map(distinct_members);
    let result = || match &roots {
        Some(roots) if roots.len() == 1 => slice(text, roots[0].1).to_string(),
        _ => text.to_string(),
    };
    let Some(errors) = errors.filter(|e| !is_null_or_empty_array(text, *e)) else {
        return Some(Envelope::Success(result()));
    };
    let entries = array_items(text, errors).unwrap_or_default();
    let status = entries
        .iter()
        .find_map(|entry| entry_status(text, *entry))
        .unwrap_or(200);
    let mut messages: Vec<String> = entries
        .iter()
        .map(|entry| entry_message(text, *entry))
        .collect();
    if messages.is_empty() {
        // `errors` is an object, a string, a number…: still a failure, with what can be said.
        messages.push(GENERIC_MESSAGE.to_string());
    }
    let error = TransportError::graphql(
        status,
        &messages,
        slice(text, errors).to_string(),
        data.map(|d| slice(text, d).to_string())
            .unwrap_or_else(|| "null".into()),
        rate_limit,
        content_type,
    );
    let has_data = roots
        .as_ref()
        .is_some_and(|r| r.iter().any(|(_, v)| slice(text, *v) != "null"));
    if allow_partial && has_data {
        return Some(Envelope::Partial {
            result: result(),
            error,
        });
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
    array_items(errors_json, value)?
        .into_iter()
        .find_map(|entry| entry_status(errors_json, entry))
}

/// A value's byte range in the text.
type Span = (usize, usize);

fn slice(text: &str, span: Span) -> &str {
    &text[span.0..span.1]
}

fn entry_status(text: &str, entry: Span) -> Option<u16> {
    let members = object_members(text, entry)?;
    let status = slice(text, last_member(&members, "status")?);
    let n: f64 = status
        .parse()
        .ok()
        .filter(|_| status.starts_with(|c: char| c == '-' || c.is_ascii_digit()))?;
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
    members
        .iter()
        .rev()
        .find(|(key, _)| key == name)
        .map(|(_, span)| *span)
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
            let Some(open) = stack.last().copied() else {
                return Some(at);
            };
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
    bytes
        .get(at..at + literal.len())
        .filter(|b| *b == literal)
        .map(|_| at + literal.len())
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
            b'\\' => match bytes.get(at + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                b'u' => {
                    let hex = bytes.get(at + 2..at + 6)?;
                    if !hex.iter().all(u8::is_ascii_hexdigit) {
                        return None;
                    }
                    at += 6;
                }
                _ => return None,
            },
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
    at = if bytes.get(at) == Some(&b'0') {
        at + 1
    } else {
        digits(at)?
    };
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
mod tests;
