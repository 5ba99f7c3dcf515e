//! What a call that succeeded hands back.

use std::sync::Arc;

/// A successful call: the JSON text of its result (always valid JSON), or None for `undefined`
/// (an empty REST body).
pub type CallResult = Option<ResultText>;

/// A call that succeeded: its result and the request id its hooks saw (the binding needs it
/// should the result fail to cross into JavaScript).
#[derive(Debug)]
pub struct Completed {
    pub result: CallResult,
    pub request_id: Arc<str>,
}

/// Result text as read from the network, or shared with the response cache (a hit copies nothing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ResultText {
    Fresh(String),
    Cached(Arc<str>),
}

impl std::ops::Deref for ResultText {
    type Target = str;

    fn deref(&self) -> &str {
        match self {
            ResultText::Fresh(text) => text,
            ResultText::Cached(text) => text,
        }
    }
}
