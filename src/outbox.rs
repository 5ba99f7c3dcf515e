//! The one channel from the transport to JavaScript for a provider client: call results,
//! failures and hook events, in order, batched.
//!
//! Every message is appended as JSON text to the open batch of one queue; the message that
//! opens a batch wakes the JavaScript thread, which takes that batch as a single JSON array and
//! parses it once. Under load many calls settle per wake-up, and no call pays for a promise
//! bridge of its own. Because results and events share the queue, a call's hooks always run before its
//! promise settles. The channel keeps Node's event loop alive only while calls are pending
//! (decisions D12).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};

use napi::bindgen_prelude::Function;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status};

/// What a message says about its call (the second element of `[callId, kind, payload]`).
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

type BatchFunction = ThreadsafeFunction<(), (), String, Status, false, true>;

/// A batch stops growing at this size and the next message starts another, so JavaScript
/// never has to hold one huge string and all its parsed results at once (a burst of thousands
/// of responses is delivered in slices it can collect as it goes).
const BATCH_LIMIT: usize = 64 * 1024;

#[derive(Default)]
struct Batch {
    /// `[message,message,…` (the closing bracket is added when the batch is taken).
    text: Vec<u8>,
    /// Messages in `text` that settle a call (the rest are events).
    settlements: u32,
}

struct Shared {
    /// Batches in delivery order; each wake-up of the JavaScript thread takes the first one.
    queue: Mutex<VecDeque<Batch>>,
    /// Calls started and not yet delivered; touched on the JavaScript thread only.
    pending: AtomicU32,
    /// Wakes the JavaScript thread. Calling it needs a shared lock (any thread); referencing
    /// and unreferencing it an exclusive one (the JavaScript thread).
    wake: RwLock<Option<BatchFunction>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[derive(Clone)]
pub struct Outbox {
    shared: Arc<Shared>,
}

impl Outbox {
    /// `on_batch(text)` receives `[[callId, kind, payload?], …]` on the JavaScript thread.
    pub fn new(on_batch: Function<'_, String, ()>) -> napi::Result<Self> {
        let shared = Arc::new(Shared { queue: Mutex::default(), pending: AtomicU32::new(0), wake: RwLock::new(None) });
        // Weak: the function lives in `shared`, so a strong reference here would keep both alive forever.
        let drained = Arc::downgrade(&shared);
        let wake: BatchFunction = on_batch
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |context| {
                let Some(drained) = drained.upgrade() else {
                    return Ok("[]".to_string());
                };
                let batch = lock(&drained.queue).pop_front().unwrap_or_default();
                let left = drained.pending.load(Ordering::Relaxed).saturating_sub(batch.settlements);
                drained.pending.store(left, Ordering::Relaxed);
                if left == 0 {
                    set_referenced(&drained, &context.env, false);
                }
                let mut text = batch.text;
                if text.is_empty() {
                    text.push(b'[');
                }
                text.push(b']');
                // Every message was appended from Rust strings, so this never has to repair anything.
                Ok(String::from_utf8(text).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()))
            })?;
        *shared.wake.write().unwrap_or_else(|e| e.into_inner()) = Some(wake);
        Ok(Self { shared })
    }

    /// A call was started (on the JavaScript thread): keep the process alive until it settles.
    pub fn call_started(&self, env: &Env) {
        if self.shared.pending.fetch_add(1, Ordering::Relaxed) == 0 {
            set_referenced(&self.shared, env, true);
        }
    }

    /// Append one message; `payload` writes its JSON text, if any.
    pub fn send(&self, call_id: u32, kind: Kind, payload: Option<&str>) {
        let opened_batch = {
            let mut queue = lock(&self.shared.queue);
            let open = queue.back().is_some_and(|batch| batch.text.len() < BATCH_LIMIT);
            if !open {
                queue.push_back(Batch::default());
            }
            let Some(batch) = queue.back_mut() else { return };
            batch.text.push(if open { b',' } else { b'[' });
            batch.text.push(b'[');
            batch.text.extend_from_slice(call_id.to_string().as_bytes());
            batch.text.push(b',');
            batch.text.push(b'0' + kind as u8);
            if let Some(payload) = payload {
                batch.text.push(b',');
                batch.text.extend_from_slice(payload.as_bytes());
            }
            batch.text.push(b']');
            if !matches!(kind, Kind::Event) {
                batch.settlements += 1;
            }
            !open
        };
        // One wake-up per batch: the JavaScript thread takes one batch per call.
        if opened_batch {
            if let Some(wake) = self.shared.wake.read().unwrap_or_else(|e| e.into_inner()).as_ref() {
                wake.call((), ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }
}

/// Reference the function (the loop stays alive) or not (it may exit). napi's ref/unref of a
/// threadsafe function is exactly this switch; the clone-based counting napi-rs recommends
/// instead cannot express "referenced only while calls are pending" for a long-lived function.
#[allow(deprecated)]
fn set_referenced(shared: &Shared, env: &Env, referenced: bool) {
    if let Some(function) = shared.wake.write().unwrap_or_else(|e| e.into_inner()).as_mut() {
        let _ = if referenced { function.refer(env) } else { function.unref(env) };
    }
}
