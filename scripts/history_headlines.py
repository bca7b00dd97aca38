#!/usr/bin/env python3
"""How often a history answer's session says what its evidence says (issue 33 item 7b).

Asks walk every BEAM dev question of type event_ordering or summarization (the history
questions) through the CLI, and for every session hit (a summary carrying evidence leaves)
checks whether its headline (its snippet, else its whole text) shares a run of eight words
with its evidence leaves, white space normalised. Prints the session hits, how many state
their evidence, and how many summaries walk left out for not stating theirs.

    python3 scripts/history_headlines.py target/release/memtree STORE [CORPUS]

STORE holds the BEAM dev conversations (`memtree --store STORE --no-model ingest --format
locomo ../shared/corpora/beam/beam-dev.json`); walk runs without the model.
"""
import json
import subprocess
import sys


def norm(t):
    return " ".join(t.split())


def states(headline, evidence, n=8):
    words = norm(headline).split()
    ev = norm(evidence)
    n = min(n, len(words))
    return any(" ".join(words[i:i + n]) in ev for i in range(max(1, len(words) - n + 1)))


def main():
    binary, store = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else "../shared/corpora/beam/beam-dev.json"
    qs = [q for c in json.load(open(corpus)) for q in c["qa"] if q["type"] in ("event_ordering", "summarization")]
    hits = stated = left_out = 0
    for q in qs:
        req = json.dumps({"mode": "walk", "query": q["question"], "limit": 10})
        out = subprocess.run([binary, "--store", store, "--no-model", "tool", req], capture_output=True, text=True)
        r = json.loads(out.stdout)
        for h in r["hits"]:
            if h["node_kind"] != "summary":
                continue
            hits += 1
            evidence = " ".join(e["content"] for e in h.get("evidence", []))
            snippet = h.get("snippet")
            stated += states(snippet["text"] if snippet else h["content"], evidence)
        left_out += (r.get("explain") or {}).get("summaries_not_stating_evidence", 0)
    print(f"questions {len(qs)}; session hits {hits}; headline states its evidence {stated} "
          f"({100 * stated / max(hits, 1):.1f}%); summaries left out for not stating it {left_out}")


if __name__ == "__main__":
    main()
