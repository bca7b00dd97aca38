//! Schema migrations: the SQL files under `index_schema/sql/`, applied in order and tracked
//! in `PRAGMA user_version`.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// The migrations, oldest first. Version N of the schema = the first N files applied.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init.sql", include_str!("../../index_schema/sql/0001_init.sql")),
    ("0002_source_hash.sql", include_str!("../../index_schema/sql/0002_source_hash.sql")),
    ("0005_summary_ends.sql", include_str!("../../index_schema/sql/0005_summary_ends.sql")),
];

/// The schema version this build writes.
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// Check that a store opened read-only has exactly this build's schema (a reader cannot
/// migrate it).
pub fn check_current(conn: &Connection) -> Result<()> {
    let current: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current != SCHEMA_VERSION {
        return Err(Error::Schema {
            reason: format!(
                "the store has schema version {current}, this build reads version {SCHEMA_VERSION}: \
                 open it with a writer of this version first"
            ),
        });
    }
    Ok(())
}

/// Bring `conn` up to [`SCHEMA_VERSION`], or say why it cannot be opened.
pub fn migrate(conn: &mut Connection) -> Result<()> {
    let current: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if current > SCHEMA_VERSION {
        return Err(Error::Schema {
            reason: format!(
                "the store has schema version {current}, this build knows up to {SCHEMA_VERSION}: \
                 open it with a newer memtree"
            ),
        });
    }
    for (i, (name, sql)) in MIGRATIONS.iter().enumerate().skip(current as usize) {
        let tx = conn.transaction()?;
        tx.execute_batch(sql).map_err(|e| Error::Schema { reason: format!("migration {name} failed: {e}") })?;
        tx.pragma_update(None, "user_version", (i + 1) as u32)?;
        tx.commit()?;
    }
    Ok(())
}
