//! napi binding of anilink-api-wrapper: JavaScript values in, Rust configuration and calls
//! out, results and failures back. Nothing else: options are validated by the transport core,
//! provider slots by `anilink_providers::slot`, operations are described by the provider
//! catalogs.

// napi exports are registered at load time, which unit-test builds do not do.
#![cfg_attr(test, allow(dead_code))]

mod allocator;
mod cache_class;
mod cancellation;
mod catalog;
mod client_registry;
mod convert;
mod driver;
mod native_client;
mod outbox;
mod response_cache;
mod sink;
mod start;
mod wire;

use std::sync::OnceLock;

use napi_derive::napi;

static BACKGROUND: OnceLock<tokio::runtime::Handle> = OnceLock::new();

/// The worker runtime: calls that are not driven on the JavaScript thread run there, and so
/// does work that must not depend on that thread's loop (Redis).
fn background_runtime() -> Option<tokio::runtime::Handle> {
    BACKGROUND.get().cloned()
}

/// One tokio worker: on small machines it costs less CPU per request than one per core, and
/// every call is I/O-bound (measured in shared/notes/napi-rs-v3.md).
#[napi_derive::module_init]
fn init() {
    if let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
    {
        BACKGROUND.set(runtime.handle().clone()).ok();
        napi::bindgen_prelude::create_custom_tokio_runtime(runtime);
    }
}

/// Release every keep-alive connection pool the transport holds (cached, parked and default),
/// and close the Redis connections of shared state. Requests in flight finish on their own
/// pool; the default pool, and a Redis connection, are opened again by the next request.
#[napi(catch_unwind)]
pub fn destroy_cached_agents() {
    anilink_transport::pool::PoolRegistry::global().destroy_all();
    anilink_transport::shared_state::redis_backend::close_all();
}

/// Cancel the call registered under `call_id` (the JavaScript side's AbortSignal fired).
#[napi(catch_unwind)]
pub fn cancel_call(call_id: u32) {
    cancellation::cancel(call_id);
}

/// The upstream status an AniList `errors` array carries, by the transport's one rule
/// (decisions D29): the first entry status that is an integer 100–599, else null.
#[napi(catch_unwind)]
pub fn graphql_errors_status(errors_json: String) -> Option<u32> {
    anilink_transport::envelope::errors_status(&errors_json).map(u32::from)
}

/// Bytes the process's allocator has in use (glibc only, else null): the soak test's leak
/// measure, steadier than the resident set.
#[napi(catch_unwind)]
pub fn native_heap_in_use() -> Option<f64> {
    allocator::heap_in_use().map(|bytes| bytes as f64)
}

/// Every transport option key, in the original's order then ours: the facade names them when
/// it reports an unknown per-request key (decisions D33).
#[napi(catch_unwind)]
pub fn transport_option_keys() -> Vec<&'static str> {
    anilink_transport::options::TRANSPORT_OPTION_KEYS.to_vec()
}
