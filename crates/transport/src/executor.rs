//! Where the transport's own tasks run.
//!
//! A call runs where its caller polls it: on a tokio worker, or on a thread that drives its own
//! reactor (the binding's JavaScript-thread driver, which polls calls inside its event loop's
//! callbacks). A task the transport starts for a call (a connection's task) must run where the
//! call runs: on such a thread tokio's scheduler is never given a turn, so [`spawn`] hands the
//! task to the thread's executor. Connections are kept per [`home`], so a call never waits on
//! a connection that another thread's loop drives. Work whose library starts tasks of its own
//! (Redis) runs [`off_thread`], on the worker runtime, which always turns.

use std::cell::OnceCell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};

use tokio::runtime::Handle;

/// A task for a thread's own executor: polled on that thread only.
pub type LocalTask = Pin<Box<dyn Future<Output = ()>>>;

struct LocalExecutor {
    home: u32,
    spawn: Box<dyn Fn(LocalTask)>,
    /// The runtime whose workers run [`off_thread`] work.
    background: Handle,
}

thread_local! {
    static LOCAL: OnceCell<LocalExecutor> = const { OnceCell::new() };
}

/// The home of tasks spawned on tokio's workers; a thread's own executor gets a higher one.
pub const WORKER_HOME: u32 = 0;

/// Make `spawn` the executor of this thread's transport tasks, with `background` for
/// [`off_thread`] work. Once per thread; false (and nothing changed) if one is installed.
pub fn install_local(spawn: impl Fn(LocalTask) + 'static, background: Handle) -> bool {
    static NEXT_HOME: AtomicU32 = AtomicU32::new(WORKER_HOME + 1);
    LOCAL.with(|local| {
        local
            .set(LocalExecutor {
                home: NEXT_HOME.fetch_add(1, Ordering::Relaxed),
                spawn: Box::new(spawn),
                background,
            })
            .is_ok()
    })
}

/// Start `task` beside the call that is being polled: on this thread's executor if it has
/// one, else on the current tokio runtime.
pub fn spawn(task: impl Future<Output = ()> + Send + 'static) {
    let task = LOCAL.with(|local| match local.get() {
        Some(executor) => {
            (executor.spawn)(Box::pin(task));
            None
        }
        None => Some(task),
    });
    if let Some(task) = task {
        tokio::spawn(task);
    }
}

/// The executor a task spawned now would run on ([`WORKER_HOME`] for tokio's workers).
pub fn home() -> u32 {
    LOCAL.with(|local| local.get().map_or(WORKER_HOME, |executor| executor.home))
}

/// Run `work` on the worker runtime when this thread has its own executor (its tasks and
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
    use std::cell::RefCell;
    use std::rc::Rc;

    #[tokio::test]
    async fn without_a_local_executor_tasks_go_to_tokio_and_work_runs_in_place() {
        let (sender, receiver) = tokio::sync::oneshot::channel();
        spawn(async move {
            sender.send(std::thread::current().id()).ok();
        });
        assert_eq!(receiver.await.ok(), Some(std::thread::current().id()));
        assert_eq!(home(), WORKER_HOME);
        let here = std::thread::current().id();
        assert_eq!(
            off_thread(async { std::thread::current().id() }).await,
            here
        );
    }

    #[test]
    fn a_local_executor_gets_the_tasks_and_work_goes_to_the_background_runtime() {
        let background = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .expect("runtime");
        let local = tokio::runtime::Builder::new_current_thread()
            .build()
            .expect("runtime");
        let thread = std::thread::spawn(move || {
            let received: Rc<RefCell<Vec<LocalTask>>> = Rc::default();
            let queue = received.clone();
            assert!(install_local(
                move |task| queue.borrow_mut().push(task),
                background.handle().clone()
            ));
            assert!(!install_local(|_| {}, background.handle().clone()));
            assert_ne!(home(), WORKER_HOME);
            spawn(async {});
            let here = std::thread::current().id();
            let there = local.block_on(off_thread(async { std::thread::current().id() }));
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                local.block_on(off_thread(async { panic!("inside") }))
            }));
            let spawned = received.borrow().len();
            (spawned, here != there, panicked.is_err())
        });
        assert_eq!(thread.join().ok(), Some((1, true, true)));
    }
}
