-- Nodes get an integer key, and node_entities names nodes by it, as 0005 did for entities:
-- its B-trees were keyed by the random 33-character node id, so every mention went to a
-- random page of both (the table and its entity index), and a write's dirty pages, WAL and
-- checkpoints grew with the store. Keys are handed out in append order: a write's mentions
-- now go to the right-hand edge of the table and of each entity's run in the index.
--
-- `node_key` is an INTEGER PRIMARY KEY (an alias of the rowid), so VACUUM cannot renumber it;
-- the text id stays unique and is what every read orders by. The old rowids become the keys.
-- A key names a live node: a deleted node's mentions go with it, so a key reused after a
-- delete names nothing stale. Every node, mention, index and trigger is carried over.

CREATE TABLE nodes_keyed (
    node_key      INTEGER PRIMARY KEY,
    node_id       TEXT NOT NULL UNIQUE,
    tree_id       TEXT NOT NULL REFERENCES trees (tree_id),
    level         INTEGER NOT NULL CHECK (level >= 0),
    seq           INTEGER NOT NULL,
    content       TEXT NOT NULL,
    author        TEXT,
    participants  TEXT NOT NULL DEFAULT '[]',
    tags          TEXT NOT NULL DEFAULT '[]',
    source_ref    TEXT,
    time_start_ms INTEGER NOT NULL,
    time_end_ms   INTEGER NOT NULL CHECK (time_end_ms >= time_start_ms),
    tokens        INTEGER NOT NULL,
    parent_id     TEXT,
    child_ids     TEXT NOT NULL DEFAULT '[]',
    flags         INTEGER NOT NULL DEFAULT 0,
    appended_ms   INTEGER NOT NULL
);
INSERT INTO nodes_keyed (node_key, node_id, tree_id, level, seq, content, author, participants, tags,
        source_ref, time_start_ms, time_end_ms, tokens, parent_id, child_ids, flags, appended_ms)
    SELECT rowid, node_id, tree_id, level, seq, content, author, participants, tags,
        source_ref, time_start_ms, time_end_ms, tokens, parent_id, child_ids, flags, appended_ms
    FROM nodes ORDER BY rowid;

CREATE TABLE node_entities_keyed (
    node_key   INTEGER NOT NULL,
    entity_key INTEGER NOT NULL,
    is_leaf    INTEGER NOT NULL,
    PRIMARY KEY (node_key, entity_key)
) WITHOUT ROWID;
INSERT INTO node_entities_keyed (node_key, entity_key, is_leaf)
    SELECT n.node_key, ne.entity_key, ne.is_leaf FROM node_entities ne
    JOIN nodes_keyed n ON n.node_id = ne.node_id;

DROP TABLE node_entities;
DROP TABLE nodes;
ALTER TABLE nodes_keyed RENAME TO nodes;
ALTER TABLE node_entities_keyed RENAME TO node_entities;
CREATE INDEX nodes_tree_level ON nodes (tree_id, level, parent_id, seq);
CREATE INDEX nodes_time ON nodes (time_start_ms, time_end_ms);
-- 0006's covering index for query_source's candidates now holds summaries only: every query
-- it serves asks for `level >= 1`, and a leaf's entry (a twentieth of the rows, each ~70 bytes
-- and one more B-tree write per leaf) was never read.
CREATE INDEX nodes_tree_level_end ON nodes (tree_id, level, time_end_ms, node_id) WHERE level >= 1;
CREATE INDEX node_entities_entity ON node_entities (entity_key, node_key);

-- 0007's trigger went with the old table.
CREATE TRIGGER sessions_sealed AFTER INSERT ON nodes WHEN NEW.level = 1
BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'sessions_sealed';
END;
