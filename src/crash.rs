//! Kill points for the crash tests: named places in the write path where a test can have
//! the process SIGKILL itself, to prove that a crash there loses nothing and shows nothing
//! half-done.
//!
//! Only a build with the `failpoints` feature (which `src/tests/crash.rs` alone turns on) can be
//! killed: there `MEMTREE_CRASH_AT=<point>[:<n>]` kills the process the `n`-th time (default:
//! the first) it reaches `<point>`, the variable read once. In every other build — the
//! binary, an app embedding the library — a point is an empty inline function and the
//! variable's name is not in the program: a host's environment cannot kill it. A kill point
//! never changes what the code does otherwise.
//!
//! Our own module rather than the `fail` crate (tantivy's choice): a crash here must be a
//! SIGKILL of the process, which `fail` has no action for, and the test sweeps a named list
//! of points with a visit count, which this file states in a few lines.

#[cfg(feature = "failpoints")]
use std::sync::OnceLock;
#[cfg(feature = "failpoints")]
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that arms a kill point.
#[cfg(feature = "failpoints")]
pub const CRASH_ENV: &str = "MEMTREE_CRASH_AT";

/// Every kill point in the write path, in the order a write reaches them. The crash test
/// sweeps this list, so a point added to the code without a name here is not tested.
pub const POINTS: &[&str] = &[
    // Inside the SQLite write transaction: nothing of the write may survive.
    "write_begin",
    "leaf_appended",
    "replace_dropped",
    "seal",
    // A forget: its nodes deleted, the summaries above them not yet re-sealed; then each
    // re-seal.
    "forget_dropped",
    "forget_reseal",
    "embed_batch",
    "store_commit",
    // The store committed, the index not yet: reopen must repair the index.
    "after_store_commit",
    "index_commit",
    // Both committed, the in-memory state not yet updated, the call not yet returned.
    "after_index_commit",
    // `memory_recall` writes commit without the index.
    "recall_commit",
    // Repairs on open: a crash during a repair must leave a store the next open repairs.
    "rebuild_index",
    "open_embed",
];

#[cfg(feature = "failpoints")]
struct Armed {
    point: String,
    nth: u64,
    seen: AtomicU64,
}

#[cfg(feature = "failpoints")]
fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var(CRASH_ENV).ok()?;
            let (point, nth) = match spec.split_once(':') {
                Some((p, n)) => (p.to_string(), n.parse().ok()?),
                None => (spec, 1),
            };
            Some(Armed { point, nth, seen: AtomicU64::new(0) })
        })
        .as_ref()
}

/// A kill point: SIGKILL this process if it is the armed point's `n`-th visit.
#[cfg(feature = "failpoints")]
pub(crate) fn point(name: &'static str) {
    debug_assert!(POINTS.contains(&name), "kill point {name} is not listed in crash::POINTS");
    let Some(a) = armed() else { return };
    if a.point == name && a.seen.fetch_add(1, Ordering::SeqCst) + 1 == a.nth {
        kill_self();
    }
}

/// A kill point without the `failpoints` feature: nothing.
#[cfg(not(feature = "failpoints"))]
#[inline(always)]
pub(crate) fn point(name: &'static str) {
    debug_assert!(POINTS.contains(&name), "kill point {name} is not listed in crash::POINTS");
}

#[cfg(all(feature = "failpoints", unix))]
fn kill_self() -> ! {
    // SIGKILL, not abort or exit: no destructor, buffer flush or atexit handler runs,
    // exactly as when the OS or the user kills the assistant.
    // SAFETY: kill(2) on our own pid has no memory-safety preconditions.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
    }
    // SIGKILL cannot be caught; delivery is asynchronous only in theory.
    loop {
        std::thread::park();
    }
}

#[cfg(all(feature = "failpoints", not(unix)))]
fn kill_self() -> ! {
    std::process::abort()
}
