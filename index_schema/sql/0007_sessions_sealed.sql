-- Every level-1 summary written counts here, so that a reader of another process's writes
-- knows to remake its session vectors (each the mean of a summary's children's vectors) even
-- when the write added no vector row: a deferred import, or a writer without the model,
-- sealing leaves embedded earlier. `meta.vectors_deleted` (0003) is its sibling.
INSERT INTO meta (key, value) VALUES ('sessions_sealed', '0');

CREATE TRIGGER sessions_sealed AFTER INSERT ON nodes WHEN NEW.level = 1
BEGIN
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'sessions_sealed';
END;
