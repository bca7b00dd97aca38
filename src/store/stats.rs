//! Counts for `memtree stats`.

use super::Reader;
use crate::error::Result;

/// Row counts of the store.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct StoreCounts {
    /// Sources.
    pub sources: u64,
    /// Trees.
    pub trees: u64,
    /// Leaves (level 0).
    pub leaves: u64,
    /// Summaries per level, index 0 = level 1.
    pub summaries_per_level: Vec<u64>,
    /// Distinct entities.
    pub entities: u64,
    /// Co-occurrence edges.
    pub edges: u64,
    /// Stored node vectors (one a node, by its own text).
    pub vectors: u64,
    /// Stored passage vectors: the passages of long leaves past the model's window
    /// (`embed::passage_slots`).
    pub passage_vectors: u64,
    /// Facts in `memory_recall`.
    pub recall_facts: u64,
}

/// What the store holds of one source (`memtree sources`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct SourceSummary {
    /// The source id.
    pub source_id: String,
    /// `chat`, `email` or `document`.
    pub kind: String,
    /// Leaves stored.
    pub leaves: u64,
    /// Summaries sealed over them (every level).
    pub summaries: u64,
    /// Earliest leaf time, epoch ms (`None` without leaves).
    pub first_ms: Option<i64>,
    /// Latest leaf time, epoch ms.
    pub last_ms: Option<i64>,
    /// Its title, when it has one (a document's, an imported conversation's).
    pub title: Option<String>,
}

/// A Markdown note as the store holds it, for a folder sync.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredNote {
    /// Its source id (`doc:projects/heron.md`).
    pub id: String,
    /// The hash of the bytes it was imported from; `None` before hashes were kept.
    pub hash: Option<String>,
    /// The file it was read from, as recorded (absolute since folder sync).
    pub file: Option<String>,
}

/// Aggregate counts.
pub trait StatsReads: Reader {
    /// True when the store has a source with this id: one primary-key probe.
    fn has_source(&self, source_id: &str) -> Result<bool> {
        let sql = "SELECT EXISTS (SELECT 1 FROM sources WHERE source_id = ?1)";
        Ok(self.conn().query_row(sql, [source_id], |r| r.get::<_, bool>(0))?)
    }

    /// The file (or URL) a source's first leaf points back to (`source_ref`), if any.
    fn source_file(&self, source_id: &str) -> Result<Option<String>> {
        let sql = "SELECT source_ref FROM nodes WHERE tree_id = 'source:' || ?1 AND level = 0 LIMIT 1";
        let mut stmt = self.conn().prepare_cached(sql)?;
        let mut rows = stmt.query([source_id])?;
        Ok(match rows.next()? {
            Some(r) => r.get(0)?,
            None => None,
        })
    }

    /// Every source with its leaf and summary counts and its leaves' time span, by id.
    fn sources(&self) -> Result<Vec<SourceSummary>> {
        let mut stmt = self.conn().prepare(
            "SELECT s.source_id, s.source_kind, \
               COALESCE(SUM(n.level = 0), 0), COALESCE(SUM(n.level > 0), 0), \
               MIN(CASE WHEN n.level = 0 THEN n.time_start_ms END), \
               MAX(CASE WHEN n.level = 0 THEN n.time_end_ms END), s.title \
             FROM sources s \
             LEFT JOIN trees t ON t.tree_kind = 'source' AND t.tree_scope = s.source_id \
             LEFT JOIN nodes n ON n.tree_id = t.tree_id \
             GROUP BY s.source_id ORDER BY s.source_id",
        )?;
        let rows = stmt.query_map([], |r| {
            Ok(SourceSummary {
                source_id: r.get(0)?,
                kind: r.get(1)?,
                leaves: r.get::<_, i64>(2)? as u64,
                summaries: r.get::<_, i64>(3)? as u64,
                first_ms: r.get(4)?,
                last_ms: r.get(5)?,
                title: r.get(6)?,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// The notes stored under a source-id prefix (`doc:projects/`), each with its content
    /// hash (`None` when imported before hashes were kept, or written by the app) and the file
    /// it was read from (its leaves' `source_ref`), by id: the Markdown imports, and the
    /// documents the app wrote (`ingest_document`) without a file or with a file path, which
    /// may be a vault's note too (a URL is not).
    fn note_hashes(&self, prefix: &str) -> Result<Vec<StoredNote>> {
        let mut stmt = self.conn().prepare_cached(
            "SELECT id, hash, file FROM ( \
               SELECT s.source_id AS id, s.content_hash AS hash, s.provider AS provider, \
                 (SELECT n.source_ref FROM nodes n WHERE n.tree_id = 'source:' || s.source_id AND n.level = 0 LIMIT 1) AS file \
               FROM sources s WHERE substr(s.source_id, 1, length(?1)) = ?1) \
             WHERE provider = 'markdown' OR file IS NULL OR substr(file, 1, 1) = '/' ORDER BY id",
        )?;
        let rows = stmt.query_map([prefix], |r| Ok(StoredNote { id: r.get(0)?, hash: r.get(1)?, file: r.get(2)? }))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// True when the store holds no node at all (nothing imported yet): one index probe, not a
    /// count, so a caller may ask before every read.
    fn is_empty(&self) -> Result<bool> {
        Ok(!self.conn().query_row("SELECT EXISTS (SELECT 1 FROM nodes)", [], |r| r.get::<_, bool>(0))?)
    }

    /// Count everything.
    fn counts(&self) -> Result<StoreCounts> {
        let c = self.conn();
        let one = |sql: &str| -> Result<u64> { Ok(c.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64) };
        let mut per_level = Vec::new();
        let mut stmt = c.prepare("SELECT level, COUNT(*) FROM nodes WHERE level >= 1 GROUP BY level ORDER BY level")?;
        for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
            let (level, n) = row?;
            per_level.resize(level as usize, 0);
            per_level[level as usize - 1] = n as u64;
        }
        Ok(StoreCounts {
            sources: one("SELECT COUNT(*) FROM sources")?,
            trees: one("SELECT COUNT(*) FROM trees")?,
            leaves: one("SELECT COUNT(*) FROM nodes WHERE level = 0")?,
            summaries_per_level: per_level,
            entities: one("SELECT COUNT(*) FROM entities")?,
            edges: one("SELECT COUNT(*) FROM edges")?,
            vectors: one("SELECT COUNT(*) FROM vectors WHERE slot = 0")?,
            passage_vectors: one("SELECT COUNT(*) FROM vectors WHERE slot > 0")?,
            recall_facts: one("SELECT COUNT(*) FROM recall")?,
        })
    }
}

impl<R: Reader> StatsReads for R {}
