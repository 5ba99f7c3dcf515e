//! One message of a batch as JSON text: `[callId,kind,payload]`, written straight into the
//! batch, escaped to ASCII where that pays, and never larger than a JavaScript string can hold.
//!
//! Why ASCII: an ASCII batch becomes a V8 one-byte string by a copy and is parsed by V8's
//! one-byte parser, where UTF-8 text is decoded byte by byte (issue 17). Why capped: a message
//! too large to become a JavaScript string is replaced by its call's failure, inside that call,
//! instead of breaking the batch for every call in it (decisions D28).

use serde::Serialize;

use anilink_transport::error::TransportError;

use super::{Kind, BATCH_LIMIT};
use crate::wire::failure::ErrorDescription;
use crate::wire::hook_message::HookMessage;

/// What a message carries after its call id and kind.
pub enum Payload<'a> {
    None,
    /// A call's result: JSON text as the transport produced it, and the call's request id.
    Result {
        json: &'a str,
        request_id: &'a str,
    },
    Failure(&'a ErrorDescription<'a>),
    Event(&'a HookMessage<'a>),
}

impl Payload<'_> {
    /// Send instead of a message whose payload (`size` bytes or more of JSON) is too large for
    /// JavaScript: a failure of the call, or the event with that failure as its error.
    pub(super) fn send_too_large(
        &self,
        kind: Kind,
        size: usize,
        send: impl FnOnce(Kind, &Payload<'_>),
    ) {
        let request_id = match self {
            Payload::Result { request_id, .. } => Some(*request_id),
            Payload::Failure(description) => description.request_id,
            Payload::Event(message) => Some(message.request_id()),
            Payload::None => None,
        };
        let mut error = TransportError::network(format!(
            "the response is too large to become a JavaScript value ({size} bytes or more of JSON text; a JavaScript string holds at most {JS_STRING_LIMIT} characters); lower maxResponseBytes to fail earlier"
        ));
        error.request_id = request_id.map(str::to_string);
        let failure = ErrorDescription::of(&error);
        match (kind, self) {
            (Kind::Event, Payload::Event(event)) => {
                let event = HookMessage {
                    hook: event.hook,
                    ctx: event.ctx.clone(),
                    error: Some(failure),
                    unhooked: event.unhooked,
                    status: event.status,
                };
                send(Kind::Event, &Payload::Event(&event))
            }
            _ => send(Kind::Failure, &Payload::Failure(&failure)),
        }
    }
}

/// V8's longest string (`String::kMaxLength` on 64-bit), in UTF-16 units. UTF-8 never takes
/// fewer bytes than UTF-16 units, so text within this many bytes always converts.
const JS_STRING_LIMIT: usize = (1 << 29) - 24;

/// The most one message may add to a batch: a batch is only extended while it is under
/// [`BATCH_LIMIT`], so with this its whole text stays convertible.
const MESSAGE_LIMIT: usize = JS_STRING_LIMIT - BATCH_LIMIT - 64;

/// Append `[callId,kind,payload]` (after a comma, or opening the batch), escaped to ASCII when
/// that fits (see [`push_json`]), and say whether what was appended is ASCII: the writers know,
/// so the batch is never scanned for it. Err(size) when the payload would pass
/// [`MESSAGE_LIMIT`] even unescaped; `out` may then hold a partial message.
pub(super) fn write_message(
    out: &mut Vec<u8>,
    open: bool,
    call_id: u32,
    kind: Kind,
    payload: &Payload<'_>,
) -> Result<bool, usize> {
    // Room for the whole message at once: a result grew the batch four times on its way, and
    // once more when it had escapes. An escape is at most twice as long again as the UTF-8
    // bytes it replaces.
    let (payload_hint, non_ascii) = match payload {
        Payload::Result { json, .. } => {
            let non_ascii = non_ascii_bytes(json.as_bytes());
            let escape_room = if escapes(json.len(), non_ascii) {
                2 * non_ascii
            } else {
                0
            };
            (json.len() + escape_room, non_ascii)
        }
        _ => (0, 0),
    };
    out.reserve(MESSAGE_FRAMING + payload_hint);
    out.push(if open { b',' } else { b'[' });
    out.push(b'[');
    push_decimal(out, call_id);
    out.push(b',');
    out.push(b'0' + kind as u8);
    let ascii = match payload {
        Payload::None => true,
        Payload::Result { json, .. } => {
            out.push(b',');
            let limit = out.len() + MESSAGE_LIMIT;
            push_json_fitting(out, json, non_ascii, limit).map_err(|()| json.len())?
        }
        Payload::Failure(description) => write_capped(out, description)?,
        Payload::Event(message) => write_capped(out, message)?,
    };
    out.push(b']');
    Ok(ascii)
}

/// The bytes of a message around its payload: `,[`, a call id of up to 10 digits, `,k,`, `]`
/// and the batch's closing `]`.
const MESSAGE_FRAMING: usize = 2 + 10 + 3 + 2;

/// `value` in decimal, without the `String` that `to_string` makes.
fn push_decimal(out: &mut Vec<u8>, value: u32) {
    let mut digits = [0u8; 10];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

/// `,` and `value` as JSON, within [`MESSAGE_LIMIT`]: escaped to ASCII when that fits (see
/// [`push_json`]), else as UTF-8 (then taken for non-ASCII: the escaped form did not fit).
/// Whether it is ASCII.
fn write_capped(out: &mut Vec<u8>, value: &impl Serialize) -> Result<bool, usize> {
    out.push(b',');
    let start = out.len();
    let limit = start + MESSAGE_LIMIT;
    for ascii in [true, false] {
        if serde_json::to_writer(&mut Capped { out, limit, ascii }, value).is_ok() {
            return Ok(ascii);
        }
        out.truncate(start);
    }
    Err(MESSAGE_LIMIT)
}

/// A writer that refuses to grow `out` past `limit`, so an oversized payload is never built
/// whole; `ascii` as in [`push_json`].
struct Capped<'a> {
    out: &'a mut Vec<u8>,
    limit: usize,
    ascii: bool,
}

impl std::io::Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // serde_json writes whole strings and the runs between escapes, so a chunk is UTF-8; one
        // that is not is kept as it is: still valid text, only not escaped.
        let pushed = match std::str::from_utf8(buf) {
            Ok(text) => push_json(self.out, text, self.limit, self.ascii),
            Err(_) if self.out.len() + buf.len() > self.limit => Err(()),
            Err(_) => {
                self.out.extend_from_slice(buf);
                Ok(())
            }
        };
        pushed.map_err(|()| std::io::Error::other("message too large for JavaScript"))?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Append JSON `text` without letting `out` pass `limit`; with `ascii`, every non-ASCII
/// character is written as a `\uXXXX` escape (two for one beyond the BMP). Such characters
/// only occur inside JSON strings, so the meaning is unchanged, and an ASCII batch becomes a
/// one-byte JavaScript string that V8 copies instead of decoding as UTF-8, and parses with its
/// one-byte parser (issue 17: for the bench's 2 KB response with 9 Japanese characters, V8's
/// UTF-8 decoding alone was ~45,000 instructions per call). Escapes take up to 3× the bytes,
/// so a message that fits only unescaped is sent as UTF-8.
fn push_json(out: &mut Vec<u8>, text: &str, limit: usize, ascii: bool) -> Result<(), ()> {
    let mut rest = text;
    if ascii {
        while let Some(at) = first_non_ascii(rest.as_bytes()) {
            let (plain, tail) = rest.split_at(at);
            let Some(wide) = tail.chars().next() else {
                break;
            };
            if out.len() + plain.len() + 6 * wide.len_utf16() > limit {
                return Err(());
            }
            out.extend_from_slice(plain.as_bytes());
            for unit in wide.encode_utf16(&mut [0; 2]) {
                push_unicode_escape(out, *unit);
            }
            rest = &tail[wide.len_utf8()..];
        }
    }
    if out.len() + rest.len() > limit {
        return Err(());
    }
    out.extend_from_slice(rest.as_bytes());
    Ok(())
}

/// Where the first non-ASCII byte is: eight bytes at a time, the lowest high bit of the first
/// word that has one naming the byte.
fn first_non_ascii(bytes: &[u8]) -> Option<usize> {
    let mut words = bytes.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let high = u64::from_le_bytes(word.try_into().expect("8 bytes")) & HIGHS;
        if high != 0 {
            return Some(offset + high.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    words
        .remainder()
        .iter()
        .position(|b| !b.is_ascii())
        .map(|at| offset + at)
}

/// The high bit of each byte of a word.
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// Text whose non-ASCII bytes pass this share is kept as UTF-8: measured on 16 KB strings,
/// escaping saves ~15 % of a call's CPU at 6 % non-ASCII bytes, breaks even at 25-50 % and
/// costs 11-18 % on all-Japanese text (escapes take twice its bytes and each must be decoded).
const ESCAPE_SHARE_LIMIT: (usize, usize) = (1, 4);

/// Whether a result's text is written with escapes: it has non-ASCII bytes, and not too many.
fn escapes(length: usize, non_ascii: usize) -> bool {
    non_ascii > 0 && length * ESCAPE_SHARE_LIMIT.0 >= non_ascii * ESCAPE_SHARE_LIMIT.1
}

/// Bytes with the high bit set, eight at a time (every result passes here, so this is as
/// cheap as checking that it is ASCII).
fn non_ascii_bytes(bytes: &[u8]) -> usize {
    let mut chunks = bytes.chunks_exact(8);
    let whole: u32 = (&mut chunks)
        .map(|chunk| (u64::from_ne_bytes(chunk.try_into().expect("8 bytes")) & HIGHS).count_ones())
        .sum();
    whole as usize + chunks.remainder().iter().filter(|b| !b.is_ascii()).count()
}

/// A result's JSON `text`, which has `non_ascii` bytes ([`non_ascii_bytes`]): escaped to ASCII
/// when that fits within `limit` and the text is not mostly non-ASCII ([`escapes`]), else as
/// UTF-8 (see [`push_json`]). Whether what it appended is ASCII.
fn push_json_fitting(
    out: &mut Vec<u8>,
    text: &str,
    non_ascii: usize,
    limit: usize,
) -> Result<bool, ()> {
    if !escapes(text.len(), non_ascii) {
        return push_json(out, text, limit, false).map(|()| non_ascii == 0);
    }
    let start = out.len();
    push_json(out, text, limit, true)
        .map(|()| true)
        .or_else(|()| {
            out.truncate(start);
            push_json(out, text, limit, false).map(|()| false)
        })
}

/// `\uXXXX` for one UTF-16 unit.
fn push_unicode_escape(out: &mut Vec<u8>, unit: u16) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digit = |shift: u16| HEX[usize::from((unit >> shift) & 0xf)];
    out.extend_from_slice(&[b'\\', b'u', digit(12), digit(8), digit(4), digit(0)]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_ids_are_written_in_decimal_at_every_width() {
        for id in [0, 7, 10, 99, 12_345, 4_000_000_000, u32::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, id);
            assert_eq!(out, format!("x{id}").into_bytes());
        }
    }

    #[test]
    fn a_result_message_is_written_into_one_allocation() {
        let json = format!(r#"{{"data":"{}"}}"#, "a".repeat(5_000));
        let mut out = Vec::new();
        let payload = Payload::Result {
            json: &json,
            request_id: "r",
        };
        write_message(&mut out, false, u32::MAX, Kind::Value, &payload).unwrap();
        let capacity = out.capacity();
        out.push(b']');
        assert_eq!(
            out.capacity(),
            capacity,
            "the batch's closing bracket fits too"
        );
        assert_eq!(
            out,
            format!("[[{},{},{json}]]", u32::MAX, Kind::Value as u8).into_bytes()
        );
    }

    #[test]
    fn a_result_with_escapes_is_written_into_one_allocation_too() {
        // "é" is the longest escape for its bytes (2 bytes → 6); the kana are 3 → 6.
        for text in ["é".repeat(300), "カウボーイ".repeat(60)] {
            let json = format!(r#"{{"data":"{}{text}"}}"#, "a".repeat(5_000));
            let mut out = Vec::new();
            let payload = Payload::Result {
                json: &json,
                request_id: "r",
            };
            let reserved = MESSAGE_FRAMING + json.len() + 2 * non_ascii_bytes(json.as_bytes());
            assert!(write_message(&mut out, false, u32::MAX, Kind::Value, &payload).unwrap());
            out.push(b']');
            let character = text.chars().next();
            assert_eq!(out.capacity(), reserved, "{character:?}…: not regrown");
        }
    }

    /// A result's text as [`write_message`] appends it.
    fn pushed(text: &str, limit: usize) -> Result<String, ()> {
        let mut out = Vec::new();
        push_json_fitting(&mut out, text, non_ascii_bytes(text.as_bytes()), limit)?;
        Ok(String::from_utf8(out).expect("pushed text is UTF-8"))
    }

    #[test]
    fn non_ascii_characters_become_escapes_that_parse_back_to_the_same_value() {
        let text = concat!(
            r#"{"native":"カウボーイビバップ","accent":"é","emoji":"🎬","sep":"\u2028 ok","#,
            r#""description":"Enough ASCII around the wide characters for them to be escaped.","#,
            r#""romaji":"Cowboy Bebop","english":"Cowboy Bebop: The Movie"}"#
        );
        let out = pushed(text, usize::MAX).unwrap();
        assert!(out.is_ascii());
        assert!(out.contains(r"\u30ab") && out.contains(r"\ud83c\udfac"));
        let parsed: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(
            parsed,
            serde_json::from_str::<serde_json::Value>(text).unwrap()
        );
    }

    #[test]
    fn the_first_non_ascii_byte_is_found_at_any_offset() {
        for at in 0..40 {
            let mut bytes = vec![b'a'; 40];
            bytes[at] = 0xc3;
            assert_eq!(first_non_ascii(&bytes), Some(at));
        }
        assert_eq!(first_non_ascii(&[b'a'; 33]), None);
    }

    #[test]
    fn non_ascii_bytes_are_counted_at_any_length_and_offset() {
        for length in 0..40 {
            for every in 1..5 {
                let bytes: Vec<u8> = (0..length)
                    .map(|i| if i % every == 0 { 0x80 | i as u8 } else { b'a' })
                    .collect();
                let expected = bytes.iter().filter(|b| !b.is_ascii()).count();
                assert_eq!(
                    non_ascii_bytes(&bytes),
                    expected,
                    "{length} bytes, every {every}"
                );
            }
        }
    }

    #[test]
    fn ascii_text_is_copied_as_it_is() {
        let text = r#"{"a":[1,"x\n"]}"#;
        assert_eq!(pushed(text, usize::MAX).unwrap(), text);
    }

    #[test]
    fn text_that_is_mostly_non_ascii_stays_utf8() {
        // 9 of 11 bytes are non-ASCII: escaped, the text would double for nothing.
        assert_eq!(pushed(r#""カウボ""#, usize::MAX).unwrap(), r#""カウボ""#);
        // 3 of 15 bytes: escaped.
        assert_eq!(
            pushed(r#""Cowboy Bebカ""#, usize::MAX).unwrap(),
            r#""Cowboy Beb\u30ab""#
        );
    }

    #[test]
    fn the_limit_counts_escaped_bytes_and_falls_back_to_utf8() {
        // 10 bytes as UTF-8, 14 escaped.
        assert_eq!(pushed(r#""aaaaaaé""#, 14).unwrap(), r#""aaaaaa\u00e9""#);
        assert_eq!(pushed(r#""aaaaaaé""#, 13).unwrap(), r#""aaaaaaé""#);
        assert_eq!(pushed(r#""aaaaaaé""#, 9), Err(()));
    }

    #[test]
    fn a_message_says_whether_it_is_ascii() {
        let wide = "ビ".repeat(40);
        let results = [
            r#"{"id":1,"title":"Cowboy Bebop"}"#.to_string(),
            format!(
                r#"{{"native":"カウボーイビバップ","note":"{}"}}"#,
                "a".repeat(60)
            ),
            format!(r#"{{"native":"{wide}"}}"#),
        ];
        for (json, expected) in results.iter().zip([true, true, false]) {
            let mut out = b"[[1,0]".to_vec();
            let payload = Payload::Result {
                json,
                request_id: "r",
            };
            let ascii = write_message(&mut out, true, 7, Kind::Value, &payload).unwrap();
            assert_eq!(ascii, expected, "{json}");
            assert_eq!(ascii, out.is_ascii(), "{json}");
        }
        // Escapes that do not fit leave the text as UTF-8, which is then not ASCII.
        for (limit, expected) in [(14, true), (13, false)] {
            let mut out = Vec::new();
            assert_eq!(
                push_json_fitting(&mut out, r#""aaaaaaé""#, 2, limit),
                Ok(expected)
            );
            assert_eq!(out.is_ascii(), expected);
        }
        for value in ["échec", "ok"] {
            let mut out = Vec::new();
            let ascii = write_capped(&mut out, &serde_json::json!({ "message": value })).unwrap();
            assert!(ascii && out.is_ascii(), "{value}");
        }
    }

    #[test]
    fn serialized_payloads_are_escaped() {
        let mut out = Vec::new();
        write_capped(&mut out, &serde_json::json!({ "message": "échec" })).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            r#",{"message":"\u00e9chec"}"#
        );
    }
}
