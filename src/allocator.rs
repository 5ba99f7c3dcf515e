//! What the process's allocator holds, for tests that look for leaks: the resident set is too
//! coarse for that, since glibc keeps freed memory resident (the soak measured 10–28 MB of
//! free arena pages between two halves of a run whose in-use bytes moved by under 2 MB).

/// Bytes currently allocated through `malloc`, by every thread (the addon, Node and V8 alike),
/// or `None` where the C library cannot say.
pub fn heap_in_use() -> Option<u64> {
    imp::heap_in_use()
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod imp {
    use std::sync::OnceLock;

    type MallInfo2 = unsafe extern "C" fn() -> libc::mallinfo2;

    /// `mallinfo2` came with glibc 2.33, after the 2.17 the binary is built against, so it is
    /// looked up when first asked for rather than linked.
    fn mallinfo2() -> Option<MallInfo2> {
        static FOUND: OnceLock<Option<MallInfo2>> = OnceLock::new();
        *FOUND.get_or_init(|| {
            // SAFETY: a NUL-terminated name; the symbol, when present, has this signature.
            let symbol = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"mallinfo2".as_ptr()) };
            (!symbol.is_null())
                .then(|| unsafe { std::mem::transmute::<*mut libc::c_void, MallInfo2>(symbol) })
        })
    }

    pub fn heap_in_use() -> Option<u64> {
        // SAFETY: `mallinfo2` takes no arguments and only reads the allocator's statistics.
        let info = unsafe { mallinfo2()?() };
        // Chunks in use in the arenas, plus the blocks malloc mapped on their own.
        Some((info.uordblks + info.hblkhd) as u64)
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
mod imp {
    pub fn heap_in_use() -> Option<u64> {
        None
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::heap_in_use;

    #[test]
    fn an_allocation_held_shows_in_the_heap_in_use_and_its_release_too() {
        const SIZE: u64 = 8 << 20;
        const SLACK: u64 = 1 << 20;
        // Other tests allocate on other threads of this process meanwhile, so one window can
        // be off by more than the slack; an allocator that did not count the block would be
        // off in every one of them.
        let exact_once = (0..20).any(|_| {
            let before = heap_in_use().expect("glibc 2.33 or later");
            let held = vec![1u8; SIZE as usize];
            let during = heap_in_use().unwrap();
            drop(std::hint::black_box(held));
            let after = heap_in_use().unwrap();
            during.abs_diff(before + SIZE) <= SLACK && (after + SIZE).abs_diff(during) <= SLACK
        });
        assert!(
            exact_once,
            "an 8 MB block never showed as held and then released"
        );
    }
}
