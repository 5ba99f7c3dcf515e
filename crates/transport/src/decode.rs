//! Compressed response bodies, decoded while they are read. Requests ask for
//! [`ACCEPT_ENCODING`]; a `Content-Encoding: gzip` (or `x-gzip`) or `br` answer is decoded
//! natively, `identity` or none passes through, and any other encoding is refused.
//!
//! [`Decoded`] yields a few [`CHUNK`]s of decoded bytes per frame at most, however much a compressed
//! frame expands, so the size limit that reads it (`maxResponseBytes`, decisions D28) stops a
//! decompression bomb before it is buffered. A body that does not decode (corrupt, truncated,
//! trailing garbage) fails like a body cut short: a `NETWORK_ERROR`, retried by the policy.

use std::io::Write;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use brotli_decompressor::{BrotliDecompressStream, BrotliResult, BrotliState, StandardAlloc};
use bytes::{Buf, Bytes};
use http::header::{CONTENT_ENCODING, CONTENT_LENGTH};
use http::HeaderMap;
use http_body::{Body, Frame, SizeHint};

use crate::error::TransportError;

/// What every request accepts (unless its caller set `Accept-Encoding` itself).
pub const ACCEPT_ENCODING: &str = "gzip, br";

/// Decoded bytes per step: brotli's output buffer, the size of flate2's own for gzip.
const CHUNK: usize = 32 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Gzip,
    Brotli,
}

impl Encoding {
    /// The codings a response declares, in the order they were applied: every
    /// `Content-Encoding` line is one list (RFC 9110 section 8.4), `identity` adds nothing.
    /// When there is one, the headers become those of the decoded body: `Content-Encoding` and
    /// `Content-Length` are removed, as axios does. Any coding the client cannot decode fails.
    pub fn take_from(headers: &mut HeaderMap) -> Result<Vec<Encoding>, TransportError> {
        let mut codings = Vec::new();
        for value in headers.get_all(CONTENT_ENCODING) {
            for name in value.as_bytes().split(|&b| b == b',') {
                let name = String::from_utf8_lossy(name.trim_ascii()).to_ascii_lowercase();
                codings.push(match name.as_str() {
                    "" | "identity" => continue,
                    "gzip" | "x-gzip" => Encoding::Gzip,
                    "br" => Encoding::Brotli,
                    _ => {
                        let shown: String = name.chars().take(40).collect();
                        return Err(TransportError::network(format!(
                            "the response has Content-Encoding {shown:?}, which the client cannot decode (it accepts {ACCEPT_ENCODING})"
                        )));
                    }
                });
            }
        }
        if !codings.is_empty() {
            headers.remove(CONTENT_ENCODING);
            headers.remove(CONTENT_LENGTH);
        }
        Ok(codings)
    }

    fn name(self) -> &'static str {
        match self {
            Encoding::Gzip => "gzip",
            Encoding::Brotli => "br",
        }
    }
}

/// `body` decoded through every one of `codings` (as [`Encoding::take_from`] lists them), the
/// last applied undone first. Boxed: how many layers there are is known only per response.
pub fn decode_all<'a, B>(
    body: B,
    codings: &[Encoding],
) -> Pin<Box<dyn Body<Data = Bytes, Error = DecodeError> + Send + 'a>>
where
    B: Body<Data = Bytes> + Unpin + Send + 'a,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let (&last, earlier) = codings
        .split_last()
        .expect("decode_all is given at least one coding");
    let mut decoded: Pin<Box<dyn Body<Data = Bytes, Error = DecodeError> + Send + 'a>> =
        Box::pin(Decoded::new(body, last));
    for &coding in earlier.iter().rev() {
        decoded = Box::pin(Decoded::new(decoded, coding));
    }
    decoded
}

/// A body that failed to decode, or the failure of the body underneath (its whole cause chain).
#[derive(Debug)]
pub struct DecodeError {
    message: String,
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// `inner`, decoded.
pub struct Decoded<B> {
    inner: B,
    encoding: Encoding,
    decoder: Decoder,
    /// Compressed bytes not consumed yet.
    input: Bytes,
    saw_input: bool,
    inner_ended: bool,
    finished: bool,
}

impl<B> Decoded<B> {
    pub fn new(inner: B, encoding: Encoding) -> Self {
        let decoder = match encoding {
            Encoding::Gzip => {
                Decoder::Gzip(Box::new(flate2::write::MultiGzDecoder::new(Vec::new())))
            }
            Encoding::Brotli => Decoder::Brotli {
                state: Box::new(BrotliState::new(
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                    StandardAlloc::default(),
                )),
                done: false,
                output_pending: false,
            },
        };
        Self {
            inner,
            encoding,
            decoder,
            input: Bytes::new(),
            saw_input: false,
            inner_ended: false,
            finished: false,
        }
    }

    fn corrupt(&self, detail: impl std::fmt::Display) -> DecodeError {
        DecodeError {
            message: format!(
                "the {} response body could not be decoded: {detail}",
                self.encoding.name()
            ),
        }
    }
}

impl<B> Body for Decoded<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Data = Bytes;
    type Error = DecodeError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, DecodeError>>> {
        let this = &mut *self;
        loop {
            // A decoder can hold decoded bytes after taking all its input (brotli, when a step
            // filled its output): they come out before the body's next frame is read.
            if !this.input.is_empty() || this.decoder.holds_output() {
                let had_input = !this.input.is_empty();
                let (used, output) = match this.decoder.step(&this.input) {
                    Ok(step) => step,
                    Err(detail) => return Poll::Ready(Some(Err(this.corrupt(detail)))),
                };
                this.input.advance(used);
                if !output.is_empty() {
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(output)))));
                }
                if had_input && used == 0 {
                    return Poll::Ready(Some(Err(
                        this.corrupt("data after the end of the compressed stream")
                    )));
                }
                continue;
            }
            if this.inner_ended {
                if this.finished || !this.saw_input {
                    // An empty body (HEAD, 204, 304) has nothing to decode.
                    return Poll::Ready(None);
                }
                this.finished = true;
                return match this.decoder.finish() {
                    Ok(output) if output.is_empty() => Poll::Ready(None),
                    Ok(output) => Poll::Ready(Some(Ok(Frame::data(Bytes::from(output))))),
                    Err(detail) => Poll::Ready(Some(Err(this.corrupt(detail)))),
                };
            }
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        this.saw_input |= !data.is_empty();
                        this.input = data;
                    }
                }
                Some(Err(error)) => {
                    return Poll::Ready(Some(Err(DecodeError {
                        message: crate::error::describe(&error),
                    })));
                }
                None => this.inner_ended = true,
            }
        }
    }

    fn size_hint(&self) -> SizeHint {
        // The decoded size is unknown until decoded; the compressed length says nothing of it.
        SizeHint::default()
    }
}

enum Decoder {
    Gzip(Box<flate2::write::MultiGzDecoder<Vec<u8>>>),
    Brotli {
        state: Box<BrotliState<StandardAlloc, StandardAlloc, StandardAlloc>>,
        done: bool,
        /// The last step filled its output with more to come, whatever input is left.
        output_pending: bool,
    },
}

impl Decoder {
    /// Decode some of `input`: how much of it was consumed, and at most about [`CHUNK`] bytes out.
    fn step(&mut self, input: &[u8]) -> Result<(usize, Vec<u8>), String> {
        match self {
            Decoder::Gzip(decoder) => {
                // Each write inflates into flate2's own 32 KiB buffer; flush moves it out.
                let used = decoder.write(input).map_err(|e| e.to_string())?;
                decoder.flush().map_err(|e| e.to_string())?;
                Ok((used, std::mem::take(decoder.get_mut())))
            }
            Decoder::Brotli {
                state,
                done,
                output_pending,
            } => {
                if *done {
                    return Ok((0, Vec::new()));
                }
                let mut output = vec![0u8; CHUNK];
                let (mut available_in, mut input_offset) = (input.len(), 0);
                let (mut available_out, mut output_offset, mut total_out) = (CHUNK, 0, 0);
                let result = BrotliDecompressStream(
                    &mut available_in,
                    &mut input_offset,
                    input,
                    &mut available_out,
                    &mut output_offset,
                    &mut output,
                    &mut total_out,
                    state,
                );
                *output_pending = matches!(result, BrotliResult::NeedsMoreOutput);
                match result {
                    BrotliResult::ResultFailure => return Err("invalid brotli data".into()),
                    BrotliResult::ResultSuccess => *done = true,
                    BrotliResult::NeedsMoreInput | BrotliResult::NeedsMoreOutput => {}
                }
                output.truncate(output_offset);
                Ok((input_offset, output))
            }
        }
    }

    /// Decoded bytes are waiting for a step, with or without more input. (gzip's writer hands
    /// over what it holds at its next write, or in `finish`.)
    fn holds_output(&self) -> bool {
        matches!(
            self,
            Decoder::Brotli {
                output_pending: true,
                ..
            }
        )
    }

    /// The body ended: the last decoded bytes, or why the stream is incomplete.
    fn finish(&mut self) -> Result<Vec<u8>, String> {
        match self {
            Decoder::Gzip(decoder) => {
                decoder.try_finish().map_err(|e| e.to_string())?;
                Ok(std::mem::take(decoder.get_mut()))
            }
            Decoder::Brotli { done: true, .. } => Ok(Vec::new()),
            Decoder::Brotli { .. } => Err("the compressed stream is truncated".into()),
        }
    }
}

#[cfg(test)]
mod tests;
