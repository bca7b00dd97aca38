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
    ("0009_node_keys.sql", include_str!("../../index_schema/sql/0009_node_keys.sql")),
    ("0010_models.sql", include_str!("../../index_schema/sql/0010_models.sql")),
    ("0011_note_roots.sql", include_str!("../../index_schema/sql/0011_note_roots.sql")),
    ("0012_forgotten.sql", include_str!("../../index_schema/sql/0012_forgotten.sql")),
    ("0013_spoken_times.sql", include_str!("../../index_schema/sql/0013_spoken_times.sql")),
];

/// The code step of a migration, by file name.
fn after_sql(name: &str) -> Option<AfterSql> {
    match name {
        "0003_vector_codes.sql" => Some(super::vectors::convert_f32_vectors),
        "0008_instruction_flags.sql" => Some(super::nodes::flag_standing_instructions),
        "0013_spoken_times.sql" => Some(super::spoken::derive_spoken_times),
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
            step(&tx).map_err(|e| Error::Schema { reason: format!("migration {name} failed: {}", e.chain()) })?;
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

    /// Migration 9 keys the nodes by integer: every node keeps its row (the old rowid is its
    /// key), every mention moves to the node's key, and the indexes and the sealed-sessions
    /// trigger of the old table are there again.
    #[test]
    fn migration_9_keys_nodes_and_keeps_every_mention() {
        let mut conn = store_at(8);
        conn.execute_batch(
            "INSERT INTO trees VALUES ('T', 'source', 'chat:x', 'chat');
             INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, parent_id, appended_ms)
               VALUES ('L02', 'T', 0, 1, 'Zoe met Bob', 5, 5, 3, 'S01', 5),
                      ('L01', 'T', 0, 2, 'Bob and Carol', 6, 6, 3, 'S01', 6),
                      ('S01', 'T', 1, 3, 'Zoe, Bob, Carol', 5, 6, 6, NULL, 7);
             DELETE FROM nodes WHERE node_id = 'L02';
             INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, parent_id, appended_ms)
               VALUES ('L02', 'T', 0, 1, 'Zoe met Bob', 5, 5, 3, 'S01', 5);
             INSERT INTO entities (entity_id, kind, surface, mention_count, last_seen_ms)
               VALUES ('person:bob', 'person', 'Bob', 2, 6), ('person:zoe', 'person', 'Zoe', 1, 5);
             INSERT INTO node_entities VALUES ('L01', 1, 1), ('L02', 1, 1), ('L02', 2, 1), ('S01', 1, 0), ('S01', 2, 0);",
        )
        .unwrap();
        let rowids = |conn: &Connection, col: &str| -> Vec<(String, i64)> {
            let sql = format!("SELECT node_id, {col} FROM nodes ORDER BY node_id");
            conn.prepare(&sql)
                .unwrap()
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
                .unwrap()
                .map(|x| x.unwrap())
                .collect()
        };
        let before = rowids(&conn, "rowid");
        let sealed = |conn: &Connection| -> i64 {
            conn.query_row("SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'sessions_sealed'", [], |r| r.get(0))
                .unwrap()
        };
        let sealed_before = sealed(&conn);
        migrate(&mut conn).unwrap();
        assert_eq!(rowids(&conn, "node_key"), before);
        let mentions: Vec<(String, String, bool)> = conn
            .prepare(
                "SELECT n.node_id, e.entity_id, ne.is_leaf FROM node_entities ne JOIN nodes n ON n.node_key = ne.node_key \
                 JOIN entities e ON e.entity_key = ne.entity_key ORDER BY n.node_id, e.entity_id",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|x| x.unwrap())
            .collect();
        let m = |n: &str, e: &str, leaf| (n.to_string(), e.to_string(), leaf);
        assert_eq!(
            mentions,
            [
                m("L01", "person:bob", true),
                m("L02", "person:bob", true),
                m("L02", "person:zoe", true),
                m("S01", "person:bob", false),
                m("S01", "person:zoe", false)
            ]
        );
        let indexes: Vec<String> = conn
            .prepare(
                "SELECT name FROM sqlite_master WHERE type IN ('index', 'trigger') \
                 AND tbl_name IN ('nodes', 'node_entities') AND sql IS NOT NULL ORDER BY name",
            )
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|x| x.unwrap())
            .collect();
        // 0013's trigger on nodes too, since this migrates to the current version.
        assert_eq!(
            indexes,
            [
                "node_entities_entity",
                "nodes_time",
                "nodes_tree_level",
                "nodes_tree_level_end",
                "sessions_sealed",
                "spoken_times_gone"
            ]
        );
        // The text id is still unique, and a new level-1 node still counts as a sealed session.
        let dup = conn.execute(
            "INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, appended_ms) \
             VALUES ('L01', 'T', 0, 4, 'again', 8, 8, 1, 8)",
            [],
        );
        assert!(dup.is_err());
        conn.execute(
            "INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, appended_ms) \
             VALUES ('S02', 'T', 1, 4, 'more', 8, 8, 1, 8)",
            [],
        )
        .unwrap();
        assert_eq!(sealed(&conn), sealed_before + 1);
    }

    /// Migration 11 remembers the roots of the notes already stored: a note read from an
    /// absolute file that ends with its id names its root; a relative file, a file that does
    /// not end with the id, or another kind of source names none.
    #[test]
    fn migration_11_remembers_the_roots_of_stored_notes() {
        let mut conn = store_at(10);
        let notes = [
            ("doc:projects/a.md", "markdown", "/home/u/vault/projects/a.md"),
            ("doc:b.md", "markdown", "/home/u/vault/b.md"),
            ("doc:c.md", "markdown", "/home/u/other/c.md"),
            ("doc:d.md", "markdown", "notes/d.md"),
            ("doc:e.md", "markdown", "/home/u/vault/renamed.md"),
            ("doc:f.md", "api", "/home/u/api/f.md"),
        ];
        for (i, (id, provider, file)) in notes.iter().enumerate() {
            conn.execute(
                "INSERT INTO sources (source_id, source_kind, provider, created_ms, updated_ms) VALUES (?1, 'document', ?2, 0, 0)",
                rusqlite::params![id, provider],
            )
            .unwrap();
            conn.execute("INSERT INTO trees VALUES ('source:' || ?1, 'source', ?1, 'document')", [id]).unwrap();
            conn.execute(
                "INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, appended_ms, source_ref) \
                 VALUES (?1, 'source:' || ?2, 0, ?3, 'x', 0, 0, 1, 0, ?4)",
                rusqlite::params![format!("L{i:032x}"), id, i as i64, file],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let roots: Vec<String> = conn
            .prepare("SELECT root FROM note_roots ORDER BY root")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .map(|x| x.unwrap())
            .collect();
        assert_eq!(roots, ["/home/u/other", "/home/u/vault"]);
    }

    /// Migration 13 derives the spoken times of the leaves already stored (not of summaries),
    /// each from its own date; a deleted leaf's rows go with it.
    #[test]
    fn migration_13_resolves_what_stored_leaves_speak_of() {
        let mut conn = store_at(12);
        conn.execute(
            "INSERT INTO sources (source_id, source_kind, created_ms, updated_ms) VALUES ('chat:a', 'chat', 0, 0)",
            [],
        )
        .unwrap();
        conn.execute("INSERT INTO trees VALUES ('source:chat:a', 'source', 'chat:a', 'chat')", []).unwrap();
        // Thursday 4 May 2023, 12:00 UTC.
        let may4 = 1_683_201_600_000_i64;
        let nodes = [
            ("L1", 0, "Yesterday's dinner was wonderful"),
            ("L2", 0, "Do not forget your passport"),
            ("S1", 1, "Yesterday's dinner was wonderful"),
        ];
        for (i, (id, level, text)) in nodes.iter().enumerate() {
            conn.execute(
                "INSERT INTO nodes (node_id, tree_id, level, seq, content, time_start_ms, time_end_ms, tokens, appended_ms) \
                 VALUES (?1, 'source:chat:a', ?2, ?3, ?4, ?5, ?5, 1, 0)",
                rusqlite::params![id, level, i as i64, text, may4],
            )
            .unwrap();
        }
        migrate(&mut conn).unwrap();
        let rows = |conn: &Connection| -> Vec<(String, i64, i64)> {
            conn.prepare(
                "SELECT n.node_id, s.since_ms, s.until_ms FROM spoken_times s JOIN nodes n ON n.node_key = s.node_key",
            )
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(|x| x.unwrap())
            .collect()
        };
        // 3 May 2023, the whole UTC day.
        let may3 = 1_683_072_000_000_i64;
        assert_eq!(rows(&conn), [("L1".to_string(), may3, may3 + 86_400_000 - 1)]);
        conn.execute("DELETE FROM nodes WHERE node_id = 'L1'", []).unwrap();
        let left: i64 = conn.query_row("SELECT count(*) FROM spoken_times", [], |r| r.get(0)).unwrap();
        assert_eq!(left, 0);
    }
}
