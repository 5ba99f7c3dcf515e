//! Calls that can be cancelled, by the id the JavaScript side chose for them.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use tokio_util::sync::CancellationToken;

fn registry() -> &'static Mutex<HashMap<u32, CancellationToken>> {
    static CALLS: OnceLock<Mutex<HashMap<u32, CancellationToken>>> = OnceLock::new();
    CALLS.get_or_init(Default::default)
}

/// A call's cancellation token, registered while the returned guard lives. Id 0 means the
/// caller gave no signal: nothing is registered.
pub struct Registration {
    id: u32,
    pub token: CancellationToken,
}

pub fn register(id: u32) -> Registration {
    let token = CancellationToken::new();
    if id != 0 {
        registry().lock().unwrap_or_else(|e| e.into_inner()).insert(id, token.clone());
    }
    Registration { id, token }
}

pub fn cancel(id: u32) {
    if let Some(token) = registry().lock().unwrap_or_else(|e| e.into_inner()).get(&id) {
        token.cancel();
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        if self.id != 0 {
            registry().lock().unwrap_or_else(|e| e.into_inner()).remove(&self.id);
        }
    }
}
