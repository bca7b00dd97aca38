-- Which model made the stored vectors: one row per model name, with the vectors' dimension
-- and the hash of the files that decided them (`embed::model::identity`). A store opened
-- with a model of the same name but another dimension or manifest drops that name's vectors
-- and re-embeds (a writer), or ignores them until then (a reader): vectors of two models
-- never meet in one matrix.
--
-- Vectors stored before this file ran are recorded with an empty manifest ("not known"):
-- the first writer that opens the store with a model of that name and dimension adopts them.

CREATE TABLE models (
    name     TEXT PRIMARY KEY,
    dim      INTEGER NOT NULL,
    manifest TEXT NOT NULL
) WITHOUT ROWID;

INSERT INTO models (name, dim, manifest)
SELECT model, length(codes), '' FROM vectors GROUP BY model;
