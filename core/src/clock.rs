//! Time, injected. The lifecycle reads the time only through a [`Clock`], so tests (and
//! partners' own tests) can move it.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of Unix time in whole seconds.
pub trait Clock: Send + Sync + fmt::Debug {
    /// Seconds since the Unix epoch.
    fn now(&self) -> u64;

    /// Milliseconds since the Unix epoch (the audit trail's `at`). The default is
    /// [`now`](Self::now) in whole seconds.
    fn now_millis(&self) -> u64 {
        self.now().saturating_mul(1000)
    }
}

/// The server's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> u64 {
        // A clock before 1970 is a broken host; treat it as the epoch rather than panic.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }

    fn now_millis(&self) -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// A clock that stands still until told to move; for tests.
#[derive(Debug, Default)]
pub struct ManualClock(AtomicU64);

impl ManualClock {
    /// A clock showing `unix_seconds`.
    pub fn new(unix_seconds: u64) -> Self {
        Self(AtomicU64::new(unix_seconds))
    }

    /// Set the time.
    pub fn set(&self, unix_seconds: u64) {
        self.0.store(unix_seconds, Ordering::SeqCst);
    }

    /// Move the time forward.
    pub fn advance(&self, seconds: u64) {
        self.0.fetch_add(seconds, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}
