//! The write path: sealing rules, the cascade, replace, reopen and repair, and a
//! property test of random ingest sequences against an in-memory model.

use crate::index::SearchFilter;
use crate::store::{EntityReads, NodeReads};
use crate::tests::common::*;
use crate::{Config, Document, Memory, Scope, SourceId, TreeId};
use proptest::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

fn leaves_of(mem: &Memory, source: &str) -> Vec<crate::store::NodeRow> {
    let tree = TreeId::for_source(&SourceId::from(source));
    mem.as_reader().store().tree_nodes(&tree).unwrap().into_iter().filter(|n| n.level == 0).collect()
}

fn summaries_of(mem: &Memory, source: &str, level: u32) -> Vec<crate::store::NodeRow> {
    let tree = TreeId::for_source(&SourceId::from(source));
    mem.as_reader().store().tree_nodes(&tree).unwrap().into_iter().filter(|n| n.level == level).collect()
}

#[test]
fn content_clock_seals_a_historical_import_like_a_live_stream() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    // Two bursts three hours apart, imported in one call.
    let mut items = Vec::new();
    for i in 0..5 {
        items.push(chat("slack:#eng", "Alice", T0 + i * MIN, &format!("morning note {i} about Phoenix")));
    }
    for i in 0..4 {
        items.push(chat("slack:#eng", "Bob", T0 + 3 * HOUR + i * MIN, &format!("afternoon note {i}")));
    }
    let r = mem.ingest(items).unwrap();
    assert_eq!((r.leaves, r.summaries), (9, 1), "the morning burst sealed when the afternoon began");
    let s1 = summaries_of(&mem, "slack:#eng", 1);
    assert_eq!(s1[0].child_ids.len(), 5);
    assert_eq!((s1[0].time_start_ms, s1[0].time_end_ms), (T0, T0 + 4 * MIN));
    // The afternoon stays open until the wall clock says an hour passed since it arrived.
    assert_eq!(mem.flush_due().unwrap().summaries, 0);
    fx.clock.advance(HOUR);
    assert_eq!(mem.flush_due().unwrap().summaries, 1);
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn token_budget_seals_and_fanout_cascades() {
    let cfg = Config { seal_token_budget: 40, fanout: 3, ..Config::default() };
    let fx = Fixture::new(cfg.clone());
    let mut mem = fx.open();
    // Each message is ~13 tokens: a level-1 summary every 4 messages, level 2 every 3 of those.
    let items: Vec<_> = (0..48)
        .map(|i| {
            chat("slack:#eng", "Alice", T0 + i * MIN / 10, &format!("message {i} talks about the phoenix launch plan"))
        })
        .collect();
    mem.ingest(items).unwrap();
    let l1 = summaries_of(&mem, "slack:#eng", 1);
    let l2 = summaries_of(&mem, "slack:#eng", 2);
    assert_eq!(l1.len(), 12);
    assert_eq!(l2.len(), 4);
    assert_eq!(summaries_of(&mem, "slack:#eng", 3).len(), 1);
    for s in &l1 {
        assert!(s.tokens >= 40, "sealed at the budget: {}", s.tokens);
        assert!(s.content.contains("phoenix"), "extractive text keeps the topic: {}", s.content);
    }
    check_invariants(&mem, &cfg);
}

#[test]
fn every_leaf_sits_under_exactly_one_summary_after_flush() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    for s in ["slack:#a", "slack:#b", "gmail:t1"] {
        let items: Vec<_> = (0..7).map(|i| chat(s, "Carol", T0 + i * 20 * MIN, &format!("{s} update {i}"))).collect();
        mem.ingest(items).unwrap();
    }
    mem.flush().unwrap();
    for s in ["slack:#a", "slack:#b", "gmail:t1"] {
        for leaf in leaves_of(&mem, s) {
            let p = leaf.parent_id.expect("sealed");
            let parent = mem.as_reader().store().node(p.as_str()).unwrap().unwrap();
            assert_eq!(parent.level, 1);
        }
    }
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn resending_the_same_content_is_idempotent() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let items = || (0..5).map(|i| chat("slack:#eng", "Alice", T0 + i * MIN, &format!("hello {i}"))).collect::<Vec<_>>();
    assert_eq!(mem.ingest(items()).unwrap().leaves, 5);
    let again = mem.ingest(items()).unwrap();
    assert_eq!((again.leaves, again.duplicates), (0, 5));
    assert_eq!(mem.as_reader().stats().unwrap().counts.leaves, 5);
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn replacing_a_document_leaves_no_trace_of_the_old_version() {
    let fx = Fixture::new(Config { chunk_tokens: 40, chunk_overlap_tokens: 8, ..Config::default() });
    let mut mem = fx.open();
    let body_v1 =
        "The Zeppelin project is led by Dana Whitfield. ".repeat(20) + "Contact dana@zeppelin.example for access.";
    mem.ingest(vec![chat("slack:#eng", "Erin", T0, "Erin thinks Dana Whitfield should review it.")]).unwrap();
    let v1 = Document {
        source_id: "doc:notes/plan.md".into(),
        title: "Plan".into(),
        body: body_v1,
        modified_ms: Some(T0),
        source_ref: Some("notes/plan.md".into()),
        provider: Some("markdown".into()),
    };
    let r1 = mem.ingest_document(v1.clone()).unwrap();
    assert!(r1.leaves > 3, "sliced: {r1:?}");
    assert!(mem.as_reader().store().entity("email:dana@zeppelin.example").unwrap().is_some());
    let hits =
        |mem: &Memory, q: &str| mem.as_reader().index().searcher().bm25(q, &SearchFilter::default(), 50).unwrap().1;
    assert!(hits(&mem, "zeppelin") > 0);

    let v2 = Document {
        body: "The Osprey project replaces the old plan entirely.".into(),
        modified_ms: Some(T0 + HOUR),
        ..v1
    };
    let r2 = mem.ingest_document(v2).unwrap();
    assert_eq!(r2.removed, r1.leaves);
    assert_eq!(r2.leaves, 1);
    assert_eq!(hits(&mem, "zeppelin"), 0, "no index document of v1 survives");
    assert!(mem.as_reader().store().entity("email:dana@zeppelin.example").unwrap().is_none(), "entity of v1 gone");
    // Dana is still mentioned by the chat message, but no longer co-occurs with v1's e-mail.
    let dana = mem.as_reader().store().entity("misc:dana whitfield").unwrap().expect("still mentioned in chat");
    assert_eq!(dana.mention_count, 1);
    assert_eq!(leaves_of(&mem, "doc:notes/plan.md").len(), 1);
    assert_eq!(summaries_of(&mem, "doc:notes/plan.md", 1).len(), 1, "a document seals at once");
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn reopen_sees_everything_and_a_lagging_index_is_rebuilt() {
    let fx = Fixture::new(Config::default());
    {
        let mut mem = fx.open();
        mem.ingest((0..30).map(|i| chat("slack:#eng", "Alice", T0 + i * MIN, &format!("note {i} on kestrel"))))
            .unwrap();
        mem.flush().unwrap();
    }
    let before = {
        let mem = fx.open();
        assert!(!mem.open_report().index_rebuilt, "a clean close needs no repair");
        assert_eq!(mem.open_report().vectors_added, 0);
        check_invariants(&mem, &fx.cfg);
        mem.as_reader().stats().unwrap().counts
    };
    // Lose the index entirely (as after a crash before its first commit): open rebuilds it.
    std::fs::remove_dir_all(fx.dir.path().join("index")).unwrap();
    let mem = fx.open();
    assert!(mem.open_report().index_rebuilt);
    assert_eq!(mem.as_reader().stats().unwrap().counts, before);
    assert_eq!(mem.as_reader().index().searcher().bm25("kestrel", &SearchFilter::default(), 100).unwrap().1, 31);
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn two_writer_handles_take_turns_and_lose_nothing() {
    // Two handles on one store (as the MCP server and the CLI are): each write catches up with
    // the other's, so the buffer they share seals with both handles' leaves in it.
    let fx = Fixture::new(Config::default());
    let mut a = fx.open();
    let mut b = fx.open();
    a.ingest(vec![chat("slack:#eng", "Ada", T0, "The heron migration starts Monday")]).unwrap();
    b.ingest(vec![chat("slack:#eng", "Bo", T0 + 1000, "Heron counts go in the shared sheet")]).unwrap();
    a.ingest(vec![chat("slack:#eng", "Ada", T0 + 2000, "Ada will drive the heron van")]).unwrap();
    b.flush().unwrap();
    for m in [&a, &b] {
        let counts = m.as_reader().read(|r| r.stats()).unwrap().counts;
        let summaries: u64 = counts.summaries_per_level.iter().sum();
        assert_eq!((counts.leaves, summaries, counts.vectors), (3, 1, 4), "{counts:?}");
        check_invariants(m, &fx.cfg);
    }
    let summary = a.as_reader().store().tree_summaries(&TreeId::for_source(&"slack:#eng".into())).unwrap();
    assert_eq!(summary.len(), 1);
    assert_eq!(summary[0].child_ids.len(), 3, "one summary over both handles' leaves");
    // The index reflects both: a walk through either handle finds the other's words.
    let hits = |m: &Memory| {
        let out = crate::tool::call_read_json(m.as_reader(), r#"{"mode":"walk","query":"heron van"}"#, &Scope::all())
            .unwrap();
        out["hits"].as_array().unwrap().iter().filter(|h| h["node_kind"] == "leaf").count()
    };
    assert!(hits(&b) >= 1 && hits(&a) >= 1);
}

#[test]
fn bad_items_write_nothing() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let items = vec![chat("slack:#eng", "A", T0, "fine"), chat("slack:#eng", "A", T0 + 1, "   ")];
    let err = mem.ingest(items).unwrap_err();
    assert!(err.to_string().contains("text"), "{err}");
    assert_eq!(mem.as_reader().stats().unwrap().counts.leaves, 0);
    let err = mem.ingest(vec![chat("  ", "A", T0, "x")]).unwrap_err();
    assert!(err.to_string().contains("source_id"), "{err}");
}

#[test]
fn structured_fields_become_entities_and_text_names_match_known_ones() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    mem.ingest(vec![
        chat("slack:#eng", "Caroline", T0, "I went to the support group"),
        chat("slack:#eng", "Melanie", T0 + MIN, "Caroline, that's brave! Ping @mel_b or #lgbtq"),
        crate::Item::Email(crate::EmailMessage {
            source_id: "gmail:t1".into(),
            message_id: Some("<m1@x>".into()),
            from: "Alice Smith <alice@example.com>".into(),
            to: vec!["bob@example.com".into()],
            cc: vec![],
            subject: "Phoenix".into(),
            date_ms: T0,
            body: "Caroline joins the Phoenix review.".into(),
            source_ref: None,
        }),
    ])
    .unwrap();
    let leaves = leaves_of(&mem, "slack:#eng");
    let ents: BTreeSet<String> =
        mem.as_reader().store().node_entities(&leaves[1].node_id).unwrap().into_iter().map(|e| e.0).collect();
    assert!(ents.contains("person:melanie") && ents.contains("person:caroline"), "{ents:?}");
    assert!(ents.contains("handle:mel_b") && ents.contains("hashtag:lgbtq"), "{ents:?}");
    let mail = leaves_of(&mem, "gmail:t1");
    let ents: BTreeSet<String> =
        mem.as_reader().store().node_entities(&mail[0].node_id).unwrap().into_iter().map(|e| e.0).collect();
    for e in ["person:alice smith", "email:alice@example.com", "email:bob@example.com", "person:caroline"] {
        assert!(ents.contains(e), "{e} in {ents:?}");
    }
    // SPEC §4's queries, as a host calls them.
    let edges = mem.as_reader().co_occurring_entities(&"person:caroline".into(), 10).unwrap();
    assert!(edges.iter().any(|e| e.object.0 == "person:melanie" && e.weight == 1), "{edges:?}");
    let neighbors = mem.as_reader().neighbors(&"person:caroline".into(), 10).unwrap();
    assert_eq!(neighbors, edges.iter().map(|e| e.object.clone()).collect::<Vec<_>>());
    check_invariants(&mem, &fx.cfg);
}

// ---- property test: random operation sequences against a model --------------------------

#[derive(Debug, Clone)]
enum Op {
    Chat {
        source: usize,
        gap_min: i64,
        author: usize,
        word: usize,
    },
    Doc {
        doc: usize,
        words: usize,
        word: usize,
    },
    DeleteDoc {
        doc: usize,
    },
    /// `memtree forget --source` on a chat source: its summaries, entity counts and edges go too.
    ForgetChat {
        source: usize,
    },
    /// `memtree forget --leaf` on one leaf of a chat or a document (the `pick`-th, modulo):
    /// the summaries above it are re-sealed without it.
    ForgetLeaf {
        source: usize,
        pick: usize,
    },
    Flush,
    AdvanceClock {
        hours: i64,
    },
    Reopen,
}

const WORDS: &[&str] = &["phoenix", "kestrel", "Dana", "osprey", "billing", "Lagos", "#launch", "@erin"];
const AUTHORS: &[&str] = &["Alice", "Bob", "Caroline"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0usize..3, 0i64..90, 0usize..3, 0usize..8).prop_map(|(source, gap_min, author, word)| Op::Chat { source, gap_min, author, word }),
        2 => (0usize..2, 1usize..120, 0usize..8).prop_map(|(doc, words, word)| Op::Doc { doc, words, word }),
        1 => (0usize..2).prop_map(|doc| Op::DeleteDoc { doc }),
        1 => (0usize..3).prop_map(|source| Op::ForgetChat { source }),
        2 => (0usize..5, 0usize..50).prop_map(|(source, pick)| Op::ForgetLeaf { source, pick }),
        1 => Just(Op::Flush),
        1 => (0i64..3).prop_map(|hours| Op::AdvanceClock { hours }),
        1 => Just(Op::Reopen),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn random_sequences_keep_the_tree_consistent(ops in proptest::collection::vec(op(), 1..40)) {
        let cfg = Config { seal_token_budget: 60, fanout: 3, chunk_tokens: 24, chunk_overlap_tokens: 4, ..Config::default() };
        let fx = Fixture::new(cfg.clone());
        let mut mem = Some(fx.open());
        // The model: the leaf contents each source must hold.
        let mut model: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        // What a forget holds back, per source: a leaf's text (issue 32).
        let mut held: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut ts = [T0; 3];
        for (step, op) in ops.iter().enumerate() {
            let m = mem.as_mut().unwrap();
            match op {
                Op::Chat { source, gap_min, author, word } => {
                    ts[*source] += gap_min * MIN;
                    let src = format!("slack:#c{source}");
                    let text = format!("step {step} mentions {} and Dana", WORDS[*word]);
                    m.ingest(vec![chat(&src, AUTHORS[*author], ts[*source], &text)]).unwrap();
                    model.entry(src).or_default().insert(format!("{}: {text}", AUTHORS[*author]));
                }
                Op::Doc { doc, words, word } => {
                    let src = format!("doc:d{doc}.md");
                    let body = (0..*words).map(|i| format!("{}{i}", WORDS[(word + i) % WORDS.len()])).collect::<Vec<_>>().join(" ");
                    let d = Document { source_id: src.as_str().into(), title: format!("D{doc}"), body, modified_ms: Some(T0 + step as i64), source_ref: None, provider: None };
                    let drafts = d.clone().into_drafts(&cfg, T0).unwrap();
                    m.ingest_document(d).unwrap();
                    let gone = held.get(&src).cloned().unwrap_or_default();
                    model.insert(src, drafts.into_iter().map(|x| x.content).filter(|c| !gone.contains(c)).collect());
                }
                Op::DeleteDoc { doc } => {
                    let src = format!("doc:d{doc}.md");
                    m.delete_source(&src.as_str().into()).unwrap();
                    model.remove(&src);
                }
                Op::ForgetChat { source } => {
                    let src = format!("slack:#c{source}");
                    m.delete_source(&src.as_str().into()).unwrap();
                    model.remove(&src);
                }
                Op::ForgetLeaf { source, pick } => {
                    let src = if *source < 3 { format!("slack:#c{source}") } else { format!("doc:d{}.md", source - 3) };
                    let leaves = leaves_of(m, &src);
                    if let Some(leaf) = leaves.get(pick % leaves.len().max(1)) {
                        let r = m.forget(&crate::Forget::Leaf(leaf.node_id.clone())).unwrap();
                        prop_assert_eq!(r.leaves.len(), 1);
                        model.get_mut(&src).unwrap().remove(&leaf.content);
                        held.entry(src).or_default().insert(leaf.content.clone());
                    }
                }
                Op::Flush => { m.flush().unwrap(); }
                Op::AdvanceClock { hours } => { fx.clock.advance(hours * HOUR); m.flush_due().unwrap(); }
                Op::Reopen => { drop(mem.take()); mem = Some(fx.open()); }
            }
        }
        let m = mem.as_ref().unwrap();
        check_invariants(m, &cfg);
        let mut got: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for tree in m.as_reader().store().trees().unwrap() {
            let leaves: BTreeSet<String> = m.as_reader().store().tree_nodes(&tree.tree_id).unwrap().into_iter().filter(|n| n.level == 0).map(|n| n.content).collect();
            got.insert(tree.tree_scope.clone(), leaves);
        }
        model.retain(|_, v| !v.is_empty());
        prop_assert_eq!(got, model);
    }
}

#[test]
fn a_corrupt_index_directory_is_rebuilt_from_the_store() {
    let fx = Fixture::new(Config::default());
    {
        let mut mem = fx.open();
        mem.ingest((0..12).map(|i| chat("slack:#eng", "Alice", T0 + i * MIN, &format!("osprey note {i}")))).unwrap();
    }
    // Garbage where tantivy's meta.json was: derived data, so open wipes and rebuilds it.
    std::fs::write(fx.dir.path().join("index").join("meta.json"), b"{not json").unwrap();
    let mem = fx.open();
    assert!(mem.open_report().index_rebuilt);
    assert_eq!(mem.as_reader().index().searcher().bm25("osprey", &SearchFilter::default(), 100).unwrap().1, 12);
    check_invariants(&mem, &fx.cfg);
}

/// The index schema as memtree wrote it up to version 2: today's fields plus `score` (a
/// constant 1.0 that version 3 dropped).
fn index_schema_v2() -> tantivy::schema::Schema {
    use tantivy::schema::{
        DateOptions, DateTimePrecision, FAST, INDEXED, IndexRecordOption, STORED, STRING, Schema, TextFieldIndexing,
        TextOptions,
    };
    let mut b = Schema::builder();
    b.add_text_field("node_id", STRING | STORED | FAST);
    for name in ["node_kind", "tree_id", "tree_scope"] {
        b.add_text_field(name, STRING);
    }
    b.add_text_field("source_kind", STRING | FAST);
    b.add_u64_field("level", INDEXED | FAST);
    let content = TextFieldIndexing::default()
        .set_tokenizer("en_stem")
        .set_index_option(IndexRecordOption::WithFreqsAndPositions);
    b.add_text_field("content", TextOptions::default().set_indexing_options(content));
    b.add_text_field("entities", STRING);
    b.add_text_field("topics", STRING);
    for name in ["time_start", "time_end"] {
        b.add_date_field(
            name,
            DateOptions::default().set_indexed().set_precision(DateTimePrecision::Milliseconds).set_fast(),
        );
    }
    b.add_f64_field("score", INDEXED | FAST);
    b.build()
}

/// Commit `index` emptied, with `payload` as memtree's commit payload.
fn commit_emptied(index: &tantivy::Index, payload: &str) {
    let mut w: tantivy::IndexWriter = index.writer_with_num_threads(1, 15_000_000).unwrap();
    w.delete_all_documents().unwrap();
    let mut commit = w.prepare_commit().unwrap();
    commit.set_payload(payload);
    commit.commit().unwrap();
}

#[test]
fn an_index_of_an_older_schema_version_is_rebuilt_not_misread() {
    let fx = Fixture::new(Config::default());
    let generation = {
        let mut mem = fx.open();
        mem.ingest((0..12).map(|i| chat("slack:#eng", "Alice", T0 + i * MIN, &format!("osprey note {i}")))).unwrap();
        mem.as_reader().store().generation().unwrap()
    };
    // An empty index of version 2's schema whose payload names the store's generation: only
    // the schema and the version in the payload say it is not today's.
    let dir = fx.dir.path().join("index");
    std::fs::remove_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    commit_emptied(
        &tantivy::Index::create_in_dir(&dir, index_schema_v2()).unwrap(),
        &format!("memtree-v2:{generation}"),
    );
    let mem = fx.open();
    assert!(mem.open_report().index_rebuilt, "an index of another schema is rebuilt");
    assert_eq!(mem.as_reader().index().searcher().bm25("osprey", &SearchFilter::default(), 100).unwrap().1, 12);
    check_invariants(&mem, &fx.cfg);
    let generation = mem.as_reader().store().generation().unwrap();
    drop(mem);

    // Today's schema under an older version's payload (a version bump with no field changed):
    // the version alone makes open rebuild it rather than trust its (emptied) contents.
    commit_emptied(&tantivy::Index::open_in_dir(&dir).unwrap(), &format!("memtree-v2:{generation}"));
    let mem = fx.open();
    assert!(mem.open_report().index_rebuilt, "an index of another version is rebuilt");
    assert_eq!(mem.as_reader().index().searcher().bm25("osprey", &SearchFilter::default(), 100).unwrap().1, 12);
    check_invariants(&mem, &fx.cfg);
}

#[test]
fn a_corrupt_database_is_a_clear_error_not_silent_loss() {
    let fx = Fixture::new(Config::default());
    {
        let mut mem = fx.open();
        mem.ingest(vec![chat("slack:#eng", "Alice", T0, "hello")]).unwrap();
    }
    let db = fx.dir.path().join(crate::store::DB_FILE);
    let _ = std::fs::remove_file(fx.dir.path().join(format!("{}-wal", crate::store::DB_FILE)));
    let _ = std::fs::remove_file(fx.dir.path().join(format!("{}-shm", crate::store::DB_FILE)));
    std::fs::write(&db, vec![0x5au8; 8192]).unwrap();
    let err = Memory::open_with(fx.dir.path(), fx.options()).err().expect("a garbage database must not open");
    // The message says where (the store), the chain why (SQLite's own words, once).
    let msg = err.chain();
    assert!(msg.starts_with("store: "), "{msg}");
    // Nothing was overwritten: the bytes on disk are still the garbage we wrote.
    assert_eq!(std::fs::read(&db).unwrap(), vec![0x5au8; 8192]);
}

#[test]
fn a_store_from_a_newer_memtree_is_refused_by_writers_and_readers() {
    let fx = Fixture::new(Config::default());
    {
        let mut mem = fx.open();
        mem.ingest(vec![chat("slack:#eng", "Alice", T0, "hello")]).unwrap();
    }
    let db = fx.dir.path().join(crate::store::DB_FILE);
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.pragma_update(None, "user_version", 99).unwrap();
    }
    for err in [
        Memory::open_with(fx.dir.path(), fx.options()).err().expect("a newer store must not open for writing"),
        crate::MemoryReader::open(fx.dir.path(), fx.options()).expect_err("nor for reading"),
    ] {
        let msg = err.to_string();
        assert!(msg.contains("schema version 99"), "{msg}");
    }
    // Refused, not downgraded: the version on disk is unchanged.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let v: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
    assert_eq!(v, 99);
}

#[test]
fn a_store_of_schema_2_migrates_and_keeps_every_entity_mention_and_edge() {
    let fx = Fixture::new(Config::default());
    let db = fx.dir.path().join(crate::store::DB_FILE);
    {
        // A store as schema 2 wrote it: text-keyed node_entities and edges, nodes_parent.
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch(include_str!("../../index_schema/sql/0001_init.sql")).unwrap();
        conn.execute_batch(include_str!("../../index_schema/sql/0002_source_hash.sql")).unwrap();
        conn.execute_batch(
            "INSERT INTO sources (source_id, source_kind, created_ms, updated_ms) VALUES ('slack:#eng', 'chat', 1, 1);
             INSERT INTO trees VALUES ('source:slack:#eng', 'source', 'slack:#eng', 'chat');
             INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, appended_ms)
               VALUES ('L01', 'source:slack:#eng', 0, 1, 'Zoe met Bob', 5, 5, 3, 5),
                      ('L02', 'source:slack:#eng', 0, 2, 'Bob and Carol', 6, 6, 3, 6);
             INSERT INTO entities VALUES ('person:zoe', 'person', 'Zoe', 1, 5), ('person:bob', 'person', 'Bob', 2, 6),
               ('person:carol', 'person', 'Carol', 1, 6);
             INSERT INTO node_entities VALUES ('L01', 'person:bob', 1), ('L01', 'person:zoe', 1),
               ('L02', 'person:bob', 1), ('L02', 'person:carol', 1);
             INSERT INTO edges VALUES ('person:bob', 'person:zoe', 1), ('person:bob', 'person:carol', 1);",
        )
        .unwrap();
        conn.pragma_update(None, "user_version", 2).unwrap();
    }
    let mut mem = fx.open();
    let store = mem.as_reader().store();
    let ents: Vec<(String, u64, i64)> = store
        .all_entities()
        .unwrap()
        .into_iter()
        .map(|e| (e.entity_id.as_str().to_string(), e.mention_count, e.last_seen_ms))
        .collect();
    assert_eq!(ents, vec![("person:bob".into(), 2, 6), ("person:carol".into(), 1, 6), ("person:zoe".into(), 1, 5)]);
    let on = |id: &str| -> Vec<String> {
        store.node_entities(&crate::NodeId::from(id)).unwrap().into_iter().map(|e| e.0).collect()
    };
    assert_eq!(on("L01"), ["person:bob", "person:zoe"]);
    assert_eq!(on("L02"), ["person:bob", "person:carol"]);
    let bob = crate::EntityId::from("person:bob");
    let edges: Vec<(String, u64)> =
        store.co_occurring(&bob, 10).unwrap().into_iter().map(|e| (e.object.0, e.weight)).collect();
    assert_eq!(edges, vec![("person:carol".to_string(), 1), ("person:zoe".to_string(), 1)]);
    // The migrated store is written to as any other: a new leaf adds to the same rows.
    mem.ingest(vec![chat("slack:#eng", "Alice", T0, "Carol and Zoe")]).unwrap();
    let store = mem.as_reader().store();
    let carol = crate::EntityId::from("person:carol");
    assert!(store.co_occurring(&carol, 10).unwrap().iter().any(|e| e.object.0 == "person:zoe"));
}
