//! Wall clocks: the system clock, and a manual one so tests of age-based sealing are exact
//! (and the CLI's `--now` can date a historical store); `parse_now` reads a `--now` value.

use crate::error::{Error, Result};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// A source of "now" in epoch milliseconds.
pub trait Clock: Send + Sync {
    /// Current time, epoch ms.
    fn now_ms(&self) -> i64;
}

/// The operating system's clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        chrono::Utc::now().timestamp_millis()
    }
}

/// A clock that moves only when told to (tests, replays). Clones share the same time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock(Arc<AtomicI64>);

impl ManualClock {
    /// A clock reading `ms`.
    pub fn new(ms: i64) -> Self {
        ManualClock(Arc::new(AtomicI64::new(ms)))
    }

    /// Set the time.
    pub fn set(&self, ms: i64) {
        self.0.store(ms, Ordering::SeqCst);
    }

    /// Move the time forward by `ms`.
    pub fn advance(&self, ms: i64) {
        self.0.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// A "now" as a user writes it (`--now`): an RFC 3339 instant (`2023-05-26T12:00:00Z`) or a
/// day (`2023-05-26`, read as its last millisecond, UTC, so everything dated that day is
/// in the past and "today" is that day). Returns epoch ms.
///
/// # Errors
/// [`Error::InvalidArgument`] naming the accepted forms.
pub fn parse_now(s: &str) -> Result<i64> {
    let s = s.trim();
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d")
        && let Some(end) = d.and_hms_milli_opt(23, 59, 59, 999)
    {
        return Ok(end.and_utc().timestamp_millis());
    }
    chrono::DateTime::parse_from_rfc3339(s).map(|t| t.timestamp_millis()).map_err(|_| {
        Error::invalid(
            "now",
            format!(
                "`{}` is not a date: use YYYY-MM-DD or an RFC 3339 time (2023-05-26T12:00:00Z)",
                crate::text::clip(s, 40)
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::parse_now;

    #[test]
    fn now_is_a_day_or_an_instant() {
        assert_eq!(parse_now("2023-05-26").unwrap(), 1_685_145_599_999); // 2023-05-26T23:59:59.999Z
        assert_eq!(parse_now("2023-05-26T12:00:00+02:00").unwrap(), 1_685_095_200_000); // 10:00Z
        for bad in ["yesterday", "2023-02-30", "26/05/2023", ""] {
            let e = parse_now(bad).unwrap_err().to_string();
            assert!(e.starts_with("now: ") && e.contains("YYYY-MM-DD"), "{bad}: {e}");
        }
    }
}
