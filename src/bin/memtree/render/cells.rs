//! The cells of the REPL's tables and lines: the time column, a searched window, scores and
//! byte sizes. Times are UTC, as the engine stores them.

use serde_json::Value;

/// `2023-05-02 10:20`: a source's first and last time, an entity's last mention.
pub fn minute(ms: Option<i64>) -> Option<String> {
    ms.and_then(chrono::DateTime::from_timestamp_millis).map(|t| t.format("%Y-%m-%d %H:%M").to_string())
}

/// The time column of a hit (RFC 3339 start and end): `2023-05-02 10:20` for a point,
/// `2023-05-02..05-04` for a span over days.
pub fn span(start: &Value, end: &Value) -> String {
    let parse = |v: &Value| v.as_str().and_then(|s| chrono::DateTime::parse_from_rfc3339(s).ok());
    match (parse(start), parse(end)) {
        (Some(a), Some(b)) if a.date_naive() != b.date_naive() => {
            format!("{}..{}", a.format("%Y-%m-%d"), b.format("%m-%d"))
        }
        (Some(a), _) => a.format("%Y-%m-%d %H:%M").to_string(),
        _ => String::new(),
    }
}

/// A window searched, as `:window` takes one: whole days as dates (`2024-03-04..2024-03-10`,
/// one day alone), a bound inside a day to the minute.
pub fn window(since_ms: i64, until_ms: i64) -> String {
    const DAY: i64 = 86_400_000;
    let at = |ms: i64, day: bool| {
        let t = chrono::DateTime::from_timestamp_millis(ms);
        t.map_or_else(|| ms.to_string(), |t| t.format(if day { "%Y-%m-%d" } else { "%Y-%m-%d %H:%M" }).to_string())
    };
    let (from, to) = (at(since_ms, since_ms.rem_euclid(DAY) == 0), at(until_ms, until_ms.rem_euclid(DAY) == DAY - 1));
    if from == to { from } else { format!("{from}..{to}") }
}

/// A whole score as an integer (cover_window's 1), else to three decimals.
pub fn score(s: f64) -> String {
    if s.fract() == 0.0 && s.abs() < 1e6 { format!("{s:.0}") } else { format!("{s:.3}") }
}

/// `68.5 KiB`.
pub fn bytes(b: u64) -> String {
    match b {
        b if b >= 1 << 30 => format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64),
        b if b >= 1 << 20 => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        b if b >= 1 << 10 => format!("{:.1} KiB", b as f64 / 1024.0),
        b => format!("{b} B"),
    }
}
