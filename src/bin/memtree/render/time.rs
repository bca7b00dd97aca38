//! Times as the CLI and the REPL read and write them: the one `--now` parser, a range's bound,
//! and RFC 3339 text. The CLI compiles this file alone (it prints JSON, no tables), so
//! everything here is used by both programs.

/// `--now` (the CLI's global flag, the REPL's `--now` and `:now`): the library's reading, its
/// reason alone, as clap's usage error wants it (clap names the flag already).
pub fn now_arg(s: &str) -> Result<i64, String> {
    memtree::parse_now(s).map_err(|e| match e {
        memtree::Error::InvalidArgument { reason, .. } => reason,
        e => e.to_string(),
    })
}

/// A range bound: YYYY-MM-DD (the start of that day, or its end when `end`, UTC), an RFC 3339
/// time, or epoch milliseconds.
pub fn bound(s: &str, end: bool) -> anyhow::Result<i64> {
    let s = s.trim();
    if let Ok(d) = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d") {
        let t = if end { d.and_hms_milli_opt(23, 59, 59, 999) } else { d.and_hms_milli_opt(0, 0, 0, 0) };
        if let Some(t) = t {
            return Ok(t.and_utc().timestamp_millis());
        }
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.timestamp_millis());
    }
    if let Ok(ms) = s.parse::<i64>() {
        return Ok(ms);
    }
    anyhow::bail!("`{s}` is not a time: use YYYY-MM-DD, an RFC 3339 time (2023-05-26T12:00:00Z) or epoch milliseconds")
}

/// An epoch-ms time as RFC 3339 UTC (`Z`) to `unit`; `None` outside chrono's range.
pub fn rfc3339(ms: i64, unit: chrono::SecondsFormat) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms).map(|t| t.to_rfc3339_opts(unit, true))
}
