//! The driver's tokio runtime and the epoll descriptor of its reactor, which libuv watches so
//! that a readable socket wakes the JavaScript thread.

use std::os::raw::c_int;

/// Socket events a pass takes from the reactor (tokio's default is 1,024): when thousands of
/// responses arrive together, smaller passes hand them to JavaScript in smaller batches, as
/// they are read. Peak RSS with 10,000 answered at once: 340 MiB at 1,024, 333 at 128, 332
/// at 32; CPU per request at 256 in flight unchanged.
const IO_EVENTS_PER_PASS: usize = 128;

/// A current-thread runtime and its reactor's epoll descriptor. tokio does not expose the
/// descriptor, so it is found in `/proc/self/fd` as the epoll that building the runtime
/// created; mio duplicates it for its registry, so several new ones are fine as long as
/// they list the same registrations (any other epoll made meanwhile, by another thread,
/// makes this fail, and calls stay on the worker).
pub(super) fn runtime_and_reactor() -> std::result::Result<(tokio::runtime::Runtime, c_int), String>
{
    let before = eventpoll_fds()?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .max_io_events_per_tick(IO_EVENTS_PER_PASS)
        .build()
        .map_err(|e| format!("building the runtime failed: {e}"))?;
    let created: Vec<c_int> = eventpoll_fds()?
        .into_iter()
        .filter(|fd| !before.contains(fd))
        .collect();
    let registrations: Vec<_> = created.iter().map(|fd| registrations(*fd)).collect();
    match created.first() {
        Some(&reactor) if registrations.windows(2).all(|pair| pair[0] == pair[1]) => {
            Ok((runtime, reactor))
        }
        _ => Err(format!(
            "expected the runtime to create one epoll, found {} new descriptors that differ",
            created.len()
        )),
    }
}

fn eventpoll_fds() -> std::result::Result<Vec<c_int>, String> {
    let entries = std::fs::read_dir("/proc/self/fd").map_err(|e| format!("/proc/self/fd: {e}"))?;
    Ok(entries
        .flatten()
        .filter(|entry| {
            std::fs::read_link(entry.path())
                .is_ok_and(|target| target.as_os_str() == "anon_inode:[eventpoll]")
        })
        .filter_map(|entry| entry.file_name().to_str()?.parse().ok())
        .collect())
}

/// The descriptors an epoll watches (its `tfd:` lines in `/proc/self/fdinfo`).
fn registrations(fd: c_int) -> Vec<String> {
    std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .unwrap_or_default()
        .lines()
        .filter(|line| line.starts_with("tfd:"))
        .map(str::to_string)
        .collect()
}
