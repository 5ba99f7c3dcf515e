//! `getTransportState()`'s view of one provider client (api.md §6, decisions D20): the shapes
//! of a snapshot as the facade receives them, built from the transport's per-host state.

use serde::Serialize;
use serde_json::Value;

use anilink_transport::cache::ResponseCache;
use anilink_transport::host_store::SharingMode;
use anilink_transport::ProviderClient;

#[cfg(test)]
use crate::wire::typescript::{union, TsType};
use crate::wire::typescript::{wire_enum, wire_shape};

/// The snapshot of `client`; `own_host` is the host of the slot's endpoint, whose retry budget
/// is reported on its own. Through JSON's value model: napi's own serializer would make large
/// integers BigInts.
pub fn transport_state(
    client: &ProviderClient,
    own_host: Option<&str>,
) -> serde_json::Result<Value> {
    let hosts = client.snapshot();
    let sharing = client.sharing_mode();
    let snapshot = Snapshot {
        captured_at: EpochMs(client.now_ms()),
        shared_state: SharedState(sharing.as_str()),
        admission: hosts
            .iter()
            .filter_map(|h| {
                h.admission.map(|a| AdmissionEntry {
                    host: &h.host,
                    limit: a.limit,
                    remaining: a.remaining,
                    in_flight: a.in_flight,
                    window_ends_at: a.window_ends_at.map(EpochMs),
                    learned_limit: a.learned_limit,
                    processes: a.processes,
                    share: a.share,
                    other_clients: a.other_clients,
                    proven_served: a.proven_served,
                    decided_by: decided_by(sharing, a.alone),
                })
            })
            .collect(),
        circuit: hosts
            .iter()
            .filter_map(|h| {
                h.breaker.map(|b| CircuitState {
                    host: &h.host,
                    consecutive_failures: b.consecutive_failures,
                    opened_at: b.opened_at.map(EpochMs),
                    probe_in_flight: b.probe_in_flight,
                    failed_probes: b.failed_probes,
                })
            })
            .collect(),
        pace_deadlines: hosts
            .iter()
            .filter_map(|h| {
                h.pace_deadline.map(|deadline_ms| PaceDeadline {
                    host: &h.host,
                    deadline_ms: EpochMs(deadline_ms),
                })
            })
            .collect(),
        retry_budgets: hosts
            .iter()
            .filter_map(|h| {
                h.budget.map(|w| HostBudget {
                    host: &h.host,
                    budget: Budget::from(w),
                })
            })
            .collect(),
        retry_budget: hosts
            .iter()
            .find(|h| Some(h.host.as_str()) == own_host)
            .and_then(|h| h.budget)
            .map(Budget::from),
        response_cache: client.response_cache().map(CacheCounters::of),
    };
    serde_json::to_value(&snapshot)
}

wire_shape! {
    /// `getTransportState()`'s view of one provider client (api.md §6).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Snapshot<'a> as "TransportStateSnapshot" {
        captured_at: EpochMs,
        /// `'redis'`: the lists are the fleet's state as last read; `'local-fallback'`: Redis is
        /// unreachable.
        shared_state: SharedState,
        admission: Vec<AdmissionEntry<'a>>,
        circuit: Vec<CircuitState<'a>>,
        pace_deadlines: Vec<PaceDeadline<'a>>,
        /// Every host with a budget window.
        retry_budgets: Vec<HostBudget<'a>>,
        /// The window of the slot's own endpoint host, once one exists.
        #[serde(skip_serializing_if = "Option::is_none")]
        retry_budget: Option<Budget>,
        /// The counters of the slot's response cache, when it has one.
        #[serde(skip_serializing_if = "Option::is_none")]
        response_cache: Option<CacheCounters>,
    }
}

/// An instant (epoch ms) as the snapshot shows it: a JavaScript number, never a BigInt (napi
/// makes an integer above 2^53 - 1 one, and `JSON.stringify` throws on it). Instants the
/// transport saturates (a budget window of 1e20 ms ends at `u64::MAX`) show as
/// `Number.MAX_SAFE_INTEGER`, later than any `Date`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct EpochMs(u64);

/// `Number.MAX_SAFE_INTEGER`.
const MAX_SAFE_INTEGER: u64 = (1 << 53) - 1;

impl Serialize for EpochMs {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(self.0.min(MAX_SAFE_INTEGER))
    }
}

#[cfg(test)]
impl TsType for EpochMs {
    fn ts() -> String {
        u64::ts()
    }
}

/// [`SharingMode`] as the snapshot's `sharedState` names it.
#[derive(Serialize)]
#[serde(transparent)]
struct SharedState(&'static str);

#[cfg(test)]
impl TsType for SharedState {
    fn ts() -> String {
        union(SharingMode::ALL.iter().map(|mode| mode.as_str()))
    }
}

wire_shape! {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct CircuitState<'a> as "CircuitStateSnapshot" {
        host: &'a str,
        consecutive_failures: u32,
        opened_at: Option<EpochMs>,
        probe_in_flight: bool,
        failed_probes: u32,
    }
}

wire_shape! {
    /// One host's quota-aware admission estimate (issue 15).
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct AdmissionEntry<'a> as "AdmissionSnapshot" {
        host: &'a str,
        /// The last limit the upstream reported; null before any.
        limit: Option<f64>,
        /// What the estimate allows in the current window; null before any limit.
        remaining: Option<f64>,
        /// Requests admitted and not yet settled (expired leases not counted).
        in_flight: u32,
        /// Epoch ms; null when no window is open.
        window_ends_at: Option<EpochMs>,
        /// The limit a 429 the estimate did not predict taught (the headers overstate the quota): in
        /// force instead of `limit`, raised by one per window without a 429; null when none is
        /// (decisions D39 b).
        learned_limit: Option<f64>,
        /// Processes that admitted requests in this scope in the last minute (with `sharedState`).
        processes: u32,
        /// What this process admits per window when it must decide without Redis; null before any
        /// limit (D39 c).
        share: Option<u32>,
        /// Whether the upstream counted requests on this credential lately that no process of
        /// this scope sent (another client: a process without `sharedState`, a script): its
        /// 429s then teach no limit and `degradedLimit` holds nothing back (decisions D43).
        other_clients: bool,
        /// The most requests a window served without a 429 since the headers last showed a lie:
        /// past the slot's `degradedLimit`, requests go one at a time until this exceeds it (the
        /// announced limit is then proven; decisions D42).
        proven_served: f64,
        /// Where admission is decided: `'process'` (no `sharedState`), `'redis'` (the fleet's
        /// state) or `'local-share'` (Redis out of reach: this process's `share` only).
        decided_by: DecidedBy,
    }
}

wire_enum! {
    /// A host's `decidedBy`.
    enum DecidedBy {
        Process = "process",
        Redis = "redis",
        LocalShare = "local-share",
    }
}

/// Where a host's admission decisions are made: in this process (no `sharedState`), on the
/// fleet's state in Redis, or on this process's share while Redis is out of reach.
fn decided_by(sharing: SharingMode, alone: bool) -> DecidedBy {
    match (sharing, alone) {
        (SharingMode::Off, _) => DecidedBy::Process,
        (SharingMode::LocalFallback, _) | (_, true) => DecidedBy::LocalShare,
        (SharingMode::Redis, false) => DecidedBy::Redis,
    }
}

wire_shape! {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct PaceDeadline<'a> as "PaceDeadlineSnapshot" {
        host: &'a str,
        /// Epoch ms.
        deadline_ms: EpochMs,
    }
}

wire_shape! {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Budget as "RetryBudgetSnapshot" {
        retries_used: u32,
        /// Epoch ms.
        window_ends_at: EpochMs,
    }
}

impl From<anilink_transport::budget::BudgetWindow> for Budget {
    fn from(window: anilink_transport::budget::BudgetWindow) -> Self {
        Self {
            retries_used: window.retries_used,
            window_ends_at: EpochMs(window.window_ends_at),
        }
    }
}

wire_shape! {
    /// One host's retry budget window.
    #[derive(Serialize)]
    struct HostBudget<'a> as "HostRetryBudgetSnapshot" {
        host: &'a str,
        #[serde(flatten)]
        budget: Budget,
    }
}

wire_shape! {
    /// Lifetime counters; they never reset.
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    pub struct CacheCounters as "ResponseCacheStats" {
        entries: f64,
        hits: f64,
        misses: f64,
        expirations: f64,
        evictions: f64,
        /// A fleet-wide cache (`shared: true`) only: always `true`.
        #[serde(skip_serializing_if = "Option::is_none")]
        shared: Option<bool> as "true",
        /// A fleet-wide cache only: reads served from the fleet's Redis.
        #[serde(skip_serializing_if = "Option::is_none")]
        fleet_hits: Option<f64>,
        /// A fleet-wide cache only: reads the fleet's Redis answered with a miss.
        #[serde(skip_serializing_if = "Option::is_none")]
        fleet_misses: Option<f64>,
    }
}

impl CacheCounters {
    /// The counters of `cache`, as its `stats()` and a snapshot's `responseCache` give them:
    /// numbers (never BigInts, however large), the fleet's only on a fleet-wide cache.
    pub fn of(cache: &ResponseCache) -> Self {
        let stats = cache.stats();
        let fleet = |count: u64| cache.is_shared().then_some(count as f64);
        Self {
            entries: stats.entries as f64,
            hits: stats.hits as f64,
            misses: stats.misses as f64,
            expirations: stats.expirations as f64,
            evictions: stats.evictions as f64,
            shared: cache.is_shared().then_some(true),
            fleet_hits: fleet(stats.fleet_hits),
            fleet_misses: fleet(stats.fleet_misses),
        }
    }
}

/// The declarations of this module's shapes, for the generated typings.
#[cfg(test)]
pub fn declarations() -> Vec<String> {
    use crate::wire::typescript::WireShape;
    vec![
        CircuitState::declaration(),
        PaceDeadline::declaration(),
        Budget::declaration(),
        HostBudget::declaration(),
        AdmissionEntry::declaration(),
        CacheCounters::declaration(),
        Snapshot::declaration(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::typescript::{declared_keys, object_keys, WireShape};

    #[test]
    fn a_snapshot_with_every_field_has_exactly_the_keys_its_typings_declare() {
        let budget = || Budget {
            retries_used: 1,
            window_ends_at: EpochMs(2),
        };
        let snapshot = Snapshot {
            captured_at: EpochMs(1),
            shared_state: SharedState(SharingMode::Redis.as_str()),
            admission: vec![AdmissionEntry {
                host: "h",
                limit: Some(90.0),
                remaining: Some(1.0),
                in_flight: 1,
                window_ends_at: Some(EpochMs(3)),
                learned_limit: Some(80.0),
                processes: 2,
                share: Some(40),
                other_clients: false,
                proven_served: 31.0,
                decided_by: decided_by(SharingMode::Redis, false),
            }],
            circuit: vec![CircuitState {
                host: "h",
                consecutive_failures: 1,
                opened_at: Some(EpochMs(4)),
                probe_in_flight: false,
                failed_probes: 0,
            }],
            pace_deadlines: vec![PaceDeadline {
                host: "h",
                deadline_ms: EpochMs(5),
            }],
            retry_budgets: vec![HostBudget {
                host: "h",
                budget: budget(),
            }],
            retry_budget: Some(budget()),
            response_cache: Some(CacheCounters {
                entries: 0.0,
                hits: 0.0,
                misses: 0.0,
                expirations: 0.0,
                evictions: 0.0,
                shared: Some(true),
                fleet_hits: Some(0.0),
                fleet_misses: Some(0.0),
            }),
        };
        let json = serde_json::to_value(&snapshot).expect("serializable");
        assert_eq!(
            object_keys(&json),
            declared_keys(&[Snapshot::declaration()])
        );
        assert_eq!(json["admission"][0]["decidedBy"], "redis");
        assert_eq!(
            object_keys(&json["admission"][0]),
            declared_keys(&[AdmissionEntry::declaration()])
        );
        assert_eq!(
            object_keys(&json["circuit"][0]),
            declared_keys(&[CircuitState::declaration()])
        );
        assert_eq!(
            object_keys(&json["paceDeadlines"][0]),
            declared_keys(&[PaceDeadline::declaration()])
        );
        assert_eq!(
            object_keys(&json["retryBudgets"][0]),
            declared_keys(&[HostBudget::declaration(), Budget::declaration()])
        );
        assert_eq!(
            object_keys(&json["retryBudget"]),
            declared_keys(&[Budget::declaration()])
        );
        assert_eq!(
            object_keys(&json["responseCache"]),
            declared_keys(&[CacheCounters::declaration()])
        );
    }

    #[test]
    fn an_instant_past_javascript_safe_integers_saturates_instead_of_becoming_a_bigint() {
        let shown = |ms| serde_json::to_value(EpochMs(ms)).expect("serializable");
        assert_eq!(shown(1_700_000_000_000), 1_700_000_000_000u64);
        assert_eq!(shown(u64::MAX), MAX_SAFE_INTEGER);
        assert_eq!(shown(MAX_SAFE_INTEGER + 1), MAX_SAFE_INTEGER);
    }

    #[test]
    fn admission_is_decided_where_the_sharing_mode_says() {
        assert_eq!(decided_by(SharingMode::Off, true), DecidedBy::Process);
        assert_eq!(
            decided_by(SharingMode::LocalFallback, false),
            DecidedBy::LocalShare
        );
        assert_eq!(decided_by(SharingMode::Redis, true), DecidedBy::LocalShare);
        assert_eq!(decided_by(SharingMode::Redis, false), DecidedBy::Redis);
    }
}
