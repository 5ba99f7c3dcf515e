//! What options hold once parsed: the per-key [`KeyState`] of a partial option set, and the values
//! the attempt loop and the pools read ([`RetrySetting`], [`PoolBounds`], [`HookSet`]), with
//! their documented defaults.

use crate::policy::RetryPolicy;

pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub const DEFAULT_RATE_LIMIT_FLOOR: u32 = 1;
/// 64 MiB: far above any AniList or MAL answer, far below what would strain the process (D28).
pub const DEFAULT_MAX_RESPONSE_BYTES: u64 = 64 << 20;
/// As many as the original's client (axios over follow-redirects) followed.
pub const DEFAULT_MAX_REDIRECTS: u32 = 5;
pub const DEFAULT_MAX_SOCKETS: u32 = 20;
pub const DEFAULT_MAX_FREE_SOCKETS: u32 = 5;

/// One option in a partial option set: absent, present as `undefined`, or set.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum KeyState<T> {
    #[default]
    Absent,
    Unset,
    Set(T),
}

impl<T: Clone> KeyState<T> {
    /// `{...base, ...over}` for one key.
    pub(super) fn merged(base: &KeyState<T>, over: &KeyState<T>) -> KeyState<T> {
        match over {
            KeyState::Absent => base.clone(),
            other => other.clone(),
        }
    }

    pub(super) fn value(&self) -> Option<&T> {
        match self {
            KeyState::Set(v) => Some(v),
            _ => None,
        }
    }
}

/// `retry` as given: off, the defaults, or a policy already overlaid on the defaults.
#[derive(Clone, Debug, PartialEq)]
pub enum RetrySetting {
    Disabled,
    Defaults,
    Custom(RetryPolicy),
}

/// Socket bounds of a dedicated pool (decisions D13): `maxSockets`, `maxFreeSockets`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PoolBounds {
    pub max_sockets: u32,
    pub max_free_sockets: u32,
}

impl PoolBounds {
    pub const DEFAULT: PoolBounds = PoolBounds {
        max_sockets: DEFAULT_MAX_SOCKETS,
        max_free_sockets: DEFAULT_MAX_FREE_SOCKETS,
    };
}

/// Hooks the transport emits events for; the bit tells the attempt loop whether to build one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Hook {
    OnRequestStart = 1,
    OnResponse = 2,
    OnError = 4,
    OnRetry = 8,
    OnPace = 16,
    OnCircuitOpen = 32,
    OnCircuitClose = 64,
}

impl Hook {
    pub const ALL: [Hook; 7] = [
        Hook::OnRequestStart,
        Hook::OnResponse,
        Hook::OnError,
        Hook::OnRetry,
        Hook::OnPace,
        Hook::OnCircuitOpen,
        Hook::OnCircuitClose,
    ];

    /// The option key that configures the hook.
    pub fn key(self) -> &'static str {
        match self {
            Hook::OnRequestStart => "onRequestStart",
            Hook::OnResponse => "onResponse",
            Hook::OnError => "onError",
            Hook::OnRetry => "onRetry",
            Hook::OnPace => "onPace",
            Hook::OnCircuitOpen => "onCircuitOpen",
            Hook::OnCircuitClose => "onCircuitClose",
        }
    }
}

/// The set of hooks configured for a call.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HookSet(pub u32);

impl HookSet {
    /// Not a hook: the bit of a call someone observes (diagnostics channels), which gets every
    /// event whatever its hooks.
    const OBSERVED: u32 = 1 << 31;

    pub fn has(self, hook: Hook) -> bool {
        self.0 & hook as u32 != 0
    }

    /// These hooks, on a call whose every event is wanted.
    pub fn observed(self) -> Self {
        Self(self.0 | Self::OBSERVED)
    }

    pub fn is_observed(self) -> bool {
        self.0 & Self::OBSERVED != 0
    }

    /// Whether the loop builds the event of `hook`: the hook is configured or the call observed.
    pub fn emits(self, hook: Hook) -> bool {
        self.has(hook) || self.is_observed()
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}
