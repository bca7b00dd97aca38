//! The user's data out and back in (issue 32): `memtree export` writes an archive, `memtree
//! restore` builds a store from one. The archive is JSON Lines, one object a line with its
//! `type`: a `header` (format name, version, model, creation time, the filter), the
//! `source`s, the `entity` rows the leaves name, the `leaf`s in time order (id, source,
//! author, time, role, text, tags, participants, source_ref, entity ids: everything to rebuild
//! them exactly), the `summary` nodes (the tree as sealed, so a restore answers as the store
//! did), the alias `registry` files, the `recall` facts, the `note_root`s, the `forgotten`
//! records, and an `end` line with the counts (a truncated archive has none). Vectors do not
//! travel: a restore with the model makes them again from the texts, byte for byte the same
//! model's vectors, and one without leaves them to `memtree reindex` or the next open with the
//! model; an archive stays readable and a tenth of the size.

mod export;
mod restore;

pub use export::{ExportFilter, ExportReport};
pub use restore::{RestoreOptions, RestoreReport};

use crate::store::{ForgetRecord, NodeRow, RecallRecord, SourceRecord};
use crate::types::{NodeId, TreeId};
use serde::{Deserialize, Serialize};

/// The archive's format name, on its header line.
pub const ARCHIVE_FORMAT: &str = "memtree-archive";

/// The archive format version this build writes, and the newest it reads.
pub const ARCHIVE_VERSION: u32 = 1;

/// One line of an archive.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Header(Header),
    Source(SourceRecord),
    Entity(EntityLine),
    Leaf(LeafLine),
    Summary(SummaryLine),
    Registry(RegistryLine),
    Recall(RecallRecord),
    NoteRoot { root: String },
    Forgotten(ForgetRecord),
    End(Counts),
}

/// The first line.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Header {
    /// [`ARCHIVE_FORMAT`].
    format: String,
    /// [`ARCHIVE_VERSION`] of the writer.
    version: u32,
    /// The model the store's vectors were made by, if any.
    model: Option<String>,
    /// When the archive was written (RFC 3339 UTC) and in epoch ms.
    created: String,
    created_ms: i64,
    /// The export's filter: `null` for all sources; the window, epoch ms.
    sources: Option<Vec<String>>,
    since_ms: Option<i64>,
    until_ms: Option<i64>,
}

/// An entity a leaf names: its row as first made.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct EntityLine {
    id: String,
    kind: String,
    surface: String,
}

/// A leaf as stored.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct LeafLine {
    id: String,
    source: String,
    seq: i64,
    time_ms: i64,
    author: Option<String>,
    role: crate::ingest::Role,
    text: String,
    #[serde(default)]
    tags: Vec<String>,
    #[serde(default)]
    participants: Vec<String>,
    source_ref: Option<String>,
    flags: u32,
    tokens: u64,
    appended_ms: i64,
    parent: Option<String>,
    #[serde(default)]
    entities: Vec<String>,
}

/// A summary as sealed.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct SummaryLine {
    id: String,
    source: String,
    level: u32,
    seq: i64,
    text: String,
    time_start_ms: i64,
    time_end_ms: i64,
    tokens: u64,
    appended_ms: i64,
    parent: Option<String>,
    children: Vec<String>,
    #[serde(default)]
    topics: Vec<String>,
}

/// A file of the alias registry (`content/entities/…`), byte for byte.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RegistryLine {
    path: String,
    text: String,
}

/// What an archive holds, on its last line (and what an export or restore reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counts {
    /// Sources.
    pub sources: u64,
    /// Entities.
    pub entities: u64,
    /// Leaves.
    pub leaves: u64,
    /// Summaries.
    pub summaries: u64,
    /// Registry files.
    pub registry: u64,
    /// `memory_recall` facts.
    pub recall: u64,
    /// Note roots.
    pub note_roots: u64,
    /// Forget records.
    pub forgotten: u64,
}

impl LeafLine {
    fn from_row(n: NodeRow, entities: Vec<String>) -> LeafLine {
        let role = if n.flags & NodeRow::FLAG_ASSISTANT != 0 {
            crate::ingest::Role::Assistant
        } else {
            crate::ingest::Role::Person
        };
        LeafLine {
            source: n.tree_id.scope().to_string(),
            id: n.node_id.0,
            seq: n.seq,
            time_ms: n.time_start_ms,
            author: n.author,
            role,
            text: n.content,
            tags: n.tags,
            participants: n.participants,
            source_ref: n.source_ref,
            flags: n.flags,
            tokens: n.tokens,
            appended_ms: n.appended_ms,
            parent: n.parent_id.map(|p| p.0),
            entities,
        }
    }

    fn to_row(&self) -> NodeRow {
        NodeRow {
            node_id: NodeId(self.id.clone()),
            tree_id: TreeId::for_source(&self.source.as_str().into()),
            level: 0,
            seq: self.seq,
            content: self.text.clone(),
            author: self.author.clone(),
            participants: self.participants.clone(),
            tags: self.tags.clone(),
            source_ref: self.source_ref.clone(),
            time_start_ms: self.time_ms,
            time_end_ms: self.time_ms,
            tokens: self.tokens,
            parent_id: self.parent.clone().map(NodeId),
            child_ids: Vec::new(),
            flags: self.flags,
            appended_ms: self.appended_ms,
        }
    }
}

impl SummaryLine {
    fn from_row(n: NodeRow, topics: Vec<String>) -> SummaryLine {
        SummaryLine {
            source: n.tree_id.scope().to_string(),
            id: n.node_id.0,
            level: n.level,
            seq: n.seq,
            text: n.content,
            time_start_ms: n.time_start_ms,
            time_end_ms: n.time_end_ms,
            tokens: n.tokens,
            appended_ms: n.appended_ms,
            parent: n.parent_id.map(|p| p.0),
            children: n.child_ids.into_iter().map(|c| c.0).collect(),
            topics,
        }
    }

    fn to_row(&self) -> NodeRow {
        NodeRow {
            node_id: NodeId(self.id.clone()),
            tree_id: TreeId::for_source(&self.source.as_str().into()),
            level: self.level,
            seq: self.seq,
            content: self.text.clone(),
            author: None,
            participants: Vec::new(),
            tags: Vec::new(),
            source_ref: None,
            time_start_ms: self.time_start_ms,
            time_end_ms: self.time_end_ms,
            tokens: self.tokens,
            parent_id: self.parent.clone().map(NodeId),
            child_ids: self.children.iter().cloned().map(NodeId).collect(),
            flags: 0,
            appended_ms: self.appended_ms,
        }
    }
}
