//! `BackgroundEmbedder`: a worker thread with its own [`Memory`] on the same store that makes
//! the vectors deferred writes leave behind, so a long-running host (the MCP server, the REPL)
//! returns from a write once its nodes are durable and lexically searchable.
//!
//! The worker is a second writer of the store, like another process would be: each batch takes
//! the store's writer lock for its own length (`Memory::embed_pending`), and the host's
//! `Memory` and readers catch up on the new vectors incrementally. It sleeps on a condition
//! variable until the host nudges it ("work may be pending"). Asked to stop, it ends at the
//! next slice of a batch: the batch in flight rolls back (a later run makes it), so a host's
//! shutdown waits for one model call, not for a whole batch.

use super::Memory;
use crate::embed::Embedder;
use crate::error::{Error, Result, panic_message};
use crate::ingest::import::Progress;
use crate::options::{Embedding, OpenOptions};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

/// What the worker tells its host, from the worker thread (a host logs it; library code
/// never prints).
#[derive(Debug)]
pub enum EmbedEvent<'a> {
    /// One more batch is stored: `done` of the `total` this run found pending.
    Batch(Progress),
    /// A run ended: nothing it found pending is left; `embedded` vectors were made.
    Finished {
        /// Vectors this run made.
        embedded: usize,
    },
    /// A run failed (the lock timed out, the model failed); the error is also kept
    /// ([`BackgroundEmbedder::take_error`]). The next nudge tries again.
    Failed(&'a Error),
}

/// A host's hook for [`EmbedEvent`]s. Called on the worker thread, without the worker's
/// state locked (it may ask [`BackgroundEmbedder::status`]).
pub type EmbedHook = Arc<dyn Fn(&EmbedEvent<'_>) + Send + Sync>;

/// A snapshot of the worker's state, for a progress line ("embedding: 120/900").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EmbedStatus {
    /// A run is in flight, or a nudge is waiting for one.
    pub busy: bool,
    /// Vectors the current (or last) run has made…
    pub done: u64,
    /// …of the nodes it found without one.
    pub total: u64,
    /// Vectors made since the worker started.
    pub embedded: u64,
    /// The kept error's text, until [`BackgroundEmbedder::take_error`] takes it.
    pub error: Option<String>,
    /// The worker thread has ended (dropped, or stopped by a panic): nudges do nothing.
    pub stopped: bool,
}

/// Makes, in the background, the vectors of what a deferred writer wrote.
///
/// ```
/// # fn main() -> memtree::Result<()> {
/// use memtree::{BackgroundEmbedder, Document, Embedding, HashEmbedder, Memory, OpenOptions};
/// use std::sync::Arc;
/// let dir = tempfile::tempdir().unwrap();
/// let opts = OpenOptions { embedder: Some(Arc::new(HashEmbedder::new(64))), ..OpenOptions::default() };
/// let worker = BackgroundEmbedder::start(dir.path(), opts.clone(), None)?;
/// // The host's writer stores no vectors (the worker makes them) and lets its own model calls
/// // go first.
/// let host = worker.host_options(OpenOptions { embedding: Embedding::Deferred, ..opts });
/// let mut mem = Memory::open_with(dir.path(), host)?;
/// let doc = Document {
///     source_id: "doc:plan".into(),
///     title: "Plan".into(),
///     body: "The osprey survey starts in May.".into(),
///     modified_ms: None,
///     source_ref: None,
///     provider: None,
/// };
/// mem.ingest_document(doc)?;
/// worker.nudge();
/// worker.wait_idle()?;
/// assert_eq!(mem.as_reader().stats()?.vectors_pending, 0);
/// # Ok(())
/// # }
/// ```
pub struct BackgroundEmbedder {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled on a nudge or a stop (to the worker) and at the end of a run (to waiters).
    changed: Condvar,
    /// The host's calls to the model, which go before the worker's next slice.
    turns: Turns,
}

/// How many of the host's model calls are waiting or running. The model serialises its calls
/// and its lock is not fair: without this, a host's query embedding can wait behind slice
/// after slice of a backlog.
#[derive(Default)]
struct Turns {
    host: Mutex<usize>,
    /// Signalled when the last host call ends.
    free: Condvar,
}

impl Turns {
    fn host(&self) -> MutexGuard<'_, usize> {
        // A count, each update complete under the lock.
        self.host.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Wait until no host call waits for or holds the model.
    fn worker_turn(&self) {
        let mut n = self.host();
        while *n > 0 {
            n = self.free.wait(n).unwrap_or_else(PoisonError::into_inner);
        }
    }
}

/// The host's side of the model (see [`BackgroundEmbedder::host_options`]).
struct Host {
    model: Arc<dyn Embedder>,
    shared: Arc<Shared>,
}

/// Counts a host call for its length, however it ends.
struct HostCall<'a>(&'a Turns);

impl Drop for HostCall<'_> {
    fn drop(&mut self) {
        let mut n = self.0.host();
        *n -= 1;
        if *n == 0 {
            self.0.free.notify_all();
        }
    }
}

impl Embedder for Host {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let turns = &self.shared.turns;
        *turns.host() += 1;
        let _call = HostCall(turns);
        self.model.embed(texts)
    }
    fn reads(&self, text: &str) -> Result<usize> {
        self.model.reads(text)
    }
}

#[derive(Default)]
struct State {
    nudged: bool,
    stop: bool,
    running: bool,
    exited: bool,
    done: u64,
    total: u64,
    embedded: u64,
    error: Option<Error>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // The state is plain counters and flags, each update complete under the lock: a
        // panic elsewhere cannot leave it half-written.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl BackgroundEmbedder {
    /// Open a second [`Memory`] on the store in `dir` (with `opts`, made
    /// [`Embedding::Deferred`] so that opening embeds nothing itself) and start its worker,
    /// nudged once for what earlier runs left without vectors. `hook` hears every batch,
    /// every finished run and every failure.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when `opts` has no embedder (there is nothing to make);
    /// whatever opening the store fails with; [`Error::Io`] when the thread cannot start.
    pub fn start(dir: impl AsRef<Path>, opts: OpenOptions, hook: Option<EmbedHook>) -> Result<BackgroundEmbedder> {
        let dir = dir.as_ref();
        let Some(model) = opts.embedder.clone() else {
            return Err(Error::invalid("embedder", "background embedding needs a dense model; this store has none"));
        };
        // The model serialises its calls: embedded in slices, a batch lets the host's query
        // embeddings in between instead of holding the model for a whole batch.
        let shared = Arc::new(Shared {
            state: Mutex::new(State { nudged: true, ..State::default() }),
            changed: Condvar::new(),
            turns: Turns::default(),
        });
        let embedder: Arc<dyn Embedder> = Arc::new(Sliced { model, shared: Arc::clone(&shared) });
        let mem =
            Memory::open_with(dir, OpenOptions { embedding: Embedding::Deferred, embedder: Some(embedder), ..opts })?;
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("memtree-embed".into())
            .spawn(move || work(mem, &worker, hook.as_deref()))
            .map_err(|e| Error::io(dir, e))?;
        Ok(BackgroundEmbedder { shared, thread: Some(thread) })
    }

    /// Tell the worker that a write may have left nodes without vectors. Returns at once; a
    /// nudge during a run starts another after it (the run lists what is pending once).
    pub fn nudge(&self) {
        let mut st = self.shared.lock();
        if !st.exited {
            st.nudged = true;
            self.shared.changed.notify_all();
        }
    }

    /// Where the worker is.
    pub fn status(&self) -> EmbedStatus {
        let st = self.shared.lock();
        EmbedStatus {
            busy: !st.exited && (st.nudged || st.running),
            done: st.done,
            total: st.total,
            embedded: st.embedded,
            error: st.error.as_ref().map(Error::chain),
            stopped: st.exited,
        }
    }

    /// `opts` for the host's own [`Memory`] (made with the options the worker was started
    /// with): its model calls — a question's embedding — go before the worker's next slice, so
    /// a read waits for at most one slice of the backlog, not for the model's unfair lock.
    pub fn host_options(&self, opts: OpenOptions) -> OpenOptions {
        let embedder = opts.embedder.clone().map(|model| {
            let host: Arc<dyn Embedder> = Arc::new(Host { model, shared: Arc::clone(&self.shared) });
            host
        });
        OpenOptions { embedder, ..opts }
    }

    /// The error the last failed run kept, if any (taking it).
    pub fn take_error(&self) -> Option<Error> {
        self.shared.lock().error.take()
    }

    /// Block until no run is in flight and no nudge is waiting (or the worker has ended):
    /// the completion signal a test or a host that must have every vector waits on.
    ///
    /// # Errors
    /// The error a run kept (taken), so a wait does not report success over a failure.
    pub fn wait_idle(&self) -> Result<EmbedStatus> {
        let mut st = self.shared.lock();
        while (st.nudged || st.running) && !st.exited {
            st = self.shared.changed.wait(st).unwrap_or_else(PoisonError::into_inner);
        }
        if let Some(e) = st.error.take() {
            return Err(e);
        }
        drop(st);
        Ok(self.status())
    }

    /// Ask the worker to stop at its next slice, without waiting for it (dropping the worker
    /// asks and waits). Nudges after it do nothing.
    pub fn request_stop(&self) {
        self.shared.lock().stop = true;
        self.shared.changed.notify_all();
    }
}

impl Drop for BackgroundEmbedder {
    /// Stop and wait for the thread: it ends at the next slice of a batch, and the batch in
    /// flight rolls back (a later `embed_pending` makes it), as a kill there would.
    fn drop(&mut self) {
        self.request_stop();
        if let Some(t) = self.thread.take() {
            // The worker catches its own panics; a join error has nothing left to report.
            let _ = t.join();
        }
    }
}

/// The worker: wait for a nudge, run `embed_pending` until nothing is pending or a stop is
/// asked, keep the outcome, repeat.
fn work(mut mem: Memory, shared: &Shared, hook: Option<&(dyn Fn(&EmbedEvent<'_>) + Send + Sync)>) {
    // A hook that panics (a host's logging to a closed stderr) is the host's fault, not a
    // failed run: ignored, so that the worker's state stays true and `wait_idle` returns.
    let tell = |e: &EmbedEvent<'_>| {
        if let Some(h) = hook {
            let _ = catch_unwind(AssertUnwindSafe(|| h(e)));
        }
    };
    loop {
        {
            let mut st = shared.lock();
            while !st.nudged && !st.stop {
                st = shared.changed.wait(st).unwrap_or_else(PoisonError::into_inner);
            }
            if st.stop {
                break;
            }
            st.nudged = false;
            st.running = true;
            st.done = 0;
            st.total = 0;
        }
        let stop = || shared.lock().stop;
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            mem.embed_pending_until(&stop, WORKER_BATCH, |p| {
                {
                    let mut st = shared.lock();
                    st.embedded += p.done.saturating_sub(st.done);
                    st.done = p.done;
                    st.total = p.total;
                }
                // The report before the first batch (`done` = 0) sets the total; an event is a
                // batch stored.
                if p.done > 0 {
                    tell(&EmbedEvent::Batch(p));
                }
            })
        }));
        let (result, panicked) = match outcome {
            // Stopped inside a batch: nothing to report, the batch is rolled back.
            Ok(Err(Error::EmbeddingStopped)) => break,
            Ok(r) => (r, false),
            // The store is as its last commit left it, but this handle's in-memory state may
            // not be: the worker ends, and says why.
            Err(p) => (Err(Error::WorkerPanicked { message: panic_message(&*p) }), true),
        };
        match &result {
            // A run cut short between batches did not finish what it found.
            Ok(_) if shared.lock().stop => {}
            Ok(n) => tell(&EmbedEvent::Finished { embedded: *n }),
            Err(e) => tell(&EmbedEvent::Failed(e)),
        }
        let mut st = shared.lock();
        st.running = false;
        if let Err(e) = result {
            st.error = Some(e);
        }
        // A stop asked during the run ends the worker in the same step, so that a waiter
        // woken by this run's end sees it stopped.
        let end = panicked || st.stop;
        st.exited |= end;
        shared.changed.notify_all();
        if end {
            return;
        }
    }
    let mut st = shared.lock();
    st.running = false;
    st.exited = true;
    shared.changed.notify_all();
}

/// The model, called a slice of texts at a time (see [`BackgroundEmbedder::start`]), and
/// refusing the next slice once a stop is asked. Texts are sliced in length order, so each
/// slice pads as little as the model's own batching would.
struct Sliced {
    model: Arc<dyn Embedder>,
    shared: Arc<Shared>,
}

/// Nodes per write of the worker. Each write holds the store's writer lock for its model
/// calls: 64 short messages take well under a second on these machines, so a host's write
/// waits at most that long behind a backlog (256, `embed_pending`'s batch, took seconds).
const WORKER_BATCH: usize = 64;

/// At most this many texts per model call from the worker: the model's own batch
/// (`embed::TOKEN_BUDGET` padded tokens)…
const SLICE_TEXTS: usize = 32;
/// …and at most this many bytes of text (one text alone may exceed it): a slice of long
/// summaries then costs the model about what a slice of short messages does, and a question's
/// embedding waits for at most one slice. Measured (`examples/background_latency`, loaded
/// 2 cores): 4096 bytes left a walk waiting 552 ms (median), 1024 bytes 146 ms, for the same
/// backlog time.
const SLICE_BYTES: usize = 1024;

/// `order` cut into consecutive slices within both limits.
fn slices<'a>(order: &'a [usize], texts: &[&str]) -> Vec<&'a [usize]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (k, &i) in order.iter().enumerate() {
        let len = texts[i].len();
        if k > start && (k - start == SLICE_TEXTS || bytes + len > SLICE_BYTES) {
            out.push(&order[start..k]);
            (start, bytes) = (k, 0);
        }
        bytes += len;
    }
    if start < order.len() {
        out.push(&order[start..]);
    }
    out
}

impl Embedder for Sliced {
    fn name(&self) -> &str {
        self.model.name()
    }

    fn dim(&self) -> usize {
        self.model.dim()
    }

    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for slice in slices(&order, texts) {
            self.shared.turns.worker_turn();
            if self.shared.lock().stop {
                return Err(Error::EmbeddingStopped);
            }
            let input: Vec<&str> = slice.iter().map(|&i| texts[i]).collect();
            let vecs = self.model.embed(&input)?;
            if vecs.len() != slice.len() {
                return Err(Error::model(format!("got {} vectors for {} texts", vecs.len(), slice.len())));
            }
            for (&i, v) in slice.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn reads(&self, text: &str) -> Result<usize> {
        self.model.reads(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embed::HashEmbedder;

    #[test]
    fn sliced_embedding_equals_one_call() {
        let texts: Vec<String> = (0..100).map(|i| "word ".repeat(i % 7 + 1) + &i.to_string()).collect();
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        let model: Arc<dyn Embedder> = Arc::new(HashEmbedder::new(32));
        let shared = Arc::new(Shared { state: Mutex::default(), changed: Condvar::new(), turns: Turns::default() });
        let sliced = Sliced { model: model.clone(), shared: shared.clone() };
        assert_eq!(sliced.embed(&refs).unwrap(), model.embed(&refs).unwrap());
        // Once a stop is asked the next slice is refused, and the refusal is marked as the stop.
        shared.lock().stop = true;
        assert!(matches!(sliced.embed(&refs), Err(Error::EmbeddingStopped)));
    }

    #[test]
    fn slices_keep_the_order_and_both_limits() {
        let long = "x".repeat(SLICE_BYTES + 1);
        let short = "word";
        let mut texts = vec![short; 70];
        texts.extend([long.as_str(), long.as_str()]);
        let order: Vec<usize> = (0..texts.len()).collect();
        let cut = slices(&order, &texts);
        assert_eq!(cut.concat(), order);
        assert_eq!(cut.iter().map(|s| s.len()).collect::<Vec<_>>(), [32, 32, 6, 1, 1]);
        assert!(slices(&[], &texts).is_empty());
    }

    #[test]
    fn start_without_a_model_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let err = BackgroundEmbedder::start(dir.path(), OpenOptions::default(), None).err().unwrap();
        assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
    }
}
