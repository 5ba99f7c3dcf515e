//! The floor's one-thread mode (`floor.sendInline(id)`): the same request and answer as
//! `floor.send(id)`, with no thread hand-off on either side.
//!
//! A tokio current-thread runtime supplies the reactor, and libuv watches the reactor's epoll
//! descriptor with a poll handle on the JavaScript thread's own loop, so a socket that becomes
//! readable wakes the JavaScript thread itself. Each wake turns the reactor once without
//! blocking, polls what it woke (requests and connection tasks, held here rather than in
//! tokio's scheduler, so a pass knows when nothing is left to poll), and hands the finished
//! answers to JavaScript by direct calls inside one callback scope: microtasks run when it
//! closes, as after any I/O callback. Nothing here needs a timer, so none is watched.
//!
//! Linux only: tokio does not expose the reactor's descriptor, so it is found in
//! `/proc/self/fd` as the epoll that building the runtime created. One driver per
//! thread, kept for the life of the process (the benchmark client exits when it is done).

use std::rc::Rc;

use napi::{sys, Env, Error, Result, Status};

/// A JavaScript function kept alive by a reference, to be called from outside any JavaScript call.
#[derive(Clone)]
// Read only by the Linux driver; elsewhere it just keeps the function alive.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub struct Callback(Rc<Reference>);

struct Reference {
    env: sys::napi_env,
    reference: sys::napi_ref,
}

impl Callback {
    pub fn new(env: &Env, function: sys::napi_value) -> Result<Self> {
        let mut reference = std::ptr::null_mut();
        // SAFETY: `function` is a live value of `env`, on its thread.
        check(unsafe { sys::napi_create_reference(env.raw(), function, 1, &mut reference) })?;
        Ok(Self(Rc::new(Reference {
            env: env.raw(),
            reference,
        })))
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        // SAFETY: created by `Callback::new` on this thread, deleted once.
        unsafe { sys::napi_delete_reference(self.env, self.reference) };
    }
}

fn check(status: sys::napi_status) -> Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else if status == sys::Status::napi_pending_exception {
        // The JavaScript exception stands; napi-rs throws nothing over it.
        Err(Error::from_status(Status::PendingException))
    } else {
        Err(Error::new(
            Status::GenericFailure,
            format!("napi call failed with status {status}"),
        ))
    }
}

#[cfg(target_os = "linux")]
pub use driver::start;

#[cfg(not(target_os = "linux"))]
pub fn start(_: &Env, _: std::sync::Arc<crate::Shared>, _: Callback, _: u32) -> Result<()> {
    Err(Error::new(
        Status::GenericFailure,
        "sendInline needs Linux: the reactor's descriptor is found in /proc/self/fd",
    ))
}

#[cfg(target_os = "linux")]
mod driver {
    use std::cell::{Cell, OnceCell, RefCell};
    use std::future::Future;
    use std::os::raw::{c_int, c_void};
    use std::pin::Pin;
    use std::ptr;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::task::{Context, Poll, Wake, Waker};

    use futures_util::stream::{FuturesUnordered, StreamExt};
    use napi::{sys, Env, Error, Result, Status};

    use super::{check, Callback};
    use crate::{Answer, Connection, Connections, Sender, Shared};

    // libuv, as the node binary exports it.
    extern "C" {
        fn uv_handle_size(kind: c_int) -> usize;
        fn uv_poll_init(event_loop: *mut sys::uv_loop_s, handle: *mut c_void, fd: c_int) -> c_int;
        fn uv_poll_start(
            handle: *mut c_void,
            events: c_int,
            callback: unsafe extern "C" fn(*mut c_void, c_int, c_int),
        ) -> c_int;
    }
    /// `UV_POLL` of libuv's `uv_handle_type`, and its `UV_READABLE` event.
    const UV_POLL: c_int = 8;
    const UV_READABLE: c_int = 1;

    type Task = Pin<Box<dyn Future<Output = ()>>>;

    /// Set by the waker of any driven future: the pass that is polling must look again.
    struct Woken(AtomicBool);

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.wake_by_ref();
        }

        fn wake_by_ref(self: &Arc<Self>) {
            self.0.store(true, Ordering::Release);
        }
    }

    struct Driver {
        runtime: tokio::runtime::Runtime,
        tasks: RefCell<FuturesUnordered<Task>>,
        /// Started while `tasks` is borrowed (a connection's task, a request a callback starts).
        incoming: RefCell<Vec<Task>>,
        woken: Arc<Woken>,
        waker: Waker,
        /// Whether a pass is running: a request started from inside one joins it.
        in_pass: Cell<bool>,
        idle: RefCell<Vec<Sender>>,
        answers: RefCell<Vec<(Callback, Answer)>>,
        env: sys::napi_env,
        async_context: sys::napi_async_context,
    }

    thread_local! {
        static DRIVER: OnceCell<&'static Driver> = const { OnceCell::new() };
    }

    /// Start request `id` on this thread's driver and poll it until it waits on the network;
    /// its answer goes to `on_response`.
    pub fn start(env: &Env, shared: Arc<Shared>, on_response: Callback, id: u32) -> Result<()> {
        let driver = match DRIVER.with(|cell| cell.get().copied()) {
            Some(driver) => driver,
            None => {
                let driver = Driver::new(env)?;
                DRIVER.with(|cell| cell.set(driver)).ok();
                driver
            }
        };
        driver.incoming.borrow_mut().push(Box::pin(async move {
            let answer = Answer::of(id, shared.exchange(driver).await);
            driver.answers.borrow_mut().push((on_response, answer));
        }));
        driver.pass(false);
        // A call from JavaScript: answers (none are expected before the network has answered)
        // are delivered in its scope.
        // SAFETY: on the JavaScript thread, inside a call from it.
        unsafe { driver.deliver() }
    }

    impl Driver {
        fn new(env: &Env) -> Result<&'static Self> {
            let failed = |what: String| Error::new(Status::GenericFailure, what);
            let before = eventpoll_fds()?;
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_io()
                .build()
                .map_err(|e| failed(format!("building the runtime failed: {e}")))?;
            let created: Vec<c_int> = eventpoll_fds()?
                .into_iter()
                .filter(|fd| !before.contains(fd))
                .collect();
            // mio duplicates the reactor's descriptor for its registry: several new ones are
            // fine as long as they are one epoll (the same registrations).
            let registrations = created
                .iter()
                .map(|fd| registrations(*fd))
                .collect::<Vec<_>>();
            let (Some(&reactor), true) = (
                created.first(),
                registrations.windows(2).all(|pair| pair[0] == pair[1]),
            ) else {
                return Err(failed(format!(
                    "expected the runtime to create one epoll, found {} new descriptors that differ",
                    created.len()
                )));
            };
            let woken = Arc::new(Woken(AtomicBool::new(false)));
            let driver: &'static Driver = Box::leak(Box::new(Driver {
                runtime,
                tasks: RefCell::default(),
                incoming: RefCell::default(),
                waker: Waker::from(Arc::clone(&woken)),
                woken,
                in_pass: Cell::new(false),
                idle: RefCell::default(),
                answers: RefCell::default(),
                env: env.raw(),
                async_context: async_context(env)?,
            }));
            let event_loop = env.get_uv_event_loop()?;
            // SAFETY: the handle gets libuv's size for a poll handle and is never freed (the
            // driver lives as long as the thread's loop); `reactor` stays open as long as the
            // runtime, which is never dropped.
            unsafe {
                let handle = Box::leak(vec![0u8; uv_handle_size(UV_POLL)].into_boxed_slice());
                let handle = handle.as_mut_ptr().cast::<c_void>();
                if uv_poll_init(event_loop, handle, reactor) != 0
                    || uv_poll_start(handle, UV_READABLE, on_reactor_readable) != 0
                {
                    return Err(failed("libuv would not watch the reactor".into()));
                }
            }
            Ok(driver)
        }

        /// Poll every woken future until none is left; first turn the reactor once, without
        /// blocking, when it has events.
        fn pass(&self, turn_reactor: bool) {
            if self.in_pass.replace(true) {
                return;
            }
            // Unconstrained: tokio's cooperative budget would make a socket past the 128th
            // operation of a pass answer "not ready" and defer its wake-up to the scheduler's
            // next turn, which only a new reactor event would bring.
            self.runtime.block_on(tokio::task::unconstrained(async {
                if turn_reactor {
                    // A yield makes the current-thread scheduler poll its driver with a zero
                    // timeout before resuming: that dispatches the reactor's events to wakers.
                    tokio::task::yield_now().await;
                }
                self.poll_woken();
            }));
            self.in_pass.set(false);
        }

        fn poll_woken(&self) {
            let mut context = Context::from_waker(&self.waker);
            loop {
                self.woken.0.store(false, Ordering::Release);
                let mut tasks = self.tasks.borrow_mut();
                tasks.extend(self.incoming.borrow_mut().drain(..));
                while let Poll::Ready(Some(())) = tasks.poll_next_unpin(&mut context) {
                    tasks.extend(self.incoming.borrow_mut().drain(..));
                }
                drop(tasks);
                if !self.woken.0.load(Ordering::Acquire) && self.incoming.borrow().is_empty() {
                    return;
                }
            }
        }

        /// Call each answer's function with `(id, status, text)`.
        /// SAFETY: on the JavaScript thread, with a handle scope open.
        unsafe fn deliver(&self) -> Result<()> {
            let answers = std::mem::take(&mut *self.answers.borrow_mut());
            if answers.is_empty() {
                return Ok(());
            }
            let env = self.env;
            let mut global = ptr::null_mut();
            check(sys::napi_get_global(env, &mut global))?;
            for (callback, Answer { id, status, text }) in answers {
                let mut function = ptr::null_mut();
                check(sys::napi_get_reference_value(
                    env,
                    callback.0.reference,
                    &mut function,
                ))?;
                let mut args = [ptr::null_mut(); 3];
                check(sys::napi_create_uint32(env, id, &mut args[0]))?;
                check(sys::napi_create_uint32(env, status, &mut args[1]))?;
                check(sys::napi_create_string_utf8(
                    env,
                    text.as_ptr().cast(),
                    text.len() as isize,
                    &mut args[2],
                ))?;
                let mut result = ptr::null_mut();
                check(sys::napi_call_function(
                    env,
                    global,
                    function,
                    args.len(),
                    args.as_ptr(),
                    &mut result,
                ))?;
            }
            Ok(())
        }

        /// Deliver from a libuv callback: in a handle scope and a callback scope (which runs
        /// the microtasks the answers queued when it closes); a JavaScript exception is
        /// reported as uncaught, anything else is fatal to the benchmark client.
        /// SAFETY: on the JavaScript thread, outside any JavaScript call.
        unsafe fn deliver_from_loop(&self) {
            if self.answers.borrow().is_empty() {
                return;
            }
            let env = self.env;
            let mut handles = ptr::null_mut();
            let mut resource = ptr::null_mut();
            let mut scope = ptr::null_mut();
            let opened = check(sys::napi_open_handle_scope(env, &mut handles))
                .and_then(|()| check(sys::napi_create_object(env, &mut resource)))
                .and_then(|()| {
                    check(sys::napi_open_callback_scope(
                        env,
                        resource,
                        self.async_context,
                        &mut scope,
                    ))
                });
            if opened.is_err() {
                fatal(c"napi-floor: opening a scope for the answers failed");
            }
            if let Err(error) = self.deliver() {
                if error.status != Status::PendingException {
                    fatal(c"napi-floor: handing an answer to JavaScript failed");
                }
                let mut exception = ptr::null_mut();
                sys::napi_get_and_clear_last_exception(env, &mut exception);
                sys::napi_fatal_exception(env, exception);
            }
            sys::napi_close_callback_scope(env, scope);
            sys::napi_close_handle_scope(env, handles);
        }
    }

    /// Connections of this thread's reactor, their tasks driven here.
    impl Connections for Driver {
        fn take(&self) -> Option<Sender> {
            self.idle.borrow_mut().pop()
        }

        fn keep(&self, sender: Sender) {
            self.idle.borrow_mut().push(sender);
        }

        fn drive(&self, connection: Connection) {
            self.incoming.borrow_mut().push(Box::pin(async move {
                let _ = connection.await;
            }));
        }
    }

    unsafe extern "C" fn on_reactor_readable(_: *mut c_void, status: c_int, _: c_int) {
        if status < 0 {
            fatal(c"napi-floor: libuv reported an error on the reactor's descriptor");
        }
        if let Some(driver) = DRIVER.with(|cell| cell.get().copied()) {
            driver.pass(true);
            driver.deliver_from_loop();
        }
    }

    fn async_context(env: &Env) -> Result<sys::napi_async_context> {
        let env = env.raw();
        let name = "napi-floor";
        let mut resource = ptr::null_mut();
        let mut resource_name = ptr::null_mut();
        let mut context = ptr::null_mut();
        // SAFETY: plain value creation on the JavaScript thread; the context lives as long as
        // the driver, which is never dropped.
        unsafe {
            check(sys::napi_create_object(env, &mut resource))?;
            check(sys::napi_create_string_utf8(
                env,
                name.as_ptr().cast(),
                name.len() as isize,
                &mut resource_name,
            ))?;
            check(sys::napi_async_init(
                env,
                resource,
                resource_name,
                &mut context,
            ))?;
        }
        Ok(context)
    }

    /// The process's eventpoll descriptors, as `/proc/self/fd` lists them.
    fn eventpoll_fds() -> Result<Vec<c_int>> {
        let entries = std::fs::read_dir("/proc/self/fd").map_err(|e| {
            Error::new(
                Status::GenericFailure,
                format!("reading /proc/self/fd failed: {e}"),
            )
        })?;
        Ok(entries
            .flatten()
            .filter(|entry| {
                std::fs::read_link(entry.path())
                    .is_ok_and(|target| target.as_os_str() == "anon_inode:[eventpoll]")
            })
            .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
            .collect())
    }

    /// What epoll descriptor `fd` watches, as `/proc/self/fdinfo` lists it.
    fn registrations(fd: c_int) -> Vec<String> {
        std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
            .unwrap_or_default()
            .lines()
            .filter(|line| line.starts_with("tfd:"))
            .map(str::to_owned)
            .collect()
    }

    fn fatal(message: &std::ffi::CStr) -> ! {
        let text = message.to_bytes();
        // SAFETY: a valid message of the given length.
        unsafe { sys::napi_fatal_error(ptr::null(), 0, text.as_ptr().cast(), text.len() as isize) };
        // napi_fatal_error aborts the process; its binding does not say so.
        std::process::abort()
    }
}
