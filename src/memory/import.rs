//! Importing a file or folder into the store: [`Memory::import_with`] reads the whole input
//! with its [`Format`] (nothing is written when it fails), writes it in the batches its shape
//! calls for and seals the open buffers; a notes folder is synced instead (only what changed
//! is written, see `sync`). Here rather than in `ingest::import` so that the importers stay
//! below the store's writer (no module cycle). The CLI and the REPL both import through here.

use super::Memory;
use super::sync::SyncReport;
use crate::error::{Error, Result};
use crate::ingest::IngestReport;
use crate::ingest::Item;
use crate::ingest::import::{Format, ITEM_BATCH, NoteOptions, Parsed, Progress, ReadReport, read_notes, sniff};
use crate::store::NoteRootReads;
use crate::types::SourceId;
use std::path::{Path, PathBuf};

/// How to import: the notes-folder options (`--root`, `--strict`, `--prune`); every other
/// format is all-or-nothing and takes none of them.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The vault root that note ids are relative to (default: the nearest folder with
    /// `.obsidian/`, else the folder imported).
    pub root: Option<PathBuf>,
    /// A note that cannot be read fails the import, with nothing written (default: it is
    /// skipped and named).
    pub strict: bool,
    /// Remove the notes stored under the folder whose files are gone (default: report them).
    pub prune: bool,
}

/// What an import did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// The writes' counts, with the final seal's.
    pub report: IngestReport,
    /// For a notes folder, what the sync did note by note (its `writes` are in `report`).
    pub notes: Option<SyncReport>,
    /// For messages and e-mails, what the reader found in the input: read, written, left
    /// out by reason, and where it was unsure how to separate them.
    pub read: Option<ReadReport>,
}

impl Memory {
    /// Import the file (or folder) at `path` in `format` with default options; see
    /// [`Memory::import_with`].
    ///
    /// # Errors
    /// Those of [`Memory::import_with`].
    pub fn import(&mut self, format: Format, path: &Path, progress: impl FnMut(Progress)) -> Result<IngestReport> {
        Ok(self.import_with(format, path, &ImportOptions::default(), progress)?.report)
    }

    /// Import the file (or folder) at `path` in `format`: parse all of it, write it in
    /// batches, then seal the open leaf buffers, as a live stream would have sealed them once
    /// the flush age passed (a file import is complete history). `progress` hears of each
    /// write (the library never prints). Re-importing a file adds nothing (ingest is
    /// idempotent); re-importing a notes folder writes only the notes that changed.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for notes-folder options with another format; those of
    /// [`Format::read`] or [`read_notes`] (then nothing was written) and of the writes.
    pub fn import_with(
        &mut self,
        format: Format,
        path: &Path,
        opts: &ImportOptions,
        progress: impl FnMut(Progress),
    ) -> Result<ImportSummary> {
        if format == Format::Markdown {
            sniff::check(format, path)?;
            let known_roots = self.store.note_roots()?;
            let folder = read_notes(path, &NoteOptions { root: opts.root.clone(), strict: opts.strict, known_roots })?;
            let sync = self.sync_notes(folder, opts.prune, progress)?;
            let mut report = sync.writes.clone();
            report.absorb(&self.flush()?);
            return Ok(ImportSummary { report, notes: Some(sync), read: None });
        }
        for (flag, set) in [("root", opts.root.is_some()), ("strict", opts.strict), ("prune", opts.prune)] {
            if set {
                return Err(Error::invalid(flag, format!("only a markdown import takes it, not {format}")));
            }
        }
        let parsed = format.read(path)?;
        let read = match &parsed {
            Parsed::Items { report, .. } => Some(report.clone()),
            Parsed::Conversations(_) | Parsed::Documents(_) => None,
        };
        let mut report = self.write_parsed(parsed, progress)?;
        report.absorb(&self.flush()?);
        Ok(ImportSummary { report, notes: None, read })
    }

    /// Write a parsed input in the batches its shape calls for, without sealing the open
    /// buffers afterwards ([`Memory::import`] does): for a loader that adjusts what was read,
    /// or writes several inputs before one flush.
    pub fn write_parsed(&mut self, parsed: Parsed, mut progress: impl FnMut(Progress)) -> Result<IngestReport> {
        let mut total = IngestReport::default();
        match parsed {
            Parsed::Items { items, unit, .. } => {
                let mut p = Progress { unit, done: 0, total: items.len() as u64 };
                progress(p);
                // A source whose items span two batches is touched by both: the input's
                // distinct sources are what the import touched (not the batches' sum).
                let sources: std::collections::HashSet<SourceId> =
                    items.iter().map(|i| i.source_id().clone()).collect();
                let mut items = items.into_iter().peekable();
                while items.peek().is_some() {
                    let batch: Vec<Item> = items.by_ref().take(ITEM_BATCH).collect();
                    p.done += batch.len() as u64;
                    total.absorb(&self.ingest(batch)?);
                    progress(p);
                }
                total.sources = sources.len();
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
