//! The system of record: the only module that speaks SQL. Rows in, rows out, bound
//! parameters only; the schema and migrations are the data files under `index_schema/sql/`.

mod batch;
mod entities;
mod fts5;
mod migrate;
mod nodes;
mod recall;
mod stats;
mod vectors;

pub use batch::{BatchReads, NodeBrief};
pub use entities::{EdgeRow, EntityReads, EntityRow};
pub use fts5::Fts5Baseline;
pub use nodes::{BufferStats, NodeKey, NodeReads, NodeRow, SourceRow, TopicReads, TreeRow};
pub use recall::RecallReads;
pub use stats::{SourceSummary, StatsReads, StoreCounts};
pub use vectors::{NewVector, VectorMark, VectorReads};

use crate::error::{Error, Result};
use rusqlite::{Connection, OpenFlags, Transaction};
use std::path::{Path, PathBuf};

/// File name of the SQLite database inside a store directory.
pub const DB_FILE: &str = "memtree.db";

/// The SQLite store: one connection, used by the single writer and by its reads.
pub struct Store {
    conn: Connection,
    path: PathBuf,
}

/// Read access shared by [`Store`] and an open [`Tx`], so a write can read its own rows.
pub trait Reader {
    /// The connection (or transaction) to read through.
    fn conn(&self) -> &Connection;
}

impl Reader for Store {
    fn conn(&self) -> &Connection {
        &self.conn
    }
}

/// An open write transaction. Dropping it without [`Tx::commit`] rolls everything back.
pub struct Tx<'a> {
    tx: Transaction<'a>,
    /// Entity counts and edge weights added and not yet written (see `entities`).
    pending: std::cell::RefCell<entities::PendingCounts>,
}

impl Reader for Tx<'_> {
    fn conn(&self) -> &Connection {
        &self.tx
    }
}

impl Store {
    /// Open (creating if needed) the database in `dir`, migrating an older schema.
    pub fn open(dir: &Path) -> Result<Store> {
        let path = dir.join(DB_FILE);
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        // WAL: readers never block the writer. synchronous=FULL: a returned write survives a
        // power cut, which is the promise SPEC §2 makes.
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.pragma_update(None, "foreign_keys", "ON")?;
        // A 64 MiB page cache keeps the hot indexes in memory during large imports; the WAL
        // is truncated back to 64 MiB after checkpoints so it does not stay at its peak.
        conn.pragma_update(None, "cache_size", -65_536)?;
        conn.pragma_update(None, "journal_size_limit", 67_108_864)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let mut store = Store { conn, path };
        migrate::migrate(&mut store.conn)?;
        Ok(store)
    }

    /// Open the database in `dir` for reading only (a reader thread, or a process reading
    /// a store another process writes). Never creates or migrates: a missing store or one
    /// of another schema version is an error.
    pub fn open_read_only(dir: &Path) -> Result<Store> {
        let path = dir.join(DB_FILE);
        let conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.pragma_update(None, "cache_size", -65_536)?;
        // A writer's checkpoint can hold the WAL index briefly; wait instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate::check_current(&conn)?;
        Ok(Store { conn, path })
    }

    /// Path of the database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Begin a write transaction (IMMEDIATE: it takes the write lock at once, so a second
    /// writer process fails fast instead of half-way).
    pub fn begin(&mut self) -> Result<Tx<'_>> {
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        Ok(Tx { tx, pending: Default::default() })
    }

    /// Run `f` inside one read transaction: every statement in it sees the same snapshot
    /// (a concurrent writer's commit is either wholly visible or not at all), and SQLite
    /// takes its shared lock once instead of once per statement. Nested calls run inline.
    pub fn read_snapshot<T>(&self, f: impl FnOnce() -> Result<T>) -> Result<T> {
        if !self.conn.is_autocommit() {
            return f();
        }
        self.conn.execute_batch("BEGIN DEFERRED")?;
        let out = f();
        // A read transaction has nothing to keep: end it whether `f` failed or not.
        let end = self.conn.execute_batch("COMMIT");
        let out = out?;
        end?;
        Ok(out)
    }

    /// The store's write generation: bumped by every committed write, recorded in the
    /// full-text index's commit so a lagging index is detected on open.
    pub fn generation(&self) -> Result<u64> {
        read_generation(&self.conn)
    }
}

impl Tx<'_> {
    /// Bump the generation and commit; returns the new generation.
    pub fn commit(self) -> Result<u64> {
        self.flush_counts()?;
        let g = read_generation(&self.tx)? + 1;
        self.tx.execute("UPDATE meta SET value = ?1 WHERE key = 'generation'", [g.to_string()])?;
        self.tx.commit()?;
        Ok(g)
    }
}

impl Tx<'_> {
    /// Commit without bumping the generation: for writes the full-text index does not
    /// reflect (the `memory_recall` facts), so the index stays in step.
    pub fn commit_record_only(self) -> Result<()> {
        self.flush_counts()?;
        self.tx.commit()?;
        Ok(())
    }
}

fn read_generation(conn: &Connection) -> Result<u64> {
    let v: String = conn.query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| r.get(0))?;
    v.parse().map_err(|_| Error::Corrupt { what: "meta.generation".into(), reason: format!("not a number: {v:?}") })
}

/// Decode a JSON array column, naming the row on failure.
fn json_list(what: &str, s: &str) -> rusqlite::Result<Vec<String>> {
    serde_json::from_str(s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::new(CorruptColumn(format!("{what}: {e}"))),
        )
    })
}

#[derive(Debug)]
struct CorruptColumn(String);

impl std::fmt::Display for CorruptColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CorruptColumn {}
