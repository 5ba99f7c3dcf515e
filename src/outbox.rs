//! The one channel from the transport to JavaScript for a provider client: call results,
//! failures and hook events, in order, batched.
//!
//! Every message is appended as JSON text to the open batch of one queue; the message that
//! opens a batch wakes the JavaScript thread, which takes that batch as a single JSON array and
//! parses it once. Under load many calls settle per wake-up, and no call pays for a promise
//! bridge of its own. Because results and events share the queue, a call's hooks always run before its
//! promise settles. The channel keeps Node's event loop alive only while calls are pending
//! (decisions D12). Calls driven on the JavaScript thread skip the wake-up: a batch opened in
//! one of the driver's loop passes is handed over directly when the pass ends ([`collecting_due`]).

mod message;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use napi::bindgen_prelude::{FromNapiValue, Function, FunctionRef, ToNapiValue};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::JsValue;
use napi::{sys, Env, Status};

use message::write_message;
pub use message::Payload;

/// What a message says about its call (the second element of `[callId, kind, payload]`).
/// The facade reads these numbers from [`crate::wire::contract`], never copies them.
#[derive(Clone, Copy)]
#[repr(u8)]
pub enum Kind {
    /// Resolved; the payload is the result.
    Value = 0,
    /// Resolved with `undefined`; no payload.
    Nothing = 1,
    /// Rejected; the payload is the error description.
    Failure = 2,
    /// A hook event; the payload is `{ hook, ctx, error? }`.
    Event = 3,
}

type BatchFunction = ThreadsafeFunction<(), (), BatchText, Status, false, true>;

/// A taken batch on its way to JavaScript. Text that is all ASCII (results and events are
/// escaped to ASCII whenever that fits) becomes a V8 string by a copy, as Latin-1, where UTF-8
/// would be decoded byte by byte (~1,800 instructions for a 2 KB result) after Rust had
/// validated it once more.
pub struct BatchText {
    text: Vec<u8>,
    ascii: bool,
}

impl ToNapiValue for BatchText {
    unsafe fn to_napi_value(env: sys::napi_env, batch: Self) -> napi::Result<sys::napi_value> {
        let mut value = std::ptr::null_mut();
        let (data, length) = (batch.text.as_ptr().cast(), batch.text.len() as isize);
        // SAFETY: `env` is the live env of the callback converting this value; `data` points to
        // `length` bytes that outlive the call, which copies them. Every message was appended
        // from Rust strings, so the text is UTF-8; when it is ASCII it is Latin-1 too.
        let status = unsafe {
            if batch.ascii {
                sys::napi_create_string_latin1(env, data, length, &mut value)
            } else {
                sys::napi_create_string_utf8(env, data, length, &mut value)
            }
        };
        match status {
            sys::Status::napi_ok => Ok(value),
            _ => Err(napi::Error::new(
                Status::GenericFailure,
                "the outbox batch could not become a JavaScript string",
            )),
        }
    }
}

/// A batch stops growing at this size and the next message starts another, so JavaScript
/// never has to hold one huge string and all its parsed results at once (a burst of thousands
/// of responses is delivered in slices it can collect as it goes).
const BATCH_LIMIT: usize = 64 * 1024;

struct Batch {
    /// `[message,message,…` (the closing bracket is added when the batch is taken).
    text: Vec<u8>,
    /// Messages in `text` that settle a call (the rest are events).
    settlements: u32,
    /// Whether `text` is all ASCII so far.
    ascii: bool,
}

impl Default for Batch {
    fn default() -> Self {
        Self {
            text: Vec::new(),
            settlements: 0,
            ascii: true,
        }
    }
}

/// What every clone of one outbox holds: the calls of its client and its tasks send here.
struct OutboxState {
    /// Batches in delivery order; each wake-up of the JavaScript thread takes the first one.
    queue: Mutex<VecDeque<Batch>>,
    /// Calls started and not yet delivered; touched on the JavaScript thread only.
    pending: AtomicU32,
    /// Wakes the JavaScript thread. Calling it needs a shared lock (any thread); referencing
    /// and unreferencing it an exclusive one (the JavaScript thread).
    wake: RwLock<Option<BatchFunction>>,
    /// The same handler, called directly by the JavaScript-thread driver.
    on_batch: FunctionRef<BatchText, ()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The outboxes that opened a batch during the driver's pass that runs on this thread;
    /// None outside such a pass.
    static DUE: RefCell<Option<Vec<Outbox>>> = const { RefCell::new(None) };
}

/// Run `pass` (one of the JavaScript-thread driver's, [`crate::driver`]): batches opened in it
/// wake nobody; the outboxes that hold them are returned, for `deliver_queued` when it ends.
pub fn collecting_due(pass: impl FnOnce()) -> Vec<Outbox> {
    DUE.with(|due| *due.borrow_mut() = Some(Vec::new()));
    pass();
    DUE.with(|due| due.borrow_mut().take()).unwrap_or_default()
}

#[derive(Clone)]
pub struct Outbox {
    state: Arc<OutboxState>,
}

impl Outbox {
    /// `on_batch(text)` receives `[[callId, kind, payload?], …]` on the JavaScript thread.
    pub fn new(on_batch: Function<'_, String, ()>) -> napi::Result<Self> {
        let value = on_batch.value();
        // SAFETY: `on_batch` is a live function of its env, on this thread; the reference
        // typed for a batch's text lets the driver hand it over as Latin-1 like the wake-up does.
        let direct =
            unsafe { FunctionRef::<BatchText, ()>::from_napi_value(value.env, value.value)? };
        let state = Arc::new(OutboxState {
            queue: Mutex::default(),
            pending: AtomicU32::new(0),
            wake: RwLock::new(None),
            on_batch: direct,
        });
        // Weak: the function lives in `state`, so a strong reference here would keep both alive forever.
        let drained = Arc::downgrade(&state);
        let wake: BatchFunction = on_batch
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |context| {
                let taken = drained
                    .upgrade()
                    .and_then(|drained| take_batch(&drained, &context.env));
                Ok(taken.unwrap_or_else(|| BatchText {
                    text: b"[]".to_vec(),
                    ascii: true,
                }))
            })?;
        *state.wake.write().unwrap_or_else(|e| e.into_inner()) = Some(wake);
        Ok(Self { state })
    }

    /// Hand every queued batch to the handler now (the JavaScript-thread driver, after a pass).
    /// A handler that throws has its exception reported as uncaught, as from any callback, and
    /// the batches after it are still delivered.
    pub fn deliver_queued(&self, env: &Env) {
        while let Some(batch) = take_batch(&self.state, env) {
            let delivered = self
                .state
                .on_batch
                .borrow_back(env)
                .and_then(|handler| handler.call(batch));
            if let Err(error) = delivered {
                env.fatal_exception(error);
            }
        }
    }

    /// A call was started (on the JavaScript thread): keep the process alive until it settles.
    pub fn call_started(&self, env: &Env) {
        if self.state.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            set_referenced(&self.state, env, true);
        }
    }

    /// Append one message. A payload that could not become a JavaScript string is replaced
    /// here, inside its own call (decisions D28): the call fails with a typed error (an event
    /// reports it instead of its own error) and the batch, with every other call in it, stays
    /// deliverable.
    pub fn send(&self, call_id: u32, kind: Kind, payload: Payload<'_>) {
        let opened_batch = {
            let mut queue = lock(&self.state.queue);
            let open = queue
                .back()
                .is_some_and(|batch| batch.text.len() < BATCH_LIMIT);
            if !open {
                queue.push_back(Batch::default());
            }
            let Some(batch) = queue.back_mut() else {
                return;
            };
            let start = batch.text.len();
            let ascii = match write_message(&mut batch.text, open, call_id, kind, &payload) {
                Ok(ascii) => ascii,
                Err(size) => {
                    batch.text.truncate(start);
                    let mut ascii = false;
                    payload.send_too_large(kind, size, |kind, substitute| {
                        // The substitute is a few hundred bytes: it always fits.
                        ascii = write_message(&mut batch.text, open, call_id, kind, substitute)
                            .unwrap_or(false);
                    });
                    ascii
                }
            };
            batch.ascii &= ascii;
            // A substitute settles exactly when the message it replaces would have.
            if !matches!(kind, Kind::Event) {
                batch.settlements += 1;
            }
            !open
        };
        // One wake-up per batch: the JavaScript thread takes one batch per call.
        if opened_batch && !self.due_after_pass() {
            self.wake();
        }
    }

    /// Queue this outbox for the end of the driver's pass that runs now, if one does.
    fn due_after_pass(&self) -> bool {
        DUE.with(|due| match due.borrow_mut().as_mut() {
            Some(due) => {
                if !due
                    .iter()
                    .any(|queued| Arc::ptr_eq(&queued.state, &self.state))
                {
                    due.push(self.clone());
                }
                true
            }
            None => false,
        })
    }

    /// Have the JavaScript thread take the first queued batch at its next turn.
    pub fn wake(&self) {
        if let Some(wake) = self
            .state
            .wake
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

/// The first queued batch, closed, with the pending count brought down by the calls it
/// settles (the process may exit once none is left, D12). None when nothing is queued.
fn take_batch(state: &OutboxState, env: &Env) -> Option<BatchText> {
    let batch = lock(&state.queue).pop_front()?;
    let left = state
        .pending
        .load(Ordering::Relaxed)
        .saturating_sub(batch.settlements);
    state.pending.store(left, Ordering::Relaxed);
    if left == 0 {
        set_referenced(state, env, false);
    }
    let mut text = batch.text;
    if text.is_empty() {
        text.push(b'[');
    }
    text.push(b']');
    Some(BatchText {
        text,
        ascii: batch.ascii,
    })
}

/// Reference the function (the loop stays alive) or not (it may exit). napi's ref/unref of a
/// threadsafe function is exactly this switch; the clone-based counting napi-rs recommends
/// instead cannot express "referenced only while calls are pending" for a long-lived function.
#[allow(deprecated)]
fn set_referenced(state: &OutboxState, env: &Env, referenced: bool) {
    if let Some(function) = state
        .wake
        .write()
        .unwrap_or_else(|e| e.into_inner())
        .as_mut()
    {
        let _ = if referenced {
            function.refer(env)
        } else {
            function.unref(env)
        };
    }
}
