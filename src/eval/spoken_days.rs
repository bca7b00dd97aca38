//! The second clock's table (SPEC §5.1, issue 45): for every day a conversation's leaves speak
//! of while said on another day — told later ("yesterday's dinner", said the day after) or
//! planned before ("next Saturday we fly", said on the Monday) — whether walk's time-only
//! answer about that day ("What happened on 6 May 2023?", its first ten hits) and
//! `cover_window` over it (its default limit) hold those leaves.
//!
//! The days and their leaves come from the store's own spoken times (`spoken_times`), so
//! the table measures how the modes use what was resolved, not whether it was resolved
//! right: that is judged by hand on a sample (BENCHMARKS, "Two clocks").

use super::time_questions::JUDGED;
use crate::error::Result;
use crate::reader::MemoryReader;
use crate::retrieval::{CoverWindowArgs, Scope, WalkArgs, WalkParams, cover_window, walk};
use crate::store::SpokenReads;
use crate::types::NodeId;
use chrono::{DateTime, Datelike};
use std::collections::{BTreeMap, HashSet};

const DAY_MS: i64 = 86_400_000;

/// `cover_window`'s default limit (SPEC §4).
const COVER_LIMIT: usize = 200;

/// How a leaf speaks of a day it was not said on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Told {
    /// Said before it: a plan.
    Before,
    /// Said after it: a memory.
    Later,
}

impl Told {
    fn name(self) -> &'static str {
        match self {
            Told::Before => "planned-before",
            Told::Later => "told-later",
        }
    }
}

/// One day's question and its told leaves.
#[derive(Debug, Clone, PartialEq)]
pub struct SpokenDay {
    /// `[first ms, last ms]` of the UTC day.
    pub day: (i64, i64),
    /// The leaves said on other days that speak of it, and how.
    pub told: Vec<(NodeId, Told)>,
}

/// Every day some leaf of `mem`'s store speaks of as one whole day while said on another.
pub fn spoken_days(mem: &MemoryReader) -> Result<Vec<SpokenDay>> {
    let mut days: BTreeMap<i64, Vec<(NodeId, Told)>> = BTreeMap::new();
    for (id, said_ms, t) in mem.store().all_spoken()? {
        if t.until_ms - t.since_ms != DAY_MS - 1 {
            continue;
        }
        let told = if said_ms < t.since_ms {
            Told::Before
        } else if said_ms > t.until_ms {
            Told::Later
        } else {
            continue;
        };
        days.entry(t.since_ms).or_default().push((id, told));
    }
    Ok(days.into_iter().map(|(start, told)| SpokenDay { day: (start, start + DAY_MS - 1), told }).collect())
}

/// "What happened on 6 May 2023?" for the day starting at `start_ms`.
pub fn day_question(start_ms: i64) -> String {
    let Some(d) = DateTime::from_timestamp_millis(start_ms) else { return String::new() };
    let name = crate::text::MONTHS[(d.month() as usize).clamp(1, 12) - 1];
    format!("What happened on {} {}{} {}?", d.day(), name[..1].to_uppercase(), &name[1..], d.year())
}

/// How many of a day's told leaves each mode's answer holds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpokenOutcome {
    /// Told leaves of this kind.
    pub told: usize,
    /// Of them, in walk's first ten hits.
    pub walk: usize,
    /// Of them, in `cover_window`'s answer.
    pub cover: usize,
}

/// Ask about `d` (the clock is the caller's: after the conversation) and count, per kind,
/// the told leaves each answer holds.
pub fn ask(mem: &MemoryReader, d: &SpokenDay, params: WalkParams) -> Result<Vec<(Told, SpokenOutcome)>> {
    let args = WalkArgs { limit: JUDGED, params, ..WalkArgs::new(day_question(d.day.0).as_str()) };
    let walked: HashSet<String> = walk(mem, &args, &Scope::all())?.hits.into_iter().map(|h| h.node_id).collect();
    let cover = CoverWindowArgs {
        since_ms: d.day.0,
        until_ms: d.day.1,
        source_id: None,
        source_kind: None,
        limit: COVER_LIMIT,
    };
    let covered: HashSet<String> =
        cover_window(mem, &cover, &Scope::all())?.hits.into_iter().map(|h| h.node_id).collect();
    let mut out: BTreeMap<Told, SpokenOutcome> = BTreeMap::new();
    for (id, told) in &d.told {
        let o = out.entry(*told).or_default();
        o.told += 1;
        o.walk += usize::from(walked.contains(id.as_str()));
        o.cover += usize::from(covered.contains(id.as_str()));
    }
    Ok(out.into_iter().collect())
}

/// The table's figures for one kind of told leaf.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct SpokenFigures {
    /// Days asked about that have such leaves.
    pub days: usize,
    /// Such leaves.
    pub leaves: usize,
    /// Share of them in walk's time-only answer (first ten hits).
    pub walk_recall: f64,
    /// Share of them in `cover_window`'s answer.
    pub cover_recall: f64,
}

/// Figures per kind, over every day asked.
pub fn aggregate(outcomes: &[(Told, SpokenOutcome)]) -> BTreeMap<String, SpokenFigures> {
    let mut out = BTreeMap::new();
    for kind in [Told::Later, Told::Before] {
        let sel: Vec<&SpokenOutcome> = outcomes.iter().filter(|(k, _)| *k == kind).map(|(_, o)| o).collect();
        let leaves: usize = sel.iter().map(|o| o.told).sum();
        if leaves == 0 {
            continue;
        }
        let share = |f: fn(&SpokenOutcome) -> usize| sel.iter().map(|o| f(o)).sum::<usize>() as f64 / leaves as f64;
        out.insert(
            kind.name().to_string(),
            SpokenFigures { days: sel.len(), leaves, walk_recall: share(|o| o.walk), cover_recall: share(|o| o.cover) },
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_asked_about_with_its_year() {
        // 6 May 2023, 00:00 UTC.
        assert_eq!(day_question(1_683_331_200_000), "What happened on 6 May 2023?");
    }

    #[test]
    fn shares_are_over_leaves_per_kind() {
        let o = |told, walk, cover| SpokenOutcome { told, walk, cover };
        let got = aggregate(&[(Told::Later, o(2, 2, 1)), (Told::Later, o(2, 1, 2)), (Told::Before, o(1, 0, 1))]);
        let later = &got["told-later"];
        assert_eq!((later.days, later.leaves), (2, 4));
        assert!((later.walk_recall - 0.75).abs() < 1e-9 && (later.cover_recall - 0.75).abs() < 1e-9);
        assert_eq!(got["planned-before"].walk_recall, 0.0);
    }
}
