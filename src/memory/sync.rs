//! Syncing a notes folder: [`Memory::sync_notes`] writes only what changed since the last
//! import (compared by each note's content hash), reports the notes that vanished from the
//! folder and removes them when asked. Re-importing an unchanged folder writes nothing, so it
//! embeds nothing and leaves every count as it was.

use super::{DocumentExtras, Memory};
use crate::error::Result;
use crate::ingest::IngestReport;
use crate::ingest::import::{FileIssue, NoteFolder, Progress};
use crate::store::StatsReads;
use std::collections::HashMap;
use std::path::Path;

/// What a sync did, note by note.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SyncReport {
    /// The writes' counts (leaves, summaries, removed leaves…).
    #[serde(flatten)]
    pub writes: IngestReport,
    /// Notes new to the store.
    pub added: usize,
    /// Notes whose content changed: replaced, atomically each.
    pub replaced: usize,
    /// Notes stored with the same content: not written.
    pub unchanged: usize,
    /// Source ids stored under the folder whose file is gone (kept unless pruned).
    pub vanished: Vec<String>,
    /// Vanished source ids removed with everything derived from them (`prune`).
    pub pruned: Vec<String>,
    /// Files not imported, and why.
    pub skipped: Vec<FileIssue>,
    /// Notes imported with a warning (malformed front matter, a date that is not one).
    pub warnings: Vec<FileIssue>,
}

impl Memory {
    /// Bring the store in line with a notes folder read by
    /// [`read_notes`](crate::ingest::import::read_notes): add new notes, replace changed
    /// ones (one atomic write each), leave unchanged ones alone, and report the notes stored
    /// under the folder's scope that are no longer in it; with `prune` they are removed as
    /// [`Memory::delete_source`] removes a source. A note that could not be read this time
    /// (skipped) is neither vanished nor pruned. `progress` counts the writes. Does not seal
    /// open buffers ([`Memory::import`] does).
    ///
    /// # Errors
    /// Those of the writes; the notes written before a failed one stay written (each is
    /// complete).
    pub fn sync_notes(
        &mut self,
        folder: NoteFolder,
        prune: bool,
        mut progress: impl FnMut(Progress),
    ) -> Result<SyncReport> {
        // A note is the file it was read from: every stored note (not only those under this
        // import's id prefix), so a note first imported through another folder (the vault, a
        // subfolder of it, its parent) keeps the id it was stored under and is not added again.
        let notes = self.view.store.note_hashes("doc:")?;
        let by_file: HashMap<&str, &str> =
            notes.iter().filter_map(|n| n.file.as_deref().map(|f| (f, n.id.as_str()))).rev().collect();
        let mut folder = folder;
        for n in &mut folder.notes {
            if let Some(id) = n.doc.source_ref.as_deref().and_then(|f| by_file.get(f))
                && *id != n.doc.source_id.as_str()
            {
                n.doc.source_id = (*id).into();
            }
        }
        drop(by_file);
        // Whose a stored note is: only one read from a file inside what this import reads can
        // vanish from it (a single file must be that file; a note recorded without a file, or
        // from another folder sharing the id prefix, is left alone).
        let inside: std::collections::HashSet<String> = notes
            .iter()
            .filter(|n| n.file.as_deref().is_some_and(|f| Path::new(f).starts_with(&folder.within)))
            .map(|n| n.id.clone())
            .collect();
        let stored: HashMap<String, Option<String>> = notes.into_iter().map(|n| (n.id, n.hash)).collect();
        let mut report =
            SyncReport { skipped: folder.skipped.iter().map(|(_, f)| f.clone()).collect(), ..SyncReport::default() };
        let mut present: std::collections::HashSet<&str> =
            folder.notes.iter().map(|n| n.doc.source_id.as_str()).collect();
        present.extend(folder.skipped.iter().map(|(id, _)| id.as_str()));
        let unreadable_dirs: Vec<&str> =
            folder.skipped.iter().map(|(id, _)| id.as_str()).filter(|id| id.ends_with('/')).collect();
        let mut vanished: Vec<String> = stored
            .keys()
            .filter(|id| inside.contains(id.as_str()))
            .filter(|id| !present.contains(id.as_str()) && !unreadable_dirs.iter().any(|d| id.starts_with(d)))
            .cloned()
            .collect();
        vanished.sort();
        let mut changed = Vec::new();
        for n in folder.notes {
            if let Some(w) = &n.warning {
                report
                    .warnings
                    .push(FileIssue { path: n.doc.source_ref.clone().unwrap_or_default().into(), reason: w.clone() });
            }
            match stored.get(n.doc.source_id.as_str()) {
                Some(Some(h)) if *h == n.hash => report.unchanged += 1,
                Some(_) => {
                    report.replaced += 1;
                    changed.push(n);
                }
                None => {
                    report.added += 1;
                    changed.push(n);
                }
            }
        }
        let pruning = if prune { vanished.len() } else { 0 };
        let mut p = Progress { unit: "notes", done: 0, total: (changed.len() + pruning) as u64 };
        progress(p);
        for n in changed {
            let extras = DocumentExtras { tags: &n.tags, aliases: &n.aliases, hash: Some(&n.hash) };
            report.writes.absorb(&self.replace_document(n.doc, &extras)?);
            p.done += 1;
            progress(p);
        }
        if prune {
            for id in &vanished {
                report.writes.absorb(&self.delete_source(&id.as_str().into())?);
                report.pruned.push(id.clone());
                p.done += 1;
                progress(p);
            }
        }
        report.vanished = vanished;
        Ok(report)
    }
}
