//! walk's routing (SPEC §5): no entity → global; entities with no related pair →
//! occurrence-ranked global; a related pair → local intersection; hop tightening; defaults
//! and caps; time expressions; determinism.

use crate::tests::common::*;
use crate::tool::call_json;
use crate::{Config, Memory};
use crate::{Scope, WalkArgs, WalkParams, walk};
use serde_json::{Value, json};

fn store() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = Vec::new();
    // Alice and Bob talk about Phoenix; Quinn talks about Zephyr alone in another channel.
    for i in 0..30 {
        items.push(chat(
            "slack:#eng",
            if i % 2 == 0 { "Alice" } else { "Bob" },
            T0 + i * MIN,
            &format!("note {i}: the Phoenix build and the Kestrel rig"),
        ));
    }
    items.push(chat("slack:#lab", "Quinn", T0 + 5 * HOUR, "The Zephyr prototype is ready"));
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

fn w(mem: &mut Memory, req: Value) -> Value {
    call_json(mem, &req.to_string(), &Scope::all()).unwrap()
}

#[test]
fn no_query_entity_routes_global() {
    let (_fx, mut mem) = store();
    let v = w(&mut mem, json!({"mode": "walk", "query": "is the prototype ready?"}));
    assert_eq!(v["hits"][0]["explain"]["branch"], "global");
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("Zephyr prototype"));
    assert_eq!(v["hits"].as_array().unwrap().len(), 10, "default limit 10");
}

#[test]
fn unrelated_entities_route_to_occurrence_global() {
    let (_fx, mut mem) = store();
    // Quinn never co-occurs with Phoenix within 2 hops? Quinn–Zephyr is one component,
    // Phoenix–Alice–Bob–Kestrel another: no related pair.
    let v = w(&mut mem, json!({"mode": "walk", "query": "did Quinn mention Phoenix?"}));
    assert_eq!(v["hits"][0]["explain"]["branch"], "occurrence_global", "{v}");
    assert_eq!(v["hits"][0]["explain"]["query_entities"], json!(["misc:phoenix", "person:quinn"]));
}

/// A pair is local exactly when one leaf names both (issue 43): two hops apart through a
/// third entity is no shared evidence, and a pair sharing a leaf is found however many other
/// entities one of them co-occurs with. The old bounded BFS expanded a node's 256 strongest
/// neighbours (ties by id) and missed this one: from `misc:albatross` (the first id) its
/// 300 one-leaf neighbours `misc:mar…` and its author come before `misc:zebra`, and none of
/// those lists Zebra either; the question went occurrence_global.
#[test]
fn a_pair_is_local_exactly_when_a_leaf_names_both() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = vec![
        chat("slack:#a", "Dana", T0, "then Osprey met Gannet at the dock"),
        chat("slack:#a", "Dana", T0 + MIN, "so Gannet phoned Pelican"),
    ];
    // Albatross co-occurs with 300 other names, one leaf each; only the last leaf names Zebra.
    for i in 0..300 {
        let name: String = [b'M', b'a', b'r', b'a' + (i / 26) as u8, b'a' + (i % 26) as u8].map(char::from).iter().collect();
        items.push(chat("slack:#b", "Evan", T0 + HOUR + i * MIN, &format!("today Albatross saw {name} at the lake")));
    }
    items.push(chat("slack:#b", "Evan", T0 + 9 * HOUR, "then Albatross met Zebra at the lake"));
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let branch = |mem: &mut Memory, q: &str| {
        let v = w(mem, json!({"mode": "walk", "query": q, "max_hops": 4}));
        (v["hits"][0]["explain"]["branch"].clone(), v["hits"][0]["content"].clone())
    };
    let (b, _) = branch(&mut mem, "did Osprey ever talk to Pelican?");
    assert_eq!(b, "occurrence_global", "two hops through Gannet, no leaf naming both");
    let (b, first) = branch(&mut mem, "when did Albatross meet Zebra?");
    assert_eq!(b, "local");
    assert!(first.as_str().is_some_and(|c| c.contains("Albatross met Zebra")), "{first}");
}

#[test]
fn related_pair_routes_local_with_coverage_two() {
    let (_fx, mut mem) = store();
    let v = w(&mut mem, json!({"mode": "walk", "query": "what about Phoenix and Kestrel?", "limit": 5}));
    let h = &v["hits"][0];
    assert_eq!(h["explain"]["branch"], "local", "{v}");
    assert_eq!(h["explain"]["from"], "local");
    assert!(h["explain"]["coverage"].as_u64().unwrap() >= 2, "{h}");
    assert_eq!(h["explain"]["hops"], 1, "a pair sharing leaves is one hop apart");
}

#[test]
fn limit_and_hops_are_clamped_and_blank_is_an_error() {
    let (_fx, mut mem) = store();
    let v = w(&mut mem, json!({"mode": "walk", "query": "Phoenix build", "limit": 1000, "max_hops": 99}));
    assert!(v["hits"].as_array().unwrap().len() <= 100);
    let e = call_json(&mut mem, &json!({"mode": "walk", "query": ""}).to_string(), &Scope::all()).unwrap_err();
    assert_eq!(e.to_string(), "memory_tree: walk: `query` must not be blank");
    let e = walk(mem.as_reader(), &WalkArgs::new("  "), &Scope::all()).unwrap_err();
    assert!(e.to_string().contains("blank"));
}

#[test]
fn time_expressions_and_windows() {
    let (fx, mut mem) = store();
    // The wall clock is T0 + 1000 h; the Zephyr note is ~41 days earlier: "last 60 days"
    // boosts it and the explain names the window.
    let v = w(&mut mem, json!({"mode": "walk", "query": "what happened in the last 60 days about the prototype?"}));
    assert!(v["hits"][0]["explain"]["time_window"].is_array(), "{v}");
    // time_window_days filters hard: nothing is that recent.
    let v = w(&mut mem, json!({"mode": "walk", "query": "prototype", "time_window_days": 1}));
    assert_eq!(v["total"], 0, "{v}");
    fx.clock.set(T0 + 6 * HOUR);
    let v = w(&mut mem, json!({"mode": "walk", "query": "prototype", "time_window_days": 1}));
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("Zephyr"));
}

#[test]
fn same_question_same_answer() {
    let (_fx, mut mem) = store();
    let a = w(&mut mem, json!({"mode": "walk", "query": "Phoenix build note"}));
    let b = w(&mut mem, json!({"mode": "walk", "query": "Phoenix build note"}));
    assert_eq!(a, b);
    let scores: Vec<f64> = a["hits"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
    assert!(scores.windows(2).all(|p| p[0] >= p[1]), "scores descend: {scores:?}");
}

#[test]
fn a_large_intersection_is_cut_to_the_candidate_count_keeping_the_words_best_match() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    // 30 leaves share the Phoenix–Kestrel pair; one of them also names the word asked about.
    let items: Vec<_> = (0..30)
        .map(|i| {
            let extra = if i == 17 { " overheated" } else { "" };
            let text = format!("note {i}: the Phoenix build and the Kestrel rig{extra}");
            chat("slack:#eng", if i % 2 == 0 { "Alice" } else { "Bob" }, T0 + i * MIN, &text)
        })
        .collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let mut args = WalkArgs::new("what overheated, Phoenix or Kestrel?");
    args.limit = 100;
    args.params.candidates = 4;
    let r = walk(mem.as_reader(), &args, &Scope::all()).unwrap();
    let local = r.hits.iter().filter(|h| h.explain.as_ref().is_some_and(|e| e["from"] == "local")).count();
    assert_eq!(r.hits[0].explain.as_ref().unwrap()["branch"], "local");
    assert!(local <= 4, "at most `candidates` intersection nodes reach the scorer, got {local}");
    // Without the cut every one of the 30 intersection nodes would be scored and counted.
    assert!(r.total <= 12, "the lexical and dense top 4 and the cut local set, got {}", r.total);
    // The cut keeps the intersection node the question's words match best.
    let hot = r.hits.iter().find(|h| h.content.contains("overheated")).expect("the overheated note is a hit");
    assert_eq!(hot.explain.as_ref().unwrap()["from"], "local", "{:?}", hot.explain);
}

#[test]
fn the_spec_baseline_preset_ranks_local_hits_by_coverage_first() {
    let (_fx, mem) = store();
    let mut args = WalkArgs::new("what about Phoenix and Kestrel?");
    args.limit = 100;
    args.params = WalkParams::spec_baseline();
    let r = walk(mem.as_reader(), &args, &Scope::all()).unwrap();
    let ex: Vec<&Value> = r.hits.iter().map(|h| h.explain.as_ref().unwrap()).collect();
    assert_eq!(ex[0]["branch"], "local");
    // Every intersection hit before the global fill, each scored coverage + relevance.
    let locals = ex.iter().take_while(|e| e["from"] == "local").count();
    assert!(locals > 0 && ex[locals..].iter().all(|e| e["from"] == "global_fill"), "{ex:?}");
    for (h, e) in r.hits.iter().zip(&ex).take(locals) {
        let cov = e["coverage"].as_f64().unwrap();
        assert!(cov >= 2.0 && (h.score - cov - e["signals"]["fused"].as_f64().unwrap()).abs() < 1e-12, "{e}");
    }
    // The default keeps the fused order: no hit is scored above its fused relevance.
    let r = walk(
        mem.as_reader(),
        &WalkArgs { limit: 100, ..WalkArgs::new("what about Phoenix and Kestrel?") },
        &Scope::all(),
    )
    .unwrap();
    for h in &r.hits {
        let e = h.explain.as_ref().unwrap();
        assert_eq!(h.score, e["signals"]["fused"].as_f64().unwrap());
        assert_ne!(e["from"], "global_fill");
    }
}

/// A turn of a user–assistant chat in `source`: the user's (`Role::Person`, author "User")
/// or the assistant's (author "Assistant").
fn turn(source: &str, role: crate::Role, at: i64, text: &str) -> crate::Item {
    let author = if role == crate::Role::Assistant { "Assistant" } else { "User" };
    let mut item = chat(source, author, at, text);
    if let crate::Item::Chat(m) = &mut item {
        m.role = role;
    }
    item
}

/// A user–assistant chat: the user's plan and the assistant's answer restating it.
fn assistant_store() -> (Fixture, Memory) {
    use crate::Role::{Assistant, Person};
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let user = turn("app:assistant", Person, T0, "My first sprint on the budget tracker ends on March 15.");
    let reply = turn(
        "app:assistant",
        Assistant,
        T0 + MIN,
        "Great: with the budget tracker sprint ending March 15, I recommend finishing the sprint backlog first.",
    );
    mem.ingest([user, reply]).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

#[test]
fn the_users_words_rank_above_the_assistants_restatement() {
    // The scorer's role prior, each message a hit of its own: the reply is not carried as the
    // user's turn's `answer` here (`a_hit_that_asks_carries_its_answer` covers that).
    let (_fx, mut mem) = assistant_store();
    let alone = WalkParams { answers: false, ..WalkParams::default() };
    let first = |mem: &mut Memory, params: WalkParams, q: &str| {
        let args = WalkArgs { params, ..WalkArgs::new(q) };
        walk(mem.as_reader(), &args, &Scope::all()).unwrap().hits[0].content.clone()
    };
    let q = "when does the budget tracker sprint end?";
    // The role prior takes `assistant` (0.3) off the reply's score, and the user's own words
    // come first.
    let score_of = |mem: &mut Memory, params: WalkParams, who: &str| {
        let args = WalkArgs { params, ..WalkArgs::new(q) };
        let hits = walk(mem.as_reader(), &args, &Scope::all()).unwrap().hits;
        hits.iter().find(|h| h.content.starts_with(who)).map(|h| h.score).unwrap()
    };
    let neutral = WalkParams { assistant: 0.0, answers: false, ..WalkParams::default() };
    let lowered = score_of(&mut mem, neutral, "Assistant:") - score_of(&mut mem, alone, "Assistant:");
    assert!((lowered - 0.3).abs() < 1e-9, "{lowered}");
    assert!(first(&mut mem, alone, q).starts_with("User:"));
    // A question about what the assistant advised lifts the prior.
    let asked = "what did you recommend for the budget tracker sprint?";
    assert!(first(&mut mem, alone, asked).starts_with("Assistant:"));
}

#[test]
fn a_hit_that_asks_carries_its_answer() {
    use crate::Role::{Assistant, Person};
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    // A long reply (past one passage): the answer is its passage that says it.
    let filler = |topic: &str| {
        format!("About {topic}: ").to_string() + &format!("the {topic} notes go on at length here. ").repeat(12)
    };
    let long = [
        filler("logging"),
        "For the billing service container, the base image to use is python:3.11-slim: small, and it has the wheels your dependencies need.".to_string(),
        filler("metrics"),
    ]
    .join("\n\n");
    let said = [
        (Person, "Which base image should I use for the billing service container?"),
        (Assistant, long.as_str()),
        (Person, "Thanks. Lunch now."),
        (Assistant, "Enjoy your lunch."),
    ];
    let turns: Vec<_> =
        said.iter().enumerate().map(|(i, (who, text))| turn("app:assistant", *who, T0 + i as i64 * MIN, text)).collect();
    mem.ingest(turns).unwrap();
    mem.flush().unwrap();
    let q = "which base image for the billing service container?";
    let r = walk(mem.as_reader(), &WalkArgs::new(q), &Scope::all()).unwrap();
    let top = &r.hits[0];
    assert!(top.content.contains("Which base image"), "{}", top.content);
    let answer = top.answer.as_ref().expect("the question carries its reply");
    assert!(answer.content.contains("python:3.11-slim"), "{}", answer.content);
    assert!(answer.content.len() < long.len() && !answer.content.contains("logging"), "cut: {}", answer.content);
    let [from, to] = [0, 1].map(|i| answer.explain.as_ref().unwrap()["passage_of_content"][i].as_u64().unwrap() as usize);
    let whole: String = format!("Assistant: {long}").chars().skip(from).take(to - from).collect();
    assert_eq!(whole, answer.content, "the range names the passage in the whole reply");
    // Given once: the reply is not a hit of its own further down.
    assert!(r.hits.iter().all(|h| h.node_id != answer.node_id));
    // A reply ranked above its question is not given again: asked in the reply's own words,
    // the reply ranks first and nothing carries it.
    let r = walk(mem.as_reader(), &WalkArgs::new("python slim wheels for my dependencies"), &Scope::all()).unwrap();
    assert!(r.hits[0].content.contains("python:3.11-slim"), "{}", r.hits[0].content);
    assert!(r.hits.iter().filter_map(|h| h.answer.as_ref()).all(|a| !a.content.contains("python:3.11-slim")));
    // Off, each message is a hit of its own.
    let alone = WalkArgs { params: WalkParams { answers: false, ..WalkParams::default() }, ..WalkArgs::new(q) };
    let r = walk(mem.as_reader(), &alone, &Scope::all()).unwrap();
    assert!(r.hits.iter().all(|h| h.answer.is_none()));
    assert!(r.hits.iter().any(|h| h.content.contains("python:3.11-slim")));
}

/// A user–assistant chat over five days, one exchange a day (each its own session, sealed
/// by the next day's): the budget tracker's login, lunch, its charts, its deployment, and a
/// last unrelated day that seals the deployment's session.
fn history_store() -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let days = [
        (
            "I started the budget tracker: the login page with password hashing.",
            "The login page of the budget tracker: hash passwords with a salt.",
        ),
        ("What should I get for lunch today?", "A salad, perhaps."),
        (
            "The budget tracker charts now show monthly spending per category.",
            "Charts per category make the budget tracker's spending clear.",
        ),
        (
            "I am deploying the budget tracker to Render this afternoon.",
            "For deploying the budget tracker, set the workers and the port.",
        ),
        ("Thanks, that is all for the week.", "You are welcome."),
    ];
    let mut items = Vec::new();
    for (d, (user, reply)) in days.iter().enumerate() {
        let at = T0 + d as i64 * 24 * HOUR;
        items.extend([turn("app:a", crate::Role::Person, at, user), turn("app:a", crate::Role::Assistant, at + MIN, reply)]);
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

/// The sessions of a history answer: per hit, its start and its evidence leaves' texts;
/// and every evidence leaf checked to be one of its summary's children.
fn sessions(v: &Value) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for h in v["hits"].as_array().unwrap() {
        assert_eq!(h["node_kind"], "summary", "{h}");
        assert_eq!(h["explain"]["from"], "session");
        let children: Vec<&str> = h["child_ids"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
        let mut texts = Vec::new();
        for e in h["evidence"].as_array().unwrap() {
            assert_eq!(e["node_kind"], "leaf");
            assert!(children.contains(&e["node_id"].as_str().unwrap()), "evidence under its summary: {e}");
            texts.push(e["content"].as_str().unwrap().to_string());
        }
        out.push((h["time_range_start"].as_str().unwrap().to_string(), texts));
    }
    out
}

#[test]
fn a_summary_question_is_answered_by_sessions_in_time_order_with_both_sides() {
    let (_fx, mut mem) = history_store();
    let v = w(
        &mut mem,
        json!({"mode": "walk", "query": "Can you summarise how my budget tracker progressed?", "limit": 6}),
    );
    assert_eq!(v["explain"]["history"], "summary", "{v}");
    assert_eq!(v["explain"]["order"], "time");
    let got = sessions(&v);
    // The three sessions about the tracker, oldest first, each the user's message then the
    // assistant's reply: six leaves, the limit.
    assert_eq!(got.len(), 3, "{got:?}");
    assert!(got.windows(2).all(|p| p[0].0 < p[1].0), "time order: {got:?}");
    for ((_, texts), topic) in got.iter().zip(["login", "charts", "deploying"]) {
        assert_eq!(texts.len(), 2, "{texts:?}");
        assert!(texts[0].starts_with("User:") && texts[0].contains(topic), "{texts:?}");
        assert!(texts[1].starts_with("Assistant:"), "{texts:?}");
    }
    let leaves: usize = got.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(v["explain"]["evidence_leaves"], leaves);
    // Fewer slots, fewer sessions: never more evidence leaves than the limit.
    let v = w(
        &mut mem,
        json!({"mode": "walk", "query": "Can you summarise how my budget tracker progressed?", "limit": 3}),
    );
    assert!(sessions(&v).iter().map(|(_, t)| t.len()).sum::<usize>() <= 3, "{v}");
}

#[test]
fn an_order_question_is_answered_by_one_moment_per_session_in_time_order() {
    let (_fx, mut mem) = history_store();
    let q = "In what order did I bring up the budget tracker login, charts and deployment?";
    let v = w(&mut mem, json!({"mode": "walk", "query": q, "limit": 3}));
    assert_eq!(v["explain"]["history"], "order", "{v}");
    let got = sessions(&v);
    let firsts: Vec<&str> = got.iter().map(|(_, t)| t[0].as_str()).collect();
    assert!(got.iter().all(|(_, t)| t.len() == 1), "{got:?}");
    assert!(got.windows(2).all(|p| p[0].0 < p[1].0), "time order: {got:?}");
    assert!(
        firsts[0].contains("login") && firsts[1].contains("charts") && firsts[2].contains("deploying"),
        "{firsts:?}"
    );
}

#[test]
fn a_standing_instruction_comes_up_for_a_request_of_its_kind() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = vec![chat(
        "app:a",
        "User",
        T0,
        "Always show code with syntax highlighting when I ask about implementation details.",
    )];
    // Drafts about the login that outrank the instruction on their words alone.
    for i in 0..4 {
        items.push(chat(
            "app:a",
            "User",
            T0 + (i + 1) * MIN,
            &format!("the login page of my app, draft {i}: the login feature"),
        ));
    }
    items.push(chat("app:a", "User", T0 + 20 * MIN, "Always good to hear! Never been to that cafe."));
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let rank_of_instruction = |params: WalkParams| -> Option<usize> {
        let args = WalkArgs { params, limit: 10, ..WalkArgs::new("how do I implement the login feature, in detail?") };
        let hits = walk(mem.as_reader(), &args, &Scope::all()).unwrap().hits;
        hits.iter().position(|h| h.content.contains("syntax highlighting"))
    };
    let off = rank_of_instruction(WalkParams { instruction: 0.0, ..WalkParams::default() }).unwrap_or(10);
    assert!(off >= 2, "the test needs the instruction to rank below the drafts unaided: {off}");
    assert_eq!(rank_of_instruction(WalkParams::default()), Some(0), "the prior lifts it to the top");
    let args = WalkArgs { limit: 10, ..WalkArgs::new("how do I implement the login feature, in detail?") };
    let hits = walk(mem.as_reader(), &args, &Scope::all()).unwrap().hits;
    for h in &hits {
        let flagged = h.explain.as_ref().unwrap()["signals"]["instruction"].as_bool().unwrap();
        assert_eq!(flagged, h.content.contains("syntax highlighting"), "only the instruction is one: {}", h.content);
    }
}

/// A note written a moment ago has no vector yet (a deferred writer, as the REPL and the MCP
/// server write): walk asked at once must not rank it below notes that share no word with the
/// question just because their cosine is the best of a weak lot. The dense signal abstains
/// for it, and scaling gives a weak best cosine only part of the dense share.
#[test]
fn a_note_without_its_vector_yet_is_ranked_by_its_words() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    for (id, body) in [
        ("doc:garden.md", "Tomatoes need staking in June and watering every other day."),
        ("doc:bikes.md", "The commuter bike needs a new chain and brake pads."),
    ] {
        let call = json!({"mode": "ingest_document", "source_id": id, "title": id, "body": body});
        w(&mut mem, call);
    }
    drop(mem);
    let mut deferred =
        Memory::open_with(fx.dir.path(), crate::OpenOptions { embedding: crate::Embedding::Deferred, ..fx.options() })
            .unwrap();
    let call = json!({"mode": "ingest_document", "source_id": "doc:kiln.md", "title": "Kiln",
        "body": "The pottery kiln firing schedule: bisque on Monday, glaze on Thursday."});
    w(&mut deferred, call);
    assert!(deferred.as_reader().stats().unwrap().vectors_pending > 0, "the new note waits for its vector");
    let v = w(&mut deferred, json!({"mode": "walk", "query": "kiln firing schedule", "limit": 3}));
    let first = &v["hits"][0];
    assert!(first["content"].as_str().unwrap().contains("kiln firing"), "{v:#}");
    // The other notes share no word with the question: their dense share is not the whole.
    for h in v["hits"].as_array().unwrap().iter().skip(1) {
        assert!(h["explain"]["signals"]["dense"].as_f64().unwrap() < 1.0, "{h:#}");
    }
}

/// The batched reads walk builds its hits from give each node what the one-node reads give,
/// and a node without entities or topics is simply absent.
#[test]
fn batched_hit_reads_agree_with_single_reads() {
    use crate::store::{BatchReads, EntityReads, NodeReads, TopicReads};
    let (_fx, mem) = store();
    let store = mem.as_reader().store();
    let mut rows = Vec::new();
    store
        .for_each_node(|n| {
            rows.push(n);
            Ok(())
        })
        .unwrap();
    let ids: Vec<_> = rows.iter().map(|n| n.node_id.clone()).collect();
    assert!(rows.iter().any(|n| n.level > 0), "the fixture seals summaries");
    let entities = store.entities_of_nodes(&ids).unwrap();
    let topics = store.topics_of_nodes(&ids).unwrap();
    let mut with_topics = 0;
    for id in &ids {
        assert_eq!(entities.get(id).cloned().unwrap_or_default(), store.node_entities(id).unwrap(), "{id:?}");
        let t = store.topics(id).unwrap();
        with_topics += usize::from(!t.is_empty());
        assert_eq!(topics.get(id).cloned().unwrap_or_default(), t, "{id:?}");
    }
    assert!(entities.values().all(|e| !e.is_empty()) && with_topics > 0);
    let trees: Vec<_> = rows.iter().map(|n| n.tree_id.clone()).collect();
    let mut got: Vec<_> = store.trees_by_id(&trees).unwrap().into_iter().map(|t| t.tree_id).collect();
    got.sort();
    assert_eq!(got, store.trees().unwrap().into_iter().map(|t| t.tree_id).collect::<Vec<_>>());
}

/// The row check walk applies to candidates that do not come through the index agrees with
/// the index's own filter, for the gate, a source and a window.
#[test]
fn the_row_filter_agrees_with_the_index_filter() {
    use crate::index::SearchFilter;
    use crate::store::NodeReads;
    use std::collections::BTreeSet;
    let (_fx, mem) = store();
    let reader = mem.as_reader();
    let mut rows = Vec::new();
    reader
        .store()
        .for_each_node(|n| {
            rows.push(n);
            Ok(())
        })
        .unwrap();
    let searcher = reader.index().searcher();
    let gate = |s: &[&str]| Some(s.iter().map(|x| x.to_string()).collect::<BTreeSet<_>>());
    let filters = [
        SearchFilter::default(),
        SearchFilter { scopes: gate(&["slack:#lab"]), ..SearchFilter::default() },
        SearchFilter { scopes: gate(&[]), ..SearchFilter::default() },
        SearchFilter { source_id: Some("slack:#eng".into()), ..SearchFilter::default() },
        SearchFilter { scopes: gate(&["slack:#lab"]), source_id: Some("slack:#eng".into()), ..SearchFilter::default() },
        SearchFilter { window_ms: Some((T0 + 3 * MIN, T0 + 9 * MIN)), ..SearchFilter::default() },
        SearchFilter { window_ms: Some((T0 + 4 * HOUR, T0 + 6 * HOUR)), ..SearchFilter::default() },
    ];
    for flt in &filters {
        let (mut by_index, _) = searcher.filtered(flt, 10_000).unwrap();
        by_index.sort();
        let mut by_row: Vec<_> = rows
            .iter()
            .filter(|n| flt.admits(n.tree_id.scope(), n.time_start_ms, n.time_end_ms, &n.spoken()))
            .map(|n| n.node_id.clone())
            .collect();
        by_row.sort();
        assert_eq!(by_index, by_row, "{flt:?}");
    }
}

/// Issue 33: a summary over a single child says what that child says; an answer that gives
/// the child does not give the summary beside it. A time-only answer (the window's cover
/// summaries, then its leaves) and a history answer (sessions with their evidence).
#[test]
fn a_summary_over_one_child_is_not_returned_beside_it() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    // A one-message thread, and a channel of three messages, on Monday 8 May 2023 (T0).
    let mut items = vec![chat("gmail:thread-1", "Ana", T0 + HOUR, "The March invoice is attached.")];
    for i in 0..3 {
        items.push(chat("slack:#eng", "Ben", T0 + 2 * HOUR + i * MIN, &format!("deploy step {i} done")));
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let v = w(&mut mem, json!({"mode": "walk", "query": "what happened on May 8, 2023?", "limit": 20}));
    let hits = v["hits"].as_array().unwrap();
    let summaries: Vec<&Value> = hits.iter().filter(|h| h["node_kind"] == "summary").collect();
    assert!(summaries.iter().all(|h| h["child_ids"].as_array().unwrap().len() > 1), "{v}");
    // The channel's summary still leads; the thread's one message comes once, as itself.
    assert!(summaries.iter().any(|h| h["tree_scope"] == "slack:#eng"), "{v}");
    let invoice: Vec<&Value> =
        hits.iter().filter(|h| h["content"].as_str().unwrap().contains("March invoice")).collect();
    assert_eq!(invoice.len(), 1, "{v}");
    assert_eq!(invoice[0]["node_kind"], "leaf");

    // A history answer: the session of one message is that message, not a summary over it.
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = Vec::new();
    let days: [(&str, Option<&str>); 3] = [
        ("I started the budget tracker: the login page.", Some("Hash the passwords of the login page.")),
        ("The budget tracker charts show spending per category.", None),
        ("I am deploying the budget tracker to Render.", Some("Set the workers and the port.")),
    ];
    for (d, (user, reply)) in days.iter().enumerate() {
        let at = T0 + d as i64 * 24 * HOUR;
        items.push(turn("app:a", crate::Role::Person, at, user));
        items.extend(reply.map(|r| turn("app:a", crate::Role::Assistant, at + MIN, r)));
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let q = "In what order did I bring up the budget tracker login, charts and deployment?";
    let v = w(&mut mem, json!({"mode": "walk", "query": q, "limit": 3}));
    assert_eq!(v["explain"]["history"], "order", "{v}");
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "{v}");
    for h in hits {
        if h["node_kind"] == "summary" {
            assert!(h["child_ids"].as_array().unwrap().len() > 1, "{h}");
        }
    }
    let charts = &hits[1];
    assert_eq!(charts["node_kind"], "leaf", "{v}");
    assert!(charts["content"].as_str().unwrap().contains("charts"), "{v}");
    assert_eq!(hits[0]["node_kind"], "summary", "{v}");
}

/// Issue 33: a session shown in a history answer says what its evidence says. Its headline
/// is a passage of its summary holding a sentence of the evidence, even where another
/// passage matches the question's words better; a summary that kept none of the evidence
/// (its budget went to other messages) is not shown, and the evidence comes alone.
#[test]
fn a_session_in_a_history_answer_says_what_its_evidence_says() {
    // Summaries of ~80 tokens: longer than one 50-token headline, shorter than a long session.
    let fx = Fixture::new(Config { summary_tokens: 80, ..Config::default() });
    let mut mem = fx.open();
    let redis = vec![
        "Redis Cloud keeps the session cache keys, and Redis Cloud expires them hourly.",
        "Redis Cloud replicas copy the cache keys across two Redis Cloud zones nightly.",
        "Redis Cloud metrics show cache hits, cache misses and Redis Cloud memory per shard.",
        "Redis Cloud pricing grows with cache memory, so Redis Cloud shards stay small.",
        "Redis Cloud backups of the cache run daily, and Redis Cloud restores take minutes.",
    ];
    let days: [(&str, Vec<&str>); 4] = [
        // The summary's budget goes to the assistant's Redis lines: the login is not in it.
        ("I started the budget tracker: the login page with password hashing.", redis),
        // The summary holds everything; its last passage matches the question best.
        (
            "The budget tracker charts now show monthly spending per category.",
            vec![
                "Monthly spending per category reads well as a stacked bar.",
                "Keep the colours of each category the same from month to month.",
                "Budget tracker login, budget tracker charts and budget tracker deployment: that is the usual order.",
            ],
        ),
        // One short summary: its own headline.
        ("I am deploying the budget tracker to Render this afternoon.", vec!["Set the workers and the port."]),
        ("Thanks, that is all for the week.", vec!["You are welcome."]),
    ];
    let mut items = Vec::new();
    for (d, (user, replies)) in days.iter().enumerate() {
        let at = T0 + d as i64 * 24 * HOUR;
        items.push(turn("app:a", crate::Role::Person, at, user));
        for (i, reply) in replies.iter().enumerate() {
            items.push(turn("app:a", crate::Role::Assistant, at + (i as i64 + 1) * MIN, reply));
        }
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let q = "In what order did I bring up the budget tracker login, charts and deployment?";
    let v = w(&mut mem, json!({"mode": "walk", "query": q, "limit": 3}));
    assert_eq!(v["explain"]["history"], "order", "{v}");
    assert_eq!(v["explain"]["summaries_not_stating_evidence"], 1, "{v}");
    let hits = v["hits"].as_array().unwrap();
    assert_eq!(hits.len(), 3, "{v}");
    // The login's session: its message alone, not a summary of Redis lines above it.
    assert_eq!(hits[0]["node_kind"], "leaf", "{v}");
    assert!(hits[0]["content"].as_str().unwrap().contains("login page"), "{v}");
    for (h, topic) in hits[1..].iter().zip(["charts now show", "deploying"]) {
        assert_eq!(h["node_kind"], "summary", "{h}");
        let evidence = h["evidence"][0]["content"].as_str().unwrap();
        assert!(evidence.contains(topic), "{h}");
        let said = evidence.trim_start_matches("User: ");
        let headline = h["snippet"]["text"].as_str().or(h["content"].as_str()).unwrap();
        assert!(headline.contains(said), "the headline states the evidence: {headline:?} / {said:?}");
    }
    // The charts' summary is longer than a headline, and its best match for the question's
    // words is the assistant's last line: the headline is the passage with the evidence.
    let charts = &hits[1];
    assert!(charts["snippet"].is_object(), "{charts}");
    assert!(charts["content"].as_str().unwrap().contains("the usual order"), "{charts}");
    assert!(!charts["snippet"]["text"].as_str().unwrap().contains("the usual order"), "{charts}");
}

#[test]
fn a_question_about_a_beginning_finds_the_first_record() {
    // A project's log as a chat, oldest first: the record that introduced the filter, then
    // later ones that name it again, in words closer to the question's.
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(fx.dir.path(), crate::OpenOptions { embedder: None, ..fx.options() }).unwrap();
    let log = [
        "Implement StopWords filter for the tokenizer (#292)",
        "Bump version to 0.6",
        "Stop words filter: stop words lists for French and German",
        "Docs: the stop words filter and its stop words lists",
        "Faster segment merges",
        "Fix the stop words filter on empty tokens",
        "A filter for deleted documents",
        "Words of one letter are no longer indexed",
        "Filter segments by their date",
    ];
    let items: Vec<_> =
        log.iter().enumerate().map(|(i, t)| chat("chat:log", "dev", T0 + i as i64 * 30 * HOUR, t)).collect();
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let q = "When did we first get a stop words filter?";
    let top = |params: WalkParams| {
        let r = walk(mem.as_reader(), &WalkArgs { params, ..WalkArgs::new(q) }, &Scope::all()).unwrap();
        r.hits[0].content.clone()
    };
    assert!(top(WalkParams::default()).contains("Implement StopWords filter"), "{}", top(WalkParams::default()));
    // By relevance alone a later mention, richer in the question's words, comes first.
    let later = top(WalkParams { first_mentions: false, ..WalkParams::default() });
    assert!(!later.contains("Implement StopWords filter"), "{later}");
}
