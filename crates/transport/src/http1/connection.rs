//! One HTTP/1.1 connection, driven by the call that uses it: the request is written whole,
//! then the response is read by that same call. Between responses the connection holds its
//! socket and no buffer: a response is read into a stack buffer first and copied out at its
//! size, so a connection waiting for an answer has allocated nothing for it.

use std::io::{self, IoSlice};
use std::pin::Pin;
use std::task::{ready, Context, Poll, Waker};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::chunked;
use super::response_head::{self, Framing, ResponseHead, MAX_HEAD_BYTES};
use super::{Http1Error, Stream};

mod body;

use body::BodyState;
pub use body::ResponseBody;

/// Bytes taken per read when the size of what comes is unknown (a head, a chunk, a body
/// read until close): read on the stack, then copied into a buffer of their own size.
const STACK_READ: usize = 16 * 1024;

/// The most of a declared body reserved ahead of its arrival: a server that declares a large
/// `Content-Length` and sends nothing does not make the client allocate it all.
const MAX_RESERVED: usize = 256 * 1024;

pub struct Connection {
    stream: Stream,
    /// Bytes read and not consumed yet: the part of a response past what was parsed.
    buffer: BytesMut,
    /// A response was read whole and the server keeps the connection open; cleared when a
    /// request goes out, so a call abandoned half-way leaves the connection unusable.
    reusable: bool,
}

impl Connection {
    pub fn new(stream: Stream) -> Self {
        Self {
            stream,
            buffer: BytesMut::new(),
            reusable: true,
        }
    }

    /// The last response was read whole and the server keeps the connection open.
    pub fn reusable(&self) -> bool {
        self.reusable
    }

    /// Whether an idle connection can take a request: the server has neither closed it nor
    /// sent anything unasked (a 408 before closing, say). Looked at without waiting.
    pub fn is_open(&mut self) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        let mut probe = [0u8; 64];
        let mut probe = ReadBuf::new(&mut probe);
        self.reusable
            && Pin::new(&mut self.stream)
                .poll_read(&mut cx, &mut probe)
                .is_pending()
    }

    /// Watch an idle connection: true once it can serve no request (the server closed or reset
    /// it, or sent something unasked); until then `cx` is woken when its socket turns readable.
    /// Costs nothing while the socket stays quiet: the reactor watches it.
    pub fn poll_unusable(&mut self, cx: &mut Context<'_>) -> bool {
        // A readiness left over from the last response is cleared by the look that finds the
        // socket empty; a few rounds bound a stream that keeps reporting ready yet yields nothing.
        for _ in 0..4 {
            let readable = match &self.stream {
                Stream::Plain(tcp) => tcp.poll_read_ready(cx),
                Stream::Tls(tls) => tls.get_ref().0.poll_read_ready(cx),
            };
            if readable.is_pending() {
                return false;
            }
            if !self.is_open() {
                return true;
            }
        }
        false
    }

    /// Write a request (its `head`, then its `body` chunks, vectored) and read the head of
    /// its response. `to_head_request`: the request was `HEAD`, so no body follows.
    ///
    /// A final answer that arrives while the body still waits to be written (a 413 to an
    /// upload the server stopped reading) is returned as Node's client returns it: the rest
    /// of the body is not sent, and the connection is not reused.
    pub async fn send(
        &mut self,
        head: &[u8],
        body: &[Bytes],
        to_head_request: bool,
    ) -> Result<ResponseHead, Http1Error> {
        self.reusable = false;
        let mut written = 0;
        let mut looked = 0;
        let early = std::future::poll_fn(|cx| {
            self.poll_write_or_answer(cx, head, body, to_head_request, &mut written, &mut looked)
        })
        .await?;
        match early {
            Some(mut answer) => {
                answer.keep_alive = false;
                Ok(answer)
            }
            None => self.read_head(to_head_request).await,
        }
    }

    /// Write the request; while the socket has no room for more of it, read what the server
    /// already sent. Ready with None once all is written, or with a final answer that came first.
    fn poll_write_or_answer(
        &mut self,
        cx: &mut Context<'_>,
        head: &[u8],
        body: &[Bytes],
        to_head_request: bool,
        written: &mut usize,
        looked: &mut usize,
    ) -> Poll<Result<Option<ResponseHead>, Http1Error>> {
        if let Poll::Ready(outcome) = poll_write_all(&mut self.stream, cx, head, body, written) {
            return Poll::Ready(match outcome {
                Ok(()) => Ok(None),
                Err(source) => Err(Http1Error::Write {
                    source,
                    sent_nothing: *written == 0,
                }),
            });
        }
        loop {
            let read = ready!(self.poll_fill(cx, 0));
            let before_response = self.buffer.is_empty();
            match read {
                Ok(0) => {
                    return Poll::Ready(Err(Http1Error::Read {
                        source: None,
                        before_response,
                    }))
                }
                Err(source) => {
                    return Poll::Ready(Err(Http1Error::Read {
                        source: Some(source),
                        before_response,
                    }))
                }
                Ok(_) => {
                    if let Some(answer) = self.take_head(to_head_request, looked)? {
                        return Poll::Ready(Ok(Some(answer)));
                    }
                }
            }
        }
    }

    async fn read_head(&mut self, to_head_request: bool) -> Result<ResponseHead, Http1Error> {
        let mut received = !self.buffer.is_empty();
        // Where the last look for the head's end stopped: a head that trickles in is parsed
        // once it can be complete, not again at every read (that would be quadratic).
        let mut looked = 0;
        loop {
            if let Some(head) = self.take_head(to_head_request, &mut looked)? {
                return Ok(head);
            }
            let read = std::future::poll_fn(|cx| self.poll_fill(cx, 0))
                .await
                .map_err(|source| Http1Error::Read {
                    source: Some(source),
                    before_response: !received,
                })?;
            if read == 0 {
                return Err(Http1Error::Read {
                    source: None,
                    before_response: !received,
                });
            }
            received = true;
        }
    }

    /// The final head at the front of the buffer once it is all there, interim (1xx) answers
    /// before it taken off; None while more bytes are needed. `looked`: how much of the buffer
    /// was already searched for the head's end.
    fn take_head(
        &mut self,
        to_head_request: bool,
        looked: &mut usize,
    ) -> Result<Option<ResponseHead>, Http1Error> {
        loop {
            if response_head::may_end(&self.buffer, *looked) {
                *looked = 0;
                let parsed = response_head::parse(&mut self.buffer, to_head_request)
                    .map_err(Http1Error::Malformed)?;
                match parsed {
                    Some(head) if head.is_interim() => continue,
                    Some(head) => return Ok(Some(head)),
                    None => {}
                }
            }
            // Every byte in the buffer is the head's: no head ended in it.
            if response_head::has_bare_cr(&self.buffer, *looked) {
                return Err(Http1Error::Malformed(
                    "a line of its head ends in a bare CR".into(),
                ));
            }
            if self.buffer.len() > MAX_HEAD_BYTES {
                return Err(Http1Error::Malformed(format!(
                    "its head is larger than {} KiB",
                    MAX_HEAD_BYTES / 1024
                )));
            }
            *looked = self.buffer.len();
            return Ok(None);
        }
    }

    /// The body of the response whose head [`send`](Self::send) returned, framed by its
    /// `framing`. `keep_open`: neither the request nor the response asked to close the
    /// connection.
    pub fn body(&mut self, framing: Framing, keep_open: bool) -> ResponseBody<'_> {
        let state = match framing {
            Framing::Empty => BodyState::Ended,
            Framing::Length(length) => BodyState::Length(length),
            Framing::Chunked => BodyState::Chunked(chunked::Decoder::default()),
            Framing::UntilClose => BodyState::UntilClose,
        };
        let mut body = ResponseBody {
            connection: self,
            state,
            keep_open,
        };
        if matches!(body.state, BodyState::Ended) {
            body.end();
        }
        body
    }

    /// Read once into the buffer: straight into it when `expected` more bytes are declared
    /// (up to [`MAX_RESERVED`] reserved), else on the stack and copied at their size. Ready
    /// with 0 at the end of the stream.
    fn poll_fill(&mut self, cx: &mut Context<'_>, expected: u64) -> Poll<io::Result<usize>> {
        if expected > 0 {
            let wanted = (expected as usize).min(MAX_RESERVED);
            if self.buffer.capacity() - self.buffer.len() < wanted {
                self.buffer.reserve(wanted);
            }
            return tokio_util::io::poll_read_buf(Pin::new(&mut self.stream), cx, &mut self.buffer);
        }
        // Not zeroed: filling 16 KiB before every read cost more than the read's copy.
        let mut space = [std::mem::MaybeUninit::<u8>::uninit(); STACK_READ];
        let mut read = ReadBuf::uninit(&mut space);
        ready!(Pin::new(&mut self.stream).poll_read(cx, &mut read))?;
        self.buffer.extend_from_slice(read.filled());
        Poll::Ready(Ok(read.filled().len()))
    }
}

/// Write every byte of `head` and `body` (vectored), counting them in `written`, then flush.
fn poll_write_all(
    stream: &mut Stream,
    cx: &mut Context<'_>,
    head: &[u8],
    body: &[Bytes],
    written: &mut usize,
) -> Poll<io::Result<()>> {
    const SLICES: usize = 8;
    loop {
        let mut skip = *written;
        let mut slices = [IoSlice::new(&[]); SLICES];
        let mut count = 0;
        for part in std::iter::once(head).chain(body.iter().map(|chunk| &chunk[..])) {
            if skip >= part.len() {
                skip -= part.len();
                continue;
            }
            slices[count] = IoSlice::new(&part[skip..]);
            skip = 0;
            count += 1;
            if count == SLICES {
                break;
            }
        }
        if count == 0 {
            return Pin::new(&mut *stream).poll_flush(cx);
        }
        let wrote = ready!(Pin::new(&mut *stream).poll_write_vectored(cx, &slices[..count]))?;
        if wrote == 0 {
            return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
        }
        *written += wrote;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// A connection to a server on 127.0.0.1 that reads one request, writes `answer` in the
    /// given pieces, then closes when `close`. Returns the connection and what the server read.
    async fn serve(
        pieces: Vec<&'static [u8]>,
        close: bool,
    ) -> (Connection, tokio::task::JoinHandle<Vec<u8>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = vec![0u8; 4096];
            let read = socket.read(&mut request).await.unwrap();
            request.truncate(read);
            for piece in pieces {
                socket.write_all(piece).await.unwrap();
                socket.flush().await.unwrap();
                tokio::task::yield_now().await;
            }
            if !close {
                let _ = socket.read(&mut [0u8; 1]).await;
            }
            request
        });
        let tcp = TcpStream::connect(address).await.unwrap();
        (Connection::new(Stream::Plain(tcp)), server)
    }

    async fn exchange(connection: &mut Connection) -> Result<(u16, Vec<u8>), Http1Error> {
        let head = connection
            .send(b"GET / HTTP/1.1\r\nhost: t\r\n\r\n", &[], false)
            .await?;
        let mut body = connection.body(head.framing, head.keep_alive);
        let mut collected = Vec::new();
        while let Some(frame) = body.frame().await {
            collected.extend_from_slice(&frame?.into_data().unwrap());
        }
        Ok((head.status, collected))
    }

    #[tokio::test]
    async fn a_response_read_whole_leaves_the_connection_reusable_and_unbuffered() {
        let (mut connection, server) = serve(
            vec![
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\ncontent-le",
                b"ngth: 5\r\n\r\nhel",
                b"lo",
            ],
            false,
        )
        .await;
        assert_eq!(
            exchange(&mut connection).await.unwrap(),
            (200, b"hello".to_vec())
        );
        assert!(connection.reusable() && connection.is_open());
        assert_eq!(
            connection.buffer.capacity(),
            0,
            "an idle connection holds no buffer"
        );
        drop(connection);
        assert_eq!(server.await.unwrap(), b"GET / HTTP/1.1\r\nhost: t\r\n\r\n");
    }

    #[tokio::test]
    async fn chunked_and_close_delimited_bodies_are_read_to_their_end() {
        let (mut connection, _server) = serve(
            vec![
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n",
                b"2\r\nde\r\n0\r\n\r\n",
            ],
            false,
        )
        .await;
        assert_eq!(
            exchange(&mut connection).await.unwrap(),
            (200, b"abcde".to_vec())
        );
        assert!(connection.reusable());

        let (mut connection, _server) =
            serve(vec![b"HTTP/1.1 200 OK\r\n\r\nuntil ", b"close"], true).await;
        assert_eq!(
            exchange(&mut connection).await.unwrap(),
            (200, b"until close".to_vec())
        );
        assert!(
            !connection.reusable(),
            "a body read until close ends its connection"
        );
    }

    #[tokio::test]
    async fn bytes_after_the_response_make_the_connection_unusable() {
        let (mut connection, _server) = serve(
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nxHTTP/1.1 200 OK\r\n"],
            false,
        )
        .await;
        assert_eq!(
            exchange(&mut connection).await.unwrap(),
            (200, b"x".to_vec())
        );
        assert!(!connection.reusable());
    }

    #[tokio::test]
    async fn an_ending_before_or_during_the_response_is_told_apart() {
        let (mut connection, _server) = serve(vec![], true).await;
        let before = exchange(&mut connection).await.unwrap_err();
        assert!(
            before.died_before_response() && !before.sent_nothing(),
            "{before:?}"
        );
        assert_eq!(
            before.to_string(),
            "the connection closed before any response"
        );

        let (mut connection, _server) = serve(
            vec![b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nshort"],
            true,
        )
        .await;
        let during = exchange(&mut connection).await.unwrap_err();
        assert!(!during.died_before_response(), "{during:?}");
        assert_eq!(
            during.to_string(),
            "the connection closed before the response was complete"
        );
        assert!(!connection.reusable());

        let (mut connection, _server) = serve(vec![b"SSH-2.0-OpenSSH_9\r\n\r\n"], true).await;
        let garbage = exchange(&mut connection).await.unwrap_err();
        assert!(
            garbage
                .to_string()
                .starts_with("the response is not valid HTTP/1.1: "),
            "{garbage}"
        );
    }

    #[tokio::test]
    async fn a_head_over_its_limit_is_refused_whole_or_not() {
        static LINE: [u8; 1024] = [b'x'; 1024];
        let mut pieces: Vec<&'static [u8]> = vec![b"HTTP/1.1 200 OK\r\nx-long: "];
        pieces.extend(std::iter::repeat_n(&LINE[..], MAX_HEAD_BYTES / 1024 + 1));
        let (mut connection, _server) = serve(pieces.clone(), false).await;
        let error = exchange(&mut connection).await.unwrap_err();
        assert_eq!(
            error.to_string(),
            "the response is not valid HTTP/1.1: its head is larger than 64 KiB"
        );
        // Whole, but too large all the same.
        pieces.push(b"\r\ncontent-length: 0\r\n\r\n");
        let (mut connection, _server) = serve(pieces, false).await;
        let error = exchange(&mut connection).await.unwrap_err();
        assert!(error
            .to_string()
            .ends_with("its head is larger than 64 KiB"));
    }

    #[tokio::test]
    async fn an_idle_connection_the_server_closed_is_found_closed() {
        let (mut connection, server) = serve(vec![b"HTTP/1.1 204 No Content\r\n\r\n"], true).await;
        assert_eq!(exchange(&mut connection).await.unwrap(), (204, Vec::new()));
        assert!(connection.reusable());
        server.await.unwrap();
        // The close reaches the client's socket asynchronously: poll until the reactor sees it.
        let mut seen = false;
        for _ in 0..200 {
            if !connection.is_open() {
                seen = true;
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        assert!(seen, "the server's close was never noticed");
    }

    /// Exchange against a server that keeps the connection open, bounded: a response that
    /// is only refused by a timeout fails the test instead of hanging it.
    async fn refused_at_once(pieces: Vec<&'static [u8]>) -> String {
        let (mut connection, _server) = serve(pieces, false).await;
        let outcome =
            tokio::time::timeout(std::time::Duration::from_secs(5), exchange(&mut connection))
                .await
                .expect("refused at once, not left waiting");
        outcome.unwrap_err().to_string()
    }

    #[tokio::test]
    async fn responses_nodes_parser_refuses_are_refused_without_waiting() {
        let malformed = "the response is not valid HTTP/1.1: ";
        for (pieces, reason) in [
            (
                vec![&b"HTTP/1.1 200 OK\rcontent-length: 2\r\r"[..]],
                "a line of its head ends in a bare CR",
            ),
            (
                vec![b"HTTP/1.1 200 OK\r", b"\ncontent-length: 2\r", b"x"],
                "a line of its head ends in a bare CR",
            ),
            (
                vec![b"HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\ncontent-length: 2\r\n\r\nok"],
                "Transfer-Encoding does not end in chunked",
            ),
            (
                vec![b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2;a b\r\nok\r\n"],
                "invalid chunk size \"2;a b\"",
            ),
            (
                vec![b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\rok\r\n"],
                "a chunk line ends in a bare CR",
            ),
        ] {
            assert_eq!(refused_at_once(pieces).await, format!("{malformed}{reason}"));
        }
    }

    #[tokio::test]
    async fn a_final_answer_during_the_upload_is_returned_and_the_rest_not_sent() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut head = [0u8; 256];
            let _ = socket.read(&mut head).await.unwrap();
            socket
                .write_all(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 413 Content Too Large\r\ncontent-length: 3\r\n\r\nbig")
                .await
                .unwrap();
            // Read nothing more until the client is gone: its upload stalls once buffers fill.
            tokio::time::sleep(std::time::Duration::from_secs(10)).await;
            drop(socket);
        });
        let tcp = TcpStream::connect(address).await.unwrap();
        let mut connection = Connection::new(Stream::Plain(tcp));
        let upload = Bytes::from(vec![b'x'; 64 * 1024 * 1024]);
        let head = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            connection.send(
                b"POST / HTTP/1.1\r\nhost: t\r\ncontent-length: 67108864\r\n\r\n",
                &[upload],
                false,
            ),
        )
        .await
        .expect("the answer is read while the upload stalls")
        .unwrap();
        assert_eq!((head.status, head.keep_alive), (413, false));
        let mut body = connection.body(head.framing, head.keep_alive);
        let mut collected = Vec::new();
        while let Some(frame) = body.frame().await {
            collected.extend_from_slice(&frame.unwrap().into_data().unwrap());
        }
        assert_eq!(collected, b"big");
        assert!(!connection.reusable(), "half a request went out on it");
        server.abort();
    }

    /// 10,000 calls in flight hold 10,000 connections: each is its socket and a few words.
    #[test]
    fn a_connection_is_a_few_words() {
        let size = std::mem::size_of::<Connection>();
        assert!(size <= 80, "a connection is {size} bytes");
    }
}
