//! Dates on the library side: walk's window comes from the engine's clock
//! (`OpenOptions.clock`), words of time never become `misc:` entities (in content or in a
//! question), and a parsed input can be re-based in time before it is written.

use crate::retrieval::walk::{analyse_query, read_time};
use crate::store::EntityReads;
use crate::tests::common::{Fixture, chat};
use crate::{Config, Format, Item, Parsed};
use chrono::NaiveDate;
use proptest::prelude::*;
use proptest::test_runner::RngSeed;
use std::path::Path;

/// 2023-05-10T15:00:00Z, a Wednesday.
const WED: i64 = 1_683_730_800_000;
const DAY: i64 = 86_400_000;

#[test]
fn the_window_follows_the_engine_clock_not_the_wall_clock() {
    let fx = Fixture::new(Config::default());
    fx.clock.set(WED);
    let mem = fx.open();
    let qa = analyse_query(mem.as_reader(), "what went wrong last week?");
    // 2023-05-01T00:00Z ..= 2023-05-07T23:59:59.999Z
    assert_eq!(qa.window, Some((1_683_504_000_000 - 7 * DAY, 1_683_504_000_000 - 1)));
    fx.clock.advance(7 * DAY);
    let qa = analyse_query(mem.as_reader(), "what went wrong last week?");
    assert_eq!(qa.window, Some((1_683_504_000_000, 1_683_504_000_000 + 7 * DAY - 1)));
}

#[test]
fn time_words_are_never_misc_entities() {
    let fx = Fixture::new(Config::default());
    fx.clock.set(WED);
    let mut mem = fx.open();
    // Capitalised mid-sentence time words, the way "'Last synced 3 min ago'" made `misc:last`.
    let lines = [
        "The header shows 'Last synced 3 min ago' now.",
        "We ship it 'Next Tuesday' as Priya said.",
        "Ana wrote the Spring plan and the Summer one.",
        "Planning for 'Last Week' and 'This Month' is done.",
    ];
    for (i, text) in lines.iter().enumerate() {
        mem.ingest([chat("slack:#eng", "Ben", WED - 1000 * (i as i64 + 1), text)]).unwrap();
    }
    mem.flush().unwrap();
    let misc: Vec<String> = mem
        .as_reader()
        .store()
        .all_entities()
        .unwrap()
        .into_iter()
        .map(|e| e.entity_id.0)
        .filter(|id| id.starts_with("misc:"))
        .collect();
    assert!(misc.iter().all(|id| !TIME.iter().any(|w| id.contains(w))), "{misc:?}");
    for q in ["what went wrong last week?", "plans for next Tuesday", "on May 13th", "the Spring plan this month"] {
        let qa = analyse_query(mem.as_reader(), q);
        let junk: Vec<_> = qa.entities.iter().filter(|e| e.as_str().starts_with("misc:")).collect();
        assert!(junk.is_empty(), "{q}: {junk:?}");
    }
}

const TIME: [&str; 8] = ["last", "next", "this", "week", "month", "tuesday", "spring", "summer"];

#[test]
fn a_parsed_input_moves_in_time_as_a_whole() {
    let demo = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo");
    let mut chat = Format::ChatJsonl.read(&demo.join("chat.jsonl")).unwrap();
    let before = chat.latest_ms().unwrap();
    assert_eq!(before, 1_685_092_320_000, "2023-05-26T09:12:00Z, the demo chat's last message");
    let times = |p: &Parsed| match p {
        Parsed::Items { items, .. } => items
            .iter()
            .map(|i| match i {
                Item::Chat(m) => m.ts_ms,
                Item::Email(m) => m.date_ms,
            })
            .collect::<Vec<_>>(),
        _ => unreachable!("chat is items"),
    };
    let old = times(&chat);
    chat.shift_time(-3 * DAY);
    assert_eq!(chat.latest_ms(), Some(before - 3 * DAY));
    assert!(times(&chat).iter().zip(&old).all(|(new, old)| *new == old - 3 * DAY));
    let mut notes = Format::Markdown.read(&demo.join("notes")).unwrap();
    let undated = notes.latest_ms();
    notes.shift_time(DAY);
    // A note without a time stays without one (it is dated when written).
    assert_eq!(notes.latest_ms(), undated.map(|t| t + DAY));
}

// ---- questions' dates: every window holds the days it names -----------------------------

/// The anchor of the generated questions: 2026-12-05T06:00:00Z.
const ANCHOR: i64 = 1_796_450_400_000;

/// A question naming a date or a span, and the days it names (first, last).
fn phrasing(
    template: usize,
    (y, m, d): (i32, u32, u32),
    other_day: u32,
) -> (String, NaiveDate, NaiveDate, bool) {
    let day = |d: u32| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let last_day = (28..=31).rev().find(|&x| NaiveDate::from_ymd_opt(y, m, x).is_some()).unwrap();
    let e = other_day.min(last_day);
    let (lo, hi) = (d.min(e), d.max(e));
    let name = crate::text::MONTHS[(m - 1) as usize];
    let month = name[..1].to_uppercase() + &name[1..];
    let ord = |n: u32| {
        let suffix = match (n % 10, n % 100) {
            (_, 11..=13) => "th",
            (1, _) => "st",
            (2, _) => "nd",
            (3, _) => "rd",
            _ => "th",
        };
        format!("{n}{suffix}")
    };
    // (question, first named day, last named day, read by an order the text did not fix)
    match template {
        0 => (format!("what happened on {month} {d}, {y}?"), day(d), day(d), false),
        1 => (format!("notes from {d} {month} {y}"), day(d), day(d), false),
        2 => (format!("what did we decide on the {} of {month} {y}", ord(d)), day(d), day(d), false),
        3 => (format!("the outage on {y}-{m:02}-{d:02}"), day(d), day(d), false),
        4 => (format!("between {month} {lo} and {month} {hi}, {y}"), day(lo), day(hi), false),
        5 => (format!("between {month} {hi} and {month} {lo}, {y}"), day(lo), day(hi), false),
        6 => (format!("from {month} {lo} to {hi} {y}"), day(lo), day(hi), false),
        7 => (format!("what happened between {} and {} {month} {y}?", ord(lo), ord(hi)), day(lo), day(hi), false),
        8 => (format!("the week of {month} {d}, {y}"), day(d), day(d), false),
        9 => (format!("plans in the first week of {month} {y}"), day(1), day(7), false),
        10 => (format!("the last week of {month} {y}"), day(last_day), day(last_day), false),
        11 => (format!("on {d}.{m}.{y}"), day(d), day(d), d <= 12 && d != m),
        _ => (format!("on {m}/{d}/{y}"), day(d), day(d), d <= 12 && d != m),
    }
}

fn day_start(d: NaiveDate) -> i64 {
    d.and_hms_opt(0, 0, 0).unwrap().and_utc().timestamp_millis()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        rng_seed: RngSeed::Fixed(0x6461_7465_7321),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    /// Every phrasing of a date or span makes a window holding the days it names and at most
    /// a week more either side, and an order the text did not fix is said.
    #[test]
    fn every_window_holds_the_days_it_names(
        template in 0usize..13,
        y in 1990i32..2031,
        m in 1u32..13,
        d in 1u32..29,
        other in 1u32..32,
    ) {
        let (q, first, last, ambiguous) = phrasing(template, (y, m, d), other);
        let r = read_time(&q, ANCHOR);
        let (since, until) = r.window.ok_or_else(|| TestCaseError::fail(format!("{q}: no window {r:?}")))?;
        prop_assert!(since <= day_start(first) && until >= day_start(last) + DAY - 1, "{q}: {r:?}");
        prop_assert!(since >= day_start(first) - 6 * DAY && until <= day_start(last) + 7 * DAY, "{q}: {r:?}");
        let said = r.notes.iter().any(|n| n.contains("read as"));
        // A range written backwards is said as well.
        let backwards = template == 5 && first != last;
        prop_assert_eq!(said, ambiguous || backwards, "{}: {:?}", q, r);
    }
}
