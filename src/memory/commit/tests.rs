//! The write path's gazetteer stays what a reload from the store gives (`WriteGazetteer`):
//! after every replace and every forget (a leaf, a range, a source) and delete, the write
//! path's copy and the readers' equal `load_gazetteer` of the store, entry for entry, so that
//! extraction, and every answer, is what a reopened store gives.

use crate::Memory;
use crate::clock::ManualClock;
use crate::config::Config;
use crate::derived::load_gazetteer;
use crate::embed::HashEmbedder;
use crate::entities::{EntityRecord, Registry};
use crate::ingest::{ChatMessage, Document, Item, Role};
use crate::memory::Forget;
use crate::options::{CONTENT_DIR, OpenOptions};
use crate::store::NodeReads;
use crate::types::{EntityId, EntityKind, SourceId, TreeId};
use proptest::prelude::*;
use std::path::Path;
use std::sync::Arc;

const T0: i64 = 1_700_000_000_000;
const MIN: i64 = 60_000;

fn options() -> OpenOptions {
    OpenOptions {
        // Small budgets: chats seal sessions and cascade, documents chunk into several leaves,
        // so that a forgotten leaf re-seals summaries.
        config: Config {
            seal_token_budget: 60,
            fanout: 3,
            chunk_tokens: 24,
            chunk_overlap_tokens: 4,
            ..Config::default()
        },
        clock: Arc::new(ManualClock::new(T0 + 1000 * MIN)),
        embedder: Some(Arc::new(HashEmbedder::new(32))),
        ..OpenOptions::default()
    }
}

/// A store with a registry person, Dana Reyes ("Dee"), whose names stay when her row goes.
fn open(dir: &Path) -> Memory {
    let registry = Registry::open(&dir.join(CONTENT_DIR)).unwrap();
    if registry.all().unwrap().is_empty() {
        let mut dana = EntityRecord::new(EntityId::from("person:dana reyes"), EntityKind::Person, "Dana Reyes");
        dana.aliases.push("Dee".into());
        registry.put(&dana, T0).unwrap();
    }
    Memory::open_with(dir, options()).unwrap()
}

fn chat(source: &str, author: &str, ts: i64, text: &str) -> Item {
    Item::Chat(ChatMessage {
        source_id: source.into(),
        author: author.into(),
        ts_ms: ts,
        text: text.into(),
        source_ref: None,
        participants: vec![],
        tags: vec![],
        role: Role::Person,
        title: None,
    })
}

fn doc(source: &str, body: &str, version: i64) -> Document {
    Document {
        source_id: source.into(),
        title: format!("Note {source}"),
        body: body.into(),
        modified_ms: Some(T0 + version * MIN),
        source_ref: None,
        provider: None,
    }
}

/// The write path's gazetteer and the readers' copy both equal a reload from the store.
fn assert_in_step(mem: &Memory, after: &str) {
    let reloaded = load_gazetteer(&mem.store, &mem.shared.registry).unwrap();
    assert_eq!(mem.gazetteer.gazetteer().entries(), reloaded.entries(), "the write path's, after {after}");
    assert_eq!(mem.shared.derived().gazetteer().entries(), reloaded.entries(), "the readers', after {after}");
}

/// The ids the write path's gazetteer finds for `surface`.
fn named(mem: &Memory, surface: &str) -> Vec<String> {
    mem.gazetteer.gazetteer().get(surface).map(|(_, id)| id.to_string()).collect()
}

/// The leaves of `source`, in order, with their text.
fn leaves(mem: &Memory, source: &str) -> Vec<(crate::types::NodeId, String)> {
    let tree = TreeId::for_source(&SourceId::from(source));
    let nodes = mem.store.tree_nodes(&tree).unwrap();
    nodes.into_iter().filter(|n| n.is_leaf()).map(|n| (n.node_id, n.content)).collect()
}

fn leaf_with(mem: &Memory, source: &str, needle: &str) -> crate::types::NodeId {
    leaves(mem, source).into_iter().find(|(_, text)| text.contains(needle)).expect("a leaf with the needle").0
}

#[test]
fn replaces_and_forgets_of_every_grain_leave_the_gazetteer_a_reload_would_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut mem = open(dir.path());
    let lines = [
        ("Ada", "Lena Marsh asked Ada about the Kestrel budget #kestrel"),
        ("@sam", "Quentin Blake joined the call from Lisbon"),
        ("Ada", "Lena Marsh and Dana Reyes went over the budget again"),
        ("Grace", "Lena Marsh will send the numbers to Acme Labs Inc tomorrow"),
        ("Ada", "Acme Labs replied about the invoice"),
        ("Grace", "Lena Marsh closed the Kestrel ticket"),
    ];
    let items = lines.iter().enumerate().map(|(i, (who, text))| chat("slack:#ops", who, T0 + i as i64 * MIN, text));
    mem.ingest(items.collect::<Vec<_>>()).unwrap();
    mem.ingest_document(doc(
        "doc:a.md",
        "Maya Okafor met Lena Marsh at Bluefin Logistics. Maya Okafor owns the Kestrel roadmap now.",
        1,
    ))
    .unwrap();
    assert_in_step(&mem, "the imports");
    assert_eq!(named(&mem, "maya okafor"), ["person:maya okafor"]);
    assert_eq!(named(&mem, "bluefin"), ["organization:bluefin logistics"]);

    // A replace: Maya and Bluefin were only in the old version, Lena is elsewhere too, Orla
    // is new.
    mem.ingest_document(doc("doc:a.md", "Orla Finch met Lena Marsh about the Kestrel roadmap.", 2)).unwrap();
    assert_in_step(&mem, "a replace");
    assert!(named(&mem, "maya okafor").is_empty() && named(&mem, "maya").is_empty());
    assert!(named(&mem, "bluefin").is_empty() && named(&mem, "bluefin logistics").is_empty());
    assert_eq!(named(&mem, "lena"), ["person:lena marsh"]);
    assert_eq!(named(&mem, "orla finch"), ["person:orla finch"]);

    // A replace that names again what it dropped: the row goes and comes back in one write.
    mem.ingest_document(doc("doc:a.md", "Orla Finch met Lena Marsh about the Kestrel plan.", 3)).unwrap();
    assert_in_step(&mem, "a replace naming the same entities");
    assert_eq!(named(&mem, "orla"), ["person:orla finch"]);

    // One leaf: Quentin is named there only, Lena elsewhere too.
    let quentin = leaf_with(&mem, "slack:#ops", "Quentin");
    let receipt = mem.forget(&Forget::Leaf(quentin)).unwrap();
    assert!(receipt.entities.iter().any(|e| e.as_str() == "person:quentin blake"), "{receipt:?}");
    assert_in_step(&mem, "a one-leaf forget");
    assert!(named(&mem, "quentin blake").is_empty());
    assert_eq!(named(&mem, "lena marsh"), ["person:lena marsh"]);

    // One leaf naming a registry person: her row goes, her registry names stay.
    let dana = leaf_with(&mem, "slack:#ops", "Dana");
    mem.forget(&Forget::Leaf(dana)).unwrap();
    assert_in_step(&mem, "forgetting a registry person's only leaf");
    assert_eq!(named(&mem, "dee"), ["person:dana reyes"]);
    assert_eq!(named(&mem, "dana reyes"), ["person:dana reyes"]);

    // A range, then the whole source.
    let receipt = mem
        .forget(&Forget::Range { source: "slack:#ops".into(), since_ms: T0 + 3 * MIN, until_ms: T0 + 4 * MIN })
        .unwrap();
    assert_eq!(receipt.leaves.len(), 2);
    assert_in_step(&mem, "a range forget");
    mem.forget(&Forget::Source("slack:#ops".into())).unwrap();
    assert_in_step(&mem, "a source forget");
    // The chat's own people went with it; the tag stays, the note names it too.
    assert!(named(&mem, "sam").is_empty(), "{:?}", named(&mem, "sam"));
    assert!(named(&mem, "ada").is_empty(), "{:?}", named(&mem, "ada"));
    assert_eq!(named(&mem, "kestrel"), ["hashtag:kestrel"]);

    // A delete, then a reopen reads what the write path holds.
    mem.delete_source(&SourceId::from("doc:a.md")).unwrap();
    assert_in_step(&mem, "a delete");
    assert!(named(&mem, "orla").is_empty() && named(&mem, "kestrel").is_empty());
    let held = mem.gazetteer.gazetteer().clone();
    drop(mem);
    let mem = open(dir.path());
    assert_eq!(mem.gazetteer.gazetteer().entries(), held.entries());
}

/// One write of a random sequence.
#[derive(Debug, Clone)]
enum Op {
    Chat { source: usize, author: usize, a: usize, b: usize },
    Doc { doc: usize, a: usize, b: usize, c: usize },
    DeleteDoc { doc: usize },
    ForgetLeaf { source: usize, pick: usize },
    ForgetRange { source: usize, from: usize, len: usize },
    ForgetSource { source: usize },
    Flush,
}

/// Names that share first names and suffixes, a registry person, a handle-like author, a tag
/// and an organisation known by a shorter name, so that removals meet shared keys.
const NAMES: &[&str] = &[
    "Maya Okafor",
    "Maya Lin",
    "Lena Marsh",
    "Quentin Blake",
    "Dana Reyes",
    "Dee",
    "Bluefin Logistics",
    "Acme Labs Inc",
    "Acme Labs",
    "#kestrel",
    "@sam",
    "Lisbon",
];
const AUTHORS: &[&str] = &["Ada", "@sam", "Maya Lin", "Grace Hopper"];

fn op() -> impl Strategy<Value = Op> {
    let n = NAMES.len();
    prop_oneof![
        4 => (0usize..2, 0..AUTHORS.len(), 0..n, 0..n).prop_map(|(source, author, a, b)| Op::Chat { source, author, a, b }),
        3 => (0usize..2, 0..n, 0..n, 0..n).prop_map(|(doc, a, b, c)| Op::Doc { doc, a, b, c }),
        1 => (0usize..2).prop_map(|doc| Op::DeleteDoc { doc }),
        3 => (0usize..4, 0usize..20).prop_map(|(source, pick)| Op::ForgetLeaf { source, pick }),
        1 => (0usize..2, 0usize..8, 1usize..4).prop_map(|(source, from, len)| Op::ForgetRange { source, from, len }),
        1 => (0usize..4).prop_map(|source| Op::ForgetSource { source }),
        1 => Just(Op::Flush),
    ]
}

fn source(i: usize) -> String {
    if i < 2 { format!("slack:#c{i}") } else { format!("doc:d{}.md", i - 2) }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn random_writes_keep_the_gazetteer_a_reload_would_read(ops in proptest::collection::vec(op(), 1..24)) {
        let dir = tempfile::tempdir().unwrap();
        let mut mem = open(dir.path());
        let mut ts = T0;
        for (k, op) in ops.iter().enumerate() {
            ts += MIN;
            match op {
                Op::Chat { source: s, author, a, b } => {
                    let text = format!("{} met {} about the plan", NAMES[*a], NAMES[*b]);
                    mem.ingest([chat(&source(*s), AUTHORS[*author], ts, &text)]).unwrap();
                }
                Op::Doc { doc: d, a, b, c } => {
                    let body = format!("{} wrote to {}. Then {} replied.", NAMES[*a], NAMES[*b], NAMES[*c]);
                    mem.ingest_document(doc(&source(d + 2), &body, k as i64)).unwrap();
                }
                Op::DeleteDoc { doc: d } => {
                    mem.delete_source(&SourceId::from(source(d + 2).as_str())).unwrap();
                }
                Op::ForgetLeaf { source: s, pick } => {
                    let all = leaves(&mem, &source(*s));
                    if let Some((leaf, _)) = all.get(pick % all.len().max(1)) {
                        mem.forget(&Forget::Leaf(leaf.clone())).unwrap();
                    }
                }
                Op::ForgetRange { source: s, from, len } => {
                    let since_ms = T0 + *from as i64 * MIN;
                    let range = Forget::Range { source: source(*s).as_str().into(), since_ms, until_ms: since_ms + *len as i64 * MIN };
                    if mem.store.source(&SourceId::from(source(*s).as_str())).unwrap().is_some() {
                        mem.forget(&range).unwrap();
                    }
                }
                Op::ForgetSource { source: s } => {
                    if mem.store.source(&SourceId::from(source(*s).as_str())).unwrap().is_some() {
                        mem.forget(&Forget::Source(source(*s).as_str().into())).unwrap();
                    }
                }
                Op::Flush => {
                    mem.flush().unwrap();
                }
            }
            assert_in_step(&mem, &format!("op {k}: {op:?}"));
        }
    }
}
