//! Forget at every grain: one leaf, one source, a time range. The summaries above a forgotten
//! leaf are re-sealed without it, the invariants hold, and a planted token is found nowhere
//! afterwards: no SQLite text column, no index term, no summary, no file under the store.

use crate::store::{EntityReads, NodeReads};
use crate::tests::common::*;
use crate::{Config, Forget, Memory, SourceId, TreeId};
use std::path::Path;

const TOKEN: &str = "zqxjvortex42";

/// Three chat sessions of #ops sealed under a level-2 summary (fan-out 3), with the token in
/// one message of the second session.
fn planted(fx: &Fixture) -> (Memory, String) {
    let mut mem = fx.open();
    let mut items = Vec::new();
    for session in 0..3i64 {
        for turn in 0..4i64 {
            let ts = T0 + session * 3 * HOUR + turn * MIN;
            let text = if session == 1 && turn == 2 {
                format!("The vault password is {TOKEN} so Dana can restore the Kestrel backup")
            } else {
                format!("Session {session} turn {turn}: Dana checks the Kestrel backup of osprey")
            };
            items.push(chat("slack:#ops", ["Alice", "Bob"][turn as usize % 2], ts, &text));
        }
    }
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    let leaf = leaf_with(&mem, TOKEN).expect("the planted leaf");
    (mem, leaf)
}

fn ops_tree() -> TreeId {
    TreeId::for_source(&SourceId::from("slack:#ops"))
}

fn leaf_with(mem: &Memory, needle: &str) -> Option<String> {
    let store = mem.as_reader().store();
    store
        .tree_nodes(&ops_tree())
        .unwrap()
        .into_iter()
        .find(|n| n.level == 0 && n.content.contains(needle))
        .map(|n| n.node_id.0)
}

/// Every text value of every SQLite table that contains `needle` (as `table.column`).
fn sqlite_hits(store_dir: &Path, needle: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(store_dir.join(crate::store::DB_FILE)).unwrap();
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut hits = Vec::new();
    for t in tables {
        let cols: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{t}')"))
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        for c in cols {
            let n: i64 = conn
                .query_row(
                    &format!("SELECT COUNT(*) FROM \"{t}\" WHERE instr(lower(CAST(\"{c}\" AS TEXT)), ?1) > 0"),
                    [needle],
                    |r| r.get(0),
                )
                .unwrap();
            if n > 0 {
                hits.push(format!("{t}.{c}"));
            }
        }
    }
    hits
}

/// Fields of the full-text index whose term dictionary, in any segment (deleted documents
/// included), holds `term`.
fn index_term_hits(store_dir: &Path, term: &str) -> Vec<String> {
    let index = tantivy::Index::open_in_dir(store_dir.join("index")).unwrap();
    let reader = index.reader().unwrap();
    let searcher = reader.searcher();
    let mut hits = Vec::new();
    for (field, entry) in index.schema().fields() {
        if !matches!(entry.field_type(), tantivy::schema::FieldType::Str(_)) || !entry.is_indexed() {
            continue;
        }
        for seg in searcher.segment_readers() {
            let inv = seg.inverted_index(field).unwrap();
            let found = inv.terms().get(term.as_bytes()).unwrap().is_some()
                || inv.terms().get(format!("misc:{term}").as_bytes()).unwrap().is_some();
            if found {
                hits.push(entry.name().to_string());
            }
        }
    }
    hits
}

/// Files under the store whose bytes hold `needle`.
fn file_hits(store_dir: &Path, needle: &str) -> Vec<String> {
    files_under(store_dir)
        .into_iter()
        .filter(|f| std::fs::read(f).unwrap().windows(needle.len()).any(|w| w.eq_ignore_ascii_case(needle.as_bytes())))
        .map(|f| f.display().to_string())
        .collect()
}

fn cfg() -> Config {
    Config { fanout: 3, ..Config::default() }
}

#[test]
fn a_forgotten_leaf_leaves_no_trace_and_its_summaries_are_resealed() {
    let fx = Fixture::new(cfg());
    let (mut mem, leaf) = planted(&fx);
    let dir = fx.dir.path();
    // Planted: the token is in the leaf, the session summary, the index.
    assert!(!sqlite_hits(dir, TOKEN).is_empty());
    assert!(!index_term_hits(dir, TOKEN).is_empty());
    assert!(!file_hits(dir, TOKEN).is_empty(), "the byte scan sees the planted token");
    let before = mem.as_reader().stats().unwrap();

    let r = mem.forget(&Forget::Leaf(leaf.as_str().into())).unwrap();
    assert_eq!(r.leaves.len(), 1);
    assert_eq!(r.leaves[0].as_str(), leaf);
    // The session summary and the level-2 summary above it were re-sealed.
    assert_eq!(r.summaries.len(), 2, "{r:?}");
    assert_eq!(r.resealed.iter().map(|s| s.level).collect::<Vec<_>>(), vec![1, 2]);
    assert_eq!(r.resealed[0].children, 3);
    assert!(!r.source_removed);
    check_invariants(&mem, &cfg());
    let after = mem.as_reader().stats().unwrap();
    assert_eq!(after.counts.leaves, before.counts.leaves - 1);
    assert_eq!(after.counts.summaries_per_level, before.counts.summaries_per_level);

    assert_eq!(sqlite_hits(dir, TOKEN), Vec::<String>::new(), "no SQLite text column");
    assert_eq!(index_term_hits(dir, TOKEN), Vec::<String>::new(), "no index term");
    let summaries = mem.as_reader().store().tree_nodes(&ops_tree());
    assert!(summaries.unwrap().iter().all(|n| !n.content.contains(TOKEN)), "no summary");
    // Not in any file under the store either: the database's freed pages are zeroed, the
    // log truncated, the index segments rewritten, and no registry file was made of it.
    let index_dir = dir.join("index");
    let files: Vec<String> =
        file_hits(dir, TOKEN).into_iter().filter(|f| !Path::new(f).starts_with(&index_dir)).collect();
    assert_eq!(files, Vec::<String>::new(), "no file under the store");
    // The other leaves of the session are still found, and the store reopens consistent.
    assert!(leaf_with(&mem, "Session 1 turn 3").is_some());
    drop(mem);
    let mem = fx.open();
    check_invariants(&mem, &cfg());
    assert!(mem.as_reader().store().node(&leaf).unwrap().is_none());
}

#[test]
fn a_range_and_a_source_are_forgotten_with_everything_derived() {
    let fx = Fixture::new(cfg());
    let (mut mem, _) = planted(&fx);
    mem.ingest(vec![chat("slack:#eng", "Erin", T0, "Erin owns the Lagos rollout")]).unwrap();
    // The second session, by its time window: its summary goes without a successor.
    let r = mem
        .forget(&Forget::Range { source: "slack:#ops".into(), since_ms: T0 + 3 * HOUR, until_ms: T0 + 4 * HOUR })
        .unwrap();
    assert_eq!(r.leaves.len(), 4);
    assert_eq!(r.resealed.iter().map(|s| (s.level, s.children)).collect::<Vec<_>>(), vec![(2, 2)]);
    check_invariants(&mem, &cfg());
    assert!(leaf_with(&mem, TOKEN).is_none());
    // A window with nothing in it forgets nothing; a reversed one is refused.
    let none = mem.forget(&Forget::Range { source: "slack:#ops".into(), since_ms: 0, until_ms: 1 }).unwrap();
    assert!(none.leaves.is_empty() && none.resealed.is_empty());
    assert!(mem.forget(&Forget::Range { source: "slack:#ops".into(), since_ms: 2, until_ms: 1 }).is_err());

    let r = mem.forget(&Forget::Source("slack:#ops".into())).unwrap();
    assert_eq!(r.leaves.len(), 8);
    assert!(r.source_removed);
    check_invariants(&mem, &cfg());
    let store = mem.as_reader().store();
    assert!(store.entity("misc:kestrel").unwrap().is_none() || store.entity("person:dana").unwrap().is_none());
    assert!(!mem.as_reader().has_source("slack:#ops").unwrap());
    assert!(mem.as_reader().has_source("slack:#eng").unwrap());
    // Unknown ids are errors, not silent no-ops.
    let e = mem.forget(&Forget::Source("slack:#nope".into())).unwrap_err();
    assert!(matches!(e, crate::Error::SourceNotFound { .. }), "{e}");
    let e = mem.forget(&Forget::Leaf("L00000000000000000000000000000000".into())).unwrap_err();
    assert!(matches!(e, crate::Error::NodeNotFound { .. }), "{e}");
    let e = mem.forget(&Forget::Leaf("not an id".into())).unwrap_err();
    assert!(matches!(e, crate::Error::NodeNotFound { .. }), "{e}");
}

#[test]
fn forgetting_the_last_leaf_of_a_source_removes_the_source() {
    let fx = Fixture::new(cfg());
    let mut mem = fx.open();
    mem.ingest(vec![chat("slack:#one", "Erin", T0, "a single message")]).unwrap();
    let tree = TreeId::for_source(&SourceId::from("slack:#one"));
    let leaf = mem.as_reader().store().tree_nodes(&tree).unwrap()[0].node_id.clone();
    let r = mem.forget(&Forget::Leaf(leaf)).unwrap();
    assert!(r.source_removed);
    check_invariants(&mem, &cfg());
    assert_eq!(mem.as_reader().stats().unwrap().counts.sources, 0);
}
