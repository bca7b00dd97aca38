//! The time-question set (SPEC §5.1): questions about one day of a dated conversation, in
//! three phrasings a user asks them, each read against its own clock, and how walk answers
//! them — precision@10 inside the day and whether the top hit lies inside it.
//!
//! For every UTC day of a conversation with at least `min_turns` turns:
//! - with the year: "What happened on 8 May 2023?" (the clock: the harness's, after the
//!   conversation);
//! - without the year: "What did we talk about on May 8?" with the clock three days later;
//! - relative: "What happened yesterday?" with the clock at noon of the next day.
//!
//! A hit lies inside the day when its whole envelope does (a summary over two days does
//! not). Precision@10 divides the in-day hits among the first ten by ten, or by the number of
//! leaves of the day when it has fewer (BEAM's days hold two to six messages): a perfect
//! answer scores 1 either way.

use super::Conversation;
use chrono::{DateTime, Datelike, NaiveDate};
use std::collections::BTreeMap;

const DAY_MS: i64 = 86_400_000;

/// Hits judged per question.
pub const JUDGED: usize = 10;

/// How a time question is worded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Phrasing {
    /// "What happened on 8 May 2023?"
    WithYear,
    /// "What did we talk about on May 8?", asked three days later.
    WithoutYear,
    /// "What happened yesterday?", asked the next day.
    Yesterday,
}

impl Phrasing {
    /// Every phrasing, in report order.
    pub const ALL: [Phrasing; 3] = [Phrasing::WithYear, Phrasing::WithoutYear, Phrasing::Yesterday];

    /// The name in the report.
    pub fn name(self) -> &'static str {
        match self {
            Phrasing::WithYear => "with-year",
            Phrasing::WithoutYear => "without-year",
            Phrasing::Yesterday => "yesterday",
        }
    }
}

/// One question about one day.
#[derive(Debug, Clone, PartialEq)]
pub struct TimeQuestion {
    /// How it is worded.
    pub phrasing: Phrasing,
    /// The question.
    pub question: String,
    /// The clock it is asked at, epoch ms; `None` = the harness's clock.
    pub now_ms: Option<i64>,
    /// The day asked about, `[first ms, last ms]`.
    pub day: (i64, i64),
    /// The conversation's leaves dated that day.
    pub leaves: usize,
}

/// The questions about `c`'s days with at least `min_turns` turns, three per day.
pub fn time_questions(c: &Conversation, min_turns: usize) -> Vec<TimeQuestion> {
    let mut days: BTreeMap<NaiveDate, usize> = BTreeMap::new();
    for t in &c.turns {
        if let Some(d) = DateTime::from_timestamp_millis(t.ts_ms) {
            *days.entry(d.date_naive()).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (d, n) in days {
        let Some(start) = d.and_hms_opt(0, 0, 0).map(|t| t.and_utc().timestamp_millis()) else { continue };
        if n < min_turns.max(1) {
            continue;
        }
        let day = (start, start + DAY_MS - 1);
        let month = month_name(d.month());
        let ask = |phrasing, question: String, now_ms| TimeQuestion { phrasing, question, now_ms, day, leaves: n };
        out.push(ask(Phrasing::WithYear, format!("What happened on {} {month} {}?", d.day(), d.year()), None));
        out.push(ask(
            Phrasing::WithoutYear,
            format!("What did we talk about on {month} {}?", d.day()),
            Some(start + 3 * DAY_MS + DAY_MS / 2),
        ));
        out.push(ask(Phrasing::Yesterday, "What happened yesterday?".into(), Some(start + DAY_MS + DAY_MS / 2)));
    }
    out
}

fn month_name(m: u32) -> String {
    let name = crate::text::MONTHS[(m as usize).clamp(1, 12) - 1];
    name[..1].to_uppercase() + &name[1..]
}

/// How one time question was answered: the envelopes of the hits, in order.
pub fn judge(q: &TimeQuestion, hits: &[(i64, i64)]) -> TimeOutcome {
    let inside = |h: &(i64, i64)| h.0 >= q.day.0 && h.1 <= q.day.1;
    let judged = &hits[..hits.len().min(JUDGED)];
    // Ten, or the day's leaves when fewer, or the hits given when more (a day of two
    // messages answered by its summary and both leaves): a perfect answer scores 1.
    let denominator = JUDGED.min(q.leaves).max(judged.len()).max(1);
    TimeOutcome {
        precision: judged.iter().filter(|h| inside(h)).count() as f64 / denominator as f64,
        top_inside: hits.first().is_some_and(inside),
    }
}

/// One time question's outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimeOutcome {
    /// In-day hits among the first ten, over ten (or over the day's leaves, when fewer).
    pub precision: f64,
    /// The first hit lies inside the day.
    pub top_inside: bool,
}

/// The time table's figures for one phrasing.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct TimeFigures {
    /// Questions asked.
    pub questions: usize,
    /// Mean precision@10 inside the day.
    pub precision_at_10: f64,
    /// Share of questions whose top hit lies inside the day.
    pub top_inside: f64,
}

/// Mean figures per phrasing.
pub fn aggregate(outcomes: &[(Phrasing, TimeOutcome)]) -> BTreeMap<String, TimeFigures> {
    let mut out = BTreeMap::new();
    for p in Phrasing::ALL {
        let sel: Vec<&TimeOutcome> = outcomes.iter().filter(|(q, _)| *q == p).map(|(_, o)| o).collect();
        if sel.is_empty() {
            continue;
        }
        let n = sel.len() as f64;
        out.insert(
            p.name().to_string(),
            TimeFigures {
                questions: sel.len(),
                precision_at_10: sel.iter().map(|o| o.precision).sum::<f64>() / n,
                top_inside: sel.iter().filter(|o| o.top_inside).count() as f64 / n,
            },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::import::locomo::Turn;

    fn turn(ts_ms: i64) -> Turn {
        Turn { dia_id: format!("D1:{ts_ms}"), speaker: "A".into(), text: "hi".into(), ts_ms, session: 1 }
    }

    #[test]
    fn three_phrasings_per_busy_day() {
        // 8 May 2023 12:00 UTC: 12 turns; 9 May: 3 turns (too few at 10).
        let may8 = 1_683_547_200_000;
        let mut turns: Vec<Turn> = (0..12).map(|i| turn(may8 + i * 30_000)).collect();
        turns.extend((0..3).map(|i| turn(may8 + DAY_MS + i * 30_000)));
        let c = Conversation { sample_id: "c".into(), turns, questions: Vec::new() };
        let qs = time_questions(&c, 10);
        let texts: Vec<&str> = qs.iter().map(|q| q.question.as_str()).collect();
        assert_eq!(
            texts,
            ["What happened on 8 May 2023?", "What did we talk about on May 8?", "What happened yesterday?"]
        );
        let day_start = may8 - DAY_MS / 2;
        assert!(qs.iter().all(|q| q.day == (day_start, day_start + DAY_MS - 1) && q.leaves == 12));
        assert_eq!(qs[1].now_ms, Some(day_start + 3 * DAY_MS + DAY_MS / 2));
        assert_eq!(qs[2].now_ms, Some(day_start + DAY_MS + DAY_MS / 2));
        assert_eq!(time_questions(&c, 3).len(), 6);
    }

    #[test]
    fn precision_counts_hits_wholly_inside_the_day() {
        let q = TimeQuestion {
            phrasing: Phrasing::Yesterday,
            question: String::new(),
            now_ms: None,
            day: (0, DAY_MS - 1),
            leaves: 4,
        };
        // A summary over two days is outside; 3 of the 4 leaves the day holds are inside,
        // among 5 hits given.
        let hits = [(0, 2 * DAY_MS), (5, 5), (6, 6), (7, 7), (DAY_MS, DAY_MS)];
        let o = judge(&q, &hits);
        assert!((o.precision - 0.6).abs() < 1e-9);
        // 3 in-day hits of 3 given, the day holding 4 leaves: 3 of 4.
        assert!((judge(&q, &hits[1..4]).precision - 0.75).abs() < 1e-9);
        assert!(!o.top_inside);
        let o = judge(&q, &hits[1..]);
        assert!(o.top_inside);
        assert_eq!(judge(&q, &[]), TimeOutcome { precision: 0.0, top_inside: false });
    }
}
