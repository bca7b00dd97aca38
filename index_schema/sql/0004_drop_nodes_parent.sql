-- No query looks nodes up by parent: a summary lists its children (child_ids), and the open
-- buffers (parent_id IS NULL) are found per tree through nodes_tree_level (tree_id, level,
-- parent_id, seq). The index cost an entry per node and a random-position rewrite of every
-- child at each seal. Dropping it keeps every row.
DROP INDEX IF EXISTS nodes_parent;
