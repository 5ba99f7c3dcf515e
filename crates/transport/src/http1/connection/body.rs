//! A response body pulled from its connection as the caller polls it (`http_body::Body`): the
//! framing (declared length, chunked, until close) decides where it ends, and its end decides
//! whether the connection can serve another request. Kept apart from the connection's request
//! and head handling because it outlives them: the call streams it after the head is returned.

use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Frame, SizeHint};

use super::super::chunked::{self, Step};
use super::super::Http1Error;
use super::Connection;

/// A response body, read from its connection as the caller polls it. The connection is
/// reusable once the body has ended on a connection the server keeps open, with nothing
/// unasked after it.
pub struct ResponseBody<'a> {
    pub(super) connection: &'a mut Connection,
    pub(super) state: BodyState,
    pub(super) keep_open: bool,
}

pub(super) enum BodyState {
    /// Bytes of a declared length still to come.
    Length(u64),
    Chunked(chunked::Decoder),
    UntilClose,
    Ended,
}

impl ResponseBody<'_> {
    pub(super) fn end(&mut self) {
        self.state = BodyState::Ended;
        let connection = &mut *self.connection;
        connection.reusable = self.keep_open && connection.buffer.is_empty();
        if connection.buffer.is_empty() {
            // The body's frames share this allocation: let them own it, and the idle
            // connection hold none.
            connection.buffer = BytesMut::new();
        }
    }
}

impl http_body::Body for ResponseBody<'_> {
    type Data = Bytes;
    type Error = Http1Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Http1Error>>> {
        let this = &mut *self;
        loop {
            let expected = match &mut this.state {
                BodyState::Ended => return Poll::Ready(None),
                BodyState::Length(0) => {
                    this.end();
                    return Poll::Ready(None);
                }
                BodyState::Length(left) => {
                    let buffer = &mut this.connection.buffer;
                    if !buffer.is_empty() {
                        let taken = (buffer.len() as u64).min(*left);
                        *left -= taken;
                        let data = buffer.split_to(taken as usize).freeze();
                        if *left == 0 {
                            this.end();
                        }
                        return Poll::Ready(Some(Ok(Frame::data(data))));
                    }
                    *left
                }
                BodyState::Chunked(decoder) => {
                    match decoder
                        .step(&mut this.connection.buffer)
                        .map_err(Http1Error::Malformed)
                    {
                        Ok(Step::Data(data)) => return Poll::Ready(Some(Ok(Frame::data(data)))),
                        Ok(Step::End) => {
                            this.end();
                            return Poll::Ready(None);
                        }
                        Ok(Step::NeedMore) => 0,
                        Err(error) => return Poll::Ready(Some(Err(error))),
                    }
                }
                BodyState::UntilClose => {
                    let buffer = &mut this.connection.buffer;
                    if !buffer.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(buffer.split().freeze()))));
                    }
                    0
                }
            };
            let read = match ready!(this.connection.poll_fill(cx, expected)) {
                Ok(read) => read,
                Err(source) => {
                    return Poll::Ready(Some(Err(Http1Error::Read {
                        source: Some(source),
                        before_response: false,
                    })))
                }
            };
            if read == 0 {
                if matches!(this.state, BodyState::UntilClose) {
                    this.keep_open = false;
                    this.end();
                    return Poll::Ready(None);
                }
                return Poll::Ready(Some(Err(Http1Error::Read {
                    source: None,
                    before_response: false,
                })));
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, BodyState::Ended)
    }

    fn size_hint(&self) -> SizeHint {
        match self.state {
            BodyState::Length(left) => SizeHint::with_exact(left),
            BodyState::Ended => SizeHint::with_exact(0),
            _ => SizeHint::default(),
        }
    }
}
