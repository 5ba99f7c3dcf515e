//! Whether a slot decides on the fleet's state (Redis) or on its own (fallback), and when it
//! tries Redis again: a pure state machine on epoch ms, so every transition is tested without
//! sockets. Each switch produces one [`Notice`]: one diagnostic per outage and one per rejoin.

/// While in fallback, Redis is tried again at most this often (by the next decision).
pub const REJOIN_INTERVAL_MS: u64 = 500;

/// A switch worth one diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Redis failed or was slower than `timeoutMs`; `cause` says which (never a password).
    Unavailable {
        cause: String,
    },
    Rejoined,
}

#[derive(Debug, Default)]
pub struct Link {
    in_fallback: bool,
    /// In fallback: the earliest instant the next try may start.
    next_try_at: u64,
}

impl Link {
    /// Whether this decision may ask Redis. In fallback, at most one decision per
    /// [`REJOIN_INTERVAL_MS`] does (it claims the try); the others stay local at once.
    pub fn try_claim(&mut self, now_ms: u64) -> bool {
        if !self.in_fallback {
            return true;
        }
        if now_ms < self.next_try_at {
            return false;
        }
        self.next_try_at = now_ms.saturating_add(REJOIN_INTERVAL_MS);
        true
    }

    pub fn succeeded(&mut self) -> Option<Notice> {
        std::mem::take(&mut self.in_fallback).then_some(Notice::Rejoined)
    }

    pub fn failed(&mut self, now_ms: u64, cause: String) -> Option<Notice> {
        self.next_try_at = now_ms.saturating_add(REJOIN_INTERVAL_MS);
        (!std::mem::replace(&mut self.in_fallback, true)).then_some(Notice::Unavailable { cause })
    }

    pub fn in_fallback(&self) -> bool {
        self.in_fallback
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_notice_per_outage_and_one_per_rejoin() {
        let mut link = Link::default();
        assert!(link.try_claim(0));
        assert_eq!(
            link.succeeded(),
            None,
            "joined from the start: nothing to say"
        );
        assert_eq!(
            link.failed(10, "refused".into()),
            Some(Notice::Unavailable {
                cause: "refused".into()
            })
        );
        assert_eq!(
            link.failed(11, "refused".into()),
            None,
            "still the same outage"
        );
        assert!(!link.try_claim(100), "no try before the interval");
        assert!(link.try_claim(11 + REJOIN_INTERVAL_MS));
        assert!(
            !link.try_claim(11 + REJOIN_INTERVAL_MS),
            "one try per interval, claimed by one decision"
        );
        assert_eq!(link.failed(600, "timeout".into()), None);
        assert!(link.try_claim(600 + REJOIN_INTERVAL_MS));
        assert_eq!(link.succeeded(), Some(Notice::Rejoined));
        assert!(!link.in_fallback());
        assert!(
            link.try_claim(601 + REJOIN_INTERVAL_MS),
            "joined: every decision asks"
        );
        assert!(
            link.failed(2_000, "again".into()).is_some(),
            "a later outage says so again"
        );
    }
}
