//! The cancellation tokens of calls that can be cancelled, by the id the JavaScript side chose
//! for them: an `AbortSignal` that fires reaches its call through here.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

fn registry() -> &'static Mutex<HashMap<u32, CancellationToken>> {
    static CALLS: OnceLock<Mutex<HashMap<u32, CancellationToken>>> = OnceLock::new();
    CALLS.get_or_init(Default::default)
}

/// A call's cancellation token, registered under its id while the returned guard lives (only
/// for calls that can be cancelled: the others skip the registry).
pub struct Registration {
    id: Option<u32>,
    pub cancellation: CancellationToken,
}

pub fn register(id: u32, cancellable: bool) -> Registration {
    let token = CancellationToken::new();
    if cancellable {
        registry()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id, token.clone());
    }
    Registration {
        id: cancellable.then_some(id),
        cancellation: token,
    }
}

pub fn cancel(id: u32) {
    if let Some(token) = registry()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
    {
        token.cancel();
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            registry()
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&id);
        }
    }
}
