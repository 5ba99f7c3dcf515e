//! The network-only reference: a bare reqwest client doing the `media` workload's HTTP with
//! nothing on top.
//!
//! It sends the 730-byte GraphQL POST the Node clients other than AniLink send, keeps
//! `concurrency` requests in flight through an untimed warm-up and then the timed phase, reads
//! each body as text and checks the status. No retries, no pacing, no breaker, no JSON parse,
//! no JavaScript: what is left is the cost of HTTP itself in Rust. (What a Node addon must do
//! at least is measured by the same-work floor, bench/napi-floor.)
//!
//! ```text
//! reqwest-floor <url> <concurrency> <amount> <warmup> [--threads N]
//! ```
//!
//! `amount` and `warmup` are a number of requests (`8000`) or of seconds (`10s`).
//!
//! `--threads 1` (default) runs on a single-threaded runtime, the cheapest setup. Prints one
//! JSON object with the same fields as the Node clients (see bench/clients/run-client.mjs).

use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use reqwest::header::CONTENT_TYPE;
use reqwest::{Client, Url};
use tokio::task::JoinSet;

/// The request every client sends, shared with the Node clients.
static REQUEST_BODY: &str = include_str!("../../workload/graphql-request.json");

const PROGRAM: &str = "reqwest-floor";
const USAGE: &str = "reqwest-floor <url> <concurrency> <amount> <warmup> [--threads N]";

/// How long a phase lasts: a number of requests, or a time during which new requests start.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Amount {
    Requests(usize),
    Seconds(f64),
}

impl Amount {
    fn parse(name: &str, value: String) -> Result<Self, String> {
        if let Some(seconds) = value.strip_suffix('s') {
            return match seconds.parse::<f64>() {
                Ok(s) if s.is_finite() && s >= 0.0 => Ok(Self::Seconds(s)),
                _ => Err(format!(
                    "{name}: expected seconds ≥ 0 such as 10s, got {value}"
                )),
            };
        }
        parse_number(name, Some(value), 0).map(Self::Requests)
    }

    fn is_empty(self) -> bool {
        matches!(self, Self::Requests(0)) || self == Self::Seconds(0.0)
    }

    fn to_json(self) -> String {
        match self {
            Self::Requests(n) => n.to_string(),
            Self::Seconds(s) => format!(r#""{s}s""#),
        }
    }
}

#[derive(Debug, PartialEq)]
struct Options {
    url: String,
    concurrency: usize,
    amount: Amount,
    warmup: Amount,
    threads: usize,
}

fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut positional = Vec::new();
    let mut threads = 1;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == "--threads" {
            threads = parse_number("--threads", args.next(), 1)?;
        } else {
            positional.push(arg);
        }
    }
    let [url, concurrency, amount, warmup] = <[String; 4]>::try_from(positional)
        .map_err(|got| format!("expected 4 arguments, got {}", got.len()))?;
    let amount = Amount::parse("amount", amount)?;
    if amount.is_empty() {
        return Err("amount must be at least 1 request or more than 0s".into());
    }
    let options = Options {
        url,
        concurrency: parse_number("concurrency", Some(concurrency), 1)?,
        amount,
        warmup: Amount::parse("warmup", warmup)?,
        threads,
    };
    Ok(options)
}

fn parse_number(name: &str, value: Option<String>, min: usize) -> Result<usize, String> {
    let value = value.ok_or_else(|| format!("{name} needs a value"))?;
    match value.parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(format!(
            "{name}: expected a whole number ≥ {min}, got {value}"
        )),
    }
}

/// What one run measured, in the units the Node clients report.
struct Report {
    options: Options,
    requests: usize,
    req_per_sec: f64,
    p50_us: f64,
    p99_us: f64,
    cpu_us_per_req: f64,
    peak_rss_bytes: u64,
}

impl Report {
    fn to_json(&self) -> String {
        let o = &self.options;
        format!(
            concat!(
                r#"{{"kind":"reqwest","concurrency":{},"requests":{},"amount":{},"warmup":{},"threads":{},"#,
                r#""connectionLimit":null,"reqPerSec":{:.1},"p50Us":{:.1},"p99Us":{:.1},"#,
                r#""cpuUsPerReq":{:.2},"peakRssBytes":{}}}"#
            ),
            o.concurrency,
            self.requests,
            o.amount.to_json(),
            o.warmup.to_json(),
            o.threads,
            self.req_per_sec,
            self.p50_us,
            self.p99_us,
            self.cpu_us_per_req,
            self.peak_rss_bytes,
        )
    }
}

fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => return proc_usage::usage_error(PROGRAM, &message, USAGE),
    };
    match proc_usage::run(PROGRAM, options.threads, measure(options)) {
        Ok(report) => {
            println!("{}", report.to_json());
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

async fn measure(options: Options) -> Result<Report, String> {
    let url =
        Url::parse(&options.url).map_err(|error| format!("bad url {}: {error}", options.url))?;
    let client = Client::builder()
        .build()
        .map_err(|error| describe(&error))?;
    if !options.warmup.is_empty() {
        run_phase(&client, &url, options.concurrency, options.warmup).await?;
    }

    let usage_before = proc_usage::current().map_err(|error| format!("getrusage: {error}"))?;
    let started = Instant::now();
    let mut latencies = run_phase(&client, &url, options.concurrency, options.amount).await?;
    let elapsed = started.elapsed();
    let usage_after = proc_usage::current().map_err(|error| format!("getrusage: {error}"))?;

    latencies.sort_unstable();
    let requests = latencies.len() as f64;
    Ok(Report {
        requests: latencies.len(),
        req_per_sec: requests / elapsed.as_secs_f64(),
        p50_us: micros(percentile(&latencies, 0.50)),
        p99_us: micros(percentile(&latencies, 0.99)),
        cpu_us_per_req: (usage_after.cpu_us - usage_before.cpu_us) as f64 / requests,
        peak_rss_bytes: usage_after.peak_rss_bytes,
        options,
    })
}

/// Runs requests with `concurrency` in flight for `amount` (a new one starts as soon as one
/// finishes, until the count is reached or the time is up; those in flight then finish) and
/// returns each one's latency (send until the body has been read).
async fn run_phase(
    client: &Client,
    url: &Url,
    concurrency: usize,
    amount: Amount,
) -> Result<Vec<Duration>, String> {
    let next_request = Arc::new(AtomicUsize::new(0));
    let deadline = match amount {
        Amount::Seconds(s) => Some(Instant::now() + Duration::from_secs_f64(s)),
        Amount::Requests(_) => None,
    };
    let more = move |next_request: &AtomicUsize| match (amount, deadline) {
        (_, Some(deadline)) => Instant::now() < deadline,
        (Amount::Requests(total), None) => next_request.fetch_add(1, Ordering::Relaxed) < total,
        (Amount::Seconds(_), None) => false,
    };
    let workers_wanted = match amount {
        Amount::Requests(total) => concurrency.min(total),
        Amount::Seconds(_) => concurrency,
    };
    let mut workers = JoinSet::new();
    for _ in 0..workers_wanted {
        let (client, url, next_request) = (client.clone(), url.clone(), next_request.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            while more(&next_request) {
                let started = Instant::now();
                send_one(&client, &url).await?;
                latencies.push(started.elapsed());
            }
            Ok::<_, String>(latencies)
        });
    }
    let mut latencies = Vec::new();
    while let Some(joined) = workers.join_next().await {
        latencies.extend(joined.map_err(|error| format!("worker failed: {error}"))??);
    }
    Ok(latencies)
}

async fn send_one(client: &Client, url: &Url) -> Result<(), String> {
    let response = client
        .post(url.clone())
        .header(CONTENT_TYPE, "application/json")
        .body(REQUEST_BODY)
        .send()
        .await
        .map_err(|error| describe(&error))?;
    let status = response.status();
    let body = response.text().await.map_err(|error| describe(&error))?;
    if !status.is_success() {
        return Err(format!("unexpected status {status}"));
    }
    if body.is_empty() {
        return Err("empty response body".into());
    }
    Ok(())
}

/// Nearest-rank percentile of sorted samples (the same rule as the Node clients).
fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (fraction * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn micros(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e6
}

/// reqwest's own message omits the cause ("error sending request"); the source chain has it.
fn describe(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut cause = error.source();
    while let Some(inner) = cause {
        text.push_str(": ");
        text.push_str(&inner.to_string());
        cause = inner.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        parse_options(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn reads_positional_arguments_and_threads() {
        let options = parse(&["http://127.0.0.1:1/", "32", "1000", "0", "--threads", "2"]);
        assert_eq!(
            options,
            Ok(Options {
                url: "http://127.0.0.1:1/".into(),
                concurrency: 32,
                amount: Amount::Requests(1000),
                warmup: Amount::Requests(0),
                threads: 2
            })
        );
    }

    #[test]
    fn reads_phases_in_seconds() {
        let options = parse(&["http://127.0.0.1:1/", "1", "10s", "2.5s"]).unwrap();
        assert_eq!(options.amount, Amount::Seconds(10.0));
        assert_eq!(options.warmup, Amount::Seconds(2.5));
        assert_eq!(options.amount.to_json(), r#""10s""#);
        assert!(parse(&["http://127.0.0.1:1/", "1", "0s", "0"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "1", "-1s", "0"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "1", "soons", "0"]).is_err());
    }

    #[test]
    fn rejects_missing_or_zero_counts() {
        assert!(parse(&["http://127.0.0.1:1/", "32", "1000"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "0", "1000", "10"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "1", "0", "10"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "1", "many", "10"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "1", "10", "10", "--threads"]).is_err());
    }

    #[test]
    fn percentile_uses_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        assert_eq!(percentile(&samples, 0.50), Duration::from_micros(50));
        assert_eq!(percentile(&samples, 0.99), Duration::from_micros(99));
        assert_eq!(percentile(&samples[..1], 0.99), Duration::from_micros(1));
        assert_eq!(percentile(&[], 0.5), Duration::ZERO);
    }
}
