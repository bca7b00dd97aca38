//! Times relative to the anchor (the engine's clock, `OpenOptions.clock`): "today",
//! "yesterday", "last week", "this month", "next year", "last weekend", "last Tuesday",
//! "on Friday", "last spring", "3 days ago", "two weeks ago", "the past 2 weeks". Weeks
//! start on Monday; "this week/month/year" run from their start to the anchor.

use chrono::{Datelike, NaiveDate, Weekday};

use super::calendar::{self, Window};
use super::tokens::Tok;

const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

fn word(t: &[Tok], i: usize) -> Option<&str> {
    t.get(i).and_then(Tok::word)
}

/// A unit of time as a question writes it, singular or plural.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Hour,
    Day,
    Week,
    Month,
    Year,
}

fn unit(w: &str) -> Option<Unit> {
    match w.strip_suffix('s').unwrap_or(w) {
        "hour" => Some(Unit::Hour),
        "day" => Some(Unit::Day),
        "week" => Some(Unit::Week),
        "month" => Some(Unit::Month),
        "year" => Some(Unit::Year),
        _ => None,
    }
}

/// A count and its unit at `t[i..]` ("3 days", "two weeks", "a couple of months"), and the
/// tokens they take.
fn span(t: &[Tok], i: usize) -> Option<(i64, Unit, usize)> {
    let n = t.get(i)?.count()?;
    let of = word(t, i + 1) == Some("of");
    let at = i + 1 + usize::from(of);
    let u = unit(word(t, at)?)?;
    Some((i64::from(n), u, at + 1 - i))
}

/// The relative time starting at `t[i]`, if one does.
pub(super) fn at(t: &[Tok], i: usize, today: NaiveDate, anchor_ms: i64) -> Option<Window> {
    let w = word(t, i);
    let next = word(t, i + 1);
    let shift = |n: i64| calendar::add_days(today, n);
    match (w, next) {
        (Some("today" | "tonight"), _) | (Some("this"), Some("morning" | "afternoon" | "evening")) => {
            return calendar::day(today);
        }
        (Some("yesterday"), _) | (Some("last"), Some("night")) => return calendar::day(shift(-1)?),
        (Some("tomorrow"), _) => return calendar::day(shift(1)?),
        (Some("on"), Some(d)) => {
            // "on Friday": the latest Friday up to today, or, asked about what is ahead
            // ("what's coming up on Saturday?"), the first from today on. "On Fridays" is a
            // habit, no one day: asked about what is done then, not what was said on the
            // last of them.
            let day = calendar::weekday_named(d).filter(|_| !d.ends_with('s'))?;
            let (wd, td) = (day.num_days_from_monday(), today.weekday().num_days_from_monday());
            if asks_ahead(t) {
                return calendar::day(shift(i64::from((7 + wd - td) % 7))?);
            }
            return calendar::day(shift(-i64::from((7 + td - wd) % 7))?);
        }
        (Some(which @ ("last" | "this" | "next" | "past")), _) => {
            if let Some(window) = named_period(t, i, which, today, anchor_ms) {
                return Some(window);
            }
        }
        _ => {}
    }
    // "3 days ago", "two weeks ago", "a month ago".
    let (n, u, len) = span(t, i)?;
    if word(t, i + len) != Some("ago") {
        return None;
    }
    match u {
        Unit::Hour => Some((anchor_ms - n * HOUR_MS - HOUR_MS, anchor_ms - n * HOUR_MS + HOUR_MS)),
        Unit::Day => calendar::day(shift(-n)?),
        Unit::Week => calendar::week_of(shift(-7 * n)?),
        Unit::Month => {
            let (y, m) = calendar::add_months(today.year(), today.month(), -i32::try_from(n).ok()?)?;
            calendar::month(y, m)
        }
        Unit::Year => calendar::year(today.year().checked_sub(i32::try_from(n).ok()?)?),
    }
}

/// Words with which a question asks about what is ahead of it (a plan, an appointment).
const AHEAD: [&str; 7] = ["coming", "upcoming", "will", "plan", "planned", "planning", "scheduled"];

/// Whether the question asks about what is ahead ("what's coming up on Saturday?", "what
/// will we do on Friday?").
fn asks_ahead(t: &[Tok]) -> bool {
    t.iter().any(|x| x.word().is_some_and(|w| AHEAD.contains(&w)))
}

/// "last|this|next|past" followed by a period, a weekday, a month, a season or a count of
/// units (`t[i]` is `which`).
fn named_period(t: &[Tok], i: usize, which: &str, today: NaiveDate, anchor_ms: i64) -> Option<Window> {
    let w = word(t, i + 1);
    let shift = |n: i64| calendar::add_days(today, n);
    let (y, m) = (today.year(), today.month());
    // "the last 3 days", "past two weeks": a rolling span up to the anchor.
    if matches!(which, "last" | "past")
        && let Some((n, u, _)) = span(t, i + 1)
    {
        let ms = match u {
            Unit::Hour => HOUR_MS,
            Unit::Day => DAY_MS,
            Unit::Week => 7 * DAY_MS,
            Unit::Month => 30 * DAY_MS,
            Unit::Year => 365 * DAY_MS,
        };
        return Some((anchor_ms.checked_sub(n.checked_mul(ms)?)?, anchor_ms));
    }
    let since = |start: Option<i64>| start.map(|s| (s, anchor_ms));
    match (which, w?) {
        ("past", "week") => Some((anchor_ms - 7 * DAY_MS, anchor_ms)),
        ("past", "month") => Some((anchor_ms - 30 * DAY_MS, anchor_ms)),
        ("past", "year") => Some((anchor_ms - 365 * DAY_MS, anchor_ms)),
        ("last", "week") => calendar::week_of(shift(-7)?),
        ("this", "week") => since(calendar::day_start(calendar::monday_of(today)?)),
        ("next", "week") => calendar::week_of(shift(7)?),
        ("last", "weekend") => calendar::weekend_of(shift(-7)?),
        ("this", "weekend") => calendar::weekend_of(today),
        ("next", "weekend") => calendar::weekend_of(shift(7)?),
        ("last", "month") => calendar::add_months(y, m, -1).and_then(|(y, m)| calendar::month(y, m)),
        ("this", "month") => since(calendar::month(y, m).map(|w| w.0)),
        ("next", "month") => calendar::add_months(y, m, 1).and_then(|(y, m)| calendar::month(y, m)),
        ("last", "year") => calendar::year(y - 1),
        ("this", "year") => since(calendar::year(y).map(|w| w.0)),
        ("next", "year") => calendar::year(y + 1),
        (_, w) => {
            if let Some(day) = calendar::weekday_named(w) {
                return weekday(which, day, today);
            }
            // "this may take a while" is no month; "last May" and "next May" are.
            if let Some(month) = calendar::month_named(w).filter(|&mo| !(mo == 5 && which == "this")) {
                let year = match which {
                    "last" if month < m => y,
                    "last" => y - 1,
                    "next" if month > m => y,
                    "next" => y + 1,
                    _ => y,
                };
                return calendar::month(year, month);
            }
            let season = calendar::season_named(w)?;
            let latest = season.latest_start(today);
            let ongoing = season.window(latest).is_some_and(|(_, end)| end >= anchor_ms);
            let start = match which {
                "last" if ongoing => latest - 1,
                "next" => latest + 1,
                _ => latest,
            };
            season.window(start)
        }
    }
}

/// "last Tuesday": the latest Tuesday before today; "this Tuesday": the Tuesday of this
/// week; "next Tuesday": the first Tuesday after today.
fn weekday(which: &str, day: Weekday, today: NaiveDate) -> Option<Window> {
    let (d, t) = (i64::from(day.num_days_from_monday()), i64::from(today.weekday().num_days_from_monday()));
    let offset = match which {
        "last" | "past" => -(t - d - 1).rem_euclid(7) - 1,
        "next" => (d - t - 1).rem_euclid(7) + 1,
        _ => d - t,
    };
    calendar::day(calendar::add_days(today, offset)?)
}
