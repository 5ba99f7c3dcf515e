//! Reading a 2xx GraphQL body: success, strict failure, or accepted partial data (decisions D29).
//!
//! AniList reports many failures inside HTTP 200 envelopes, so the breaker and the retry policy
//! need the upstream status an error entry carries (transport.md 1.9). What counts is what
//! `JSON.parse` sees in the same bytes: any depth, duplicate keys resolved by the last one, and
//! an `errors` member that is neither `null` nor `[]` is a failure whatever its entries look
//! like. The body is scanned iteratively (no recursion, so no depth limit), only the envelope's
//! skeleton is decoded, and the result is handed on as the exact JSON text of the value the
//! caller receives, for JavaScript to parse once.

use std::borrow::Cow;

use crate::error::TransportError;
use crate::rate_limit::RateLimitInfo;

mod scan;

use scan::{array_items, parse_document, scan_value, skip_ws, slice, Member, Span};

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
    content_type: Option<&str>,
) -> Option<Envelope> {
    let skeleton = Skeleton::of(text)?;
    if text.as_bytes()[skeleton.value.0] != b'{' {
        // Valid JSON that is not an envelope object has nothing to unwrap.
        return Some(Envelope::Success(text.to_string()));
    }
    let data = skeleton.last_member(text, None, "data");
    let errors = skeleton
        .last_member(text, None, "errors")
        .map(|(_, span)| span);
    let roots = data
        .filter(|(_, span)| text.as_bytes()[span.0] == b'{')
        .map(|(index, _)| skeleton.distinct_members(text, index));
    let result = || match &roots {
        Some(roots) if roots.len() == 1 => slice(text, roots[0]).to_string(),
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
        data.map(|(_, d)| slice(text, d).to_string())
            .unwrap_or_else(|| "null".into()),
        rate_limit,
        content_type.map(str::to_string),
    );
    let has_data = roots
        .as_ref()
        .is_some_and(|r| r.iter().any(|v| slice(text, *v) != "null"));
    if allow_partial && has_data {
        return Some(Envelope::Partial {
            result: result(),
            error,
        });
    }
    Some(Envelope::Failure(error))
}

/// What one validating pass over a document records: the span of the whole value, the members
/// of the root object, and the members of the root's object-valued members (`data`'s roots).
/// A success reads nothing else, so its body is scanned once; a failure's `errors` entries are
/// read again from their own (short) spans.
struct Skeleton {
    value: Span,
    members: Vec<Member>,
}

impl Skeleton {
    fn of(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let start = skip_ws(bytes, 0);
        // An envelope has a few root members and `data` a few roots: room for them up front,
        // so the scan does not regrow the list two or three times per response.
        let mut members = Vec::with_capacity(8);
        let end = scan_value(bytes, start, Some(&mut members))?;
        (skip_ws(bytes, end) == bytes.len()).then_some(Self {
            value: (start, end),
            members,
        })
    }

    /// The last member named `name` under `parent` (as `JSON.parse` keeps it): its index and value.
    fn last_member(&self, text: &str, parent: Option<usize>, name: &str) -> Option<(usize, Span)> {
        self.members
            .iter()
            .enumerate()
            .rev()
            .find(|(_, m)| m.parent == parent && key_is(text, m.key, name))
            .map(|(index, m)| (index, m.value))
    }

    /// The values of the members of root member `parent`, duplicate keys resolved (the last
    /// value wins), in first-appearance order.
    fn distinct_members(&self, text: &str, parent: usize) -> Vec<Span> {
        let mut out: Vec<(Cow<'_, str>, Span)> = Vec::new();
        for member in self.members.iter().filter(|m| m.parent == Some(parent)) {
            let key = decode_key(slice(text, member.key));
            match out.iter_mut().find(|(k, _)| *k == key) {
                Some(existing) => existing.1 = member.value,
                None => out.push((key, member.value)),
            }
        }
        out.into_iter().map(|(_, span)| span).collect()
    }
}

fn key_is(text: &str, key: Span, name: &str) -> bool {
    decode_key(slice(text, key)) == name
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

fn entry_status(text: &str, entry: Span) -> Option<u16> {
    let entry = slice(text, entry);
    let status = slice(entry, entry_member(entry, "status")?);
    let n: f64 = status
        .parse()
        .ok()
        .filter(|_| status.starts_with(|c: char| c == '-' || c.is_ascii_digit()))?;
    (n.fract() == 0.0 && (100.0..=599.0).contains(&n)).then_some(n as u16)
}

fn entry_message(text: &str, entry: Span) -> String {
    let entry = slice(text, entry);
    entry_member(entry, "message")
        .and_then(|m| serde_json::from_str::<String>(slice(entry, m)).ok())
        .unwrap_or_else(|| GENERIC_MESSAGE.to_string())
}

/// The value of member `name` of an `errors` entry (its own text), when the entry is an object
/// that has one; read by the same pass and rule as the envelope itself.
fn entry_member(entry: &str, name: &str) -> Option<Span> {
    Skeleton::of(entry)?
        .last_member(entry, None, name)
        .map(|(_, span)| span)
}

fn is_null_or_empty_array(text: &str, span: Span) -> bool {
    let value = slice(text, span);
    value == "null" || array_items(text, span).is_some_and(|items| items.is_empty())
}

/// A key as `JSON.parse` decodes it (`raw` with its quotes); a key serde cannot decode (a lone
/// surrogate escape) is compared by its raw text, which cannot equal `data`, `errors`,
/// `message` or `status`. Borrowed unless it has escapes.
fn decode_key(raw: &str) -> Cow<'_, str> {
    match raw.get(1..raw.len() - 1) {
        Some(inner) if !inner.contains('\\') => Cow::Borrowed(inner),
        _ => Cow::Owned(serde_json::from_str::<String>(raw).unwrap_or_else(|_| raw.to_string())),
    }
}

#[cfg(test)]
mod tests;
