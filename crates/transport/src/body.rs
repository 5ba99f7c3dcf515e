//! The outgoing request body: a request's chunks as an [`http_body::Body`], handed to hyper one
//! frame per chunk (hyper writes them vectored), with an exact size hint so hyper sends a
//! Content-Length instead of chunked encoding.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Frame, SizeHint};

use crate::request::Body;

pub struct SendBody {
    chunks: VecDeque<Bytes>,
    remaining: u64,
}

impl SendBody {
    /// The body's chunks, shared with the request description (no copy of their bytes).
    pub fn new(body: &Body) -> Self {
        Self {
            chunks: body.chunks().iter().cloned().collect(),
            remaining: body.len() as u64,
        }
    }
}

impl http_body::Body for SendBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let next = self.chunks.pop_front();
        if let Some(chunk) = &next {
            self.remaining -= chunk.len() as u64;
        }
        Poll::Ready(next.map(|chunk| Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn the_chunks_go_out_in_order_with_an_exact_length() {
        let body = SendBody::new(&Body::from_chunks(vec![
            Bytes::from_static(b"ab"),
            Bytes::new(),
            Bytes::from_static(b"cde"),
        ]));
        assert_eq!(body.size_hint().exact(), Some(5));
        assert!(!body.is_end_stream());
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(collected, Bytes::from_static(b"abcde"));
    }

    #[test]
    fn an_empty_body_ends_at_once() {
        let body = SendBody::new(&Body::default());
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
    }
}
