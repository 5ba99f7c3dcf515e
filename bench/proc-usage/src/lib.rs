//! What the benchmark binaries measure about their own process.
//!
//! Both the server and the reqwest floor client report CPU time and peak RSS the same way the
//! Node clients do (`getrusage(RUSAGE_SELF)`: every thread of the process counts), so their
//! figures compare directly with `process.cpuUsage()` and `process.resourceUsage().maxRSS`.

use std::io;
use std::mem::MaybeUninit;

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
pub fn raise_open_file_limit() -> io::Result<u64> {
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
}
