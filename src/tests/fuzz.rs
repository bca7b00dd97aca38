//! Property-based fuzzing stand-in (issue #7, item 3): seeded proptest runs that throw arbitrary
//! and hostile input at the `memory_tree` dispatcher, `memory_recall`, the entity registry's
//! front-matter parser and every importer, and a replay of the hand-kept regression corpus in
//! `tests/data/fuzz/<target>/`.
//!
//! The property everywhere: no panic, and either `Ok` with the documented shape or an `Err`
//! that is a caller error with a short, non-empty message. Each target adds its own checks:
//! read modes never write, recall agrees with a model of its facts, registry files round-trip
//! and `get`/`all`/`lookup_alias` agree, and what an importer accepts can be ingested.
//!
//! Runs are deterministic (a fixed seed per target); proptest's failure persistence records
//! failing seeds in `tests/proptest-regressions/fuzz.txt`, and a failing input's minimal form
//! is also written into the target's corpus folder so the replay test keeps guarding it.

use crate::Scope;
use crate::ingest::import::locomo::read_locomo;
use crate::ingest::import::{read_chat_jsonl, read_markdown_dir, read_mbox, read_slack_export};
use crate::store::NodeReads;
use crate::tests::common::*;
use crate::tool::{MODE_NAMES, MODES, call_json, memory_recall_json};
use crate::{Config, EntityId, EntityKind, Error, Item, Memory, NodeId};
use crate::{EntityRecord, Handle};
use proptest::collection::vec;
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::test_runner::{Config as RunConfig, RngSeed, TestCaseError, TestError, TestRunner};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt;
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::time::Instant;

// ---- the harness --------------------------------------------------------------------------

/// Longest acceptable error message (plus the length of a path it names): errors quote caller
/// text shortened, so a 10k-character input never comes back whole.
pub(crate) const MAX_ERROR_CHARS: usize = 1000;

/// The regression corpus of `target`.
pub(crate) fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/fuzz").join(target)
}

/// Run `cases` seeded cases of `check` over `strategy` and report how many ran and how many
/// inputs were accepted (`check` returns true for an `Ok`), so a run that only ever exercises
/// the error paths shows. On a failure the minimal input (as `save` renders it) joins the
/// corpus before the test fails.
fn fuzz<S>(
    target: &str,
    seed: u64,
    cases: u32,
    strategy: S,
    save: impl Fn(&S::Value) -> Option<(String, Vec<u8>)>,
    check: impl Fn(&S::Value) -> Result<bool, String>,
) where
    S: Strategy,
    S::Value: fmt::Debug,
{
    let config = RunConfig {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        // The runner's failure persistence files seeds next to this source file's tree:
        // tests/proptest-regressions/fuzz.txt, like the `proptest!` tests of this binary.
        source_file: Some(file!()),
        max_shrink_iters: 300,
        ..RunConfig::default()
    };
    let mut runner = TestRunner::new(config);
    let (runs, accepted) = (Cell::new(0u64), Cell::new(0u64));
    let start = Instant::now();
    let result = runner.run(&strategy, |v| {
        runs.set(runs.get() + 1);
        let ok = check(&v).map_err(TestCaseError::fail)?;
        accepted.set(accepted.get() + u64::from(ok));
        Ok(())
    });
    eprintln!("fuzz {target}: {} cases ({} accepted) in {:.1?}", runs.get(), accepted.get(), start.elapsed());
    if let Err(e) = result {
        if let TestError::Fail(_, v) = &e
            && let Some((hint, bytes)) = save(v)
        {
            let name = format!("failed-{}-{hint}", &blake3::hash(&bytes).to_hex()[..12]);
            let dir = corpus_dir(target);
            let _ = fs::create_dir_all(&dir).and_then(|()| fs::write(dir.join(&name), &bytes));
            eprintln!("fuzz {target}: minimal failing input saved as tests/data/fuzz/{target}/{name}");
        }
        panic!("fuzz {target}: {e}");
    }
}

/// Run `check` on every file of the target's corpus; a panic counts as a failure of that file.
fn replay(target: &str, check: impl Fn(&Path, &[u8]) -> Result<(), String>) {
    let dir = corpus_dir(target);
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "the corpus {} is empty", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        let bytes = fs::read(f).unwrap();
        match catch_unwind(AssertUnwindSafe(|| check(f, &bytes))) {
            Ok(Ok(())) => {}
            Ok(Err(why)) => failures.push(format!("{}: {why}", f.display())),
            Err(_) => failures.push(format!("{}: panicked", f.display())),
        }
    }
    eprintln!("replay {target}: {} inputs", files.len());
    assert!(failures.is_empty(), "replay {target}:\n{}", failures.join("\n"));
}

/// Bytes shown as an escaped byte string, so a failing input reads as text.
#[derive(Clone, PartialEq)]
pub(crate) struct Bytes(pub Vec<u8>);

impl fmt::Debug for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "b\"{}\"", self.0.escape_ascii())
    }
}

/// At most 200 characters of `s`, for failure messages.
pub(crate) fn clip(s: &str) -> String {
    if s.chars().count() <= 200 { s.to_string() } else { format!("{}…", s.chars().take(200).collect::<String>()) }
}

/// An error must be the caller's fault (hostile input never reaches an engine failure), with
/// a short, non-empty message.
pub(crate) fn check_err(e: &Error) -> Result<(), String> {
    check_message(e)?;
    if !e.is_user_error() && !matches!(e, Error::Io { .. }) {
        return Err(format!("caller input caused an engine error: {e}"));
    }
    Ok(())
}

/// A non-empty message that quotes caller text shortened.
pub(crate) fn check_message(e: &Error) -> Result<(), String> {
    let m = e.to_string();
    if m.trim().is_empty() {
        return Err(format!("empty error message: {e:?}"));
    }
    let path_len = match e {
        Error::ImportFormat { path, .. } | Error::Io { path, .. } => path.display().to_string().chars().count(),
        _ => 0,
    };
    if m.chars().count() > MAX_ERROR_CHARS + path_len {
        return Err(format!("error message of {} characters: {}", m.chars().count(), clip(&m)));
    }
    Ok(())
}

/// What a call may not change: row counts, index size and the registry folder.
pub(crate) fn snapshot(mem: &Memory) -> Value {
    let s = mem.as_reader().stats().unwrap();
    serde_json::json!({"counts": s.counts, "index_docs": s.index_docs, "vault": format!("{:?}", mem.as_reader().registry().fingerprint())})
}

/// A scratch folder, on tmpfs when there is one: the fuzz runs write thousands of times and
/// would otherwise spend their budget waiting for fsync, which is not what they test.
pub(crate) fn scratch() -> tempfile::TempDir {
    let shm = Path::new("/dev/shm");
    shm.is_dir().then(|| tempfile::tempdir_in(shm).ok()).flatten().unwrap_or_else(|| tempfile::tempdir().unwrap())
}

/// A fixture whose store lives in a [`scratch`] folder (kept alive by the returned guard).
pub(crate) fn scratch_store() -> (Fixture, tempfile::TempDir, Memory) {
    let fx = Fixture::new(Config::default());
    let dir = scratch();
    let mem = Memory::open_with(dir.path(), fx.options()).unwrap();
    (fx, dir, mem)
}

/// Every stored node has exactly one index document and one vector.
fn check_derived_in_step(mem: &Memory) -> Result<(), String> {
    let s = mem.as_reader().stats().unwrap();
    let nodes = s.counts.leaves + s.counts.summaries_per_level.iter().sum::<u64>();
    if s.index_docs != nodes || s.counts.vectors != nodes {
        return Err(format!("{nodes} nodes but {} index documents and {} vectors", s.index_docs, s.counts.vectors));
    }
    Ok(())
}

// ---- input generators -----------------------------------------------------------------------

/// Pieces of hostile text: path climbs, NUL, LIKE / tantivy / FTS5 / SQL metacharacters,
/// confusables, bidi controls, case-folding oddities, and names the fixture store knows.
pub(crate) const ATOMS: &[&str] = &[
    "../",
    "..\\",
    "/etc/passwd",
    "\0",
    "%",
    "_",
    "\\",
    "\"",
    "'",
    ":",
    "*",
    "?",
    "AND",
    " OR ",
    "NOT ",
    "(",
    ")",
    "[1 TO 5]",
    "{",
    "}",
    "~2",
    "^3",
    "+",
    "-",
    "!",
    "&&",
    "||",
    "title:",
    "NEAR(",
    "--",
    ";",
    "' OR 1=1 --",
    "аlice",
    "ａｌｉｃｅ",
    "\u{202e}",
    "\u{200f}",
    "\u{200b}",
    "\u{feff}",
    "e\u{301}",
    "İ",
    "ß",
    "ﬃ",
    "Σ",
    "🦀",
    "\u{10ffff}",
    "\u{fffd}",
    "\u{7f}",
    "\u{1b}[31m",
    "\r\n",
    "\n",
    "\t",
    " ",
    "",
    "Phoenix",
    "Alice",
    "alice@example.com",
    "#launch",
    "@carol",
    "billing",
    "last week",
    "in May 2023",
    "slack:#eng",
    "gmail:thread-1",
    "doc:notes/roadmap.md",
    "person:alice",
    "misc:phoenix",
    "person",
    "EMAIL",
    " misc ",
    "robot",
    "chat",
    "document",
    "L0123456789abcdef0123456789abcdef",
    "S",
    "null",
    "NaN",
];

/// Integer and number literals at and past every edge, including ones JSON cannot hold.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "3",
    "5",
    "16",
    "17",
    "20",
    "100",
    "101",
    "500",
    "1000",
    "1001",
    "1e3",
    "1E+2",
    "2.5",
    "-2.5",
    "1.0",
    "0.0",
    "0.5",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "123456789012345678901234567890",
    "1e308",
    "-1e308",
    "1e309",
    "-1e400",
    "1e-400",
    "4.9e-324",
    "NaN",
    "Infinity",
    "-Infinity",
    "0x10",
    "01",
    "1683504000000",
    "1683590400000",
    "253402300799999",
    "-62135596800000",
    "3650000",
    "3650001",
];

/// One piece of hostile text; `known` adds strings the store knows (node ids, source ids).
pub(crate) fn atom(known: Vec<String>) -> BoxedStrategy<String> {
    let known = if known.is_empty() { vec![String::new()] } else { known };
    prop_oneof![
        6 => select(ATOMS).prop_map(str::to_string),
        2 => select(known),
        2 => "[a-zA-Z0-9 #@:._-]{0,16}",
        2 => any::<String>(),
        1 => (select(ATOMS), 1usize..3000).prop_map(|(a, n)| a.repeat(n)),
    ]
    .boxed()
}

/// Up to four atoms run together.
pub(crate) fn text(known: Vec<String>) -> BoxedStrategy<String> {
    vec(atom(known), 0..4).prop_map(|v| v.concat()).boxed()
}

pub(crate) fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

fn number() -> BoxedStrategy<String> {
    prop_oneof![
        3 => select(NUMBERS).prop_map(str::to_string),
        2 => any::<i64>().prop_map(|n| n.to_string()),
        // A non-finite f64 serialises as `null`, itself worth sending.
        1 => any::<f64>().prop_map(|f| serde_json::to_string(&f).unwrap()),
        2 => (-5i64..120).prop_map(|n| n.to_string()),
    ]
    .boxed()
}

/// Any JSON text (numbers include literals `serde_json` refuses), nested up to three deep.
fn any_json(known: Vec<String>) -> BoxedStrategy<String> {
    let k = known.clone();
    let leaf = prop_oneof![
        Just("null".to_string()),
        Just("true".to_string()),
        Just("false".to_string()),
        number(),
        text(known).prop_map(|s| json_str(&s)),
    ];
    leaf.prop_recursive(3, 16, 4, move |inner| {
        prop_oneof![
            vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            vec((text(k.clone()), inner), 0..3).prop_map(|kv| {
                let pairs: Vec<String> = kv.iter().map(|(k, v)| format!("{}:{v}", json_str(k))).collect();
                format!("{{{}}}", pairs.join(","))
            }),
        ]
    })
    .boxed()
}

/// A value for a field of JSON type `ty`: mostly well-typed, sometimes anything.
fn field_value(ty: &'static str, known: Vec<String>) -> BoxedStrategy<String> {
    let well = match ty {
        "string" => text(known.clone()).prop_map(|s| json_str(&s)).boxed(),
        "integer" | "number" => number(),
        _ => vec(text(known.clone()).prop_map(|s| json_str(&s)), 0..25)
            .prop_map(|v| format!("[{}]", v.join(",")))
            .boxed(),
    };
    prop_oneof![4 => well, 1 => any_json(known)].boxed()
}

/// Every field name of every mode, for keys sent to the wrong mode.
fn all_field_names() -> Vec<&'static str> {
    let mut names: Vec<&'static str> = MODES.iter().flat_map(|m| m.fields.iter().map(|f| f.name)).collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Break a JSON text: cut it short, or drop a structural character into it.
fn corrupt(s: String, at: Index, how: u8) -> String {
    let chars: Vec<char> = s.chars().collect();
    let i = at.index(chars.len() + 1);
    match how % 3 {
        0 => chars[..i].iter().collect(),
        1 => {
            let junk = ['{', '}', '[', ']', ',', ':', '"', '\\'][how as usize % 8];
            chars[..i].iter().chain(std::iter::once(&junk)).chain(&chars[i..]).collect()
        }
        _ => chars.iter().enumerate().filter(|(j, _)| *j != i).map(|(_, c)| c).collect(),
    }
}

/// A structurally plausible `memory_tree` call: a mode (usually valid), some of its fields
/// with hostile values of the right type or any type, sometimes fields of other modes or
/// unknown keys, in any order, sometimes corrupted.
fn tree_request(known: Vec<String>) -> BoxedStrategy<String> {
    (0..MODE_NAMES.len())
        .prop_flat_map(move |mi| {
            let mode = MODE_NAMES[mi];
            let spec = mode_fields(mode);
            let fields: Vec<BoxedStrategy<Option<(String, String)>>> = spec
                .iter()
                .map(|&(name, ty)| {
                    proptest::option::weighted(
                        0.75,
                        field_value(ty, known.clone()).prop_map(move |v| (name.to_string(), v)),
                    )
                    .boxed()
                })
                .collect();
            let mode_kv = prop_oneof![
                12 => Just(Some(("mode".to_string(), json_str(mode)))),
                1 => text(known.clone()).prop_map(|t| Some(("mode".to_string(), json_str(&t)))),
                1 => any_json(known.clone()).prop_map(|v| Some(("mode".to_string(), v))),
                1 => Just(None),
            ];
            let extra = proptest::option::weighted(
                0.15,
                (
                    prop_oneof![select(all_field_names()).prop_map(str::to_string), text(known.clone())],
                    any_json(known.clone()),
                ),
            );
            let broken = proptest::option::weighted(0.1, (any::<Index>(), any::<u8>()));
            (mode_kv, fields, extra, broken, any::<u64>())
        })
        .prop_map(|(mode, fields, extra, broken, order)| {
            let mut pairs: Vec<(String, String)> =
                mode.into_iter().chain(fields.into_iter().flatten()).chain(extra).collect();
            // A cheap deterministic shuffle: rotate by a drawn amount (shrinks towards none).
            if !pairs.is_empty() {
                let k = (order % pairs.len() as u64) as usize;
                pairs.rotate_left(k);
            }
            let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{}:{v}", json_str(k))).collect();
            let s = format!("{{{}}}", body.join(","));
            match broken {
                Some((at, how)) => corrupt(s, at, how),
                None => s,
            }
        })
        .boxed()
}

/// A well-formed call: a valid mode, its required fields, values of the right type in range
/// (free text is still hostile), so that the modes themselves run rather than the parser's
/// error paths.
fn clean_tree_request(known: Vec<String>) -> BoxedStrategy<String> {
    (0..MODE_NAMES.len())
        .prop_flat_map(move |mi| {
            let mode = MODE_NAMES[mi];
            let fields: Vec<BoxedStrategy<Option<(String, String)>>> = MODES
                .iter()
                .find(|m| m.mode == if mode == "smart_walk" { "walk" } else { mode })
                .unwrap()
                .fields
                .iter()
                .map(|f| {
                    let v =
                        clean_value(f.name, f.ty.json_type(), known.clone()).prop_map(move |v| (f.name.to_string(), v));
                    if f.required { v.prop_map(Some).boxed() } else { proptest::option::of(v).boxed() }
                })
                .collect();
            (Just(mode), fields, any::<u64>())
        })
        .prop_map(|(mode, fields, order)| {
            let mut pairs: Vec<(String, String)> =
                std::iter::once(("mode".to_string(), json_str(mode))).chain(fields.into_iter().flatten()).collect();
            let k = (order % pairs.len() as u64) as usize;
            pairs.rotate_left(k);
            let body: Vec<String> = pairs.iter().map(|(k, v)| format!("{}:{v}", json_str(k))).collect();
            format!("{{{}}}", body.join(","))
        })
        .boxed()
}

/// An in-range value for field `name`.
fn clean_value(name: &'static str, ty: &'static str, known: Vec<String>) -> BoxedStrategy<String> {
    let kinds: Vec<String> =
        EntityKind::ALL.iter().map(|k| k.as_str().to_string()).chain([" PERSON ".into()]).collect();
    let sources: Vec<String> =
        ["slack:#eng", "slack:#ops", "gmail:thread-1", "doc:notes/roadmap.md", "doc:fuzz/1", "doc:fuzz/2"]
            .map(String::from)
            .to_vec();
    let nodes: Vec<String> = known.iter().filter(|k| NodeId::is_well_formed(k)).cloned().collect();
    let strings = |v: BoxedStrategy<String>, n: usize| {
        vec(v, 0..n).prop_map(|v| format!("[{}]", v.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(",")))
    };
    match (name, ty) {
        ("kinds", _) => strings(select(kinds).boxed(), 3).boxed(),
        ("chunk_ids", _) => strings(prop_oneof![4 => select(nodes), 1 => text(known)].boxed(), 25).boxed(),
        ("node_id", _) => prop_oneof![4 => select(nodes), 1 => text(known)].prop_map(|s| json_str(&s)).boxed(),
        ("source_kind", _) => select(vec!["chat", "email", "document", " Chat "]).prop_map(json_str).boxed(),
        ("source_id", _) => prop_oneof![3 => select(sources), 1 => text(known)].prop_map(|s| json_str(&s)).boxed(),
        ("title" | "body", _) => text(known).prop_map(|s| json_str(&format!("{s} x"))).boxed(),
        ("since_ms", _) => (-48i64..24).prop_map(|h| (T0 + h * HOUR).to_string()).boxed(),
        ("until_ms", _) => (24i64..96).prop_map(|h| (T0 + h * HOUR).to_string()).boxed(),
        ("max_depth", _) => (1i64..20).prop_map(|n| n.to_string()).boxed(),
        ("time_window_days", _) => {
            prop_oneof![(0u32..20_000).prop_map(|n| n.to_string()), (0.0f64..1e7).prop_map(|x| x.to_string())].boxed()
        }
        (_, "integer") => (-3i64..150).prop_map(|n| n.to_string()).boxed(),
        (_, "boolean") => any::<bool>().prop_map(|b| b.to_string()).boxed(),
        _ => text(known).prop_map(|s| json_str(&s)).boxed(),
    }
}

/// The (name, JSON type) of each field of `mode` (the alias resolves to `walk`).
fn mode_fields(mode: &str) -> Vec<(&'static str, &'static str)> {
    let mode = if mode == "smart_walk" { "walk" } else { mode };
    MODES
        .iter()
        .find(|m| m.mode == mode)
        .map(|m| m.fields.iter().map(|f| (f.name, f.ty.json_type())).collect())
        .unwrap_or_default()
}

/// Anything at all: arbitrary strings, byte soup read lossily, JSON-ish punctuation.
fn raw_input(known: Vec<String>) -> BoxedStrategy<String> {
    prop_oneof![
        any::<String>(),
        vec(any::<u8>(), 0..256).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        "[\\[\\]{}\":,0-9a-z\\\\ .eE+-]{0,64}",
        text(known),
    ]
    .boxed()
}

// ---- target 1: the memory_tree dispatcher ---------------------------------------------------

/// A small store: two chat channels, an e-mail thread and a document, flushed so that it has
/// summaries; with its node ids and source ids (so generated calls can name real nodes).
pub(crate) fn small_store() -> (Fixture, tempfile::TempDir, Memory, Vec<String>) {
    let (fx, dir, mut mem) = scratch_store();
    // The shared corpus without Alice's last #eng line and Erin's #ops reply.
    ingest_corpus(&mut mem, &[CHATS[0], CHATS[1], CHATS[2], CHATS[4]]);
    let mut known = Vec::new();
    for t in mem.as_reader().store().trees().unwrap() {
        known.push(t.tree_id.0.clone());
        known.extend(mem.as_reader().store().tree_nodes(&t.tree_id).unwrap().into_iter().map(|n| n.node_id.0));
    }
    (fx, dir, mem, known)
}

/// What `limit` a mode applies for this request (default, cap, 0/negative → default), when
/// the request states one the parser accepts.
fn effective_limit(mode: &str, req: &Value) -> Option<usize> {
    let mode = if mode == "smart_walk" { "walk" } else { mode };
    let f = MODES.iter().find(|m| m.mode == mode)?.fields.iter().find(|f| f.name == "limit")?;
    let (default, cap) = (f.default?, f.cap?);
    let x = match req.get("limit") {
        None | Some(Value::Null) => default,
        Some(v) => {
            let x = v.as_i64().or_else(|| {
                v.as_f64().filter(|x| x.fract() == 0.0).map(|x| x.clamp(i64::MIN as f64, i64::MAX as f64) as i64)
            })?;
            if x <= 0 { default } else { x }
        }
    };
    Some(x.min(cap) as usize)
}

/// A `RetrievalHit` as SPEC §3.1 describes it, from a source the scope allows.
pub(crate) fn check_hit(h: &Value, scope: &Scope) -> Result<(), String> {
    let o = h.as_object().ok_or_else(|| format!("hit is not an object: {h}"))?;
    let s = |k: &str| {
        o.get(k).and_then(Value::as_str).ok_or_else(|| format!("hit.{k} is not a string: {}", clip(&h.to_string())))
    };
    let strings = |k: &str| -> Result<Vec<&str>, String> {
        o.get(k)
            .and_then(Value::as_array)
            .and_then(|a| a.iter().map(Value::as_str).collect::<Option<Vec<_>>>())
            .ok_or_else(|| format!("hit.{k} is not an array of strings"))
    };
    let id = s("node_id")?;
    if !NodeId::is_well_formed(id) {
        return Err(format!("malformed node id {id:?}"));
    }
    let kind = s("node_kind")?;
    let level = o.get("level").and_then(Value::as_u64).ok_or("hit.level is not a number")?;
    let leaf = match kind {
        "leaf" => true,
        "summary" => false,
        other => return Err(format!("node_kind {other:?}")),
    };
    if leaf != (level == 0) || leaf != id.starts_with('L') {
        return Err(format!("{id}: kind {kind}, level {level} disagree"));
    }
    s("tree_id")?;
    s("tree_kind")?;
    s("content")?;
    let scope_of = s("tree_scope")?;
    if !scope.allows(scope_of) {
        return Err(format!("{id} of {scope_of} leaked through the scope gate {scope:?}"));
    }
    strings("entities")?;
    strings("topics")?;
    if strings("child_ids")?.is_empty() != leaf {
        return Err(format!("{id}: child_ids do not match its kind"));
    }
    let t =
        |k: &str| s(k).and_then(|v| chrono::DateTime::parse_from_rfc3339(v).map_err(|e| format!("hit.{k} {v:?}: {e}")));
    if t("time_range_start")? > t("time_range_end")? {
        return Err(format!("{id}: time range ends before it starts"));
    }
    // serde_json writes a NaN or infinite f64 as null.
    if !o.get("score").and_then(Value::as_f64).is_some_and(f64::is_finite) {
        return Err(format!("{id}: score {:?} is not a finite number", o.get("score")));
    }
    if !matches!(o.get("source_ref"), Some(Value::Null | Value::String(_))) {
        return Err(format!("{id}: source_ref is neither null nor a string"));
    }
    if !matches!(o.get("explain"), None | Some(Value::Object(_))) {
        return Err(format!("{id}: explain is not an object"));
    }
    if let Some(sn) = o.get("snippet") {
        // Only on leaves; its character offsets index `content` and give its text.
        let (text, start, end) = (sn["text"].as_str(), sn["start"].as_u64(), sn["end"].as_u64());
        let (Some(text), Some(start), Some(end)) = (text, start, end) else {
            return Err(format!("{id}: snippet is not {{text, start, end}}: {}", clip(&sn.to_string())));
        };
        let slice: String =
            s("content")?.chars().skip(start as usize).take(end.saturating_sub(start) as usize).collect();
        if !leaf || start >= end || slice != text {
            return Err(format!("{id}: snippet {start}..{end} does not index content (leaf {leaf})"));
        }
    }
    Ok(())
}

/// The documented result shape of `mode`.
pub(crate) fn check_tree_shape(mode: &str, req: &Value, v: &Value, scope: &Scope) -> Result<(), String> {
    let limit = effective_limit(mode, req);
    let too_many = |n: usize| limit.is_some_and(|l| n > l);
    match mode {
        "search_entities" => {
            let a = v.as_array().ok_or("search_entities did not return an array")?;
            if too_many(a.len()) {
                return Err(format!("{} matches for limit {limit:?}", a.len()));
            }
            // Literal substring matches (SPEC §3) come first; after them, when they are fewer
            // than the limit, names that match with accents folded or one typo a word.
            let mut near_seen = false;
            let needle = req["query"].as_str().map(|q| q.trim().to_lowercase());
            let kinds: Option<Vec<EntityKind>> = req["kinds"].as_array().and_then(|ks| {
                ks.iter().map(|k| EntityKind::parse(&k.as_str()?.trim().to_ascii_lowercase())).collect()
            });
            for m in a {
                let kind = m["kind"].as_str().and_then(EntityKind::parse).ok_or("EntityMatch.kind")?;
                let id = m["canonical_id"].as_str().ok_or("EntityMatch.canonical_id")?;
                if !id.starts_with(&format!("{}:", kind.as_str())) {
                    return Err(format!("{id} is not of kind {kind}"));
                }
                let Some(surface) = m["surface"].as_str() else { return Err(format!("malformed EntityMatch {m}")) };
                if m["mention_count"].as_u64().is_none() || m["last_seen_ms"].as_i64().is_none() {
                    return Err(format!("malformed EntityMatch {m}"));
                }
                if let Some(q) = &needle {
                    let exact = id.to_lowercase().contains(q.as_str()) || surface.to_lowercase().contains(q.as_str());
                    if exact && near_seen {
                        return Err(format!(
                            "{id} ({surface:?}) contains the query {q:?} but comes after a near match"
                        ));
                    }
                    near_seen |= !exact;
                }
                if let Some(ks) = &kinds
                    && !ks.is_empty()
                    && !ks.contains(&kind)
                {
                    return Err(format!("{id} is not of the kinds asked for, {ks:?}"));
                }
            }
        }
        "fetch_leaves" => {
            let a = v.as_array().ok_or("fetch_leaves did not return an array")?;
            if a.len() > 20 {
                return Err(format!("{} leaves for at most 20 ids", a.len()));
            }
            for h in a {
                check_hit(h, scope)?;
                if h["node_kind"] != "leaf" {
                    return Err(format!("fetch_leaves returned a summary: {}", h["node_id"]));
                }
            }
        }
        "ingest_document" => {
            let ok = v["status"] == "ok"
                && v["source_id"].as_str().is_some_and(|s| !s.trim().is_empty())
                && v["leaves"].as_u64().is_some_and(|n| n >= 1)
                && v["summaries"].as_u64().is_some()
                && v["replaced_leaves"].as_u64().is_some()
                && v["message"].as_str().is_some_and(|m| !m.is_empty());
            if !ok {
                return Err(format!("malformed confirmation {}", clip(&v.to_string())));
            }
        }
        _ => {
            let hits = v["hits"].as_array().ok_or("QueryResponse.hits is not an array")?;
            let total = v["total"].as_u64().ok_or("QueryResponse.total")? as usize;
            let truncated = v["truncated"].as_bool().ok_or("QueryResponse.truncated")?;
            if truncated != (total > hits.len()) || total < hits.len() {
                return Err(format!("total {total}, truncated {truncated}, {} hits", hits.len()));
            }
            if too_many(hits.len()) {
                return Err(format!("{} hits for limit {limit:?}", hits.len()));
            }
            for h in hits {
                check_hit(h, scope)?;
            }
        }
    }
    Ok(())
}

/// One dispatcher call against the property: no panic; Ok only for a valid mode and with its
/// shape; Err a short caller error; reads leave the store as it was and answer the same twice;
/// an ingested document can be found by its source id. True when the call succeeded.
fn check_dispatch(mem: &mut Memory, input: &str, scope: &Scope) -> Result<bool, String> {
    let before = snapshot(mem);
    let out = call_json(mem, input, scope);
    let req: Option<Value> = serde_json::from_str(input).ok();
    let mode = req.as_ref().and_then(|r| r.get("mode")).and_then(Value::as_str);
    let mut wrote = false;
    match &out {
        Err(e) => {
            check_err(e)?;
            if matches!(e, Error::InvalidRequest { .. }) && !e.to_string().starts_with("memory_tree: ") {
                return Err(format!("a request error that does not name the tool: {e}"));
            }
        }
        Ok(v) => {
            let mode = mode
                .filter(|m| MODE_NAMES.contains(m))
                .ok_or_else(|| format!("Ok for an input without a valid mode: {}", clip(input)))?;
            let req = req.as_ref().expect("a call that succeeded parsed");
            check_tree_shape(mode, req, v, scope)?;
            if mode == "ingest_document" {
                wrote = true;
                let source = v["source_id"].as_str().unwrap();
                let q = serde_json::json!({"mode": "query_source", "source_id": source}).to_string();
                let found = call_json(mem, &q, &Scope::all()).map_err(|e| format!("query_source after ingest: {e}"))?;
                let hits = found["hits"].as_array().unwrap();
                if hits.is_empty() || hits.iter().any(|h| h["tree_scope"] != source) {
                    return Err(format!("the ingested document {source:?} is not found by its source id: {found}"));
                }
            } else {
                let again = call_json(mem, input, scope).map_err(|e| format!("second identical call failed: {e}"))?;
                if &again != v {
                    return Err("the same read gave two different answers".into());
                }
            }
        }
    }
    let after = snapshot(mem);
    if !wrote && after != before {
        return Err(format!("the store changed: {before} → {after}"));
    }
    check_derived_in_step(mem)?;
    Ok(out.is_ok())
}

fn scope_for(narrow: bool) -> Scope {
    if narrow { Scope::only(["slack:#eng", "doc:notes/roadmap.md"]) } else { Scope::all() }
}

#[test]
fn fuzz_dispatcher() {
    let (fx, _dir, mem, known) = small_store();
    let mem = RefCell::new(mem);
    let strategy = (
        prop_oneof![3 => clean_tree_request(known.clone()), 3 => tree_request(known.clone()), 1 => raw_input(known)],
        any::<bool>(),
    );
    fuzz(
        "dispatcher",
        0x6d74_7265_6500_0001,
        3000,
        strategy,
        |(input, _)| Some(("input.json".into(), input.as_bytes().to_vec())),
        |(input, narrow)| check_dispatch(&mut mem.borrow_mut(), input, &scope_for(*narrow)),
    );
    // Thousands of calls later, with generated documents ingested and replaced, the tree
    // still satisfies every structural invariant.
    check_invariants(&mem.borrow(), &fx.cfg);
}

#[test]
fn fuzz_dispatcher_replay() {
    let (fx, _dir, mem, _) = small_store();
    let mem = RefCell::new(mem);
    replay("dispatcher", |_, bytes| {
        let input = String::from_utf8_lossy(bytes);
        let input = input.strip_suffix('\n').unwrap_or(&input);
        check_dispatch(&mut mem.borrow_mut(), input, &Scope::all())?;
        check_dispatch(&mut mem.borrow_mut(), input, &scope_for(true)).map(|_| ())
    });
    check_invariants(&mem.borrow(), &fx.cfg);
}

// ---- target 2: memory_recall -----------------------------------------------------------------

/// The facts `memory_recall` should hold, by (namespace, key).
type Facts = BTreeMap<(String, String), String>;

fn recall_request() -> BoxedStrategy<String> {
    let none = Vec::<String>::new;
    let op = prop_oneof![
        8 => select(vec!["search", "put", "put", "forget", "list"]).prop_map(|s| Some(json_str(s))),
        1 => text(none()).prop_map(|s| Some(json_str(&s))),
        1 => any_json(none()).prop_map(Some),
        1 => Just(None),
    ];
    let skill65 = format!("skill-{}", "a".repeat(65));
    let ns = prop_oneof![
        8 => select(vec![
            "global".to_string(), "background".into(), "autocomplete".into(), "skill-a".into(), "skill-x_1-2".into(),
            "skill-".into(), "skill-A".into(), "Global".into(), " global".into(), "../x".into(), "skill-../x".into(),
            "skill-a\0".into(), skill65,
        ])
        .prop_map(|s| Some(json_str(&s))),
        1 => text(none()).prop_map(|s| Some(json_str(&s))),
        1 => any_json(none()).prop_map(Some),
        1 => Just(None),
    ];
    let keys: Vec<String> =
        ["theme", "coffee", "k", "K", " k ", "a%", "_", "a\0b", "../k", "dark_mode"].map(String::from).to_vec();
    let key = prop_oneof![
        6 => select(keys).prop_map(|s| Some(json_str(&s))),
        2 => text(none()).prop_map(|s| Some(json_str(&s))),
        1 => any_json(none()).prop_map(Some),
        1 => Just(None),
    ];
    let words: Vec<String> =
        ["The user prefers dark mode", "oat flat white", "dark", "coffee order", "theme", "%", "_"]
            .map(String::from)
            .to_vec();
    let prose = || {
        prop_oneof![
            3 => select(words.clone()).prop_map(|s| Some(json_str(&s))),
            3 => text(none()).prop_map(|s| Some(json_str(&s))),
            1 => any_json(none()).prop_map(Some),
            2 => Just(None),
        ]
    };
    let limit = prop_oneof![3 => Just(None), 2 => number().prop_map(Some), 1 => any_json(none()).prop_map(Some)];
    let extra = proptest::option::weighted(0.05, (text(none()), any_json(none())));
    let broken = proptest::option::weighted(0.05, (any::<Index>(), any::<u8>()));
    (op, ns, key, prose(), prose(), limit, extra, broken)
        .prop_map(|(op, ns, key, content, query, limit, extra, broken)| {
            let mut pairs = Vec::new();
            for (k, v) in
                [("op", op), ("namespace", ns), ("key", key), ("content", content), ("query", query), ("limit", limit)]
            {
                if let Some(v) = v {
                    pairs.push(format!("{}:{v}", json_str(k)));
                }
            }
            if let Some((k, v)) = extra {
                pairs.push(format!("{}:{v}", json_str(&k)));
            }
            let s = format!("{{{}}}", pairs.join(","));
            match broken {
                Some((at, how)) => corrupt(s, at, how),
                None => s,
            }
        })
        .boxed()
}

/// A well-formed recall call with valid namespaces and non-blank keys and content (hostile
/// text still), so that puts, forgets, lists and searches actually happen.
fn clean_recall_request() -> BoxedStrategy<String> {
    let none = Vec::<String>::new;
    let ns = select(vec!["global", "background", "autocomplete", "skill-a", "skill-x_1-2"]);
    let keys: Vec<String> =
        ["theme", "coffee", "k", "K", " k ", "a%", "_", "a\0b", "../k", "dark_mode"].map(String::from).to_vec();
    let key = prop_oneof![3 => select(keys), 1 => text(none()).prop_map(|t| format!("k{t}"))];
    let words: Vec<String> =
        ["The user prefers dark mode", "oat flat white", "dark", "coffee order", "theme", "%", "_"]
            .map(String::from)
            .to_vec();
    let prose = move || prop_oneof![select(words.clone()), text(none()).prop_map(|t| format!("{t} dark"))];
    let limit = proptest::option::of(-3i64..120);
    (
        select(vec!["search", "put", "put", "forget", "list"]),
        proptest::option::weighted(0.8, ns),
        key,
        prose(),
        prose(),
        limit,
    )
        .prop_map(|(op, ns, key, content, query, limit)| {
            let mut v = serde_json::json!({"op": op, "key": key, "content": content, "query": query});
            if let Some(ns) = ns {
                v["namespace"] = ns.into();
            } else if op != "search" {
                v["namespace"] = "global".into();
            }
            if let Some(l) = limit {
                v["limit"] = l.into();
            }
            v.to_string()
        })
        .boxed()
}

/// SPEC §6 namespaces, checked independently of the implementation.
fn valid_namespace(ns: &str) -> bool {
    matches!(ns, "global" | "background" | "autocomplete")
        || ns.strip_prefix("skill-").is_some_and(|id| {
            (1..=64).contains(&id.len())
                && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
        })
}

/// One `memory_recall` call against the property and against `facts`, a model of what the
/// store holds: put creates exactly when the key was new, forget reports what existed, list
/// returns the namespace's facts in key order, search only returns stored facts, scored and
/// ranked; nothing but the fact count ever changes. True when the call succeeded.
fn check_recall(mem: &mut Memory, facts: &mut Facts, input: &str) -> Result<bool, String> {
    let before = snapshot(mem);
    let out = memory_recall_json(mem, input);
    let req: Value = serde_json::from_str(input).unwrap_or(Value::Null);
    let op = match req.get("op") {
        None | Some(Value::Null) => Some("search"),
        Some(v) => v.as_str(),
    };
    let str_of = |k: &str| req.get(k).and_then(Value::as_str).map(str::to_string);
    let v = match out {
        Err(e) => {
            check_err(&e)?;
            if !e.to_string().starts_with("memory_recall: ") {
                return Err(format!("an error that does not name the tool: {e}"));
            }
            let after = snapshot(mem);
            return if after == before {
                Ok(false)
            } else {
                Err(format!("a failed call changed the store: {before} → {after}"))
            };
        }
        Ok(v) => v,
    };
    let ns = str_of("namespace");
    if let Some(ns) = &ns
        && !valid_namespace(ns)
    {
        return Err(format!("accepted the namespace {ns:?}"));
    }
    match op {
        Some("put") => {
            let (ns, key, content) = (ns.unwrap(), str_of("key").unwrap(), str_of("content").unwrap());
            let new = facts.insert((ns, key), content).is_none();
            if v["status"] != "ok" || v["created"] != new {
                return Err(format!("put answered {v}, the key was new: {new}"));
            }
        }
        Some("forget") => {
            let existed = facts.remove(&(ns.unwrap(), str_of("key").unwrap())).is_some();
            if v["status"] != "ok" || v["forgotten"] != existed {
                return Err(format!("forget answered {v}, the key existed: {existed}"));
            }
        }
        Some("list") => {
            let ns = ns.unwrap();
            let got: Vec<(String, String, f64)> = v
                .as_array()
                .ok_or("list did not return an array")?
                .iter()
                .map(|h| {
                    (
                        h["key"].as_str().unwrap_or("?").into(),
                        h["content"].as_str().unwrap_or("?").into(),
                        h["score"].as_f64().unwrap_or(0.0),
                    )
                })
                .collect();
            let want: Vec<(String, String, f64)> =
                facts.iter().filter(|((n, _), _)| *n == ns).map(|((_, k), c)| (k.clone(), c.clone(), 1.0)).collect();
            if got != want {
                return Err(format!("list {ns}: got {got:?}, the model holds {want:?}"));
            }
        }
        Some("search") => {
            let hits = v.as_array().ok_or("search did not return an array")?;
            let limit = match req.get("limit") {
                None | Some(Value::Null) => 5,
                Some(n) => n.as_f64().map_or(5, |x| if x <= 0.0 { 5 } else { (x as usize).min(100) }),
            };
            if hits.len() > limit {
                return Err(format!("{} hits for limit {limit}", hits.len()));
            }
            let mut last = f64::INFINITY;
            for h in hits {
                let (n, k, c) = (h["namespace"].as_str(), h["key"].as_str(), h["content"].as_str());
                let (Some(n), Some(k), Some(c)) = (n, k, c) else { return Err(format!("malformed hit {h}")) };
                if facts.get(&(n.to_string(), k.to_string())).map(String::as_str) != Some(c) {
                    return Err(format!("search returned a fact the model does not hold: {h}"));
                }
                if ns.as_deref().is_some_and(|ns| ns != n) {
                    return Err(format!("search in {ns:?} returned a fact of {n}"));
                }
                let score = h["score"].as_f64().unwrap_or(f64::NAN);
                if !(score.is_finite() && score > 0.0 && score <= last) {
                    return Err(format!("score {score} after {last}"));
                }
                last = score;
                if h["updated_at"].as_str().and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok()).is_none() {
                    return Err(format!("updated_at of {h}"));
                }
            }
        }
        other => return Err(format!("Ok for the op {other:?}")),
    }
    // Recall writes touch nothing but the fact table.
    let after = snapshot(mem);
    let mut masked = after.clone();
    masked["counts"]["recall_facts"] = before["counts"]["recall_facts"].clone();
    if masked != before {
        return Err(format!("recall changed more than its facts: {before} → {after}"));
    }
    if after["counts"]["recall_facts"] != facts.len() {
        return Err(format!("{} facts stored, the model holds {}", after["counts"]["recall_facts"], facts.len()));
    }
    Ok(true)
}

#[test]
fn fuzz_recall() {
    let (_fx, _dir, mem, _) = small_store();
    let state = RefCell::new((mem, Facts::new()));
    fuzz(
        "recall",
        0x6d74_7265_6500_0002,
        3000,
        prop_oneof![2 => clean_recall_request(), 1 => recall_request()],
        |input| Some(("input.json".into(), input.as_bytes().to_vec())),
        |input| {
            let (mem, facts) = &mut *state.borrow_mut();
            check_recall(mem, facts, input)
        },
    );
}

#[test]
fn fuzz_recall_replay() {
    let (_fx, _dir, mem, _) = small_store();
    let state = RefCell::new((mem, Facts::new()));
    replay("recall", |_, bytes| {
        let input = String::from_utf8_lossy(bytes);
        let (mem, facts) = &mut *state.borrow_mut();
        check_recall(mem, facts, input.strip_suffix('\n').unwrap_or(&input)).map(|_| ())
    });
}

// ---- byte mutations (registry files and importers) --------------------------------------------

/// One edit of a seed file.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    /// Cut the file at a byte.
    Truncate(Index),
    /// Flip one bit of a byte.
    Flip(Index, u8),
    /// Insert a byte (often one that breaks UTF-8 or the format's syntax).
    Insert(Index, u8),
    /// Delete up to 8 bytes.
    Delete(Index, u8),
    /// Repeat a line.
    DupLine(Index),
    /// Drop a line.
    DropLine(Index),
    /// Insert a token of the format.
    Splice(Index, &'static str),
}

/// Bytes that break UTF-8 (lone continuation, truncated lead, never-valid) or the syntax of
/// JSON, YAML, mbox and Slack markup.
const HOSTILE_BYTES: &[u8] = &[
    0xff, 0xfe, 0xc3, 0xe2, 0x80, 0xed, 0xf4, 0x00, b'\n', b'\r', b'"', b'{', b'}', b'[', b']', b',', b':', b'>', b'<',
    b'-', b'=', b'\\', b' ', b'F', b'#', b'&', b'|', b'\'',
];

pub(crate) fn mutations(tokens: &'static [&'static str]) -> BoxedStrategy<Vec<Mutation>> {
    let byte = prop_oneof![3 => select(HOSTILE_BYTES), 1 => any::<u8>()];
    let one = prop_oneof![
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        3 => (any::<Index>(), byte).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (any::<Index>(), 1u8..8).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => any::<Index>().prop_map(Mutation::DupLine),
        1 => any::<Index>().prop_map(Mutation::DropLine),
        3 => (any::<Index>(), select(tokens)).prop_map(|(i, t)| Mutation::Splice(i, t)),
    ];
    vec(one, 1..5).boxed()
}

/// Where line `i` (of the lines of `b`) starts and ends, its `\n` included.
fn line_span(b: &[u8], at: Index) -> (usize, usize) {
    let starts: Vec<usize> =
        std::iter::once(0).chain(b.iter().enumerate().filter(|(_, c)| **c == b'\n').map(|(i, _)| i + 1)).collect();
    let k = at.index(starts.len());
    let start = starts[k];
    let end = starts.get(k + 1).copied().unwrap_or(b.len());
    (start, end)
}

pub(crate) fn mutate(seed: &[u8], ms: &[Mutation]) -> Vec<u8> {
    let mut b = seed.to_vec();
    for m in ms {
        match m {
            Mutation::Truncate(i) => b.truncate(i.index(b.len() + 1)),
            Mutation::Flip(i, bit) if !b.is_empty() => {
                let i = i.index(b.len());
                b[i] ^= 1 << bit;
            }
            Mutation::Insert(i, x) => b.insert(i.index(b.len() + 1), *x),
            Mutation::Delete(i, n) if !b.is_empty() => {
                let i = i.index(b.len());
                let end = (i + *n as usize).min(b.len());
                b.drain(i..end);
            }
            Mutation::DupLine(i) => {
                let (s, e) = line_span(&b, *i);
                let line = b[s..e].to_vec();
                b.splice(e..e, line);
            }
            Mutation::DropLine(i) => {
                let (s, e) = line_span(&b, *i);
                b.drain(s..e);
            }
            Mutation::Splice(i, t) => {
                let i = i.index(b.len() + 1);
                b.splice(i..i, t.bytes());
            }
            _ => {}
        }
    }
    b
}

// ---- target 3: the entity registry's front-matter parser --------------------------------------

/// Valid files for `person:x` (so each sits at its id's canonical path): every field, the
/// Obsidian-lenient forms (BOM, CRLF, `...` terminator, a plain-string alias), the bare
/// minimum, and quoting, tags and flow collections.
const REGISTRY_SEEDS: &[&str] = &[
    "---\nid: person:x\nkind: person\ndisplay_name: Alice Liddell\naliases:\n- Ally\n- A. Liddell\nemails:\n- alice@example.com\nhandles:\n- kind: slack\n  value: alice\ncreated_at: 2023-05-08T00:00:00Z\nupdated_at: 2023-05-08T00:00:00Z\ntags:\n- friend\n---\n# Alice\n\nMet at RustConf.\n",
    "\u{feff}---\r\nid: person:x\r\nkind: person\r\ndisplay_name: 2024\r\naliases: Ally\r\n...\r\nbody\r\n---\r\nmore",
    "---\nid: person:x\nkind: person\n---\n",
    "---\nid: 'person:x'\nkind: \"person\"\ndisplay_name: !!str yes\naliases: [\"null\", '~', \"a\\0b\"]\nhandles:\n  - alice\n  - {kind: github, value: ali-ce}\ncssclasses: wide\n---\nnotes with --- inside\n---\n",
];

/// YAML and front-matter tokens to splice in.
const YAML_TOKENS: &[&str] = &[
    "---\n",
    "...\n",
    "\n---",
    ": ",
    "- ",
    "-\n",
    "? ",
    "&a ",
    "*a",
    "!!binary ",
    "!!int ",
    "!tag ",
    "|\n",
    ">-\n",
    "'",
    "\"",
    "{",
    "}",
    "[",
    "]",
    "#",
    "\t",
    "\u{feff}",
    "id: person:y\n",
    "kind: robot\n",
    "kind: organization\n",
    "id:\n",
    "aliases: {x: 1}\n",
    "handles: {kind: k}\n",
    "display_name: [a, b]\n",
    "created_at: 2023-05-08\n",
    "emails: ~\n",
    "id: person:x\n",
    "a: &a [*a, *a]\n",
    "<<: *a\n",
    "%YAML 1.2\n",
    "\\u0000",
    "\0",
    "\u{85}",
    "\u{2028}",
];

#[derive(Debug, Clone)]
enum RegistryCase {
    /// A mutated file at `entities/person/x.md`.
    File(Bytes),
    /// A generated record to `put` and read back.
    Record(EntityRecord),
}

fn registry_case() -> BoxedStrategy<RegistryCase> {
    let none = Vec::<String>::new;
    let file = (select(REGISTRY_SEEDS), mutations(YAML_TOKENS))
        .prop_map(|(seed, ms)| RegistryCase::File(Bytes(mutate(seed.as_bytes(), &ms))));
    let kind = prop_oneof![
        4 => select(EntityKind::ALL.to_vec()).prop_map(|k| (k.as_str().to_string(), Some(k))),
        1 => select(vec!["Person", "robot", "", "../person", "person/.."])
            .prop_map(|k| (k.to_string(), EntityKind::parse(k))),
    ];
    // Half the tails start with a letter, so most ids leave a slug to name a file after.
    let tail = prop_oneof![text(none()), text(none()).prop_map(|t| format!("a{t}"))];
    let handle = (text(none()), text(none())).prop_map(|(k, v)| Handle::new(k, v));
    let record =
        (kind, tail, text(none()), vec(text(none()), 0..4), vec(text(none()), 0..3), vec(handle, 0..3), text(none()))
            .prop_map(|((kind_text, kind), tail, display, aliases, emails, handles, notes)| {
                RegistryCase::Record(EntityRecord {
                    id: EntityId::from(format!("{kind_text}:{tail}")),
                    kind: kind.unwrap_or(EntityKind::Misc),
                    display_name: display,
                    aliases,
                    emails,
                    handles,
                    created_at: String::new(),
                    updated_at: String::new(),
                    notes,
                })
            });
    prop_oneof![1 => file, 1 => record].boxed()
}

/// `rec` as it reads back after `put`: blank list items and blank handle values are dropped,
/// a non-empty notes body ends with a newline, the timestamps are `got`'s.
fn expected_after_put(rec: &EntityRecord, got: &EntityRecord) -> EntityRecord {
    let keep = |v: &Vec<String>| v.iter().filter(|s| !s.trim().is_empty()).cloned().collect::<Vec<_>>();
    let mut notes = rec.notes.clone();
    if !notes.is_empty() && !notes.ends_with('\n') {
        notes.push('\n');
    }
    EntityRecord {
        aliases: keep(&rec.aliases),
        emails: keep(&rec.emails),
        handles: rec.handles.iter().filter(|h| !h.value.trim().is_empty()).cloned().collect(),
        notes,
        created_at: got.created_at.clone(),
        updated_at: got.updated_at.clone(),
        ..rec.clone()
    }
}

/// The names an entity answers to in `lookup_alias`.
fn names_of(r: &EntityRecord) -> Vec<String> {
    std::iter::once(&r.display_name)
        .chain(&r.aliases)
        .chain(&r.emails)
        .chain(r.handles.iter().map(|h| &h.value))
        .filter(|s| !s.trim().is_empty())
        .cloned()
        .collect()
}

/// A hand-edited (here: mutated) file: `get` parses it or says it is corrupt, naming the file;
/// `all` and `lookup_alias` agree with `get`; `put` updates a file that parses and leaves one
/// that does not byte for byte; nothing is written anywhere else. True when the file parsed.
fn check_registry_file(bytes: &[u8]) -> Result<bool, String> {
    let (dir, reg) = open_registry(scratch());
    let id = EntityId::from("person:x");
    let path = reg.path_for(&id).unwrap();
    // The same bytes as a copy and in another kind's folder: neither is `person:x`'s file, and
    // neither is the file of the id inside (the mutations cannot spell `person:copy` or
    // `organization:x`), so `all` and `lookup_alias` must ignore both.
    let copies = [path.with_file_name("copy.md"), reg.root().join("organization").join("x.md")];
    for p in std::iter::once(&path).chain(&copies) {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    let got = match reg.get(&id) {
        Ok(Some(r)) => {
            if r.id != id || r.kind != EntityKind::Person {
                return Err(format!("get returned {:?} of kind {}", r.id, r.kind));
            }
            Some(r)
        }
        Ok(None) => return Err("get found no record although the file exists".into()),
        Err(e) => {
            check_message(&e)?;
            if !matches!(e, Error::Corrupt { .. }) || !e.to_string().contains("x.md") {
                return Err(format!("an unreadable file is not a Corrupt error naming it: {e}"));
            }
            None
        }
    };
    let all = reg.all().map_err(|e| format!("all: {e}"))?;
    if all != got.iter().cloned().collect::<Vec<_>>() {
        return Err(format!("all() = {all:?} disagrees with get() = {got:?}"));
    }
    let names = got.as_ref().map(names_of).unwrap_or_else(|| vec!["Alice Liddell".into(), "Ally".into()]);
    for n in names {
        let ids = reg.lookup_alias(None, &n).map_err(|e| format!("lookup_alias: {e}"))?;
        if ids.contains(&id) != got.is_some() {
            return Err(format!("lookup_alias({n:?}) = {ids:?} disagrees with get() = {got:?}"));
        }
    }
    let update = EntityRecord::new(id.clone(), EntityKind::Person, "Alice Updated");
    match (&got, reg.put(&update, T0)) {
        (Some(old), Ok(())) => {
            let new = reg.get(&id).map_err(|e| format!("get after put: {e}"))?.ok_or("the file vanished")?;
            let mut notes = old.notes.clone();
            if !notes.is_empty() && !notes.ends_with('\n') {
                notes.push('\n');
            }
            if new.display_name != "Alice Updated" || new.notes != notes {
                return Err(format!("put lost the update or the notes: {old:?} → {new:?}"));
            }
            if !old.created_at.is_empty() && new.created_at != old.created_at {
                return Err(format!("put changed created_at {:?} → {:?}", old.created_at, new.created_at));
            }
        }
        (Some(old), Err(e)) => return Err(format!("put refused to update a file that parses ({old:?}): {e}")),
        (None, Ok(())) => return Err("put overwrote a file that does not parse".into()),
        (None, Err(e)) => {
            if !matches!(e, Error::Corrupt { .. }) || fs::read(&path).unwrap() != bytes {
                return Err(format!("put on an unreadable file: {e}, and the file is no longer the same"));
            }
        }
    }
    let mut want = vec![path.clone(), copies[0].clone(), copies[1].clone()];
    want.sort();
    let files = files_under(dir.path());
    if files != want {
        return Err(format!("files after the calls: {files:?}"));
    }
    for c in &copies {
        if fs::read(c).unwrap() != bytes {
            return Err(format!("put touched the copy {}", c.display()));
        }
    }
    Ok(got.is_some())
}

/// A generated record: `put` succeeds exactly when `path_for` accepts the id (and the kind is
/// the id's), lands inside `<root>/<kind>/`, and reads back equal through `get`, `all` and
/// `lookup_alias`. True when the record was stored.
fn check_registry_record(rec: &EntityRecord) -> Result<bool, String> {
    let (dir, reg) = open_registry(scratch());
    let own_kind = rec.id.as_str().split_once(':').and_then(|(k, _)| EntityKind::parse(k));
    let path = reg.path_for(&rec.id);
    let put = reg.put(rec, T0);
    match (&path, &put, own_kind == Some(rec.kind)) {
        (Err(e), Err(_), _) | (Ok(_), Err(e), false) => {
            check_err(e)?;
            let files = files_under(dir.path());
            return if files.is_empty() { Ok(false) } else { Err(format!("a refused put wrote {files:?}")) };
        }
        (Ok(_), Ok(()), true) => {}
        _ => {
            return Err(format!(
                "path_for {path:?} and put {put:?} disagree (kind matches: {})",
                own_kind == Some(rec.kind)
            ));
        }
    }
    let path = path.unwrap();
    let folder = reg.root().join(rec.kind.as_str());
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let clean_name = !name.starts_with('.')
        && name.ends_with(".md")
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b));
    if path.parent() != Some(folder.as_path()) || !clean_name {
        return Err(format!("{:?} is written to {}", rec.id, path.display()));
    }
    let got = reg.get(&rec.id).map_err(|e| format!("get after put: {e}"))?.ok_or("get after put found nothing")?;
    let want = expected_after_put(rec, &got);
    if got != want {
        return Err(format!("round trip:\n put {rec:?}\n got {got:?}"));
    }
    if reg.all().map_err(|e| e.to_string())? != vec![got.clone()] {
        return Err("all() does not list exactly the record".into());
    }
    for n in names_of(&got) {
        if !reg.lookup_alias(Some(rec.kind), &n).map_err(|e| e.to_string())?.contains(&rec.id) {
            return Err(format!("lookup_alias({n:?}) does not find {:?}", rec.id));
        }
    }
    let files = files_under(dir.path());
    if files != vec![path.clone()] {
        return Err(format!("files after put: {files:?}"));
    }
    Ok(true)
}

#[test]
fn fuzz_registry() {
    fuzz(
        "registry",
        0x6d74_7265_6500_0003,
        2000,
        registry_case(),
        |c| match c {
            RegistryCase::File(b) => Some(("x.md".into(), b.0.clone())),
            // A record is not a file: its seed stays in the proptest regressions file.
            RegistryCase::Record(_) => None,
        },
        |c| match c {
            RegistryCase::File(b) => check_registry_file(&b.0),
            RegistryCase::Record(r) => check_registry_record(r),
        },
    );
}

#[test]
fn fuzz_registry_replay() {
    replay("registry", |_, bytes| check_registry_file(bytes).map(|_| ()));
}

// ---- target 4: the importers ------------------------------------------------------------------

/// The five import formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    ChatJsonl,
    Locomo,
    Markdown,
    Mbox,
    Slack,
}

impl Format {
    pub(crate) fn target(self) -> &'static str {
        match self {
            Format::ChatJsonl => "chat_jsonl",
            Format::Locomo => "locomo",
            Format::Markdown => "markdown",
            Format::Mbox => "mbox",
            Format::Slack => "slack",
        }
    }

    /// The seed files, by path relative to the import root (one file for file formats).
    pub(crate) fn seed(self) -> Vec<(&'static str, &'static str)> {
        match self {
            Format::ChatJsonl => vec![("chat.jsonl", CHAT_SEED)],
            Format::Locomo => vec![("locomo.json", LOCOMO_SEED)],
            Format::Mbox => vec![("mail.mbox", MBOX_SEED)],
            Format::Markdown => vec![
                ("notes/a.md", "# Roadmap\n\nQ3 goals: ship **Phoenix**, migrate billing.\n"),
                ("notes/sub/b.md", "No title line; Alice owns the Lisbon offsite.\n\n- [ ] book hotel\n"),
                ("c.md", "\u{feff}# Café ☕\r\nÜber-notes, naïve résumé.\r\n"),
                ("ignored.txt", "not a note"),
            ],
            Format::Slack => vec![
                ("users.json", SLACK_USERS),
                ("channels.json", SLACK_CHANNELS),
                ("eng/2023-05-02.json", SLACK_DAY_1),
                ("eng/2023-05-03.json", SLACK_DAY_2),
            ],
        }
    }

    /// Format tokens worth splicing in.
    fn tokens(self) -> &'static [&'static str] {
        match self {
            Format::ChatJsonl | Format::Locomo | Format::Slack => JSON_TOKENS,
            Format::Mbox => MBOX_TOKENS,
            Format::Markdown => YAML_TOKENS,
        }
    }

    /// Which seed file a corpus file replaces: slack by name (`channels`, `users`, else a day
    /// file), every other format its one file (markdown: the first note).
    pub(crate) fn corpus_slot(self, name: &str) -> &'static str {
        match self {
            Format::Slack if name.contains("channels") => "channels.json",
            Format::Slack if name.contains("users") => "users.json",
            Format::Slack => "eng/2023-05-02.json",
            _ => self.seed()[0].0,
        }
    }
}

pub(crate) const CHAT_SEED: &str = concat!(
    r#"{"source_id":"slack:#eng","author":"Alice","ts":1683504000000,"text":"The Phoenix launch moves to May 15 #launch","source_ref":"m1"}"#,
    "\n",
    r#"{"source_id":"slack:#eng","author":"Bob","ts":"2023-05-08T00:01:00Z","text":"Phoenix needs the billing API, ask @carol"}"#,
    "\n\n",
    r#"{"source_id":"slack:#ops","author":"Dana","ts":1683590400000,"text":"Offsite in Lisbon is booked \u2713 ✓"}"#,
    "\n",
);

pub(crate) const LOCOMO_SEED: &str = r#"[
 {"sample_id": "conv-1",
  "conversation": {
   "speaker_a": "Caroline", "speaker_b": "Melanie",
   "session_1_date_time": "1:56 pm on 8 May, 2023",
   "session_1": [
    {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel! I went to an LGBTQ support group yesterday."},
    {"speaker": "Melanie", "dia_id": "D1:2", "text": "That's great! Look at this.", "img_url": ["x"], "blip_caption": "a photo of a sunset"}
   ],
   "session_2_date_time": "12:05 am on 20 January, 2024",
   "session_2": [
    {"speaker": "Caroline", "dia_id": "D2:1", "text": "I'm researching adoption agencies."}
   ]
  },
  "qa": [
   {"question": "When did Caroline go to the support group?", "answer": "7 May 2023", "evidence": ["D1:1"], "category": 2},
   {"question": "What is Caroline researching?", "answer": 42, "evidence": ["D2:1; D1:1"], "category": 1}
  ]
 }
]
"#;

pub(crate) const MBOX_SEED: &str = "From alice@example.com Tue May  2 09:14:00 2023
From: Alice Liddell <alice@example.com>
To: bob@example.com, \"Carol, C.\" <carol@example.com>
Subject: =?utf-8?Q?Phoenix_launch_=E2=9C=93?=
Date: Tue, 2 May 2023 09:14:00 +0000
Message-ID: <1@example.com>
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

The launch moves to May 15. Caf=C3=A9 at =
noon.
>From the notes: bring the deck.

From bob@example.com Tue May  2 10:00:00 2023
From: Bob <bob@example.com>
To: alice@example.com
Subject: Re: Phoenix launch
Date: Tue, 2 May 2023 10:00:00 +0000
Message-ID: <2@example.com>
In-Reply-To: <1@example.com>
References: <1@example.com>
Content-Type: multipart/alternative; boundary=\"XX\"

--XX
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: base64

T0ssIEkgd2lsbCBhc2sgQ2Fyb2wgYWJvdXQgdGhlIGJpbGxpbmcgQVBJLg==
--XX
Content-Type: text/html

<p>OK, I will ask <b>Carol</b>.</p>
--XX--

From carol@example.com Wed May  3 08:00:00 2023
From: carol@example.com
Subject: billing
Content-Type: text/plain; charset=iso-8859-1

No Date header: the separator's date counts.
";

pub(crate) const SLACK_USERS: &str = r#"[{"id":"U1","name":"maya","real_name":"Maya Okafor"},{"id":"U2","name":"tomas","profile":{"real_name":"Tomás Reyes"}}]"#;
pub(crate) const SLACK_CHANNELS: &str = r#"[{"id":"C1","name":"eng"},{"id":"C2","name":"empty"}]"#;
pub(crate) const SLACK_DAY_1: &str = r#"[
 {"type":"message","user":"U2","text":"thanks <@U1>, see <https://example.com/doc|the doc> in <#C9|design> &amp; ping <!here>","ts":"1683020000.000200"},
 {"type":"message","subtype":"channel_join","user":"U2","text":"<@U2> has joined the channel","ts":"1683010000.000100"},
 {"type":"message","user":"U1","text":"Atlas migration starts today #atlas","ts":"1683019000.000100","files":[{"title":"plan.pdf"}]}
]"#;
pub(crate) const SLACK_DAY_2: &str =
    r#"[{"type":"message","username":"bot","text":"<mailto:a@b.example|a@b.example> &lt;ok&gt;","ts":"1683100000.5"}]"#;

const JSON_TOKENS: &[&str] = &[
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "1e999",
    "-1",
    "0",
    "9223372036854775808",
    "\"ts\":\"x\",",
    "\"ts\":-1,",
    "\"extra\":1,",
    "\\u0000",
    "\\ud800",
    "\\",
    "\"",
    ",",
    ":",
    "\n",
    "\u{feff}",
    "../",
    "<@U1>",
    "<",
    "<!here|",
    "&amp;",
    "\"name\":\"..\",",
    // Harmless inside a string value, which is where most splice points fall.
    "é",
    "🦀",
    " ",
    "x",
    "\\n",
    "\\\"",
    "\\u00e9",
    "\\u202e",
    "%",
    "AND",
    "\"session_9\":[],",
    "\"session_3_date_time\":\"1:56 pm on 8 May, 99999\",",
    "{\"a\":",
];

const MBOX_TOKENS: &[&str] = &[
    "From ",
    "\nFrom x Tue May  2 09:14:00 2023\n",
    "\n\n",
    "\n",
    ">",
    ">From ",
    "--XX",
    "--XX--",
    "=?utf-8?B?",
    "=?",
    "?=",
    "=?utf-8?Q?=FF?=",
    "=",
    "=\n",
    "=F",
    "=ZZ",
    "Date: yesterday\n",
    "Date: Tue, 2 May 99999 09:14:00 +0000\n",
    "Content-Type: multipart/mixed; boundary=\"b\"\n",
    "Content-Type: multipart/mixed\n",
    "Content-Transfer-Encoding: base64\n",
    "Content-Disposition: attachment\n",
    " folded\n",
    "\t",
    ":",
    "<",
    ">",
    "\r",
    "Message-ID: <>\n",
    "References: <a> <b>\n",
    "charset=\"latin1\"",
    "Subject: \n",
];

/// Write `files` under a fresh folder and return it with the path to hand the importer.
pub(crate) fn write_input(format: Format, files: &[(&str, Vec<u8>)]) -> (tempfile::TempDir, PathBuf) {
    let dir = scratch();
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, bytes).unwrap();
    }
    let input = match format {
        Format::Markdown | Format::Slack => dir.path().to_path_buf(),
        _ => dir.path().join(files[0].0),
    };
    (dir, input)
}

/// What an importer returned, ready to ingest.
pub(crate) enum Imported {
    Items(Vec<Item>),
    Conversations(Vec<crate::ingest::import::locomo::Conversation>),
    Documents(Vec<crate::Document>),
}

/// The import as `--strict` reads it: the first record that cannot be read (any warning) is
/// the error, naming its file.
pub(crate) fn import(format: Format, path: &Path) -> crate::Result<Imported> {
    let strict = |(items, report): (Vec<Item>, crate::ReadReport)| report.strict(path).map(|()| items);
    Ok(match format {
        Format::ChatJsonl => Imported::Items(strict(read_chat_jsonl(path)?)?),
        Format::Mbox => Imported::Items(strict(read_mbox(path)?)?),
        Format::Slack => Imported::Items(strict(read_slack_export(path)?)?),
        Format::Locomo => Imported::Conversations(read_locomo(path)?),
        Format::Markdown => Imported::Documents(read_markdown_dir(path)?),
    })
}

/// Ingest an import as the CLI does (items in one batch, a conversation or a document at a
/// time), into `mem`.
pub(crate) fn ingest_imported(mem: &mut Memory, imported: Imported) -> crate::Result<()> {
    match imported {
        Imported::Items(items) => {
            mem.ingest(items)?;
        }
        Imported::Conversations(convs) => {
            for c in convs {
                mem.ingest(c.items())?;
            }
        }
        Imported::Documents(docs) => {
            for d in docs {
                mem.ingest_document(d)?;
            }
        }
    }
    mem.flush()?;
    Ok(())
}

/// One import of `files` (with `slot` the file that was mutated): no panic; an error is an
/// `ImportFormat` (or I/O) error naming a file of the input; a mutated file that is not UTF-8
/// and that the importer must read is refused as such; and whatever the importer accepts,
/// `mem` ingests (the importers validate every item so that a bad one fails the import, naming
/// its line, before anything is written). True when the import was accepted.
pub(crate) fn check_import(
    format: Format,
    files: &[(&str, Vec<u8>)],
    slot: &str,
    mem: &mut Memory,
) -> Result<bool, String> {
    let (dir, input) = write_input(format, files);
    let mutated = files.iter().find(|(rel, _)| *rel == slot).map(|(_, b)| b.as_slice()).unwrap_or_default();
    // The slack day files are only read when channels.json still lists `eng`.
    let must_read = match format {
        Format::Slack if slot.starts_with("eng/") => files
            .iter()
            .find(|(rel, _)| *rel == "channels.json")
            .is_some_and(|(_, b)| b.as_slice() == SLACK_CHANNELS.as_bytes()),
        // `users.json` is read only in an export (with `channels.json`): without it the
        // missing `channels.json` is the error.
        Format::Slack if slot == "users.json" => files.iter().any(|(rel, _)| *rel == "channels.json"),
        Format::Markdown => slot.ends_with(".md"),
        _ => true,
    };
    let result = import(format, &input);
    // Mail declares its charsets: invalid UTF-8 in an mbox is decoded, not refused.
    if must_read && format != Format::Mbox && std::str::from_utf8(mutated).is_err() {
        let named = dir.path().join(slot);
        return match &result {
            // The first warning is the error: the invalid UTF-8, or a bad line before it.
            Err(Error::ImportFormat { path, .. }) if *path == named => Ok(false),
            Err(e) => Err(format!("invalid UTF-8 in {slot}: expected an error naming it, got {e}")),
            Ok(_) => Err(format!("invalid UTF-8 in {slot} was accepted")),
        };
    }
    let imported = match result {
        Err(e) => {
            check_err(&e)?;
            return match &e {
                Error::ImportFormat { path, .. } | Error::Io { path, .. } if path.starts_with(dir.path()) => Ok(false),
                _ => Err(format!("the error does not name a file of the input: {e:?}")),
            };
        }
        Ok(x) => x,
    };
    ingest_imported(mem, imported).map_err(|e| format!("the importer accepted what ingest refuses: {e}"))?;
    check_derived_in_step(mem)?;
    Ok(true)
}

/// The seed of `format` with `slot` replaced by `bytes`.
pub(crate) fn seed_with(format: Format, slot: &str, bytes: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    format
        .seed()
        .into_iter()
        .map(|(rel, s)| (rel, if rel == slot { bytes.to_vec() } else { s.as_bytes().to_vec() }))
        .collect()
}

/// Fuzz one importer. Accepted imports all go into one store (a fresh store per case would
/// spend the budget on opening stores): re-imported items are duplicates and skipped, changed
/// ones add leaves, and the store's invariants are checked at the end.
fn fuzz_importer(format: Format, seed: u64, cases: u32) {
    let slots: Vec<&'static str> = format.seed().iter().map(|(rel, _)| *rel).collect();
    let strategy =
        (select(slots), mutations(format.tokens()), any::<bool>()).prop_map(move |(slot, ms, drop_other)| {
            let mut files = format.seed();
            let i = files.iter().position(|(rel, _)| *rel == slot).unwrap();
            let bytes = mutate(files[i].1.as_bytes(), &ms);
            // Sometimes a folder import also loses another of its files.
            if drop_other && files.len() > 1 {
                files.remove((i + 1) % files.len());
            }
            let files: Vec<(&'static str, Bytes)> = files
                .into_iter()
                .map(|(rel, s)| (rel, if rel == slot { Bytes(bytes.clone()) } else { Bytes(s.as_bytes().to_vec()) }))
                .collect();
            (slot, files)
        });
    let (fx, _dir, mem) = scratch_store();
    let mem = RefCell::new(mem);
    fuzz(
        format.target(),
        seed,
        cases,
        strategy,
        |(slot, files)| {
            let bytes = files.iter().find(|(rel, _)| rel == slot).map(|(_, b)| b.0.clone()).unwrap_or_default();
            Some((slot.replace('/', "_"), bytes))
        },
        |(slot, files)| {
            let files: Vec<(&str, Vec<u8>)> = files.iter().map(|(rel, b)| (*rel, b.0.clone())).collect();
            check_import(format, &files, slot, &mut mem.borrow_mut())
        },
    );
    check_invariants(&mem.borrow(), &fx.cfg);
}

/// Replay a format's corpus, each input into a fresh store.
fn replay_importer(format: Format) {
    replay(format.target(), |f, bytes| {
        let name = f.file_name().unwrap().to_string_lossy();
        let slot = format.corpus_slot(&name);
        let (fx, _dir, mut mem) = scratch_store();
        check_import(format, &seed_with(format, slot, bytes), slot, &mut mem)?;
        check_invariants(&mem, &fx.cfg);
        Ok(())
    });
}

#[test]
fn fuzz_import_chat_jsonl() {
    fuzz_importer(Format::ChatJsonl, 0x6d74_7265_6500_0004, 600);
}

#[test]
fn fuzz_import_chat_jsonl_replay() {
    replay_importer(Format::ChatJsonl);
}

#[test]
fn fuzz_import_locomo() {
    fuzz_importer(Format::Locomo, 0x6d74_7265_6500_0005, 800);
}

#[test]
fn fuzz_import_locomo_replay() {
    replay_importer(Format::Locomo);
}

#[test]
fn fuzz_import_markdown() {
    fuzz_importer(Format::Markdown, 0x6d74_7265_6500_0006, 150);
}

#[test]
fn fuzz_import_markdown_replay() {
    replay_importer(Format::Markdown);
}

#[test]
fn fuzz_import_mbox() {
    fuzz_importer(Format::Mbox, 0x6d74_7265_6500_0007, 500);
}

#[test]
fn fuzz_import_mbox_replay() {
    replay_importer(Format::Mbox);
}

#[test]
fn fuzz_import_slack() {
    fuzz_importer(Format::Slack, 0x6d74_7265_6500_0008, 800);
}

#[test]
fn fuzz_import_slack_replay() {
    replay_importer(Format::Slack);
}

/// The unmutated seeds import and ingest (the fuzz runs start from valid input).
#[test]
fn fuzz_seeds_are_valid() {
    for f in [Format::ChatJsonl, Format::Locomo, Format::Markdown, Format::Mbox, Format::Slack] {
        let files: Vec<(&str, Vec<u8>)> = f.seed().into_iter().map(|(r, s)| (r, s.as_bytes().to_vec())).collect();
        let (_dir, input) = write_input(f, &files);
        match import(f, &input).unwrap() {
            Imported::Items(items) => assert!(items.len() >= 3, "{f:?}: {} items", items.len()),
            Imported::Conversations(c) => assert_eq!(c[0].turns.len(), 3),
            Imported::Documents(d) => assert_eq!(d.len(), 3),
        }
        let (fx, _dir, mut mem) = scratch_store();
        assert!(check_import(f, &files, files[0].0, &mut mem).unwrap(), "{f:?}");
        check_invariants(&mem, &fx.cfg);
    }
    for seed in REGISTRY_SEEDS {
        assert!(check_registry_file(seed.as_bytes()).unwrap(), "{seed}");
        let (_dir, reg) = open_registry(scratch());
        let p = reg.path_for(&EntityId::from("person:x")).unwrap();
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, seed).unwrap();
        assert!(reg.get(&EntityId::from("person:x")).unwrap().is_some(), "{seed}");
    }
}
