//! Hostile-input matrix (issue #7, item 4): tables of ids that climb out of folders, carry NUL,
//! run to 10k characters or pass for another id; LIKE / BM25 / FTS metacharacters in every
//! mode that searches; invalid UTF-8 and truncated files for every importer. Each row states
//! the outcome it must have, and the store and registry are checked for anything written
//! where it should not be.

use crate::EntityRecord;
use crate::Scope;
use crate::store::EntityReads;
use crate::tests::common::*;
use crate::tests::fuzz::{
    CHAT_SEED, Format, Imported, LOCOMO_SEED, MBOX_SEED, SLACK_CHANNELS, SLACK_DAY_1, SLACK_USERS, check_err,
    check_hit, check_tree_shape, import, seed_with, write_input,
};
use crate::tests::support::memtree;
use crate::tool::{call_json, memory_recall_json};
use crate::{Config, EntityId, EntityKind, Error, Item, Memory};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// A call that must succeed, checked against its documented shape.
fn ok(mem: &mut Memory, req: Value) -> Value {
    let mode = req["mode"].as_str().unwrap().to_string();
    let v = call_json(mem, &req.to_string(), &Scope::all())
        .unwrap_or_else(|e| panic!("{} failed: {e}", crate::tests::fuzz::clip(&req.to_string())));
    check_tree_shape(&mode, &req, &v, &Scope::all())
        .unwrap_or_else(|e| panic!("{}: {e}", crate::tests::fuzz::clip(&req.to_string())));
    v
}

/// Every directory and file under `dir`, relative to it.
fn tree_of(dir: &Path) -> BTreeSet<PathBuf> {
    let mut out = BTreeSet::new();
    for entry in walk(dir) {
        out.insert(entry.strip_prefix(dir).unwrap().to_path_buf());
    }
    out
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        out.push(p.clone());
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        }
    }
    out
}

/// Nothing outside `<store>`; under `<store>/content` only `entities/<kind>/<slug>.md` with a
/// known kind and a slug of `[a-z0-9._-]` that does not start with a dot.
fn assert_contained(outer: &Path, store: &Path) {
    let top: Vec<PathBuf> = std::fs::read_dir(outer).unwrap().map(|e| e.unwrap().path()).collect();
    assert_eq!(top, vec![store.to_path_buf()], "something was written beside the store");
    let content = store.join(crate::CONTENT_DIR);
    for p in tree_of(&content) {
        let parts: Vec<String> = p.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
        let ok = match parts.as_slice() {
            [e] => e == "entities",
            [e, kind] => e == "entities" && EntityKind::parse(kind).is_some(),
            [e, kind, file] => {
                e == "entities"
                    && EntityKind::parse(kind).is_some()
                    && file.ends_with(".md")
                    && !file.starts_with('.')
                    && file.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
            }
            _ => false,
        };
        assert!(ok, "unexpected path under the content root: {}", p.display());
    }
}

// ---- ids ------------------------------------------------------------------------------------

/// Ids that climb out of a folder, end a C string early, run long, or pass for another id.
fn hostile_ids() -> Vec<(&'static str, String)> {
    vec![
        ("climb", "../../../../etc/passwd".into()),
        ("climb-windows", "..\\..\\..\\windows\\system32".into()),
        ("absolute", "/etc/passwd".into()),
        ("home", "~/.ssh/id_rsa".into()),
        ("url-encoded", "%2e%2e%2f%2e%2e%2fetc".into()),
        ("nul", "doc:a\0b".into()),
        ("only-nul", "\0".into()),
        ("blank", " \t ".into()),
        ("long", "a".repeat(10_000)),
        ("long-climb", "../".repeat(3_400)),
        ("latin", "doc:alice".into()),
        ("cyrillic-a", "doc:\u{430}lice".into()),
        ("fullwidth", "doc:\u{ff41}\u{ff4c}\u{ff49}\u{ff43}\u{ff45}".into()),
        ("rtl-override", "doc:\u{202e}ecila".into()),
        ("rlm-suffix", "doc:alice\u{200f}".into()),
        ("zero-width", "doc:al\u{200b}ice".into()),
    ]
}

/// What `ingest_document` must say about a source id: refused (naming the field) when blank,
/// over 1024 bytes or holding NUL; otherwise stored verbatim (trimmed).
fn source_id_refusal(id: &str) -> Option<&'static str> {
    if id.trim().is_empty() {
        Some("`source_id` must not be blank")
    } else if id.len() > 1024 || id.contains('\0') {
        Some("source_id: must be at most 1024 bytes, without NUL")
    } else {
        None
    }
}

#[test]
fn hostile_ids_through_the_dispatcher_stay_distinct_and_inside_the_store() {
    let outer = tempfile::tempdir().unwrap();
    let store = outer.path().join("store");
    let fx = Fixture::new(Config::default());
    let mut mem = Memory::open_with(&store, fx.options()).unwrap();
    // Confusable authors: the Latin and the Cyrillic "alice" must stay two people.
    mem.ingest([
        chat("slack:#eng", "alice", T0, "The billing API ships Friday"),
        chat("slack:#eng", "\u{430}lice", T0 + MIN, "noted, thanks"),
        chat("slack:#eng", "\u{ff41}lice", T0 + 2 * MIN, "noted as well"),
    ])
    .unwrap();
    mem.flush().unwrap();

    let mut stored = Vec::new();
    for (i, (name, id)) in hostile_ids().into_iter().enumerate() {
        // Unknown node ids are no hits, never an error or a lookup outside the store.
        let v = ok(&mut mem, json!({"mode": "drill_down", "node_id": id}));
        assert_eq!((v["total"].as_u64(), v["hits"].as_array().map(Vec::len)), (Some(0), Some(0)), "{name}");
        let v = ok(&mut mem, json!({"mode": "fetch_leaves", "chunk_ids": [id, id]}));
        assert_eq!(v, json!([]), "{name}");
        // Entity search is a literal substring match: every match contains the query. (Not
        // yet for NUL: see `search_entities_takes_nul_literally`.)
        let v = ok(&mut mem, json!({"mode": "search_entities", "query": id, "limit": 100}));
        let q = id.trim().to_lowercase();
        for m in v.as_array().unwrap().iter().filter(|_| !id.contains('\0')) {
            let (cid, surface) = (m["canonical_id"].as_str().unwrap(), m["surface"].as_str().unwrap());
            assert!(cid.to_lowercase().contains(&q) || surface.to_lowercase().contains(&q), "{name}: {m} for {q:?}");
        }
        // A document under the id: refused with a short error naming the field, or stored
        // under exactly that id, replacing nothing (no two ids share a source).
        let marker = format!("marker{i}");
        let req = json!({"mode": "ingest_document", "title": name, "body": format!("{marker} body"), "source_id": id});
        match (call_json(&mut mem, &req.to_string(), &Scope::all()), source_id_refusal(&id)) {
            (Err(e), Some(want)) => {
                check_err(&e).unwrap();
                assert!(e.to_string().contains(want), "{name}: {e}");
            }
            (Ok(v), None) => {
                assert_eq!(v["source_id"], id.trim(), "{name}");
                assert_eq!(v["replaced_leaves"], 0, "{name}: an earlier id's document was replaced");
                stored.push((name, id.trim().to_string(), marker));
            }
            (got, want) => panic!("{name}: got {got:?}, expected refusal {want:?}"),
        }
    }
    // Every stored document is found under its own id and no other.
    for (name, id, marker) in &stored {
        let v = ok(&mut mem, json!({"mode": "query_source", "source_id": id}));
        let hits = v["hits"].as_array().unwrap();
        assert_eq!(hits.len(), 1, "{name}: {v}");
        assert_eq!(hits[0]["tree_scope"], json!(id), "{name}");
        assert!(hits[0]["content"].as_str().unwrap().contains(marker.as_str()), "{name}: {v}");
    }
    // The confusable people are distinct entities: each spelling finds its own first (the
    // exact match), and the others only after it, as near matches (accents folded, one typo),
    // each once.
    let all = ["person:alice", "person:\u{430}lice", "person:\u{ff41}lice"];
    for (query, want) in [("alice", all[0]), ("\u{430}lice", all[1]), ("\u{ff41}lice", all[2])] {
        let v = ok(&mut mem, json!({"mode": "search_entities", "query": query, "kinds": ["person"]}));
        let got: Vec<&str> = v.as_array().unwrap().iter().map(|m| m["canonical_id"].as_str().unwrap()).collect();
        assert_eq!(got.first(), Some(&want), "{query}: {got:?}");
        assert!(got.iter().all(|g| all.contains(g)), "{query}: {got:?}");
        assert_eq!(got.iter().collect::<BTreeSet<_>>().len(), got.len(), "{query}: {got:?}");
    }
    check_invariants(&mem, &fx.cfg);
    drop(mem);
    assert_contained(outer.path(), &store);
}

/// SPEC §3: `search_entities` is a substring match with `%`, `_` and `\` literal, and so is
/// a NUL (a `LIKE` pattern read as a C string ended at the NUL, and `"\0"` matched every
/// entity; found by the fuzz target, fixed by matching with `instr`).
#[test]
fn search_entities_takes_nul_literally() {
    let (_fx, mut mem) = meta_store();
    for query in ["\0", "zzz\0", "100%\0zzz"] {
        let v = ok(&mut mem, json!({"mode": "search_entities", "query": query, "limit": 100}));
        assert_eq!(v, json!([]), "no entity contains {query:?}");
    }
}

/// `(id, accepted)`: what `Registry::put` must do with each id.
fn registry_rows() -> Vec<(String, bool)> {
    let mut rows: Vec<(String, bool)> = [
        ("person:../../../../etc/passwd", true),
        ("person:..\\..\\windows\\system32", true),
        ("person:/etc/passwd", true),
        ("person:~/.ssh/id_rsa", true),
        ("person:a\0b", true),
        ("person:alice", true),
        ("person:\u{430}lice", true),
        ("person:\u{ff41}lice", true),
        ("person:\u{202e}ecila", true),
        ("person:alice\u{200f}", true),
        ("person:.hidden", true),
        ("person:con", true),
        ("email:a@b.example/../../x", true),
        ("url:file:///etc/passwd", true),
        ("person:\0", false),
        ("person:\u{ff41}\u{ff4c}\u{ff49}\u{ff43}\u{ff45}", false),
        ("person:../", false),
        ("person:", false),
        ("../person:x", false),
        ("person", false),
        ("Person:alice", false),
        ("", false),
    ]
    .into_iter()
    .map(|(id, ok)| (id.to_string(), ok))
    .collect();
    rows.push((format!("person:{}", "a".repeat(10_000)), true));
    rows.push((format!("person:{}etc/passwd", "../".repeat(3_400)), true));
    rows.push((format!("person:{}", "\0".repeat(10_000)), false));
    rows
}

#[test]
fn hostile_ids_through_the_registry_stay_inside_content_entities() {
    let outer = tempfile::tempdir().unwrap();
    let store = outer.path().join("store");
    let fx = Fixture::new(Config::default());
    let mem = Memory::open_with(&store, fx.options()).unwrap();
    let reg = mem.as_reader().registry();
    let root = store.join(crate::CONTENT_DIR).join("entities");
    assert_eq!(reg.root(), root);
    let mut paths = BTreeSet::new();
    for (id, accepted) in registry_rows() {
        let eid = EntityId::from(id.as_str());
        let kind = id.split_once(':').and_then(|(k, _)| EntityKind::parse(k)).unwrap_or(EntityKind::Misc);
        let shown = crate::tests::fuzz::clip(&format!("{id:?}"));
        // The display name is the id's tail, so each confusable answers only to itself.
        let tail = id.split_once(':').map_or(id.as_str(), |(_, t)| t);
        let rec = EntityRecord::new(eid.clone(), kind, tail);
        match (reg.path_for(&eid), reg.put(&rec, T0), accepted) {
            (Ok(path), Ok(()), true) => {
                assert_eq!(path.parent(), Some(root.join(kind.as_str()).as_path()), "{shown}");
                assert!(paths.insert(path.clone()), "{shown}: {} is another id's file", path.display());
                let got = reg.get(&eid).unwrap().unwrap();
                assert_eq!((got.id, got.display_name), (eid.clone(), tail.to_string()), "{shown}");
                assert!(!reg.upsert_seen(&eid, kind, "again", T0).unwrap(), "{shown}: the file exists");
            }
            (Err(e1), Err(e2), false) => {
                for e in [e1, e2] {
                    assert!(matches!(e, Error::InvalidArgument { .. }), "{shown}: {e:?}");
                    check_err(&e).unwrap_or_else(|why| panic!("{shown}: {why}"));
                }
                assert!(reg.upsert_seen(&eid, kind, "x", T0).is_err(), "{shown}");
            }
            (path, put, _) => panic!("{shown}: path_for {path:?}, put {put:?}, expected accepted = {accepted}"),
        }
    }
    // Confusables are separate entities: only the Latin spelling answers to "alice".
    assert_eq!(reg.lookup_alias(None, "alice").unwrap(), vec![EntityId::from("person:alice")]);
    assert_eq!(reg.lookup_alias(None, "ALICE ").unwrap(), vec![EntityId::from("person:alice")]);
    assert_eq!(reg.lookup_alias(None, "\u{430}lice").unwrap(), vec![EntityId::from("person:\u{430}lice")]);
    assert_eq!(reg.all().unwrap().len(), paths.len(), "every stored id is listed once");
    assert_eq!(files_under(&root).into_iter().collect::<BTreeSet<_>>(), paths, "no temp or stray files");
    drop(mem);
    assert_contained(outer.path(), &store);
    // No path component anywhere in the store is a climb.
    for p in tree_of(&store) {
        assert!(p.components().all(|c| matches!(c, Component::Normal(_))), "{}", p.display());
    }
}

// ---- metacharacters -------------------------------------------------------------------------

/// Authors whose names are LIKE, FTS5, tantivy and SQL metacharacters.
fn meta_store() -> (Fixture, Memory) {
    store_with_authors(&[
        "100%",
        "50",
        "a_b",
        "axb",
        "c\\d",
        "cd",
        "\"quoted\"",
        "star*",
        "x:y",
        "AND",
        "(paren",
        "O'Brien",
    ])
}

/// One "noted" message by each author and one message about billing, so that a search that
/// survives the metacharacters has one right answer.
fn store_with_authors(authors: &[&str]) -> (Fixture, Memory) {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items: Vec<Item> =
        authors.iter().enumerate().map(|(i, a)| chat("slack:#eng", a, T0 + i as i64 * MIN, "noted")).collect();
    items.push(chat("slack:#eng", "alice", T0 + HOUR, "the billing API ships on time"));
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    (fx, mem)
}

/// Query text made of every kind of metacharacter the engine must take literally.
const METAS: &[&str] = &[
    "%",
    "_",
    "\\",
    "\"",
    "*",
    ":",
    "?",
    "AND",
    "OR",
    "NOT",
    "AND OR NOT",
    "(",
    ")",
    "((",
    "[",
    "]",
    "{",
    "}",
    "~",
    "^",
    "+",
    "-",
    "!",
    "'",
    "''",
    "--",
    ";",
    "NEAR",
    "title:",
    "content:",
    "*:*",
    "\"unbalanced",
    "a\"b\"c\"",
    "\\\"",
];

#[test]
fn metacharacters_in_search_entities_are_literal() {
    let (_fx, mut mem) = meta_store();
    let all = mem.as_reader().store().all_entities().unwrap();
    // Headline rows: a LIKE wildcard taken literally matches only names that contain it.
    for (query, want) in [
        ("%", vec!["person:100%"]),
        ("0%", vec!["person:100%"]),
        ("50", vec!["person:50"]),
        ("_", vec!["person:a_b"]),
        ("a_b", vec!["person:a_b"]),
        ("\\", vec!["person:c\\d"]),
        ("c\\d", vec!["person:c\\d"]),
        ("\"", vec!["person:\"quoted\""]),
        ("*", vec!["person:star*"]),
        ("(", vec!["person:(paren"]),
        ("'", vec!["person:o'brien"]),
    ] {
        let v = ok(&mut mem, json!({"mode": "search_entities", "query": query, "limit": 100}));
        let got: Vec<&str> = v.as_array().unwrap().iter().map(|m| m["canonical_id"].as_str().unwrap()).collect();
        assert_eq!(got, want, "query {query:?}");
    }
    // Every metacharacter: exactly the entities whose id or surface contains it (ASCII case
    // folding), against a brute-force scan.
    for query in METAS {
        let v = ok(&mut mem, json!({"mode": "search_entities", "query": query, "limit": 100}));
        let got: BTreeSet<String> =
            v.as_array().unwrap().iter().map(|m| m["canonical_id"].as_str().unwrap().to_string()).collect();
        let q = query.trim().to_ascii_lowercase();
        let want: BTreeSet<String> = all
            .iter()
            .filter(|e| {
                !q.is_empty()
                    && (e.entity_id.0.to_ascii_lowercase().contains(&q) || e.surface.to_ascii_lowercase().contains(&q))
            })
            .map(|e| e.entity_id.0.clone())
            .collect();
        assert_eq!(got, want, "query {query:?}");
    }
}

#[test]
fn metacharacters_in_walk_query_source_and_recall_never_error() {
    // Plain authors here: an author called "AND" would rightly route "AND billing" to them.
    let (_fx, mut mem) = store_with_authors(&["bob", "carol", "dana", "erin"]);
    let plain = ok(&mut mem, json!({"mode": "query_source", "source_id": "slack:#eng"}));
    for m in METAS {
        // Alone: no error, whatever comes back is well formed (checked by `ok`).
        ok(&mut mem, json!({"mode": "walk", "query": m}));
        ok(&mut mem, json!({"mode": "smart_walk", "query": format!("{m}{m}{m}"), "limit": 3}));
        // Around a real word: the metacharacters neither break the query nor hide the answer.
        let mut queries = vec![format!("{m} billing {m}"), format!("{m} billing API"), format!("billing {m}")];
        // Glued on, only a non-word character leaves "billing" a word of its own.
        if !m.chars().any(char::is_alphanumeric) {
            queries.push(format!("{m}billing{m}"));
        }
        for q in queries {
            let v = ok(&mut mem, json!({"mode": "walk", "query": q}));
            let top = v["hits"][0]["content"].as_str().unwrap_or_default();
            assert!(top.contains("billing API"), "walk {q:?}: {v}");
        }
        // Reranking by a query never filters: the same summaries come back.
        let v = ok(&mut mem, json!({"mode": "query_source", "source_id": "slack:#eng", "query": m}));
        assert_eq!(v["total"], plain["total"], "query_source query {m:?}");
        // Source ids are exact: a wildcard names no source.
        for sid in [m.to_string(), format!("slack:#en{m}"), format!("{m}lack:#eng")] {
            let v = ok(&mut mem, json!({"mode": "query_source", "source_id": sid}));
            assert_eq!(v["total"], 0, "query_source source_id {sid:?}");
            let v = ok(&mut mem, json!({"mode": "cover_window", "since_ms": 0, "until_ms": T0 * 2, "source_id": sid}));
            assert_eq!(v["total"], 0, "cover_window source_id {sid:?}");
        }
        // Node ids are checked for shape: a wildcard is no node.
        for nid in [format!("L{m}"), format!("S{m}"), m.repeat(33)] {
            let v = ok(&mut mem, json!({"mode": "drill_down", "node_id": nid}));
            assert_eq!(v["total"], 0, "drill_down {nid:?}");
            assert_eq!(ok(&mut mem, json!({"mode": "fetch_leaves", "chunk_ids": [nid]})), json!([]));
        }
    }
    let v = ok(&mut mem, json!({"mode": "cover_window", "since_ms": 0, "until_ms": T0 * 2, "source_id": "slack:#eng"}));
    assert!(v["total"].as_u64().unwrap() > 0, "the exact source id covers its nodes: {v}");
    for h in v["hits"].as_array().unwrap() {
        check_hit(h, &Scope::all()).unwrap();
    }

    // memory_recall: metacharacters are no wildcards and break no parser.
    for (key, content) in
        [("theme", "The user prefers dark mode"), ("pct", "100% of seats"), ("a_b", "under_score test")]
    {
        let put = json!({"op": "put", "namespace": "global", "key": key, "content": content});
        memory_recall_json(&mut mem, &put.to_string()).unwrap();
    }
    for m in METAS {
        let v = memory_recall_json(&mut mem, &json!({"query": m}).to_string()).unwrap();
        assert!(
            v.as_array().unwrap().iter().all(|h| h["content"].as_str().unwrap().contains(m.trim())),
            "recall {m:?}: {v}"
        );
        let q = format!("{m}\"dark\" AND (mode OR *:x {m}");
        let v = memory_recall_json(&mut mem, &json!({"namespace": "global", "query": q}).to_string()).unwrap();
        assert_eq!(v[0]["key"], "theme", "recall {q:?}: {v}");
    }
    for m in ["%", "_", "\\", "*"] {
        let v = memory_recall_json(&mut mem, &json!({"query": m}).to_string()).unwrap();
        assert_eq!(v, json!([]), "a lone {m:?} is no wildcard");
    }
}

// ---- files ----------------------------------------------------------------------------------

/// What an import must come to.
#[derive(Debug)]
enum Outcome {
    /// Refused, naming `file` (relative to the input), with `reason` in the message.
    Refused { file: &'static str, reason: &'static str },
    /// Accepted (a documented lenient outcome) with this many items.
    Accepted(usize),
}

/// `seed` with `bytes` spliced in at byte `at`.
fn splice(seed: &str, at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut b = seed.as_bytes().to_vec();
    b.splice(at..at, bytes.iter().copied());
    b
}

/// `seed` cut right after the first `needle`.
fn cut_after(seed: &str, needle: &str) -> Vec<u8> {
    let at = seed.find(needle).unwrap_or_else(|| panic!("{needle:?} not in the seed")) + needle.len();
    seed.as_bytes()[..at].to_vec()
}

/// `seed` cut inside its last multi-byte character.
fn cut_mid_char(seed: &str) -> Vec<u8> {
    let (i, c) = seed.char_indices().rev().find(|(_, c)| c.len_utf8() > 1).expect("a multi-byte character");
    seed.as_bytes()[..i + c.len_utf8() - 1].to_vec()
}

/// The hostile-file matrix: (format, file replaced, its new bytes, outcome).
fn file_rows() -> Vec<(&'static str, Format, &'static str, Vec<u8>, Outcome)> {
    use Format::*;
    use Outcome::*;
    let line2 = CHAT_SEED.find('\n').unwrap() + 20;
    let deep = format!("{}/deep.md", vec!["d".repeat(250); 5].join("/"));
    let deep: &'static str = Box::leak(deep.into_boxed_str());
    vec![
        // chat-jsonl
        ("jsonl invalid UTF-8", ChatJsonl, "chat.jsonl", splice(CHAT_SEED, line2, &[0xff, 0xc3]), Refused { file: "chat.jsonl", reason: ":2: invalid UTF-8" }),
        ("jsonl cut mid-line", ChatJsonl, "chat.jsonl", cut_after(CHAT_SEED, "\"slack:#ops\",\"aut"), Refused { file: "chat.jsonl", reason: ":4: EOF while parsing" }),
        ("jsonl cut mid-character", ChatJsonl, "chat.jsonl", cut_mid_char(CHAT_SEED), Refused { file: "chat.jsonl", reason: "invalid UTF-8" }),
        // Cut at a line end: every line is a whole message, so the import is the lines kept.
        ("jsonl cut at a line end", ChatJsonl, "chat.jsonl", cut_after(CHAT_SEED, "ask @carol\"}\n"), Accepted(2)),
        ("jsonl 10k unknown field", ChatJsonl, "chat.jsonl", format!("{{\"{}\":1}}\n", "f".repeat(10_000)).into_bytes(), Refused { file: "chat.jsonl", reason: ":1: unknown field" }),
        ("jsonl 10k ts", ChatJsonl, "chat.jsonl", format!("{{\"source_id\":\"s\",\"author\":\"a\",\"ts\":\"{}\",\"text\":\"x\"}}\n", "9".repeat(10_000)).into_bytes(), Refused { file: "chat.jsonl", reason: ":1: ts: `9999" }),
        // locomo
        ("locomo invalid UTF-8", Locomo, "locomo.json", splice(LOCOMO_SEED, 40, &[0xff]), Refused { file: "locomo.json", reason: "invalid UTF-8" }),
        ("locomo cut", Locomo, "locomo.json", cut_after(LOCOMO_SEED, "\"session_2\": ["), Refused { file: "locomo.json", reason: "EOF while parsing" }),
        ("locomo cut mid-character", Locomo, "locomo.json", cut_mid_char("[{\"sample_id\": \"caf\u{e9}")  , Refused { file: "locomo.json", reason: "invalid UTF-8" }),
        (
            "locomo NUL in the second sample id",
            Locomo,
            "locomo.json",
            format!("[{},{}]", &LOCOMO_SEED.trim()[1..LOCOMO_SEED.trim().len() - 1], LOCOMO_SEED.trim()[1..LOCOMO_SEED.trim().len() - 1].replace("conv-1", "conv\\u0000-2")).into_bytes(),
            Refused { file: "locomo.json", reason: "turn D1:1: source_id: must be at most 1024 bytes, without NUL" },
        ),
        // Turns are 30 s apart: the last turns of a session at 11:59 pm on 31 December 9999
        // fall in the year 10000, past what ingest accepts.
        ("locomo turn past 9999", Locomo, "locomo.json", std::fs::read(crate::tests::fuzz::corpus_dir("locomo").join("turns-past-9999.json")).unwrap(), Refused { file: "locomo.json", reason: "late: turn D1:3: ts: timestamp 253402300800000 is outside 1970..9999" }),
        ("locomo 10k sample id", Locomo, "locomo.json", format!("[{{\"sample_id\":\"{}\"}}]", "x".repeat(10_000)).into_bytes(), Refused { file: "locomo.json", reason: "no conversation object" }),
        // markdown
        ("markdown invalid UTF-8", Markdown, "notes/a.md", b"# Roadmap\n\xff\xfe\n".to_vec(), Refused { file: "notes/a.md", reason: "invalid UTF-8" }),
        ("markdown cut mid-character", Markdown, "c.md", cut_mid_char("\u{feff}# Caf\u{e9}"), Refused { file: "c.md", reason: "invalid UTF-8" }),
        // A note is free text: cut anywhere else, it is still a note.
        ("markdown cut", Markdown, "notes/a.md", b"# Road".to_vec(), Accepted(3)),
        ("markdown id over 1024 bytes", Markdown, deep, b"# Deep\nburied note\n".to_vec(), Refused { file: deep, reason: "source_id: must be at most 1024 bytes" }),
        // mbox
        // Mail is not UTF-8 text: each part is decoded by its declared charset, bytes that
        // break it become U+FFFD (issue #13 §6), so invalid UTF-8 is not a refusal here.
        ("mbox invalid UTF-8", Mbox, "mail.mbox", splice(MBOX_SEED, MBOX_SEED.find("launch moves").unwrap(), &[0xff, 0xfe]), Accepted(3)),
        ("mbox cut in headers", Mbox, "mail.mbox", cut_after(MBOX_SEED, "Subject: billing\n"), Refused { file: "mail.mbox", reason: "truncated message" }),
        ("mbox cut in a multipart", Mbox, "mail.mbox", cut_after(MBOX_SEED, "<p>OK, I will"), Refused { file: "mail.mbox", reason: "truncated multipart body" }),
        ("mbox cut mid-character", Mbox, "mail.mbox", cut_mid_char("From a Tue May  2 09:14:00 2023\nFrom: a@example.com\n\ncaf\u{e9}"), Accepted(1)),
        // A base64 body is decoded bytes; charsets are read lossily (documented): U+FFFD.
        ("mbox base64 not UTF-8", Mbox, "mail.mbox", b"From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nSubject: s\nContent-Transfer-Encoding: base64\n\n//79\n".to_vec(), Accepted(1)),
        ("mbox 10k Date", Mbox, "mail.mbox", format!("From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nDate: {}\n\nbody\n", "x".repeat(10_000)).into_bytes(), Refused { file: "mail.mbox", reason: ":3: unreadable Date header" }),
        ("mbox 10k boundary", Mbox, "mail.mbox", format!("From a Tue May  2 09:14:00 2023\nFrom: a@example.com\nContent-Type: multipart/mixed; boundary=\"{}\"\n\nbody\n", "b".repeat(10_000)).into_bytes(), Refused { file: "mail.mbox", reason: "truncated multipart body" }),
        // slack
        ("slack day invalid UTF-8", Slack, "eng/2023-05-02.json", splice(SLACK_DAY_1, 40, &[0xc3]), Refused { file: "eng/2023-05-02.json", reason: "invalid UTF-8" }),
        ("slack channels invalid UTF-8", Slack, "channels.json", splice(SLACK_CHANNELS, 5, &[0xff]), Refused { file: "channels.json", reason: ":1: invalid UTF-8" }),
        ("slack users invalid UTF-8", Slack, "users.json", splice(SLACK_USERS, 5, &[0xed, 0xa0, 0x80]), Refused { file: "users.json", reason: ":1: invalid UTF-8" }),
        ("slack day cut", Slack, "eng/2023-05-02.json", cut_after(SLACK_DAY_1, "\"ts\":\"16830"), Refused { file: "eng/2023-05-02.json", reason: "invalid JSON" }),
        ("slack channels cut", Slack, "channels.json", cut_after(SLACK_CHANNELS, "\"na"), Refused { file: "channels.json", reason: "invalid JSON" }),
        ("slack channel climbs", Slack, "channels.json", br#"[{"id":"C1","name":"../eng"}]"#.to_vec(), Refused { file: "channels.json", reason: "unsafe channel name `../eng`" }),
        ("slack 10k channel name", Slack, "channels.json", format!("[{{\"id\":\"C1\",\"name\":\"{}/\"}}]", "x".repeat(10_000)).into_bytes(), Refused { file: "channels.json", reason: "unsafe channel name" }),
        ("slack 10k ts", Slack, "eng/2023-05-02.json", format!("[{{\"type\":\"message\",\"text\":\"x\",\"ts\":\"{}\"}}]", "9".repeat(10_000)).into_bytes(), Refused { file: "eng/2023-05-02.json", reason: "unreadable ts" }),
    ]
}

/// The CLI's name of a format.
fn cli_format(f: Format) -> &'static str {
    match f {
        Format::ChatJsonl => "chat-jsonl",
        Format::Locomo => "locomo",
        Format::Markdown => "markdown",
        Format::Mbox => "mbox",
        Format::Slack => "slack",
    }
}

/// A row's input: the format's seed with `bytes` in `slot`, or beside it when the seed has no
/// such file.
fn row_files(format: Format, slot: &'static str, bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    if format.seed().iter().any(|(rel, _)| *rel == slot) {
        seed_with(format, slot, bytes)
    } else {
        let mut f = seed_with(format, "", &[]);
        f.push((slot, bytes.to_vec()));
        f
    }
}

/// `memtree stats` without the byte sizes (which move with every open).
fn cli_counts(store: &Path) -> Value {
    let mut v = memtree(store, &["stats"], None).json();
    let o = v.as_object_mut().unwrap();
    o.remove("store_bytes");
    o.remove("index_bytes");
    v
}

#[test]
fn invalid_utf8_and_truncated_files_are_refused_naming_the_file() {
    for (name, format, slot, bytes, outcome) in file_rows() {
        let files = row_files(format, slot, &bytes);
        let (dir, input) = write_input(format, &files);
        match (import(format, &input), &outcome) {
            (Err(e), Outcome::Refused { file, reason }) => {
                check_err(&e).unwrap_or_else(|why| panic!("{name}: {why}"));
                let Error::ImportFormat { path, .. } = &e else { panic!("{name}: not an ImportFormat error: {e:?}") };
                assert_eq!(path, &dir.path().join(file), "{name}: {e}");
                assert!(e.to_string().contains(reason), "{name}: {e}");
            }
            (Ok(imported), Outcome::Accepted(n)) => {
                let count = match &imported {
                    Imported::Items(items) => items.len(),
                    Imported::Conversations(c) => c.iter().map(|c| c.turns.len()).sum(),
                    Imported::Documents(d) => d.len(),
                };
                assert_eq!(count, *n, "{name}");
                if let Imported::Items(items) = &imported
                    && format == Format::Mbox
                {
                    let Item::Email(m) = &items[0] else { panic!("{name}: not an e-mail") };
                    assert!(m.body.contains('\u{fffd}'), "{name}: undecodable bytes become U+FFFD: {:?}", m.body);
                }
            }
            (got, want) => panic!("{name}: expected {want:?}, got {:?}", got.map(|_| "Ok")),
        }
    }
}

/// Through the CLI: a refused import exits 1, names the file, and leaves the store exactly as
/// it was (nothing of the input is written, not even the part ahead of the bad item).
#[test]
fn a_refused_cli_import_leaves_the_store_unchanged() {
    let outer = tempfile::tempdir().unwrap();
    let store = outer.path().join("store");
    // Some content first, so "unchanged" is not "still empty".
    let seed = outer.path().join("seed.jsonl");
    std::fs::write(&seed, CHAT_SEED).unwrap();
    let r = memtree(&store, &["ingest".as_ref(), "--format".as_ref(), "chat-jsonl".as_ref(), seed.as_os_str()], None);
    assert_eq!(r.code, Some(0), "{}", r.err);
    let before = cli_counts(&store);
    assert!(before["leaves"].as_u64().unwrap() >= 3, "{before}");
    for (name, format, slot, bytes, outcome) in file_rows() {
        let Outcome::Refused { file, .. } = outcome else { continue };
        let files = row_files(format, slot, &bytes);
        let (_dir, input) = write_input(format, &files);
        let mut args: Vec<&std::ffi::OsStr> = vec!["ingest".as_ref(), "--format".as_ref(), cli_format(format).as_ref()];
        // Every import skips an unreadable record by default and names it (tests/programs/
        // edges.rs); all-or-nothing is `--strict`.
        args.push("--strict".as_ref());
        args.push(input.as_os_str());
        let r = memtree(&store, &args, None);
        assert_eq!(r.code, Some(1), "{name}: {}", r.err);
        let last = Path::new(file).file_name().unwrap().to_string_lossy();
        assert!(
            r.err.contains(last.as_ref()),
            "{name}: the error does not name {file}: {}",
            crate::tests::fuzz::clip(&r.err)
        );
        assert_eq!(cli_counts(&store), before, "{name}: the refused import changed the store");
    }
}

/// Issue 33: a 1 MB question of 100,000 distinct words is answered (never refused whole),
/// read up to the documented cap, and says so in `explain.notes`: through the tool (walk,
/// query_source, drill_down) and through the library's `walk`, which holds a caller that
/// skips the tool to the same cap.
#[test]
fn a_one_megabyte_question_is_cut_to_the_cap_and_says_so() {
    let fx = Fixture::new(Config::default());
    let mut mem = fx.open();
    let mut items = vec![chat("slack:#eng", "Ana", T0, "The Phoenix launch moves to June")];
    items.push(chat("slack:#eng", "Ben", T0 + MIN, "Groceries: apples and bread"));
    mem.ingest(items).unwrap();
    mem.flush().unwrap();
    // 100,000 distinct words, the ones that matter first.
    let mut q = String::from("when does the Phoenix launch move");
    let mut i = 0u64;
    while q.len() < 1_000_000 {
        q.push_str(&format!(" zq{i:x}"));
        i += 1;
    }
    assert!(i >= 100_000);
    let q = &q;
    let cut_note = |v: &Value| {
        v["explain"]["notes"].as_array().is_some_and(|n| {
            n.iter().any(|n| n.as_str().is_some_and(|s| s.contains("cut to its first") && s.contains(&format!("(of {})", q.chars().count()))))
        })
    };
    let v = call_json(&mut mem, &json!({"mode": "walk", "query": q}).to_string(), &Scope::all()).unwrap();
    assert!(cut_note(&v), "{}", crate::text::clip(&v.to_string(), 600));
    assert!(v["hits"][0]["content"].as_str().unwrap().contains("Phoenix"), "{}", crate::text::clip(&v.to_string(), 600));
    let v = call_json(
        &mut mem,
        &json!({"mode": "query_source", "source_id": "slack:#eng", "query": q}).to_string(),
        &Scope::all(),
    )
    .unwrap();
    assert!(cut_note(&v), "{}", crate::text::clip(&v.to_string(), 600));
    // The library's walk, past the tool: the same cap, the same note.
    let r = crate::walk(mem.as_reader(), &crate::WalkArgs::new(q.as_str()), &Scope::all()).unwrap();
    let notes = r.explain.as_ref().map(|e| e["notes"].to_string()).unwrap_or_default();
    assert!(notes.contains("cut to its first"), "{notes}");
    // A question within the cap carries no such note.
    let v = call_json(&mut mem, &json!({"mode": "walk", "query": "when does the Phoenix launch move?"}).to_string(), &Scope::all())
        .unwrap();
    assert!(!cut_note(&v) && v["explain"]["notes"].is_null(), "{v}");
}
