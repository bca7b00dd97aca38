-- What the user forgot (issue 32): one row per forget, so that a later import, notes sync,
-- `ingest_document` or restore leaves the forgotten content out. Ids and hashes only, never
-- text: a leaf by its id and the BLAKE3 of its text (within its source, so the same chunk of
-- a note read at another position is still held back), a whole source by its id, a range by
-- its source and its bounds (epoch ms, inclusive). `memtree forget --undo ID` deletes a row.

CREATE TABLE forgotten (
    record_id    INTEGER PRIMARY KEY,
    grain        TEXT NOT NULL CHECK (grain IN ('leaf', 'source', 'range')),
    source_id    TEXT NOT NULL,
    node_id      TEXT,
    content_hash TEXT,
    since_ms     INTEGER,
    until_ms     INTEGER,
    forgotten_ms INTEGER NOT NULL
);
CREATE INDEX forgotten_source ON forgotten (source_id);
