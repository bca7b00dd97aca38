//! The scope gate in every read mode, by search and by id: content of a hidden source is
//! never returned, never counted in `total`, and never reachable through a node id taken
//! from an unrestricted call.

use crate::Scope;
use crate::tests::common::*;
use crate::tool::call_json;
use crate::{Config, Document, Memory};
use serde_json::{Value, json};

const SECRET: &str = "Quetzal";

/// #eng (visible) and #hr (hidden) talk about the same project; a hidden document too.
fn fixture() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = Vec::new();
    for i in 0..6 {
        items.push(chat("slack:#eng", "Ada", T0 + i * MIN, &format!("Phoenix build {i} is green, Grace reviews")));
        items.push(chat(
            "slack:#hr",
            "Grace",
            T0 + i * MIN + 1,
            &format!("Phoenix {SECRET} salary band {i} for Ada is confidential"),
        ));
    }
    mem.ingest(items).unwrap();
    mem.ingest_document(Document {
        source_id: "doc:hr/reviews.md".into(),
        title: "Reviews".into(),
        body: format!("{SECRET} review notes about Phoenix and Ada."),
        modified_ms: Some(T0 + HOUR),
        source_ref: None,
        provider: None,
    })
    .unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

fn call(mem: &mut Memory, req: &Value, scope: &Scope) -> Value {
    call_json(mem, &req.to_string(), scope).unwrap_or_else(|e| panic!("{req}: {e}"))
}

/// Every node id anywhere in a result.
fn node_ids(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("node_id", Value::String(s)) => out.push(s.clone()),
                    _ => node_ids(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| node_ids(x, out)),
        _ => {}
    }
}

#[test]
fn the_gate_hides_a_source_in_every_mode_by_search_and_by_id() {
    let (_fx, mut mem) = fixture();
    let eng = Scope::only(["slack:#eng"]);
    let requests = [
        json!({"mode": "walk", "query": format!("Phoenix {SECRET} salary Ada"), "limit": 100}),
        json!({"mode": "smart_walk", "query": "What did Grace say about Phoenix?", "limit": 100}),
        json!({"mode": "query_source", "source_kind": "chat", "limit": 100}),
        json!({"mode": "query_source", "source_id": "slack:#hr", "limit": 100}),
        json!({"mode": "query_source", "source_kind": "document", "query": SECRET, "limit": 100}),
        json!({"mode": "cover_window", "since_ms": 0, "until_ms": T0 + 100 * HOUR, "limit": 200}),
        json!({"mode": "search_entities", "query": "quetzal", "limit": 100}),
    ];
    let mut hidden_ids = Vec::new();
    for req in &requests {
        // Unrestricted, the hidden content is there (so the gated call has something to hide)…
        let all = call(&mut mem, req, &Scope::all());
        let gated = call(&mut mem, req, &eng);
        let hidden_exists = all.to_string().contains(SECRET) || all.to_string().contains("slack:#hr");
        assert!(hidden_exists, "{req}: the fixture should reach hidden content: {all}");
        // …gated, it is not returned, and totals count only what is visible.
        let text = gated.to_string();
        assert!(!text.contains(SECRET) && !text.contains("slack:#hr") && !text.contains("doc:hr"), "{req}: {text}");
        if let Some(hits) = gated.get("hits").and_then(Value::as_array) {
            assert!(gated["total"].as_u64().unwrap() as usize >= hits.len());
            assert!(hits.iter().all(|h| h["tree_scope"] == "slack:#eng"), "{req}: {gated}");
            let visible_total =
                all["hits"].as_array().unwrap().iter().filter(|h| h["tree_scope"] == "slack:#eng").count();
            if all["truncated"] == false {
                assert_eq!(gated["total"].as_u64().unwrap() as usize, visible_total, "{req}: total leaks: {gated}");
            }
        }
        let mut ids = Vec::new();
        node_ids(&all, &mut ids);
        let all_hits = all.get("hits").and_then(Value::as_array).cloned().unwrap_or_default();
        hidden_ids.extend(
            all_hits
                .iter()
                .filter(|h| h["tree_scope"] != "slack:#eng")
                .filter_map(|h| h["node_id"].as_str().map(String::from)),
        );
    }
    hidden_ids.sort();
    hidden_ids.dedup();
    assert!(hidden_ids.iter().any(|i| i.starts_with('L')) && hidden_ids.iter().any(|i| i.starts_with('S')));
    // By id: ids learnt from an unrestricted call reach nothing through the gate.
    let got = call(&mut mem, &json!({"mode": "fetch_leaves", "chunk_ids": hidden_ids.clone()}), &eng);
    assert_eq!(got, json!([]), "fetch_leaves by hidden id");
    for id in &hidden_ids {
        let got = call(&mut mem, &json!({"mode": "drill_down", "node_id": id, "max_depth": 4}), &eng);
        assert_eq!(got["hits"], json!([]), "drill_down {id}");
        assert_eq!(got["total"], json!(0), "drill_down {id}");
    }
    // The empty gate shows nothing at all.
    for req in &requests {
        let got = call(&mut mem, req, &Scope::only(Vec::<String>::new()));
        let mut ids = Vec::new();
        node_ids(&got, &mut ids);
        assert!(ids.is_empty() && !got.to_string().contains(SECRET), "{req}: {got}");
    }
}
