//! The times a text speaks of, resolved when it is written against when it was said (SPEC
//! §5.1, two clocks): "yesterday's dinner" said on 4 May speaks of 3 May, "next Saturday we
//! fly" said on Monday 1 May of 6 May. The question readers' grammar (`absolute`,
//! `relative`), with three differences, because a text is not a question:
//! - a date or month written without a year is the occurrence nearest the day it was said
//!   (within half a year either way): a text tells plans as often as memories, where a
//!   question asks about the past;
//! - what cannot be read with confidence is not stored: "on Friday" (the last one or the
//!   next?), a vague count ("a few years ago"), a numeric date the rule had to decide
//!   (`03.05.2018`), a range written backwards;
//! - code (`date("2024-12-01")` in a note) and a mail's quotes are not the text's own words;
//! - a time that holds the day the text was said ("today", "this week", "the last 3 days")
//!   is not stored: the first clock already says it.

use chrono::{DateTime, NaiveDate};
use regex::Regex;
use serde::Serialize;
use std::sync::LazyLock;

use super::calendar::{self, Window};
use super::numeric::{Numeric, classify, numeric_runs};
use super::tokens::{Tok, tokens};
use super::{absolute, relative};

/// A time a leaf's text speaks of: `[since_ms, until_ms]`, epoch ms, inclusive (whole UTC
/// days, or the hours of "2 hours ago").
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SpokenTime {
    /// First instant.
    pub since_ms: i64,
    /// Last instant.
    pub until_ms: i64,
}

impl SpokenTime {
    /// Whether it lies wholly inside `window` (`[since, until]`, inclusive): how a window
    /// admits a leaf by the time it speaks of. Inside, not overlapping: "last month" does
    /// not speak of one day of it.
    pub fn inside(self, (since, until): (i64, i64)) -> bool {
        self.since_ms >= since && self.until_ms <= until
    }
}

/// Which clock lets a node into a window (SPEC §5.1), said in a hit's `explain.admitted_by`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdmittedBy {
    /// Said inside it: its envelope overlaps the window.
    Said,
    /// Said outside it, and its text speaks of a time inside it (a plan, a memory).
    SpeaksOf,
}

impl AdmittedBy {
    /// How `window` admits a node said over `[start_ms, end_ms]` whose text speaks of
    /// `spoken`, if it does: by when it was said first.
    pub fn window(window: (i64, i64), start_ms: i64, end_ms: i64, spoken: &[SpokenTime]) -> Option<AdmittedBy> {
        if end_ms >= window.0 && start_ms <= window.1 {
            Some(AdmittedBy::Said)
        } else if spoken.iter().any(|t| t.inside(window)) {
            Some(AdmittedBy::SpeaksOf)
        } else {
            None
        }
    }
}

/// The version of [`speaks_of`]'s rules. Bump it with any change to what they read: a
/// writer's open then derives every stored leaf's times again (`store::spoken`), and the
/// index, whose commits carry it, is rebuilt from the store, so the two never disagree.
pub const SPOKEN_RULES: u32 = 1;

/// The furthest instant either way a time may lie at: what the index's dates hold (i64
/// nanoseconds, years 1677–2262). "800 years ago" or "9999-12-31" names a time, but none a
/// memory is found by.
const LIMIT_MS: i64 = i64::MAX / 1_000_000 - 1_000;

/// The most times one leaf keeps: a long note full of dates is about none of them in
/// particular, and a leaf's index document stays small.
pub const MAX_SPOKEN: usize = 16;

/// The most tokens a range takes.
const RANGE_TOKENS: usize = 11;

/// How far from the day a text was said a date without a year may lie, either way.
const NEAREST_DAYS: i64 = 182;

/// The times `text`, said at `said_ms`, speaks of: distinct, in time order, at most
/// [`MAX_SPOKEN`] (the first ones the text names). Empty when it names none with confidence.
pub fn speaks_of(text: &str, said_ms: i64) -> Vec<SpokenTime> {
    let Some(today) = DateTime::from_timestamp_millis(said_ms).map(|t| t.date_naive()) else {
        return Vec::new();
    };
    // The readers resolve a date without a year to the latest occurrence by the day they are
    // given: by half a year after the text, that is the occurrence nearest it.
    let Some(ahead) = calendar::add_days(today, NEAREST_DAYS) else { return Vec::new() };
    let Some(said_day) = calendar::day(today) else { return Vec::new() };
    let own = own_lines(&without_tags(&crate::text::blank_code(text)));
    let undecided = undecided_dates(&own);
    let t = tokens(&own);
    let mut out: Vec<SpokenTime> = Vec::new();
    let mut i = 0;
    while i < t.len() {
        let at = i;
        i += 1;
        let undecided_at = |k: usize| matches!(&t[k], Tok::Iso(d) if undecided.contains(d));
        if undecided_at(at) {
            continue;
        }
        // A range or week whose date the numeric rule had to decide is not read either.
        let undecided_near = (at..(at + RANGE_TOKENS).min(t.len())).any(undecided_at);
        let read = match absolute::range(&t, at, ahead) {
            Some(_) if undecided_near => {
                i = at + RANGE_TOKENS;
                continue;
            }
            // Written backwards: the question reader turns it round and says so; a text has
            // no one to tell, and its two dates are not read on their own either (the end's
            // year may be the start's): past the longest range ("from the 3rd of June 2018
            // to the 5th of June 2018").
            Some(r) if r.note.is_some() => {
                i = at + RANGE_TOKENS;
                continue;
            }
            Some(r) => Some(r.window),
            // "the week of D" takes at most four tokens after its first.
            None => read_at(&t, at, today, ahead, said_ms, (at..(at + 5).min(t.len())).any(undecided_at)),
        };
        let Some((since_ms, until_ms)) = read else { continue };
        // The day it was said, or a time holding it, is the first clock's.
        if since_ms <= said_day.1 && until_ms >= said_day.0 {
            continue;
        }
        if since_ms <= -LIMIT_MS || until_ms >= LIMIT_MS {
            continue;
        }
        let s = SpokenTime { since_ms, until_ms };
        if !out.contains(&s) {
            out.push(s);
            if out.len() == MAX_SPOKEN {
                break;
            }
        }
    }
    out.sort();
    out
}

/// The time an expression starting at `t[i]` names, if read with confidence.
/// (Ranges are the caller's.) `undecided_week`: the week an expression here could name would
/// be of a date the numeric rule had to decide, and is not read.
fn read_at(
    t: &[Tok],
    i: usize,
    today: NaiveDate,
    ahead: NaiveDate,
    said_ms: i64,
    undecided_week: bool,
) -> Option<Window> {
    absolute::week(t, i, ahead)
        .filter(|_| !undecided_week)
        .or_else(|| absolute::date(t, i, ahead))
        .or_else(|| {
            // "On Friday" in a text is the last Friday or the next one, as its tense says:
            // not guessed.
            // Nor is "a few years ago" or "a couple of weeks ago" one span (a vague count), nor
            // "set goals for the next week" one week (advice, not a plan).
            let generic = i > 0
                && t[i - 1].word() == Some("the")
                && matches!(t.get(i).and_then(Tok::word), Some("next" | "last" | "past" | "coming"));
            let vague = generic || matches!(t.get(i).and_then(Tok::word), Some("on" | "few" | "couple" | "several"));
            if vague { None } else { relative::at(t, i, today, said_ms) }
        })
        .or_else(|| absolute::month_or_season(t, i, ahead))
        .or_else(|| absolute::year(t, i))
}

/// `text` without its HTML tags (`<iframe title="2026-04-22 Video">`: markup, not words).
fn without_tags(text: &str) -> std::borrow::Cow<'_, str> {
    static TAG: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"</?[A-Za-z][^<>\n]*>").expect("valid regex"));
    TAG.replace_all(text, " ")
}

/// The lines of `text` it says itself: a mail's quoted lines ("> …") and the lines that
/// introduce a quote ("On Fri, 25 Jun 2010, Ann wrote:", "Sent: Tuesday, August 03, 2010")
/// date another message, not what this one speaks of.
fn own_lines(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let attribution = |l: &str| {
        let l = l.trim_end();
        l.ends_with("wrote:") || l.ends_with("writes:") || l.contains(" wrote on ")
    };
    let mut out = String::with_capacity(text.len());
    for (i, line) in lines.iter().enumerate() {
        let l = line.trim_start();
        let quoted = l.starts_with('>');
        let header = ["Sent:", "From:"].iter().any(|h| l.starts_with(h));
        // An attribution wrapped over two lines: "On Tue, Aug 3, 2010 at 7:17 AM, Ann" / "wrote:".
        let introduces = attribution(l) || (l.starts_with("On ") && lines.get(i + 1).is_some_and(|n| attribution(n)));
        if !(quoted || header || introduces) {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

/// The days written in digits whose reading the numeric rule had to decide (`03.05.2018`
/// could be 5 March): a question says how it read them, a stored time cannot.
fn undecided_dates(text: &str) -> Vec<NaiveDate> {
    numeric_runs(text)
        .filter_map(|run| match classify(run) {
            Numeric::Date { date, note: Some(_) } => Some(date),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(s: &str) -> i64 {
        DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
    }

    fn days(first: &str, last: &str) -> SpokenTime {
        SpokenTime { since_ms: ms(&format!("{first}T00:00:00Z")), until_ms: ms(&format!("{last}T23:59:59.999Z")) }
    }

    /// Monday 1 May 2023, 09:00 UTC.
    const MONDAY: &str = "2023-05-01T09:00:00Z";

    #[test]
    fn plans_and_memories_resolve_from_when_they_were_said() {
        let said = ms(MONDAY);
        let cases: [(&str, &[(&str, &str)]); 13] = [
            ("Next Saturday we fly to Lisbon for the conference", &[("2023-05-06", "2023-05-06")]),
            ("Yesterday's dinner with Bruno was wonderful", &[("2023-04-30", "2023-04-30")]),
            ("We went camping last weekend", &[("2023-04-29", "2023-04-30")]),
            ("I'll call you tomorrow", &[("2023-05-02", "2023-05-02")]),
            ("the move is next month", &[("2023-06-01", "2023-06-30")]),
            ("I started the new job in March", &[("2023-03-01", "2023-03-31")]),
            // Without a year: the nearest such day, ahead as readily as behind.
            ("the conference is on May 20", &[("2023-05-20", "2023-05-20")]),
            ("my birthday is on 10 October", &[("2023-10-10", "2023-10-10")]),
            ("we met on December 20", &[("2022-12-20", "2022-12-20")]),
            (
                "from May 8 to May 12 I am away",
                &[("2023-05-08", "2023-05-08"), ("2023-05-08", "2023-05-12"), ("2023-05-12", "2023-05-12")],
            ),
            (
                "We went to Japan in 2019 and again last summer",
                &[("2019-01-01", "2019-12-31"), ("2022-06-01", "2022-08-31")],
            ),
            ("three days ago the server fell over", &[("2023-04-28", "2023-04-28")]),
            // A bracket parts a number from the month after it.
            ("Phase 3 (July 2 - July 15): edits", &[("2023-07-02", "2023-07-02"), ("2023-07-15", "2023-07-15")]),
        ];
        for (text, want) in cases {
            let mut want: Vec<SpokenTime> = want.iter().map(|(a, b)| days(a, b)).collect();
            want.sort();
            assert_eq!(speaks_of(text, said), want, "{text}");
        }
    }

    #[test]
    fn what_is_not_read_with_confidence_is_not_stored() {
        let said = ms(MONDAY);
        for text in [
            // The first clock's own day.
            "Dinner with mum today",
            "this week is busy",
            "what a month this has been, this month",
            "in the last 3 days I slept badly",
            // Which Friday? How many years?
            "see you on Friday",
            "a trip to England a few years ago",
            "we met a couple of weeks ago",
            // Advice, not a plan.
            "review your progress and set goals for the next week",
            // The rule had to decide (3 May or 5 March?), alone or in a range.
            "the invoice of 03.05.2022",
            "away from 03.05.2022 to 04.05.2022",
            "the week of 03.05.2022",
            // Written backwards.
            "between May 10 and May 1, 2022",
            // Not dates at all.
            "May I join the dinner?",
            "This may take a while",
            "version 1.2.3 on 192.168.1.1",
            "We go swimming on Saturdays",
            "February 30 is no day",
        ] {
            assert_eq!(speaks_of(text, said), Vec::new(), "{text}");
        }
        // A mail's quotes and their attributions date other messages.
        for text in [
            "On Fri, 25 Jun 2010 17:52:24 -0700, Mingming Cao wrote:\n> the patch of yesterday\nLooks good.",
            "On Tue, Aug 3, 2010 at 7:17 AM, Ann Lee\nwrote:\n> fine\nThanks.",
            "-----Original Message-----\nFrom: Ann\nSent: Tuesday, August 03, 2010 9:02 AM\nApplied.",
            "| not a quote |\n> but this is: on 2022-12-25\nok",
            "Steve French wrote on 06/25/2010 04:05:30 PM:\nok",
        ] {
            assert_eq!(speaks_of(text, said), Vec::new(), "{text}");
        }
        assert_eq!(speaks_of("> old news\nWe ship on 2023-05-20.", said), vec![days("2023-05-20", "2023-05-20")]);
        // A Markdown table row is the text's own.
        assert_eq!(speaks_of("| launch | 2023-05-20 |", said), vec![days("2023-05-20", "2023-05-20")]);
        // Markup and code are no words of the text's.
        assert_eq!(speaks_of("<iframe src=\"x\" title=\"2022-04-22 Video\"></iframe> Watch it.", said), Vec::new());
        assert_eq!(speaks_of("Use `date(\"2024-12-01\") + \"1M\"` to add a month.", said), Vec::new());
        // Times no index date can hold.
        for text in ["the castle was built 800 years ago", "valid until 9999-12-31", "since 0001-01-01"] {
            assert_eq!(speaks_of(text, said), Vec::new(), "{text}");
        }
        // A date the rule reads one way only is stored.
        assert_eq!(speaks_of("the invoice of 25.12.2022", said), vec![days("2022-12-25", "2022-12-25")]);
    }

    #[test]
    fn a_long_text_keeps_its_first_times() {
        let text: String = (1..=28).map(|d| format!("On 2022-02-{d:02} we met. ")).collect();
        let got = speaks_of(&text, ms(MONDAY));
        assert_eq!(got.len(), MAX_SPOKEN);
        assert_eq!(got[0], days("2022-02-01", "2022-02-01"));
        assert!(got.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn inside_is_wholly_inside() {
        let may6 = days("2023-05-06", "2023-05-06");
        let week = days("2023-05-01", "2023-05-07");
        assert!(may6.inside((week.since_ms, week.until_ms)));
        assert!(!week.inside((may6.since_ms, may6.until_ms)));
    }
}
