-- Entities get an integer key, and the two large tables that name entities (node_entities,
-- edges) name them by it: their B-trees were keyed by text ids, a third to a half of the
-- store, and their comparisons were most of the ingest time. The text id stays on the
-- entity row (unique), and every read that orders by id joins it back, so answers are
-- unchanged. Existing rows are carried over: every entity, mention and edge is kept.

CREATE TABLE entities_keyed (
    entity_key    INTEGER PRIMARY KEY,
    entity_id     TEXT NOT NULL UNIQUE,
    kind          TEXT NOT NULL,
    surface       TEXT NOT NULL,
    mention_count INTEGER NOT NULL DEFAULT 0,
    last_seen_ms  INTEGER NOT NULL DEFAULT 0
);
INSERT INTO entities_keyed (entity_id, kind, surface, mention_count, last_seen_ms)
    SELECT entity_id, kind, surface, mention_count, last_seen_ms FROM entities ORDER BY entity_id;

CREATE TABLE node_entities_keyed (
    node_id    TEXT NOT NULL,
    entity_key INTEGER NOT NULL,
    is_leaf    INTEGER NOT NULL,
    PRIMARY KEY (node_id, entity_key)
) WITHOUT ROWID;
INSERT INTO node_entities_keyed (node_id, entity_key, is_leaf)
    SELECT ne.node_id, e.entity_key, ne.is_leaf FROM node_entities ne
    JOIN entities_keyed e ON e.entity_id = ne.entity_id;

-- Co-occurrence graph: a < b (keys), weight = number of distinct leaves mentioning both.
CREATE TABLE edges_keyed (
    a      INTEGER NOT NULL,
    b      INTEGER NOT NULL,
    weight INTEGER NOT NULL CHECK (weight > 0),
    PRIMARY KEY (a, b)
) WITHOUT ROWID;
INSERT INTO edges_keyed (a, b, weight)
    SELECT MIN(ea.entity_key, eb.entity_key), MAX(ea.entity_key, eb.entity_key), g.weight FROM edges g
    JOIN entities_keyed ea ON ea.entity_id = g.a JOIN entities_keyed eb ON eb.entity_id = g.b;

DROP TABLE edges;
DROP TABLE node_entities;
DROP TABLE entities;
ALTER TABLE entities_keyed RENAME TO entities;
ALTER TABLE node_entities_keyed RENAME TO node_entities;
ALTER TABLE edges_keyed RENAME TO edges;
CREATE INDEX node_entities_entity ON node_entities (entity_key, node_id);
CREATE INDEX edges_b ON edges (b, a);
