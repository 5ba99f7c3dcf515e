//! The live provider clients of a JavaScript thread, by id.
//!
//! Calls name their client by a number rather than being methods of `NativeClient`: as methods,
//! napi-rs would check `this`'s type tag, unwrap it and register a borrow of it on every call
//! (measured: the entry went from 13,098 to 10,217 instructions per call). Ids are indexes,
//! and a freed one is reused.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use napi::{Env, Result};

use anilink_providers::slot::Endpoint;
use anilink_transport::ProviderClient;

use crate::convert::invalid_arg;
use crate::driver;
use crate::outbox::Outbox;

/// What a call needs of its client.
pub struct RegisteredClient {
    pub provider_client: Arc<ProviderClient>,
    /// Whether its calls run on the JavaScript thread where they can, decided when the slot
    /// was built; an invalid `ANILINK_IO_THREAD` fails each call (nothing is sent).
    pub javascript_thread: std::result::Result<bool, String>,
    /// Read and replaced on the JavaScript thread only (calls build their request from it
    /// before dispatch), so a token refresh swaps it without a lock.
    pub endpoint: RefCell<Endpoint>,
    pub outbox: Outbox,
}

impl RegisteredClient {
    /// The driver its calls run on, None for the worker.
    pub fn driver(&self, env: &Env) -> Result<Option<&'static driver::Driver>> {
        match &self.javascript_thread {
            Ok(true) => Ok(driver::of_this_thread(env)),
            Ok(false) => Ok(None),
            Err(message) => Err(invalid_arg(message.clone())),
        }
    }
}

thread_local! {
    static CLIENTS: RefCell<Vec<Option<Rc<RegisteredClient>>>> = const { RefCell::new(Vec::new()) };
}

/// Register `client` under the first free id.
pub fn register(client: Rc<RegisteredClient>) -> u32 {
    CLIENTS.with_borrow_mut(|clients| {
        let id = match clients.iter().position(Option::is_none) {
            Some(free) => free,
            None => {
                clients.push(None);
                clients.len() - 1
            }
        };
        clients[id] = Some(client);
        id as u32
    })
}

pub fn lookup(id: u32) -> Result<Rc<RegisteredClient>> {
    CLIENTS
        .with_borrow(|clients| clients.get(id as usize).cloned().flatten())
        .ok_or_else(|| invalid_arg(format!("no client has the id {id}")))
}

/// Free `id` (its `NativeClient` was collected).
pub fn release(id: u32) {
    // `try_with`: at thread exit the registry may be gone already.
    let _ = CLIENTS.try_with(|clients| {
        if let Some(entry) = clients.borrow_mut().get_mut(id as usize) {
            *entry = None;
        }
    });
}
