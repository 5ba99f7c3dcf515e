//! Calls driven on the JavaScript thread itself, with no hand-off to a worker and back.
//!
//! On a tokio worker a call costs three context switches: JavaScript wakes the worker, the
//! worker sleeps until the answer, then wakes JavaScript (issue 17: about a quarter of a small
//! call's CPU). On Linux's main thread the binding instead keeps a tokio current-thread runtime
//! for its reactor and timers, and libuv watches the reactor's epoll descriptor with a poll
//! handle on Node's own loop: a socket that becomes readable wakes the JavaScript thread, which
//! turns the reactor once without blocking, polls the calls that woke (held here rather than in
//! tokio's scheduler, so a pass knows when nothing is left), and hands the outboxes' batches to
//! JavaScript at the end of that pass, in one callback scope.
//!
//! What makes that complete: the thread is marked as driving its own reactor through
//! [`executor::install_local`] (so its calls keep to its connections and send Redis work to
//! the worker runtime), the transport's timers name their deadlines through [`timers`], which
//! arm a libuv timer; a wake-up from another thread (a Redis answer, a DNS lookup) or from
//! JavaScript outside a pass (an abort) schedules a pass through a libuv async handle. The
//! three handles are unreferenced: the outbox keeps the loop alive while calls are pending (D12).
//!
//! Worker threads of Node, other platforms, runtimes without libuv (Bun, Deno: the facade tells
//! the slot, decisions D38) and slots built under `ANILINK_IO_THREAD=worker` keep the worker.

#[cfg(target_os = "linux")]
mod libuv;
#[cfg(target_os = "linux")]
mod linux;
#[cfg(target_os = "linux")]
mod reactor;

/// The variable that chooses where calls run.
pub const IO_THREAD_VARIABLE: &str = "ANILINK_IO_THREAD";

/// Whether a slot wants its calls on the JavaScript thread where they can run there, from the
/// value of `ANILINK_IO_THREAD` when it was built (decisions D38).
pub fn wants_javascript_thread(value: Option<&str>) -> std::result::Result<bool, String> {
    match value {
        None | Some("" | "auto") => Ok(true),
        Some("worker") => Ok(false),
        Some(other) => Err(format!(
            "{IO_THREAD_VARIABLE} must be \"auto\" (the JavaScript thread where possible) or \"worker\" (a tokio worker thread); received {} characters that are neither. Unset it or set one of the two.",
            other.chars().count()
        )),
    }
}

#[cfg(target_os = "linux")]
pub use linux::{of_this_thread, Driver};

/// Calls of this platform always run on the worker.
#[cfg(not(target_os = "linux"))]
pub enum Driver {}

#[cfg(not(target_os = "linux"))]
impl Driver {
    pub fn start(&self, _: anilink_transport::executor::Task) {
        match *self {}
    }
}

#[cfg(not(target_os = "linux"))]
pub fn of_this_thread(_: &napi::Env) -> Option<&'static Driver> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_thread_values() {
        for javascript in [None, Some(""), Some("auto")] {
            assert_eq!(wants_javascript_thread(javascript), Ok(true));
        }
        assert_eq!(wants_javascript_thread(Some("worker")), Ok(false));
        let refused = wants_javascript_thread(Some("Worker")).unwrap_err();
        assert!(refused.contains("must be \"auto\""), "{refused}");
        assert!(refused.contains("6 characters"), "{refused}");
    }
}
