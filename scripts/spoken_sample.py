#!/usr/bin/env python3
"""Print a seeded random sample of the times a store's leaves speak of (issue 45's second
clock), each with when the leaf was said and its text, for judging the resolver's precision
by hand.

    python3 scripts/spoken_sample.py STORE_DIR [N] [SEED] > sample.txt

One block per sampled row: the said time (UTC, with weekday), the resolved span (its first
and last day), and the leaf's text (first 400 characters). Read-only (SQLite URI mode=ro).
Judging rule used in BENCHMARKS.md: a row is right when the text, said at that time, speaks
of that span (a plan, a memory, a date written out); wrong when it names another span (the
wrong year, the wrong week) or no time at all (a word that only looks like one).
"""
import datetime as dt
import random
import sqlite3
import sys

store = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 50
seed = int(sys.argv[3]) if len(sys.argv) > 3 else 45
db = sqlite3.connect(f"file:{store}/memtree.db?mode=ro", uri=True)
rows = db.execute(
    "SELECT n.node_id, n.time_start_ms, s.since_ms, s.until_ms, n.content FROM spoken_times s "
    "JOIN nodes n ON n.node_key = s.node_key ORDER BY n.node_key, s.since_ms, s.until_ms"
).fetchall()
random.Random(seed).shuffle(rows)


def day(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).strftime("%a %Y-%m-%d")


print(f"# {len(rows)} spoken times in {store}; {min(n, len(rows))} sampled (seed {seed})")
for i, (node, said, since, until, text) in enumerate(sorted(rows[:n], key=lambda r: (r[0], r[2])), 1):
    span = day(since) if day(since) == day(until) else f"{day(since)} .. {day(until)}"
    print(f"\n[{i}] said {day(said)}  speaks of {span}  ({node})")
    print("    " + " ".join(text.split())[:400])
