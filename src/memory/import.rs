//! Importing a file or folder into the store: [`Memory::import_with`] reads the whole input
//! with its [`Format`] (nothing is written when it fails), writes it in the batches its shape
//! calls for and seals the open buffers; a notes folder is synced instead (only what changed
//! is written, see `sync`). Here rather than in `ingest::import` so that the importers stay
//! below the store's writer (no module cycle). The CLI and the REPL both import through here.

use super::Memory;
use super::sync::SyncReport;
use crate::error::{Error, Result};
use crate::ingest::Item;
use crate::ingest::import::{Format, ITEM_BATCH, NoteOptions, Parsed, Progress, ReadReport, read_notes, sniff};
use crate::ingest::{Appended, IngestReport};
use crate::store::NoteRootReads;
use crate::types::SourceId;
use std::path::{Path, PathBuf};

/// How to import: `--strict` (every format), and the notes-folder options (`--root`,
/// `--prune`), which other formats refuse.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The vault root that note ids are relative to (default: the nearest folder with
    /// `.obsidian/`, else the folder imported).
    pub root: Option<PathBuf>,
    /// Any warning fails the import, with nothing written: a record that cannot be read (a
    /// line, a message, a conversation, a note), a date taken from a fallback, a doubtful
    /// separator, a malformed front matter (default: the record is skipped or read as said,
    /// and named).
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
    /// What the reader found in the input: the records read, written, already stored
    /// (`duplicates`), forgotten and left out by reason (they add up), and the warnings. Always
    /// set by [`Memory::import_with`] (a notes folder's warnings are in `notes`).
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
            if opts.strict
                && let Some(n) = folder.notes.iter().find(|n| n.warning.is_some())
            {
                let file = n.doc.source_ref.clone().map(PathBuf::from).unwrap_or_else(|| path.to_path_buf());
                let reason = n.warning.clone().unwrap_or_default();
                return Err(Error::ImportFormat { path: file, line: 0, reason });
            }
            let mut read = notes_read(&folder);
            let sync = self.sync_notes(folder, opts.prune, progress)?;
            read.written = (sync.added + sync.replaced) as u64;
            read.duplicates = sync.unchanged as u64;
            read.forgotten = sync.held as u64;
            let mut report = sync.writes.clone();
            report.absorb(&self.flush()?);
            return Ok(ImportSummary { report, notes: Some(sync), read: Some(read) });
        }
        for (flag, set) in [("root", opts.root.is_some()), ("prune", opts.prune)] {
            if set {
                return Err(Error::invalid(flag, format!("only a markdown import takes it, not {format}")));
            }
        }
        let (parsed, mut read) = format.read_reported(path)?;
        if opts.strict {
            read.strict(path)?;
        }
        let (mut report, counted) = self.write_parsed_counting(parsed, progress)?;
        read.duplicates = counted.duplicates;
        read.forgotten = counted.forgotten;
        read.written = read.written.saturating_sub(counted.duplicates + counted.forgotten);
        report.absorb(&self.flush()?);
        Ok(ImportSummary { report, notes: None, read: Some(read) })
    }

    /// Write a parsed input in the batches its shape calls for, without sealing the open
    /// buffers afterwards ([`Memory::import`] does): for a loader that adjusts what was read,
    /// or writes several inputs before one flush.
    pub fn write_parsed(&mut self, parsed: Parsed, progress: impl FnMut(Progress)) -> Result<IngestReport> {
        Ok(self.write_parsed_counting(parsed, progress)?.0)
    }

    /// [`Memory::write_parsed`], with how many of the input's records were not written
    /// ([`Unwritten`]).
    fn write_parsed_counting(
        &mut self,
        parsed: Parsed,
        mut progress: impl FnMut(Progress),
    ) -> Result<(IngestReport, Unwritten)> {
        let mut total = IngestReport::default();
        let mut unwritten = Unwritten::default();
        match parsed {
            Parsed::Items { items, unit } => {
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
                    let (r, u) = self.ingest_counting(batch)?;
                    total.absorb(&r);
                    unwritten.add(u);
                    progress(p);
                }
                total.sources = sources.len();
            }
            Parsed::Conversations(convs) => {
                let turns = convs.iter().map(|c| c.turns.len() as u64).sum();
                let mut p = Progress { unit: "turns", done: 0, total: turns };
                progress(p);
                for c in &convs {
                    let (r, u) = self.ingest_counting(c.items())?;
                    total.absorb(&r);
                    unwritten.add(u);
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
        Ok((total, unwritten))
    }

    /// [`Memory::ingest`], with how many of `items` were not written ([`Unwritten`]).
    fn ingest_counting(&mut self, items: Vec<Item>) -> Result<(IngestReport, Unwritten)> {
        let cfg = self.shared.opts.config.clone();
        let mut drafts = Vec::with_capacity(items.len());
        for it in items {
            drafts.push(it.into_drafts(&cfg)?);
        }
        let mut unwritten = Unwritten::default();
        let report = self.write(|b| {
            for item in drafts {
                let (mut new, mut held) = (false, false);
                let any = !item.is_empty();
                for d in item {
                    match b.append_leaf(d)? {
                        Appended::Written => new = true,
                        Appended::Forgotten => held = true,
                        Appended::Duplicate => {}
                    }
                }
                // A record is written when any of its leaves is; else forgotten when a forget
                // held one back; else a duplicate.
                match (any, new, held) {
                    (true, false, true) => unwritten.forgotten += 1,
                    (true, false, false) => unwritten.duplicates += 1,
                    _ => {}
                }
            }
            Ok(())
        })?;
        Ok((report, unwritten))
    }
}

/// The records of an input that were not written: every leaf of theirs already stored (or
/// written earlier in the input), or held back by a forget.
#[derive(Debug, Clone, Copy, Default)]
struct Unwritten {
    duplicates: u64,
    forgotten: u64,
}

impl Unwritten {
    fn add(&mut self, o: Unwritten) {
        self.duplicates += o.duplicates;
        self.forgotten += o.forgotten;
    }
}

/// What a notes folder's read found, before the sync: the notes, the empty ones, the files
/// (and folders) that could not be read. `written` and `duplicates` come from the sync.
fn notes_read(folder: &crate::ingest::import::NoteFolder) -> ReadReport {
    let mut read =
        ReadReport { read: (folder.notes.len() + folder.empty + folder.skipped.len()) as u64, ..ReadReport::default() };
    if folder.empty > 0 {
        read.skipped.insert("empty note".into(), folder.empty as u64);
    }
    for (id, _) in &folder.skipped {
        read.skip(if id.as_str().ends_with('/') { "folder that could not be listed" } else { "unreadable note" });
    }
    read
}
