//! Calendar spans as windows `[first ms, last ms]` (UTC, whole days): a day, a Monday-first
//! week, a month, a season (northern hemisphere, meteorological: spring is March–May), a
//! year; and the names a question gives them.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

use crate::text::MONTHS;

/// An inclusive window, epoch ms.
pub(super) type Window = (i64, i64);

const DAY_MS: i64 = 86_400_000;

/// The first millisecond of `d`, UTC.
pub(super) fn day_start(d: NaiveDate) -> Option<i64> {
    d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis())
}

/// The whole days `first..=last`.
pub(super) fn days(first: NaiveDate, last: NaiveDate) -> Option<Window> {
    Some((day_start(first)?, day_start(last)? + DAY_MS - 1))
}

/// One whole day.
pub(super) fn day(d: NaiveDate) -> Option<Window> {
    days(d, d)
}

/// The Monday of `d`'s week.
pub(super) fn monday_of(d: NaiveDate) -> Option<NaiveDate> {
    d.checked_sub_signed(Duration::days(i64::from(d.weekday().num_days_from_monday())))
}

/// `d` moved by `n` days (either way).
pub(super) fn add_days(d: NaiveDate, n: i64) -> Option<NaiveDate> {
    d.checked_add_signed(Duration::try_days(n)?)
}

/// The Monday–Sunday week holding `d`.
pub(super) fn week_of(d: NaiveDate) -> Option<Window> {
    let monday = monday_of(d)?;
    days(monday, add_days(monday, 6)?)
}

/// Saturday and Sunday of the Monday-first week holding `d`.
pub(super) fn weekend_of(d: NaiveDate) -> Option<Window> {
    let monday = monday_of(d)?;
    days(add_days(monday, 5)?, add_days(monday, 6)?)
}

/// The first and last day of month `m` (1–12) of `y`.
pub(super) fn month_days(y: i32, m: u32) -> Option<(NaiveDate, NaiveDate)> {
    let first = NaiveDate::from_ymd_opt(y, m, 1)?;
    let next = if m == 12 { NaiveDate::from_ymd_opt(y + 1, 1, 1)? } else { NaiveDate::from_ymd_opt(y, m + 1, 1)? };
    Some((first, next.pred_opt()?))
}

/// The whole month.
pub(super) fn month(y: i32, m: u32) -> Option<Window> {
    let (first, last) = month_days(y, m)?;
    days(first, last)
}

/// (year, month) moved by `delta` months.
pub(super) fn add_months(y: i32, m: u32, delta: i32) -> Option<(i32, u32)> {
    let index = y.checked_mul(12)?.checked_add(i32::try_from(m).ok()? - 1)?.checked_add(delta)?;
    Some((index.div_euclid(12), u32::try_from(index.rem_euclid(12)).ok()? + 1))
}

/// The whole year.
pub(super) fn year(y: i32) -> Option<Window> {
    days(NaiveDate::from_ymd_opt(y, 1, 1)?, NaiveDate::from_ymd_opt(y, 12, 31)?)
}

/// The month a word names (full English names only: "mar", "jan" are words and names too).
pub(super) fn month_named(w: &str) -> Option<u32> {
    MONTHS.iter().position(|x| *x == w).and_then(|i| u32::try_from(i + 1).ok())
}

/// The weekday a word names ("tuesday", "tuesdays").
pub(super) fn weekday_named(w: &str) -> Option<Weekday> {
    const DAYS: [(&str, Weekday); 7] = [
        ("monday", Weekday::Mon),
        ("tuesday", Weekday::Tue),
        ("wednesday", Weekday::Wed),
        ("thursday", Weekday::Thu),
        ("friday", Weekday::Fri),
        ("saturday", Weekday::Sat),
        ("sunday", Weekday::Sun),
    ];
    let w = w.strip_suffix('s').unwrap_or(w);
    DAYS.iter().find(|(name, _)| *name == w).map(|(_, d)| *d)
}

/// A season: the month it starts in. Winter starts in December, so "winter 2023" is
/// December 2023 to February 2024 (the winter that begins in that year).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Season(u32);

/// The season a word names ("autumn" and "fall" alike).
pub(super) fn season_named(w: &str) -> Option<Season> {
    match w {
        "spring" => Some(Season(3)),
        "summer" => Some(Season(6)),
        "autumn" | "fall" => Some(Season(9)),
        "winter" => Some(Season(12)),
        _ => None,
    }
}

impl Season {
    /// The three months of this season starting in `y`.
    pub(super) fn window(self, y: i32) -> Option<Window> {
        let (ly, lm) = add_months(y, self.0, 2)?;
        Some((month(y, self.0)?.0, month(ly, lm)?.1))
    }

    /// The year of the latest such season that has begun by `today`.
    pub(super) fn latest_start(self, today: NaiveDate) -> i32 {
        if self.0 <= today.month() { today.year() } else { today.year() - 1 }
    }
}
