//! `BackgroundEmbedder` through the MCP server's write path (in process): a write returns
//! with its vectors pending, the worker makes them and the store then equals an inline-embedded
//! one; a stop between batches keeps the batches done, a stop inside one rolls it back, and
//! `embed_pending` finishes either; a failed run is reported, and the next nudge retries.
//! Every wait is on a signal (the worker's own, or a gate the test holds), never a sleep.

use crate::tests::common::{Fixture, T0, chat};
use crate::tests::concurrency::dense_fingerprint;
use crate::{
    BackgroundEmbedder, Config, Document, EmbedEvent, EmbedHook, Embedder, Embedding, HashEmbedder, McpServer, Memory,
    MemoryReader, OpenOptions, Scope, ToolOutcome,
};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};

fn config() -> Config {
    // Small chunks: one document is many leaves.
    Config { chunk_tokens: 30, chunk_overlap_tokens: 0, ..Config::default() }
}

fn deferred(fx: &Fixture) -> OpenOptions {
    OpenOptions { embedding: Embedding::Deferred, ..fx.options() }
}

/// The test embedder, except that its first call says so and waits for the test to let it
/// go: the test then knows the worker is inside a batch (holding the writer lock, nothing
/// of the batch committed).
struct Gated {
    inner: HashEmbedder,
    gate: Mutex<Option<(SyncSender<()>, Receiver<()>)>>,
}

impl Embedder for Gated {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>> {
        if let Some((started, release)) = self.gate.lock().unwrap().take() {
            started.send(()).unwrap();
            release.recv().unwrap();
        }
        self.inner.embed(texts)
    }
}

/// A gated embedder, the receiver that hears its first call, and the sender that lets it go.
fn gated() -> (Arc<Gated>, Receiver<()>, SyncSender<()>) {
    let (started_tx, started_rx) = sync_channel(1);
    let (release_tx, release_rx) = sync_channel(1);
    let emb = Gated { inner: HashEmbedder::new(64), gate: Mutex::new(Some((started_tx, release_rx))) };
    (Arc::new(emb), started_rx, release_tx)
}

fn report(body: &str) -> Document {
    Document {
        source_id: "doc:notes/osprey.md".into(),
        title: "Osprey survey report".into(),
        body: body.into(),
        // What the tool stores: the time of the write.
        modified_ms: None,
        source_ref: None,
        provider: None,
    }
}

fn body() -> String {
    (0..40).map(|i| format!("Section {i}: the osprey survey counted nest{i} on the estuary.\n\n")).collect()
}

fn ok(out: ToolOutcome) -> Value {
    match out {
        ToolOutcome::Ok(v) => v,
        other => panic!("the call failed: {other:?}"),
    }
}

fn pending(fx: &Fixture) -> u64 {
    MemoryReader::open(fx.dir.path(), fx.options()).unwrap().stats().unwrap().vectors_pending
}

#[test]
fn an_ingest_document_call_returns_before_its_vectors_and_the_worker_makes_what_inline_embedding_does() {
    let fx = Fixture::new(config());
    let mem = Memory::open_with(fx.dir.path(), deferred(&fx)).unwrap();
    let (emb, started, release) = gated();
    let worker =
        BackgroundEmbedder::start(fx.dir.path(), OpenOptions { embedder: Some(emb), ..fx.options() }, None).unwrap();
    let server = McpServer::new(mem, Scope::all()).with_background(worker);
    let args = json!({"mode": "ingest_document", "source_id": "doc:notes/osprey.md",
        "title": "Osprey survey report", "body": body()});
    let out = ok(server.call("memory_tree", args.as_object().cloned()));
    assert!(out["message"].as_str().unwrap().contains("leaves written"), "{out}");
    // The worker is now inside its first batch, which it has not committed: the call returned
    // with every vector pending, and the document is found lexically meanwhile.
    started.recv().unwrap();
    let stats = MemoryReader::open(fx.dir.path(), fx.options()).unwrap().stats().unwrap();
    assert!(stats.counts.leaves > 10, "{stats:?}");
    assert_eq!(stats.vectors_pending, stats.counts.leaves + stats.counts.summaries_per_level.iter().sum::<u64>());
    let walk = json!({"mode": "walk", "query": "which nest was nest17?"});
    let hits = ok(server.call("memory_tree", walk.as_object().cloned()));
    assert!(hits["hits"][0]["content"].as_str().unwrap().contains("nest17"), "{hits}");
    release.send(()).unwrap();
    let status = server.background().unwrap().wait_idle().unwrap();
    assert!(!status.busy && status.error.is_none(), "{status:?}");
    assert_eq!(status.embedded, stats.vectors_pending);
    assert_eq!(pending(&fx), 0);
    // The same store, embedded with the write.
    let inline = Fixture::new(config());
    let mut a = inline.open();
    a.ingest_document(report(&body())).unwrap();
    let probes = ["osprey survey", "nest17 estuary", "Section 3"];
    let fresh = MemoryReader::open(fx.dir.path(), fx.options()).unwrap();
    let want = a.as_reader().read(|r| Ok(dense_fingerprint(r, &probes))).unwrap();
    assert_eq!(fresh.read(|r| Ok(dense_fingerprint(r, &probes))).unwrap(), want);
    // The server's own store caught up on the worker's vectors: its walk is the inline one's.
    let walk = json!({"mode": "walk", "query": "osprey survey estuary"});
    let got = ok(server.call("memory_tree", walk.as_object().cloned()));
    let inline_walk = crate::tool::call_read_json(a.as_reader(), &walk.to_string(), &Scope::all()).unwrap();
    assert_eq!(got, inline_walk);
}

/// 600 chat messages in one deferred store (several embedding batches); the total to embed.
fn chats(fx: &Fixture) -> u64 {
    let mut mem = Memory::open_with(fx.dir.path(), deferred(fx)).unwrap();
    mem.ingest(
        (0..600).map(|i| chat("slack:#eng", ["Ana", "Bo"][i % 2], T0 + i as i64 * 60_000, &format!("tern {i}"))),
    )
    .unwrap();
    mem.flush().unwrap();
    mem.as_reader().stats().unwrap().vectors_pending
}

/// What an inline-embedded store of the same chats holds, as `dense_fingerprint`.
fn inline_chats() -> (usize, usize, Vec<String>) {
    let fx = Fixture::new(config());
    let mut mem = fx.open();
    mem.ingest(
        (0..600).map(|i| chat("slack:#eng", ["Ana", "Bo"][i % 2], T0 + i as i64 * 60_000, &format!("tern {i}"))),
    )
    .unwrap();
    mem.flush().unwrap();
    mem.as_reader().read(|r| Ok(dense_fingerprint(r, &["tern 42", "Ana"]))).unwrap()
}

fn finish_and_compare(fx: &Fixture) {
    let mut mem = Memory::open_with(fx.dir.path(), deferred(fx)).unwrap();
    assert!(mem.embed_pending(|_| {}).unwrap() > 0);
    assert_eq!(mem.as_reader().stats().unwrap().vectors_pending, 0);
    let got = mem.as_reader().read(|r| Ok(dense_fingerprint(r, &["tern 42", "Ana"]))).unwrap();
    assert_eq!(got, inline_chats());
}

#[test]
fn a_worker_stopped_between_batches_keeps_them_and_embed_pending_finishes_the_rest() {
    let fx = Fixture::new(config());
    let total = chats(&fx);
    // The hook holds the worker after its first batch is committed, until the test has asked
    // it to stop.
    let (done_tx, done_rx) = sync_channel::<u64>(1);
    let (go_tx, go_rx) = sync_channel::<()>(1);
    let gate = Mutex::new(Some((done_tx, go_rx)));
    let hook: EmbedHook = Arc::new(move |e: &EmbedEvent<'_>| {
        if let EmbedEvent::Batch(p) = e
            && let Some((done, go)) = gate.lock().unwrap().take()
        {
            done.send(p.done).unwrap();
            go.recv().unwrap();
        }
    });
    let worker = BackgroundEmbedder::start(fx.dir.path(), fx.options(), Some(hook)).unwrap();
    let first = done_rx.recv().unwrap();
    worker.request_stop();
    go_tx.send(()).unwrap();
    let status = worker.wait_idle().unwrap();
    assert!(status.stopped && status.error.is_none(), "{status:?}");
    assert_eq!(status.embedded, first);
    drop(worker);
    assert!(first > 0 && first < total, "{first} of {total}");
    assert_eq!(pending(&fx), total - first);
    finish_and_compare(&fx);
}

#[test]
fn a_worker_dropped_inside_a_batch_rolls_it_back_and_embed_pending_finishes() {
    let fx = Fixture::new(config());
    let total = chats(&fx);
    let (emb, started, release) = gated();
    let worker =
        BackgroundEmbedder::start(fx.dir.path(), OpenOptions { embedder: Some(emb), ..fx.options() }, None).unwrap();
    started.recv().unwrap();
    worker.request_stop();
    release.send(()).unwrap();
    // Dropping waits for the thread; the slice in flight ends, the next is refused.
    drop(worker);
    assert_eq!(pending(&fx), total, "a stopped batch leaves nothing half-written");
    finish_and_compare(&fx);
}

/// Fails its first `fails` calls with a model error, then embeds.
struct Flaky {
    inner: HashEmbedder,
    fails: AtomicUsize,
}

impl Embedder for Flaky {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn dim(&self) -> usize {
        self.inner.dim()
    }
    fn embed(&self, texts: &[&str]) -> crate::Result<Vec<Vec<f32>>> {
        if self.fails.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(crate::Error::model("the test model is down"));
        }
        self.inner.embed(texts)
    }
}

#[test]
fn a_failed_run_is_kept_and_reported_and_the_next_nudge_retries() {
    let fx = Fixture::new(config());
    let total = chats(&fx);
    let failures = Arc::new(Mutex::new(Vec::new()));
    let heard = Arc::clone(&failures);
    let hook: EmbedHook = Arc::new(move |e: &EmbedEvent<'_>| {
        if let EmbedEvent::Failed(err) = e {
            heard.lock().unwrap().push(err.to_string());
        }
    });
    let emb = Arc::new(Flaky { inner: HashEmbedder::new(64), fails: AtomicUsize::new(1) });
    let worker =
        BackgroundEmbedder::start(fx.dir.path(), OpenOptions { embedder: Some(emb), ..fx.options() }, Some(hook))
            .unwrap();
    let err = worker.wait_idle().expect_err("the first run fails");
    assert!(matches!(err, crate::Error::Model { .. }), "{err}");
    assert_eq!(*failures.lock().unwrap(), vec!["embedding model: the test model is down".to_string()]);
    assert_eq!(pending(&fx), total);
    // Taken by the wait: the status is clean again, and the next nudge does the work.
    assert_eq!(worker.status().error, None);
    worker.nudge();
    let status = worker.wait_idle().unwrap();
    assert_eq!(status.embedded, total);
    assert_eq!(pending(&fx), 0);
    drop(worker);
    finish_and_compare_embedded(&fx);
}

fn finish_and_compare_embedded(fx: &Fixture) {
    let mem = Memory::open_with(fx.dir.path(), deferred(fx)).unwrap();
    let got = mem.as_reader().read(|r| Ok(dense_fingerprint(r, &["tern 42", "Ana"]))).unwrap();
    assert_eq!(got, inline_chats());
}

#[test]
fn embed_pending_reports_before_its_first_batch_and_after_each() {
    // A front end starts the phase's clock before the first batch (the model's first calls
    // take many seconds), so its duration is the phase's, not the last batch's.
    let fx = Fixture::new(config());
    let mut mem = Memory::open_with(fx.dir.path(), deferred(&fx)).unwrap();
    mem.ingest((0..300).map(|i| chat("slack:#eng", "Ana", T0 + i as i64 * 60_000, &format!("tern {i}")))).unwrap();
    let pending = mem.as_reader().stats().unwrap().vectors_pending;
    let mut heard = Vec::new();
    let made = mem.embed_pending(|p| heard.push((p.unit, p.done, p.total))).unwrap();
    assert_eq!(made as u64, pending);
    let total = pending;
    assert_eq!(heard.first(), Some(&("vectors", 0, total)), "{heard:?}");
    assert_eq!(heard.last(), Some(&("vectors", total, total)), "{heard:?}");
    assert_eq!(heard.len(), 1 + total.div_ceil(256) as usize, "{heard:?}");
}
