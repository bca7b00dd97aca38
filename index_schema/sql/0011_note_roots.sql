-- The folders notes were imported from (their vault roots), resolved. A later import of a path
-- inside one names its notes relative to it, so a note keeps one id whichever folder of the
-- vault is passed (a subfolder, one file, or the vault again).
--
-- Stores written before this file ran: a note read from an absolute file whose path ends with
-- its id (`doc:projects/a.md` read from `/home/u/v/projects/a.md`) says its root (`/home/u/v`).
-- Notes recorded with a relative file (imports before notes recorded the resolved path) say
-- nothing here; a sync matches them by the end of their path (`memory::note_identity`).

CREATE TABLE note_roots (
    root TEXT PRIMARY KEY
) WITHOUT ROWID;

INSERT OR IGNORE INTO note_roots (root)
SELECT DISTINCT substr(f, 1, length(f) - length(rel) - 1)
FROM (
    SELECT substr(s.source_id, 5) AS rel,
           (SELECT n.source_ref FROM nodes n
             WHERE n.tree_id = 'source:' || s.source_id AND n.level = 0 LIMIT 1) AS f
    FROM sources s
    WHERE s.provider = 'markdown' AND substr(s.source_id, 1, 4) = 'doc:'
)
WHERE f IS NOT NULL
  AND substr(f, 1, 1) = '/'
  AND length(rel) > 0
  AND length(f) > length(rel) + 1
  AND substr(f, -length(rel)) = rel
  AND substr(f, length(f) - length(rel), 1) = '/';
