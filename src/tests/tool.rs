//! The memory_tree dispatcher and every read mode on a small fixture corpus (chat, e-mail and
//! a document with known entities and times): defaults, caps, bad input, the scope gate,
//! and cover_window against a brute-force scan.

use crate::Scope;
use crate::store::NodeReads;
use crate::tests::common::*;
use crate::tool::{call_json, memory_recall_json, memory_tree_schema};
use crate::{Config, Memory};
use proptest::prelude::*;
use serde_json::{Value, json};

/// The fixture: #eng chat over two days, an e-mail thread, a roadmap document (the whole
/// shared corpus).
fn fixture() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    ingest_corpus(&mut mem, &CHATS);
    (fx, mem)
}

/// Run a call and return its JSON, or its error text prefixed with `ERR `.
fn run(mem: &mut Memory, req: Value, scope: &Scope) -> Value {
    match call_json(mem, &req.to_string(), scope) {
        Ok(v) => v,
        Err(e) => Value::String(format!("ERR {e}")),
    }
}

/// The data-driven check: the call's result must contain `expect` (objects: every key of
/// `expect` equal; arrays: element-wise; strings: equal).
fn check(mem: &mut Memory, req: Value, expect: Value) {
    let got = run(mem, req.clone(), &Scope::all());
    assert!(contains(&got, &expect), "request {req}\n got {got}\n expected ⊇ {expect}");
}

fn contains(got: &Value, want: &Value) -> bool {
    match (got, want) {
        (Value::Object(g), Value::Object(w)) => w.iter().all(|(k, v)| g.get(k).is_some_and(|x| contains(x, v))),
        (Value::Array(g), Value::Array(w)) => g.len() == w.len() && g.iter().zip(w).all(|(a, b)| contains(a, b)),
        _ => got == want,
    }
}

fn ids(v: &Value) -> Vec<String> {
    let hits = v.get("hits").unwrap_or(v);
    hits.as_array().unwrap().iter().map(|h| h["node_id"].as_str().unwrap().to_string()).collect()
}

#[test]
fn mode_errors_are_the_exact_spec_strings() {
    let (_fx, mut mem) = fixture();
    check(&mut mem, json!({}), json!("ERR memory_tree: `mode` is required"));
    check(&mut mem, json!({"mode": 3}), json!("ERR memory_tree: `mode` is required"));
    let unknown = "ERR memory_tree: unknown mode `query_global`. Valid: search_entities, query_source, drill_down, \
                   cover_window, fetch_leaves, ingest_document, walk, smart_walk";
    check(&mut mem, json!({"mode": "query_global"}), json!(unknown));
    check(&mut mem, json!({"mode": "query_topic"}), json!(unknown.replace("query_global", "query_topic")));
    check(&mut mem, json!([1, 2]), json!("ERR memory_tree: the input must be a JSON object, got an array"));
    check(&mut mem, json!({"mode": "search_entities"}), json!("ERR memory_tree: search_entities: `query` is required"));
    check(
        &mut mem,
        json!({"mode": "search_entities", "query": 5}),
        json!("ERR memory_tree: search_entities: `query` must be a string, got a number"),
    );
    check(
        &mut mem,
        json!({"mode": "walk", "query": "x", "limit": "3"}),
        json!("ERR memory_tree: walk: `limit` must be an integer, got a string"),
    );
    check(
        &mut mem,
        json!({"mode": "walk", "query": "x", "bogus": 1}),
        json!("ERR memory_tree: walk: unknown field `bogus` (fields: query, limit, max_hops, time_window_days, since_ms, until_ms, rerank)"),
    );
    check(&mut mem, json!({"mode": "walk", "query": "   "}), json!("ERR memory_tree: walk: `query` must not be blank"));
    check(
        &mut mem,
        json!({"mode": "drill_down", "node_id": "S0", "max_depth": 0}),
        json!("ERR memory_tree: drill_down: `max_depth` must be at least 1, got 0"),
    );
    check(
        &mut mem,
        json!({"mode": "cover_window", "since_ms": 10, "until_ms": 5}),
        json!("ERR memory_tree: cover_window: `until_ms` (5) is before `since_ms` (10)"),
    );
    check(
        &mut mem,
        json!({"mode": "query_source", "source_kind": "fax"}),
        json!("ERR memory_tree: query_source: `source_kind` must be chat, email or document, got `fax`"),
    );
    for bad in [
        "",
        "   ",
        "{",
        "{\"mode\":",
        "nul",
        "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[",
    ] {
        let e = call_json(&mut mem, bad, &Scope::all()).unwrap_err().to_string();
        assert!(e.starts_with("memory_tree: "), "{bad:?} → {e}");
    }
}

#[test]
fn search_entities_matches_ids_and_surfaces_with_literal_wildcards() {
    let (_fx, mut mem) = fixture();
    // A capitalised mid-sentence name is discovered as `misc:`; case-insensitive match.
    check(
        &mut mem,
        json!({"mode": "search_entities", "query": "PHOENIX"}),
        json!([{"canonical_id": "product:phoenix", "kind": "product", "mention_count": 4, "surface": "Phoenix"}]),
    );
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "alice"}), &Scope::all());
    let got: Vec<&str> = v.as_array().unwrap().iter().map(|m| m["canonical_id"].as_str().unwrap()).collect();
    assert_eq!(got, vec!["person:alice", "email:alice@example.com"], "most-mentioned first");
    check(
        &mut mem,
        json!({"mode": "search_entities", "query": "alice", "kinds": ["email"]}),
        json!([{"canonical_id": "email:alice@example.com", "kind": "email", "mention_count": 1}]),
    );
    // `%` and `_` are literal: "a%e" matches nothing, "_" only ids with an underscore.
    check(&mut mem, json!({"mode": "search_entities", "query": "a%e"}), json!([]));
    check(&mut mem, json!({"mode": "search_entities", "query": "   "}), json!([]));
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "a", "limit": 1}), &Scope::all());
    assert_eq!(v.as_array().unwrap().len(), 1);
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "a", "limit": 1e12}), &Scope::all());
    assert!(v.as_array().unwrap().len() > 5, "huge limit clamps to the cap, not an error");
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "a", "kinds": ["robot"]}), &Scope::all());
    assert!(v.as_str().unwrap().contains("unknown entity kind `robot`"), "{v}");
    // Scope gate: Dana only speaks in #ops.
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "dana"}), &Scope::only(["slack:#eng"]));
    assert_eq!(v, json!([]));
    let v = run(&mut mem, json!({"mode": "search_entities", "query": "dana"}), &Scope::only(["slack:#ops"]));
    assert_eq!(v[0]["canonical_id"], "person:dana");
}

#[test]
fn query_source_by_id_kind_prefix_and_query() {
    let (_fx, mut mem) = fixture();
    let v = run(&mut mem, json!({"mode": "query_source", "source_id": "slack:#eng"}), &Scope::all());
    assert_eq!(v["total"], 1);
    assert_eq!(v["hits"][0]["node_kind"], "summary");
    assert_eq!(v["hits"][0]["tree_scope"], "slack:#eng");
    assert_eq!(v["hits"][0]["time_range_start"], "2023-05-08T00:00:00.000Z");
    // Chat by platform prefix: both slack channels, newest first.
    let v = run(&mut mem, json!({"mode": "query_source", "source_kind": "chat"}), &Scope::all());
    let scopes: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["tree_scope"].as_str().unwrap()).collect();
    assert_eq!(scopes, vec!["slack:#ops", "slack:#eng"]);
    let v = run(
        &mut mem,
        json!({"mode": "query_source", "source_kind": "chat", "query": "Lisbon offsite hotel"}),
        &Scope::all(),
    );
    assert_eq!(v["hits"][0]["tree_scope"], "slack:#ops");
    let v = run(&mut mem, json!({"mode": "query_source", "source_kind": "chat", "limit": 1}), &Scope::all());
    assert_eq!(
        (v["total"].as_u64(), v["truncated"].as_bool(), v["hits"].as_array().unwrap().len()),
        (Some(2), Some(true), 1)
    );
    check(
        &mut mem,
        json!({"mode": "query_source", "source_id": "slack:#nope"}),
        json!({"hits": [], "total": 0, "truncated": false}),
    );
    // The gate applies before counting.
    let v = run(&mut mem, json!({"mode": "query_source", "source_kind": "chat"}), &Scope::only(["slack:#eng"]));
    assert_eq!(v["total"], 1);
    let v = run(&mut mem, json!({"mode": "query_source", "source_kind": "chat"}), &Scope::only(Vec::<String>::new()));
    assert_eq!(v["total"], 0);
}

#[test]
fn drill_down_fetch_leaves_and_hostile_ids() {
    let (_fx, mut mem) = fixture();
    let eng = run(&mut mem, json!({"mode": "query_source", "source_id": "slack:#eng"}), &Scope::all());
    let sid = eng["hits"][0]["node_id"].as_str().unwrap().to_string();
    let kids = run(&mut mem, json!({"mode": "drill_down", "node_id": sid}), &Scope::all());
    assert_eq!(kids["total"], 4);
    assert!(kids["hits"][0]["content"].as_str().unwrap().starts_with("Alice: The Phoenix launch"));
    assert_eq!(kids["hits"][0]["score"], 1.0);
    let ranked = run(
        &mut mem,
        json!({"mode": "drill_down", "node_id": sid, "query": "billing API next week", "limit": 1}),
        &Scope::all(),
    );
    assert!(ranked["hits"][0]["content"].as_str().unwrap().starts_with("Carol: Billing API ships"), "{ranked}");
    assert_eq!(ranked["truncated"], true);
    let leaf = ids(&kids)[0].clone();
    check(&mut mem, json!({"mode": "drill_down", "node_id": leaf}), json!({"hits": [], "total": 0}));
    for hostile in ["", "../../etc/passwd", "S' OR 1=1 --", "L%", &"S".repeat(10_000)] {
        check(&mut mem, json!({"mode": "drill_down", "node_id": hostile}), json!({"hits": [], "total": 0}));
    }
    // Hidden by the gate: as if unknown.
    let v = run(&mut mem, json!({"mode": "drill_down", "node_id": sid}), &Scope::only(["slack:#ops"]));
    assert_eq!(v["total"], 0);

    let all = ids(&kids);
    let req = json!({"mode": "fetch_leaves", "chunk_ids": [all[2], "Lnope", sid, all[0]]});
    let v = run(&mut mem, req.clone(), &Scope::all());
    assert_eq!(ids(&v), vec![all[2].clone(), all[0].clone()], "input order; unknown and summary ids skipped");
    assert!(v[0]["source_ref"].as_str().unwrap().starts_with("slack:#eng/"));
    assert_eq!(run(&mut mem, req, &Scope::only(["slack:#ops"])), json!([]));
    let many: Vec<String> = (0..25).map(|_| all[1].clone()).collect();
    let v = run(&mut mem, json!({"mode": "fetch_leaves", "chunk_ids": many}), &Scope::all());
    assert_eq!(v.as_array().unwrap().len(), 20, "first 20 ids used");
    let v = run(&mut mem, json!({"mode": "fetch_leaves", "chunk_ids": [1]}), &Scope::all());
    assert_eq!(v, json!("ERR memory_tree: fetch_leaves: `chunk_ids[0]` must be a string, got a number"));
}

#[test]
fn ingest_document_confirms_and_replaces() {
    let (_fx, mut mem) = fixture();
    let v = run(
        &mut mem,
        json!({"mode": "ingest_document", "title": "Notes", "body": "Kestrel is the new codename.", "source_id": "doc:notes/k.md"}),
        &Scope::all(),
    );
    assert_eq!(v["status"], "ok");
    assert_eq!(v["leaves"], 1);
    assert_eq!(v["message"], "ingested document `doc:notes/k.md`: 1 leaves written");
    let v = run(
        &mut mem,
        json!({"mode": "ingest_document", "title": "Notes", "body": "Kestrel was renamed Osprey.", "source_id": "doc:notes/k.md"}),
        &Scope::all(),
    );
    assert_eq!(v["replaced_leaves"], 1);
    check(
        &mut mem,
        json!({"mode": "ingest_document", "title": "T", "body": "  ", "source_id": "d"}),
        json!("ERR memory_tree: ingest_document: `body` must not be blank"),
    );
    check(
        &mut mem,
        json!({"mode": "ingest_document", "title": "T", "body": "b"}),
        json!("ERR memory_tree: ingest_document: `source_id` is required"),
    );
    let v = run(&mut mem, json!({"mode": "walk", "query": "kestrel codename"}), &Scope::all());
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("Osprey"), "{v}");
}

#[test]
fn walk_answers_with_explained_hits_and_respects_the_gate() {
    let (_fx, mut mem) = fixture();
    let v = run(&mut mem, json!({"mode": "smart_walk", "query": "which hotel was confirmed?"}), &Scope::all());
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("hotel confirmed"), "{v}");
    assert_eq!(v["hits"][0]["explain"]["branch"], "global");
    // Two related entities (Phoenix and #launch share a leaf): the local branch answers.
    let v = run(&mut mem, json!({"mode": "walk", "query": "When does the Phoenix launch happen?"}), &Scope::all());
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("May 15"), "{v}");
    assert_eq!(v["hits"][0]["explain"]["branch"], "local");
    // "The Phoenix launch": a project named before its launch is a `product:`.
    assert_eq!(v["hits"][0]["explain"]["query_entities"], json!(["hashtag:launch", "product:phoenix"]));
    let v = run(&mut mem, json!({"mode": "walk", "query": "what did Carol say about billing?"}), &Scope::all());
    // "carol" names the person and the @carol handle alike.
    assert_eq!(v["hits"][0]["explain"]["query_entities"], json!(["handle:carol", "person:carol"]));
    assert!(v["hits"][0]["content"].as_str().unwrap().starts_with("Carol:"), "{v}");
    let v = run(&mut mem, json!({"mode": "walk", "query": "Lisbon offsite", "limit": 2}), &Scope::only(["slack:#eng"]));
    for h in v["hits"].as_array().unwrap() {
        assert_eq!(h["tree_scope"], "slack:#eng", "hidden sources never leak: {v}");
    }
    let a = run(&mut mem, json!({"mode": "walk", "query": "billing API"}), &Scope::all());
    let b = run(&mut mem, json!({"mode": "walk", "query": "billing API"}), &Scope::all());
    assert_eq!(a, b, "deterministic");
}

#[test]
fn schema_lists_every_mode_and_field() {
    let s = memory_tree_schema();
    let modes: Vec<&str> = s["input_schema"]["properties"]["mode"]["enum"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    assert_eq!(modes, crate::tool::MODE_NAMES);
    for m in crate::tool::MODES {
        for f in m.fields {
            assert!(s["input_schema"]["properties"].get(f.name).is_some(), "{} missing", f.name);
        }
    }
    assert_eq!(s["input_schema"]["properties"]["limit"]["type"], "integer");
}

#[test]
fn memory_recall_put_search_forget() {
    let (_fx, mut mem) = fixture();
    let put = |mem: &mut Memory, k: &str, c: &str| {
        memory_recall_json(mem, &json!({"op": "put", "namespace": "global", "key": k, "content": c}).to_string())
            .unwrap()
    };
    assert_eq!(put(&mut mem, "theme", "The user prefers dark mode")["created"], true);
    assert_eq!(put(&mut mem, "theme", "The user prefers dark mode in every app")["created"], false);
    put(&mut mem, "coffee", "Drinks oat flat white");
    let v =
        memory_recall_json(&mut mem, r#"{"namespace":"global","query":"does the user prefer dark mode?"}"#).unwrap();
    assert_eq!(v[0]["key"], "theme");
    assert_eq!(v[0]["content"], "The user prefers dark mode in every app");
    assert_eq!(v.as_array().unwrap().len(), 1, "unrelated facts score 0 and are left out");
    let v = memory_recall_json(&mut mem, r#"{"query":"coffee order"}"#).unwrap();
    assert_eq!(v[0]["key"], "coffee");
    let v = memory_recall_json(&mut mem, r#"{"op":"forget","namespace":"global","key":"theme"}"#).unwrap();
    assert_eq!(v["forgotten"], true);
    let v = memory_recall_json(&mut mem, r#"{"namespace":"global","query":"dark mode"}"#).unwrap();
    assert_eq!(v, json!([]));
    let e = memory_recall_json(&mut mem, r#"{"op":"put","namespace":"../x","key":"k","content":"c"}"#).unwrap_err();
    assert!(e.to_string().contains("unknown namespace"), "{e}");
    // Recall writes leave the full-text index in step: reopening needs no repair.
    drop(mem);
    let mem = _fx.open();
    assert!(!mem.open_report().index_rebuilt);
}

#[test]
fn memory_recall_limit_is_an_integer_as_in_memory_tree() {
    let (_fx, mut mem) = fixture();
    for i in 0..4 {
        let put = json!({"op": "put", "namespace": "global", "key": format!("k{i}"), "content": "dark mode"});
        memory_recall_json(&mut mem, &put.to_string()).unwrap();
    }
    // The one rule of both tools: a fractional number is refused, an integral float is
    // that integer, 0 or less is the default.
    let e = memory_recall_json(&mut mem, r#"{"query":"dark mode","limit":2.7}"#).unwrap_err();
    assert_eq!(e.to_string(), "memory_recall: `limit` must be an integer, got 2.7");
    let e = call_json(&mut mem, r#"{"mode":"walk","query":"dark mode","limit":2.7}"#, &Scope::all()).unwrap_err();
    assert_eq!(e.to_string(), "memory_tree: walk: `limit` must be an integer, got 2.7");
    let n = |mem: &mut Memory, limit: &str| {
        let q = format!(r#"{{"query":"dark mode","limit":{limit}}}"#);
        memory_recall_json(mem, &q).unwrap().as_array().unwrap().len()
    };
    assert_eq!(n(&mut mem, "3.0"), 3);
    assert_eq!(n(&mut mem, "2"), 2);
    assert_eq!(n(&mut mem, "0"), 4, "0 is the default (5)");
    assert_eq!(n(&mut mem, "1e30"), 4, "clamped to the cap");
    let e = memory_recall_json(&mut mem, r#"{"query":"dark mode","limit":"3"}"#).unwrap_err();
    assert_eq!(e.to_string(), "memory_recall: `limit` must be an integer, got a string");
}

// ---- cover_window against a brute-force scan ----------------------------------------------

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn cover_window_is_the_minimal_cover(
        gaps in proptest::collection::vec((0usize..3, 1i64..200), 5..60),
        windows in proptest::collection::vec((0i64..600, 0i64..600), 1..6),
    ) {
        let cfg = Config { seal_token_budget: 30, fanout: 3, ..Config::default() };
        let fx = Fixture::new(cfg);
        let mut mem = fx.open();
        let mut ts = [T0; 3];
        let items: Vec<_> = gaps.iter().enumerate().map(|(i, (s, g))| {
            ts[*s] += g * MIN;
            chat(&format!("slack:#c{s}"), "Alice", ts[*s], &format!("message {i} about the launch plan"))
        }).collect();
        mem.ingest(items).unwrap();
        // All nodes, for the brute force.
        let mut all = Vec::new();
        for t in mem.as_reader().store().trees().unwrap() {
            all.extend(mem.as_reader().store().tree_nodes(&t.tree_id).unwrap());
        }
        for (a, b) in windows {
            let (since, until) = (T0 + a.min(b) * MIN, T0 + a.max(b) * MIN);
            let inside = |n: &crate::store::NodeRow| n.time_start_ms >= since && n.time_end_ms <= until;
            let mut want: Vec<String> = all.iter().filter(|n| {
                inside(n) && n.parent_id.as_ref().is_none_or(|p| !all.iter().any(|m| &m.node_id == p && inside(m)))
            }).map(|n| n.node_id.0.clone()).collect();
            want.sort();
            let v = run(&mut mem, json!({"mode": "cover_window", "since_ms": since, "until_ms": until, "limit": 1000}), &Scope::all());
            let mut got = ids(&v);
            got.sort();
            prop_assert_eq!(&got, &want);
            // Every in-window leaf is covered exactly once: by itself or by one chosen ancestor.
            for leaf in all.iter().filter(|n| n.level == 0 && inside(n)) {
                let mut cur = Some(leaf.clone());
                let mut hits = 0;
                while let Some(n) = cur {
                    if got.contains(&n.node_id.0) { hits += 1; }
                    cur = n.parent_id.as_ref().and_then(|p| all.iter().find(|m| &m.node_id == p).cloned());
                }
                prop_assert_eq!(hits, 1);
            }
        }
    }
}

#[test]
fn cover_window_limit_does_not_starve_a_source() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let busy: Vec<_> = (0..50).map(|i| chat("slack:#busy", "A", T0 + i * 2 * HOUR, &format!("busy {i}"))).collect();
    mem.ingest(busy).unwrap();
    mem.ingest(vec![chat("slack:#quiet", "B", T0 + 99 * HOUR, "quiet one")]).unwrap();
    let v = run(
        &mut mem,
        json!({"mode": "cover_window", "since_ms": T0, "until_ms": T0 + 200 * HOUR, "limit": 5}),
        &Scope::all(),
    );
    assert_eq!(v["truncated"], true);
    let scopes: Vec<&str> = v["hits"].as_array().unwrap().iter().map(|h| h["tree_scope"].as_str().unwrap()).collect();
    assert!(scopes.contains(&"slack:#quiet"), "{scopes:?}");
    let starts: Vec<&str> =
        v["hits"].as_array().unwrap().iter().map(|h| h["time_range_start"].as_str().unwrap()).collect();
    let mut sorted = starts.clone();
    sorted.sort();
    assert_eq!(starts, sorted, "ordered by time");
}

#[test]
fn registry_aliases_resolve_at_ingest_and_at_query_time() {
    let (fx, mut mem) = fixture();
    // An alias added to the vault (as a user would in Obsidian) resolves at the next lookup.
    let mut rec = crate::EntityRecord::new("person:dana".into(), crate::EntityKind::Person, "Dana");
    rec.aliases = vec!["D-Bird".into()];
    mem.as_reader().registry().put(&rec, T0).unwrap();
    assert_eq!(mem.as_reader().registry().all().unwrap().len(), 1, "{:?}", mem.as_reader().registry().fingerprint());
    let v = run(&mut mem, json!({"mode": "walk", "query": "what did d-bird book?"}), &Scope::all());
    assert_eq!(v["hits"][0]["explain"]["query_entities"], json!(["person:dana"]), "{v}");
    // And at ingest: the alias in text becomes the canonical id.
    mem.ingest(vec![chat("slack:#ops", "Erin", T0 + 30 * HOUR, "Thanks D-Bird for the booking")]).unwrap();
    let leaves: Vec<_> = mem
        .as_reader()
        .store()
        .tree_nodes(&crate::TreeId::for_source(&"slack:#ops".into()))
        .unwrap()
        .into_iter()
        .filter(|n| n.content.contains("D-Bird"))
        .collect();
    let ents = crate::store::EntityReads::node_entities(mem.as_reader().store(), &leaves[0].node_id).unwrap();
    assert!(ents.iter().any(|e| e.0 == "person:dana"), "{ents:?}");
    drop(fx);
}
