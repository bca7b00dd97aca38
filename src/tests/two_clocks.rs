//! Two clocks (SPEC §5.1, issue 45) end to end: a leaf's spoken times are resolved when it is
//! written, kept with it (SQLite) and indexed (tantivy), and every mode's window admits a leaf
//! by either clock; forget, reindex, export/restore and migration keep them exact.

use crate::store::{NodeReads, Reader, SpokenReads};
use crate::tests::common::{Fixture, chat};
use crate::tool::call_json;
use crate::types::NodeId;
use crate::{Config, ExportFilter, Forget, Memory, RestoreOptions, Scope};
use serde_json::{Value, json};

/// Monday 1 May 2023, 09:00 UTC.
const MAY1: i64 = 1_682_931_600_000;
const DAY: i64 = 86_400_000;

/// The six messages, each a day apart but the last: a plan said on 1 May for
/// Saturday 6 May, a dinner of 3 May told on 4 May.
fn trip() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    fx.clock.set(MAY1 + 9 * DAY);
    let mut mem = fx.open();
    let lines = [
        (0, "Ana", "Next Saturday we fly to Lisbon for the conference"),
        (1, "Bruno", "Great, I will book the hotel near the venue"),
        (2, "Ana", "The slides for my talk are almost done"),
        (3, "Ana", "Yesterday's dinner with Bruno at the tasca was wonderful"),
        (4, "Bruno", "Do not forget your passport"),
        (7, "Ana", "Back home, the conference went well"),
    ];
    mem.ingest(lines.iter().map(|(d, who, text)| chat("chat:trip", who, MAY1 + d * DAY, text))).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

fn ask(mem: &mut Memory, req: Value) -> Value {
    call_json(mem, &req.to_string(), &Scope::all()).unwrap()
}

/// The first words of each hit, with the clock that admitted it.
fn hits(r: &Value) -> Vec<(String, String)> {
    r["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            let text = h["content"].as_str().unwrap().split_whitespace().take(3).collect::<Vec<_>>().join(" ");
            (text, h["explain"]["admitted_by"].as_str().unwrap_or("").to_string())
        })
        .collect()
}

fn has(r: &Value, first_words: &str, clock: &str) -> bool {
    hits(r).iter().any(|(t, c)| t.contains(first_words) && c == clock)
}

#[test]
fn a_window_admits_what_was_said_in_it_and_what_speaks_of_it() {
    let (_fx, mut mem) = trip();
    // A time-only question about 3 May: the slides said that day, the dinner told the next.
    let r = ask(&mut mem, json!({"mode": "walk", "query": "What happened on May 3, 2023?"}));
    assert!(has(&r, "Yesterday's dinner", "speaks_of"), "{:?}", hits(&r));
    assert!(has(&r, "The slides", "said"), "{:?}", hits(&r));
    // Asked with a word the plan does not hold, and asked as a time only: the plan of 1 May.
    for q in ["What did we plan for May 6, 2023?", "What is happening on Saturday May 6 2023?"] {
        let r = ask(&mut mem, json!({"mode": "walk", "query": q}));
        assert_eq!(hits(&r), [("Ana: Next Saturday".to_string(), "speaks_of".to_string())], "{q}");
    }
    // A topic question bounded by the day: the dinner, by its words and the time it tells.
    let r = ask(&mut mem, json!({"mode": "walk", "query": "where was the dinner on May 3, 2023?"}));
    assert_eq!(hits(&r).first().map(|h| h.1.as_str()), Some("speaks_of"), "{:?}", hits(&r));
    assert!(r["hits"][0]["speaks_of"][0][0].as_str().unwrap().starts_with("2023-05-03T00:00:00"), "{r}");
    // cover_window over 3 May: the same two.
    let may3 = MAY1 + 2 * DAY - 9 * 3_600_000;
    let r = ask(&mut mem, json!({"mode": "cover_window", "since_ms": may3, "until_ms": may3 + DAY - 1}));
    assert!(has(&r, "Yesterday's dinner", "speaks_of") && has(&r, "The slides", "said"), "{:?}", hits(&r));
}

#[test]
fn a_future_day_is_answered_from_what_was_planned_for_it() {
    let (fx, mut mem) = trip();
    // Asked on Tuesday 2 May, before the trip: Saturday is ahead.
    fx.clock.set(MAY1 + DAY + 3_600_000);
    let mut mem2 = fx.open();
    for q in ["What's coming up on Saturday?", "what is happening next Saturday?"] {
        let r = ask(&mut mem2, json!({"mode": "walk", "query": q}));
        assert_eq!(hits(&r).first().map(|h| h.0.as_str()), Some("Ana: Next Saturday"), "{q}: {r}");
    }
    drop(mem2);
    // query_source on 7 May over the last two days: the plan was said on 1 May, its summary
    // ended then, and it speaks of 6 May.
    fx.clock.set(MAY1 + 6 * DAY);
    let r = ask(&mut mem, json!({"mode": "query_source", "source_id": "chat:trip", "time_window_days": 2}));
    assert!(has(&r, "Next Saturday", "speaks_of"), "{:?}", hits(&r));
}

#[test]
fn spoken_times_follow_their_leaf_through_forget_reindex_and_restore() {
    let (fx, mut mem) = trip();
    let spoken = |mem: &Memory| -> Vec<(String, usize)> {
        let store = mem.as_reader().store();
        let mut ids = Vec::new();
        store
            .for_each_node(|n| {
                ids.push(n.node_id);
                Ok(())
            })
            .unwrap();
        let mut out: Vec<(String, usize)> =
            store.spoken_times(&ids).unwrap().into_iter().map(|(id, t)| (id.0, t.len())).collect();
        out.sort();
        out
    };
    let before = spoken(&mem);
    assert_eq!(before.len(), 2, "the plan and the dinner: {before:?}");
    let walk = |mem: &mut Memory| ask(mem, json!({"mode": "walk", "query": "What happened on May 3, 2023?"}));
    let answer = hits(&walk(&mut mem));

    // Reindex: the index is rebuilt from the store, the answer is the same.
    mem.reindex().unwrap();
    assert_eq!(hits(&walk(&mut mem)), answer);
    assert_eq!(spoken(&mem), before);

    // Export and restore: the times are derived again from the restored leaves.
    let mut archive = Vec::new();
    mem.export(&mut archive, &ExportFilter::default(), |_| {}).unwrap();
    let out = tempfile::tempdir().unwrap();
    let dir = out.path().join("restored");
    Memory::restore(&dir, &archive[..], fx.options(), &RestoreOptions::default(), |_| {}).unwrap();
    let mut back = Memory::open_with(&dir, fx.options()).unwrap();
    assert_eq!(spoken(&back), before);
    assert_eq!(hits(&walk(&mut back)), answer);

    // Forget the dinner: its times go with it, and 3 May holds only what was said that day.
    let dinner = NodeId(before.iter().map(|b| b.0.clone()).find(|id| {
        mem.as_reader().store().nodes(&[NodeId(id.clone())]).unwrap()[0].content.contains("dinner")
    }).unwrap());
    mem.forget(&Forget::Leaf(dinner.clone())).unwrap();
    assert!(spoken(&mem).iter().all(|(id, _)| *id != dinner.0));
    let rows: i64 =
        mem.as_reader().store().conn().query_row("SELECT count(*) FROM spoken_times", [], |r| r.get(0)).unwrap();
    assert_eq!(rows, 1, "the plan's one time is left, no row of the forgotten leaf");
    assert_eq!(hits(&walk(&mut mem)), [("Ana: The slides".to_string(), "said".to_string())]);
}
