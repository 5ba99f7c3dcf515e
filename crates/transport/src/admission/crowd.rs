//! Another client on the credential (decisions D43, our extension): the upstream counts every
//! request made with the credential, this scope's and those of clients it knows nothing of (a
//! second process without `sharedState`, a script run beside the bot). Their requests make a
//! 429 arrive while the estimate said plenty was left, exactly as headers that overstate the
//! quota do (D39 b), and learning from it would throttle the scope far below the quota (a
//! limit of 1 when the others spent a window this scope had read only once).
//!
//! The readings tell them apart. A reading reports how many requests the server counted in its
//! window when it served the answered request; this scope knows how many it admitted, and which
//! of them were answered before that request was admitted (the server saw those first). Between
//! two readings, the server can have counted no more of this scope's requests than it admitted
//! since the earlier reading's request was admitted, plus those then in flight: more served
//! than that was somebody else's. While another client was seen lately, a 429 teaches no limit
//! and `degradedLimit` holds nothing back (D42), since neither can say whose requests caused
//! it; the 429 still closes the window until its reset.
//!
//! Only a scope kept in one process is checked. A fleet's state (`sharedState`) does not count
//! the requests its processes admit on their own copies (a contended decision, an outage) until
//! they write to it again, and those would look like another client's.

use super::{AdmissionState, QuotaReading, DERIVED_WINDOW_MS};

/// Another client seen on the credential keeps 429s from teaching a limit for this long after.
const CROWD_HORIZON_MS: u64 = DERIVED_WINDOW_MS;

/// Requests this scope may have sent without counting them: a request abandoned in flight
/// (timed out, aborted, its lease over) may still reach the server after it was released.
const UNCOUNTED_SLACK: f64 = 2.0;

/// What a scope knows of the requests the upstream counted that were not its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Crowd {
    /// Every request the scope admitted.
    admitted: u64,
    /// The lowest `served − not_after` of a reading in the current window (None until one):
    /// a later reading that served more beyond it than the scope admitted since served others'
    /// requests; the lowest is the strongest test (it is also the earliest: every later
    /// reading adds what others sent meanwhile). A scope that never had a reading starts at 0:
    /// nothing counted before its first request.
    baseline: Option<f64>,
    /// When another client's requests were last seen.
    seen_ms: Option<u64>,
}

impl Default for Crowd {
    /// A new scope: nothing counted before its first request.
    fn default() -> Self {
        Self {
            admitted: 0,
            baseline: Some(0.0),
            seen_ms: None,
        }
    }
}

/// What admission noted of a request as it let it go, to check the reading its answer brings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Mark {
    /// The scope's requests the server cannot count after this one: itself, and those settled
    /// before it was admitted.
    not_after: u64,
    /// The crowd baseline then: it came from a reading the server made before this request.
    baseline: Option<f64>,
}

impl AdmissionState {
    /// A request of a scope kept in one process is admitted: count it, and note how to check
    /// its answer.
    pub(super) fn mark_dispatch(&mut self) -> Mark {
        let settled_before = self
            .crowd
            .admitted
            .saturating_sub(self.in_flight.len() as u64);
        self.crowd.admitted += 1;
        Mark {
            not_after: settled_before + 1,
            baseline: self.crowd.baseline,
        }
    }

    /// The success of `holder`'s request brought `reading`: whether the server counted more
    /// than this scope can have sent tells of another client; the reading then becomes a
    /// baseline for the requests admitted after it.
    pub(super) fn check_for_crowd(&mut self, holder: u64, reading: &QuotaReading, now_ms: u64) {
        let Some(mark) = self.mark_of(holder) else {
            return;
        };
        let served = (reading.limit - reading.remaining).max(0.0);
        if let Some(baseline) = mark.baseline {
            let ours_at_most = self.crowd.admitted as f64 + UNCOUNTED_SLACK;
            if served - ours_at_most > baseline {
                self.crowd.seen_ms = Some(now_ms);
                self.forget_learned_limit();
            }
        }
        let baseline = served - mark.not_after as f64;
        self.crowd.baseline = Some(self.crowd.baseline.map_or(baseline, |b| b.min(baseline)));
    }

    /// The 429 that taught the learned limit may have been the others' doing: the limit goes,
    /// and what it held back of a window still open is the quota's again (a window a 429
    /// closed stays closed until its reset).
    fn forget_learned_limit(&mut self) {
        let Some(learned) = self.learned_limit.take() else {
            return;
        };
        if let Some(quota) = self.server.as_mut().filter(|q| !q.rate_limited) {
            quota.remaining = (quota.remaining + (quota.limit - learned).max(0.0)).min(quota.limit);
        }
    }

    /// The mark of `holder`'s request in flight; with several (a holder reused), the weakest
    /// (the fewest settled before it, the highest baseline).
    fn mark_of(&self, holder: u64) -> Option<Mark> {
        let mut marks = self
            .in_flight
            .iter()
            .filter(|r| r.holder == holder)
            .map(|r| r.mark);
        let first = marks.next()??;
        marks.try_fold(first, |weakest, mark| {
            let mark = mark?;
            Some(Mark {
                not_after: weakest.not_after.min(mark.not_after),
                baseline: weakest.baseline.zip(mark.baseline).map(|(a, b)| a.max(b)),
            })
        })
    }

    /// Whether another client's requests were seen on the credential lately.
    pub(super) fn crowded(&self, now_ms: u64) -> bool {
        self.crowd
            .seen_ms
            .is_some_and(|seen| seen + CROWD_HORIZON_MS > now_ms)
    }

    /// A window ended. When the upstream reported its end and nothing is in flight, the server
    /// counted every request of this scope in the windows before: a new window starts from
    /// nothing (a scope held to a few requests per window, as a low learned limit holds it,
    /// gets a baseline for its first reading). Otherwise, its readings are compared among
    /// themselves.
    pub(super) fn crowd_window_ended(&mut self, end_reported: bool) {
        self.crowd.baseline =
            (end_reported && self.in_flight.is_empty()).then(|| -(self.crowd.admitted as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{reading, NOW, QUOTA_ONLY};
    use super::super::*;
    use crate::random::{RandomSource, SeededRandom};

    fn request(holder: u64) -> Rules {
        Rules {
            holder,
            ..QUOTA_ONLY
        }
    }

    /// The answer of a request the server served as the `served`th of its window of 10.
    fn served_as(served: f64) -> Answer {
        Answer::Served(Some(reading(10.0 - served, None)))
    }

    fn answer(state: &mut AdmissionState, holder: u64, answer: Answer, now_ms: u64) {
        state.learn(&answer, 1, holder, NOW, now_ms);
        state.release(holder);
    }

    #[test]
    fn more_served_than_this_scope_sent_reveals_another_client() {
        let mut state = AdmissionState::default();
        assert!(state.try_admit(&request(1), NOW).is_ok());
        // Another client had spent 2 before this scope's first request: within the slack.
        answer(&mut state, 1, served_as(3.0), NOW + 5);
        assert!(!state.snapshot(NOW + 5).other_clients);
        for holder in 2..=4 {
            assert!(state.try_admit(&request(holder), NOW + 5).is_ok());
        }
        // 4 sent in all: served as the 6th leaves 2 to others (the slack), the 7th 3.
        answer(&mut state, 2, served_as(5.0), NOW + 10);
        answer(&mut state, 3, served_as(6.0), NOW + 10);
        assert!(!state.snapshot(NOW + 10).other_clients, "within the slack");
        answer(&mut state, 4, served_as(7.0), NOW + 10);
        assert!(state.snapshot(NOW + 10).other_clients);
        assert!(!state.snapshot(NOW + 10 + DERIVED_WINDOW_MS).other_clients);
    }

    #[test]
    fn a_429_while_another_client_is_seen_teaches_no_limit_but_closes_the_window() {
        let mut state = AdmissionState::default();
        assert!(state.try_admit(&request(1), NOW).is_ok());
        answer(&mut state, 1, served_as(6.0), NOW + 5);
        assert!(state.crowded(NOW + 5));
        assert!(state.try_admit(&request(2), NOW + 5).is_ok());
        // The estimate said 4 left; the other client spent them.
        let reset = NOW + 1_000;
        let refused = Answer::RateLimited(Some(reading(0.0, Some(reset))));
        answer(&mut state, 2, refused, NOW + 10);
        assert_eq!(state.learned_limit, None);
        assert_eq!(state.try_admit(&request(3), NOW + 10), Err(990));
    }

    #[test]
    fn a_limit_a_429_taught_before_another_client_showed_is_forgotten_when_it_does() {
        let mut state = AdmissionState::default();
        assert!(state.try_admit(&request(1), NOW).is_ok());
        answer(&mut state, 1, served_as(1.0), NOW + 5);
        for holder in 2..=4 {
            assert!(state.try_admit(&request(holder), NOW + 5).is_ok());
        }
        // Refused while the estimate said 9 left: taken for a lie, 1 learned.
        let refused = Answer::RateLimited(Some(reading(0.0, Some(NOW + 1_000))));
        answer(&mut state, 2, refused, NOW + 10);
        assert_eq!(state.learned_limit, Some(1.0));
        // Request 3 was served as the 9th: 8 more than the 1 before, with 3 sent since.
        answer(&mut state, 3, served_as(9.0), NOW + 10);
        assert!(state.crowded(NOW + 10));
        assert_eq!(state.learned_limit, None);
        // The window the 429 closed stays closed until its reset.
        state.release(4);
        assert_eq!(state.try_admit(&request(5), NOW + 10), Err(990));
    }

    #[test]
    fn a_window_open_under_a_forgotten_limit_gets_back_what_it_held() {
        let mut state = AdmissionState {
            learned_limit: Some(4.0),
            ..AdmissionState::default()
        };
        assert!(state.try_admit(&request(1), NOW).is_ok());
        // 2 left by the headers, none of the 4 in force: held until the window ends.
        answer(&mut state, 1, served_as(8.0), NOW + 5);
        assert!(state.crowded(NOW + 5));
        assert_eq!(state.learned_limit, None);
        let admitted = (2..=9)
            .take_while(|&holder| state.try_admit(&request(holder), NOW + 5).is_ok())
            .count();
        assert_eq!(admitted, 2);
    }

    #[test]
    fn a_scope_held_to_one_request_a_window_still_sees_the_others_after_a_reported_end() {
        let held_to_one = |end_reported: bool| {
            let mut state = AdmissionState::default();
            assert!(state.try_admit(&request(1), NOW).is_ok());
            answer(&mut state, 1, served_as(1.0), NOW + 5);
            assert!(state.try_admit(&request(2), NOW + 5).is_ok());
            let reset = end_reported.then_some(NOW + 1_000);
            let refused = Answer::RateLimited(Some(reading(0.0, reset)));
            answer(&mut state, 2, refused, NOW + 10);
            assert_eq!(state.learned_limit, Some(1.0));
            state
        };
        // The next window admits one request; the others spent 4 before it came.
        let next = NOW + 2 * DERIVED_WINDOW_MS;
        let mut reported = held_to_one(true);
        assert!(reported.try_admit(&request(3), next).is_ok());
        answer(&mut reported, 3, served_as(5.0), next + 5);
        assert!(reported.crowded(next + 5));
        assert_eq!(reported.learned_limit, None);
        // A derived end may come late: the scope's last requests may count in the new window.
        let mut derived = held_to_one(false);
        assert!(derived.try_admit(&request(3), next).is_ok());
        answer(&mut derived, 3, served_as(5.0), next + 5);
        assert!(!derived.crowded(next + 5));
    }

    #[test]
    fn another_client_holds_nothing_back_past_the_degraded_limit() {
        let degraded = |holder| Rules {
            degraded_limit: Some(4),
            ..request(holder)
        };
        let mut state = AdmissionState::default();
        assert!(state.try_admit(&degraded(1), NOW).is_ok());
        answer(&mut state, 1, served_as(4.0), NOW + 5);
        assert!(state.crowded(NOW + 5));
        // 4 served by the others' count: without them, one request at a time from here.
        let admitted = (2..=7)
            .take_while(|&holder| state.try_admit(&degraded(holder), NOW + 5).is_ok())
            .count();
        assert_eq!(admitted, 6, "6 left, all at once");
    }

    #[test]
    fn a_fleets_state_is_not_checked() {
        let leased = |holder| Rules {
            lease_ms: Some(60_000),
            ..request(holder)
        };
        let mut fleet = AdmissionState::default();
        assert!(fleet.try_admit(&leased(1), NOW).is_ok());
        // Other processes' requests admitted on their own copies, not counted here yet.
        answer(&mut fleet, 1, served_as(8.0), NOW + 5);
        assert!(!fleet.crowded(NOW + 5));
        assert_eq!(fleet.crowd.admitted, 0);
        // Nothing of it goes to Redis: the fleet's state is as large as before D43.
        assert!(fleet.try_admit(&leased(2), NOW + 5).is_ok());
        let stored = serde_json::to_value(&fleet).unwrap();
        assert_eq!(stored.get("crowd"), None);
        assert_eq!(stored["in_flight"][0].get("mark"), None);
    }

    #[test]
    fn requests_in_flight_when_a_baseline_was_admitted_may_be_counted_after_it() {
        let reading = |served: f64| {
            Answer::Served(Some(QuotaReading {
                limit: 100.0,
                remaining: 100.0 - served,
                reset_ms: None,
            }))
        };
        let mut state = AdmissionState::default();
        state.learn(&reading(0.0), 1, 0, NOW, NOW);
        // No baseline yet in this window.
        state.crowd_window_ended(false);
        for holder in 1..=8 {
            assert!(state.try_admit(&request(holder), NOW).is_ok());
        }
        // The last one admitted is served first, then the 7 before it; one more goes out.
        answer(&mut state, 8, reading(1.0), NOW + 5);
        assert!(state.try_admit(&request(9), NOW + 5).is_ok());
        answer(&mut state, 9, reading(9.0), NOW + 10);
        assert!(
            !state.crowded(NOW + 10),
            "the 7 served between were in flight, and 1 was sent after"
        );
    }

    /// One scope alone on a credential, up to 8 requests in flight: the server counts them in
    /// any order and they are answered in any other; now and then its window ends (the count
    /// starts again). None of it is ever taken for another client, even without the slack.
    #[test]
    fn a_scope_alone_is_never_taken_for_a_crowd_whatever_order_it_is_served_and_answered_in() {
        let random = SeededRandom::new(43);
        let pick = |len: usize| random.below_inclusive(len as u64 - 1) as usize;
        let limit = 1_000_000.0;
        let mut state = read_quota(limit);
        let (mut waiting, mut counted) = (Vec::new(), Vec::<(u64, f64)>::new());
        let (mut served, mut next_holder, mut now) = (0.0, 1, NOW);
        let mut checked = 0;
        for _ in 0..50_000 {
            now += 1;
            match random.below_inclusive(999) {
                0..=299 if waiting.len() + counted.len() < 8 => {
                    assert!(state.try_admit(&request(next_holder), now).is_ok());
                    waiting.push(next_holder);
                    next_holder += 1;
                }
                300..=649 if !waiting.is_empty() => {
                    served += 1.0;
                    counted.push((waiting.swap_remove(pick(waiting.len())), served));
                }
                650..=998 if !counted.is_empty() => {
                    let (holder, at) = counted.swap_remove(pick(counted.len()));
                    let reading = QuotaReading {
                        limit,
                        remaining: limit - at,
                        reset_ms: None,
                    };
                    let mark = state.mark_of(holder).expect("marked");
                    checked += usize::from(mark.baseline.is_some());
                    answer(&mut state, holder, Answer::Served(Some(reading)), now);
                    let closest = state.crowd.admitted as f64 - at + mark.baseline.unwrap_or(0.0);
                    assert!(closest >= 0.0, "holder {holder} served as {at}: {closest}");
                    assert!(!state.crowded(now));
                }
                999 => served = 0.0,
                _ => {}
            }
        }
        assert!(checked > 10_000, "{checked} readings checked");
    }

    /// A scope that has read a quota of `limit` with nothing spent.
    fn read_quota(limit: f64) -> AdmissionState {
        let mut state = AdmissionState::default();
        let reading = QuotaReading {
            limit,
            remaining: limit,
            reset_ms: None,
        };
        state.learn(&Answer::Served(Some(reading)), 1, 0, NOW, NOW);
        state
    }
}
