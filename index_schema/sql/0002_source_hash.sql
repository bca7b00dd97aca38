-- A Markdown note's content hash (BLAKE3 of the file's bytes, hex), so that re-importing a
-- notes folder skips the notes that did not change. NULL for every other source, and for a
-- note imported before this column existed (the next sync replaces it once).
ALTER TABLE sources ADD COLUMN content_hash TEXT;
