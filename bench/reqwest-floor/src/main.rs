//! The floor: a bare reqwest client doing the benchmark's workload with nothing on top.
//!
//! It sends the same GraphQL POST as the Node clients, keeps `concurrency` requests in flight
//! until `requests` have completed (after `warmup` untimed ones), reads each body as text and
//! checks the status. No retries, no pacing, no breaker, no JavaScript: what is left is the
//! cost of HTTP itself in Rust, the lower bound for AniLink's CPU time per request.
//!
//! ```text
//! reqwest-floor <url> <concurrency> <requests> <warmup> [--threads N]
//! ```
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
const USAGE: &str = "reqwest-floor <url> <concurrency> <requests> <warmup> [--threads N]";

#[derive(Debug, PartialEq)]
struct Options {
    url: String,
    concurrency: usize,
    requests: usize,
    warmup: usize,
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
    let [url, concurrency, requests, warmup] = <[String; 4]>::try_from(positional)
        .map_err(|got| format!("expected 4 arguments, got {}", got.len()))?;
    let options = Options {
        url,
        concurrency: parse_number("concurrency", Some(concurrency), 1)?,
        requests: parse_number("requests", Some(requests), 1)?,
        warmup: parse_number("warmup", Some(warmup), 0)?,
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
                r#"{{"kind":"reqwest","concurrency":{},"requests":{},"warmup":{},"threads":{},"#,
                r#""connectionLimit":null,"reqPerSec":{:.1},"p50Us":{:.1},"p99Us":{:.1},"#,
                r#""cpuUsPerReq":{:.2},"peakRssBytes":{}}}"#
            ),
            o.concurrency,
            o.requests,
            o.warmup,
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
    run_phase(&client, &url, options.concurrency, options.warmup).await?;

    let usage_before = proc_usage::current().map_err(|error| format!("getrusage: {error}"))?;
    let started = Instant::now();
    let mut latencies = run_phase(&client, &url, options.concurrency, options.requests).await?;
    let elapsed = started.elapsed();
    let usage_after = proc_usage::current().map_err(|error| format!("getrusage: {error}"))?;

    latencies.sort_unstable();
    let requests = latencies.len() as f64;
    Ok(Report {
        req_per_sec: requests / elapsed.as_secs_f64(),
        p50_us: micros(percentile(&latencies, 0.50)),
        p99_us: micros(percentile(&latencies, 0.99)),
        cpu_us_per_req: (usage_after.cpu_us - usage_before.cpu_us) as f64 / requests,
        peak_rss_bytes: usage_after.peak_rss_bytes,
        options,
    })
}

/// Completes `total` requests with at most `concurrency` in flight and returns each one's
/// latency (send until the body has been read).
async fn run_phase(
    client: &Client,
    url: &Url,
    concurrency: usize,
    total: usize,
) -> Result<Vec<Duration>, String> {
    let next_request = Arc::new(AtomicUsize::new(0));
    let mut workers = JoinSet::new();
    for _ in 0..concurrency.min(total) {
        let (client, url, next_request) = (client.clone(), url.clone(), next_request.clone());
        workers.spawn(async move {
            let mut latencies = Vec::new();
            while next_request.fetch_add(1, Ordering::Relaxed) < total {
                let started = Instant::now();
                send_one(&client, &url).await?;
                latencies.push(started.elapsed());
            }
            Ok::<_, String>(latencies)
        });
    }
    let mut latencies = Vec::with_capacity(total);
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
                requests: 1000,
                warmup: 0,
                threads: 2
            })
        );
    }

    #[test]
    fn rejects_missing_or_zero_counts() {
        assert!(parse(&["http://127.0.0.1:1/", "32", "1000"]).is_err());
        assert!(parse(&["http://127.0.0.1:1/", "0", "1000", "10"]).is_err());
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
