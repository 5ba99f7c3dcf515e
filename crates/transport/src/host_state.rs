//! Cross-request state of one provider client, per upstream host: breaker, budget window,
//! pacing deadline and admission estimate together, so one lock covers each decision that reads several of them.
//!
//! Bounded to [`MAX_HOSTS`] hosts, least recently used out, so a client pointed at many hosts
//! (or a stream of distinct URLs) cannot grow without limit.
//!
//! The attempt loop reaches it through [`HostStore`](crate::host_store::HostStore), which holds
//! either these in-process states or the fleet's copy of them in Redis.

use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::admission::{AdmissionSnapshot, AdmissionState};
use crate::breaker::{Breaker, BreakerSnapshot};
use crate::budget::BudgetWindow;

pub const MAX_HOSTS: usize = 64;

/// Serialised as it is (serde) when a fleet shares it through Redis.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostState {
    /// A call with a breaker configured has reached this host: its breaker shows in snapshots.
    pub breaker_used: bool,
    pub breaker: Breaker,
    pub budget: Option<BudgetWindow>,
    pub pace_deadline: Option<u64>,
    pub admission: AdmissionState,
}

#[derive(Debug, Default)]
pub struct HostStates {
    /// Most recently used last.
    hosts: Mutex<Vec<(String, HostState)>>,
    /// Decisions taken, so tests can hold the attempt loop to one before and one after each
    /// request (each is a compare-and-set round trip when the state is shared).
    #[cfg(test)]
    pub decisions: std::sync::atomic::AtomicUsize,
}

/// A copy of one host's state for `getTransportState()`.
#[derive(Clone, Debug, PartialEq)]
pub struct HostSnapshot {
    pub host: String,
    /// None when no call with a breaker configured has reached the host.
    pub breaker: Option<BreakerSnapshot>,
    pub budget: Option<BudgetWindow>,
    pub pace_deadline: Option<u64>,
    /// None while no response has reported a quota and nothing is in flight.
    pub admission: Option<AdmissionSnapshot>,
}

impl HostSnapshot {
    pub fn of(host: &str, state: &HostState, now_ms: u64) -> HostSnapshot {
        let admission = state.admission.snapshot(now_ms);
        HostSnapshot {
            host: host.to_string(),
            breaker: state.breaker_used.then(|| state.breaker.snapshot()),
            budget: state.budget,
            pace_deadline: state.pace_deadline,
            admission: (admission.limit.is_some() || admission.in_flight > 0).then_some(admission),
        }
    }
}

impl HostStates {
    /// Run `f` on the host's state, creating it and refreshing its recency.
    pub fn with<R>(&self, host: &str, f: impl FnOnce(&mut HostState) -> R) -> R {
        #[cfg(test)]
        self.decisions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        let index = match hosts.iter().position(|(h, _)| h == host) {
            Some(index) => index,
            None => {
                if hosts.len() >= MAX_HOSTS {
                    hosts.remove(0);
                }
                hosts.push((host.to_string(), HostState::default()));
                hosts.len() - 1
            }
        };
        let last = hosts.len() - 1;
        // Most calls go to the host used last: it stays in place, nothing is moved.
        if index != last {
            let entry = hosts.remove(index);
            hosts.push(entry);
        }
        f(&mut hosts[last].1)
    }

    /// Read every host without creating, rolling, clearing or reordering anything.
    pub fn snapshot(&self, now_ms: u64) -> Vec<HostSnapshot> {
        let hosts = self.hosts.lock().unwrap_or_else(|e| e.into_inner());
        hosts
            .iter()
            .map(|(host, state)| HostSnapshot::of(host, state, now_ms))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_separate_and_bounded() {
        let states = HostStates::default();
        states.with("a", |s| s.pace_deadline = Some(1));
        states.with("b", |s| s.pace_deadline = Some(2));
        assert_eq!(states.with("a", |s| s.pace_deadline), Some(1));
        for i in 0..MAX_HOSTS {
            states.with(&format!("h{i}"), |_| ());
        }
        let snapshot = states.snapshot(0);
        assert_eq!(snapshot.len(), MAX_HOSTS);
        assert!(
            snapshot.iter().all(|h| h.host != "a" && h.host != "b"),
            "oldest hosts are evicted"
        );
    }

    #[test]
    fn a_host_used_again_is_the_last_evicted() {
        let states = HostStates::default();
        states.with("a", |_| ());
        states.with("b", |_| ());
        states.with("a", |_| ());
        for i in 0..MAX_HOSTS - 1 {
            states.with(&format!("h{i}"), |_| ());
        }
        let hosts: Vec<String> = states.snapshot(0).into_iter().map(|h| h.host).collect();
        assert!(hosts.contains(&"a".to_string()) && !hosts.contains(&"b".to_string()));
    }

    #[test]
    fn snapshots_do_not_reorder() {
        let states = HostStates::default();
        states.with("a", |_| ());
        states.with("b", |_| ());
        let first: Vec<String> = states.snapshot(0).into_iter().map(|h| h.host).collect();
        let second: Vec<String> = states.snapshot(0).into_iter().map(|h| h.host).collect();
        assert_eq!(first, second);
    }
}
