-- Two clocks (SPEC §5.1, issue 45): a leaf is said at `time_start_ms` and its text may speak of
-- another time ("next Saturday", "yesterday", "in March"), resolved against the former when
-- the leaf is written (`crate::time::speaks_of`) and kept here, one row per time. Derived
-- from the leaf's content and time: the code step fills it for the leaves written before it
-- existed, a reindex never needs it rewritten (the same function gives the same rows), and a
-- deleted leaf's rows go with it (the trigger), so a forget or a replace leaves none behind.
CREATE TABLE spoken_times (
    node_key INTEGER NOT NULL,
    since_ms INTEGER NOT NULL,
    until_ms INTEGER NOT NULL CHECK (until_ms >= since_ms),
    PRIMARY KEY (node_key, since_ms, until_ms)
) WITHOUT ROWID;
-- What a window admits by the time spoken of (`cover_window`, time-only questions).
CREATE INDEX spoken_times_since ON spoken_times (since_ms, until_ms, node_key);

CREATE TRIGGER spoken_times_gone AFTER DELETE ON nodes WHEN OLD.level = 0
BEGIN
    DELETE FROM spoken_times WHERE node_key = OLD.node_key;
END;
