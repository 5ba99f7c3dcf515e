//! `Transfer-Encoding: chunked`, decoded from a connection's read buffer as bytes arrive.

use bytes::{Buf, Bytes, BytesMut};

/// The longest chunk-size line (with its extensions) or trailer line accepted.
const MAX_LINE: usize = 4096;

/// The most trailer bytes accepted after the last chunk.
const MAX_TRAILERS: usize = 16 * 1024;

/// What [`Decoder::step`] found in the buffer.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// Body bytes, taken out of the buffer without a copy.
    Data(Bytes),
    /// The buffer holds no complete piece yet: read more, then step again.
    NeedMore,
    /// The last chunk and the trailers are read: the body is complete.
    End,
}

#[derive(Debug, Default)]
pub struct Decoder {
    state: State,
    trailer_bytes: usize,
}

#[derive(Debug, Default, PartialEq, Eq)]
enum State {
    #[default]
    Size,
    /// Bytes of the current chunk still to come.
    Data(u64),
    /// The CRLF that closes a chunk's data.
    DataEnd,
    Trailers,
    Done,
}

impl Decoder {
    /// Take the next piece of the body from the front of `buffer`.
    pub fn step(&mut self, buffer: &mut BytesMut) -> Result<Step, String> {
        loop {
            match self.state {
                State::Size => {
                    let Some(line) = take_line(buffer)? else {
                        return Ok(Step::NeedMore);
                    };
                    let size = chunk_size(&line)?;
                    self.state = if size == 0 {
                        State::Trailers
                    } else {
                        State::Data(size)
                    };
                }
                State::Data(left) => {
                    if buffer.is_empty() {
                        return Ok(Step::NeedMore);
                    }
                    let taken = (buffer.len() as u64).min(left);
                    self.state = match left - taken {
                        0 => State::DataEnd,
                        still => State::Data(still),
                    };
                    return Ok(Step::Data(buffer.split_to(taken as usize).freeze()));
                }
                State::DataEnd => {
                    if buffer.len() < 2 {
                        return Ok(Step::NeedMore);
                    }
                    if &buffer[..2] != b"\r\n" {
                        return Err("a chunk is longer than its declared size".into());
                    }
                    buffer.advance(2);
                    self.state = State::Size;
                }
                State::Trailers => {
                    let Some(line) = take_line(buffer)? else {
                        return Ok(Step::NeedMore);
                    };
                    self.trailer_bytes += line.len() + 2;
                    if self.trailer_bytes > MAX_TRAILERS {
                        return Err("the trailers are too large".into());
                    }
                    if line.is_empty() {
                        self.state = State::Done;
                    }
                }
                State::Done => return Ok(Step::End),
            }
        }
    }
}

/// A CRLF-terminated line off the front of `buffer`, without its CRLF. A line ending in a
/// bare CR or a bare LF is refused as soon as it is seen, as Node's parser refuses it.
fn take_line(buffer: &mut BytesMut) -> Result<Option<BytesMut>, String> {
    let window = &buffer[..buffer.len().min(MAX_LINE + 1)];
    let Some(end) = memchr::memchr2(b'\r', b'\n', window) else {
        if buffer.len() > MAX_LINE {
            return Err("a chunk line is too long".into());
        }
        return Ok(None);
    };
    match (buffer[end], buffer.get(end + 1)) {
        (b'\n', _) => Err("a chunk line ends in a bare LF".into()),
        (_, None) => Ok(None),
        (_, Some(b'\n')) => {
            let line = buffer.split_to(end);
            buffer.advance(2);
            Ok(Some(line))
        }
        (_, Some(_)) => Err("a chunk line ends in a bare CR".into()),
    }
}

/// The hexadecimal size at the start of a chunk-size line. Its extensions are ignored but
/// must be well formed, as Node's parser requires: `;name` or `;name=value` (a token or a
/// quoted string), with no white space around the size or the extensions.
fn chunk_size(line: &[u8]) -> Result<u64, String> {
    let digits_end = line.iter().position(|&b| b == b';').unwrap_or(line.len());
    let digits = &line[..digits_end];
    let invalid = || {
        format!(
            "invalid chunk size {:?}",
            String::from_utf8_lossy(&line[..line.len().min(40)])
        )
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return Err(invalid());
    }
    if !valid_extensions(&line[digits_end..]) {
        return Err(invalid());
    }
    u64::from_str_radix(std::str::from_utf8(digits).map_err(|_| invalid())?, 16)
        .map_err(|_| invalid())
}

/// `*( ";" token [ "=" ( token / quoted-string ) ] )`, RFC 9112 section 7.1.1 without the
/// optional white space (llhttp refuses it).
fn valid_extensions(mut rest: &[u8]) -> bool {
    while let Some(after) = rest.strip_prefix(b";") {
        let name = token_length(after);
        if name == 0 {
            return false;
        }
        rest = &after[name..];
        if let Some(value) = rest.strip_prefix(b"=") {
            let length = match value.first() {
                Some(b'"') => quoted_length(value),
                _ => token_length(value),
            };
            if length == 0 {
                return false;
            }
            rest = &value[length..];
        }
    }
    rest.is_empty()
}

/// How many token characters (RFC 9110 `tchar`) `bytes` starts with.
fn token_length(bytes: &[u8]) -> usize {
    bytes
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
        .count()
}

/// The length of the quoted string `bytes` starts with (its quotes included), 0 if none.
fn quoted_length(bytes: &[u8]) -> usize {
    let text = |b: u8| b == b'\t' || b == b' ' || (0x21..=0x7e).contains(&b) || b >= 0x80;
    let mut i = 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' => return i + 1,
            b'\\' if bytes.get(i + 1).is_some_and(|&next| text(next)) => i += 2,
            b'\\' => return 0,
            b if text(b) => i += 1,
            _ => return 0,
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Decode `wire` fed `piece` bytes at a time: the body, and whether it ended.
    fn decode(wire: &[u8], piece: usize) -> Result<(Vec<u8>, bool), String> {
        let mut decoder = Decoder::default();
        let mut buffer = BytesMut::new();
        let mut body = Vec::new();
        let mut fed = 0;
        loop {
            match decoder.step(&mut buffer)? {
                Step::Data(data) => body.extend_from_slice(&data),
                Step::End => return Ok((body, buffer.is_empty())),
                Step::NeedMore if fed == wire.len() => return Ok((body, false)),
                Step::NeedMore => {
                    let next = (fed + piece).min(wire.len());
                    buffer.extend_from_slice(&wire[fed..next]);
                    fed = next;
                }
            }
        }
    }

    #[test]
    fn chunks_decode_however_the_bytes_are_split() {
        let wire = b"5;name=value\r\nhello\r\n7;a;b=\"q \\\" ;\"\r\n, world\r\nA\r\n0123456789\r\n0\r\nx-trailer: 1\r\n\r\n";
        for piece in 1..wire.len() {
            assert_eq!(
                decode(wire, piece).unwrap(),
                (b"hello, world0123456789".to_vec(), true),
                "{piece}"
            );
        }
    }

    #[test]
    fn a_body_cut_short_never_ends() {
        assert_eq!(decode(b"5\r\nhel", 64).unwrap(), (b"hel".to_vec(), false));
        assert_eq!(
            decode(b"5\r\nhello\r\n0\r\n", 64).unwrap(),
            (b"hello".to_vec(), false)
        );
    }

    #[test]
    fn malformed_framing_is_refused() {
        assert_eq!(
            decode(b"zz\r\n", 64).unwrap_err(),
            "invalid chunk size \"zz\""
        );
        assert!(decode(b"fffffffffffffffff\r\n", 64)
            .unwrap_err()
            .starts_with("invalid chunk size"));
        assert_eq!(
            decode(b"2\r\nhello\r\n", 64).unwrap_err(),
            "a chunk is longer than its declared size"
        );
        for (wire, error) in [
            (&b"5\rhello\r\n"[..], "a chunk line ends in a bare CR"),
            (b"5\nhello\r\n", "a chunk line ends in a bare LF"),
            (b"5;a\nb\r\nhello\r\n", "a chunk line ends in a bare LF"),
            (
                b"5\r\nhello\r\n0\r\nx: 1\n\r\n",
                "a chunk line ends in a bare LF",
            ),
        ] {
            for piece in 1..wire.len() {
                assert_eq!(decode(wire, piece).unwrap_err(), error, "{wire:?} {piece}");
            }
        }
        for line in [
            "5 ",
            " 5",
            "5\t",
            "5 ;a=b",
            "5; a=b",
            "5;a =b",
            "5;a= b",
            "5;a=b ",
            "5;",
            "5;=b",
            "5;a=",
            "5;a=\"b",
            "5;a=b\"c\"",
            "5;a=\"\x01\"",
            "5;a=b;",
        ] {
            let wire = format!("{line}\r\nhello\r\n0\r\n\r\n");
            assert!(
                decode(wire.as_bytes(), 64)
                    .unwrap_err()
                    .starts_with("invalid chunk size"),
                "{line:?}"
            );
        }
        let endless = vec![b'1'; MAX_LINE + 10];
        assert_eq!(
            decode(&endless, 64).unwrap_err(),
            "a chunk line is too long"
        );
        let mut trailers = b"0\r\n".to_vec();
        for _ in 0..2000 {
            trailers.extend_from_slice(b"x-trailer: 1234\r\n");
        }
        assert_eq!(
            decode(&trailers, 512).unwrap_err(),
            "the trailers are too large"
        );
    }
}
