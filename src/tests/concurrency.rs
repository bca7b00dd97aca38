//! Readers while one writer works: reader threads (`Memory::reader`) and a second process
//! (the `memtree` CLI, itself a writer that waits for its turn) query while the writer
//! ingests and replaces a document over and over. No reader may see a mix of two versions,
//! get an error, or hang; a second writer's write goes in between the first one's writes.

use crate::Scope;
use crate::store::NodeReads;
use crate::tests::common::{Fixture, HOUR, T0, chat};
use crate::{Config, Document, Memory, MemoryReader, OpenOptions, SourceId, TreeId};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

const DOC: &str = "doc:notes/plan.md";
const VERSIONS: u32 = 25;

fn config() -> Config {
    // Small chunks: every version is several leaves, and versions differ in leaf count.
    Config { chunk_tokens: 30, chunk_overlap_tokens: 0, ..Config::default() }
}

/// Version `v`: `v % 4 + 2` sections; the title (which every leaf of a document carries)
/// names the edition, so any leaf tells which version it belongs to.
fn plan(v: u32) -> Document {
    let sections = v % 4 + 2;
    Document {
        source_id: SourceId::from(DOC),
        title: format!("Plan edition v{v}"),
        body: (0..sections)
            .map(|i| {
                format!("Section {i} of the osprey plan, edition v{v}. Budget review with Kestrel Labs follows.\n\n")
            })
            .collect(),
        modified_ms: Some(T0 + i64::from(v) * HOUR),
        source_ref: Some("notes/plan.md".into()),
        provider: None,
    }
}

/// The edition a text names ("edition v7" → 7).
fn edition(text: &str) -> Option<u32> {
    let at = text.find("edition v")? + "edition v".len();
    text[at..].chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok()
}

/// What one reader observed: a snapshot of the document read straight from the store.
/// Every leaf names the same edition, the number of leaves is that edition's, and the
/// summary lists exactly those leaves.
fn check_snapshot(r: &MemoryReader) -> Result<Option<u32>, String> {
    let tree = TreeId::for_source(&SourceId::from(DOC));
    // Two statements: only the snapshot makes the second agree with the first.
    let (nodes, summaries) = r
        .read(|r| Ok((r.store().tree_nodes(&tree)?, r.store().tree_summaries(&tree)?)))
        .map_err(|e| format!("reader error: {e}"))?;
    if nodes.is_empty() {
        return Ok(None);
    }
    let leaves: Vec<_> = nodes.iter().filter(|n| n.is_leaf()).collect();
    let eds: BTreeSet<Option<u32>> = leaves.iter().map(|n| edition(&n.content)).collect();
    let [Some(v)] = eds.iter().copied().collect::<Vec<_>>()[..] else {
        return Err(format!("one snapshot shows editions {eds:?}"));
    };
    let chunks = crate::Document::into_drafts(plan(v), &config(), T0).map_err(|e| e.to_string())?.len();
    if leaves.len() != chunks {
        return Err(format!("edition {v}: {} leaves visible, the edition has {chunks}", leaves.len()));
    }
    let ids: BTreeSet<_> = leaves.iter().map(|n| n.node_id.clone()).collect();
    if summaries.len() != 1 || summaries[0].child_ids.iter().cloned().collect::<BTreeSet<_>>() != ids {
        return Err(format!("edition {v}: the summary does not list exactly the visible leaves"));
    }
    Ok(Some(v))
}

/// Through the tool: every hit of the document in one `walk` names one edition.
fn check_walk(out: &Value) -> Result<(), String> {
    let hits = out["hits"].as_array().ok_or_else(|| format!("not a QueryResponse: {out}"))?;
    let eds: BTreeSet<u32> = hits
        .iter()
        .filter(|h| h["tree_scope"] == DOC && h["node_kind"] == "leaf")
        .filter_map(|h| h["content"].as_str().and_then(edition))
        .collect();
    if eds.len() > 1 {
        return Err(format!("one walk answer mixes editions {eds:?}"));
    }
    Ok(())
}

const WALK: &str = r#"{"mode":"walk","query":"osprey plan section edition budget","limit":100}"#;

/// Writer: replace the document `VERSIONS` times, with chat traffic in between.
fn write_all(mem: &mut Memory) {
    for v in 1..=VERSIONS {
        mem.ingest_document(plan(v)).unwrap();
        let ts = T0 + i64::from(v) * HOUR;
        mem.ingest([chat("slack:#eng", "Ada", ts, &format!("Osprey plan edition v{v} is out"))]).unwrap();
    }
}

#[test]
fn reader_threads_never_see_a_mix_of_versions() {
    let fx = Fixture::new(config());
    let mut mem = fx.open();
    mem.ingest_document(plan(0)).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<Result<(usize, BTreeSet<u32>), String>>();
    let mut handles = Vec::new();
    for _ in 0..3 {
        let reader = mem.reader().unwrap();
        let (done, tx) = (Arc::clone(&done), tx.clone());
        handles.push(std::thread::spawn(move || {
            let mut seen = BTreeSet::new();
            let mut reads = 0;
            let result = loop {
                // Read once more after the writer finished, so the last version is seen.
                let last = done.load(Ordering::SeqCst);
                match check_snapshot(&reader) {
                    Ok(v) => seen.extend(v),
                    Err(e) => break Err(e),
                }
                let out = match crate::tool::call_read_json(&reader, WALK, &Scope::all()) {
                    Ok(out) => out,
                    Err(e) => break Err(format!("walk failed: {e}")),
                };
                if let Err(e) = check_walk(&out) {
                    break Err(e);
                }
                reads += 1;
                if last {
                    break Ok((reads, seen));
                }
            };
            tx.send(result).unwrap();
        }));
    }
    drop(tx);
    write_all(&mut mem);
    done.store(true, Ordering::SeqCst);
    for _ in 0..handles.len() {
        // A hung reader fails the test instead of hanging it.
        let (reads, seen) = rx.recv_timeout(Duration::from_secs(120)).expect("reader hung").unwrap();
        assert!(reads >= 1);
        assert!(seen.contains(&VERSIONS), "the last edition was never seen: {seen:?}");
    }
    for h in handles {
        h.join().unwrap();
    }
}

#[test]
fn a_second_process_reads_while_the_writer_holds_the_store() {
    let fx = Fixture::new(config());
    let mut mem = fx.open();
    mem.ingest_document(plan(0)).unwrap();
    let dir = fx.dir.path().to_path_buf();
    let query = |args: &[&str]| -> Result<Value, String> {
        let out = std::process::Command::new(crate::tests::support::memtree_bin())
            .arg("--store")
            .arg(&dir)
            .arg("--no-model")
            .args(args)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("exit {}: {}", out.status, String::from_utf8_lossy(&out.stderr)));
        }
        serde_json::from_slice(&out.stdout).map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
    };
    let writer = std::thread::spawn(move || {
        write_all(&mut mem);
        mem
    });
    let mut answers = 0;
    while !writer.is_finished() {
        let out = query(&["tool", WALK]).unwrap();
        check_walk(&out).unwrap();
        answers += 1;
    }
    let mem = writer.join().unwrap();
    // The writer's handle is still open: the CLI sees the last edition.
    let out = query(&["tool", WALK]).unwrap();
    check_walk(&out).unwrap();
    let editions: BTreeSet<u32> = out["hits"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["tree_scope"] == DOC)
        .filter_map(|h| h["content"].as_str().and_then(edition))
        .collect();
    assert_eq!(editions, BTreeSet::from([VERSIONS]), "answers during the run: {answers}");
    let stats = query(&["stats"]).unwrap();
    assert_eq!(stats["leaves"], json!(mem.as_reader().stats().unwrap().counts.leaves));
    // An open handle holds no lock between writes: the CLI's write goes in, and the first
    // handle sees it on its next read.
    let doc = json!({"mode":"ingest_document","title":"Tern notes","body":"The tern survey starts in May.","source_id":"doc:x"})
        .to_string();
    let wrote = query(&["tool", &doc]).unwrap();
    assert!(wrote["leaves"].as_u64().is_some_and(|n| n >= 1), "{wrote}");
    assert!(mem.as_reader().read(|r| r.has_source("doc:x")).unwrap(), "the first handle sees the CLI's write");
    // And a third writer handle opens.
    Memory::open(fx.dir.path()).unwrap();
}

#[test]
fn a_read_only_reader_follows_the_writer_of_another_handle() {
    // `MemoryReader::open` is what another process uses: it must catch up with commits it
    // did not make (index reader reload, gazetteer for new names).
    let fx = Fixture::new(config());
    let mut mem = fx.open();
    mem.ingest_document(plan(1)).unwrap();
    let reader = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    assert_eq!(check_snapshot(&reader), Ok(Some(1)));
    mem.ingest_document(plan(2)).unwrap();
    mem.ingest([chat("slack:#eng", "Zephyrine", T0, "Zephyrine joined the osprey plan")]).unwrap();
    assert_eq!(check_snapshot(&reader), Ok(Some(2)));
    // "joined" as in the message: the test embedder hashes words without stemming, so this is
    // what lets its dense signal agree with the lexical one (with "join" the dense share alone
    // tied a document leaf with the message).
    let out =
        crate::tool::call_read_json(&reader, r#"{"mode":"walk","query":"What has Zephyrine joined?"}"#, &Scope::all())
            .unwrap();
    let hit = &out["hits"][0];
    assert!(hit["content"].as_str().unwrap().contains("Zephyrine"), "{out}");
    assert!(hit["explain"].to_string().contains("person:zephyrine"), "the new name routes: {hit}");
}

/// The dense state of `r` as comparable text: every node's vector as its top-3 neighbours'
/// ids and cosines for a few probe queries, and the session vectors' cosines.
pub(crate) fn dense_fingerprint(r: &MemoryReader, probes: &[&str]) -> (usize, usize, Vec<String>) {
    let d = r.dense().expect("a model is configured");
    let emb = crate::HashEmbedder::new(64);
    let mut out = Vec::new();
    let mut sessions = Vec::new();
    crate::store::VectorReads::for_each_session(r.store(), |s, _| sessions.push(s.to_string())).unwrap();
    sessions.sort();
    for p in probes {
        let q = crate::Embedder::embed(&emb, &[p]).unwrap().pop().unwrap();
        for (id, s) in d.vectors().top_k(&q, 5, crate::Rows::All) {
            out.push(format!("{p}: {id} {s:.5}"));
        }
        for s in &sessions {
            out.push(format!("{p}: session {s} {:?}", d.vectors().session_cosine(&q, s).map(|c| format!("{c:.5}"))));
        }
    }
    (d.vectors().len(), d.vectors().sessions(), out)
}

#[test]
fn a_reader_of_another_handle_catches_up_on_vectors_as_a_fresh_open_would() {
    // A reader that saw the store before a write loads only the vectors written after (and the
    // session vectors they change); after a delete it reloads them all. Either way its state
    // must equal what a reader opened afterwards loads from scratch.
    let fx = Fixture::new(config());
    let mut mem = fx.open();
    mem.ingest((0..6).map(|i| chat("slack:#eng", "Ana", T0 + i * 60_000, &format!("osprey survey step {i}")))).unwrap();
    mem.flush().unwrap();
    let reader = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    let probes = ["osprey survey", "tern nesting season", "step 9"];
    let before = reader.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    assert!(before.0 > 0 && before.1 > 0, "vectors and sessions are loaded on open: {before:?}");
    // Only additions: new leaves, and a seal whose summary's session spans old and new leaves.
    mem.ingest((6..12).map(|i| chat("slack:#eng", "Bo", T0 + i * 60_000, &format!("tern nesting step {i}")))).unwrap();
    mem.ingest([chat("slack:#ops", "Cy", T0, "the tern nesting season opens")]).unwrap();
    mem.flush().unwrap();
    let caught_up = reader.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    let fresh = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    assert_eq!(caught_up, fresh.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap());
    assert!(caught_up.0 > before.0 && caught_up.1 > before.1, "{before:?} → {caught_up:?}");
    // A delete: the vectors of the forgotten source go away in the reader too.
    mem.delete_source(&SourceId::from("slack:#ops")).unwrap();
    let after_delete = reader.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    let fresh = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    assert_eq!(after_delete, fresh.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap());
    assert!(after_delete.0 < caught_up.0, "{caught_up:?} → {after_delete:?}");
    // A seal that writes no vector (a deferred writer flushing leaves embedded earlier): the
    // reader still makes the new session's vector.
    mem.ingest((12..16).map(|i| chat("slack:#eng", "Bo", T0 + i * 60_000, &format!("heron count {i}")))).unwrap();
    let mut deferred =
        Memory::open_with(fx.dir.path(), OpenOptions { embedding: crate::Embedding::Deferred, ..fx.options() })
            .unwrap();
    let sealed = deferred.flush().unwrap();
    assert!(sealed.summaries > 0, "{sealed:?}");
    let after_seal = reader.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    let fresh = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    assert_eq!(after_seal, fresh.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap());
    assert!(after_seal.1 > after_delete.1, "{after_delete:?} → {after_seal:?}");
}

#[test]
fn deferred_embedding_is_searchable_at_once_and_embed_pending_ends_where_inline_embedding_does() {
    let items = || {
        (0..300)
            .map(|i| {
                chat("slack:#eng", ["Ana", "Bo"][i % 2], T0 + i as i64 * 60_000, &format!("osprey survey marker{i}"))
            })
            .collect::<Vec<_>>()
    };
    let inline = Fixture::new(config());
    let mut a = inline.open();
    a.ingest(items()).unwrap();
    a.flush().unwrap();
    let fx = Fixture::new(config());
    let deferred = || OpenOptions { embedding: crate::Embedding::Deferred, ..fx.options() };
    let mut b = Memory::open_with(fx.dir.path(), deferred()).unwrap();
    b.ingest(items()).unwrap();
    b.flush().unwrap();
    // Durable and lexically searchable before any vector exists.
    let stats = b.as_reader().stats().unwrap();
    assert_eq!(stats.counts.vectors, 0);
    assert_eq!(stats.vectors_pending, stats.counts.leaves + stats.counts.summaries_per_level.iter().sum::<u64>());
    let out =
        crate::tool::call_read_json(b.as_reader(), r#"{"mode":"walk","query":"what about marker217?"}"#, &Scope::all())
            .unwrap();
    assert!(out["hits"][0]["content"].as_str().unwrap().ends_with("marker217"), "{out}");
    // A deferred open embeds nothing either; embed_pending does, batch by batch.
    drop(b);
    let mut b = Memory::open_with(fx.dir.path(), deferred()).unwrap();
    assert_eq!(b.open_report().vectors_added, 0);
    let mut seen = Vec::new();
    let n = b.embed_pending(|p| seen.push((p.done, p.total))).unwrap();
    let c = b.as_reader().stats().unwrap().counts;
    let total = c.leaves + c.summaries_per_level.iter().sum::<u64>();
    assert_eq!(n as u64, total);
    assert!(seen.len() > 1 && seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
    assert_eq!(seen.last(), Some(&(total, total)));
    assert_eq!(b.embed_pending(|_| panic!("nothing is left")).unwrap(), 0);
    assert_eq!(b.as_reader().stats().unwrap().vectors_pending, 0);
    let probes = ["osprey survey", "marker42", "Ana"];
    let got = b.as_reader().read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    assert_eq!(got, a.as_reader().read(|r| Ok(dense_fingerprint(r, &probes))).unwrap());
    assert!(got.1 > 0, "session vectors were made: {got:?}");
}
