//! Syncing a notes folder: [`Memory::sync_notes`] writes only what changed since the last
//! import (compared by each note's content hash), reports the notes that vanished from the
//! folder and removes them when asked. Re-importing an unchanged folder writes nothing, so it
//! embeds nothing and leaves every count as it was.

use super::note_identity::identify;
use super::{DocumentExtras, Memory};
use crate::error::Result;
use crate::ingest::IngestReport;
use crate::ingest::import::{FileIssue, NoteFolder, Progress};
use crate::store::{NoteRootReads, StatsReads};
use std::collections::{HashMap, HashSet};
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
    /// Notes not in the store that a forget holds back whole (their leaves are counted in
    /// `forgotten`).
    pub held: usize,
    /// Source ids stored under the folder whose file is gone (kept unless pruned).
    pub vanished: Vec<String>,
    /// Vanished source ids removed with everything derived from them (`prune`).
    pub pruned: Vec<String>,
    /// Source ids removed because the same file is stored under another id, which stays (a
    /// vault and its subfolder imported before notes kept one id per file).
    pub merged: Vec<String>,
    /// Files not imported, and why.
    pub skipped: Vec<FileIssue>,
    /// Notes imported with a warning (malformed front matter, a date that is not one, an id
    /// that another file holds so the note was named with more of its path).
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
        mut folder: NoteFolder,
        prune: bool,
        mut progress: impl FnMut(Progress),
    ) -> Result<SyncReport> {
        // A note is the file it was read from: every stored note (not only those under this
        // import's id prefix) is matched by its file, so a note first imported through another
        // folder (the vault, a subfolder of it, its parent) keeps the id it was stored under.
        let notes = self.store.note_hashes("doc:")?;
        let known = self.store.note_roots()?;
        let roots: Vec<_> =
            known.iter().chain(std::iter::once(&folder.root)).chain(folder.vaults.iter()).cloned().collect();
        let identity = identify(&mut folder.notes, &notes, &folder.root, &roots, |p| p.exists());
        let mut report = SyncReport {
            skipped: folder.skipped.iter().map(|(_, f)| f.clone()).collect(),
            warnings: identity.renamed,
            ..SyncReport::default()
        };
        // What identifies later imports is recorded first: the root, and where moved notes
        // are (an unchanged folder imported again writes nothing at all).
        let new_roots: Vec<String> = std::iter::once(&folder.root)
            .chain(folder.vaults.iter())
            .filter(|r| !known.contains(r))
            .map(|r| r.to_string_lossy().into_owned())
            .collect();
        if !new_roots.is_empty() || !identity.refile.is_empty() {
            let _guard = self.lock()?;
            let tx = self.store.begin()?;
            for root in &new_roots {
                tx.remember_note_root(root)?;
            }
            for (id, file) in &identity.refile {
                tx.refile_note(id, file)?;
            }
            tx.commit_record_only()?;
        }
        // Whose a stored note is: only one read from a file inside what this import reads can
        // vanish from it (a single file must be that file; a note recorded without a file, or
        // from another folder sharing the id prefix, is left alone).
        let merged: HashSet<&str> = identity.merged.iter().map(String::as_str).collect();
        let inside: HashSet<String> = notes
            .iter()
            .filter(|n| n.file.as_deref().is_some_and(|f| Path::new(f).starts_with(&folder.within)))
            .filter(|n| !merged.contains(n.id.as_str()))
            .map(|n| n.id.clone())
            .collect();
        let stored: HashMap<String, Option<String>> = notes.into_iter().map(|n| (n.id, n.hash)).collect();
        let mut present: HashSet<&str> = folder.notes.iter().map(|n| n.doc.source_id.as_str()).collect();
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
                    changed.push((n, false));
                }
                None => {
                    report.added += 1;
                    changed.push((n, true));
                }
            }
        }
        let pruning = if prune { vanished.len() } else { 0 };
        let total = changed.len() + pruning + identity.merged.len();
        let mut p = Progress { unit: "notes", done: 0, total: total as u64 };
        progress(p);
        // The same file stored twice: the extra ids go, whatever `prune` says (nothing is lost:
        // the file stays stored under the id kept).
        for id in identity.merged {
            report.writes.absorb(&self.delete_source(&id.as_str().into())?);
            report.merged.push(id);
            p.done += 1;
            progress(p);
        }
        for (n, added) in changed {
            let extras = DocumentExtras { tags: &n.tags, aliases: &n.aliases, hash: Some(&n.hash) };
            let w = self.replace_document(n.doc, &extras)?;
            // A note a forget holds back whole was not added (it is counted as `forgotten`).
            if added && w.leaves == 0 && w.forgotten > 0 {
                report.added -= 1;
                report.held += 1;
            }
            report.writes.absorb(&w);
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
