//! Randomness behind a trait, so jitter and stagger are testable with a fixed seed.

use std::sync::Mutex;

/// The one random decision the transport makes: a uniform integer in `[0, max]`.
pub trait RandomSource: Send + Sync {
    fn below_inclusive(&self, max: u64) -> u64;
}

/// Production source: a fast thread-local generator, seeded from the OS.
#[derive(Debug, Default, Clone, Copy)]
pub struct ThreadRandom;

impl RandomSource for ThreadRandom {
    fn below_inclusive(&self, max: u64) -> u64 {
        fastrand::u64(0..=max)
    }
}

/// Deterministic source for tests: the same seed gives the same sequence.
#[derive(Debug)]
pub struct SeededRandom(Mutex<fastrand::Rng>);

impl SeededRandom {
    pub fn new(seed: u64) -> Self {
        Self(Mutex::new(fastrand::Rng::with_seed(seed)))
    }
}

impl RandomSource for SeededRandom {
    fn below_inclusive(&self, max: u64) -> u64 {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .u64(0..=max)
    }
}
