//! The session's clock: the system's, or a fixed "now" set by `--now` or `:now DATE`. The
//! store reads it on every question, so `:now` takes effect at once.

use crate::render::time;
use memtree::{Clock, SystemClock};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Shared by the session and the store it opened (a clone each).
#[derive(Debug, Clone)]
pub struct SessionClock(Arc<AtomicI64>);

/// The value that means "no fixed now: the system clock".
const SYSTEM_TIME: i64 = i64::MIN;

impl SessionClock {
    pub fn new(fixed: Option<i64>) -> Self {
        SessionClock(Arc::new(AtomicI64::new(fixed.unwrap_or(SYSTEM_TIME))))
    }

    pub fn set(&self, fixed: Option<i64>) {
        self.0.store(fixed.unwrap_or(SYSTEM_TIME), Ordering::SeqCst);
    }

    pub fn fixed(&self) -> Option<i64> {
        Some(self.0.load(Ordering::SeqCst)).filter(|&ms| ms != SYSTEM_TIME)
    }

    /// `now is 2023-05-26T23:59:59Z (fixed; …)`: what `:now` says.
    pub fn said(&self) -> String {
        let ms = self.now_ms();
        let now = time::rfc3339(ms, chrono::SecondsFormat::Secs).unwrap_or_else(|| ms.to_string());
        match self.fixed() {
            Some(_) => format!("now is {now} (fixed; `:now system` for the wall clock)"),
            None => format!("now is {now} (the system clock)"),
        }
    }
}

impl Clock for SessionClock {
    fn now_ms(&self) -> i64 {
        self.fixed().unwrap_or_else(|| SystemClock.now_ms())
    }
}
