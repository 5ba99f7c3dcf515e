//! The benchmark's HTTP server: as little work per request as HTTP/1.1 allows, so that the
//! clients, not the server, set the pace.
//!
//! Every `POST /` and every `GET` is answered with the same ~2 KB AniList-shaped JSON body,
//! `POST /custom` with the 0.1 KB answer to the benchmark's small custom query, both with
//! the rate-limit headers AniList sends, with a remaining count high enough that no client ever
//! paces. The request body is read in full, as a real server would.
//!
//! ```text
//! bench-server [--port N] [--threads N] [--hold-ms N] [--release-at N] [--control-stdin]
//!              [--tls-cert PEM --tls-key PEM [--tls-no-resumption]]
//! ```
//!
//! * `--threads 1` (default) runs on a single-threaded runtime: on a 2-core machine the other
//!   core is left to the client being measured.
//! * `--hold-ms N` delays every response by N ms.
//! * `--release-at N` (with `--hold-ms`) answers nothing until N requests are waiting, then
//!   all of them at once; `--hold-ms` becomes the longest any response waits. The memory
//!   scenario uses it so that every client really has its 10,000 requests in flight at one
//!   moment: with a fixed delay alone, a client that opens connections slowly has its first
//!   answers back before its last requests go out, and is measured with fewer in flight.
//! * `--control-stdin` makes stdin a control channel: the line `stats` is answered on stdout
//!   with `stats {json}` (connections accepted, requests served, CPU time, peak RSS, TLS
//!   handshakes completed and how many of them resumed a session); `pass N` lets the next N
//!   requests through a hold at once, without counting them (answered `pass N`): the memory
//!   scenario's warm-up call, which a client whose first call waits for its answer (AniLink
//!   while it has no quota reading, decision D39) needs before the batch; and the end of stdin
//!   stops the server, so it never outlives the process that started it.
//! * `--tls-cert` and `--tls-key` (PEM files: the certificate chain, and its key) serve HTTPS
//!   with rustls. The server keeps sessions and sends TLS 1.3 tickets, as real ones do, so a
//!   client may resume; `--tls-no-resumption` refuses that, every handshake is a full one. It
//!   still sends tickets (and forgets them), as every real server does after a full handshake
//!   (or one whose ticket keys have rotated does): the client's full handshake then does all a
//!   real one does, the tickets' processing included, not less.
//!
//! Prints `listening <port>` once the socket is bound.

use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty, Full};
use hyper::body::Incoming;
use hyper::header::{HeaderValue, CONTENT_TYPE};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::{TcpListener, TcpSocket};
use tokio::sync::Notify;
use tokio_rustls::rustls;
use tokio_rustls::TlsAcceptor;

/// The fixed response body, shared with the clients' fixtures.
static MEDIA_BODY: &str = include_str!("../../workload/media-response.json");
/// The answer to the `custom` workload's query (bench/clients/workload.mjs).
static CUSTOM_BODY: &str = include_str!("../../workload/custom-response.json");

/// Far above what any client sends in a window (some 3 million at 50,000 req/s), so neither
/// AniLink's pacing nor its quota-aware admission ever holds a request back.
const RATE_LIMIT: u32 = 100_000_000;
/// The quota's window, as AniList's: the headers count the requests served in it, and reset
/// points at its end.
const RATE_LIMIT_WINDOW_SECS: u64 = 60;

/// Accept queue length asked of the kernel (it caps it at `net.core.somaxconn`): the memory
/// scenario opens thousands of connections in one burst.
const LISTEN_BACKLOG: u32 = 16_384;

const PROGRAM: &str = "bench-server";
const USAGE: &str = "bench-server [--port N] [--threads N] [--hold-ms N] [--release-at N] [--control-stdin] [--tls-cert PEM --tls-key PEM [--tls-no-resumption]]";

static CONNECTIONS_ACCEPTED: AtomicU64 = AtomicU64::new(0);
static REQUESTS_SERVED: AtomicU64 = AtomicU64::new(0);
/// The current quota window's number (high 32 bits) and the requests served in it (low 32).
static WINDOW_COUNT: AtomicU64 = AtomicU64::new(0);
static TLS_HANDSHAKES: AtomicU64 = AtomicU64::new(0);
static TLS_RESUMED: AtomicU64 = AtomicU64::new(0);

#[derive(Debug, PartialEq)]
struct Options {
    port: u16,
    threads: usize,
    hold: Option<Duration>,
    release_at: Option<usize>,
    control_stdin: bool,
    tls: Option<TlsFiles>,
}

#[derive(Debug, PartialEq)]
struct TlsFiles {
    cert: PathBuf,
    key: PathBuf,
    resumption: bool,
}

fn parse_options(args: impl IntoIterator<Item = String>) -> Result<Options, String> {
    let mut options = Options {
        port: 0,
        threads: 1,
        hold: None,
        release_at: None,
        control_stdin: false,
        tls: None,
    };
    let (mut cert, mut key, mut resumption) = (None, None, true);
    let mut args = args.into_iter();
    while let Some(flag) = args.next() {
        if let "--tls-cert" | "--tls-key" = flag.as_str() {
            let path = args
                .next()
                .map(PathBuf::from)
                .ok_or_else(|| format!("{flag} needs a file"))?;
            *(if flag == "--tls-cert" {
                &mut cert
            } else {
                &mut key
            }) = Some(path);
            continue;
        }
        let mut value = |name: &str| {
            args.next()
                .ok_or_else(|| format!("{name} needs a value"))
                .and_then(|v| {
                    v.parse::<u64>()
                        .map_err(|_| format!("{name}: not a number: {v}"))
                })
        };
        match flag.as_str() {
            "--port" => {
                options.port =
                    u16::try_from(value("--port")?).map_err(|_| "--port: out of range")?
            }
            "--threads" => match value("--threads")? {
                0 => return Err("--threads must be at least 1".into()),
                n => options.threads = usize::try_from(n).map_err(|_| "--threads: out of range")?,
            },
            "--hold-ms" => {
                options.hold =
                    Some(Duration::from_millis(value("--hold-ms")?)).filter(|d| !d.is_zero())
            }
            "--release-at" => match value("--release-at")? {
                0 => return Err("--release-at must be at least 1".into()),
                n => {
                    options.release_at =
                        Some(usize::try_from(n).map_err(|_| "--release-at: out of range")?)
                }
            },
            "--control-stdin" => options.control_stdin = true,
            "--tls-no-resumption" => resumption = false,
            other => return Err(format!("unknown option {other}")),
        }
    }
    if options.release_at.is_some() && options.hold.is_none() {
        return Err("--release-at needs --hold-ms (the longest a response may wait)".into());
    }
    options.tls = match (cert, key) {
        (Some(cert), Some(key)) => Some(TlsFiles {
            cert,
            key,
            resumption,
        }),
        (None, None) if resumption => None,
        _ => return Err("TLS needs --tls-cert and --tls-key together".into()),
    };
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_options(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) => return proc_usage::usage_error(PROGRAM, &message, USAGE),
    };
    match proc_usage::run(PROGRAM, options.threads, serve(options)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

async fn serve(options: Options) -> io::Result<()> {
    let tls = options.tls.as_ref().map(tls_acceptor).transpose()?;
    let listener = bind(options.port)?;
    println!("listening {}", listener.local_addr()?.port());
    if options.control_stdin {
        tokio::spawn(answer_control_channel());
    }
    let hold = options.hold.map(|longest| Hold {
        longest,
        release_at: options.release_at,
    });
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(error) => {
                // Out of descriptors or a connection reset before accept: keep serving the
                // connections already open, and retry shortly rather than spin.
                eprintln!("{PROGRAM}: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        // Responses go out in one write; Nagle's algorithm would only add delay.
        if let Err(error) = stream.set_nodelay(true) {
            eprintln!("{PROGRAM}: TCP_NODELAY failed: {error}");
        }
        CONNECTIONS_ACCEPTED.fetch_add(1, Ordering::Relaxed);
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = service_fn(move |request| respond(request, hold));
            // A client closing or resetting its connection is normal at the end of a run.
            let Some(tls) = tls else {
                let _ = http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
                return;
            };
            let Ok(stream) = tls.accept(stream).await else {
                return;
            };
            TLS_HANDSHAKES.fetch_add(1, Ordering::Relaxed);
            if stream.get_ref().1.handshake_kind() == Some(rustls::HandshakeKind::Resumed) {
                TLS_RESUMED.fetch_add(1, Ordering::Relaxed);
            }
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The rustls server for `files`: sessions kept and TLS 1.3 tickets sent (rustls' defaults);
/// with resumption off, tickets still sent but never honoured.
fn tls_acceptor(files: &TlsFiles) -> io::Result<TlsAcceptor> {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let invalid = |what: &str, error: &dyn std::fmt::Display| {
        io::Error::new(io::ErrorKind::InvalidInput, format!("{what}: {error}"))
    };
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| invalid("--tls-cert", &e))?;
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| invalid("--tls-key", &e))?;
    let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .and_then(|builder| builder.with_no_client_auth().with_single_cert(certs, key))
    .map_err(|e| invalid("TLS configuration", &e))?;
    if !files.resumption {
        config.session_storage = Arc::new(ForgetfulSessions);
    }
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Session storage that takes every session (so the server issues its tickets) and finds none
/// (so no handshake resumes).
#[derive(Debug)]
struct ForgetfulSessions;

impl rustls::server::StoresServerSessions for ForgetfulSessions {
    fn put(&self, _: Vec<u8>, _: Vec<u8>) -> bool {
        true
    }

    fn get(&self, _: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn take(&self, _: &[u8]) -> Option<Vec<u8>> {
        None
    }

    fn can_cache(&self) -> bool {
        true
    }
}

fn bind(port: u16) -> io::Result<TcpListener> {
    let socket = TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))?;
    socket.listen(LISTEN_BACKLOG)
}

/// How long a response waits before it is written.
#[derive(Clone, Copy)]
struct Hold {
    longest: Duration,
    release_at: Option<usize>,
}

/// Requests held now, until `release_at` of them are; reset when they are released.
static HELD: Mutex<usize> = Mutex::new(0);
static RELEASE: Notify = Notify::const_new();
/// Requests still to let through a hold at once (the control channel's `pass N`).
static PASS_UNHELD: AtomicUsize = AtomicUsize::new(0);

/// Takes one of the requests `pass N` lets through; false when none is left.
fn take_pass() -> bool {
    PASS_UNHELD
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
            left.checked_sub(1)
        })
        .is_ok()
}

impl Hold {
    async fn wait(self) {
        if take_pass() {
            return;
        }
        let Some(release_at) = self.release_at else {
            return tokio::time::sleep(self.longest).await;
        };
        // Registered before counting, so a release by the next request is never missed.
        let released = RELEASE.notified();
        tokio::pin!(released);
        released.as_mut().enable();
        {
            let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
            *held += 1;
            if *held >= release_at {
                *held = 0;
                RELEASE.notify_waiters();
                return;
            }
        }
        if tokio::time::timeout(self.longest, released).await.is_err() {
            let mut held = HELD.lock().unwrap_or_else(PoisonError::into_inner);
            *held = held.saturating_sub(1);
        }
    }
}

type ResponseBody = http_body_util::Either<Full<Bytes>, Empty<Bytes>>;

async fn respond(
    request: Request<Incoming>,
    hold: Option<Hold>,
) -> Result<Response<ResponseBody>, hyper::Error> {
    let body = match (request.method(), request.uri().path()) {
        (&Method::GET, _) | (&Method::POST, "/") => Some(MEDIA_BODY),
        (&Method::POST, "/custom") => Some(CUSTOM_BODY),
        _ => None,
    };
    request.into_body().collect().await?;
    REQUESTS_SERVED.fetch_add(1, Ordering::Relaxed);
    if let Some(hold) = hold {
        hold.wait().await;
    }
    let Some(body) = body else {
        let mut response = Response::new(ResponseBody::Right(Empty::new()));
        *response.status_mut() = StatusCode::NOT_FOUND;
        return Ok(response);
    };
    let mut response = Response::new(ResponseBody::Left(Full::new(Bytes::from_static(
        body.as_bytes(),
    ))));
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    let (served, reset) = count_in_window();
    headers.insert("x-ratelimit-limit", HeaderValue::from(RATE_LIMIT));
    headers.insert(
        "x-ratelimit-remaining",
        HeaderValue::from(RATE_LIMIT.saturating_sub(served)),
    );
    headers.insert("x-ratelimit-reset", HeaderValue::from(reset));
    Ok(response)
}

/// Counts this request in the current window: how many the window has served with it, and
/// the window's end (epoch seconds). A count that fell behind the requests served, as static
/// headers do, would keep AniLink from ever proving the announced limit above AniList's
/// degraded 30 (decision D42), and its requests past 30 would go one at a time.
fn count_in_window() -> (u32, u64) {
    // A clock before 1970 only shifts a window nobody paces on.
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let window = now / RATE_LIMIT_WINDOW_SECS;
    let tag = (window & u64::from(u32::MAX)) << 32;
    let mut current = WINDOW_COUNT.load(Ordering::Relaxed);
    loop {
        // The low 32 bits are the count (the cast keeps exactly those).
        let count = if current & !u64::from(u32::MAX) == tag {
            (current as u32).saturating_add(1)
        } else {
            1
        };
        match WINDOW_COUNT.compare_exchange_weak(
            current,
            tag | u64::from(count),
            Ordering::Relaxed,
            Ordering::Relaxed,
        ) {
            Ok(_) => return (count, (window + 1) * RATE_LIMIT_WINDOW_SECS),
            Err(seen) => current = seen,
        }
    }
}

/// Serves `stats` and `pass N` from stdin and stops the process when stdin ends.
async fn answer_control_channel() {
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    loop {
        match lines.next_line().await {
            Ok(Some(line)) if line.trim() == "stats" => println!("stats {}", stats_json()),
            Ok(Some(line)) => match line.trim().strip_prefix("pass ").map(str::parse::<usize>) {
                Some(Ok(n)) => {
                    PASS_UNHELD.store(n, Ordering::Relaxed);
                    println!("pass {n}");
                }
                _ => eprintln!("{PROGRAM}: unknown control command {line:?}"),
            },
            Ok(None) | Err(_) => std::process::exit(0),
        }
    }
}

fn stats_json() -> String {
    let (cpu_us, peak_rss_bytes) = match proc_usage::current() {
        Ok(usage) => (usage.cpu_us.to_string(), usage.peak_rss_bytes.to_string()),
        Err(_) => ("null".into(), "null".into()),
    };
    format!(
        r#"{{"connections":{},"requests":{},"cpuUs":{cpu_us},"peakRssBytes":{peak_rss_bytes},"tlsHandshakes":{},"tlsResumed":{}}}"#,
        CONNECTIONS_ACCEPTED.load(Ordering::Relaxed),
        REQUESTS_SERVED.load(Ordering::Relaxed),
        TLS_HANDSHAKES.load(Ordering::Relaxed),
        TLS_RESUMED.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Options, String> {
        parse_options(args.iter().map(|a| a.to_string()))
    }

    #[test]
    fn the_quota_headers_count_the_requests_of_the_window() {
        let (first, reset) = count_in_window();
        let (second, reset_after) = count_in_window();
        // A window that ended between the two calls starts its count again.
        let expected = if reset_after == reset { first + 1 } else { 1 };
        assert_eq!(second, expected);
        assert_eq!(reset_after % RATE_LIMIT_WINDOW_SECS, 0);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert!(reset_after > now && reset_after <= now + RATE_LIMIT_WINDOW_SECS);
    }

    #[test]
    fn defaults_to_one_thread_and_no_hold() {
        assert_eq!(
            parse(&[]),
            Ok(Options {
                port: 0,
                threads: 1,
                hold: None,
                release_at: None,
                control_stdin: false,
                tls: None
            })
        );
    }

    #[test]
    fn reads_every_option() {
        let options = parse(&[
            "--port",
            "8080",
            "--threads",
            "2",
            "--hold-ms",
            "1000",
            "--release-at",
            "10000",
            "--control-stdin",
            "--tls-cert",
            "c.pem",
            "--tls-key",
            "k.pem",
            "--tls-no-resumption",
        ]);
        assert_eq!(
            options,
            Ok(Options {
                port: 8080,
                threads: 2,
                hold: Some(Duration::from_secs(1)),
                release_at: Some(10_000),
                control_stdin: true,
                tls: Some(TlsFiles {
                    cert: "c.pem".into(),
                    key: "k.pem".into(),
                    resumption: false
                })
            })
        );
    }

    #[test]
    fn rejects_bad_values() {
        assert!(parse(&["--threads", "0"]).is_err());
        assert!(parse(&["--port", "70000"]).is_err());
        assert!(parse(&["--hold-ms"]).is_err());
        assert!(parse(&["--hold-ms", "soon"]).is_err());
        assert!(parse(&["--verbose"]).is_err());
        assert!(parse(&["--hold-ms", "1000", "--release-at", "0"]).is_err());
        assert!(parse(&["--release-at", "10"]).is_err());
        assert!(parse(&["--tls-cert", "c.pem"]).is_err());
        assert!(parse(&["--tls-key"]).is_err());
        assert!(parse(&["--tls-no-resumption"]).is_err());
    }

    /// The hold's counters are the process's: tests of it take turns.
    static HOLD_TESTS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

    #[tokio::test(start_paused = true)]
    async fn held_responses_go_out_together_once_enough_wait() {
        let _turn = HOLD_TESTS.lock().await;
        let hold = Hold {
            longest: Duration::from_secs(30),
            release_at: Some(3),
        };
        let started = tokio::time::Instant::now();
        let first_two = tokio::spawn(async move { tokio::join!(hold.wait(), hold.wait()) });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(
            !first_two.is_finished(),
            "released before the third arrived"
        );
        hold.wait().await;
        first_two.await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(5));
        // A lone request afterwards waits the longest hold, then goes.
        let alone = tokio::time::Instant::now();
        hold.wait().await;
        assert_eq!(alone.elapsed(), Duration::from_secs(30));
    }

    #[tokio::test(start_paused = true)]
    async fn a_passed_request_is_answered_at_once_and_not_counted() {
        let _turn = HOLD_TESTS.lock().await;
        let hold = Hold {
            longest: Duration::from_secs(30),
            release_at: Some(2),
        };
        PASS_UNHELD.store(1, Ordering::Relaxed);
        let started = tokio::time::Instant::now();
        hold.wait().await;
        assert_eq!(
            started.elapsed(),
            Duration::ZERO,
            "the passed request was held"
        );
        // The two after it are held until both wait: the passed one did not count.
        let first = tokio::spawn(async move { hold.wait().await });
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!first.is_finished(), "released before the second arrived");
        hold.wait().await;
        first.await.unwrap();
        assert_eq!(started.elapsed(), Duration::from_secs(5));
    }

    #[test]
    fn body_is_an_anilist_media_envelope_of_about_2_kb() {
        assert!(MEDIA_BODY.starts_with(r#"{"data":{"Media":{"id":1,"#));
        assert!(
            (1800..2300).contains(&MEDIA_BODY.len()),
            "body is {} bytes",
            MEDIA_BODY.len()
        );
    }

    #[test]
    fn custom_body_answers_the_small_query_with_the_same_media() {
        assert!(CUSTOM_BODY.starts_with(r#"{"data":{"Media":{"id":1,"#));
        assert!(
            CUSTOM_BODY.len() < 200,
            "body is {} bytes",
            CUSTOM_BODY.len()
        );
    }
}
