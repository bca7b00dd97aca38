//! Dates a question names outright: `2023-05-13`, "May 13th", "13 May 2023", "the 13th of
//! May", ranges ("between May 1 and May 10", "from May 1 to 10"), months ("in May",
//! "May 2023"), seasons ("in spring 2023") and years ("in 2022"). A date without a year is
//! the latest such date not after the anchor: memory is asked about the past.

use chrono::{Datelike, NaiveDate};

use super::Read;
use super::calendar::{self, Window};
use super::tokens::Tok;

/// Words after which a bare month is a time ("in May", "of June"; not "May I ask").
const PREPOSITIONS: [&str; 4] = ["in", "of", "during", "since"];

/// Words after which a bare season is a time ("in spring"; not "the beauty of autumn").
const SEASON_PREPOSITIONS: [&str; 3] = ["in", "during", "since"];

/// Words that make a date the bound of a span, not the day asked about ("the week before
/// May 13, 2023", "by 7 November"): such a date is read as its month, the softer window.
const BOUNDS: [&str; 5] = ["before", "after", "by", "until", "till"];

/// The longest span a range without years may make by crossing the new year.
const MAX_WRAPPED_DAYS: i64 = 183;

/// A date as written: a month, maybe a day, maybe a year.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DateRef {
    month: u32,
    day: Option<u32>,
    year: Option<i32>,
}

impl DateRef {
    /// The days it spans in `year` (one day, or the whole month).
    fn in_year(self, year: i32) -> Option<(NaiveDate, NaiveDate)> {
        match self.day {
            Some(d) => NaiveDate::from_ymd_opt(year, self.month, d).map(|d| (d, d)),
            None => calendar::month_days(year, self.month),
        }
    }

    /// The days it spans: in its own year, else in the latest year where it has begun by
    /// `today`.
    fn resolve(self, today: NaiveDate) -> Option<(NaiveDate, NaiveDate)> {
        if let Some(y) = self.year {
            return self.in_year(y);
        }
        let (first, last) = self.in_year(today.year())?;
        if first <= today { Some((first, last)) } else { self.in_year(today.year() - 1) }
    }
}

fn word(t: &[Tok], i: usize) -> Option<&str> {
    t.get(i).and_then(Tok::word)
}

fn year_at(t: &[Tok], i: usize) -> Option<i32> {
    t.get(i).and_then(Tok::year)
}

/// A day date at `t[i..]` and how many tokens it takes.
fn day_date(t: &[Tok], i: usize) -> Option<(DateRef, usize)> {
    if let Some(Tok::Iso(d)) = t.get(i) {
        return Some((DateRef { month: d.month(), day: Some(d.day()), year: Some(d.year()) }, 1));
    }
    // "May 13", "May 13th 2023", "June first" (not "May first": "may" is a verb too).
    if let Some(m) = word(t, i).and_then(calendar::month_named)
        && let Some(day_tok) = t.get(i + 1)
        && let Some(d) = day_tok.day()
        && (matches!(day_tok, Tok::Num { .. }) || m != 5)
    {
        let year = year_at(t, i + 2);
        return Some((DateRef { month: m, day: Some(d), year }, 2 + usize::from(year.is_some())));
    }
    // "13 May", "13th of May 2023", "the first of June". A spelled day needs "of" ("the
    // second may be" is no date), and so does a bare number before "may".
    let d = t.get(i)?.day()?;
    let spelled = matches!(t[i], Tok::Word(_));
    let of = word(t, i + 1) == Some("of");
    let at = i + 1 + usize::from(of);
    let m = word(t, at).and_then(calendar::month_named)?;
    let year = year_at(t, at + 1);
    let may_guard = m == 5 && !of && !t[i].is_ordinal() && year.is_none();
    if (spelled && !of) || may_guard {
        return None;
    }
    Some((DateRef { month: m, day: Some(d), year }, at + 1 - i + usize::from(year.is_some())))
}

/// A month with a year ("May 2023"), or after a preposition ("in May", "of June").
fn month_at(t: &[Tok], i: usize) -> Option<(DateRef, usize)> {
    let m = word(t, i).and_then(calendar::month_named)?;
    if let Some(y) = year_at(t, i + 1) {
        return Some((DateRef { month: m, day: None, year: Some(y) }, 2));
    }
    let after_prep = i > 0 && word(t, i - 1).is_some_and(|w| PREPOSITIONS.contains(&w));
    after_prep.then_some((DateRef { month: m, day: None, year: None }, 1))
}

/// The day range a question names: "between X and Y", "from X to|until|till|through Y",
/// where X and Y are dates or months, and Y may be a bare day of X's month ("May 1 to 10").
/// A range whose end comes before its start within one year ("between May 10 and May 1",
/// or both years written) is read forwards, with a note; an end month before the start month
/// without a year crosses the new year ("December 20 to January 5").
pub(super) fn range(t: &[Tok], i: usize, today: NaiveDate) -> Option<Read> {
    let joins: &[&str] = match word(t, i)? {
        "between" => &["and"],
        "from" => &["to", "until", "till", "through"],
        _ => return None,
    };
    let point = |j: usize| day_date(t, j).or_else(|| month_at_any(t, j));
    let joined = |j: usize| word(t, j).is_some_and(|w| joins.contains(&w));
    let (a, b) = match point(i + 1) {
        Some((a, la)) if joined(i + 1 + la) => {
            let join = i + 1 + la;
            let b = match point(join + 1) {
                Some((b, _)) => b,
                // "May 1 to 10", "May 1 to 10 2018": a bare day of the start's month, and
                // the year written once at the end is both ends'.
                None => DateRef { day: Some(t.get(join + 1)?.day()?), year: year_at(t, join + 2), ..a },
            };
            (a, b)
        }
        // "between 3 and 5 May 2018": a bare day of the end's month and year.
        _ => {
            let d = t.get(i + 1)?.day()?;
            if !joined(i + 2) {
                return None;
            }
            let (b, _) = day_date(t, i + 3)?;
            (DateRef { day: Some(d), ..b }, b)
        }
    };
    // The years: as written; a year written only on the end applies to the start (the year
    // before when that puts the start after the end and makes a span of at most half a year:
    // "December 20 to January 5 2024", but not "May 10 and May 1, 2018", a range written
    // backwards); else the start is the latest such date by `today` and the end the first
    // after it.
    let (first, a_last) = match (a.year, b.year) {
        (None, Some(y)) => {
            let (first, last) = DateRef { year: Some(y), ..a }.resolve(today)?;
            let (_, b_last) = b.resolve(today)?;
            let before = DateRef { year: Some(y - 1), ..a }.resolve(today)?;
            if first > b_last && (b_last - before.0).num_days() <= MAX_WRAPPED_DAYS { before } else { (first, last) }
        }
        _ => a.resolve(today)?,
    };
    let (b_first, mut last) = DateRef { year: b.year.or(Some(first.year())), ..b }.resolve(today)?;
    // Without years, an end month before the start month crosses the new year when that
    // makes a span of at most half a year ("December 20 to January 5"); a longer one ("May 9
    // to April 15") is a range written backwards.
    if b.year.is_none() && a.year.is_none() && b.month < a.month && last < first {
        let wrapped = DateRef { year: Some(first.year() + 1), ..b }.resolve(today)?.1;
        if (wrapped - first).num_days() <= MAX_WRAPPED_DAYS {
            last = wrapped;
        }
    }
    if last < first {
        // Written backwards: read from the earlier end to the later one, and say so.
        let (from, to) = (b_first, a_last);
        let note = format!("the range ends before it starts: read as {from} to {to}");
        return Some(Read { window: calendar::days(from, to)?, note: Some(note) });
    }
    calendar::days(first, last.max(a_last)).map(Read::from)
}

/// A month and day written together that no calendar has ("February 30", "31 April",
/// "February 29, 2023"), as the question wrote them; `None` when every date is possible.
pub(super) fn impossible_date(t: &[Tok]) -> Option<String> {
    (0..t.len()).find_map(|i| {
        if let Tok::Impossible(text) = &t[i] {
            return Some(format!("`{text}`"));
        }
        // "February 30" or "30 February"/"30th of February".
        let (m, d, at_year) = if let Some(m) = word(t, i).and_then(calendar::month_named) {
            (m, t.get(i + 1)?.day()?, i + 2)
        } else {
            let d = t.get(i)?.day()?;
            let at = i + 1 + usize::from(word(t, i + 1) == Some("of"));
            (word(t, at).and_then(calendar::month_named)?, d, at + 1)
        };
        let year = year_at(t, at_year);
        // Any year for a day a month never has; the year written for February 29.
        let possible = match year {
            Some(y) => NaiveDate::from_ymd_opt(y, m, d).is_some(),
            None => NaiveDate::from_ymd_opt(2024, m, d).is_some(),
        };
        if possible {
            return None;
        }
        let name = crate::text::MONTHS[(m - 1) as usize];
        let mut name = name[..1].to_uppercase() + &name[1..];
        name.push_str(&format!(" {d}"));
        if let Some(y) = year {
            name.push_str(&format!(", {y}"));
        }
        Some(format!("`{name}`"))
    })
}

/// A month inside a range needs no preposition ("from March to May").
fn month_at_any(t: &[Tok], i: usize) -> Option<(DateRef, usize)> {
    let m = word(t, i).and_then(calendar::month_named)?;
    let year = year_at(t, i + 1);
    Some((DateRef { month: m, day: None, year }, 1 + usize::from(year.is_some())))
}

/// One day named outright.
pub(super) fn date(t: &[Tok], i: usize, today: NaiveDate) -> Option<Window> {
    if i > 0 && word(t, i - 1).is_some_and(|w| BOUNDS.contains(&w)) {
        return None;
    }
    let (r, _) = day_date(t, i)?;
    let (first, last) = r.resolve(today)?;
    calendar::days(first, last)
}

/// A month ("in May", "May 2023") or a season ("in spring", "spring 2023", "in the summer
/// of 2022"): a bare one is the latest that has begun by `today`.
pub(super) fn month_or_season(t: &[Tok], i: usize, today: NaiveDate) -> Option<Window> {
    if let Some((r, _)) = month_at(t, i) {
        let (first, last) = r.resolve(today)?;
        return calendar::days(first, last);
    }
    let season = word(t, i).and_then(calendar::season_named)?;
    let year = year_at(t, i + 1).or_else(|| if word(t, i + 1) == Some("of") { year_at(t, i + 2) } else { None });
    if let Some(y) = year {
        return season.window(y);
    }
    // "spring" and "fall" are words too: only after a preposition, "the" between allowed.
    let before = |k: usize| i >= k && word(t, i - k).is_some_and(|w| SEASON_PREPOSITIONS.contains(&w));
    let after_prep = before(1) || (before(2) && word(t, i - 1) == Some("the"));
    after_prep.then(|| season.window(season.latest_start(today))).flatten()
}

/// Which week of a month a word names: the first to fourth (days 1–7, 8–14, …), or the last
/// (the month's last seven days).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum WeekOfMonth {
    Nth(u32),
    Last,
}

fn week_of_month(w: &str) -> Option<WeekOfMonth> {
    match w {
        "first" => Some(WeekOfMonth::Nth(1)),
        "second" => Some(WeekOfMonth::Nth(2)),
        "third" => Some(WeekOfMonth::Nth(3)),
        "fourth" => Some(WeekOfMonth::Nth(4)),
        "last" | "final" => Some(WeekOfMonth::Last),
        _ => None,
    }
}

/// A week named by a day or within a month: "the week of June 4, 2018" (the Monday–Sunday
/// week holding that day), "the first week of May 2018" (its days 1–7; the second, third
/// and fourth likewise), "the last week of May" (its last seven days). A month without a
/// year is the latest that has begun by `today`, as for "in May".
pub(super) fn week(t: &[Tok], i: usize, today: NaiveDate) -> Option<Window> {
    if word(t, i) == Some("week") && word(t, i + 1) == Some("of") {
        let (r, _) = day_date(t, i + 2)?;
        let (d, _) = r.resolve(today)?;
        return calendar::week_of(d);
    }
    let which = week_of_month(word(t, i)?)?;
    if word(t, i + 1) != Some("week") || word(t, i + 2) != Some("of") {
        return None;
    }
    let (r, _) = month_at_any(t, i + 3)?;
    let (first, last) = DateRef { day: None, ..r }.resolve(today)?;
    match which {
        WeekOfMonth::Nth(n) => {
            let start = calendar::add_days(first, i64::from(7 * (n - 1)))?;
            calendar::days(start, calendar::add_days(start, 6)?.min(last))
        }
        WeekOfMonth::Last => calendar::days(calendar::add_days(last, -6)?, last),
    }
}

/// A year after "in" or "during" ("in 2022").
pub(super) fn year(t: &[Tok], i: usize) -> Option<Window> {
    let y = year_at(t, i)?;
    (i > 0 && matches!(word(t, i - 1), Some("in" | "during"))).then(|| calendar::year(y)).flatten()
}
