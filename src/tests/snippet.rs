//! Snippets (issue #15, item 2): a long leaf's hit carries the passage that matched, with
//! character offsets that index `content`; short leaves, summaries and query-less modes carry
//! none, and the JSON has no `snippet` key then; hostile content never breaks the offsets.

use crate::tests::common::*;
use crate::tests::fuzz::check_hit;
use crate::tool::call_json;
use crate::{Config, Memory, RetrievalHit, Scope, Snippet, WalkArgs, WalkParams, walk};
use serde_json::{Value, json};

/// A paragraph of ~100 words about `topic`, sharing no content word with the question.
fn filler(topic: &str) -> String {
    (0..10)
        .map(|j| format!("The {topic} ledger entry {j} lists crates, pallets, forklifts and invoices."))
        .collect::<Vec<_>>()
        .join(" ")
}

const ANSWER: &str = "My sourdough starter lives at seventy percent hydration, fed twice daily with rye flour \
     and kept near the oven so the levain doubles within six hours before every bake. \
     The sourdough loaves proof overnight in the fridge, and the hydration stays the same whatever the season, \
     because a wetter dough spreads flat on the stone and a drier one tears when it is shaped.";

/// One ~3,000-character message of five paragraphs (the fourth holds the answer), and short
/// messages around it, one of which also names sourdough.
fn store() -> (Fixture, Memory, String) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let long = [filler("north"), filler("south"), filler("east"), ANSWER.to_string(), filler("west")].join("\n\n");
    assert!(long.chars().count() > 2_500);
    let items = vec![
        chat("chat:kitchen", "Ann", T0, "Lunch at noon?"),
        chat("chat:kitchen", "Ben", T0 + MIN, &long),
        chat("chat:kitchen", "Ann", T0 + 2 * MIN, "I bought sourdough bread today."),
        chat("chat:kitchen", "Ben", T0 + 3 * MIN, "Nice, see you at noon."),
    ];
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem, long)
}

/// The snippet's offsets index the hit's content in characters, and its text is that slice.
fn check_offsets(h: &RetrievalHit) -> &Snippet {
    let s = h.snippet.as_ref().expect("a snippet");
    let by_chars: String = h.content.chars().skip(s.start).take(s.end - s.start).collect();
    assert_eq!(by_chars, s.text, "offsets index content in characters");
    assert!(s.start < s.end && s.end <= h.content.chars().count());
    s
}

#[test]
fn a_long_leaf_carries_the_paragraph_that_matches_and_short_leaves_none() {
    let (_fx, mem, long) = store();
    // Each message a hit of its own (a carried answer is cut to its passage: `walk.rs`,
    // `a_hit_that_asks_carries_its_answer`).
    let alone = WalkParams { answers: false, ..WalkParams::default() };
    let asked = |q: &str, limit: usize| WalkArgs { limit, params: alone, ..WalkArgs::new(q) };
    let r = walk(mem.as_reader(), &asked("What hydration do I keep my sourdough starter at?", 10), &Scope::all()).unwrap();
    let hit = r.hits.iter().find(|h| h.content.ends_with(&long)).expect("the long message is a hit");
    let s = check_offsets(hit);
    assert_eq!(s.text, ANSWER, "the paragraph holding the words, whole");
    let at = hit.content.find(ANSWER).unwrap();
    assert_eq!(s.start, hit.content[..at].chars().count());
    for h in r.hits.iter().filter(|h| !h.content.ends_with(&long)) {
        assert_eq!(h.snippet, None, "a short leaf has no snippet: {}", h.content);
    }
    // A question none of whose words occur: the first passage.
    let r = walk(mem.as_reader(), &asked("zyzzyva quokka", 100), &Scope::all()).unwrap();
    let hit = r.hits.iter().find(|h| h.content.ends_with(&long)).expect("the long message is a hit");
    assert_eq!(check_offsets(hit).start, 0);
}

#[test]
fn the_json_has_a_snippet_only_where_there_is_one() {
    let (_fx, mut mem, long) = store();
    let req = json!({"mode": "walk", "query": "sourdough starter hydration"});
    let v = call_json(&mut mem, &req.to_string(), &Scope::all()).unwrap();
    let hits = v["hits"].as_array().unwrap();
    assert!(hits.len() >= 2);
    for h in hits {
        check_hit(h, &Scope::all()).unwrap();
        let long_leaf = h["content"].as_str().unwrap().ends_with(&long);
        assert_eq!(h.get("snippet").is_some(), long_leaf, "{}", h["content"]);
        if long_leaf {
            let s = &h["snippet"];
            assert_eq!(s.as_object().unwrap().keys().collect::<Vec<_>>(), ["end", "start", "text"]);
            assert!(s["text"].as_str().unwrap().starts_with("My sourdough starter"));
        }
    }
}

#[test]
fn drill_down_and_query_source_with_a_query_carry_snippets_fetch_leaves_and_summaries_none() {
    let (_fx, mut mem, long) = store();
    let mut call = |req: Value| call_json(&mut mem, &req.to_string(), &Scope::all()).unwrap();
    let v = call(json!({"mode": "query_source", "source_id": "chat:kitchen", "query": "sourdough hydration"}));
    let summary = &v["hits"][0];
    assert_eq!(summary["node_kind"], "summary");
    assert!(summary.get("snippet").is_none(), "summaries get no snippet");
    let id = summary["node_id"].as_str().unwrap().to_string();
    let v = call(json!({"mode": "drill_down", "node_id": id, "query": "sourdough hydration"}));
    let leaf = v["hits"].as_array().unwrap().iter().find(|h| h["content"].as_str().unwrap().ends_with(&long)).unwrap();
    assert!(leaf["snippet"]["text"].as_str().unwrap().starts_with("My sourdough starter"), "{leaf}");
    let v = call(json!({"mode": "drill_down", "node_id": id}));
    assert!(v["hits"].as_array().unwrap().iter().all(|h| h.get("snippet").is_none()), "no query, no snippet");
    let leaf_id = leaf["node_id"].as_str().unwrap().to_string();
    let v = call(json!({"mode": "fetch_leaves", "chunk_ids": [leaf_id]}));
    assert!(v[0].get("snippet").is_none(), "fetch_leaves has no query: no snippet");
}

#[test]
fn hostile_content_keeps_offsets_valid() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let texts = [
        format!("e\u{301}\u{302}\u{303} ünïcode {}", "a\u{301}\u{20dd} ".repeat(900)),
        "🎉👩‍👩‍👧‍👦 emoji party 🇺🇳 ".repeat(300),
        "line one of crlf text\r\n\r\nsecond para\r\n".repeat(200),
        "nospacesatall".repeat(4_000),
        "words without any sentence end ".repeat(1_700),
        "\u{200b}\u{feff}zero\u{2028}width\u{2029}separators\u{85}next ".repeat(400),
    ];
    let items: Vec<_> =
        texts.iter().enumerate().map(|(i, t)| chat("chat:hostile", "Eve", T0 + i as i64 * MIN, t)).collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let mut with_snippet = 0;
    for q in ["emoji party", "crlf second para", "nospacesatall", "sentence end", "ünïcode", "zero width"] {
        let r = walk(mem.as_reader(), &WalkArgs { limit: 100, ..WalkArgs::new(q) }, &Scope::all()).unwrap();
        assert!(!r.hits.is_empty(), "{q}");
        for h in r.hits.iter().filter(|h| h.snippet.is_some()) {
            check_offsets(h);
            with_snippet += 1;
        }
        let v =
            call_json(&mut mem, &json!({"mode": "walk", "query": q, "limit": 100}).to_string(), &Scope::all()).unwrap();
        for h in v["hits"].as_array().unwrap() {
            check_hit(h, &Scope::all()).unwrap();
        }
    }
    assert!(with_snippet > 0, "long hostile leaves are cut into passages");
}
