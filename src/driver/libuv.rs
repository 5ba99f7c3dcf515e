//! The few libuv functions the driver calls, as the node binary exports them, and the
//! handles it allocates for them. Declared here by hand: napi offers no poll, async or timer
//! handle of its own, and these signatures are libuv's stable ABI.

use std::os::raw::{c_int, c_void};

use napi::sys;

extern "C" {
    pub(super) fn uv_default_loop() -> *mut sys::uv_loop_s;
    pub(super) fn uv_handle_size(kind: c_int) -> usize;
    pub(super) fn uv_unref(handle: *mut c_void);
    pub(super) fn uv_poll_init(
        event_loop: *mut sys::uv_loop_s,
        handle: *mut c_void,
        fd: c_int,
    ) -> c_int;
    pub(super) fn uv_poll_start(
        handle: *mut c_void,
        events: c_int,
        callback: PollCallback,
    ) -> c_int;
    pub(super) fn uv_async_init(
        event_loop: *mut sys::uv_loop_s,
        handle: *mut c_void,
        callback: HandleCallback,
    ) -> c_int;
    pub(super) fn uv_async_send(handle: *mut c_void) -> c_int;
    pub(super) fn uv_timer_init(event_loop: *mut sys::uv_loop_s, handle: *mut c_void) -> c_int;
    pub(super) fn uv_timer_start(
        handle: *mut c_void,
        callback: HandleCallback,
        timeout_ms: u64,
        repeat_ms: u64,
    ) -> c_int;
    pub(super) fn uv_timer_stop(handle: *mut c_void) -> c_int;
}
type PollCallback = unsafe extern "C" fn(*mut c_void, c_int, c_int);
type HandleCallback = unsafe extern "C" fn(*mut c_void);
/// libuv's `uv_handle_type` values of the handles used here, and `UV_READABLE`.
pub(super) const UV_ASYNC: c_int = 1;
pub(super) const UV_POLL: c_int = 8;
pub(super) const UV_TIMER: c_int = 13;
pub(super) const UV_READABLE: c_int = 1;

/// A libuv handle of the driver: allocated once with libuv's size for its kind, never freed
/// (the driver lives as long as the main thread's loop).
#[derive(Clone, Copy)]
pub(super) struct Handle(pub(super) *mut c_void);

// SAFETY: only `uv_async_send` is called off the JavaScript thread, and libuv allows it.
unsafe impl Send for Handle {}
unsafe impl Sync for Handle {}

impl Handle {
    pub(super) fn allocate(kind: c_int) -> Self {
        // SAFETY: a size query.
        let size = unsafe { uv_handle_size(kind) };
        Self(
            Box::leak(vec![0u8; size].into_boxed_slice())
                .as_mut_ptr()
                .cast(),
        )
    }
}
