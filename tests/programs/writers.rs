//! Several writers on one store, as real processes: `memtree mcp` serves a store (an assistant
//! has it mounted) while `memtree ingest` imports into it. The MCP client here speaks JSON-RPC
//! over the server's stdio itself (newline-delimited JSON, as the protocol's stdio transport
//! does), so the test needs no SDK. A writer that cannot get the lock within its timeout gets a
//! clear error naming the time it waited.

use crate::mcp_client;
use crate::support;

use mcp_client::McpClient;
use memtree::{ChatMessage, Embedder, HashEmbedder, Item, Memory, OpenOptions, Role};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;
use support::{command, memtree, memtree_bin};

/// `count` Markdown notes, each naming its own made-up word (`tern0017`), so that a walk can
/// tell whether one of them is visible.
fn write_notes(dir: &Path, count: usize) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..count {
        let body = format!(
            "# Survey note {i}\n\nThe tern{i:04} colony was counted on the north shore. \
             Volunteers logged nests, eggs and the weather for note {i}.\n"
        );
        std::fs::write(dir.join(format!("note-{i:04}.md")), body).unwrap();
    }
}

/// `count` chat messages in one channel, a minute apart.
fn write_chat(path: &Path, count: usize) {
    let mut lines = String::new();
    for i in 0..count {
        let ts = chrono::DateTime::from_timestamp(1_683_000_000 + 60 * i as i64, 0).unwrap().to_rfc3339();
        let msg = json!({"source_id": "slack:#survey", "author": "Ines", "ts": ts,
                         "text": format!("Message {i}: plover{i:04} sighting near the dunes")});
        lines.push_str(&msg.to_string());
        lines.push('\n');
    }
    std::fs::write(path, lines).unwrap();
}

/// The source ids `memtree sources` lists.
fn cli_sources(store: &Path) -> BTreeSet<String> {
    let out = memtree(store, &["sources"], None).json();
    out.as_array().unwrap().iter().map(|s| s["source_id"].as_str().unwrap().to_string()).collect()
}

/// Leaf hits of a walk whose content contains `word`.
fn hits_with(out: &Value, word: &str) -> usize {
    out["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("not a QueryResponse: {out}"))
        .iter()
        .filter(|h| h["content"].as_str().is_some_and(|c| c.contains(word)))
        .count()
}

#[test]
fn the_assistant_and_the_user_both_write() {
    const NOTES: usize = 60;
    const MESSAGES: usize = 4500; // three batches of the importer
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let notes = tmp.path().join("vault");
    let chat = tmp.path().join("chat.jsonl");
    write_notes(&notes, NOTES);
    write_chat(&chat, MESSAGES);

    // A new store: the server may make it (reads never create one).
    let server = support::command(support::memtree_bin(), &store, &["mcp", "--create"]);
    let mcp = Arc::new(Mutex::new(McpClient::from_command(server)));
    // The assistant, meanwhile: walks in a loop, and now and then writes a note of its own.
    let stop = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = mpsc::channel();
    let assistant = {
        let (mcp, stop) = (Arc::clone(&mcp), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut errors = Vec::new();
            let (mut walks, mut written) = (0usize, Vec::new());
            // At least one write of its own, however quick the import.
            while !stop.load(Ordering::SeqCst) || walks < 4 {
                let mut c = mcp.lock().unwrap();
                if let Err(e) = c.call("memory_tree", json!({"mode": "walk", "query": "tern colony nests", "limit": 5}))
                {
                    errors.push(format!("walk: {e}"));
                }
                walks += 1;
                if walks % 4 == 0 {
                    let id = format!("doc:assistant/{walks}");
                    let doc = json!({"mode": "ingest_document", "source_id": id, "title": format!("Assistant note {walks}"),
                                     "body": format!("The assistant noted heron{walks:04} on the marsh.")});
                    match c.call("memory_tree", doc) {
                        Ok(_) => written.push(id),
                        Err(e) => errors.push(format!("ingest_document: {e}")),
                    }
                }
            }
            done_tx.send(()).unwrap();
            (walks, written, errors)
        })
    };

    // The user imports a folder of notes and a chat export while the assistant runs.
    let md = memtree(&store, &["ingest", "--format", "markdown", notes.to_str().unwrap()], None);
    let md = md.json();
    assert_eq!(md["leaves"].as_u64(), Some(NOTES as u64), "{md}");
    let chat_run = memtree(&store, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None).json();
    assert_eq!(chat_run["leaves"].as_u64(), Some(MESSAGES as u64), "{chat_run}");

    stop.store(true, Ordering::SeqCst);
    done_rx.recv_timeout(Duration::from_secs(120)).expect("the assistant's loop hung");
    let (walks, written, errors) = assistant.join().unwrap();
    assert!(errors.is_empty(), "tool calls failed while the CLI imported: {errors:?}");
    assert!(walks >= 1 && !written.is_empty(), "walks {walks}, assistant writes {}", written.len());

    // Nothing was lost: the CLI's notes and chat and the assistant's documents are all there.
    let sources = cli_sources(&store);
    let notes_seen = sources.iter().filter(|s| s.contains("note-")).count();
    assert_eq!(notes_seen, NOTES, "{sources:?}");
    assert!(sources.contains("slack:#survey"), "{sources:?}");
    for id in &written {
        assert!(sources.contains(id), "the assistant's {id} is missing: {sources:?}");
    }
    let stats = memtree(&store, &["stats"], None).json();
    assert_eq!(stats["leaves"].as_u64(), Some((NOTES + MESSAGES + written.len()) as u64), "{stats}");

    // The assistant sees the import now that it returned: a note's word and a message's word.
    let mut c = mcp.lock().unwrap();
    let out = c.call("memory_tree", json!({"mode": "walk", "query": "tern0042 colony", "limit": 5})).unwrap();
    assert!(hits_with(&out, "tern0042") >= 1, "the new note is not visible to the server: {out}");
    let out = c.call("memory_tree", json!({"mode": "walk", "query": "plover4321 sighting", "limit": 5})).unwrap();
    assert!(hits_with(&out, "plover4321") >= 1, "the new message is not visible to the server: {out}");
    let ents = c.call("memory_tree", json!({"mode": "search_entities", "query": "Ines"})).unwrap();
    assert!(ents.to_string().contains("person:ines"), "the import's author is a known name to the server: {ents}");

    // And the server writes after the import, seen by the CLI: a document and a recall fact.
    let doc = json!({"mode": "ingest_document", "source_id": "doc:assistant/after", "title": "After the import",
                     "body": "The assistant summarised the tern survey."});
    c.call("memory_tree", doc).unwrap();
    c.call("memory_recall", json!({"op": "put", "namespace": "global", "key": "survey", "content": "north shore"}))
        .unwrap();
    assert!(cli_sources(&store).contains("doc:assistant/after"));
    let got = memtree(&store, &["recall", r#"{"op":"list","namespace":"global"}"#], None).json();
    assert!(got.to_string().contains("north shore"), "{got}");
}

/// One chat message written into `store` on a thread, through a handle whose embedder holds
/// the write: the number of leaves written, when it ends.
fn held_write(
    store: &Path,
    embedder: HeldEmbedder,
    source_id: &str,
    text: &str,
) -> std::thread::JoinHandle<memtree::Result<usize>> {
    let opts = OpenOptions { embedder: Some(Arc::new(embedder)), ..OpenOptions::default() };
    let mut mem = Memory::open_with(store, opts).unwrap();
    let msg = ChatMessage {
        source_id: source_id.into(),
        author: "Ada".into(),
        ts_ms: 1_683_000_000_000,
        text: text.into(),
        source_ref: None,
        participants: Vec::new(),
        tags: Vec::new(),
        role: Role::Person,
        title: None,
    };
    std::thread::spawn(move || mem.ingest([Item::Chat(msg)]).map(|r| r.leaves))
}

/// How a [`HeldEmbedder`] holds the write that calls it.
enum Hold {
    /// Every matching call sleeps this long.
    For(Duration),
    /// The first matching call waits until the test sends on the gate (bounded, so that a
    /// failing test ends instead of hanging): a write held open with no timing involved.
    UntilGate(Mutex<mpsc::Receiver<()>>),
}

/// An embedder that holds the write embedding texts containing `marker` (all texts for `""`),
/// telling the test once it has started.
struct HeldEmbedder {
    inner: HashEmbedder,
    marker: &'static str,
    started: Mutex<Option<mpsc::Sender<()>>>,
    hold: Hold,
}

impl Embedder for HeldEmbedder {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> memtree::Result<Vec<Vec<f32>>> {
        if texts.iter().any(|t| t.contains(self.marker)) {
            let first = self.started.lock().unwrap().take().map(|tx| tx.send(())).is_some();
            match &self.hold {
                Hold::For(d) => std::thread::sleep(*d),
                Hold::UntilGate(gate) if first => {
                    let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(120));
                }
                Hold::UntilGate(_) => {}
            }
        }
        self.inner.embed(texts)
    }
}

#[test]
fn a_second_writer_waits_its_turn_and_gives_up_after_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let chat = tmp.path().join("chat.jsonl");
    write_chat(&chat, 3);
    let (started_tx, started_rx) = mpsc::channel();
    let slow = HeldEmbedder {
        inner: HashEmbedder::new(32),
        marker: "",
        started: Mutex::new(Some(started_tx)),
        hold: Hold::For(Duration::from_millis(2500)),
    };
    let slow_write = held_write(&store, slow, "slack:#slow", "A slow write holds the lock");
    started_rx.recv_timeout(Duration::from_secs(30)).expect("the slow write started");

    // A writer with a 200 ms timeout gives up with a clear error naming the wait, and writes
    // nothing; the store directory stays (it is the other writer's).
    let mut cli = command(memtree_bin(), &store, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()]);
    cli.env(memtree::LOCK_TIMEOUT_ENV, "200");
    let refused = support::run(cli, None);
    assert_eq!(refused.code, Some(1), "stdout: {} stderr: {}", refused.out, refused.err);
    assert!(refused.err.contains("locked by another writer") && refused.err.contains("waited"), "{}", refused.err);
    assert!(!refused.err.contains("panicked"), "{}", refused.err);

    // A writer with the default timeout waits for the slow write, then imports.
    let waited = memtree(&store, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None).json();
    assert_eq!(waited["leaves"].as_u64(), Some(3), "{waited}");
    assert_eq!(slow_write.join().unwrap().unwrap(), 1);
    let sources = cli_sources(&store);
    assert_eq!(sources, BTreeSet::from(["slack:#slow".to_string(), "slack:#survey".to_string()]));
}

#[test]
fn a_lock_timeout_that_is_not_a_number_is_refused_by_name() {
    let tmp = tempfile::tempdir().unwrap();
    let mut cmd = command(memtree_bin(), &tmp.path().join("store"), &["stats"]);
    cmd.env(memtree::LOCK_TIMEOUT_ENV, "soon");
    let run = support::run(cmd, None);
    assert_eq!(run.code, Some(1));
    assert!(run.err.contains(memtree::LOCK_TIMEOUT_ENV) && run.err.contains("soon"), "{}", run.err);
    assert!(!tmp.path().join("store").exists(), "nothing is created before the options are read");
}

#[test]
fn reads_from_the_cli_never_wait_for_a_write() {
    let tmp = tempfile::tempdir().unwrap();
    let store = tmp.path().join("store");
    let chat = tmp.path().join("chat.jsonl");
    write_chat(&chat, 3);
    assert_eq!(memtree(&store, &["ingest", "--format", "chat-jsonl", chat.to_str().unwrap()], None).code, Some(0));
    let (started_tx, started_rx) = mpsc::channel();
    let (open_gate, gate) = mpsc::channel();
    // Only the held write blocks (open embeds what the CLI's import left without vectors).
    let gated = HeldEmbedder {
        inner: HashEmbedder::new(32),
        marker: "holds open",
        started: Mutex::new(Some(started_tx)),
        hold: Hold::UntilGate(Mutex::new(gate)),
    };
    let held = held_write(&store, gated, "slack:#held", "A write the test holds open");
    started_rx.recv_timeout(Duration::from_secs(30)).expect("the held write started");
    // With a lock timeout far longer than the test, a read that waited for the lock would still
    // be waiting: each answers from what is committed while the write is held.
    let walk = r#"{"mode":"walk","query":"survey"}"#;
    for args in [vec!["stats"], vec!["sources"], vec!["tool", walk]] {
        let mut cmd = command(memtree_bin(), &store, &args);
        cmd.env(memtree::LOCK_TIMEOUT_ENV, "600000");
        let read = support::run(cmd, None);
        assert_eq!(read.code, Some(0), "{args:?}: {}", read.err);
        assert!(!held.is_finished(), "{args:?} returned only after the write");
    }
    open_gate.send(()).unwrap();
    assert_eq!(held.join().unwrap().unwrap(), 1);
    assert_eq!(cli_sources(&store), BTreeSet::from(["slack:#held".to_string(), "slack:#survey".to_string()]));
}
