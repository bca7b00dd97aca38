//! Time expressions turned into windows. In a question (this file): a window `[since, until]` in epoch ms (UTC,
//! inclusive), relative to an anchor: the engine's clock (`OpenOptions.clock`, so the CLI's
//! `--now` applies). Walk answers from inside the window (SPEC §5.1): a question that names a
//! time is bounded by it. So a reading that cannot be taken as written is said, never
//! guessed silently: an impossible date ("February 30") applies no window and says so, a
//! reversed range is read forwards and says so, and a window after the anchor is kept and
//! flagged ([`TimeReading::notes`]).
//!
//! Written here rather than taken from a crate: the date crates that work offline with
//! chrono (`interim`, `chrono-english`, `two_timer`) parse a string that *is* a date
//! expression, not one found inside a question, and `interim` yields an instant, not a span.
//! The readers, most specific first: ranges (`absolute::range`), day dates
//! (`absolute::date`), relative times (`relative`), months and seasons, years.

mod absolute;
mod calendar;
mod numeric;
mod relative;
mod spoken;
mod tokens;

pub(crate) use numeric::is_numeric_date;
pub use spoken::{AdmittedBy, SPOKEN_RULES, SpokenTime, speaks_of};

use chrono::DateTime;

use calendar::Window;
use tokens::{Tok, tokens};

/// One reader: the window an expression starting at token `i` names.
type Reader<'a> = dyn Fn(&[Tok], usize) -> Option<Read> + 'a;

/// What one reader made of an expression: its window, and what the reader had to decide
/// that the question did not say (a reversed range read forwards).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Read {
    window: Window,
    note: Option<String>,
}

impl From<Window> for Read {
    fn from(window: Window) -> Self {
        Read { window, note: None }
    }
}

/// What a question says about time: the window it names, and notes when the reading is not
/// simply what was written (an impossible date, a reversed range, a window in the future, a
/// numeric date the rule had to decide, something like a date that is not read).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TimeReading {
    /// The window `[since, until]`, epoch ms, inclusive; `None` when the question names no
    /// time, or names one that is not a date.
    pub window: Option<(i64, i64)>,
    /// The question names a time, even one no window can be made of ("February 30"): its
    /// words of time are not search terms.
    pub names_time: bool,
    /// Said in the response's `explain.notes`, for the user to see how the time was read.
    pub notes: Vec<String>,
}

/// Epoch ms as RFC 3339 UTC with millisecond precision.
pub fn rfc3339(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// The window a question names, if any.
pub fn time_window(question: &str, anchor_ms: i64) -> Option<(i64, i64)> {
    read_time(question, anchor_ms).window
}

/// The window a question names, with notes on how it was read.
pub fn read_time(question: &str, anchor_ms: i64) -> TimeReading {
    let Some(today) = DateTime::from_timestamp_millis(anchor_ms).map(|t| t.date_naive()) else {
        return TimeReading::default();
    };
    let t = tokens(question);
    // What the numeric-date rule decided, and date-like text it does not read: said whatever
    // else the question names.
    let mut notes = numeric::notes(question);
    if let Some(bad) = absolute::impossible_date(&t) {
        notes.push(format!("{bad} is not a date: no time window applied"));
        return TimeReading { window: None, names_time: true, notes };
    }
    let readers: [&Reader; 6] = [
        &|t, i| absolute::range(t, i, today),
        &|t, i| absolute::week(t, i, today).map(Read::from),
        &|t, i| absolute::date(t, i, today).map(Read::from),
        &|t, i| relative::at(t, i, today, anchor_ms).map(Read::from),
        &|t, i| absolute::month_or_season(t, i, today).map(Read::from),
        &|t, i| absolute::year(t, i).map(Read::from),
    ];
    let Some((at, mut read)) = readers.iter().find_map(|read| (0..t.len()).find_map(|i| Some((i, read(&t, i)?))))
    else {
        return TimeReading { window: None, names_time: false, notes };
    };
    // "since May 3", or "between May 3 and when I …" (no second date): from that time up to
    // now, not that time alone. ("from" alone is no such word: "notes from May 3rd".)
    if at > 0 && matches!(t[at - 1].word(), Some("since" | "between")) {
        read.window.1 = read.window.1.max(anchor_ms);
    }
    notes.extend(read.note);
    if read.window.0 > anchor_ms {
        notes.push(format!(
            "the window starts after now ({}): answered from what was said about it before",
            rfc3339(anchor_ms)
        ));
    }
    TimeReading { window: Some(read.window), names_time: true, notes }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    fn days(first: &str, last: &str) -> (i64, i64) {
        (ms(&format!("{first}T00:00:00Z")), ms(&format!("{last}T23:59:59.999Z")))
    }

    /// Anchor: Wednesday 10 May 2023, 15:00 UTC.
    const NOW: &str = "2023-05-10T15:00:00Z";

    #[test]
    fn relative_expressions_follow_the_anchor() {
        let now = ms(NOW);
        // (question, first day, last day) of the window each names, whole UTC days.
        let cases = [
            ("what happened yesterday?", "2023-05-09", "2023-05-09"),
            ("what did I note today", "2023-05-10", "2023-05-10"),
            ("plans from last week", "2023-05-01", "2023-05-07"),
            ("what went wrong last week?", "2023-05-01", "2023-05-07"),
            ("what did Ana say two weeks ago", "2023-04-24", "2023-04-30"),
            ("the call 3 days ago", "2023-05-07", "2023-05-07"),
            ("the call three days ago", "2023-05-07", "2023-05-07"),
            ("a week ago", "2023-05-01", "2023-05-07"),
            ("a couple of months ago", "2023-03-01", "2023-03-31"),
            ("last month's retro", "2023-04-01", "2023-04-30"),
            ("what did we decide last Tuesday?", "2023-05-09", "2023-05-09"),
            ("last Wednesday", "2023-05-03", "2023-05-03"),
            ("plans for next Tuesday", "2023-05-16", "2023-05-16"),
            ("what did Sam ship on Friday", "2023-05-05", "2023-05-05"),
            // Asked about what is ahead: the first such day from today on.
            ("what's coming up on Saturday?", "2023-05-13", "2023-05-13"),
            ("what will we do on Friday", "2023-05-12", "2023-05-12"),
            ("what is planned on Wednesday", "2023-05-10", "2023-05-10"),
            ("what did we do last weekend", "2023-05-06", "2023-05-07"),
            ("this weekend", "2023-05-13", "2023-05-14"),
            ("next month", "2023-06-01", "2023-06-30"),
            ("last year", "2022-01-01", "2022-12-31"),
            ("last summer", "2022-06-01", "2022-08-31"),
            ("last May", "2022-05-01", "2022-05-31"),
            ("last April", "2023-04-01", "2023-04-30"),
        ];
        for (q, first, last) in cases {
            assert_eq!(time_window(q, now), Some(days(first, last)), "{q}");
        }
        // Up to the anchor: the current period so far, and rolling spans.
        assert_eq!(time_window("this month", now), Some((ms("2023-05-01T00:00:00Z"), now)));
        assert_eq!(time_window("so far this week", now), Some((ms("2023-05-08T00:00:00Z"), now)));
        assert_eq!(time_window("messages in the last 3 days", now), Some((now - 3 * 86_400_000, now)));
        assert_eq!(time_window("the past two weeks", now), Some((now - 14 * 86_400_000, now)));
        // Another anchor, another window: nothing is read from the wall clock.
        let later = ms("2024-01-03T09:00:00Z");
        assert_eq!(time_window("what went wrong last week?", later), Some(days("2023-12-25", "2023-12-31")));
    }

    #[test]
    fn absolute_expressions_name_their_days() {
        let now = ms(NOW);
        let cases = [
            ("what happened on May 3?", "2023-05-03", "2023-05-03"),
            ("notes from May 3rd", "2023-05-03", "2023-05-03"),
            // Without a year: the latest such day up to the anchor.
            ("what happened on May 13th", "2022-05-13", "2022-05-13"),
            ("on 13 May 2023", "2023-05-13", "2023-05-13"),
            ("the outage on 2023-05-13", "2023-05-13", "2023-05-13"),
            ("the 13th of May 2023", "2023-05-13", "2023-05-13"),
            ("June first", "2022-06-01", "2022-06-01"),
            ("between May 1 and May 10", "2023-05-01", "2023-05-10"),
            ("from May 1 to 10", "2023-05-01", "2023-05-10"),
            ("from May 1 until May 10, 2022", "2022-05-01", "2022-05-10"),
            ("between December 20 and January 5", "2022-12-20", "2023-01-05"),
            ("between 2023-04-28 and 2023-05-02", "2023-04-28", "2023-05-02"),
            ("from March to April", "2023-03-01", "2023-04-30"),
            ("in spring 2023", "2023-03-01", "2023-05-31"),
            ("in the summer of 2021", "2021-06-01", "2021-08-31"),
            ("in the summer", "2022-06-01", "2022-08-31"),
            ("during spring", "2023-03-01", "2023-05-31"),
            ("winter 2022", "2022-12-01", "2023-02-28"),
            ("in May", "2023-05-01", "2023-05-31"),
            ("What did Caroline do in May 2022?", "2022-05-01", "2022-05-31"),
            ("May 2023 plans", "2023-05-01", "2023-05-31"),
            ("trips in June", "2022-06-01", "2022-06-30"),
            ("events in 2021", "2021-01-01", "2021-12-31"),
            // A date bounding a span is read as its month, as before day dates were read.
            ("where was Tim the week before 16 November 2022?", "2022-11-01", "2022-11-30"),
        ];
        for (q, first, last) in cases {
            assert_eq!(time_window(q, now), Some(days(first, last)), "{q}");
        }
    }

    #[test]
    fn readings_that_are_not_as_written_say_so() {
        let now = ms(NOW);
        // An impossible date applies no window (rather than its month, or nothing silently).
        for q in ["what happened on February 30?", "notes from 31 April 2023", "on February 29, 2023"] {
            let r = read_time(q, now);
            assert_eq!(r.window, None, "{q}");
            assert!(r.notes.iter().any(|n| n.contains("is not a date")), "{q}: {r:?}");
        }
        // A leap day is a date (after now here, and said so).
        let r = read_time("on February 29, 2024", now);
        assert!(!r.notes.is_empty() && r.notes.iter().all(|n| !n.contains("not a date")), "{r:?}");
        // A reversed range is read forwards.
        let r = read_time("between May 10 and May 1", now);
        assert_eq!(r.window, Some(days("2023-05-01", "2023-05-10")));
        assert!(r.notes.iter().any(|n| n.contains("read as")), "{r:?}");
        let r = read_time("from 2023-05-10 to 2023-04-28", now);
        assert_eq!(r.window, Some(days("2023-04-28", "2023-05-10")));
        assert!(!r.notes.is_empty());
        // Across the new year is no reversal; half a year back is.
        assert!(read_time("between December 20 and January 5", now).notes.is_empty());
        let r = read_time("between May 9 and April 15", now);
        assert_eq!(r.window, Some(days("2023-04-15", "2023-05-09")));
        assert!(!r.notes.is_empty());
        // A window after now is kept, and flagged.
        let r = read_time("what is planned for next week?", now);
        assert_eq!(r.window, Some(days("2023-05-15", "2023-05-21")));
        assert!(r.notes.iter().any(|n| n.contains("after now")), "{r:?}");
        assert!(read_time("what happened last week?", now).notes.is_empty());
    }

    #[test]
    fn ranges_weeks_and_numeric_dates_read_as_written() {
        let now = ms("2026-12-05T06:00:00Z");
        let cases = [
            // A year written once at the end is both ends'.
            ("from May 1 to 10 2018", "2018-05-01", "2018-05-10"),
            ("from May 1 to 10, 2018", "2018-05-01", "2018-05-10"),
            ("between 3 and 5 May 2018", "2018-05-03", "2018-05-05"),
            ("from 3rd to 5th of June 2018", "2018-06-03", "2018-06-05"),
            ("between December 20 and January 5, 2024", "2023-12-20", "2024-01-05"),
            // A week named by a day is its Monday–Sunday week (4 June 2018 is a Monday).
            ("what did we do the week of June 4, 2018?", "2018-06-04", "2018-06-10"),
            ("the week of 6 June 2018", "2018-06-04", "2018-06-10"),
            // Weeks of a month: days 1–7, 8–14, …; the last seven days.
            ("the first week of May 2018", "2018-05-01", "2018-05-07"),
            ("in the second week of May 2018", "2018-05-08", "2018-05-14"),
            ("the last week of February 2020", "2020-02-23", "2020-02-29"),
            ("during the last week of May", "2026-05-25", "2026-05-31"),
            // Numeric dates by the rule: year first; dots day first; slashes month first.
            ("on 2018/05/03", "2018-05-03", "2018-05-03"),
            ("on 25.12.2018", "2018-12-25", "2018-12-25"),
            ("on 12/25/2018", "2018-12-25", "2018-12-25"),
            ("between 01.05.2018 and 10.05.2018", "2018-05-01", "2018-05-10"),
        ];
        for (q, first, last) in cases {
            let r = read_time(q, now);
            assert_eq!(r.window, Some(days(first, last)), "{q}: {r:?}");
        }
        // Written backwards with the year once: that year, read forwards, and said.
        let r = read_time("between May 10 and May 1, 2018", now);
        assert_eq!(r.window, Some(days("2018-05-01", "2018-05-10")));
        assert!(r.notes.iter().any(|n| n.contains("read as 2018-05-01 to 2018-05-10")), "{r:?}");
        // An ISO date no calendar has: no window, and said.
        let r = read_time("what happened on 2018-06-31?", now);
        assert_eq!(r.window, None);
        assert!(r.names_time);
        assert!(r.notes.iter().any(|n| n.contains("`2018-06-31` is not a date")), "{r:?}");
        // An ambiguous numeric date: read by the rule, and said.
        let r = read_time("what happened on 03.05.2018?", now);
        assert_eq!(r.window, Some(days("2018-05-03", "2018-05-03")));
        assert!(r.notes.iter().any(|n| n.contains("`03.05.2018` read as 2018-05-03")), "{r:?}");
        let r = read_time("what happened on 05/03/2018?", now);
        assert_eq!(r.window, Some(days("2018-05-03", "2018-05-03")));
        assert_eq!(r.notes.len(), 1, "{r:?}");
        // What looks like a date and is not read: said, and no window made of it.
        let r = read_time("what happened on 03.05.18?", now);
        assert_eq!(r.window, None);
        assert!(r.notes.iter().any(|n| n.contains("`03.05.18` looks like a date")), "{r:?}");
        // Numbers that are no dates say nothing.
        assert_eq!(read_time("ping 192.168.1.1 and version 1.2", now), TimeReading::default());
    }

    #[test]
    fn an_open_span_runs_up_to_now() {
        let now = ms(NOW);
        let from = days("2023-04-05", "2023-04-05").0;
        for q in
            ["How many days passed between April 5, 2023 and when I passed the quiz?", "what changed since April 5th?"]
        {
            assert_eq!(time_window(q, now), Some((from, now)), "{q}");
        }
        // A closed range stays closed.
        assert_eq!(time_window("between April 5 and April 9", now), Some(days("2023-04-05", "2023-04-09")));
    }

    #[test]
    fn words_that_only_look_like_times_name_none() {
        let now = ms(NOW);
        for q in [
            "May I ask what Melanie painted?",
            "When did Caroline go to the support group?",
            "the last of us",
            "who spoke last?",
            "This may take a while",
            "the second may be better",
            "spring rolls recipe",
            "did the server fall over",
            "what aspect of autumn does Andrew like",
            "is 2023-13-45 a date",
            "room 2022 is booked",
            // A habit names no one day.
            "what do I do on Tuesdays and Thursdays",
            "I go swimming on saturdays",
        ] {
            assert_eq!(time_window(q, now), None, "{q}");
        }
    }
}
