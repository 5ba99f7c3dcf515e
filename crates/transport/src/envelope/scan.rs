//! The JSON scanner under envelope reading: it validates a value exactly as `JSON.parse` would
//! accept it and returns byte spans instead of building a tree, so a response is checked in one
//! pass without allocating for its content. Iterative (nesting kept in a bit set), hence no depth
//! limit and no stack to exhaust; it can record the envelope's skeleton on the way.

/// A value's byte range in the text.
pub(super) type Span = (usize, usize);

pub(super) fn slice(text: &str, span: Span) -> &str {
    &text[span.0..span.1]
}

pub(super) struct Member {
    /// The root member whose object value holds this one; None for a root member.
    pub(super) parent: Option<usize>,
    /// The key as written, quotes included.
    pub(super) key: Span,
    pub(super) value: Span,
}

/// The whole text as one JSON value (surrounding whitespace allowed), or None.
pub(super) fn parse_document(text: &str) -> Option<Span> {
    let bytes = text.as_bytes();
    let start = skip_ws(bytes, 0);
    let end = scan_value(bytes, start, None)?;
    (skip_ws(bytes, end) == bytes.len()).then_some((start, end))
}

/// The items of a valid array value, or None when the value is not an array.
pub(super) fn array_items(text: &str, span: Span) -> Option<Vec<Span>> {
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
pub(super) fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
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
/// object-valued members, as [`super::Skeleton`] describes. Iterative: nesting is tracked in
/// [`Nesting`], so any depth is fine.
pub(super) fn scan_value(
    bytes: &[u8],
    at: usize,
    mut record: Option<&mut Vec<Member>>,
) -> Option<usize> {
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
mod tests {
    use super::*;

    #[test]
    fn objects_and_arrays_are_told_apart_at_every_depth() {
        // Past 64 levels the open containers are kept on the heap instead of in one word: a closer
        // of the wrong kind must be refused on both sides of that line.
        for levels in [1, 63, 64, 65, 100, 126] {
            let opening: String = (0..levels)
                .map(|level| if level % 2 == 0 { r#"{"a":"# } else { "[" })
                .collect();
            let closing: Vec<char> = (0..levels)
                .rev()
                .map(|level| if level % 2 == 0 { '}' } else { ']' })
                .collect();
            let valid = format!("{opening}1{}", closing.iter().collect::<String>());
            assert!(parse_document(&valid).is_some(), "{levels} levels");
            assert!(serde_json::from_str::<serde_json::Value>(&valid).is_ok());
            for at in 0..closing.len() {
                let mut wrong = closing.clone();
                wrong[at] = if wrong[at] == '}' { ']' } else { '}' };
                let text = format!("{opening}1{}", wrong.iter().collect::<String>());
                assert!(
                    parse_document(&text).is_none(),
                    "{levels} levels, closer {at} swapped"
                );
            }
        }
    }

    #[test]
    fn strings_are_read_as_the_reference_parser_reads_them_at_every_offset() {
        // Long enough for the eight-byte steps of `plain_run_end`, with each kind of byte that ends a
        // plain run (or must not) at every position.
        let specials = [
            "\"", "\\", "\\\"", "\\n", "\\u00e9", "\\u00zz", "\\x", "\n", "\u{1f}", "é", "~",
            "\u{7f}",
        ];
        for length in 0..40 {
            for position in 0..=length {
                for special in specials {
                    let mut inner = "a".repeat(length);
                    inner.insert_str(position, special);
                    let text = format!("\"{inner}\"");
                    let reference = serde_json::from_str::<String>(&text).is_ok();
                    let ours = skip_string(text.as_bytes(), 0);
                    assert_eq!(
                        ours == Some(text.len()),
                        reference,
                        "{text:?} read as {ours:?}"
                    );
                }
            }
        }
    }
}
