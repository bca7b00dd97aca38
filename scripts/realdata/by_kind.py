#!/usr/bin/env python3
"""The real-data set's figures by data kind and by what each question tests (`ask_kind`):
right first (the evidence at rank 1) and in the top 5, from the harness's --per-question
output and the corpus file.

    python3 scripts/realdata/by_kind.py questions.json per-question.jsonl [--system walk]
"""
import argparse
import collections
import json

ap = argparse.ArgumentParser()
ap.add_argument("corpus")
ap.add_argument("per_question")
ap.add_argument("--system", default="walk")
a = ap.parse_args()
kind = {}
for sample in json.load(open(a.corpus)):
    for q in sample["qa"]:
        kind[q["question"]] = (q.get("type", "?"), q.get("ask_kind", "?"))
rows = [json.loads(l) for l in open(a.per_question)]
rows = [r for r in rows if r["system"] == a.system]
groups = collections.defaultdict(list)
for r in rows:
    t, ak = kind.get(r["question"], ("?", "?"))
    for g in ("all", "type:" + t, "ask:" + ak):
        groups[g].append(r)
print(f"| {a.system} | questions | first % | top 5 % | top 10 % |")
print("|---|---:|---:|---:|---:|")
for g in sorted(groups, key=lambda g: (g != "all", g)):
    rs = groups[g]
    pct = lambda key: 100.0 * sum(r["recall"].get(key, 0.0) for r in rs) / len(rs)
    print(f"| {g} | {len(rs)} | {pct('recall@1'):.1f} | {pct('recall@5'):.1f} | {pct('recall@10'):.1f} |")
