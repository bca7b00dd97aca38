//! Dates on the library side: walk's window comes from the engine's clock
//! (`OpenOptions.clock`), words of time never become `misc:` entities (in content or in a
//! question), and a parsed input can be re-based in time before it is written.

use crate::retrieval::walk::analyse_query;
use crate::store::EntityReads;
use crate::tests::common::{Fixture, chat};
use crate::{Config, Format, Item, Parsed};
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
