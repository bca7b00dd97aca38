//! `Memory::restore`: a store from an archive. Into a missing or empty store the archive's
//! rows are written as they were into a folder beside the store, its index and vectors made
//! there, and the folder renamed into place at the end: afterwards the store does not exist or
//! holds everything, and answers as the exported one did. Into a store that holds something,
//! only when asked (`merge`): then the archive's leaves are written as an import's are (what
//! is stored already, or held back by a forget, is left out) and the tree sealed anew.

use super::{ARCHIVE_FORMAT, ARCHIVE_VERSION, Counts, EntityLine, Header, LeafLine, Line};
use crate::entities::Mention;
use crate::error::{Error, Result};
use crate::ingest::import::{ITEM_BATCH, Progress};
use crate::ingest::{IngestReport, LeafDraft, Role};
use crate::memory::Memory;
use crate::options::{CONTENT_DIR, Embedding, OpenOptions};
use crate::store::{ArchiveReads, ForgottenReads, SourceRecord, Store};
use crate::types::{EntityId, EntityKind, NodeId, SourceId, SourceKind};
use std::collections::HashMap;
use std::io::BufRead;
use std::path::{Component, Path, PathBuf};

/// How to restore.
#[derive(Debug, Clone, Default)]
pub struct RestoreOptions {
    /// Into a store that holds something: write the archive as an import would (default:
    /// refuse, [`Error::StoreNotEmpty`]).
    pub merge: bool,
}

/// What a restore did.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct RestoreReport {
    /// What the archive held.
    pub archive: Counts,
    /// The model the archive names.
    pub model: Option<String>,
    /// For a merge, what its writes did (leaves written, duplicates, forgotten).
    pub merged: Option<IngestReport>,
    /// Vectors made (0 without a model: `memtree reindex` with one makes them).
    pub vectors: usize,
}

impl Memory {
    /// Restore the archive read from `input` into the store at `dir`, which must be missing
    /// or hold nothing, unless `ropts.merge`. Opened with `opts`; with a model, the vectors
    /// are made (`progress` hears of them) before the store is put in place.
    ///
    /// # Errors
    /// [`Error::Archive`] for an archive that is truncated, corrupted or not one (nothing is
    /// restored); [`Error::ArchiveVersion`] for a newer format; [`Error::ArchiveModel`] when
    /// `opts` has another model than the archive names; [`Error::StoreNotEmpty`]; the
    /// store's and the file system's.
    pub fn restore(
        dir: &Path,
        input: impl BufRead,
        opts: OpenOptions,
        ropts: &RestoreOptions,
        progress: impl FnMut(Progress),
    ) -> Result<RestoreReport> {
        let mut lines = Lines { input, n: 0, buf: String::new(), counts: Counts::default(), ended: false };
        let header = lines.header()?;
        if let (Some(want), Some(emb)) = (&header.model, opts.embedder.as_deref())
            && emb.name() != want
        {
            return Err(Error::ArchiveModel { archive: want.clone(), given: emb.name().to_string() });
        }
        let mut opts = opts;
        opts.embedding = Embedding::Deferred;
        if !target_is_empty(dir, &opts)? {
            if !ropts.merge {
                return Err(Error::StoreNotEmpty { dir: dir.to_path_buf() });
            }
            return merge(dir, lines, header, opts, progress);
        }
        let parent = dir.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "store".into());
        let tmp = Scratch(parent.join(format!(".{name}.restore-{}", std::process::id())));
        if tmp.0.exists() {
            std::fs::remove_dir_all(&tmp.0).map_err(|e| Error::io(&tmp.0, e))?;
        }
        std::fs::create_dir_all(tmp.0.join(CONTENT_DIR)).map_err(|e| Error::io(&tmp.0, e))?;
        let archive = build(&tmp.0, &mut lines)?;
        // The index (and the gazetteer) from the rows, then the vectors: a store that answers.
        let vectors = {
            let mut mem = Memory::open_with(&tmp.0, opts)?;
            mem.embed_pending(progress)?
        };
        if dir.exists() {
            std::fs::remove_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        std::fs::rename(&tmp.0, dir).map_err(|e| Error::io(dir, e))?;
        std::mem::forget(tmp);
        Ok(RestoreReport { archive, model: header.model, merged: None, vectors })
    }
}

/// A folder removed when dropped: the restore's, until it is renamed into place.
struct Scratch(PathBuf);

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Whether `dir` may be restored into: nothing there, an empty folder, or a store that holds
/// no source, leaf, recall fact, forget record or registry file.
fn target_is_empty(dir: &Path, opts: &OpenOptions) -> Result<bool> {
    if !dir.exists() {
        return Ok(true);
    }
    if !crate::options::store_exists(dir) {
        let mut entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        return Ok(entries.next().is_none());
    }
    let mem = Memory::open_with(dir, opts.clone())?;
    Ok(mem.store.holds_nothing()? && super::export::registry_files(&dir.join(CONTENT_DIR))?.is_empty())
}

/// The archive's lines, numbered and checked as a stream, in one place for a restore and a
/// merge alike: one header first, then lines of every other kind counted, and an `end` line
/// whose counts are the archive's, with nothing after it. What a line holds is its reader's
/// to check.
struct Lines<R: BufRead> {
    input: R,
    n: u64,
    buf: String,
    /// The lines of each kind read so far.
    counts: Counts,
    /// Whether the `end` line was read.
    ended: bool,
}

impl<R: BufRead> Lines<R> {
    /// The next line parsed and checked against the stream so far, `None` at the end of a
    /// whole archive (an input that ends before its `end` line is truncated: an error).
    fn next(&mut self) -> Result<Option<Line>> {
        self.buf.clear();
        let read = self
            .input
            .read_line(&mut self.buf)
            .map_err(|e| Error::Archive { line: self.n + 1, reason: format!("cannot be read: {e}") })?;
        if read == 0 {
            if !self.ended {
                return Err(Error::Archive {
                    line: self.n,
                    reason: "the archive ends without its `end` line: it is truncated".into(),
                });
            }
            return Ok(None);
        }
        self.n += 1;
        let text = self.buf.trim_end_matches(['\n', '\r']);
        let line: Line = serde_json::from_str(text)
            .map_err(|e| Error::Archive { line: self.n, reason: format!("not an archive line ({e})") })?;
        self.count(&line)?;
        Ok(Some(line))
    }

    /// Count `line` (the `n`-th), refusing what a well-formed archive cannot hold there.
    fn count(&mut self, line: &Line) -> Result<()> {
        let n = self.n;
        if self.ended {
            return Err(Error::Archive { line: n, reason: "a line after the `end` line".into() });
        }
        let c = &mut self.counts;
        match line {
            Line::Header(_) => return Err(Error::Archive { line: n, reason: "a second header".into() }),
            Line::Source(_) => c.sources += 1,
            Line::Entity(_) => c.entities += 1,
            Line::Leaf(_) => c.leaves += 1,
            Line::Summary(_) => c.summaries += 1,
            Line::Registry(_) => c.registry += 1,
            Line::Recall(_) => c.recall += 1,
            Line::NoteRoot { .. } => c.note_roots += 1,
            Line::Forgotten(_) => c.forgotten += 1,
            Line::End(said) => {
                if *said != *c {
                    return Err(Error::Archive {
                        line: n,
                        reason: format!("the `end` line counts {said:?}, the archive holds {c:?}"),
                    });
                }
                self.ended = true;
            }
        }
        Ok(())
    }

    /// The header, checked: an archive of this format, of a version this build reads.
    fn header(&mut self) -> Result<Header> {
        self.buf.clear();
        self.input
            .read_line(&mut self.buf)
            .map_err(|e| Error::Archive { line: 1, reason: format!("cannot be read: {e}") })?;
        self.n = 1;
        let not_one = || Error::Archive { line: 1, reason: format!("not a {ARCHIVE_FORMAT} (no header line)") };
        let v: serde_json::Value = serde_json::from_str(self.buf.trim_end()).map_err(|_| not_one())?;
        if v["type"] != "header" || v["format"] != ARCHIVE_FORMAT {
            return Err(not_one());
        }
        let version = v["version"].as_u64().ok_or_else(not_one)?;
        if version > u64::from(ARCHIVE_VERSION) {
            return Err(Error::ArchiveVersion {
                found: u32::try_from(version).unwrap_or(u32::MAX),
                supported: ARCHIVE_VERSION,
            });
        }
        match serde_json::from_value::<Line>(v) {
            Ok(Line::Header(h)) => Ok(h),
            Ok(_) | Err(_) => Err(not_one()),
        }
    }
}

/// An archive error at `line` for anything a line's write refuses.
fn at(line: u64) -> impl Fn(Error) -> Error {
    move |e| match e {
        Error::Archive { .. } => e,
        other => Error::Archive { line, reason: other.chain() },
    }
}

/// The entity rows the leaves name, as mentions.
#[derive(Default)]
struct Entities(HashMap<String, (EntityKind, String)>);

impl Entities {
    fn add(&mut self, e: &EntityLine, line: u64) -> Result<()> {
        let kind = EntityKind::parse(&e.kind)
            .ok_or_else(|| Error::Archive { line, reason: format!("unknown entity kind `{}`", e.kind) })?;
        self.0.insert(e.id.clone(), (kind, e.surface.clone()));
        Ok(())
    }

    fn mentions(&self, ids: &[String], line: u64) -> Result<Vec<Mention>> {
        ids.iter()
            .map(|id| {
                let (kind, surface) = self.0.get(id).ok_or_else(|| Error::Archive {
                    line,
                    reason: format!("entity `{id}` has no entity line before it"),
                })?;
                Ok(Mention { id: EntityId(id.clone()), kind: *kind, surface: surface.clone() })
            })
            .collect()
    }
}

/// Write the archive's rows into a new store at `tmp`, in one transaction; the counts.
fn build<R: BufRead>(tmp: &Path, lines: &mut Lines<R>) -> Result<Counts> {
    let mut store = Store::open(tmp)?;
    let tx = store.begin()?;
    let mut entities = Entities::default();
    while let Some(line) = lines.next()? {
        let n = lines.n;
        match line {
            // `Lines` checked the header, the counts and the end.
            Line::Header(_) | Line::End(_) => {}
            Line::Source(s) => {
                tx.restore_source(&s).map_err(at(n))?;
            }
            Line::Entity(e) => {
                entities.add(&e, n)?;
                tx.restore_entity(&e.id, &e.kind, &e.surface).map_err(at(n))?;
            }
            Line::Leaf(l) => {
                let row = l.to_row();
                let key = tx.insert_node(&row).map_err(at(n))?;
                tx.attach_entities(key, row.time_end_ms, &entities.mentions(&l.entities, n)?).map_err(at(n))?;
            }
            Line::Summary(s) => {
                let row = s.to_row();
                let key = tx.insert_node(&row).map_err(at(n))?;
                let children = tx.nodes_keyed(&row.child_ids).map_err(at(n))?;
                if children.len() != row.child_ids.len() {
                    return Err(Error::Archive {
                        line: n,
                        reason: format!("summary {} names a child the archive does not hold", s.id),
                    });
                }
                let keys: Vec<_> = children.into_iter().map(|(k, _)| k).collect();
                tx.attach_union(key, &keys).map_err(at(n))?;
                tx.insert_topics(&row.node_id, &s.topics).map_err(at(n))?;
            }
            Line::Registry(r) => {
                let path = registry_path(tmp, &r.path, n)?;
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p).map_err(|e| Error::io(p, e))?;
                }
                std::fs::write(&path, r.text.as_bytes()).map_err(|e| Error::io(&path, e))?;
            }
            Line::Recall(r) => {
                tx.restore_recall(&r, false).map_err(at(n))?;
            }
            Line::NoteRoot { root } => {
                tx.remember_note_root(&root).map_err(at(n))?;
            }
            Line::Forgotten(f) => {
                tx.insert_forgotten(&f).map_err(at(n))?;
            }
        }
    }
    tx.orphans_to_buffers()?;
    tx.commit()?;
    Ok(lines.counts.clone())
}

/// Where a registry file of the archive goes: under `content/entities/`, never outside it.
fn registry_path(root: &Path, rel: &str, line: u64) -> Result<PathBuf> {
    let p = Path::new(rel);
    let inside = p.components().all(|c| matches!(c, Component::Normal(_)))
        && p.components().next().is_some_and(|c| c.as_os_str() == "entities");
    if !inside {
        return Err(Error::Archive { line, reason: format!("registry path `{rel}` is not under entities/") });
    }
    Ok(root.join(CONTENT_DIR).join(p))
}

/// Merge the archive into the store at `dir` that holds something: read it whole first (a
/// bad archive writes nothing), then write its leaves as an import's, its recall facts and
/// registry files where the store has none under the key or path, its forget records, and
/// seal.
fn merge<R: BufRead>(
    dir: &Path,
    mut lines: Lines<R>,
    header: Header,
    opts: OpenOptions,
    progress: impl FnMut(Progress),
) -> Result<RestoreReport> {
    let mut all = Vec::new();
    while let Some(line) = lines.next()? {
        // A registry path that would leave the vault refuses the archive before anything is
        // written, as the stream's own faults do (`Lines`).
        if let Line::Registry(r) = &line {
            registry_path(dir, &r.path, lines.n)?;
        }
        all.push((lines.n, line));
    }
    let c = lines.counts.clone();
    let mut mem = Memory::open_with(dir, opts)?;
    let mut sources: HashMap<String, SourceRecord> = HashMap::new();
    let mut entities = Entities::default();
    let mut report = IngestReport::default();
    let mut drafts: Vec<LeafDraft> = Vec::new();
    for (n, line) in &all {
        match line {
            Line::Source(s) => {
                sources.insert(s.source_id.clone(), s.clone());
            }
            Line::Entity(e) => entities.add(e, *n)?,
            Line::Leaf(l) => {
                drafts.push(draft(l, &sources, &entities, *n)?);
                if drafts.len() >= ITEM_BATCH {
                    report.absorb(&write_drafts(&mut mem, std::mem::take(&mut drafts), &sources)?);
                }
            }
            _ => {}
        }
    }
    report.absorb(&write_drafts(&mut mem, drafts, &sources)?);
    report.absorb(&mem.flush()?);
    {
        let _guard = mem.lock()?;
        let known = mem.store.forgotten_all()?;
        let tx = mem.store.begin()?;
        for (_, line) in &all {
            match line {
                Line::Recall(r) => {
                    tx.restore_recall(r, true)?;
                }
                Line::NoteRoot { root } => tx.remember_note_root(root)?,
                Line::Forgotten(f) => {
                    let same = |k: &crate::store::ForgetRecord| {
                        (&k.grain, &k.source_id, &k.node_id, &k.content_hash, k.since_ms, k.until_ms)
                            == (&f.grain, &f.source_id, &f.node_id, &f.content_hash, f.since_ms, f.until_ms)
                    };
                    if !known.iter().any(same) {
                        tx.insert_forgotten(&crate::store::ForgetRecord { id: 0, ..f.clone() })?;
                    }
                }
                _ => {}
            }
        }
        tx.commit_record_only()?;
    }
    for (n, line) in &all {
        if let Line::Registry(r) = line {
            let path = registry_path(dir, &r.path, *n)?;
            if !path.exists() {
                if let Some(p) = path.parent() {
                    std::fs::create_dir_all(p).map_err(|e| Error::io(p, e))?;
                }
                std::fs::write(&path, r.text.as_bytes()).map_err(|e| Error::io(&path, e))?;
            }
        }
    }
    let vectors = mem.embed_pending(progress)?;
    Ok(RestoreReport { archive: c, model: header.model, merged: Some(report), vectors })
}

/// A leaf of the archive as a draft for the write path: its id, text and fields as stored,
/// the entities it named as structured mentions.
fn draft(l: &LeafLine, sources: &HashMap<String, SourceRecord>, entities: &Entities, n: u64) -> Result<LeafDraft> {
    let src = sources.get(&l.source).ok_or_else(|| Error::Archive {
        line: n,
        reason: format!("leaf {} of source `{}` with no source line", l.id, l.source),
    })?;
    let kind = SourceKind::parse(&src.kind)
        .ok_or_else(|| Error::Archive { line: n, reason: format!("unknown source kind `{}`", src.kind) })?;
    Ok(LeafDraft {
        source_id: SourceId(l.source.clone()),
        source_kind: kind,
        node_id: NodeId(l.id.clone()),
        content: l.text.clone(),
        author: l.author.clone(),
        participants: l.participants.clone(),
        tags: l.tags.clone(),
        source_ref: l.source_ref.clone(),
        ts_ms: l.time_ms,
        split: l.flags & crate::store::NodeRow::FLAG_SPLIT != 0,
        role: if l.role == Role::Assistant { Role::Assistant } else { Role::Person },
        structured: entities.mentions(&l.entities, n)?.into_iter().map(|m| (m.kind, m.surface)).collect(),
        title: src.title.clone(),
    })
}

/// One write of merged drafts, each source's row (provider, title) kept as the archive has it.
fn write_drafts(
    mem: &mut Memory,
    drafts: Vec<LeafDraft>,
    sources: &HashMap<String, SourceRecord>,
) -> Result<IngestReport> {
    if drafts.is_empty() {
        return Ok(IngestReport::default());
    }
    let touched: std::collections::BTreeSet<String> = drafts.iter().map(|d| d.source_id.0.clone()).collect();
    mem.write(|b| {
        for d in drafts {
            b.append_leaf(d)?;
        }
        for id in &touched {
            let s = &sources[id];
            let source = SourceId(id.clone());
            if b.tree_leaves(&crate::types::TreeId::for_source(&source))?.is_empty() {
                continue;
            }
            b.upsert_source(&crate::store::SourceRow {
                source_id: source.clone(),
                source_kind: SourceKind::parse(&s.kind).unwrap_or(SourceKind::Document),
                provider: s.provider.clone(),
                title: s.title.clone(),
            })?;
            if let Some(h) = &s.content_hash {
                b.set_source_hash(&source, h)?;
            }
        }
        Ok(())
    })
}
