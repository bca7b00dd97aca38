//! Rows of what the user forgot (`forgotten`, migration 0012): ids and content hashes, never
//! text, so that later writes leave the forgotten content out.

use super::{Reader, Tx};
use crate::error::Result;
use crate::types::ForgetGrain;
use rusqlite::{OptionalExtension, Row, params};

/// One forget record.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ForgetRecord {
    /// Its id: what `memtree forget --undo` takes.
    pub id: i64,
    /// What it holds back: a leaf, a source or a range.
    pub grain: ForgetGrain,
    /// The source forgotten, or the forgotten leaf's source.
    pub source_id: String,
    /// The forgotten leaf's id (grain `leaf`).
    pub node_id: Option<String>,
    /// BLAKE3 of the forgotten leaf's text, hex (grain `leaf`).
    pub content_hash: Option<String>,
    /// The range's start, epoch ms, inclusive (grain `range`).
    pub since_ms: Option<i64>,
    /// The range's end, epoch ms, inclusive (grain `range`).
    pub until_ms: Option<i64>,
    /// When the forget was written (the engine's clock), epoch ms.
    pub forgotten_ms: i64,
}

const COLS: &str = "record_id, grain, source_id, node_id, content_hash, since_ms, until_ms, forgotten_ms";

fn record_from_row(r: &Row<'_>) -> rusqlite::Result<ForgetRecord> {
    // The column's CHECK admits only the three names; another would be a corrupt row.
    let grain: String = r.get(1)?;
    let grain = ForgetGrain::parse(&grain).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            1,
            rusqlite::types::Type::Text,
            format!("forget grain `{grain}`").into(),
        )
    })?;
    Ok(ForgetRecord {
        id: r.get(0)?,
        grain,
        source_id: r.get(2)?,
        node_id: r.get(3)?,
        content_hash: r.get(4)?,
        since_ms: r.get(5)?,
        until_ms: r.get(6)?,
        forgotten_ms: r.get(7)?,
    })
}

impl Tx<'_> {
    /// Store a record; `id` 0 takes the next free id (a restore passes the archive's). Returns
    /// the id it was stored under.
    pub fn insert_forgotten(&self, r: &ForgetRecord) -> Result<i64> {
        let id = (r.id > 0).then_some(r.id);
        self.tx
            .prepare_cached(&format!(
                "INSERT OR REPLACE INTO forgotten ({COLS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
            ))?
            .execute(params![
                id,
                r.grain.as_str(),
                r.source_id,
                r.node_id,
                r.content_hash,
                r.since_ms,
                r.until_ms,
                r.forgotten_ms
            ])?;
        Ok(self.tx.last_insert_rowid())
    }

    /// Delete a record; returns it when it existed.
    pub fn remove_forgotten(&self, id: i64) -> Result<Option<ForgetRecord>> {
        let old = self.forget_record(id)?;
        self.tx.execute("DELETE FROM forgotten WHERE record_id = ?1", [id])?;
        Ok(old)
    }
}

/// Forget-record reads.
pub trait ForgottenReads: Reader {
    /// One record by id.
    fn forget_record(&self, id: i64) -> Result<Option<ForgetRecord>> {
        let sql = format!("SELECT {COLS} FROM forgotten WHERE record_id = ?1");
        Ok(self.conn().prepare_cached(&sql)?.query_row([id], record_from_row).optional()?)
    }

    /// Every record, by id (oldest first).
    fn forgotten_all(&self) -> Result<Vec<ForgetRecord>> {
        let sql = format!("SELECT {COLS} FROM forgotten ORDER BY record_id");
        let mut stmt = self.conn().prepare_cached(&sql)?;
        let rows = stmt.query_map([], record_from_row)?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// How many records there are (0: a write need not look further).
    fn forgotten_count(&self) -> Result<u64> {
        Ok(self.conn().query_row("SELECT COUNT(*) FROM forgotten", [], |r| r.get::<_, i64>(0))? as u64)
    }
}

impl<R: Reader> ForgottenReads for R {}
