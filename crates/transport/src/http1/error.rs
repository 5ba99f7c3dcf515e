//! How an exchange on one connection fails, and the two questions the exchange policy asks of a
//! failure: did the connection die before any answer (the keep-alive race, safe to retry on a
//! fresh one), and did the request leave the client at all.

use std::io;

/// Why an exchange on a connection failed.
#[derive(Debug)]
pub enum Http1Error {
    /// The request could not be written; `sent_nothing` when not one byte was accepted.
    Write {
        source: io::Error,
        sent_nothing: bool,
    },
    /// Reading failed (`source`) or the server closed the connection (none) before the
    /// response was complete; `before_response` when not one byte of it had arrived.
    Read {
        source: Option<io::Error>,
        before_response: bool,
    },
    /// The server's bytes are not an HTTP/1.1 response.
    Malformed(String),
}

impl std::fmt::Display for Http1Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Http1Error::Write { .. } => f.write_str("sending the request failed"),
            Http1Error::Read {
                source: Some(_), ..
            } => f.write_str("reading the response failed"),
            Http1Error::Read {
                source: None,
                before_response: true,
            } => f.write_str("the connection closed before any response"),
            Http1Error::Read { source: None, .. } => {
                f.write_str("the connection closed before the response was complete")
            }
            Http1Error::Malformed(detail) => {
                write!(f, "the response is not valid HTTP/1.1: {detail}")
            }
        }
    }
}

impl std::error::Error for Http1Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Http1Error::Write { source, .. } => Some(source),
            Http1Error::Read {
                source: Some(source),
                ..
            } => Some(source),
            _ => None,
        }
    }
}

impl Http1Error {
    /// The connection ended (closed or reset) before a single response byte: on a reused
    /// connection, the evidence of the keep-alive race (see [`crate::exchange`]).
    pub fn died_before_response(&self) -> bool {
        match self {
            Http1Error::Write { source, .. } => is_reset(source),
            Http1Error::Read {
                source,
                before_response: true,
            } => source.as_ref().is_none_or(is_reset),
            _ => false,
        }
    }

    /// Not one byte of the request left the client.
    pub fn sent_nothing(&self) -> bool {
        matches!(
            self,
            Http1Error::Write {
                sent_nothing: true,
                ..
            }
        )
    }
}

fn is_reset(error: &io::Error) -> bool {
    matches!(
        error.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::ConnectionAborted
    )
}
