//! Per-exchange timeouts without one tokio timer per request.
//!
//! `tokio::time::timeout` registers an entry in the timer wheel for every request and cancels
//! it when the response arrives: thousands of instructions per call for a deadline that almost
//! never expires. A [`Deadlines`] registry instead keeps the deadlines of the exchanges in
//! flight in a slab, and one sweeper task sleeps until the earliest one it knows of, marks the
//! expired exchanges and wakes them. Registering and deregistering is a short lock and a slab
//! operation; only a deadline earlier than the sweeper's target (or the first one after it
//! parked) wakes the sweeper to re-arm.
//!
//! An exchange that completes does not disarm the sweeper (that would cost the wake-up this
//! saves): its timer stays set for the deadline it was armed for, so after the last exchange it
//! wakes once more at most, finds nothing to wait for and parks on its notification with no
//! timer. It holds its registry only weakly, and ends when the registry is dropped (the pool
//! torn down) or when its runtime shuts down (the next registration spawns a new one).

use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Poll, Waker};
use std::time::Duration;

use tokio::sync::Notify;
// Tokio's clock, so deadlines follow virtual time in tests.
use tokio::time::Instant;

/// The deadline passed before the future completed.
#[derive(Debug, PartialEq, Eq)]
pub struct Elapsed;

/// The deadlines of one pool's exchanges in flight, and the sweeper that enforces them.
pub struct Deadlines {
    registry: Arc<Mutex<Registry>>,
    /// Re-arms the sweeper (an earlier deadline, or the first after it parked) and ends it.
    rearm: Arc<Notify>,
}

#[derive(Default)]
struct Registry {
    entries: Vec<Entry>,
    /// Vacant indices of `entries`, reused before the slab grows.
    vacant: Vec<usize>,
    /// What the sweeper's timer is set for; None while it waits on a notification only.
    armed: Option<Instant>,
    /// A sweeper task is alive (cleared when it ends, so the next registration spawns one).
    sweeper: bool,
}

enum Entry {
    Vacant,
    Waiting {
        deadline: Instant,
        waker: Option<Waker>,
    },
    Expired,
}

fn lock(registry: &Mutex<Registry>) -> MutexGuard<'_, Registry> {
    // Every critical section leaves the slab consistent, so poisoning is ignored.
    registry.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for Deadlines {
    fn default() -> Self {
        Deadlines {
            registry: Arc::default(),
            rearm: Arc::new(Notify::new()),
        }
    }
}

impl Drop for Deadlines {
    fn drop(&mut self) {
        // The sweeper finds its registry gone and ends.
        self.rearm.notify_one();
    }
}

impl Deadlines {
    /// Run `future` for at most `limit` from now. Must be called inside a tokio runtime (the
    /// sweeper is spawned on the current one when none is alive). The future is pinned by the
    /// caller, so it is stored once, in the caller's state.
    pub async fn within<F: Future>(
        &self,
        limit: Duration,
        mut future: Pin<&mut F>,
    ) -> Result<F::Output, Elapsed> {
        let Some(deadline) = Instant::now().checked_add(limit) else {
            return Ok(future.await);
        };
        let registration = self.register(deadline);
        poll_fn(|cx| {
            // The future first, as `tokio::time::timeout` does: a response ready at the
            // deadline wins.
            if let Poll::Ready(output) = future.as_mut().poll(cx) {
                return Poll::Ready(Ok(output));
            }
            let mut registry = lock(&self.registry);
            match &mut registry.entries[registration.index] {
                Entry::Waiting { waker, .. } => {
                    match waker {
                        Some(known) if known.will_wake(cx.waker()) => {}
                        _ => *waker = Some(cx.waker().clone()),
                    }
                    Poll::Pending
                }
                Entry::Expired | Entry::Vacant => Poll::Ready(Err(Elapsed)),
            }
        })
        .await
    }

    fn register(&self, deadline: Instant) -> Registration<'_> {
        let mut registry = lock(&self.registry);
        let entry = Entry::Waiting {
            deadline,
            waker: None,
        };
        let index = match registry.vacant.pop() {
            Some(index) => {
                registry.entries[index] = entry;
                index
            }
            None => {
                registry.entries.push(entry);
                registry.entries.len() - 1
            }
        };
        if !registry.sweeper {
            registry.sweeper = true;
            registry.armed = Some(deadline);
            tokio::spawn(sweep(Arc::downgrade(&self.registry), self.rearm.clone()));
        } else if registry.armed.is_none_or(|armed| deadline < armed) {
            registry.armed = Some(deadline);
            self.rearm.notify_one();
        }
        Registration {
            deadlines: self,
            index,
        }
    }

    #[cfg(test)]
    fn armed(&self) -> Option<Instant> {
        lock(&self.registry).armed
    }
}

/// An exchange's entry, vacated when the exchange ends (completed, expired or dropped).
struct Registration<'a> {
    deadlines: &'a Deadlines,
    index: usize,
}

impl Drop for Registration<'_> {
    fn drop(&mut self) {
        let mut registry = lock(&self.deadlines.registry);
        registry.entries[self.index] = Entry::Vacant;
        registry.vacant.push(self.index);
    }
}

impl Registry {
    /// Mark every exchange due at `now` expired, taking their wakers; the earliest deadline
    /// still ahead is the sweeper's next target.
    fn expire(&mut self, now: Instant, due: &mut Vec<Waker>) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        for entry in &mut self.entries {
            let Entry::Waiting { deadline, waker } = entry else {
                continue;
            };
            if *deadline <= now {
                due.extend(waker.take());
                *entry = Entry::Expired;
            } else if next.is_none_or(|next| *deadline < next) {
                next = Some(*deadline);
            }
        }
        self.armed = next;
        next
    }
}

/// Clears the registry's `sweeper` flag however the sweeper ends (its runtime shutting down
/// drops it mid-wait).
struct SweeperAlive(Weak<Mutex<Registry>>);

impl Drop for SweeperAlive {
    fn drop(&mut self) {
        if let Some(registry) = self.0.upgrade() {
            let mut registry = lock(&registry);
            registry.sweeper = false;
            registry.armed = None;
        }
    }
}

async fn sweep(registry: Weak<Mutex<Registry>>, rearm: Arc<Notify>) {
    let alive = SweeperAlive(registry);
    let mut due = Vec::new();
    loop {
        let target = {
            // Held only while sweeping: the sweeper never keeps its registry alive.
            let Some(registry) = alive.0.upgrade() else {
                return;
            };
            let target = lock(&registry).expire(Instant::now(), &mut due);
            target
        };
        due.drain(..).for_each(Waker::wake);
        match target {
            Some(target) => {
                tokio::select! {
                    _ = tokio::time::sleep_until(target) => {}
                    _ = rearm.notified() => {}
                }
            }
            None => rearm.notified().await,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::pin::pin;

    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    /// Lets the sweeper run its pending steps (paused time does not advance while tasks run).
    async fn settle() {
        for _ in 0..8 {
            tokio::task::yield_now().await;
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_deadline_expires_exactly_when_due() {
        let deadlines = Deadlines::default();
        let started = Instant::now();
        let outcome = deadlines
            .within(SECOND, pin!(std::future::pending::<()>()))
            .await;
        assert_eq!(outcome, Err(Elapsed));
        assert_eq!(started.elapsed(), SECOND);
    }

    #[tokio::test(start_paused = true)]
    async fn a_future_done_in_time_keeps_its_output() {
        let deadlines = Deadlines::default();
        let outcome = deadlines
            .within(
                SECOND,
                pin!(async {
                    tokio::time::sleep(SECOND / 2).await;
                    7
                }),
            )
            .await;
        assert_eq!(outcome, Ok(7));
    }

    #[tokio::test(start_paused = true)]
    async fn a_removed_deadline_never_fires_and_the_sweeper_then_parks_without_a_timer() {
        let deadlines = Deadlines::default();
        let woken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        {
            let registration = deadlines.register(Instant::now() + SECOND);
            let waker = counting_waker(woken.clone());
            let mut registry = lock(&deadlines.registry);
            let Entry::Waiting { waker: slot, .. } = &mut registry.entries[registration.index]
            else {
                panic!("a registered deadline is waiting");
            };
            *slot = Some(waker);
        }
        settle().await;
        tokio::time::sleep(2 * SECOND).await;
        settle().await;
        assert_eq!(woken.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(deadlines.armed(), None, "an empty registry arms no timer");
        let registry = lock(&deadlines.registry);
        assert!(registry.sweeper);
        assert!(registry.entries.iter().all(|e| matches!(e, Entry::Vacant)));
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_deadline_rearms_the_sweeper() {
        let deadlines = Deadlines::default();
        let started = Instant::now();
        let mut never = pin!(std::future::pending::<()>());
        let late = deadlines.within(10 * SECOND, never.as_mut());
        let early = async {
            // Registered after the sweeper armed its timer for the late deadline.
            settle().await;
            deadlines
                .within(SECOND, pin!(std::future::pending::<()>()))
                .await
        };
        tokio::select! {
            _ = late => panic!("the late deadline expired first"),
            outcome = early => assert_eq!(outcome, Err(Elapsed)),
        }
        assert_eq!(started.elapsed(), SECOND);
    }

    #[tokio::test(start_paused = true)]
    async fn many_deadlines_each_expire_on_time() {
        let deadlines = Deadlines::default();
        let started = Instant::now();
        let waits = (1..=5u32).rev().map(|s| {
            let deadlines = &deadlines;
            async move {
                let outcome = deadlines
                    .within(s * SECOND, pin!(std::future::pending::<()>()))
                    .await;
                (outcome, started.elapsed())
            }
        });
        let results = futures_util::future::join_all(waits).await;
        for (s, (outcome, elapsed)) in (1..=5u32).rev().zip(results) {
            assert_eq!(outcome, Err(Elapsed));
            assert_eq!(elapsed, s * SECOND);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_sweeper_ends_with_its_registry() {
        let deadlines = Deadlines::default();
        deadlines.within(SECOND, pin!(async {})).await.unwrap();
        settle().await;
        let rearm = Arc::downgrade(&deadlines.rearm);
        drop(deadlines);
        settle().await;
        assert!(
            rearm.upgrade().is_none(),
            "the sweeper still holds its notification"
        );
    }

    #[test]
    fn a_new_runtime_gets_a_new_sweeper() {
        let deadlines = Deadlines::default();
        for _ in 0..2 {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_time()
                .start_paused(true)
                .build()
                .unwrap();
            let outcome =
                runtime.block_on(deadlines.within(SECOND, pin!(std::future::pending::<()>())));
            assert_eq!(outcome, Err(Elapsed));
        }
    }

    fn counting_waker(count: Arc<std::sync::atomic::AtomicUsize>) -> Waker {
        struct Counting(Arc<std::sync::atomic::AtomicUsize>);
        impl std::task::Wake for Counting {
            fn wake(self: Arc<Self>) {
                self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            }
        }
        Waker::from(Arc::new(Counting(count)))
    }
}
