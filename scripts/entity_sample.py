#!/usr/bin/env python3
"""Print a seeded random sample of a store's entities, each with one line of a leaf that
names it, for judging the registry's precision by hand (issue 43 item 3).

    python3 scripts/entity_sample.py STORE_DIR [N] [SEED] > sample.tsv

Columns: entity id, kind, mentions, a context of ~100 characters around the first mention
(the surface, case-insensitive) in the lowest-keyed leaf naming it. Read-only (SQLite URI
mode=ro). Judging rule used in BENCHMARKS.md: an entity is right when its surface, in that
context, names a particular person, place, organisation, product, event, work, handle, tag,
address or URL; a common word, a heading word, a code identifier or a fragment is wrong.
"""
import random
import re
import sqlite3
import sys

store = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 43
db = sqlite3.connect(f"file:{store}/memtree.db?mode=ro", uri=True)
rows = db.execute("SELECT entity_key, entity_id, kind, surface, mention_count FROM entities ORDER BY entity_key").fetchall()
rows = [r for r in rows if r[4] > 0]
random.Random(seed).shuffle(rows)
for key, eid, kind, surface, mentions in sorted(rows[:n], key=lambda r: r[1]):
    leaf = db.execute(
        "SELECT n.content FROM node_entities ne JOIN nodes n ON n.node_key = ne.node_key "
        "WHERE ne.entity_key = ? AND ne.is_leaf = 1 ORDER BY n.node_key LIMIT 1",
        (key,),
    ).fetchone()
    text = leaf[0] if leaf else ""
    m = re.search(re.escape(surface.split()[0]) if surface else "^", text, re.I)
    at = m.start() if m else 0
    ctx = text[max(0, at - 50) : at + 60].replace("\n", " ").replace("\t", " ")
    print(f"{eid}\t{kind}\t{mentions}\t{ctx}")
