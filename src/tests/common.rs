//! Fixtures and whole-store invariant checks shared by the integration tests.

use crate::Registry;
use crate::store::{EntityReads, NodeReads, Reader, SpokenReads};
use crate::{ChatMessage, Config, Document, EmailMessage, Item, ManualClock, Memory, OpenOptions};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tempfile::TempDir;

/// 2023-05-08T00:00:00Z.
pub const T0: i64 = 1_683_504_000_000;
pub const MIN: i64 = 60_000;
pub const HOUR: i64 = 3_600_000;

/// A store in a temp dir with a manual clock and a deterministic embedder.
pub struct Fixture {
    pub dir: TempDir,
    pub clock: ManualClock,
    pub cfg: Config,
}

impl Fixture {
    pub fn new(cfg: Config) -> Self {
        Fixture { dir: tempfile::tempdir().unwrap(), clock: ManualClock::new(T0 + 1000 * HOUR), cfg }
    }

    pub fn options(&self) -> OpenOptions {
        OpenOptions {
            config: self.cfg.clone(),
            clock: Arc::new(self.clock.clone()),
            embedder: Some(Arc::new(crate::HashEmbedder::new(64))),
            ..OpenOptions::default()
        }
    }

    pub fn open(&self) -> Memory {
        Memory::open_with(self.dir.path(), self.options()).unwrap()
    }
}

pub fn chat(source: &str, author: &str, ts: i64, text: &str) -> Item {
    Item::Chat(ChatMessage {
        source_id: source.into(),
        author: author.into(),
        ts_ms: ts,
        text: text.into(),
        source_ref: Some(format!("{source}/{ts}")),
        participants: vec![],
        tags: vec![],
        role: crate::Role::Person,
        title: None,
    })
}

/// A chat line of the fixture corpus: (source, author, time, text).
pub type ChatLine = (&'static str, &'static str, i64, &'static str);

/// The fixture corpus's chat: #eng over a few minutes, #ops a day later. Each test module
/// ingests the lines it needs with [`ingest_corpus`].
pub const CHATS: [ChatLine; 6] = [
    ("slack:#eng", "Alice", T0, "The Phoenix launch moves to May 15 #launch"),
    ("slack:#eng", "Bob", T0 + MIN, "Phoenix needs the billing API first, ask @carol"),
    ("slack:#eng", "Carol", T0 + 2 * MIN, "Billing API ships next week, see https://wiki.example.com/Billing"),
    ("slack:#eng", "Alice", T0 + 3 * MIN, "Great, then Phoenix is on track"),
    ("slack:#ops", "Dana", T0 + 24 * HOUR, "Offsite in Lisbon is booked"),
    ("slack:#ops", "Erin", T0 + 24 * HOUR + MIN, "Lisbon hotel confirmed for the offsite"),
];

/// The fixture corpus with known entities and times: the `chats` lines and an e-mail thread
/// in one ingest, then a roadmap document; flushed, so that it has summaries.
pub fn ingest_corpus(mem: &mut Memory, chats: &[ChatLine]) {
    let mut items: Vec<Item> = chats.iter().map(|&(source, who, ts, text)| chat(source, who, ts, text)).collect();
    items.push(Item::Email(EmailMessage {
        source_id: "gmail:thread-1".into(),
        message_id: Some("<1@x>".into()),
        from: "Frank Ocean <frank@acme.example>".into(),
        to: vec!["alice@example.com".into()],
        cc: vec![],
        subject: "Contract renewal".into(),
        date_ms: T0 + 2 * HOUR,
        body: "Acme wants to renew the contract for 100% of seats_total.".into(),
        source_ref: Some("<1@x>".into()),
    }));
    mem.ingest(items).unwrap();
    mem.ingest_document(Document {
        source_id: "doc:notes/roadmap.md".into(),
        title: "Roadmap".into(),
        body: "Q3 goals: ship Phoenix, migrate billing, hire two engineers.".into(),
        modified_ms: Some(T0 + 3 * HOUR),
        source_ref: Some("notes/roadmap.md".into()),
        provider: Some("markdown".into()),
    })
    .unwrap();
    mem.flush().unwrap();
}

/// An entity registry opened on the empty folder `dir` (returned with it, to keep it alive).
pub fn open_registry(dir: TempDir) -> (TempDir, Registry) {
    let reg = Registry::open(dir.path()).unwrap();
    (dir, reg)
}

/// Every file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// Check every structural invariant of the store against a brute-force recomputation:
/// parent/child links, envelopes, levels, buffer shape, entity counts, edge weights, and the
/// index holding exactly the stored nodes.
pub fn check_invariants(mem: &Memory, cfg: &Config) {
    let store = mem.as_reader().store();
    let mut node_count = 0u64;
    let mut leaf_entities: Vec<BTreeSet<String>> = Vec::new();
    let mut mentions: HashMap<String, u64> = HashMap::new();
    // Every leaf's stored spoken times, derived again from its row (SPEC §5.1's second clock).
    let mut spoken_rows = 0usize;
    for tree in store.trees().unwrap() {
        let nodes = store.tree_nodes(&tree.tree_id).unwrap();
        let by_id: HashMap<_, _> = nodes.iter().map(|n| (n.node_id.clone(), n)).collect();
        node_count += nodes.len() as u64;
        for n in &nodes {
            if let Some(p) = &n.parent_id {
                let parent = by_id.get(p).unwrap_or_else(|| panic!("{}: parent {p} missing", n.node_id));
                assert_eq!(parent.level, n.level + 1, "parent one level up");
                assert_eq!(
                    parent.child_ids.iter().filter(|c| **c == n.node_id).count(),
                    1,
                    "listed once by its parent"
                );
            }
            if n.level > 0 {
                assert!(!n.child_ids.is_empty(), "summary without children");
                for c in &n.child_ids {
                    let child = by_id.get(c).unwrap_or_else(|| panic!("{}: child {c} missing", n.node_id));
                    assert_eq!(child.parent_id.as_ref(), Some(&n.node_id), "child points back");
                    assert!(
                        n.time_start_ms <= child.time_start_ms && n.time_end_ms >= child.time_end_ms,
                        "envelope covers child"
                    );
                }
                if n.level >= 2 {
                    // Fewer only when a forget re-sealed it without a child that went.
                    assert!(n.child_ids.len() <= cfg.fanout, "upper summaries seal at fan-out");
                }
            } else {
                let ents: BTreeSet<String> =
                    store.node_entities(&n.node_id).unwrap().into_iter().map(|e| e.0).collect();
                for e in &ents {
                    *mentions.entry(e.clone()).or_default() += 1;
                }
                leaf_entities.push(ents);
                let stored = store.spoken_times(std::slice::from_ref(&n.node_id)).unwrap();
                let stored = stored.get(&n.node_id).cloned().unwrap_or_default();
                assert_eq!(stored, n.spoken(), "{}: stored spoken times are the derived ones", n.node_id);
                spoken_rows += stored.len();
            }
        }
        // Open buffers above level 0 hold fewer than fan-out nodes.
        let max_level = nodes.iter().map(|n| n.level).max().unwrap_or(0);
        for l in 1..=max_level {
            let open = store.buffer(&tree.tree_id, l).unwrap().len();
            assert!(open < cfg.fanout, "level {l} buffer holds {open}");
        }
    }
    // Entity mention counts and edge weights equal a recount from the leaves.
    let mut pairs: BTreeMap<(String, String), u64> = BTreeMap::new();
    for ents in &leaf_entities {
        let v: Vec<&String> = ents.iter().collect();
        for i in 0..v.len() {
            for j in i + 1..v.len() {
                *pairs.entry((v[i].clone(), v[j].clone())).or_default() += 1;
            }
        }
    }
    let all = store.all_entities().unwrap();
    for e in &all {
        assert_eq!(e.mention_count, mentions.get(e.entity_id.as_str()).copied().unwrap_or(0), "{}", e.entity_id);
        for edge in store.co_occurring(&e.entity_id, 100_000).unwrap() {
            let (a, b) = if e.entity_id.0 < edge.object.0 {
                (e.entity_id.0.clone(), edge.object.0.clone())
            } else {
                (edge.object.0.clone(), e.entity_id.0.clone())
            };
            assert_eq!(Some(&edge.weight), pairs.get(&(a.clone(), b.clone())), "edge {a}–{b}");
        }
    }
    let stored_edges: u64 = all.iter().map(|e| store.co_occurring(&e.entity_id, 100_000).unwrap().len() as u64).sum();
    assert_eq!(stored_edges, 2 * pairs.len() as u64, "no stale or missing edges");
    for id in mentions.keys() {
        assert!(store.entity(id).unwrap().is_some(), "entity row for {id}");
    }
    let all_spoken: i64 = store.conn().query_row("SELECT count(*) FROM spoken_times", [], |r| r.get(0)).unwrap();
    assert_eq!(all_spoken as usize, spoken_rows, "no spoken time of a node that is gone");
    let stats = mem.as_reader().stats().unwrap();
    assert_eq!(stats.index_docs, node_count, "index holds exactly the stored nodes");
    assert_eq!(stats.counts.vectors, node_count, "one vector per node");
}

/// This test binary run again as a child process for the one test `name` (its full path,
/// e.g. `tests::crash::…`): the child is exactly this crate's code, so a test can kill it at
/// a kill point or read its peak memory apart from the other tests'.
pub fn self_child(name: &str) -> std::process::Command {
    let mut cmd = std::process::Command::new(std::env::current_exe().expect("this test binary"));
    // `--quiet`: libtest then prints no `test <name> ... ` ahead of the test's own first line
    // (a child's output is read line by line).
    cmd.args([name, "--exact", "--nocapture", "--test-threads=1", "--quiet"]);
    cmd
}
