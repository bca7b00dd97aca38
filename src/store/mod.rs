//! The system of record: the only module that speaks SQL. Rows in, rows out, bound
//! parameters only; the schema and migrations are the data files under `index_schema/sql/`.

mod archive;
mod batch;
mod entities;
mod forgotten;
mod migrate;
mod models;
mod nodes;
mod note_roots;
mod recall;
mod spoken;
mod stats;
mod vectors;

pub use archive::{ArchiveReads, NodeFilter, RecallRecord, SourceRecord};
pub use batch::{BatchReads, NodeBrief, WindowNode};
pub use entities::{EdgeRow, EntityReads, EntityRow};
pub use forgotten::{ForgetRecord, ForgottenReads};
pub use models::{Adopted, ModelReads};
pub use nodes::{BufferStats, NodeKey, NodeReads, NodeRow, SourceRow, TopicReads, TreeRow};
pub use note_roots::NoteRootReads;
pub use recall::RecallReads;
pub use spoken::SpokenReads;
pub use stats::{SourceSummary, StatsReads, StoreCounts, StoredNote};
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

/// SQLite page cache of a connection while it writes, KiB: large imports keep the hot
/// indexes in memory.
const WRITE_CACHE_KIB: i64 = 65_536;

/// SQLite page cache of a connection while it only reads, KiB. At a million leaves a 16 MiB
/// cache held walk and query_source at the latency of 64 MiB (the OS page cache serves the
/// rest) and the process 51 MB smaller (BENCHMARKS.md, "Scale, session 7"); a store's open
/// scans every vector row, which would otherwise fill the cache with pages no read wants.
const READ_CACHE_KIB: i64 = 16_384;

/// An open write transaction. Dropping it without [`Tx::commit`] rolls everything back.
pub struct Tx<'a> {
    tx: Transaction<'a>,
    /// Entity counts and edge weights added and not yet written (see `entities`).
    pending: std::cell::RefCell<entities::PendingCounts>,
    /// Declared after `tx`, so it drops after the transaction has ended.
    _cache: WriteCache<'a>,
}

/// The write-sized page cache for the life of a transaction: set when it begins, back to the
/// read size (which frees the pages beyond it) once the transaction has committed or rolled
/// back.
struct WriteCache<'a>(&'a Connection);

impl<'a> WriteCache<'a> {
    fn raise(conn: &'a Connection) -> Result<WriteCache<'a>> {
        conn.pragma_update(None, "cache_size", -WRITE_CACHE_KIB)?;
        Ok(WriteCache(conn))
    }
}

impl Drop for WriteCache<'_> {
    fn drop(&mut self) {
        // Only a memory bound: a failure leaves the larger cache, which is still correct.
        let _ = self.0.pragma_update(None, "cache_size", -READ_CACHE_KIB);
    }
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
        // The WAL is truncated back to 64 MiB after checkpoints so it does not stay at its peak.
        conn.pragma_update(None, "journal_size_limit", 67_108_864)?;
        conn.pragma_update(None, "temp_store", "MEMORY")?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        let mut store = Store { conn, path };
        // The page cache is write-sized only while writing: a migration (it rewrites tables)
        // and each `Tx`. Between writes the connection reads with the read size.
        store.conn.pragma_update(None, "cache_size", -WRITE_CACHE_KIB)?;
        migrate::migrate(&mut store.conn)?;
        spoken::rederive_if_stale(&mut store.conn)?;
        store.conn.pragma_update(None, "cache_size", -READ_CACHE_KIB)?;
        Ok(store)
    }

    /// Open the database in `dir` for reading only (a reader thread, or a process reading
    /// a store another process writes). Never creates or migrates: a missing store or one
    /// of another schema version is an error.
    pub fn open_read_only(dir: &Path) -> Result<Store> {
        let path = dir.join(DB_FILE);
        let conn =
            Connection::open_with_flags(&path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
        conn.pragma_update(None, "cache_size", -READ_CACHE_KIB)?;
        // Sorts and temporary b-trees in memory, as on the writer's connection (a `Memory`
        // reads through one of these too).
        conn.pragma_update(None, "temp_store", "MEMORY")?;
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
        let cache = WriteCache::raise(&self.conn)?;
        let tx = Transaction::new_unchecked(&self.conn, rusqlite::TransactionBehavior::Immediate)?;
        Ok(Tx { tx, pending: Default::default(), _cache: cache })
    }

    /// Free this connection's page cache (its unmodified pages). The read-sized cache of a
    /// connection is not a bound on its own: SQLite's caches share one budget, the sum of
    /// every open connection's size, so after a large write the writer kept up to 33 MB of
    /// pages read once (the text of a 50 MB message, read back for the index; issue 28).
    pub fn release_cache(&self) -> Result<()> {
        self.conn.execute_batch("PRAGMA shrink_memory")?;
        Ok(())
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

    /// Have SQLite overwrite deleted content with zeros (`PRAGMA secure_delete`) on this
    /// connection: on while a forget writes, so the forgotten text does not live on in the
    /// database file's free pages; off otherwise (a replace need not pay for it).
    pub fn set_secure_delete(&self, on: bool) -> Result<()> {
        self.conn.pragma_update(None, "secure_delete", on)?;
        Ok(())
    }

    /// Checkpoint the write-ahead log into the database and truncate it: the log keeps the
    /// pages a write replaced until then. Best effort while another connection reads (its
    /// snapshot keeps the log), which the next checkpoint finishes.
    pub fn checkpoint_truncate(&self) -> Result<()> {
        self.conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    fn cache_kib(store: &Store) -> i64 {
        store.conn.query_row("PRAGMA cache_size", [], |r| r.get(0)).expect("cache_size")
    }

    #[test]
    fn the_page_cache_is_write_sized_only_inside_a_write() {
        let dir = tempfile::tempdir().expect("tmp");
        let mut store = Store::open(dir.path()).expect("open");
        assert_eq!(cache_kib(&store), -READ_CACHE_KIB, "after open (and its migration)");
        let tx = store.begin().expect("begin");
        assert_eq!(tx.conn().query_row("PRAGMA cache_size", [], |r| r.get::<_, i64>(0)).unwrap(), -WRITE_CACHE_KIB);
        tx.commit().expect("commit");
        assert_eq!(cache_kib(&store), -READ_CACHE_KIB, "after a commit");
        drop(store.begin().expect("begin"));
        assert_eq!(cache_kib(&store), -READ_CACHE_KIB, "after a rollback");
        let ro = Store::open_read_only(dir.path()).expect("read-only");
        assert_eq!(cache_kib(&ro), -READ_CACHE_KIB);
    }
}
