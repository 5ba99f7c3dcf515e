//! The transport's timers, and the earliest one pending on a thread that drives its own reactor.
//!
//! On tokio's workers the runtime wakes itself for its timers. A thread that turns its reactor
//! only when its event loop calls it (the binding's JavaScript-thread driver) must arm that
//! loop for the next deadline, which tokio does not expose: every sleep and timeout here
//! registers its deadline on such a thread while it is pending, and [`earliest`] names the
//! first. Elsewhere the registry is off and costs one thread-local read.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep, Timeout};

thread_local! {
    /// Pending deadlines and how many sleeps wait for each; `None` where nothing watches.
    static DEADLINES: RefCell<Option<BTreeMap<Instant, u32>>> = const { RefCell::new(None) };
}

/// Keep this thread's pending deadlines from now on.
pub fn watch_this_thread() {
    DEADLINES.with(|deadlines| {
        deadlines.borrow_mut().get_or_insert_with(BTreeMap::new);
    });
}

/// The first pending deadline of this thread (None when none, or when it is not watched).
pub fn earliest() -> Option<Instant> {
    DEADLINES.with(|deadlines| {
        deadlines
            .borrow()
            .as_ref()
            .and_then(|map| map.keys().next().copied())
    })
}

/// Drop deadlines before `before`: only a sleep that ended on another thread than it started
/// could leave one behind, and it must not keep its loop waking up.
pub fn forget_before(before: Instant) {
    DEADLINES.with(|deadlines| {
        if let Some(map) = deadlines.borrow_mut().as_mut() {
            *map = map.split_off(&before);
        }
    });
}

/// A deadline registered while it lives.
struct Pending(Option<Instant>);

impl Pending {
    fn new(deadline: Instant) -> Self {
        Self(DEADLINES.with(|deadlines| {
            let mut deadlines = deadlines.borrow_mut();
            let map = deadlines.as_mut()?;
            *map.entry(deadline).or_insert(0) += 1;
            Some(deadline)
        }))
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let Some(deadline) = self.0 else { return };
        DEADLINES.with(|deadlines| {
            if let Some(map) = deadlines.borrow_mut().as_mut() {
                if let Some(count) = map.get_mut(&deadline) {
                    *count -= 1;
                    if *count == 0 {
                        map.remove(&deadline);
                    }
                }
            }
        });
    }
}

/// A timer future with its deadline registered while it lives. Plain structs rather than
/// `async fn`s: those would keep the future they wrap twice in every call's state.
pub struct Watched<F> {
    timer: F,
    _pending: Pending,
}

impl<F: Future> Future for Watched<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<F::Output> {
        // SAFETY: `timer` is structurally pinned: it is never moved out of `Watched`, which
        // has no `Drop` of its own and is not `Unpin` unless `F` is.
        unsafe { self.map_unchecked_mut(|watched| &mut watched.timer) }.poll(context)
    }
}

fn watched<F>(deadline: Instant, timer: F) -> Watched<F> {
    Watched {
        timer,
        _pending: Pending::new(deadline),
    }
}

pub fn sleep(duration: Duration) -> Watched<Sleep> {
    sleep_until(Instant::now() + duration)
}

pub fn sleep_until(deadline: Instant) -> Watched<Sleep> {
    watched(deadline, tokio::time::sleep_until(deadline))
}

pub fn timeout<F: Future>(limit: Duration, work: F) -> Watched<Timeout<F>> {
    timeout_at(Instant::now() + limit, work)
}

pub fn timeout_at<F: Future>(deadline: Instant, work: F) -> Watched<Timeout<F>> {
    watched(deadline, tokio::time::timeout_at(deadline, work))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_watched_thread_knows_its_first_pending_deadline_until_it_passes() {
        std::thread::spawn(|| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .expect("runtime");
            runtime.block_on(async {
                assert_eq!(earliest(), None);
                watch_this_thread();
                let start = Instant::now();
                let long = tokio::spawn(sleep(Duration::from_millis(500)));
                let short = tokio::spawn(timeout(
                    Duration::from_millis(100),
                    std::future::pending::<()>(),
                ));
                let twin = tokio::spawn(sleep(Duration::from_millis(100)));
                tokio::task::yield_now().await;
                assert_eq!(earliest(), Some(start + Duration::from_millis(100)));
                assert!(short.await.expect("task").is_err());
                twin.await.expect("task");
                assert_eq!(earliest(), Some(start + Duration::from_millis(500)));
                long.abort();
                let _ = long.await;
                assert_eq!(earliest(), None);
            });
        })
        .join()
        .expect("thread");
    }

    #[tokio::test(start_paused = true)]
    async fn an_unwatched_thread_registers_nothing_and_stale_deadlines_can_be_dropped() {
        let sleeping = tokio::spawn(sleep(Duration::from_millis(50)));
        tokio::task::yield_now().await;
        assert_eq!(earliest(), None);
        sleeping.await.expect("task");
        watch_this_thread();
        let start = Instant::now();
        let stale = Pending::new(start);
        std::mem::forget(stale);
        let kept = Pending::new(start + Duration::from_secs(1));
        forget_before(start + Duration::from_millis(1));
        assert_eq!(earliest(), Some(start + Duration::from_secs(1)));
        drop(kept);
        assert_eq!(earliest(), None);
    }
}
