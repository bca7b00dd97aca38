-- memtree store schema, version 1. SQLite is the system of record: every derived structure
-- (the tantivy index, the vector matrix, the in-memory gazetteer) is rebuilt from these rows.

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE sources (
    source_id   TEXT PRIMARY KEY,
    source_kind TEXT NOT NULL CHECK (source_kind IN ('chat', 'email', 'document')),
    provider    TEXT,
    title       TEXT,
    created_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE trees (
    tree_id     TEXT PRIMARY KEY,
    tree_kind   TEXT NOT NULL CHECK (tree_kind IN ('source', 'topic', 'global')),
    tree_scope  TEXT NOT NULL,
    source_kind TEXT NOT NULL,
    UNIQUE (tree_kind, tree_scope)
) WITHOUT ROWID;

-- Leaves (level 0) and sealed summaries (level >= 1). A node with parent_id NULL sits in its
-- level's open buffer: the buffers are derived, never stored separately.
CREATE TABLE nodes (
    node_id       TEXT PRIMARY KEY,
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
CREATE INDEX nodes_tree_level ON nodes (tree_id, level, parent_id, seq);
CREATE INDEX nodes_parent ON nodes (parent_id);
CREATE INDEX nodes_time ON nodes (time_start_ms, time_end_ms);

CREATE TABLE entities (
    entity_id     TEXT PRIMARY KEY,
    kind          TEXT NOT NULL,
    surface       TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 0,
    last_seen_ms  INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE node_entities (
    node_id   TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    is_leaf   INTEGER NOT NULL,
    PRIMARY KEY (node_id, entity_id)
) WITHOUT ROWID;
CREATE INDEX node_entities_entity ON node_entities (entity_id, node_id);

CREATE TABLE node_topics (
    node_id TEXT NOT NULL,
    topic   TEXT NOT NULL,
    PRIMARY KEY (node_id, topic)
) WITHOUT ROWID;

-- Co-occurrence graph: a < b, weight = number of distinct leaves mentioning both.
CREATE TABLE edges (
    a      TEXT NOT NULL,
    b      TEXT NOT NULL,
    weight INTEGER NOT NULL CHECK (weight > 0),
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
CREATE INDEX edges_b ON edges (b, a);

CREATE TABLE vectors (
    node_id TEXT PRIMARY KEY,
    model   TEXT NOT NULL,
    dim     INTEGER NOT NULL,
    data    BLOB NOT NULL
) WITHOUT ROWID;

CREATE TABLE recall (
    namespace  TEXT NOT NULL,
    key        TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_ms INTEGER NOT NULL,
    updated_ms INTEGER NOT NULL,
    PRIMARY KEY (namespace, key)
) WITHOUT ROWID;

INSERT INTO meta (key, value) VALUES ('generation', '0');
