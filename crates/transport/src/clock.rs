//! Wall-clock time behind a trait, so state that stores epoch deadlines (the response cache's
//! expiry) is driven by a virtual clock in tests.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, as the transport reads them.
pub trait Clock: Send + Sync {
    fn now_ms(&self) -> u64;
}

/// Production clock: the system's wall clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0)
    }
}
