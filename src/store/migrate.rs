//! Schema migrations: the SQL files under `index_schema/sql/`, applied in order and tracked
//! in `PRAGMA user_version`.

use crate::error::{Error, Result};
use rusqlite::Connection;

/// What a migration runs after its SQL, in the same transaction: data changes SQL cannot
/// express.
type AfterSql = fn(&rusqlite::Transaction<'_>) -> Result<()>;

/// The migrations, oldest first. Version N of the schema = the first N files applied.
const MIGRATIONS: &[(&str, &str)] = &[
    ("0001_init.sql", include_str!("../../index_schema/sql/0001_init.sql")),
    ("0002_source_hash.sql", include_str!("../../index_schema/sql/0002_source_hash.sql")),
    ("0003_vector_codes.sql", include_str!("../../index_schema/sql/0003_vector_codes.sql")),
    ("0004_drop_nodes_parent.sql", include_str!("../../index_schema/sql/0004_drop_nodes_parent.sql")),
    ("0005_entity_keys.sql", include_str!("../../index_schema/sql/0005_entity_keys.sql")),
    ("0006_summary_ends.sql", include_str!("../../index_schema/sql/0006_summary_ends.sql")),
    ("0007_sessions_sealed.sql", include_str!("../../index_schema/sql/0007_sessions_sealed.sql")),
    ("0008_instruction_flags.sql", include_str!("../../index_schema/sql/0008_instruction_flags.sql")),
];

/// The code step of a migration, by file name.
fn after_sql(name: &str) -> Option<AfterSql> {
    match name {
        "0003_vector_codes.sql" => Some(super::vectors::convert_f32_vectors),
        "0008_instruction_flags.sql" => Some(super::nodes::flag_standing_instructions),
        _ => None,
    }
}

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
        if let Some(step) = after_sql(name) {
            step(&tx).map_err(|e| Error::Schema { reason: format!("migration {name} failed: {e}") })?;
        }
        tx.pragma_update(None, "user_version", (i + 1) as u32)?;
        tx.commit()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::NodeRow;

    /// An in-memory store at schema `version` (the first `version` migrations applied).
    fn store_at(version: u32) -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        for (_, sql) in &MIGRATIONS[..version as usize] {
            conn.execute_batch(sql).unwrap();
        }
        conn.pragma_update(None, "user_version", version).unwrap();
        conn
    }

    /// A store of schema 2 (f32 vector blobs) opens with its vectors quantised, not dropped:
    /// a user's store must not need re-embedding.
    #[test]
    fn migration_3_quantises_the_f32_vectors() {
        let mut conn = store_at(2);
        let v: Vec<f32> = (0..4).map(|i| [0.5f32, -0.5, 0.5, 0.5][i]).collect();
        let blob: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let id = format!("L{:032x}", 1);
        conn.execute(
            "INSERT INTO vectors (node_id, model, dim, data) VALUES (?1, 'm', 4, ?2)",
            rusqlite::params![id, blob],
        )
        .unwrap();
        // A damaged row (blob length ≠ 4 × dim) is dropped, to be re-embedded.
        conn.execute("INSERT INTO vectors (node_id, model, dim, data) VALUES ('Lbad', 'm', 4, x'00')", []).unwrap();
        migrate(&mut conn).unwrap();
        let (scale, codes): (f64, Vec<u8>) = conn
            .query_row("SELECT scale, codes FROM vectors WHERE node_id = ?1 AND slot = 0", [&id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let back: Vec<f32> = codes.iter().map(|&c| f32::from(c as i8) * scale as f32).collect();
        assert!(back.iter().zip(&v).all(|(a, b)| (a - b).abs() < 1e-2), "{back:?}");
        let rows: i64 = conn.query_row("SELECT COUNT(*) FROM vectors", [], |r| r.get(0)).unwrap();
        assert_eq!(rows, 1);
        let old: i64 =
            conn.query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'vectors_f32'", [], |r| r.get(0)).unwrap();
        assert_eq!(old, 0, "the f32 table is gone");
    }

    /// Migration 8 flags the standing instructions among leaves written before the flag: a
    /// person's, never the assistant's, and only leaves.
    #[test]
    fn migration_8_flags_standing_instructions() {
        let mut conn = store_at(7);
        conn.execute("INSERT INTO trees VALUES ('T', 'source', 'chat:x', 'chat')", []).unwrap();
        let rule = "Always answer in French when I ask about recipes.";
        let rows = [
            (1, 0, "Ana", format!("Ana: {rule}"), 0u32),
            (2, 0, "Assistant", format!("Assistant: {rule}"), NodeRow::FLAG_ASSISTANT),
            (3, 0, "Ana", "Ana: Always good to hear!".to_string(), 0),
            (4, 1, "", rule.to_string(), 0),
            (5, 0, "Ana", format!("Ana: {rule}"), NodeRow::FLAG_SPLIT),
        ];
        for (i, level, author, content, flags) in &rows {
            conn.execute(
                "INSERT INTO nodes (node_id, tree_id, level, seq, content, author, time_start_ms, time_end_ms, tokens, flags, appended_ms) \
                 VALUES (?1, 'T', ?2, ?1, ?3, NULLIF(?4, ''), 0, 0, 1, ?5, 0)",
                rusqlite::params![format!("L{i:032x}"), level, content, author, flags],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let flags: Vec<u32> = conn
            .prepare("SELECT flags FROM nodes ORDER BY seq")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|f| f.unwrap())
            .collect();
        let i = NodeRow::FLAG_INSTRUCTION;
        assert_eq!(flags, [i, NodeRow::FLAG_ASSISTANT, 0, 0, NodeRow::FLAG_SPLIT | i]);
    }
}
