//! HTTP/1.1 on one connection, our own instead of hyper's: a request written whole, a response
//! read whole by the call that sent it. No task drives a connection and nothing is allocated
//! for it between calls, so a connection costs its socket and a few words, waiting or idle
//! (hyper kept ~26 KB per connection: a read buffer, a write buffer and a request channel,
//! 10,000 times over with 10,000 calls in flight). Each part is its own module:
//! [`request_head`] writes, [`response_head`] parses and frames, [`chunked`] decodes, and
//! [`connection`] moves the bytes.

pub mod chunked;
pub mod connection;
mod error;
pub mod request_head;
pub mod response_head;
mod stream;

pub use connection::Connection;
pub use error::Http1Error;
pub use stream::Stream;
