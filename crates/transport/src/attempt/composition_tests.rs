//! The loop's composition, tested through its seam: a scripted [`Exchange`] (queued statuses,
//! headers, bodies, failures and delays), tokio's paused clock and a seeded random source, so
//! every test asserts the exact sequence of events and the virtual time each happened at,
//! without sockets and without sleeping.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Method};

use super::*;
use crate::error::{ErrorCode, Protocol};
use crate::events::Event;
use crate::exchange::RawResponse;
use crate::host_state::HostStates;
use crate::options::{Hook, HookSet, OptValue, PartialOptions};
use crate::random::SeededRandom;
use crate::request::ResultShape;

/// Wall-clock "now" when a test starts (epoch ms): deadlines and windows are read against it.
const EPOCH_MS: u64 = 1_700_000_000_000;
const SEED: u64 = 16;
const GRAPHQL_OK: &str = r#"{"data":{"Media":{"id":1}}}"#;

/// Wall-clock time that follows tokio's paused clock.
struct VirtualClock(Instant);

impl Clock for VirtualClock {
    fn now_ms(&self) -> u64 {
        EPOCH_MS + self.0.elapsed().as_millis() as u64
    }
}

/// One scripted attempt: written after `connect_ms` of virtual time (the connection it waits
/// for), then after `after_ms` more, an answer or a failure.
struct Step {
    connect_ms: u64,
    after_ms: u64,
    outcome: Result<RawResponse, TransportError>,
}

fn answer(status: u16, body: &'static str) -> Step {
    let response = RawResponse {
        status,
        headers: HeaderMap::new(),
        body: Bytes::from_static(body.as_bytes()),
        timed: Duration::ZERO,
    };
    Step {
        connect_ms: 0,
        after_ms: 0,
        outcome: Ok(response),
    }
}

fn failure(error: TransportError) -> Step {
    Step {
        connect_ms: 0,
        after_ms: 0,
        outcome: Err(error),
    }
}

impl Step {
    fn after(mut self, ms: u64) -> Self {
        self.after_ms = ms;
        self
    }

    /// Written only after `ms` spent opening its connection.
    fn connecting(mut self, ms: u64) -> Self {
        self.connect_ms = ms;
        self
    }

    fn header(mut self, name: &'static str, value: impl ToString) -> Self {
        let response = self.outcome.as_mut().expect("headers belong to an answer");
        response.headers.insert(
            HeaderName::from_static(name),
            HeaderValue::from_str(&value.to_string()).unwrap(),
        );
        self
    }

    /// `x-ratelimit-*` with no quota left, resetting `reset_in_s` seconds after the test's start.
    fn quota_gone(self, reset_in_s: u64) -> Self {
        self.header("x-ratelimit-limit", 90)
            .header("x-ratelimit-remaining", 0)
            .header("x-ratelimit-reset", EPOCH_MS / 1000 + reset_in_s)
    }
}

/// The scripted exchange: answers in order, and records when each round trip was written
/// and what it sent.
struct Script {
    origin: Instant,
    steps: Mutex<VecDeque<Step>>,
    dispatched_at: Mutex<Vec<u64>>,
    /// `"<method> <url> timeout=<ms>"` per round trip.
    sent: Mutex<Vec<String>>,
}

impl Exchange for Script {
    async fn send(
        &self,
        spec: &RequestSpec,
        _: u64,
        timeout: Option<Duration>,
    ) -> Result<RawResponse, TransportError> {
        let timeout = timeout.map_or("none".into(), |t| t.as_millis().to_string());
        self.sent
            .lock()
            .unwrap()
            .push(format!("{} {} timeout={timeout}", spec.method, spec.url));
        let step = self
            .steps
            .lock()
            .unwrap()
            .pop_front()
            .expect("the loop dispatched more attempts than scripted");
        tokio::time::sleep(Duration::from_millis(step.connect_ms)).await;
        self.dispatched_at
            .lock()
            .unwrap()
            .push(self.origin.elapsed().as_millis() as u64);
        tokio::time::sleep(Duration::from_millis(step.after_ms)).await;
        step.outcome.map(|mut response| {
            response.timed = Duration::from_millis(step.after_ms);
            response
        })
    }
}

/// Every event as one line, `"<virtual ms> <event>#<attempt> <details>"`.
struct Recorder {
    origin: Instant,
    lines: Mutex<Vec<String>>,
}

impl EventSink for Recorder {
    async fn emit(&self, event: Event) {
        let line = format!("{} {}", self.origin.elapsed().as_millis(), render(&event));
        self.lines.lock().unwrap().push(line);
    }
}

fn render(event: &Event) -> String {
    match event {
        Event::RequestStart(context) => format!("start#{}", context.attempt),
        Event::Response {
            context,
            duration_ms,
            paced_ms,
            ..
        } => {
            let paced = paced_ms
                .map(|ms| format!(" paced={ms}ms"))
                .unwrap_or_default();
            format!("response#{} {duration_ms}ms{paced}", context.attempt)
        }
        Event::Pace {
            context,
            delay_ms,
            aborted,
        } => {
            format!(
                "pace#{} {delay_ms}ms{}",
                context.attempt,
                if *aborted { " aborted" } else { "" }
            )
        }
        Event::Failure(report) => {
            let mut line = format!(
                "{}#{} {}",
                if report.via_retry_hook {
                    "retry"
                } else {
                    "error"
                },
                report.context.attempt,
                report.error.code.as_str()
            );
            let mut add = |field: Option<String>| line.extend(field.map(|f| format!(" {f}")));
            add(report.error.status.map(|s| s.to_string()));
            add(report.next_delay_ms.map(|ms| format!("next={ms}ms")));
            add(report.retry_wait_ms.map(|ms| format!("waited={ms}ms")));
            add(report.retry_after_ms.map(|ms| format!("retryAfter={ms}ms")));
            add(report
                .budget_exhausted
                .then(|| "budget-exhausted".to_string()));
            line
        }
        Event::CircuitOpen {
            context, failures, ..
        } => format!("circuit-open#{} failures={failures}", context.attempt),
        Event::CircuitClose { context, .. } => format!("circuit-close#{}", context.attempt),
        Event::SharedState {
            context, notice, ..
        } => format!("shared-state#{} {notice:?}", context.attempt),
    }
}

/// One client's per-host state, time and randomness, and the scripted exchange under its loop.
/// Built inside a test started on paused time.
struct Harness {
    hosts: HostStore,
    clock: VirtualClock,
    rng: SeededRandom,
    script: Script,
    events: Recorder,
}

impl Harness {
    fn new(steps: impl IntoIterator<Item = Step>) -> Self {
        let origin = Instant::now();
        Self {
            hosts: HostStore::Local(HostStates::default()),
            clock: VirtualClock(origin),
            rng: SeededRandom::new(SEED),
            script: Script {
                origin,
                steps: Mutex::new(steps.into_iter().collect()),
                dispatched_at: Mutex::default(),
                sent: Mutex::default(),
            },
            events: Recorder {
                origin,
                lines: Mutex::default(),
            },
        }
    }

    async fn call(
        &self,
        spec: &RequestSpec,
        options: &ResolvedOptions,
    ) -> Result<Completed, TransportError> {
        self.call_until(spec, options, &CancellationToken::new())
            .await
    }

    async fn call_until(
        &self,
        spec: &RequestSpec,
        options: &ResolvedOptions,
        cancel: &CancellationToken,
    ) -> Result<Completed, TransportError> {
        let env = ClientEnv {
            hosts: &self.hosts,
            clock: &self.clock,
            rng: &self.rng,
        };
        let call = CallInputs {
            spec,
            options,
            sink: &self.events,
            cancel,
        };
        execute_on(&env, &self.script, call, new_request_id()).await
    }

    /// A call whose caller cancels it `abort_at_ms` after it starts.
    async fn call_aborted_at(
        &self,
        abort_at_ms: u64,
        spec: &RequestSpec,
        options: &ResolvedOptions,
    ) -> Result<Completed, TransportError> {
        let cancel = CancellationToken::new();
        let abort = async {
            tokio::time::sleep(Duration::from_millis(abort_at_ms)).await;
            cancel.cancel();
        };
        tokio::join!(self.call_until(spec, options, &cancel), abort).0
    }

    /// The events so far, taken (the next call starts a fresh list).
    fn events(&self) -> Vec<String> {
        std::mem::take(&mut *self.events.lines.lock().unwrap())
    }

    fn dispatched_at(&self) -> Vec<u64> {
        self.script.dispatched_at.lock().unwrap().clone()
    }

    fn sent(&self) -> Vec<String> {
        std::mem::take(&mut *self.script.sent.lock().unwrap())
    }

    fn now(&self) -> u64 {
        self.clock.now_ms() - EPOCH_MS
    }

    fn host(&self) -> crate::host_state::HostSnapshot {
        self.hosts
            .snapshot(self.clock.now_ms())
            .into_iter()
            .next()
            .expect("the call reached the host")
    }
}

/// Every hook configured, plus `extra`; resolved as a read, or as a write for `is_write`.
fn options_for(is_write: bool, extra: &[(&str, OptValue)]) -> ResolvedOptions {
    let mut partial = PartialOptions::default();
    for hook in crate::options::Hook::ALL {
        partial.parse_key(hook.key(), &OptValue::Function).unwrap();
    }
    for (key, value) in extra {
        assert!(
            partial.parse_key(key, value).unwrap(),
            "{key} is a transport option"
        );
    }
    partial.resolve(is_write)
}

fn options(extra: &[(&str, OptValue)]) -> ResolvedOptions {
    options_for(false, extra)
}

fn object(fields: &[(&str, f64)]) -> OptValue {
    OptValue::Object(
        fields
            .iter()
            .map(|(k, v)| (k.to_string(), OptValue::Number(*v)))
            .collect(),
    )
}

/// `retry`: `max_retries` retries, unjittered backoff from `base_ms`.
fn retry(max_retries: u32, base_ms: u64) -> (&'static str, OptValue) {
    let OptValue::Object(mut fields) = object(&[
        ("maxRetries", max_retries.into()),
        ("baseDelayMs", base_ms as f64),
    ]) else {
        unreachable!()
    };
    fields.push(("jitter".into(), OptValue::Bool(false)));
    ("retry", OptValue::Object(fields))
}

fn no_retry() -> (&'static str, OptValue) {
    ("retry", OptValue::Bool(false))
}

fn budget(max_retries_per_window: u32, window_ms: u64) -> (&'static str, OptValue) {
    (
        "retryBudget",
        object(&[
            ("maxRetriesPerWindow", max_retries_per_window.into()),
            ("windowMs", window_ms as f64),
        ]),
    )
}

fn breaker(threshold: u32, cooldown_ms: u64) -> (&'static str, OptValue) {
    (
        "circuitBreaker",
        object(&[
            ("threshold", threshold.into()),
            ("cooldownMs", cooldown_ms as f64),
        ]),
    )
}

/// An AniList-style query: a POST that is a read.
fn graphql() -> RequestSpec {
    let mut spec = RequestSpec::new(
        Method::POST,
        "http://api.test/",
        HeaderMap::new(),
        Bytes::new(),
        Protocol::GraphQl,
        ResultShape::GraphQl,
    )
    .unwrap();
    spec.is_write = false;
    spec
}

fn rest(method: Method) -> RequestSpec {
    RequestSpec::new(
        method,
        "http://api.test/anime/1",
        HeaderMap::new(),
        Bytes::new(),
        Protocol::Rest,
        ResultShape::Rest,
    )
    .unwrap()
}

fn code(result: Result<Completed, TransportError>) -> ErrorCode {
    result.expect_err("the call fails").code
}

// Event order and backoff

#[tokio::test(start_paused = true)]
async fn a_success_reports_its_start_then_its_response() {
    let harness = Harness::new([answer(200, GRAPHQL_OK).after(40)]);
    let completed = harness.call(&graphql(), &options(&[])).await.unwrap();
    assert_eq!(completed.result.as_deref(), Some(r#"{"id":1}"#));
    assert_eq!(harness.events(), ["0 start#1", "40 response#1 40ms"]);
}

#[tokio::test(start_paused = true)]
async fn a_byte_order_mark_before_the_body_is_dropped() {
    let harness = Harness::new([
        answer(200, "\u{feff}{\"data\":{\"Media\":{\"id\":1}}}"),
        answer(200, "\u{feff}{\"id\":21}"),
    ]);
    let completed = harness.call(&graphql(), &options(&[])).await.unwrap();
    assert_eq!(completed.result.as_deref(), Some(r#"{"id":1}"#));
    let completed = harness
        .call(&rest(Method::GET), &options(&[]))
        .await
        .unwrap();
    assert_eq!(completed.result.as_deref(), Some(r#"{"id":21}"#));
}

#[tokio::test(start_paused = true)]
async fn retried_503s_back_off_exponentially_then_succeed() {
    let harness = Harness::new([
        answer(503, "down").after(10),
        answer(503, "down").after(10),
        answer(200, GRAPHQL_OK).after(10),
    ]);
    harness
        .call(&graphql(), &options(&[retry(3, 100)]))
        .await
        .unwrap();
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "10 response#1 10ms",
            "10 retry#1 API_ERROR 503 next=100ms",
            "110 start#2",
            "120 response#2 10ms",
            "120 retry#2 API_ERROR 503 next=200ms waited=100ms",
            "320 start#3",
            "330 response#3 10ms",
        ]
    );
    assert_eq!(harness.dispatched_at(), [0, 110, 320]);
}

#[tokio::test(start_paused = true)]
async fn jittered_backoff_draws_from_the_seeded_source() {
    let harness = Harness::new([answer(503, ""), answer(200, GRAPHQL_OK)]);
    harness.call(&graphql(), &options(&[])).await.unwrap();
    // The default policy: full jitter over the first cap, 250 ms.
    let delay = SeededRandom::new(SEED).below_inclusive(250);
    assert_eq!(
        harness.events(),
        [
            "0 start#1".to_string(),
            "0 response#1 0ms".into(),
            format!("0 retry#1 API_ERROR 503 next={delay}ms"),
            format!("{delay} start#2"),
            format!("{delay} response#2 0ms")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn without_an_on_retry_hook_a_scheduled_retry_reports_through_on_error() {
    let harness = Harness::new([answer(503, ""), answer(503, "")]);
    let mut options = options(&[retry(1, 100)]);
    options.hooks = HookSet(options.hooks.0 & !(Hook::OnRetry as u32));
    assert_eq!(
        code(harness.call(&graphql(), &options).await),
        ErrorCode::Api
    );
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 error#1 API_ERROR 503 next=100ms",
            "100 start#2",
            "100 response#2 0ms",
            "100 error#2 API_ERROR 503 waited=100ms"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn writes_are_not_retried_unless_they_opt_in() {
    let harness = Harness::new([answer(503, ""), answer(503, ""), answer(204, "")]);
    assert_eq!(
        code(
            harness
                .call(&rest(Method::PATCH), &options_for(true, &[]))
                .await
        ),
        ErrorCode::Rest
    );
    assert_eq!(
        harness.events(),
        ["0 start#1", "0 response#1 0ms", "0 error#1 REST_ERROR 503"],
        "D1: no retry by default"
    );
    let opted_in = options_for(true, &[retry(1, 100)]);
    assert_eq!(
        harness
            .call(&rest(Method::PATCH), &opted_in)
            .await
            .unwrap()
            .result,
        None
    );
    assert_eq!(harness.dispatched_at(), [0, 0, 100]);
}

#[tokio::test(start_paused = true)]
async fn network_failures_and_timeouts_are_retried_and_count_for_the_breaker() {
    let harness = Harness::new([
        failure(TransportError::network("reset".into())).after(5),
        failure(TransportError::timeout(50)).after(50),
    ]);
    let result = harness
        .call(&graphql(), &options(&[retry(3, 100), breaker(2, 1_000)]))
        .await;
    assert_eq!(code(result), ErrorCode::CircuitOpen);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "5 response#1 5ms",
            "5 retry#1 NETWORK_ERROR next=100ms",
            "105 start#2",
            "155 response#2 50ms",
            "155 circuit-open#2 failures=2",
            "155 retry#2 TIMEOUT_ERROR next=200ms waited=100ms",
            // The retry meets the breaker it opened: a fast-fail, not retried.
            "355 start#3",
            "355 error#3 CIRCUIT_OPEN_ERROR waited=300ms retryAfter=800ms",
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_response_over_the_size_limit_is_neither_retried_nor_counted() {
    let harness = Harness::new([failure(TransportError::response_too_large(5))]);
    let result = harness
        .call(&graphql(), &options(&[retry(3, 100), breaker(1, 1_000)]))
        .await;
    assert_eq!(result.unwrap_err().response_limit, Some(5));
    assert_eq!(
        harness.events(),
        ["0 start#1", "0 response#1 0ms", "0 error#1 NETWORK_ERROR"],
        "D28: no retry, no trip"
    );
    assert_eq!(harness.host().breaker.unwrap().consecutive_failures, 0);
}

// The retry budget

#[tokio::test(start_paused = true)]
async fn a_retried_503_spends_the_budget_and_an_exhausted_budget_stops_and_says_so() {
    let harness = Harness::new([answer(503, ""), answer(503, "")]);
    let result = harness
        .call(&graphql(), &options(&[retry(3, 100), budget(1, 10_000)]))
        .await;
    assert_eq!(code(result), ErrorCode::Api);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 retry#1 API_ERROR 503 next=100ms",
            "100 start#2",
            "100 response#2 0ms",
            "100 error#2 API_ERROR 503 waited=100ms budget-exhausted",
        ]
    );
    let window = harness.host().budget.unwrap();
    assert_eq!(
        (window.retries_used, window.window_ends_at),
        (1, EPOCH_MS + 10_000),
        "the window opened at the first failure"
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_is_shared_by_every_call_to_the_host() {
    let harness = Harness::new([answer(503, ""), answer(200, GRAPHQL_OK), answer(503, "")]);
    let options = options(&[retry(3, 100), budget(1, 10_000)]);
    harness.call(&graphql(), &options).await.unwrap();
    harness.events();
    assert_eq!(
        code(harness.call(&graphql(), &options).await),
        ErrorCode::Api
    );
    assert_eq!(
        harness.events(),
        [
            "100 start#1",
            "100 response#1 0ms",
            "100 error#1 API_ERROR 503 budget-exhausted"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn the_policy_decides_before_the_budget() {
    // Neither a 404 nor a failure past maxRetries is a retry the budget refused.
    let harness = Harness::new([answer(404, ""), answer(503, "")]);
    let empty_budget = budget(0, 10_000);
    assert_eq!(
        code(
            harness
                .call(&graphql(), &options(&[retry(3, 100), empty_budget.clone()]))
                .await
        ),
        ErrorCode::Api
    );
    assert_eq!(
        code(
            harness
                .call(&graphql(), &options(&[retry(0, 100), empty_budget]))
                .await
        ),
        ErrorCode::Api
    );
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 error#1 API_ERROR 404",
            "0 start#1",
            "0 response#1 0ms",
            "0 error#1 API_ERROR 503"
        ]
    );
    assert_eq!(harness.host().budget.unwrap().retries_used, 0);
}

#[tokio::test(start_paused = true)]
async fn a_server_wait_past_the_window_ends_the_call_without_spending() {
    let harness = Harness::new([answer(503, "").header("retry-after", 20)]);
    assert_eq!(
        code(
            harness
                .call(&graphql(), &options(&[retry(3, 100), budget(5, 10_000)]))
                .await
        ),
        ErrorCode::Api
    );
    assert_eq!(
        harness.events(),
        ["0 start#1", "0 response#1 0ms", "0 error#1 API_ERROR 503"],
        "not exhausted: the window is too short"
    );
    assert_eq!(harness.host().budget.unwrap().retries_used, 0);
}

// Rate limits and pacing

#[tokio::test(start_paused = true)]
async fn a_429_retry_after_is_waited_exactly_without_jitter() {
    let harness = Harness::new([
        answer(429, "").header("retry-after", 2),
        answer(200, GRAPHQL_OK),
    ]);
    harness.call(&graphql(), &options(&[])).await.unwrap();
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 retry#1 API_ERROR 429 next=2000ms",
            "2000 start#2",
            "2000 response#2 0ms"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_terminal_429_with_quota_paces_the_next_call_until_the_reset() {
    let harness = Harness::new([
        answer(429, "").quota_gone(3),
        answer(200, GRAPHQL_OK).after(10),
    ]);
    let options = options(&[no_retry()]);
    assert_eq!(
        code(harness.call(&graphql(), &options).await),
        ErrorCode::Api
    );
    assert_eq!(harness.host().pace_deadline, Some(EPOCH_MS + 3_000));
    harness.call(&graphql(), &options).await.unwrap();
    // The waiters' stagger: up to a tenth of the wait, drawn from the seeded source.
    let at = 3_000 + SeededRandom::new(SEED).below_inclusive(300);
    assert_eq!(
        harness.events(),
        [
            "0 start#1".to_string(),
            "0 response#1 0ms".into(),
            "0 error#1 API_ERROR 429".into(),
            format!("{at} pace#1 3000ms"),
            format!("{at} start#1"),
            format!("{} response#1 10ms paced=3000ms", at + 10),
        ]
    );
    assert_eq!(harness.dispatched_at(), [0, at]);
}

#[tokio::test(start_paused = true)]
async fn a_success_below_the_quota_floor_returns_at_once_and_paces_the_next_call() {
    let harness = Harness::new([
        answer(200, GRAPHQL_OK).quota_gone(5),
        answer(200, GRAPHQL_OK),
    ]);
    harness.call(&graphql(), &options(&[])).await.unwrap();
    assert_eq!(
        harness.now(),
        0,
        "pacing never holds back the answer in hand"
    );
    assert_eq!(harness.events(), ["0 start#1", "0 response#1 0ms"]);
    harness.call(&graphql(), &options(&[])).await.unwrap();
    let at = 5_000 + SeededRandom::new(SEED).below_inclusive(500);
    assert_eq!(
        harness.events(),
        [
            format!("{at} pace#1 5000ms"),
            format!("{at} start#1"),
            format!("{at} response#1 0ms paced=5000ms")
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn ignore_pace_deadline_dispatches_at_once() {
    let harness = Harness::new([answer(200, GRAPHQL_OK)]);
    harness
        .hosts
        .with_local("api.test", |s| s.pace_deadline = Some(EPOCH_MS + 5_000));
    harness
        .call(
            &graphql(),
            &options(&[("ignorePaceDeadline", OptValue::Bool(true))]),
        )
        .await
        .unwrap();
    assert_eq!(harness.events(), ["0 start#1", "0 response#1 0ms"]);
}

// The circuit breaker

#[tokio::test(start_paused = true)]
async fn the_breaker_opens_at_the_threshold_then_fails_fast_without_dispatch() {
    let harness = Harness::new([answer(503, "").after(10), answer(503, "").after(10)]);
    let options = options(&[no_retry(), breaker(2, 1_000)]);
    for _ in 0..3 {
        let _ = harness.call(&graphql(), &options).await;
    }
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "10 response#1 10ms",
            "10 error#1 API_ERROR 503",
            "10 start#1",
            "20 response#1 10ms",
            "20 circuit-open#1 failures=2",
            "20 error#1 API_ERROR 503",
            "20 start#1",
            "20 error#1 CIRCUIT_OPEN_ERROR retryAfter=1000ms",
        ]
    );
    assert_eq!(harness.dispatched_at(), [0, 10]);
}

#[tokio::test(start_paused = true)]
async fn a_half_open_probe_that_succeeds_closes_the_breaker() {
    let harness = Harness::new([answer(503, ""), answer(200, GRAPHQL_OK).after(10)]);
    let options = options(&[no_retry(), breaker(1, 1_000)]);
    let _ = harness.call(&graphql(), &options).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    harness.call(&graphql(), &options).await.unwrap();
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 circuit-open#1 failures=1",
            "0 error#1 API_ERROR 503",
            "1000 start#1",
            "1010 response#1 10ms",
            "1010 circuit-close#1"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_failed_probe_is_not_retried_and_reopens_for_twice_the_cooldown() {
    let harness = Harness::new([answer(503, ""), answer(503, "")]);
    let _ = harness
        .call(&graphql(), &options(&[no_retry(), breaker(1, 1_000)]))
        .await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    harness.events();
    let retrying = options(&[retry(3, 100), breaker(1, 1_000)]);
    assert_eq!(
        code(harness.call(&graphql(), &retrying).await),
        ErrorCode::Api
    );
    assert_eq!(
        code(harness.call(&graphql(), &retrying).await),
        ErrorCode::CircuitOpen
    );
    assert_eq!(
        harness.events(),
        [
            "1000 start#1",
            "1000 response#1 0ms",
            "1000 error#1 API_ERROR 503",
            "1000 start#1",
            "1000 error#1 CIRCUIT_OPEN_ERROR retryAfter=2000ms"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn while_the_probe_is_out_other_calls_fail_fast() {
    let harness = Harness::new([answer(503, ""), answer(200, GRAPHQL_OK).after(100)]);
    let options = options(&[no_retry(), breaker(1, 1_000)]);
    let _ = harness.call(&graphql(), &options).await;
    tokio::time::sleep(Duration::from_millis(1_000)).await;
    harness.events();
    let late = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        harness.call(&graphql(), &options).await
    };
    let probe_spec = graphql();
    let (probe, late) = tokio::join!(harness.call(&probe_spec, &options), late);
    probe.unwrap();
    assert!(
        late.unwrap_err().message.contains("probe"),
        "the fast-fail says a probe is out"
    );
    assert_eq!(
        harness.events(),
        [
            "1000 start#1",
            "1010 start#1",
            "1010 error#1 CIRCUIT_OPEN_ERROR",
            "1100 response#1 100ms",
            "1100 circuit-close#1"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn an_envelope_500_inside_a_200_counts_for_the_breaker() {
    let body = r#"{"data":null,"errors":[{"message":"boom","status":500}]}"#;
    let harness = Harness::new([answer(200, body)]);
    let result = harness
        .call(&graphql(), &options(&[no_retry(), breaker(1, 1_000)]))
        .await;
    assert_eq!(code(result), ErrorCode::GraphQl);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 circuit-open#1 failures=1",
            "0 error#1 GRAPHQL_ERROR 500"
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_statusless_envelope_error_is_neutral_and_not_retried() {
    let body = r#"{"data":null,"errors":[{"message":"bad query"}]}"#;
    let harness = Harness::new([answer(200, body)]);
    let result = harness
        .call(&graphql(), &options(&[retry(3, 100), breaker(1, 1_000)]))
        .await;
    assert_eq!(code(result), ErrorCode::GraphQl);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 error#1 GRAPHQL_ERROR 200"
        ]
    );
    assert_eq!(harness.host().breaker.unwrap().consecutive_failures, 0);
}

#[tokio::test(start_paused = true)]
async fn the_auth_guard_runs_before_an_open_breaker() {
    let harness = Harness::new([answer(503, "")]);
    let options = options(&[no_retry(), breaker(1, 1_000)]);
    let _ = harness.call(&graphql(), &options).await;
    harness.events();
    let mut guarded = graphql();
    guarded.missing_auth = Some("anilist.user.current".into());
    assert_eq!(
        code(harness.call(&guarded, &options).await),
        ErrorCode::Auth
    );
    assert_eq!(harness.events(), ["0 start#1", "0 error#1 AUTH_ERROR"]);
    assert_eq!(harness.dispatched_at(), [0]);
}

// Cancellation

#[tokio::test(start_paused = true)]
async fn an_abort_during_backoff_ends_the_call_at_once_and_reports_nothing() {
    let harness = Harness::new([answer(503, "")]);
    let result = harness
        .call_aborted_at(
            300,
            &graphql(),
            &options(&[retry(3, 1_000), budget(5, 10_000)]),
        )
        .await;
    assert_eq!(code(result), ErrorCode::Aborted);
    assert_eq!(harness.now(), 300);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 response#1 0ms",
            "0 retry#1 API_ERROR 503 next=1000ms"
        ]
    );
    assert_eq!(
        harness.host().budget.unwrap().retries_used,
        1,
        "the unit already spent is not refunded"
    );
}

#[tokio::test(start_paused = true)]
async fn an_abort_during_pacing_reports_the_time_waited_and_dispatches_nothing() {
    let harness = Harness::new([]);
    harness
        .hosts
        .with_local("api.test", |s| s.pace_deadline = Some(EPOCH_MS + 5_000));
    let result = harness
        .call_aborted_at(2_000, &graphql(), &options(&[]))
        .await;
    assert!(result.unwrap_err().aborted_during_pacing);
    assert_eq!(harness.events(), ["2000 pace#1 2000ms aborted"]);
    assert!(harness.dispatched_at().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_abort_in_flight_is_reported_and_never_retried() {
    let harness = Harness::new([answer(200, GRAPHQL_OK).after(500)]);
    let result = harness
        .call_aborted_at(100, &graphql(), &options(&[retry(3, 100)]))
        .await;
    assert_eq!(code(result), ErrorCode::Aborted);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "100 response#1 100ms",
            "100 error#1 ABORTED_ERROR"
        ]
    );
}

// Quota-aware admission

#[tokio::test(start_paused = true)]
async fn admission_holds_a_call_while_the_quota_left_is_already_in_flight() {
    let quota = |step: Step, remaining: u32| {
        step.header("x-ratelimit-limit", 2)
            .header("x-ratelimit-remaining", remaining)
    };
    let harness = Harness::new([
        quota(answer(200, GRAPHQL_OK), 1),
        quota(answer(200, GRAPHQL_OK).after(300), 0),
        answer(200, GRAPHQL_OK),
    ]);
    let (spec, options) = (graphql(), options(&[]));
    harness.call(&spec, &options).await.unwrap();
    let (first, second) =
        tokio::join!(harness.call(&spec, &options), harness.call(&spec, &options));
    first.unwrap();
    second.unwrap();
    // No reset reported: the window is taken to end 60 s after the quota was first seen.
    assert_eq!(harness.dispatched_at(), [0, 0, 60_000]);
    assert!(harness
        .events()
        .contains(&"60000 pace#1 60000ms".to_string()));
}

#[tokio::test(start_paused = true)]
async fn an_abort_while_waiting_for_admission_dispatches_nothing() {
    let harness = Harness::new([]);
    let reading = crate::admission::QuotaReading {
        limit: 90.0,
        remaining: 0.0,
        reset_ms: Some(EPOCH_MS + 5_000),
    };
    harness.hosts.with_local("api.test", |s| {
        let answer = crate::admission::Answer::Served(Some(reading));
        s.admission.learn(&answer, 1, 0, EPOCH_MS, EPOCH_MS)
    });
    let result = harness
        .call_aborted_at(2_000, &graphql(), &options(&[]))
        .await;
    let error = result.unwrap_err();
    assert!(error.aborted_during_pacing);
    assert_eq!(error.message, crate::error::messages::ABORTED_ADMISSION);
    assert_eq!(harness.events(), ["2000 pace#1 2000ms aborted"]);
    assert!(harness.dispatched_at().is_empty());
}

#[tokio::test(start_paused = true)]
async fn an_already_aborted_call_that_admission_would_hold_is_a_plain_abort() {
    let harness = Harness::new([answer(200, GRAPHQL_OK).after(100)]);
    let (spec, options) = (graphql(), options(&[]));
    // A cold start: the first request asks for the quota, the next would wait for its answer.
    let cancelled = CancellationToken::new();
    cancelled.cancel();
    let (first, second) = tokio::join!(
        harness.call(&spec, &options),
        harness.call_until(&spec, &options, &cancelled)
    );
    first.unwrap();
    let error = second.unwrap_err();
    assert_eq!(error.code, ErrorCode::Aborted);
    assert!(
        !error.aborted_during_pacing,
        "no pacing deadline was pending (D22)"
    );
    assert_eq!(error.message, crate::error::messages::ABORTED);
    assert_eq!(
        harness.events(),
        [
            "0 start#1",
            "0 start#1",
            "0 response#1 0ms",
            "0 error#1 ABORTED_ERROR",
            "100 response#1 100ms"
        ]
    );
    assert_eq!(harness.dispatched_at(), [0]);
}

#[tokio::test(start_paused = true)]
async fn the_rate_limit_ceiling_admits_without_any_headers() {
    let harness = Harness::new([
        answer(200, GRAPHQL_OK),
        answer(200, GRAPHQL_OK),
        answer(200, GRAPHQL_OK),
    ]);
    let ceiling = (
        "rateLimit",
        object(&[("maxRequests", 2.0), ("windowMs", 1_000.0)]),
    );
    for _ in 0..3 {
        harness
            .call(&graphql(), &options(std::slice::from_ref(&ceiling)))
            .await
            .unwrap();
    }
    // The third waits for the first to leave the window, which began as its answer's
    // millisecond ended.
    assert_eq!(harness.dispatched_at(), [0, 0, 1_001]);
}

/// At a cold start the first requests wait for their connections while later ones would go out
/// at once on sockets already open: the ceiling counts what is written, so no window of
/// `windowMs` sees more than `maxRequests` writes.
#[tokio::test(start_paused = true)]
async fn the_rate_limit_ceiling_counts_requests_when_written_not_when_admitted() {
    let cold = (0..3).map(|_| answer(200, GRAPHQL_OK).connecting(300).after(5));
    let warm = (0..6).map(|_| answer(200, GRAPHQL_OK).after(5));
    let harness = Harness::new(cold.chain(warm));
    let ceiling = (
        "rateLimit",
        object(&[("maxRequests", 3.0), ("windowMs", 1_000.0)]),
    );
    let options = options(std::slice::from_ref(&ceiling));
    let spec = graphql();
    let calls = (0..9).map(|_| harness.call(&spec, &options));
    for result in futures_util::future::join_all(calls).await {
        result.unwrap();
    }
    let written = harness.dispatched_at();
    assert_eq!(written.len(), 9);
    for (index, &start) in written.iter().enumerate() {
        let in_window = written[index..]
            .iter()
            .filter(|&&at| at < start + 1_000)
            .count();
        assert!(
            in_window <= 3,
            "{in_window} writes within 1000 ms of {start}: {written:?}"
        );
    }
}

impl Harness {
    fn decisions(&self) -> usize {
        let HostStore::Local(local) = &self.hosts else {
            unreachable!("the harness keeps its state locally")
        };
        local
            .decisions
            .swap(0, std::sync::atomic::Ordering::Relaxed)
    }
}

/// Breaker admission, the pacing plan and quota admission are one decision before the request;
/// quota release, breaker accounting and the pace deadline one after it (with shared state,
/// each decision is a Redis compare-and-set: 2 per request, where there were 5 or 6).
#[tokio::test(start_paused = true)]
async fn an_attempt_takes_one_host_state_decision_before_and_one_after() {
    let harness = Harness::new([
        answer(200, GRAPHQL_OK),
        answer(200, GRAPHQL_OK).quota_gone(5),
        answer(503, ""),
        answer(200, GRAPHQL_OK),
    ]);
    let options = options(&[retry(1, 100), breaker(5, 1_000)]);
    harness.call(&graphql(), &options).await.unwrap();
    assert_eq!(harness.decisions(), 2, "a success");
    harness.call(&graphql(), &options).await.unwrap();
    assert_eq!(
        harness.decisions(),
        2,
        "a success that sets a pace deadline"
    );
    harness.call(&graphql(), &options).await.unwrap();
    assert_eq!(
        harness.decisions(),
        3 + 2,
        "a paced attempt decides admission again after its wait, then a 503 and its retry"
    );
}

// Redirects (decisions D36): hops inside one attempt, below the hooks and the host's state

fn redirect(status: u16, location: &'static str) -> Step {
    answer(status, "").header("location", location)
}

#[tokio::test(start_paused = true)]
async fn a_redirect_chain_is_one_attempt_that_hooks_see_as_the_request_itself() {
    let harness = Harness::new([
        redirect(302, "/moved").after(10),
        redirect(307, "http://other.test:8080/final").after(10),
        answer(200, GRAPHQL_OK).after(10),
    ]);
    let completed = harness
        .call(&graphql(), &options(&[breaker(1, 1_000)]))
        .await
        .unwrap();
    assert_eq!(completed.result.as_deref(), Some(r#"{"id":1}"#));
    assert_eq!(
        harness.sent(),
        [
            "POST http://api.test/ timeout=30000",
            "GET http://api.test/moved timeout=29990",
            "GET http://other.test:8080/final timeout=29980",
        ]
    );
    assert_eq!(harness.events(), ["0 start#1", "30 response#1 30ms"]);
    let hosts: Vec<String> = harness
        .hosts
        .snapshot(harness.clock.now_ms())
        .into_iter()
        .map(|host| host.host.to_string())
        .collect();
    assert_eq!(
        hosts,
        ["api.test"],
        "the breaker and pacing stay with the request's host"
    );
}

#[tokio::test(start_paused = true)]
async fn the_redirect_past_max_redirects_fails_the_attempt_as_a_network_error() {
    let mut steps: Vec<Step> = (0..6).map(|_| redirect(301, "/again")).collect();
    steps.extend((0..3).map(|_| redirect(308, "/again")));
    steps.push(answer(200, GRAPHQL_OK));
    let harness = Harness::new(steps);
    let error = harness
        .call(&graphql(), &options(&[no_retry()]))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::Network);
    assert_eq!(
        error.reason.as_deref(),
        Some("more than 5 redirects (the last one a 301); raise maxRedirects to follow more")
    );
    assert_eq!(
        harness.sent().len(),
        6,
        "the sixth redirect is not followed"
    );

    let completed = harness
        .call(
            &graphql(),
            &options(&[("maxRedirects", OptValue::Number(3.0))]),
        )
        .await;
    assert!(
        completed.is_ok(),
        "three redirects are within maxRedirects: 3"
    );
    assert_eq!(harness.sent().len(), 4);
}

#[tokio::test(start_paused = true)]
async fn a_refused_redirect_is_retried_from_the_request_itself_like_a_network_failure() {
    let harness = Harness::new([
        redirect(302, "ftp://files.test/x"),
        redirect(302, "/fine"),
        answer(200, GRAPHQL_OK),
    ]);
    let completed = harness.call(&graphql(), &options(&[retry(1, 100)])).await;
    assert!(completed.is_ok());
    let sent = harness.sent();
    assert_eq!(sent.len(), 3);
    assert!(sent[1].starts_with("POST http://api.test/ "), "{sent:?}");
    let events = harness.events();
    assert_eq!(events[1], "0 response#1 0ms");
    assert_eq!(events[2], "0 retry#1 NETWORK_ERROR next=100ms");
}

#[tokio::test(start_paused = true)]
async fn max_redirects_zero_leaves_the_redirect_as_its_status_error() {
    let harness = Harness::new([redirect(302, "/moved")]);
    let options = options(&[no_retry(), ("maxRedirects", OptValue::Number(0.0))]);
    let error = harness
        .call(&rest(Method::GET), &options)
        .await
        .unwrap_err();
    assert_eq!(error.status, Some(302));
    assert_eq!(harness.sent().len(), 1);
}

#[tokio::test(start_paused = true)]
async fn the_attempts_timeout_covers_every_hop() {
    let harness = Harness::new([
        redirect(303, "/see").after(600),
        failure(TransportError::timeout(400)).after(400),
    ]);
    let options = options(&[no_retry(), ("timeout", OptValue::Number(1_000.0))]);
    let error = harness.call(&graphql(), &options).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout);
    assert_eq!(
        error.timeout_ms,
        Some(1_000),
        "the attempt's timeout, not the hop's rest"
    );
    assert_eq!(
        harness.sent(),
        [
            "POST http://api.test/ timeout=1000",
            "GET http://api.test/see timeout=400",
        ]
    );

    let harness = Harness::new([redirect(307, "/late").after(1_000)]);
    let error = harness.call(&graphql(), &options).await.unwrap_err();
    assert_eq!(error.code, ErrorCode::Timeout, "no time is left for a hop");
    assert_eq!(harness.sent().len(), 1);
}
