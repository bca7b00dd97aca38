//! `Memory::export`: the store (or some sources of it, or a window of time) as an archive,
//! streamed: one SQLite statement per kind of row, each row written as it is read, so memory
//! stays flat in the store's size.

use super::{ARCHIVE_FORMAT, ARCHIVE_VERSION, Counts, EntityLine, Header, LeafLine, Line, RegistryLine, SummaryLine};
use crate::error::{Error, Result};
use crate::ingest::import::Progress;
use crate::memory::Memory;
use crate::options::CONTENT_DIR;
use crate::reader::MemoryReader;
use crate::store::{ArchiveReads, ForgottenReads, NodeFilter, NoteRootReads};
use std::io::Write;
use std::path::{Path, PathBuf};

/// What to export: every source (empty `sources`), or these; every time, or a window.
#[derive(Debug, Clone, Default)]
pub struct ExportFilter {
    /// Only these sources (empty: all).
    pub sources: Vec<String>,
    /// Only leaves from this time on (epoch ms, inclusive), and summaries wholly inside.
    pub since_ms: Option<i64>,
    /// Only leaves up to this time (epoch ms, inclusive), and summaries wholly inside.
    pub until_ms: Option<i64>,
}

/// What an export wrote.
pub type ExportReport = Counts;

/// Leaves between two progress reports.
const PROGRESS_EVERY: u64 = 2048;

impl Memory {
    /// Write the store as an archive to `out` (see [`crate::memory::archive`]'s format);
    /// `progress` hears of the leaves written.
    ///
    /// # Errors
    /// [`Error::Io`] when `out` fails; the store's.
    pub fn export(
        &self,
        out: impl Write,
        filter: &ExportFilter,
        progress: impl FnMut(Progress),
    ) -> Result<ExportReport> {
        self.as_reader().export(out, filter, progress)
    }
}

impl MemoryReader {
    /// [`Memory::export`], from one read snapshot: a write in another process meanwhile is in
    /// the archive wholly or not at all.
    ///
    /// # Errors
    /// Those of [`Memory::export`].
    pub fn export(
        &self,
        out: impl Write,
        filter: &ExportFilter,
        mut progress: impl FnMut(Progress),
    ) -> Result<ExportReport> {
        let mut w = LineWriter { out: std::io::BufWriter::with_capacity(1 << 16, out) };
        let sources_json = (!filter.sources.is_empty()).then(|| serde_json::to_string(&filter.sources)).transpose()?;
        let nodes = NodeFilter {
            sources_json: sources_json.clone(),
            since_ms: filter.since_ms.unwrap_or(i64::MIN),
            until_ms: filter.until_ms.unwrap_or(i64::MAX),
        };
        let dir = self.dir().to_path_buf();
        let now = self.options().clock.now_ms();
        self.read(|r| {
            let store = r.store();
            let mut c = Counts::default();
            let header = Header {
                format: ARCHIVE_FORMAT.into(),
                version: ARCHIVE_VERSION,
                model: store.model_names()?.into_iter().next(),
                created: chrono::DateTime::from_timestamp_millis(now)
                    .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
                    .unwrap_or_default(),
                created_ms: now,
                sources: (!filter.sources.is_empty()).then(|| filter.sources.clone()),
                since_ms: filter.since_ms,
                until_ms: filter.until_ms,
            };
            w.line(&Line::Header(header))?;
            store.archive_sources(sources_json.as_deref(), |s| {
                c.sources += 1;
                w.line(&Line::Source(s))
            })?;
            store.archive_entities(&nodes, |id, kind, surface| {
                c.entities += 1;
                w.line(&Line::Entity(EntityLine { id, kind, surface }))
            })?;
            let total = store.archive_leaf_count(&nodes)?;
            let mut p = Progress { unit: "leaves", done: 0, total };
            progress(p);
            store.archive_nodes(true, &nodes, |(n, entities, _)| {
                c.leaves += 1;
                if c.leaves % PROGRESS_EVERY == 0 {
                    p.done = c.leaves;
                    progress(p);
                }
                w.line(&Line::Leaf(LeafLine::from_row(n, entities)))
            })?;
            p.done = c.leaves;
            progress(p);
            store.archive_nodes(false, &nodes, |(n, _, topics)| {
                c.summaries += 1;
                w.line(&Line::Summary(SummaryLine::from_row(n, topics)))
            })?;
            for (path, text) in registry_files(&dir.join(CONTENT_DIR))? {
                c.registry += 1;
                w.line(&Line::Registry(RegistryLine { path, text }))?;
            }
            store.archive_recall(|f| {
                c.recall += 1;
                w.line(&Line::Recall(f))
            })?;
            for root in store.note_roots()? {
                c.note_roots += 1;
                w.line(&Line::NoteRoot { root: root.to_string_lossy().into_owned() })?;
            }
            for f in store.forgotten_all()? {
                if filter.sources.is_empty() || filter.sources.contains(&f.source_id) {
                    c.forgotten += 1;
                    w.line(&Line::Forgotten(f))?;
                }
            }
            w.line(&Line::End(c.clone()))?;
            w.out.flush().map_err(|e| Error::io("archive", e))?;
            Ok(c)
        })
    }
}

/// Writes one JSON object a line.
struct LineWriter<W: Write> {
    out: std::io::BufWriter<W>,
}

impl<W: Write> LineWriter<W> {
    fn line(&mut self, l: &Line) -> Result<()> {
        serde_json::to_writer(&mut self.out, l)?;
        self.out.write_all(b"\n").map_err(|e| Error::io("archive", e))
    }
}

/// The registry's files under `content` (relative paths with `/`, sorted) with their text.
pub(super) fn registry_files(content: &Path) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = vec![content.join("entities")];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let e = e.map_err(|x| Error::io(&d, x))?;
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(rel) = p.strip_prefix(content) {
                let text = std::fs::read_to_string(&p).map_err(|x| Error::io(&p, x))?;
                let rel: Vec<String> = rel.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
                out.push((rel.join("/"), text));
            }
        }
    }
    out.sort();
    Ok(out)
}
