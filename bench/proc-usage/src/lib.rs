//! What the benchmark binaries measure about their own process, and how they start.
//!
//! Both the server and the reqwest floor client report CPU time and peak RSS the same way the
//! Node clients do (`getrusage(RUSAGE_SELF)`: every thread of the process counts), so their
//! figures compare directly with `process.cpuUsage()` and `process.resourceUsage().maxRSS`.
//! They also start the same way: [`usage_error`] for a bad command line, [`run`] for the rest.

use std::fmt::Display;
use std::future::Future;
use std::io;
use std::mem::MaybeUninit;
use std::process::ExitCode;

/// CPU time and peak resident set size of the whole process, all threads included.
#[derive(Clone, Copy, Debug)]
pub struct Usage {
    /// User + system CPU time, in microseconds.
    pub cpu_us: u64,
    /// Peak resident set size since the process started, in bytes.
    pub peak_rss_bytes: u64,
}

/// Reads this process's resource usage.
pub fn current() -> io::Result<Usage> {
    let mut raw = MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage fills the struct it is given and returns 0 on success.
    let usage = unsafe {
        if libc::getrusage(libc::RUSAGE_SELF, raw.as_mut_ptr()) != 0 {
            return Err(io::Error::last_os_error());
        }
        raw.assume_init()
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Ok(Usage {
        cpu_us: micros(usage.ru_utime) + micros(usage.ru_stime),
        // Linux reports ru_maxrss in kilobytes.
        peak_rss_bytes: usage.ru_maxrss as u64 * 1024,
    })
}

/// Raises the soft open-file limit to the hard limit.
///
/// The memory scenario keeps 10,000 connections open at once, far above the usual soft limit
/// of 1,024 descriptors. Node raises its own limit at startup; the Rust binaries must do it
/// themselves. Returns the soft limit now in force.
fn raise_open_file_limit() -> io::Result<u64> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit read and write the struct they are given.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return Err(io::Error::last_os_error());
        }
        if limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
    }
    Ok(limit.rlim_cur)
}

/// Reports a bad command line under the binary's name, with its usage line; the exit code is 2.
pub fn usage_error(program: &str, message: &str, usage: &str) -> ExitCode {
    eprintln!("{program}: {message}\nusage: {usage}");
    ExitCode::from(2)
}

/// Runs a binary's `work` to completion after raising the open-file limit, on a runtime with
/// `threads` worker threads: `threads == 1` gets a current-thread runtime, the cheapest setup,
/// which leaves the other core of a 2-core machine to the process being measured.
///
/// A failure (of the runtime or of `work`) is reported on stderr under the binary's name and
/// becomes `ExitCode::FAILURE`. A limit that cannot be raised is only reported: the binaries
/// still work, up to the old limit.
pub fn run<T, E: Display>(
    program: &str,
    threads: usize,
    work: impl Future<Output = Result<T, E>>,
) -> Result<T, ExitCode> {
    if let Err(error) = raise_open_file_limit() {
        eprintln!("{program}: cannot raise the open-file limit: {error}");
    }
    let runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    };
    let outcome = match runtime {
        Ok(runtime) => runtime.block_on(work).map_err(|error| error.to_string()),
        Err(error) => Err(format!("cannot start the runtime: {error}")),
    };
    outcome.map_err(|message| {
        eprintln!("{program}: {message}");
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let before = current().expect("getrusage");
        let mut x = 0u64;
        for i in 0..50_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        std::hint::black_box(x);
        let after = current().expect("getrusage");
        assert!(after.cpu_us > before.cpu_us);
        assert!(
            after.peak_rss_bytes > 1024 * 1024,
            "a running process uses more than 1 MiB"
        );
    }

    #[test]
    fn open_file_limit_is_at_least_the_default() {
        assert!(raise_open_file_limit().expect("rlimit") >= 256);
    }

    #[test]
    fn run_hands_back_what_the_work_returns_on_one_or_more_threads() {
        for threads in [1, 2] {
            let workers = run("test", threads, async {
                Ok::<_, String>(tokio::runtime::Handle::current().metrics().num_workers())
            });
            assert_eq!(workers, Ok(threads));
        }
    }

    #[test]
    fn run_turns_a_failure_into_the_failure_exit_code() {
        let outcome = run("test", 1, async { Err::<(), _>("the work failed") });
        assert_eq!(outcome, Err(ExitCode::FAILURE));
    }

    #[test]
    fn a_usage_error_exits_with_2() {
        assert_eq!(
            usage_error("test", "bad", "test [--flag]"),
            ExitCode::from(2)
        );
    }
}
