//! memtree: an embedded memory-retrieval engine for a personal assistant.
//!
//! The stream of what a user sees (chat, e-mail, documents) is folded into a **memory tree**
//! on disk: raw leaves, sealed summaries above them per source, an entity index and a
//! co-occurrence graph. Reads are deterministic primitives behind one JSON tool,
//! `memory_tree`; no language model is called on the read path.
//!
//! ```
//! use memtree::{ChatMessage, Item, Memory};
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
//! })])
//! .unwrap();
//! assert_eq!(mem.stats().unwrap().counts.leaves, 1);
//! ```

pub mod clock;
pub mod config;
pub mod crash;
mod derived;
pub mod embed;
pub mod entities;
mod error;
pub mod eval;
pub mod graph;
pub mod index;
pub mod ingest;
pub mod mcp;
mod memory;
mod options;
mod reader;
pub mod retrieval;
pub mod store;
pub mod text;
pub mod tool;
pub mod tree;
pub mod types;

pub use clock::{Clock, ManualClock, SystemClock};
pub use config::Config;
pub use derived::Derived;
pub use error::{Error, Result};
pub use ingest::{ChatMessage, Document, EmailMessage, IngestReport, Item};
pub use memory::{Memory, OpenReport};
pub use options::{CONTENT_DIR, OpenOptions, default_store_dir};
pub use reader::{Dense, MemoryReader, Stats};
pub use types::{EntityId, EntityKind, NodeId, NodeKind, SourceId, SourceKind, TreeId};
