//! The driver itself: its loop passes, the libuv callbacks that start them and the wake-ups
//! that schedule them (see [`super`] for why calls are driven here).

use std::cell::{Cell, OnceCell, RefCell};
use std::os::raw::{c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures_util::stream::{FuturesUnordered, StreamExt};
use napi::{sys, Env, Result};
use tokio::time::Instant;

use anilink_transport::executor::{self, Task};
use anilink_transport::timers;

use super::libuv::{
    uv_async_init, uv_async_send, uv_default_loop, uv_poll_init, uv_poll_start, uv_timer_init,
    uv_timer_start, uv_timer_stop, uv_unref, Handle, UV_ASYNC, UV_POLL, UV_READABLE, UV_TIMER,
};
use super::reactor::runtime_and_reactor;
use crate::outbox;

thread_local! {
    /// This thread's driver, built at its first call that wants one: None where it cannot
    /// be (a Node worker thread, no usable reactor descriptor).
    static DRIVER: OnceCell<Option<&'static Driver>> = const { OnceCell::new() };
    /// Whether a pass runs on this thread: a wake-up inside one is seen by its next look.
    static IN_PASS: Cell<bool> = const { Cell::new(false) };
}

/// The driver of the JavaScript thread of `env`, built at the first call that asks: None
/// where calls run on the worker (a Node worker thread, no usable reactor descriptor).
/// Only asked for on a runtime with libuv (Node): Bun's and Deno's stubs of it abort.
pub fn of_this_thread(env: &Env) -> Option<&'static Driver> {
    DRIVER.with(|cell| *cell.get_or_init(|| Driver::new(env).ok()))
}

/// Set by the waker of every driven future. Woken inside a pass, the pass looks again;
/// anywhere else (another thread, or JavaScript between passes) a pass is scheduled.
struct Wakeup {
    woken: AtomicBool,
    schedule: Handle,
}

impl Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        if !IN_PASS.with(Cell::get) {
            // SAFETY: an initialised async handle; callable from any thread.
            unsafe { uv_async_send(self.schedule.0) };
        }
    }
}

pub struct Driver {
    runtime: tokio::runtime::Runtime,
    tasks: RefCell<FuturesUnordered<Task>>,
    /// Started while `tasks` is borrowed (a call started by a pass).
    incoming: RefCell<Vec<Task>>,
    wakeup: Arc<Wakeup>,
    waker: Waker,
    /// The libuv timer, and the deadline it is armed for.
    timer: Handle,
    armed: Cell<Option<Instant>>,
    env: sys::napi_env,
    async_context: sys::napi_async_context,
}

impl Driver {
    fn new(env: &Env) -> std::result::Result<&'static Self, String> {
        let event_loop = env.get_uv_event_loop().map_err(|e| e.reason.clone())?;
        // SAFETY: libuv's default loop is the main thread's; no other thread drives here.
        if event_loop != unsafe { uv_default_loop() } {
            return Err("not the main thread".into());
        }
        let background = crate::background_runtime().ok_or("no worker runtime")?;
        let (runtime, reactor) = runtime_and_reactor()?;
        let schedule = Handle::allocate(UV_ASYNC);
        let wakeup = Arc::new(Wakeup {
            woken: AtomicBool::new(false),
            schedule,
        });
        let driver: &'static Driver = Box::leak(Box::new(Driver {
            runtime,
            tasks: RefCell::default(),
            incoming: RefCell::default(),
            waker: Waker::from(Arc::clone(&wakeup)),
            wakeup,
            timer: Handle::allocate(UV_TIMER),
            armed: Cell::new(None),
            env: env.raw(),
            async_context: async_context(env).map_err(|e| e.reason.clone())?,
        }));
        let poll = Handle::allocate(UV_POLL);
        // SAFETY: fresh handles of the right sizes, on this thread's loop; `reactor` stays
        // open as long as the runtime, which is never dropped.
        let watched = unsafe {
            uv_poll_init(event_loop, poll.0, reactor) == 0
                && uv_poll_start(poll.0, UV_READABLE, on_reactor_readable) == 0
                && uv_async_init(event_loop, schedule.0, on_loop_callback) == 0
                && uv_timer_init(event_loop, driver.timer.0) == 0
        };
        if !watched {
            return Err("libuv would not watch the reactor".into());
        }
        // SAFETY: initialised handles of this loop.
        unsafe {
            for handle in [poll, schedule, driver.timer] {
                uv_unref(handle.0);
            }
        }
        executor::install_local(background, spawn_on_this_thread);
        timers::watch_this_thread();
        Ok(driver)
    }

    /// Start `call` and poll it until it waits (on the network, a timer, a permit).
    pub fn start(&'static self, call: Task) {
        self.incoming.borrow_mut().push(call);
        self.pass(false);
    }

    /// Add a background task (no JavaScript waits on it): polled in the current pass when
    /// there is one, else in one scheduled now.
    fn spawn(&self, task: Task) {
        self.incoming.borrow_mut().push(task);
        self.wakeup.wake_by_ref();
    }

    /// Poll every woken future until none is left (first turning the reactor once,
    /// without blocking, when `turn_reactor`), then arm the timer for the next deadline.
    fn pass(&self, turn_reactor: bool) {
        if IN_PASS.with(|in_pass| in_pass.replace(true)) {
            return;
        }
        // Unconstrained: tokio's cooperative budget would make a socket past the 128th
        // operation of a pass answer "not ready" and defer its wake-up to the scheduler's
        // next turn, which only a new reactor event would bring.
        self.runtime.block_on(tokio::task::unconstrained(async {
            if turn_reactor {
                // A yield makes the current-thread scheduler poll its drivers (sockets and
                // timers) with a zero timeout before resuming: that runs their wake-ups.
                tokio::task::yield_now().await;
            }
            self.poll_woken();
        }));
        IN_PASS.with(|in_pass| in_pass.set(false));
        if self.wakeup.woken.load(Ordering::Acquire) {
            // SAFETY: an initialised async handle of this loop.
            unsafe { uv_async_send(self.wakeup.schedule.0) };
        }
        if turn_reactor {
            if let Some(stale) = Instant::now().checked_sub(Duration::from_secs(1)) {
                timers::forget_before(stale);
            }
        }
        self.arm_timer();
    }

    fn poll_woken(&self) {
        let mut context = Context::from_waker(&self.waker);
        loop {
            self.wakeup.woken.store(false, Ordering::Release);
            let mut tasks = self.tasks.borrow_mut();
            tasks.extend(self.incoming.borrow_mut().drain(..));
            while let Poll::Ready(Some(())) = tasks.poll_next_unpin(&mut context) {
                tasks.extend(self.incoming.borrow_mut().drain(..));
            }
            drop(tasks);
            if !self.wakeup.woken.load(Ordering::Acquire) && self.incoming.borrow().is_empty() {
                return;
            }
        }
    }

    /// Arm the libuv timer just past the first pending deadline (tokio fires a timer on
    /// the millisecond tick after it), or stop it when none is pending.
    fn arm_timer(&self) {
        let next = timers::earliest();
        if next == self.armed.get() {
            return;
        }
        self.armed.set(next);
        // SAFETY: an initialised timer handle of this loop, on its thread.
        unsafe {
            match next {
                Some(deadline) => {
                    let wait = deadline.saturating_duration_since(Instant::now());
                    let wait_ms = u64::try_from(wait.as_millis()).unwrap_or(u64::MAX - 1);
                    uv_timer_start(self.timer.0, on_timer, wait_ms.saturating_add(1), 0);
                }
                None => {
                    uv_timer_stop(self.timer.0);
                }
            }
        }
    }

    /// A pass from a libuv callback, then the batches it settled, handed to JavaScript in
    /// one callback scope (whose close runs the microtasks they queued, as after any I/O).
    /// A pass inside a call from JavaScript leaves its batches to the outbox's wake-up, so no
    /// promise settles inside the function that started a call.
    /// SAFETY: on the JavaScript thread, outside any JavaScript call.
    unsafe fn loop_pass(&self) {
        let due = outbox::collecting_due(|| self.pass(true));
        if due.is_empty() {
            return;
        }
        let env = self.env;
        let mut handles = ptr::null_mut();
        let mut resource = ptr::null_mut();
        let mut scope = ptr::null_mut();
        let opened = sys::napi_open_handle_scope(env, &mut handles) == sys::Status::napi_ok
            && sys::napi_create_object(env, &mut resource) == sys::Status::napi_ok
            && sys::napi_open_callback_scope(env, resource, self.async_context, &mut scope)
                == sys::Status::napi_ok;
        if opened {
            let env = Env::from_raw(env);
            for outbox in &due {
                outbox.deliver_queued(&env);
            }
            sys::napi_close_callback_scope(self.env, scope);
        } else {
            // Not expected; the outboxes' own wake-ups still deliver everything.
            for outbox in &due {
                outbox.wake();
            }
        }
        if !handles.is_null() {
            sys::napi_close_handle_scope(self.env, handles);
        }
    }
}

fn with_driver(run: impl FnOnce(&'static Driver)) {
    if let Some(Some(driver)) = DRIVER.with(|cell| cell.get().copied()) {
        run(driver);
    }
}

/// The transport's [`executor::spawn`] on this thread.
fn spawn_on_this_thread(task: Task) {
    with_driver(|driver| driver.spawn(task));
}

unsafe extern "C" fn on_reactor_readable(_: *mut c_void, _status: c_int, _: c_int) {
    // An error status is libuv's report that polling failed; a pass is still the answer:
    // it turns the reactor, which reports each socket's own error to its call.
    // SAFETY: a libuv callback, on the JavaScript thread outside any JavaScript call.
    with_driver(|driver| unsafe { driver.loop_pass() });
}

unsafe extern "C" fn on_loop_callback(_: *mut c_void) {
    // SAFETY: as above.
    with_driver(|driver| unsafe { driver.loop_pass() });
}

unsafe extern "C" fn on_timer(_: *mut c_void) {
    with_driver(|driver| {
        driver.armed.set(None);
        // SAFETY: as above.
        unsafe { driver.loop_pass() }
    });
}

fn async_context(env: &Env) -> Result<sys::napi_async_context> {
    let raw = env.raw();
    let name = "anilink-api-wrapper";
    let mut resource = ptr::null_mut();
    let mut resource_name = ptr::null_mut();
    let mut context = ptr::null_mut();
    // SAFETY: value creation on the JavaScript thread; the context lives as long as the
    // driver, which is never dropped.
    let created = unsafe {
        sys::napi_create_object(raw, &mut resource) == sys::Status::napi_ok
            && sys::napi_create_string_utf8(
                raw,
                name.as_ptr().cast(),
                name.len() as isize,
                &mut resource_name,
            ) == sys::Status::napi_ok
            && sys::napi_async_init(raw, resource, resource_name, &mut context)
                == sys::Status::napi_ok
    };
    if created {
        Ok(context)
    } else {
        Err(napi::Error::from_reason("napi_async_init failed"))
    }
}
