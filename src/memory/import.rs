//! Importing a file or folder into the store: [`Memory::import`] reads the whole input with
//! its [`Format`] (nothing is written when it fails), writes it in the batches its shape calls
//! for and seals the open buffers. Here rather than in `ingest::import` so that the importers
//! stay below the store's writer (no module cycle).

use super::Memory;
use crate::error::Result;
use crate::ingest::IngestReport;
use crate::ingest::Item;
use crate::ingest::import::{Format, ITEM_BATCH, Parsed, Progress};
use std::path::Path;

impl Memory {
    /// Import the file (or folder) at `path` in `format`: parse all of it, write it in
    /// batches, then seal the open leaf buffers, as a live stream would have sealed them once
    /// the flush age passed (a file import is complete history). `progress` hears of each
    /// write (the library never prints). Re-importing a file adds nothing (ingest is
    /// idempotent).
    ///
    /// # Errors
    /// Those of [`Format::read`] (then nothing was written) and of the writes.
    pub fn import(&mut self, format: Format, path: &Path, progress: impl FnMut(Progress)) -> Result<IngestReport> {
        let parsed = format.read(path)?;
        let mut report = self.write_parsed(parsed, progress)?;
        report.absorb(&self.flush()?);
        Ok(report)
    }

    /// Write a parsed input in the batches its shape calls for, without sealing the open
    /// buffers afterwards ([`Memory::import`] does): for a loader that adjusts what was read,
    /// or writes several inputs before one flush.
    pub fn write_parsed(&mut self, parsed: Parsed, mut progress: impl FnMut(Progress)) -> Result<IngestReport> {
        let mut total = IngestReport::default();
        match parsed {
            Parsed::Items { items, unit } => {
                let mut p = Progress { unit, done: 0, total: items.len() as u64 };
                progress(p);
                let mut items = items.into_iter().peekable();
                while items.peek().is_some() {
                    let batch: Vec<Item> = items.by_ref().take(ITEM_BATCH).collect();
                    p.done += batch.len() as u64;
                    total.absorb(&self.ingest(batch)?);
                    progress(p);
                }
            }
            Parsed::Conversations(convs) => {
                let turns = convs.iter().map(|c| c.turns.len() as u64).sum();
                let mut p = Progress { unit: "turns", done: 0, total: turns };
                progress(p);
                for c in &convs {
                    total.absorb(&self.ingest(c.items())?);
                    p.done += c.turns.len() as u64;
                    progress(p);
                }
            }
            Parsed::Documents(docs) => {
                let mut p = Progress { unit: "documents", done: 0, total: docs.len() as u64 };
                progress(p);
                for d in docs {
                    total.absorb(&self.ingest_document(d)?);
                    p.done += 1;
                    progress(p);
                }
            }
        }
        Ok(total)
    }
}
