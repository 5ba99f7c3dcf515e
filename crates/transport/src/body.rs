//! The outgoing request body: a request's shared chunks as an [`http_body::Body`] of one frame,
//! whose data walks the chunks in place (hyper writes them vectored, with no copy), with an
//! exact size hint so hyper sends a Content-Length instead of chunked encoding.

use std::convert::Infallible;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use http_body::{Frame, SizeHint};

use crate::request::Body;

/// hyper queues a connection's requests through a channel whose first block, allocated when
/// the connection opens, holds 32 request slots: every byte of this type is 32 bytes of every
/// open connection (10,000 of them in the bench's memory scenario). So it is one pointer, the
/// body's shared chunks until hyper takes them, and the cursor lives in the frame's data.
pub struct SendBody(Body);

impl SendBody {
    /// The body's chunks, shared with the request description (no copy of them or their list).
    pub fn new(body: &Body) -> Self {
        Self(body.clone())
    }
}

impl http_body::Body for SendBody {
    type Data = Chunks;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Chunks>, Infallible>>> {
        let data = Chunks::of(std::mem::take(&mut self.0));
        Poll::Ready(data.map(|data| Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.0.len() as u64)
    }
}

/// What is left to write of a body's chunks (none of them empty), read in place.
pub struct Chunks {
    chunks: Arc<Vec<Bytes>>,
    /// The chunk being written, and how much of it is written.
    index: usize,
    offset: usize,
    remaining: usize,
}

impl Chunks {
    /// The whole of `body` to write; none for an empty body.
    fn of(body: Body) -> Option<Self> {
        let remaining = body.len();
        body.into_shared().map(|chunks| Self {
            chunks,
            index: 0,
            offset: 0,
            remaining,
        })
    }

    fn unwritten(&self) -> impl Iterator<Item = &[u8]> {
        let offset = self.offset;
        self.chunks
            .get(self.index..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .map(move |(i, chunk)| &chunk[if i == 0 { offset } else { 0 }..])
    }
}

impl Buf for Chunks {
    fn remaining(&self) -> usize {
        self.remaining
    }

    fn chunk(&self) -> &[u8] {
        self.unwritten().next().unwrap_or_default()
    }

    fn advance(&mut self, count: usize) {
        assert!(
            count <= self.remaining,
            "advanced {count} bytes past the {} left",
            self.remaining
        );
        self.remaining -= count;
        let mut count = count;
        while count > 0 {
            let left = self.chunks[self.index].len() - self.offset;
            if count < left {
                self.offset += count;
                return;
            }
            count -= left;
            self.index += 1;
            self.offset = 0;
        }
    }

    fn chunks_vectored<'a>(&'a self, slices: &mut [IoSlice<'a>]) -> usize {
        let mut filled = 0;
        for (slot, chunk) in slices.iter_mut().zip(self.unwritten()) {
            *slot = IoSlice::new(chunk);
            filled += 1;
        }
        filled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use http_body_util::BodyExt;

    fn three_chunks() -> Body {
        Body::from_chunks(vec![
            Bytes::from_static(b"ab"),
            Bytes::new(),
            Bytes::from_static(b"cde"),
            Bytes::from_static(b"fghi"),
        ])
    }

    #[tokio::test]
    async fn the_chunks_go_out_in_order_with_an_exact_length() {
        let body = SendBody::new(&three_chunks());
        assert_eq!(body.size_hint().exact(), Some(9));
        assert!(!body.is_end_stream());
        let collected = body.collect().await.unwrap().to_bytes();
        assert_eq!(collected, Bytes::from_static(b"abcdefghi"));
    }

    #[tokio::test]
    async fn the_body_is_one_frame_and_then_ends() {
        let mut body = SendBody::new(&three_chunks());
        let data = body
            .frame()
            .await
            .unwrap()
            .unwrap()
            .into_data()
            .ok()
            .unwrap();
        assert_eq!(data.remaining(), 9);
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
        assert!(body.frame().await.is_none());
    }

    #[test]
    fn the_data_is_read_in_place_across_chunk_boundaries() {
        let mut data = Chunks::of(three_chunks()).unwrap();
        assert_eq!(data.chunk(), b"ab");
        data.advance(1);
        assert_eq!((data.chunk(), data.remaining()), (&b"b"[..], 8));
        // From inside the first chunk into the middle of the second.
        data.advance(3);
        assert_eq!((data.chunk(), data.remaining()), (&b"e"[..], 5));
        let mut slices = [IoSlice::new(&[]); 4];
        assert_eq!(data.chunks_vectored(&mut slices), 2);
        assert_eq!((&*slices[0], &*slices[1]), (&b"e"[..], &b"fghi"[..]));
        // Fewer slots than chunks: as many as fit, in order.
        let mut one = [IoSlice::new(&[])];
        assert_eq!(data.chunks_vectored(&mut one), 1);
        assert_eq!(&*one[0], b"e");
        data.advance(5);
        assert_eq!((data.chunk(), data.remaining()), (&b""[..], 0));
        assert_eq!(data.chunks_vectored(&mut [IoSlice::new(&[]); 4]), 0);
    }

    #[test]
    #[should_panic(expected = "advanced 10 bytes past the 9 left")]
    fn advancing_past_the_end_is_a_bug() {
        Chunks::of(three_chunks()).unwrap().advance(10);
    }

    /// One pointer: every open connection holds 32 of these in hyper's request channel.
    #[test]
    fn a_body_in_flight_is_one_word() {
        assert_eq!(
            std::mem::size_of::<SendBody>(),
            std::mem::size_of::<usize>()
        );
    }

    #[test]
    fn an_empty_body_ends_at_once() {
        let body = SendBody::new(&Body::default());
        assert!(body.is_end_stream());
        assert_eq!(body.size_hint().exact(), Some(0));
    }
}
