//! A message time as exports write it: an RFC 3339 time, a date, or epoch seconds or
//! milliseconds (as a number or a string of digits), read as epoch milliseconds UTC.

use serde_json::Value;

/// What [`epoch_ms`] accepts, for error messages.
pub(crate) const TS_FORMATS: &str = "an RFC 3339 time (2023-05-26T12:00:00Z), a date (2023-05-26, read as its start, \
     UTC), or epoch seconds or milliseconds (1685102400 or 1685102400000)";

/// Epoch numbers below this are seconds, at or above it milliseconds: 10^11 seconds is the
/// year 5138, 10^11 milliseconds is March 1973, so no time a message carries is ambiguous.
const SECONDS_BELOW: f64 = 1e11;

/// `v` as epoch milliseconds; the reason it is not a time otherwise (naming the accepted
/// formats).
pub(crate) fn epoch_ms(v: &Value) -> Result<i64, String> {
    let bad = |shown: &str| format!("`{}` is not a time: use {TS_FORMATS}", crate::text::clip(shown, 60));
    match v {
        Value::Number(n) => match n.as_i64() {
            Some(i) => Ok(from_integer(i)),
            None => n.as_f64().and_then(from_float).ok_or_else(|| bad(&n.to_string())),
        },
        Value::String(s) => from_text(s).ok_or_else(|| bad(s)),
        Value::Bool(_) => Err("must be a string or a number, got a boolean".into()),
        Value::Null => Err("must be a string or a number, got null".into()),
        Value::Array(_) | Value::Object(_) => Err("must be a string or a number, got a JSON structure".into()),
    }
}

/// Epoch milliseconds of a text time (see [`TS_FORMATS`]).
pub(crate) fn from_text(s: &str) -> Option<i64> {
    let s = s.trim();
    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse::<i64>().ok().map(from_integer);
    }
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Some(t.timestamp_millis());
    }
    let d = chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_millis())
}

fn from_integer(i: i64) -> i64 {
    if (i.unsigned_abs() as f64) < SECONDS_BELOW { i * 1000 } else { i }
}

/// Epoch seconds with a fraction (ChatGPT's `create_time`), or milliseconds.
pub(crate) fn from_float(f: f64) -> Option<i64> {
    if !f.is_finite() {
        return None;
    }
    let ms = if f.abs() < SECONDS_BELOW { f * 1000.0 } else { f };
    (ms.abs() < i64::MAX as f64).then(|| ms.round() as i64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_accepted_form() {
        let ms = 1_685_102_400_000; // 2023-05-26T12:00:00Z
        for v in [
            json!(ms),
            json!(1_685_102_400),
            json!(1_685_102_400.0),
            json!("1685102400"),
            json!("1685102400000"),
            json!("2023-05-26T12:00:00Z"),
            json!("2023-05-26T14:00:00+02:00"),
        ] {
            assert_eq!(epoch_ms(&v), Ok(ms), "{v}");
        }
        assert_eq!(epoch_ms(&json!("2023-05-26")), Ok(1_685_059_200_000));
        assert_eq!(epoch_ms(&json!(1_685_102_400.25)), Ok(ms + 250));
        assert_eq!(epoch_ms(&json!(-1)), Ok(-1000), "before 1970 is still seconds");
        assert_eq!(epoch_ms(&json!(i64::MAX)), Ok(i64::MAX));
    }

    #[test]
    fn an_error_lists_the_formats() {
        for v in [json!("2023-13-01"), json!("yesterday"), json!(""), json!(1e300)] {
            let e = epoch_ms(&v).unwrap_err();
            assert!(e.contains("RFC 3339") && e.contains("2023-05-26") && e.contains("epoch seconds"), "{v}: {e}");
        }
        assert!(epoch_ms(&json!(true)).unwrap_err().contains("a boolean"));
    }
}
