//! memtree: an embedded memory-retrieval engine for a personal assistant.
//!
//! The stream of what a user sees (chat, e-mail, documents) is folded into a **memory tree**
//! on disk: raw leaves, sealed summaries above them per source, an entity index and a
//! co-occurrence graph. Reads are deterministic primitives behind one JSON tool,
//! `memory_tree`; no language model is called on the read path.
//!
//! ```
//! use memtree::{ChatMessage, Item, Memory, Role};
//! let dir = tempfile::tempdir().unwrap();
//! let mut mem = Memory::open(dir.path()).unwrap();
//! mem.ingest([Item::Chat(ChatMessage {
//!     source_id: "slack:#eng".into(),
//!     author: "Alice".into(),
//!     ts_ms: 1_700_000_000_000,
//!     text: "Phoenix launch moves to May".into(),
//!     source_ref: None,
//!     participants: vec![],
//!     tags: vec![],
//!     role: Role::Person,
//!     title: None,
//! })])
//! .unwrap();
//! assert_eq!(mem.as_reader().stats().unwrap().counts.leaves, 1);
//! ```

#![warn(missing_docs)]

// The README's library snippet runs as a doc test, so it cannot drift from the API.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

// Every module is private; what a host, the CLI, the REPL, the benches and the MCP server use
// is re-exported below, so the public surface is a list someone chose, not the module tree.
// `tool` and `eval` stay namespaces: their names (`tool::call_json`, `eval::recall::run`)
// read better qualified, and each exports only its own entry points. `eval` (the recall
// harness, the FTS5 baseline, what the benches time) is compiled only with the `harness`
// feature, which the command line turns on: an app that embeds the engine has none of it.
mod clock;
mod config;
mod crash;
mod derived;
mod embed;
mod entities;
mod error;
#[cfg(feature = "harness")]
pub mod eval;
mod graph;
mod index;
mod ingest;
mod malloc;
#[cfg(feature = "mcp")]
mod mcp;
mod memory;
mod options;
mod reader;
mod reranker;
mod retrieval;
mod shared;
mod store;
mod text;
mod time;
pub mod tool;
mod tree;
mod types;

// The engine's tests that read its insides (the store's rows, the index, the derived state)
// live beside the code; `tests/` holds what drives the programs.
#[cfg(test)]
mod tests;

pub use clock::{Clock, ManualClock, SystemClock, parse_now};
pub use config::Config;

pub use embed::{
    Batching, Embedder, FastEmbedder, HashEmbedder, ModelPaths, Rows, SETTINGS_FILE as MODEL_SETTINGS_FILE,
    VectorMatrix,
};
pub use entities::{EntityRecord, Handle, Registry, VaultFingerprint};
pub use error::{Error, Result};
pub use ingest::import::{
    FileIssue, Format, Note, NoteFolder, NoteOptions, Parsed, Progress, ReadReport, ReadWarning, last_week_shift,
    read_notes,
};
pub use ingest::{ChatMessage, Document, DocumentReport, EmailMessage, IngestReport, Item, Resealed, Role};
pub use malloc::tune_malloc;
#[cfg(feature = "mcp")]
pub use mcp::{McpServer, ServeError, ToolOutcome, serve_stdio};
pub use memory::{
    ARCHIVE_FORMAT, ARCHIVE_VERSION, ArchiveCounts, BackgroundEmbedder, EmbedEvent, EmbedHook, EmbedStatus,
    ExportFilter, ExportReport, Forget, ForgetReceipt, ImportOptions, ImportSummary, Memory, OpenReport,
    RestoreOptions, RestoreReport, SyncReport,
};
pub use options::{
    CONTENT_DIR, DEFAULT_LOCK_TIMEOUT, Embedding, LOCK_TIMEOUT_ENV, OpenOptions, default_store_dir,
    lock_timeout_from_env, store_exists,
};
pub use reader::{MemoryReader, Stats};
pub use reranker::{
    CrossEncoder, CrossScorer, DEFAULT_RERANK_TOP, DEFAULT_RERANKER_ARG, MAX_RERANK_TOP, RERANK_THREADS_ENV,
    RERANKER_DIR_ENV, RERANKER_SETTINGS_FILE, RERANKER_SUBDIR, RRF_K, Reranker, default_reranker_dir, fuse_ranks,
    reranker_dir,
};
pub use retrieval::{
    CoverWindowArgs, DrillDownArgs, EntityMatch, FetchLeavesArgs, QueryResponse, QuerySourceArgs, RetrievalHit, Scope,
    SearchEntitiesArgs, Snippet, WalkArgs, WalkParams, cover_window, drill_down, fetch_leaves, query_source,
    search_entities, walk,
};
pub use store::{EdgeRow, ForgetRecord, SourceSummary, StoreCounts};
pub use text::{MAX_QUESTION_CHARS, MAX_QUESTION_TERMS};
pub use tree::{ExtractiveSummariser, Summariser, SummaryChild, SummaryRequest};
pub use types::{EntityId, EntityKind, ForgetGrain, NodeId, NodeKind, SourceId, SourceKind, TreeId};
