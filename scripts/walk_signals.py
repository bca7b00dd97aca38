#!/usr/bin/env python3
"""Leave-one-conversation-out over the three dev corpora at once, for walk's fitted settings.

Input: one harness run over several corpora on kept stores (the lines carry their corpus):

    memtree bench recall --corpora ../shared/corpora --systems walk --keep-stores D \
        --per-question Q.jsonl --candidates CAND.jsonl

For each conversation of every corpus in turn, the setting with the best mean R@10 over the
three corpora on the *other* conversations is chosen and the held-out conversation scored at
it; the figures printed are those held-out scores, per corpus, and how often each setting
was chosen. The ranking is walk's own, replayed by scripts/walk_weights.py (which checks the
replay against walk first). Today's grid: the lexically-flat rule (`flat_ratio`, the best
BM25 under this many times the mean of the best 50; `flat_dense`, the dense share then),
issue 36 item g; `flat_ratio=0` is the rule off.

    scripts/walk_signals.py Q.jsonl CAND.jsonl
"""
import collections
import json
import sys

import numpy as np

import walk_weights as ww

GRID = [dict(flat_ratio=0.0)] + [dict(flat_ratio=r, flat_dense=d) for r in (1.2, 1.4, 1.6, 2.0) for d in (0.8, 0.9)]


def load(pq_path, cand_path):
    pqs = [r for r in map(json.loads, open(pq_path)) if r["system"] == "walk"]
    cands = [json.loads(l) for l in open(cand_path)]
    if len(pqs) != len(cands):
        sys.exit(f"{len(pqs)} walk questions but {len(cands)} candidate lines: not one run")
    out = []
    for pq, c in zip(pqs, cands):
        if pq["question"] != c["question"]:
            sys.exit(f"question order differs: {pq['question']!r} / {c['question']!r}")
        if pq["category"] == "adversarial":
            continue
        # A question walk scored nothing for has recall 0 at every setting.
        q = ww.Question(pq, c) if c["walk"]["rows"] else None
        out.append((pq["corpus"], pq["conversation"], q))
    return out


def main():
    qs = load(sys.argv[1], sys.argv[2])
    corpora = sorted({c for c, _, _ in qs})
    # R@10 of every question at every setting, once.
    r10 = [[q.recall(dict(ww.DEFAULT, **g))[1] if q else 0.0 for _, _, q in qs] for g in GRID]
    r10 = np.array(r10)
    held = collections.defaultdict(list)
    picks = collections.Counter()
    for conv in sorted({(c, v) for c, v, _ in qs}):
        train = [i for i, (c, v, _) in enumerate(qs) if (c, v) != conv]

        def objective(g):
            return sum(r10[g, [i for i in train if qs[i][0] == c]].mean() for c in corpora)

        best = max(range(len(GRID)), key=objective)
        picks[json.dumps(GRID[best])] += 1
        held[conv[0]].extend(r10[best, i] for i, (c, v, _) in enumerate(qs) if (c, v) == conv)
    base = {c: 100 * np.mean([r10[0, i] for i, (k, _, _) in enumerate(qs) if k == c]) for c in corpora}
    for c in corpora:
        print(f"{c}: R@10 rule off {base[c]:.1f}, held out {100 * np.mean(held[c]):.1f}")
    for g, n in picks.most_common():
        print(f"chosen in {n} folds: {g}")


if __name__ == "__main__":
    main()
