#!/usr/bin/env python3
"""A seeded synthetic chat (chat-jsonl) and questions about it: one fixed store that two
builds of memtree can both read, to check that a change leaves walk's answers byte-identical
(the latency bench rebuilds its synthetic store per run, and that build is not deterministic).

usage: scripts/gen-chat.py OUT_DIR [MESSAGES=100000] [QUESTIONS=100]
writes OUT_DIR/chat.jsonl and OUT_DIR/questions.txt; then, per build:
  memtree --store S --no-model ingest --format chat-jsonl OUT_DIR/chat.jsonl   (once)
  scripts/probe-responses.sh MEMTREE_BINARY S OUT_DIR/questions.txt > responses.jsonl
"""
import datetime
import json
import random
import sys
from pathlib import Path

PEOPLE = ["Alice", "Bob", "Caroline", "Dmitri", "Erin", "Farah", "Gustavo", "Hana", "Ibrahim", "Jules",
          "Kenji", "Lena", "Marco", "Nadia", "Oscar", "Priya", "Quentin", "Rosa", "Sven", "Tomoko"]
CHANNELS = ["slack:#eng", "slack:#design", "slack:#sales", "slack:#random", "discord:#community", "slack:#ops",
            "slack:#launch", "slack:#hiring", "teams:#finance", "slack:#support"]
TAGS = ["#launch", "#phoenix", "#q3-plan", "#incident", "#hiring", "#offsite", "#billing", "#osprey"]
TOPICS = ["the Phoenix launch", "the billing migration", "the Osprey prototype", "the offsite in Lisbon",
          "the hiring plan", "the incident on the payments API", "the Q3 roadmap", "the design review",
          "the customer call with Acme", "the new onboarding flow", "the database upgrade", "the marketing site",
          "the Berlin meetup", "the budget"]
OPENINGS = ["I think", "Update on", "Quick question about", "Can we revisit", "Heads up on", "Notes from",
            "Blocked on", "Good news about"]
STATES = ["on track", "late", "done", "risky", "blocked"]


def main() -> None:
    out = Path(sys.argv[1])
    messages = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    questions = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    out.mkdir(parents=True, exist_ok=True)
    r = random.Random(7)
    t = datetime.datetime(2024, 1, 1, 8, 0, 0)
    with open(out / "chat.jsonl", "w") as f:
        for _ in range(messages):
            t += datetime.timedelta(seconds=r.randint(20, 400))
            who, other = r.choice(PEOPLE), r.choice(PEOPLE)
            text = f"{r.choice(OPENINGS)} {r.choice(TOPICS)}: {other} says it is {r.choice(STATES)} {r.choice(TAGS)}"
            if r.random() < 0.3:
                text += f" and {r.choice(TOPICS)} too"
            row = {"source_id": r.choice(CHANNELS), "author": who, "ts": t.strftime("%Y-%m-%dT%H:%M:%SZ"), "text": text}
            f.write(json.dumps(row) + "\n")
    with open(out / "questions.txt", "w") as f:
        for _ in range(questions):
            f.write(f"what did {r.choice(PEOPLE)} say about {r.choice(TOPICS)}\n")


if __name__ == "__main__":
    main()
