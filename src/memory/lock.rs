//! The store's writer lock: an OS file lock on `<store>/writer.lock`, taken for the length of
//! one write and waited for (bounded) when another handle or process is writing. Between
//! writes an open `Memory` holds nothing, so the assistant's server and the user's import take
//! turns instead of refusing each other.

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// File name of the writer lock inside a store directory.
const LOCK_FILE: &str = "writer.lock";

/// Shortest and longest pause between two attempts: short enough that a write that waited
/// starts soon after the other one ends, long enough not to spin on a long import.
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const LONGEST_PAUSE: Duration = Duration::from_millis(50);

/// The writer lock, held until dropped (closing the file releases the OS lock, also when the
/// process dies: a killed writer never leaves the store locked).
#[derive(Debug)]
pub(crate) struct WriteGuard {
    _file: File,
}

/// Take the writer lock of the store in `dir`, waiting up to `timeout` for another writer
/// to finish; after that, [`Error::Locked`] with the time waited.
pub(crate) fn acquire(dir: &Path, timeout: Duration) -> Result<WriteGuard> {
    let path = dir.join(LOCK_FILE);
    // Never truncated or written: only its lock matters, and the file stays for the next write.
    let file =
        OpenOptions::new().create(true).truncate(false).write(true).open(&path).map_err(|e| Error::io(&path, e))?;
    let start = Instant::now();
    let mut pause = FIRST_PAUSE;
    loop {
        // `try_lock` in a loop rather than a blocking `lock`: std has no lock with a timeout,
        // and a bounded wait is the promise.
        match file.try_lock() {
            Ok(()) => return Ok(WriteGuard { _file: file }),
            Err(TryLockError::WouldBlock) => {}
            Err(TryLockError::Error(e)) => return Err(Error::io(&path, e)),
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Err(locked(dir, waited));
        }
        std::thread::sleep(pause.min(timeout - waited));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

fn locked(dir: &Path, waited: Duration) -> Error {
    Error::Locked { path: PathBuf::from(dir), waited_ms: u64::try_from(waited.as_millis()).unwrap_or(u64::MAX) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_writer_waits_then_gets_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path(), Duration::ZERO).unwrap();
        let err = acquire(dir.path(), Duration::from_millis(60)).unwrap_err();
        match &err {
            Error::Locked { waited_ms, .. } => assert!(*waited_ms >= 60, "{err}"),
            other => panic!("expected Locked, got {other:?}"),
        }
        assert!(err.to_string().contains("locked by another writer"), "{err}");
        drop(held);
        // Released on drop: the next writer gets it at once.
        acquire(dir.path(), Duration::ZERO).unwrap();
    }

    #[test]
    fn a_waiting_writer_gets_the_lock_when_the_holder_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let held = acquire(dir.path(), Duration::ZERO).unwrap();
        let path = dir.path().to_path_buf();
        let waiter = std::thread::spawn(move || acquire(&path, Duration::from_secs(20)).map(drop));
        std::thread::sleep(Duration::from_millis(100));
        assert!(!waiter.is_finished(), "the waiter must wait while the lock is held");
        drop(held);
        waiter.join().unwrap().unwrap();
    }
}
