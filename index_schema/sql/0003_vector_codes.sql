-- Vectors as int8 codes with one scale each (`embed::codes`): 388 bytes instead of 1,536, in
-- a rowid table so a row stays on its page (the old WITHOUT ROWID rows of 1.6 kB spilled into
-- overflow pages: ~4.6 kB on disk per vector).
--
-- `slot` 0 is the node's own text; other slots are reserved for passage vectors of long
-- leaves. `seq` only grows (AUTOINCREMENT: never reused), so a reader can load the rows
-- written since the last it saw.
--
-- The old f32 rows are kept under `vectors_f32` here and converted by the code right after
-- this file runs, in the same transaction (`store::migrate`): SQL cannot quantise.

ALTER TABLE vectors RENAME TO vectors_f32;

CREATE TABLE vectors (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    node_id TEXT NOT NULL,
    slot    INTEGER NOT NULL DEFAULT 0,
    model   TEXT NOT NULL,
    scale   REAL NOT NULL,
    codes   BLOB NOT NULL,
    UNIQUE (node_id, slot)
);

-- Every vector row deleted (a replaced or forgotten source, a re-embedding) counts here, so
-- that a reader in another process can tell "rows were only added since I looked" (load the
-- rows after its last `seq`) from "rows went away" (reload them all). Replacing a row in place
-- (INSERT OR REPLACE) does not fire it: the new row has a new `seq`, which the reader loads.
INSERT INTO meta (key, value) VALUES ('vectors_deleted', '0');

CREATE TRIGGER vectors_deleted AFTER DELETE ON vectors
BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'vectors_deleted';
END;
