//! The process's own memory figures from `/proc/self/status`, in MB: one reader for every
//! bench that reports a peak or a resident size (they had four copies of it).
//!
//! A folder module (not `benches/*.rs`) so that Cargo does not take it for a bench target.

/// A `/proc/self/status` field (`"VmHWM:"`, `"VmRSS:"`, `"RssAnon:"`) in MB, rounded down; 0
/// where there is none (not Linux, or a field this kernel does not have).
pub fn status_mb(key: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map_or(0, |kb| kb / 1024)
}
