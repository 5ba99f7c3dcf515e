//! The breaker's state machine, driven on a virtual clock: every transition and what it reports.

use super::*;

const CONFIG: BreakerConfig = BreakerConfig {
    threshold: 3,
    cooldown_ms: 1_000,
};

/// Requests are numbered; these two are used where ownership matters.
const PROBE: u64 = 1;
const OTHER: u64 = 2;

/// A breaker tripped at `opened_at` by `CONFIG.threshold` failures of distinct requests.
fn tripped_at(opened_at: u64) -> Breaker {
    let mut breaker = Breaker::default();
    for request in 100..100 + u64::from(CONFIG.threshold) {
        assert_eq!(
            breaker.admit(&CONFIG, opened_at, request),
            Admission::Proceed { probe: false }
        );
        breaker.record(&CONFIG, Outcome::Availability, opened_at, request);
    }
    assert_eq!(breaker.snapshot().opened_at, Some(opened_at));
    breaker
}

/// A breaker tripped at 0 whose probe (request `PROBE`) was admitted at `CONFIG.cooldown_ms`.
fn probing() -> Breaker {
    let mut breaker = tripped_at(0);
    assert_eq!(
        breaker.admit(&CONFIG, CONFIG.cooldown_ms, PROBE),
        Admission::Proceed { probe: true }
    );
    breaker
}

fn closed_snapshot() -> BreakerSnapshot {
    BreakerSnapshot {
        consecutive_failures: 0,
        opened_at: None,
        probe_in_flight: false,
        failed_probes: 0,
    }
}

#[test]
fn availability_failures_open_at_the_threshold() {
    let mut breaker = Breaker::default();
    assert_eq!(breaker.record(&CONFIG, Outcome::Availability, 10, 1), None);
    assert_eq!(breaker.record(&CONFIG, Outcome::Availability, 20, 2), None);
    assert_eq!(breaker.snapshot().consecutive_failures, 2);
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Availability, 30, 3),
        Some(Transition::Opened { failures: 3 })
    );
    assert_eq!(
        breaker.snapshot(),
        BreakerSnapshot {
            consecutive_failures: 3,
            opened_at: Some(30),
            probe_in_flight: false,
            failed_probes: 0
        }
    );
}

#[test]
fn success_and_reachability_reset_the_streak_while_closed() {
    for reset in [Outcome::Success, Outcome::Reachability] {
        let mut breaker = Breaker::default();
        breaker.record(&CONFIG, Outcome::Availability, 0, 1);
        breaker.record(&CONFIG, Outcome::Availability, 0, 2);
        assert_eq!(breaker.record(&CONFIG, reset, 0, 3), None);
        assert_eq!(breaker.snapshot(), closed_snapshot());
        breaker.record(&CONFIG, Outcome::Availability, 0, 4);
        assert_eq!(
            breaker.record(&CONFIG, Outcome::Availability, 0, 5),
            None,
            "the streak restarted"
        );
    }
}

#[test]
fn neutral_outcomes_leave_a_closed_streak_alone() {
    let mut breaker = Breaker::default();
    breaker.record(&CONFIG, Outcome::Availability, 0, 1);
    breaker.record(&CONFIG, Outcome::Availability, 0, 2);
    assert_eq!(breaker.record(&CONFIG, Outcome::Neutral, 0, 3), None);
    assert_eq!(breaker.snapshot().consecutive_failures, 2);
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Availability, 0, 4),
        Some(Transition::Opened { failures: 3 })
    );
}

#[test]
fn an_open_breaker_fast_fails_with_the_remaining_period() {
    let mut breaker = tripped_at(5_000);
    assert_eq!(
        breaker.admit(&CONFIG, 5_000, OTHER),
        Admission::FastFail {
            retry_after_ms: Some(1_000),
            probing: false
        }
    );
    assert_eq!(
        breaker.admit(&CONFIG, 5_999, OTHER),
        Admission::FastFail {
            retry_after_ms: Some(1),
            probing: false
        }
    );
}

#[test]
fn after_the_cooldown_exactly_one_request_probes() {
    let mut breaker = tripped_at(5_000);
    assert_eq!(
        breaker.admit(&CONFIG, 6_000, PROBE),
        Admission::Proceed { probe: true }
    );
    assert!(breaker.holds_probe(PROBE));
    assert!(!breaker.holds_probe(OTHER));
    assert_eq!(
        breaker.admit(&CONFIG, 6_001, OTHER),
        Admission::FastFail {
            retry_after_ms: None,
            probing: true
        }
    );
    assert_eq!(
        breaker.admit(&CONFIG, 60_000, OTHER),
        Admission::FastFail {
            retry_after_ms: None,
            probing: true
        }
    );
    assert_eq!(
        breaker.snapshot(),
        BreakerSnapshot {
            consecutive_failures: 3,
            opened_at: None,
            probe_in_flight: true,
            failed_probes: 0
        }
    );
}

#[test]
fn the_probe_owner_asking_again_keeps_its_reservation() {
    let mut breaker = probing();
    assert_eq!(
        breaker.admit(&CONFIG, 1_500, PROBE),
        Admission::Proceed { probe: true }
    );
    assert!(breaker.holds_probe(PROBE));
}

#[test]
fn a_zero_cooldown_probes_immediately() {
    let config = BreakerConfig {
        threshold: 1,
        cooldown_ms: 0,
    };
    let mut breaker = Breaker::default();
    assert_eq!(
        breaker.record(&config, Outcome::Availability, 7, 1),
        Some(Transition::Opened { failures: 1 })
    );
    assert_eq!(
        breaker.admit(&config, 7, 2),
        Admission::Proceed { probe: true }
    );
}

#[test]
fn a_probe_success_closes_and_resets_everything() {
    let mut breaker = probing();
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Success, 1_200, PROBE),
        Some(Transition::Closed)
    );
    assert_eq!(breaker.snapshot(), closed_snapshot());
    assert_eq!(
        breaker.admit(&CONFIG, 1_201, OTHER),
        Admission::Proceed { probe: false }
    );
}

#[test]
fn a_probe_settled_without_availability_evidence_closes() {
    for outcome in [Outcome::Reachability, Outcome::Neutral] {
        let mut breaker = probing();
        breaker.record(&CONFIG, Outcome::Availability, 1_100, PROBE);
        breaker.admit(&CONFIG, 1_100 + 2_000, PROBE);
        assert_eq!(
            breaker.record(&CONFIG, outcome, 3_200, PROBE),
            Some(Transition::Closed),
            "{outcome:?}"
        );
        assert_eq!(
            breaker.snapshot(),
            closed_snapshot(),
            "{outcome:?} resets the failed probes too"
        );
    }
}

#[test]
fn a_failed_probe_reopens_without_an_event_and_widens_the_period() {
    let mut breaker = probing();
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Availability, 1_100, PROBE),
        None
    );
    assert_eq!(
        breaker.snapshot(),
        BreakerSnapshot {
            consecutive_failures: 3,
            opened_at: Some(1_100),
            probe_in_flight: false,
            failed_probes: 1
        }
    );
    assert_eq!(
        breaker.admit(&CONFIG, 1_100, OTHER),
        Admission::FastFail {
            retry_after_ms: Some(2_000),
            probing: false
        }
    );
    assert_eq!(
        breaker.admit(&CONFIG, 3_100, OTHER),
        Admission::Proceed { probe: true }
    );
}

#[test]
fn widening_doubles_per_failed_probe_up_to_eight_times() {
    let mut breaker = tripped_at(0);
    let mut now_ms = 0;
    let mut periods = Vec::new();
    for _ in 0..6 {
        let Admission::FastFail {
            retry_after_ms: Some(period),
            ..
        } = breaker.admit(&CONFIG, now_ms, OTHER)
        else {
            panic!("expected a fast-fail right after (re)opening");
        };
        periods.push(period);
        now_ms += period;
        assert_eq!(
            breaker.admit(&CONFIG, now_ms, PROBE),
            Admission::Proceed { probe: true }
        );
        assert_eq!(
            breaker.record(&CONFIG, Outcome::Availability, now_ms, PROBE),
            None
        );
    }
    assert_eq!(periods, [1_000, 2_000, 4_000, 8_000, 8_000, 8_000]);
    assert_eq!(breaker.snapshot().failed_probes, 6);
}

#[test]
fn an_in_flight_availability_failure_extends_the_open_period() {
    let mut breaker = tripped_at(0);
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Availability, 700, OTHER),
        None
    );
    assert_eq!(breaker.snapshot().opened_at, Some(700));
    assert_eq!(breaker.snapshot().consecutive_failures, 4);
    assert_eq!(
        breaker.admit(&CONFIG, 1_000, OTHER),
        Admission::FastFail {
            retry_after_ms: Some(700),
            probing: false
        }
    );
}

#[test]
fn the_open_period_is_never_pulled_back_by_an_earlier_clock() {
    let mut breaker = tripped_at(5_000);
    breaker.record(&CONFIG, Outcome::Availability, 4_000, OTHER);
    assert_eq!(breaker.snapshot().opened_at, Some(5_000));
}

#[test]
fn an_in_flight_success_or_reachability_failure_closes_an_open_breaker() {
    for outcome in [Outcome::Success, Outcome::Reachability] {
        let mut breaker = tripped_at(0);
        assert_eq!(
            breaker.record(&CONFIG, outcome, 300, OTHER),
            Some(Transition::Closed),
            "{outcome:?}"
        );
        assert_eq!(breaker.snapshot(), closed_snapshot());
    }
}

#[test]
fn an_in_flight_neutral_outcome_leaves_an_open_breaker_alone() {
    let mut breaker = tripped_at(0);
    let before = breaker.snapshot();
    assert_eq!(breaker.record(&CONFIG, Outcome::Neutral, 300, OTHER), None);
    assert_eq!(breaker.snapshot(), before);
}

#[test]
fn only_the_probe_owner_settles_a_half_open_breaker() {
    for outcome in [
        Outcome::Success,
        Outcome::Availability,
        Outcome::Reachability,
        Outcome::Neutral,
    ] {
        let mut breaker = probing();
        let before = breaker.snapshot();
        assert_eq!(
            breaker.record(&CONFIG, outcome, 1_100, OTHER),
            None,
            "{outcome:?}"
        );
        assert_eq!(
            breaker.snapshot(),
            before,
            "{outcome:?} from another request changed the state"
        );
        assert!(breaker.holds_probe(PROBE));
    }
}

#[test]
fn a_pacing_abort_closes_only_for_the_probe_owner() {
    let mut breaker = probing();
    assert_eq!(breaker.pacing_aborted(OTHER), None);
    assert!(breaker.holds_probe(PROBE));
    assert_eq!(breaker.pacing_aborted(PROBE), Some(Transition::Closed));
    assert_eq!(breaker.snapshot(), closed_snapshot());
}

#[test]
fn a_pacing_abort_without_a_probe_changes_nothing() {
    let mut closed = Breaker::default();
    closed.record(&CONFIG, Outcome::Availability, 0, 1);
    assert_eq!(closed.pacing_aborted(1), None);
    assert_eq!(closed.snapshot().consecutive_failures, 1);

    let mut open = tripped_at(0);
    let before = open.snapshot();
    assert_eq!(open.pacing_aborted(100), None);
    assert_eq!(open.snapshot(), before);
}

#[test]
fn threshold_and_cooldown_come_from_each_call() {
    let mut breaker = Breaker::default();
    let lenient = BreakerConfig {
        threshold: 10,
        cooldown_ms: 1_000,
    };
    let strict = BreakerConfig {
        threshold: 2,
        cooldown_ms: 50,
    };
    breaker.record(&lenient, Outcome::Availability, 0, 1);
    assert_eq!(
        breaker.record(&strict, Outcome::Availability, 0, 2),
        Some(Transition::Opened { failures: 2 })
    );
    assert_eq!(
        breaker.admit(&lenient, 10, 3),
        Admission::FastFail {
            retry_after_ms: Some(990),
            probing: false
        }
    );
    assert_eq!(
        breaker.admit(&strict, 50, 3),
        Admission::Proceed { probe: true }
    );
}

/// Random sequences of admissions, outcomes, pacing aborts and clock steps, checked against
/// the breaker's contract as an outside observer sees it.
#[test]
fn invariants_hold_over_random_sequences() {
    for seed in 0..3_000u64 {
        run_random_sequence(seed);
    }
}

fn run_random_sequence(seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let config = BreakerConfig {
        threshold: rng.u32(1..=4),
        cooldown_ms: rng.u64(0..=1_000),
    };
    let mut breaker = Breaker::default();
    let mut now_ms = rng.u64(0..=1_000_000);
    let mut next_request = 0u64;
    // Requests admitted and not yet settled, with whether each was admitted as the probe.
    let mut in_flight: Vec<(u64, bool)> = Vec::new();
    // Whether the last transition an observer saw was `Opened`.
    let mut announced_open = false;

    let observe =
        |transition: Option<Transition>, announced_open: &mut bool, context: &str| match transition
        {
            Some(Transition::Opened { failures }) => {
                assert!(
                    !*announced_open,
                    "seed {seed}: second Opened without Closed ({context})"
                );
                assert!(
                    failures >= config.threshold,
                    "seed {seed}: opened below the threshold"
                );
                *announced_open = true;
            }
            Some(Transition::Closed) => {
                assert!(
                    *announced_open,
                    "seed {seed}: Closed without a preceding Opened ({context})"
                );
                *announced_open = false;
            }
            None => {}
        };

    for step in 0..200 {
        let context = format!("step {step}");
        match rng.u8(0..10) {
            0..=3 => {
                let request = if !in_flight.is_empty() && rng.bool() {
                    // A retry of a request that just settled reuses its id.
                    let index = rng.usize(0..in_flight.len());
                    let (request, was_probe) = in_flight.swap_remove(index);
                    observe(
                        breaker.record(&config, random_outcome(&mut rng), now_ms, request),
                        &mut announced_open,
                        &context,
                    );
                    assert!(
                        !was_probe || !breaker.holds_probe(request),
                        "seed {seed}: a settled probe still holds"
                    );
                    request
                } else {
                    next_request += 1;
                    next_request
                };
                let before = breaker.snapshot();
                let closed_before = before.opened_at.is_none() && !before.probe_in_flight;
                match breaker.admit(&config, now_ms, request) {
                    Admission::Proceed { probe } => {
                        assert_eq!(
                            probe,
                            breaker.holds_probe(request),
                            "seed {seed}: probe flag mismatch"
                        );
                        in_flight.push((request, probe));
                    }
                    Admission::FastFail {
                        retry_after_ms,
                        probing,
                    } => {
                        assert!(
                            !closed_before,
                            "seed {seed}: fast-fail while closed ({context})"
                        );
                        assert!(
                            announced_open,
                            "seed {seed}: fast-fail with no Opened announced ({context})"
                        );
                        assert_eq!(probing, breaker.snapshot().probe_in_flight, "seed {seed}");
                        if let Some(wait) = retry_after_ms {
                            assert!(wait > 0, "seed {seed}: a zero retry_after_ms");
                            assert!(
                                wait <= 8 * config.cooldown_ms,
                                "seed {seed}: open period above 8x cooldown"
                            );
                        }
                    }
                }
            }
            4..=6 if !in_flight.is_empty() => {
                let index = rng.usize(0..in_flight.len());
                let (request, _) = in_flight.swap_remove(index);
                observe(
                    breaker.record(&config, random_outcome(&mut rng), now_ms, request),
                    &mut announced_open,
                    &context,
                );
            }
            7 if !in_flight.is_empty() => {
                let index = rng.usize(0..in_flight.len());
                let (request, was_probe) = in_flight.swap_remove(index);
                let transition = breaker.pacing_aborted(request);
                assert_eq!(
                    transition.is_some(),
                    was_probe,
                    "seed {seed}: pacing abort of probe {was_probe}"
                );
                observe(transition, &mut announced_open, &context);
            }
            _ => now_ms += rng.u64(0..=2 * config.cooldown_ms.max(1)),
        }

        let probes_out = in_flight.iter().filter(|(_, probe)| *probe).count();
        let snapshot = breaker.snapshot();
        assert!(
            probes_out <= 1,
            "seed {seed}: {probes_out} probes in flight"
        );
        assert_eq!(
            snapshot.probe_in_flight,
            probes_out == 1,
            "seed {seed}: snapshot disagrees ({context})"
        );
        if let Some(opened_at) = snapshot.opened_at {
            assert!(
                opened_at <= now_ms,
                "seed {seed}: open period starts in the future"
            );
        }
        assert_eq!(
            announced_open,
            snapshot.opened_at.is_some() || snapshot.probe_in_flight,
            "seed {seed}: events disagree with the state ({context})"
        );
    }
}

fn random_outcome(rng: &mut fastrand::Rng) -> Outcome {
    match rng.u8(0..4) {
        0 => Outcome::Success,
        1 => Outcome::Availability,
        2 => Outcome::Reachability,
        _ => Outcome::Neutral,
    }
}

#[test]
fn a_probe_past_its_lease_is_lost_and_the_next_request_probes() {
    let mut breaker = tripped_at(0);
    let due = CONFIG.cooldown_ms;
    assert_eq!(
        breaker.admit(&CONFIG, due, PROBE),
        Admission::Proceed { probe: true }
    );
    breaker.expire_probe(&CONFIG, due + 999, 1_000);
    assert!(breaker.holds_probe(PROBE), "still within its lease");
    breaker.expire_probe(&CONFIG, due + 1_000, 1_000);
    assert!(!breaker.holds_probe(PROBE));
    assert_eq!(
        breaker.admit(&CONFIG, due + 1_000, OTHER),
        Admission::Proceed { probe: true },
        "the probe of a killed worker does not block the fleet"
    );
    assert_eq!(
        breaker.record(&CONFIG, Outcome::Success, due + 1_100, PROBE),
        None,
        "the lost probe's late answer no longer settles it"
    );
}

#[test]
fn the_state_round_trips_through_serde() {
    let breaker = probing();
    let text = serde_json::to_string(&breaker).unwrap();
    assert_eq!(serde_json::from_str::<Breaker>(&text).unwrap(), breaker);
}
