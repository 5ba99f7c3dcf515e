//! Which thread's reactor a call's sockets belong to, and work that must run elsewhere.
//!
//! A call runs where its caller polls it: on a tokio worker, or on a thread that drives its own
//! reactor (the binding's JavaScript-thread driver, which polls calls inside its event loop's
//! callbacks). A socket is registered with the reactor of the thread that opened it, so
//! connections are kept per [`home`]: a call never waits on a connection that another
//! thread's loop watches. Work whose library starts tasks of its own (Redis) runs
//! [`off_thread`], on the worker runtime, which always turns. Work that must stay beside a
//! thread's sockets (watching its idle connections) is [`spawn`]ed onto that thread's loop.

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::runtime::Handle;

/// A future run to completion beside the calls of a thread.
pub type Task = Pin<Box<dyn Future<Output = ()> + Send>>;

struct LocalExecutor {
    home: u32,
    /// The runtime whose workers run [`off_thread`] work.
    background: Handle,
    /// Adds a task to this thread's own loop.
    spawn: fn(Task),
}

thread_local! {
    static LOCAL: OnceCell<LocalExecutor> = const { OnceCell::new() };
}

/// The home of tokio's workers; a thread that drives its own reactor gets a higher one.
pub const WORKER_HOME: u32 = 0;

/// Mark this thread as driving its own reactor, with `background` for [`off_thread`] work and
/// `spawn` for [`spawn`]. Once per thread; false (and nothing changed) if it is already marked.
pub fn install_local(background: Handle, spawn: fn(Task)) -> bool {
    static NEXT_HOME: AtomicU32 = AtomicU32::new(WORKER_HOME + 1);
    LOCAL.with(|local| {
        local
            .set(LocalExecutor {
                home: NEXT_HOME.fetch_add(1, Ordering::Relaxed),
                background,
                spawn,
            })
            .is_ok()
    })
}

/// The home of this thread's reactor ([`WORKER_HOME`] for tokio's workers).
pub fn home() -> u32 {
    LOCAL.with(|local| local.get().map_or(WORKER_HOME, |executor| executor.home))
}

/// Run `task` on this thread's [`home`]: its own loop where it drives one, else the tokio
/// runtime it runs in. False when there is neither (the task is dropped).
pub fn spawn(task: Task) -> bool {
    if let Some(spawn) = LOCAL.with(|local| local.get().map(|executor| executor.spawn)) {
        spawn(task);
        return true;
    }
    match Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(task);
            true
        }
        Err(_) => false,
    }
}

/// Run `work` on the worker runtime when this thread drives its own reactor (its tasks and
/// timers then run there), else right here.
pub async fn off_thread<F>(work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let Some(background) = LOCAL.with(|local| local.get().map(|e| e.background.clone())) else {
        return work.await;
    };
    match background.spawn(work).await {
        Ok(output) => output,
        // A panic there is this call's panic (the binding turns it into the call's failure).
        Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
        Err(_) => panic!("the worker runtime stopped while work ran on it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn on_a_worker_the_home_is_the_workers_and_work_runs_in_place() {
        assert_eq!(home(), WORKER_HOME);
        let here = std::thread::current().id();
        assert_eq!(
            off_thread(async { std::thread::current().id() }).await,
            here
        );
    }

    #[test]
    fn a_thread_with_its_own_reactor_has_its_own_home_and_sends_work_to_the_background() {
        let background = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("runtime");
        let local = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let thread = std::thread::spawn(move || {
            let no_spawn: fn(Task) = |_| {};
            assert!(install_local(background.handle().clone(), no_spawn));
            assert!(!install_local(background.handle().clone(), no_spawn));
            let own_home = home() != WORKER_HOME;
            let here = std::thread::current().id();
            let there = local.block_on(off_thread(async { std::thread::current().id() }));
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                local.block_on(off_thread(async { panic!("inside") }))
            }));
            (own_home, here != there, panicked.is_err())
        });
        assert_eq!(thread.join().ok(), Some((true, true, true)));
    }
}
