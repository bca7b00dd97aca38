//! The write path's inputs: chat messages, e-mails and documents; their canonicalisation
//! into leaf drafts (chunking, deterministic ids, structured entities); the batch writer
//! that appends leaves and seals the tree; and the file importers.

mod canonical;
mod chunk;
pub mod import;
mod writer;

pub(crate) use canonical::LeafDraft;
pub use canonical::{ChatMessage, Document, EmailMessage, Item, Role};
pub use writer::Resealed;
pub(crate) use writer::{Appended, WriteBatch, WriteContext, Written, content_hash, release_texts, restore_texts};

/// What one write did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct IngestReport {
    /// Sources touched.
    pub sources: usize,
    /// Leaves written.
    pub leaves: usize,
    /// Leaves skipped because the same content was already stored (idempotent re-send).
    pub duplicates: usize,
    /// Summaries sealed.
    pub summaries: usize,
    /// Leaves removed (a replaced document's old version).
    pub removed: usize,
    /// Leaves left out because the user forgot them (a forget record holds them back).
    pub forgotten: usize,
}

/// What writing one document did ([`Memory::write_document`](crate::Memory::write_document)):
/// the source it is stored under (the id it was written as, or the vault note stored from the
/// file that id names) and the counts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DocumentReport {
    /// The source the document is stored under.
    pub source_id: crate::types::SourceId,
    /// What the write did.
    pub report: IngestReport,
}

impl IngestReport {
    /// Add another report's counts to this one.
    pub fn absorb(&mut self, o: &IngestReport) {
        self.sources += o.sources;
        self.leaves += o.leaves;
        self.duplicates += o.duplicates;
        self.summaries += o.summaries;
        self.removed += o.removed;
        self.forgotten += o.forgotten;
    }
}
