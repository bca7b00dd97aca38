#!/usr/bin/env python3
"""Try walk's scorer weights offline, on exactly what walk scored.

Input: for each corpus, the two files of one harness run on kept stores,

    memtree bench recall --corpus C --systems walk --keep-stores D \
        --per-question Q.jsonl --candidates CAND.jsonl

(the candidates: every leaf walk scored per question, with its signals before any weight).
This script replays walk's ranking from them in numpy: the scorer's arithmetic (min-max
normalisation, the dense share, the boosts) and the history answer (an order or summary
question scored with the `history_` weights, then answered by sessions: the best leaf of
each, and for a summary the reply after each person's message, at most k leaves; walk gives
them in time order, so at k the replay compares and scores the set of leaves chosen for k).
It first checks that the replay at the default weights gives walk's own top lists for every
question (for a history question, the same set of leaves), and stops if one differs: a
result from a replay that drifted from the engine means nothing.

    scripts/walk_weights.py check  --corpus beam Q.jsonl CAND.jsonl [--corpus locomo Q2 C2]
    scripts/walk_weights.py ascend ...   # joint coordinate ascent over the weights' grid
    scripts/walk_weights.py ascend-held-out ...  # the same, each conversation held out in turn
    scripts/walk_weights.py by-type ...  # best weights per question type, held out by conversation
    scripts/walk_weights.py oracle ...   # the best of the grid per question (an upper bound)

Figures are fractional evidence recall in %, over the harness's "overall" questions
(adversarial ones left out), as `memtree bench recall` reports them.
"""
import argparse
import json
import sys

import numpy as np

# WalkParams::default() (src/retrieval/walk/params.rs): the replay must use the same.
DEFAULT = dict(window=1.0, dense=0.65, flat_ratio=1.4, flat_dense=0.9, dense_window=0.5, dense_parent=0.5, parent=0.15, speaker=0.3,
               time_boost=0.2, speaks_of_boost=1.0, assistant=-0.3, asked_assistant=0.0, instruction=0.2)
# WalkParams::for_history (params.rs): the weights an order or summary question is scored with.
HISTORY = dict(window=0.0, parent=0.3, dense_parent=2.0)
NEIGHBOUR_SHARE = 0.5  # score.rs
OCCURRENCE_POOL = 2  # rank.rs: the occurrence-ranked global branch keeps the scorer's top 2k
GRID = dict(window=[0, 0.25, 0.5, 0.75, 1, 1.5, 2], dense=[0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9],
            dense_window=[0, 0.25, 0.5, 0.75, 1, 1.5], dense_parent=[0, 0.25, 0.5, 0.75, 1, 1.5],
            parent=[0, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5], speaker=[0, 0.1, 0.2, 0.3, 0.4, 0.6],
            time_boost=[0, 0.1, 0.2, 0.3, 0.5], assistant=[-0.5, -0.4, -0.3, -0.25, -0.2, -0.15, -0.1, 0],
            instruction=[0, 0.1, 0.15, 0.2, 0.25, 0.3])
KS = (5, 10, 25)
COLS = ["bm25", "neighbours_bm25", "cosine", "neighbours_cosine", "session_cosine", "parent", "speaker",
        "in_window", "assistant", "instruction", "speaks_of"]


def min_max(x):
    lo, hi = x.min(), x.max()
    if hi > lo:
        return (x - lo) / (hi - lo)
    return np.ones_like(x) if hi > 0 else np.zeros_like(x)


def flat(bm25, ratio):
    """score.rs, lexically_flat: the words find nothing distinctive."""
    b = np.sort(bm25[bm25 > 0])[::-1]
    if len(b) < 5:
        return False
    return b[0] < ratio * b[:50].mean()


class Question:
    def __init__(self, pq, cand):
        w = cand["walk"]
        rows = w["rows"]
        self.conv, self.type = pq["conversation"], pq.get("type") or pq["category"]
        self.category = pq["category"]
        self.top = pq["top"]
        self.ev = set(pq["evidence"])
        self.ids = [r["node_id"] for r in rows]
        self.turns = cand["turns"]
        self.session = [r["session"] for r in rows]
        self.next = [r["next"] for r in rows]
        self.asks_assistant, self.order, self.summary, self.dense = (
            w["asks_assistant"], w["asks_order"], w["asks_summary"], w["dense"])
        self.branch = w["branch"]
        self.A = np.array([[float(r.get(c, 0)) for c in COLS] for r in rows]).reshape(len(rows), len(COLS))
        order = sorted(range(len(rows)), key=lambda i: self.ids[i])  # ties by node id, as in Rust
        self.idrank = np.empty(len(rows), dtype=np.int64)
        self.idrank[order] = np.arange(len(rows))
        self.at = {n: i for i, n in enumerate(self.ids)}

    def scores(self, p):
        A = self.A
        lex = A[:, 0] + p["window"] * A[:, 1] * NEIGHBOUR_SHARE
        s = min_max(lex)
        if self.dense:
            den = A[:, 2] + p["dense_window"] * A[:, 3] + p["dense_parent"] * A[:, 4]
            d = p["flat_dense"] if flat(A[:, 0], p["flat_ratio"]) else p["dense"]
            s = (1 - d) * s + d * min_max(den)
        a = p["asked_assistant"] if self.asks_assistant else p["assistant"]
        return s + p["parent"] * A[:, 5] + p["speaker"] * A[:, 6] + p["time_boost"] * A[:, 7] + a * A[:, 8] \
            + p["instruction"] * A[:, 9] + p["speaks_of_boost"] * A[:, 10]

    def history(self):
        return self.order or self.summary

    def ranking(self, p, k):
        """Row indices, best first, as walk orders its hits (`k` hits asked); for a history
        question, the leaves of its answer for `k` (walk gives them in time order)."""
        if self.history():
            p = dict(p, **{w: p.get("history_" + w, v) for w, v in HISTORY.items()})
        idx = list(np.lexsort((self.idrank, -self.scores(p))))
        if self.branch == "occurrence_global":
            idx = idx[:OCCURRENCE_POOL * k]
        if not self.history():
            return idx
        # history.rs, over_sessions: sessions by their best person's message (any leaf when the
        # question asks what the assistant said), each with its evidence, until k leaves.
        heads = [i for i in idx if self.asks_assistant or not self.A[i, 8]]
        taken, out = set(), []
        for i in heads:
            if len(out) >= k:
                break
            s = self.session[i]
            if s is not None:
                if s in taken:
                    continue
                taken.add(s)
            out.append(i)
            r = self.at.get(self.next[i]) if self.summary and s is not None else None
            if r is not None and self.A[r, 8] and len(out) + 1 <= k:
                out.append(r)
        return out

    def recall(self, p, ks=KS):
        if self.history():
            return [len(self.ev & set(self.turns[i] for i in self.ranking(p, k) if self.turns[i])) / len(self.ev)
                    for k in ks]
        t = [self.turns[i] for i in self.ranking(p, len(self.top))]
        return [len(self.ev & set(x for x in t[:k] if x)) / len(self.ev) for k in ks]


def load(pq_path, cand_path):
    pqs = [json.loads(l) for l in open(pq_path)]
    pqs = [r for r in pqs if r["system"] == "walk"]
    cands = [json.loads(l) for l in open(cand_path)]
    if len(pqs) != len(cands):
        sys.exit(f"{pq_path}: {len(pqs)} walk questions, {cand_path}: {len(cands)}: not one run")
    qs = []
    for pq, c in zip(pqs, cands):
        if pq["question"] != c["question"] or pq["conversation"] != c["conversation"]:
            sys.exit(f"question order differs: {pq['question']!r} / {c['question']!r}")
        qs.append(Question(pq, c))
    return qs


def overall(qs):
    return [q for q in qs if q.category != "adversarial"]


def evaluate(qs, p):
    return np.mean([q.recall(p) for q in overall(qs)], axis=0) * 100


def check(corpora):
    for name, qs in corpora.items():
        bad = [q for q in qs if not replays(q)]
        if bad:
            sys.exit(f"{name}: the replay differs from walk on {len(bad)} of {len(qs)} questions "
                     f"(first: {bad[0].conv}); is DEFAULT the engine's WalkParams::default()?")
        print(f"{name}: replay = walk on all {len(qs)} questions; R@5/10/25 {fmt(evaluate(qs, DEFAULT))}")


def replays(q):
    got = [q.turns[i] for i in q.ranking(DEFAULT, len(q.top))]
    if q.history():  # walk's answer is in time order: the same leaves
        return sorted(map(str, got)) == sorted(map(str, q.top))
    return got[:len(q.top)] == q.top


def fmt(r):
    return " / ".join(f"{x:.1f}" for x in r)


def objective(corpora, p):
    # Each corpus's R@10 + R@25, equally: a weight must help both kinds of memory.
    return sum(r[1] + r[2] for r in (evaluate(qs, p) for qs in corpora.values()))


def ascend(corpora, start=DEFAULT, rounds=3):
    p, best = dict(start), objective(corpora, start)
    for _ in range(rounds):
        moved = False
        for k, vals in GRID.items():
            for v in vals:
                q = dict(p, **{k: v})
                j = objective(corpora, q)
                if j > best + 1e-9:
                    p, best, moved = q, j, True
        if not moved:
            break
    return p


def small_grid():
    return [dict(DEFAULT, dense=d, assistant=a, window=w, instruction=i)
            for d in [0.3, 0.5, 0.65, 0.8, 0.9] for a in [0, -0.15, -0.3, -0.5]
            for w in [0, 0.5, 1] for i in [0, 0.2, 0.5]]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=["check", "ascend", "ascend-held-out", "by-type", "oracle"])
    ap.add_argument("--corpus", nargs=3, action="append", metavar=("NAME", "PER_QUESTION", "CANDIDATES"),
                    required=True)
    a = ap.parse_args()
    corpora = {n: load(pq, c) for n, pq, c in a.corpus}
    check(corpora)
    if a.action == "ascend":
        p = ascend(corpora)
        print("in-sample optimum:", {k: v for k, v in p.items() if v != DEFAULT[k]} or "the defaults")
        for name, qs in corpora.items():
            print(f"  {name}: {fmt(evaluate(qs, DEFAULT))} -> {fmt(evaluate(qs, p))}")
    elif a.action == "ascend-held-out":
        # Each conversation of each corpus in turn: ascend on everything else (both corpora),
        # then rank the held-out conversation's questions at the weights found.
        for name, qs in corpora.items():
            held = []
            for c in sorted(set(q.conv for q in qs)):
                rest = {n: [q for q in v if q.conv != c] if n == name else v for n, v in corpora.items()}
                p = ascend(rest)
                held += [q.recall(p) for q in overall([q for q in qs if q.conv == c])]
                print(f"  {name} {c}: {({k: v for k, v in p.items() if v != DEFAULT[k]})}", flush=True)
            print(f"{name}: default {fmt(evaluate(qs, DEFAULT))}; held out {fmt(np.mean(held, axis=0) * 100)}")
    elif a.action in ("by-type", "oracle"):
        grid = small_grid()
        for name, qs in corpora.items():
            qs = overall(qs)
            M = np.array([[q.recall(p) for p in grid] for q in qs])  # question x setting x k
            base = evaluate(qs, DEFAULT)
            if a.action == "oracle":
                print(f"{name}: default {fmt(base)}; best of {len(grid)} settings per question "
                      f"{fmt(M.max(axis=1).mean(axis=0) * 100)}")
                continue
            types, convs = sorted(set(q.type for q in qs)), sorted(set(q.conv for q in qs))
            ins, held = np.zeros(len(KS)), np.zeros(len(KS))
            for t in types:
                ti = [i for i, q in enumerate(qs) if q.type == t]
                ins += M[ti].mean(axis=0).max(axis=0) * len(ti)
                for c in convs:
                    tr = [i for i in ti if qs[i].conv != c]
                    te = [i for i in ti if qs[i].conv == c]
                    if not te or not tr:
                        continue
                    for j, _ in enumerate(KS):  # the setting chosen for each cut-off on the other conversations
                        held[j] += M[te, int(np.argmax(M[tr, :, j].mean(axis=0))), j].sum()
            n = len(qs)
            print(f"{name}: default {fmt(base)}; per-type best, in-sample {fmt(ins / n * 100)}, "
                  f"held out by conversation {fmt(held / n * 100)}")


if __name__ == "__main__":
    main()
