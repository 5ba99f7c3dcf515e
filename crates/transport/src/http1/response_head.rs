//! A response's head: parsed from the bytes read so far, and how its body is framed.

use bytes::BytesMut;
use http::header::{CONNECTION, CONTENT_LENGTH, TRANSFER_ENCODING};
use http::{HeaderMap, HeaderName, HeaderValue};

use super::request_head::has_token;
use crate::rate_limit::{LIMIT, REMAINING, RESET};

/// The longest response head accepted (Node's own limit is 16 KiB; proxies and CDNs stay far
/// below this one).
pub const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The most header lines a response may have (hyper's limit was 100).
const MAX_HEADERS: usize = 128;

/// How a response's body ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// No body: `HEAD`, 1xx, 204 and 304.
    Empty,
    /// Exactly this many bytes (`Content-Length`).
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Everything until the server closes the connection.
    UntilClose,
}

#[derive(Debug)]
pub struct ResponseHead {
    pub status: u16,
    pub headers: HeaderMap,
    pub framing: Framing,
    /// The server lets the connection serve another request once this response is read.
    pub keep_alive: bool,
}

impl ResponseHead {
    /// A 1xx answer other than 101 is a preliminary one: the real response follows it.
    pub fn is_interim(&self) -> bool {
        (100..200).contains(&self.status) && self.status != 101
    }
}

/// Take a head from the start of `buffer`: the head once it is all there (its bytes removed
/// from `buffer`), None while more bytes are needed or when it is longer than
/// [`MAX_HEAD_BYTES`] (the caller refuses that by the buffer's size). `to_head_request`: the
/// request was `HEAD`, so no body follows.
///
/// The header values are slices of the head's own bytes, not copies: a response's headers
/// cost no allocation each.
pub fn parse(buffer: &mut BytesMut, to_head_request: bool) -> Result<Option<ResponseHead>, String> {
    // Not initialised: writing 128 empty slots before every parse cost more than the parse.
    let mut slots = [const { std::mem::MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        buffer,
        &mut slots,
    );
    let length = match parsed {
        Ok(httparse::Status::Complete(length)) if length <= MAX_HEAD_BYTES => length,
        Ok(_) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => {
            return Err(format!("more than {MAX_HEADERS} header lines"))
        }
        Err(error) => return Err(error.to_string()),
    };
    let status = response.code.unwrap_or_default();
    let http_1_0 = response.version == Some(0);
    // Where each name and value lies in the head, so the map can be built from the head's
    // bytes once they are split off (httparse's slices borrow the buffer until then).
    let start = buffer.as_ptr() as usize;
    let offset = |part: &[u8]| part.as_ptr() as usize - start;
    let spans: Vec<_> = response
        .headers
        .iter()
        .map(|header| {
            let (name, value) = (offset(header.name.as_bytes()), offset(header.value));
            (
                name,
                name + header.name.len(),
                value,
                value + header.value.len(),
            )
        })
        .collect();
    let head = buffer.split_to(length).freeze();
    let mut headers = HeaderMap::with_capacity(spans.len());
    for (name_start, name_end, value_start, value_end) in spans {
        let text = &head[name_start..name_end];
        // As received (httparse checked it is token characters, so this is never lossy).
        let quoted = || format!("{:?}", String::from_utf8_lossy(text));
        let name = match known_name(text) {
            Some(known) => known,
            None => HeaderName::from_bytes(text)
                .map_err(|_| format!("invalid header name {}", quoted()))?,
        };
        let value = HeaderValue::from_maybe_shared(head.slice(value_start..value_end))
            .map_err(|_| format!("invalid value for header {}", quoted()))?;
        headers.append(name, value);
    }
    let framing = framing(status, &headers, to_head_request)?;
    let lists = |token: &[u8]| {
        headers
            .get_all(CONNECTION)
            .iter()
            .any(|value| has_token(value.as_bytes(), token))
    };
    let keep_alive = framing != Framing::UntilClose
        && status != 101
        && !lists(b"close")
        && (!http_1_0 || lists(b"keep-alive"))
        // A response framed by both is a smuggling risk: read it by its chunks, then close.
        && !(headers.contains_key(TRANSFER_ENCODING) && headers.contains_key(CONTENT_LENGTH));
    Ok(Some(ResponseHead {
        status,
        headers,
        framing,
        keep_alive,
    }))
}

/// The names that are not standard but that every AniList and MAL response carries (the
/// quota), as constants: a standard name is already one, and any other costs an allocation.
fn known_name(text: &[u8]) -> Option<HeaderName> {
    [LIMIT, REMAINING, RESET]
        .into_iter()
        .find(|known| text.eq_ignore_ascii_case(known.as_str().as_bytes()))
}

/// Whether `bytes` may hold a whole head, looking only at what arrived since `from` bytes
/// were looked at: a blank line (CRLF CRLF, or the bare LF LF that parsers accept) ends in it.
pub fn may_end(bytes: &[u8], from: usize) -> bool {
    let start = from.saturating_sub(3);
    let window = bytes.get(start..).unwrap_or_default();
    memchr::memchr_iter(b'\n', window).any(|i| {
        let before = &bytes[..start + i];
        before.ends_with(b"\n") || before.ends_with(b"\n\r")
    })
}

/// Whether `bytes` hold a CR followed by anything but LF, looking only at what arrived since
/// `from` bytes were looked at: a bare CR ends no line (bare LF does, a documented leniency),
/// so a head holding one can never be complete and is refused at once, as Node's parser does.
pub fn has_bare_cr(bytes: &[u8], from: usize) -> bool {
    let start = from.saturating_sub(1);
    let window = bytes.get(start..).unwrap_or_default();
    memchr::memchr_iter(b'\r', window).any(|i| window.get(i + 1).is_some_and(|&next| next != b'\n'))
}

/// RFC 9112 section 6.3, for responses.
fn framing(status: u16, headers: &HeaderMap, to_head_request: bool) -> Result<Framing, String> {
    if to_head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        return Ok(Framing::Empty);
    }
    if let Some(last) = headers.get_all(TRANSFER_ENCODING).iter().next_back() {
        let chunked = last
            .as_bytes()
            .rsplit(|&b| b == b',')
            .next()
            .is_some_and(|coding| coding.trim_ascii().eq_ignore_ascii_case(b"chunked"));
        // Node's parser refuses any other last coding too: the body's end would be a guess.
        return if chunked {
            Ok(Framing::Chunked)
        } else {
            Err("Transfer-Encoding does not end in chunked".into())
        };
    }
    let mut declared = None;
    for value in headers.get_all(CONTENT_LENGTH) {
        for item in value.as_bytes().split(|&b| b == b',') {
            let item = item.trim_ascii();
            let length = std::str::from_utf8(item)
                .ok()
                .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<u64>().ok())
                .ok_or_else(|| "invalid Content-Length".to_string())?;
            if declared.is_some_and(|earlier| earlier != length) {
                return Err("conflicting Content-Length values".into());
            }
            declared = Some(length);
        }
    }
    Ok(declared.map_or(Framing::UntilClose, Framing::Length))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parse `text` as received, and the bytes left after its head.
    fn parse_text(
        text: &str,
        to_head_request: bool,
    ) -> Result<Option<(ResponseHead, BytesMut)>, String> {
        let mut buffer = BytesMut::from(text);
        Ok(parse(&mut buffer, to_head_request)?.map(|head| (head, buffer)))
    }

    fn head(text: &str) -> ResponseHead {
        let (head, rest) = parse_text(text, false).unwrap().unwrap();
        assert_eq!(rest.len(), text.len() - text.find("\r\n\r\n").unwrap() - 4);
        head
    }

    #[test]
    fn a_head_is_complete_only_once_its_blank_line_is_there() {
        let text = "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok";
        for cut in 0..text.len() - 2 {
            let mut partial = BytesMut::from(&text[..cut]);
            assert!(parse(&mut partial, false).unwrap().is_none(), "{cut}");
            assert_eq!(partial.len(), cut, "nothing is taken from a partial head");
        }
        let (head, rest) = parse_text(text, false).unwrap().unwrap();
        assert_eq!(
            (head.status, head.framing, &rest[..]),
            (200, Framing::Length(2), &b"ok"[..])
        );
        assert!(head.keep_alive);
        assert_eq!(head.headers["content-length"], "2");
    }

    #[test]
    fn header_values_are_slices_of_the_head_not_copies() {
        let text = "HTTP/1.1 200 OK\r\nX-RateLimit-Remaining: 89\r\nx-custom: a b\r\n\r\n";
        let mut buffer = BytesMut::from(text);
        let received = buffer.as_ptr() as usize..buffer.as_ptr() as usize + text.len();
        let head = parse(&mut buffer, false).unwrap().unwrap();
        for value in head.headers.values() {
            assert!(
                received.contains(&(value.as_bytes().as_ptr() as usize)),
                "{value:?}"
            );
        }
        assert_eq!(
            head.headers[REMAINING], "89",
            "the quota names match in any case"
        );
        assert_eq!(head.headers["x-custom"], "a b");
    }

    #[test]
    fn the_end_of_a_head_is_found_in_the_bytes_that_just_arrived() {
        let text = b"HTTP/1.1 200 OK\r\nx: 1\r\n\r\n";
        for split in 0..text.len() {
            let found = may_end(&text[..split], 0) || may_end(text, split);
            assert!(found, "{split}");
            assert!(!may_end(&text[..split], 0), "{split}");
        }
        assert!(may_end(b"HTTP/1.1 200 OK\nx: 1\n\n", 0));
        assert!(
            !may_end(b"a\r\n\r\nlater bytes", 9),
            "a blank line before the window"
        );
    }

    #[test]
    fn a_bare_cr_is_found_in_the_bytes_that_just_arrived() {
        let text = b"HTTP/1.1 200 OK\rx: 1\r\n";
        assert!(has_bare_cr(text, 0));
        assert!(
            has_bare_cr(text, 16),
            "the CR was looked at before its next byte came"
        );
        assert!(!has_bare_cr(text, 17), "before the window");
        assert!(
            !has_bare_cr(b"HTTP/1.1 200 OK\r", 0),
            "its next byte has not come yet"
        );
        assert!(!has_bare_cr(b"HTTP/1.1 200 OK\r\nx: 1\r\n\r\n", 0));
    }

    #[test]
    fn the_body_is_framed_as_rfc_9112_says() {
        assert_eq!(
            head("HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n").framing,
            Framing::Chunked
        );
        assert_eq!(head("HTTP/1.1 200 OK\r\n\r\n").framing, Framing::UntilClose);
        assert_eq!(
            head("HTTP/1.1 204 No Content\r\ncontent-length: 5\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(
            head("HTTP/1.1 304 Not Modified\r\n\r\n").framing,
            Framing::Empty
        );
        assert_eq!(
            head("HTTP/1.1 200 OK\r\ncontent-length: 7, 7\r\ncontent-length: 7\r\n\r\n").framing,
            Framing::Length(7)
        );
        let (to_head, _) = parse_text("HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", true)
            .unwrap()
            .unwrap();
        assert_eq!(to_head.framing, Framing::Empty);
    }

    #[test]
    fn only_a_framed_response_the_server_lets_stay_open_keeps_the_connection() {
        assert!(
            !head("HTTP/1.1 200 OK\r\n\r\n").keep_alive,
            "read until close"
        );
        assert!(
            !head("HTTP/1.1 200 OK\r\nconnection: Close\r\ncontent-length: 0\r\n\r\n").keep_alive
        );
        assert!(!head("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n").keep_alive);
        assert!(
            head("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n")
                .keep_alive
        );
        let both =
            head("HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n");
        assert_eq!((both.framing, both.keep_alive), (Framing::Chunked, false));
    }

    #[test]
    fn interim_answers_are_told_apart() {
        assert!(head("HTTP/1.1 100 Continue\r\n\r\n").is_interim());
        assert!(head("HTTP/1.1 103 Early Hints\r\nlink: </a>\r\n\r\n").is_interim());
        assert!(!head("HTTP/1.1 101 Switching Protocols\r\n\r\n").is_interim());
    }

    #[test]
    fn broken_heads_say_what_is_wrong() {
        let error = |text: &str| parse_text(text, false).unwrap_err();
        for coding in [
            "identity",
            "gzip",
            "chunked, identity",
            "chunked\r\ntransfer-encoding: gzip",
        ] {
            for length in ["", "content-length: 2\r\n"] {
                assert_eq!(
                    error(&format!(
                        "HTTP/1.1 200 OK\r\n{length}transfer-encoding: {coding}\r\n\r\n"
                    )),
                    "Transfer-Encoding does not end in chunked",
                    "{coding} {length}"
                );
            }
        }
        assert_eq!(
            error("HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n"),
            "conflicting Content-Length values"
        );
        assert_eq!(
            error("HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n"),
            "invalid Content-Length"
        );
        assert_eq!(
            error("HTTP/1.1 200 OK\r\ncontent-length: 99999999999999999999999\r\n\r\n"),
            "invalid Content-Length"
        );
        assert!(!error("SSH-2.0-OpenSSH\r\n\r\n").is_empty());
        // Once the byte after a bare CR is there, the head is refused however it ends (the
        // CONNECT answer is parsed at every read, so it needs no other check).
        for bare in [
            "HTTP/1.1 200 OK\rx",
            "HTTP/1.1 200 OK\r\nx: 1\ry",
            "HTTP/1.1 200 OK\r\nx\r",
        ] {
            assert!(!error(bare).is_empty(), "{bare:?}");
        }
        let many: String = (0..=MAX_HEADERS).map(|i| format!("x-{i}: 1\r\n")).collect();
        assert_eq!(
            error(&format!("HTTP/1.1 200 OK\r\n{many}\r\n")),
            "more than 128 header lines"
        );
    }
}
