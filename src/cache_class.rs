//! The native side of a JavaScript `ResponseCache` object: one transport cache, shared with
//! every call given the object as its `responseCache` option. Declared apart from its methods
//! (`response_cache.rs`, which read their arguments through `convert.rs`), so that option
//! conversion can recognise a cache without depending on those methods.

use std::sync::Arc;

use anilink_transport::cache::ResponseCache as Cache;
use napi_derive::napi;

#[napi]
pub struct ResponseCache {
    pub(crate) cache: Arc<Cache>,
}

impl ResponseCache {
    /// The native cache, shared with the transport calls that use it.
    pub fn shared(&self) -> Arc<Cache> {
        self.cache.clone()
    }
}
