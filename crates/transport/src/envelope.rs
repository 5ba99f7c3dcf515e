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

struct Member {
    /// The root member whose object value holds this one; None for a root member.
    parent: Option<usize>,
    /// The key as written, quotes included.
    key: Span,
    value: Span,
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

/// A value's byte range in the text.
type Span = (usize, usize);

fn slice(text: &str, span: Span) -> &str {
    &text[span.0..span.1]
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

/// The whole text as one JSON value (surrounding whitespace allowed), or None.
fn parse_document(text: &str) -> Option<Span> {
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    let end = scan_value(bytes, start, None)?;
    (skip_ws(bytes, end) == bytes.len()).then_some((start, end))
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

/// Whitespace is rare between a response's tokens, so the first test is the one that ends the
/// loop for every byte above the space.
#[inline(always)]
fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while let Some(&byte) = bytes.get(at) {
        if byte > b' ' || !matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            break;
        }
        at += 1;
    }
    at
}

/// Validate the JSON value starting at `at` (RFC 8259, as `JSON.parse` accepts it) and return
/// where it ends.
fn skip_value(bytes: &[u8], at: usize) -> Option<usize> {
    scan_value(bytes, at, None)
}

/// [`skip_value`], recording in `record` (when given) the members of a root object and of its
/// object-valued members, as [`Skeleton`] describes. Iterative: nesting is tracked in
/// [`Nesting`], so any depth is fine.
fn scan_value(bytes: &[u8], at: usize, mut record: Option<&mut Vec<Member>>) -> Option<usize> {
    let mut nesting = Nesting::default();
    // The recorded member being read in the container at depth 1 and at depth 2: None where
    // that container is an array, or nothing is recorded.
    let mut reading = [None; 2];
    // Where the next value starts: every step that leads to one skips the whitespace before it.
    let mut at = skip_ws(bytes, at);
    loop {
        // A value.
        match *bytes.get(at)? {
            b'{' => {
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b'}') {
                    at += 1;
                } else {
                    nesting.push(true);
                    at = member_key(bytes, at, nesting.depth, &mut record, &mut reading)?;
                    continue;
                }
            }
            b'[' => {
                at = skip_ws(bytes, at + 1);
                if bytes.get(at) == Some(&b']') {
                    at += 1;
                } else {
                    nesting.push(false);
                    if let Some(slot) = reading.get_mut(nesting.depth - 1) {
                        *slot = None;
                    }
                    continue;
                }
            }
            b'"' => at = skip_string(bytes, at)?,
            b't' => at = skip_literal(bytes, at, b"true")?,
            b'f' => at = skip_literal(bytes, at, b"false")?,
            b'n' => at = skip_literal(bytes, at, b"null")?,
            _ => at = skip_number(bytes, at)?,
        }
        // After a value (of the innermost container's current member or item): close
        // containers, or move to the next member or item.
        loop {
            let depth = nesting.depth;
            if depth == 0 {
                return Some(at);
            }
            if let (Some(record), Some(Some(member))) =
                (record.as_deref_mut(), reading.get(depth - 1))
            {
                record[*member].value.1 = at;
            }
            at = skip_ws(bytes, at);
            match (nesting.innermost_is_object, *bytes.get(at)?) {
                (true, b'}') | (false, b']') => {
                    nesting.pop();
                    at += 1;
                }
                (false, b',') => {
                    at = skip_ws(bytes, at + 1);
                    break;
                }
                (true, b',') => {
                    let key = skip_ws(bytes, at + 1);
                    at = member_key(bytes, key, depth, &mut record, &mut reading)?;
                    break;
                }
                _ => return None,
            }
        }
    }
}

/// Read the key and colon of a member of the object at `depth`, the key's quote at `at`, and
/// return where its value starts. The member is recorded when its object is the root or the
/// value of a recorded root member; `reading` then says which member is being read.
#[inline(always)]
fn member_key(
    bytes: &[u8],
    at: usize,
    depth: usize,
    record: &mut Option<&mut Vec<Member>>,
    reading: &mut [Option<usize>; 2],
) -> Option<usize> {
    let key_end = skip_string(bytes, at)?;
    let colon = skip_ws(bytes, key_end);
    if bytes.get(colon) != Some(&b':') {
        return None;
    }
    let value_start = skip_ws(bytes, colon + 1);
    if depth <= 2 {
        let parent = reading[0];
        reading[depth - 1] = match record.as_deref_mut() {
            Some(record) if depth == 1 || parent.is_some() => {
                record.push(Member {
                    parent: if depth == 1 { None } else { parent },
                    key: (at, key_end),
                    value: (value_start, value_start),
                });
                Some(record.len() - 1)
            }
            _ => None,
        };
    }
    Some(value_start)
}

/// The open containers, innermost last: one bit per level (set for an object), the first 64
/// levels in a word and deeper ones on the heap, so an ordinary body allocates nothing.
#[derive(Default)]
struct Nesting {
    depth: usize,
    /// Whether the innermost open container is an object: asked after every value.
    innermost_is_object: bool,
    shallow: u64,
    deep: Vec<bool>,
}

impl Nesting {
    const SHALLOW: usize = u64::BITS as usize;

    fn push(&mut self, object: bool) {
        if self.depth < Self::SHALLOW {
            let bit = 1 << self.depth;
            self.shallow = if object {
                self.shallow | bit
            } else {
                self.shallow & !bit
            };
        } else {
            self.deep.push(object);
        }
        self.depth += 1;
        self.innermost_is_object = object;
    }

    fn pop(&mut self) {
        self.depth -= 1;
        if self.depth >= Self::SHALLOW {
            self.deep.pop();
        }
        self.innermost_is_object = match self.depth.checked_sub(1) {
            Some(top) if top < Self::SHALLOW => self.shallow >> top & 1 == 1,
            Some(top) => self.deep[top - Self::SHALLOW],
            None => false,
        };
    }
}

fn skip_literal(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    bytes
        .get(at..at + literal.len())
        .filter(|b| *b == literal)
        .map(|_| at + literal.len())
}

/// A string starting at `at` (its opening quote); returns the index after the closing quote.
/// Always inlined, like [`member_key`] and [`plain_run_end`]: a 2 KB response holds ~130
/// strings, most of them short keys, and a call per string cost about as much as reading it.
#[inline(always)]
fn skip_string(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    loop {
        at = plain_run_end(bytes, at);
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
            // A control character.
            _ => return None,
        }
    }
}

/// Where the run of bytes from `at` that need no attention inside a string ends: the first
/// quote, backslash or control character (or the end). Sixteen bytes at a time where SSE2 is
/// (every x86-64): most strings of a response, keys included, then take one step.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline(always)]
fn plain_run_end(bytes: &[u8], mut at: usize) -> usize {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    while let Some(chunk) = bytes.get(at..at + 16) {
        // SAFETY: SSE2 is enabled for this target (the cfg above); `chunk` is 16 readable bytes,
        // and the load has no alignment requirement.
        let special = unsafe {
            let lanes = _mm_loadu_si128(chunk.as_ptr().cast());
            let quote = _mm_cmpeq_epi8(lanes, _mm_set1_epi8(b'"' as i8));
            let backslash = _mm_cmpeq_epi8(lanes, _mm_set1_epi8(b'\\' as i8));
            // A byte below 0x20 is its own minimum with 0x1f.
            let control = _mm_cmpeq_epi8(_mm_min_epu8(lanes, _mm_set1_epi8(0x1f)), lanes);
            _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control))
        };
        if special != 0 {
            return at + special.trailing_zeros() as usize;
        }
        at += 16;
    }
    plain_run_end_by_words(bytes, at)
}

#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline(always)]
fn plain_run_end(bytes: &[u8], at: usize) -> usize {
    plain_run_end_by_words(bytes, at)
}

/// [`plain_run_end`] eight bytes at a time, then byte by byte: a byte below 0x20, or equal to
/// `"` or `\\`, sets its high bit in `special`; the borrows of the subtractions only reach
/// bytes after the first such byte, so the lowest set bit is exact.
#[inline(always)]
fn plain_run_end_by_words(bytes: &[u8], mut at: usize) -> usize {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    let below = |word: u64, limit: u8| word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS;
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        let special = below(word, 0x20)
            | below(word ^ (ONES * u64::from(b'"')), 1)
            | below(word ^ (ONES * u64::from(b'\\')), 1);
        if special != 0 {
            return at + special.trailing_zeros() as usize / 8;
        }
        at += 8;
    }
    while bytes
        .get(at)
        .is_some_and(|b| !matches!(b, b'"' | b'\\' | 0x00..=0x1f))
    {
        at += 1;
    }
    at
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
