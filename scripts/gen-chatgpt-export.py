#!/usr/bin/env python3
"""Write a ChatGPT-shaped export (`conversations.json`) of N conversations (default 1000) to
PATH, for measuring `memtree ingest --format chatgpt` (rate and peak RSS, with and without the
model). Each conversation is a `mapping` tree as the export writes it: a hidden system root,
user and assistant turns (4 to 30 messages), now and then a regenerated answer on a side
branch (not on `current_node`'s path, so not imported), a tool call with its output, and an
attachment. Deterministic (seeded): same N, same file.

    python3 scripts/gen-chatgpt-export.py /tmp/export/conversations.json 1000
"""
import json
import random
import sys

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
rng = random.Random(26)
topics = ["sourdough starter", "a trip to Lisbon", "the boiler service", "Rust lifetimes",
          "a birthday gift for Ana", "the garden beds", "tax forms", "a job interview",
          "marathon training", "the kitchen paint", "a wedding toast", "SQLite indexes"]
verbs = ["plan", "compare", "explain", "draft", "fix", "schedule", "summarise", "check"]
words = ("the a plan for next week with details about cost time place people notes list budget "
         "steps order option reason idea change result first second then later because").split()


def sentence(k):
    return " ".join(rng.choice(words) for _ in range(k)).capitalize() + "."


def text(sentences):
    return " ".join(sentence(rng.randint(6, 18)) for _ in range(sentences))


def message(mid, role, t, parts, ctype="text", recipient="all", meta=None):
    return {"id": mid, "author": {"role": role, "name": None, "metadata": {}}, "create_time": t,
            "update_time": None, "content": {"content_type": ctype, "parts": parts},
            "status": "finished_successfully", "end_turn": True, "weight": 1.0,
            "metadata": meta or {}, "recipient": recipient}


out = []
t0 = 1_672_531_200.0  # 2023-01-01
for c in range(n):
    cid = f"gen-{c:05d}"
    t = t0 + c * 3 * 3600 + rng.random() * 3600
    mapping = {}

    def add(mid, parent, msg):
        mapping[mid] = {"id": mid, "message": msg, "parent": parent, "children": []}
        if parent:
            mapping[parent]["children"].append(mid)

    add(f"{cid}-root", None, None)
    add(f"{cid}-sys", f"{cid}-root",
        message(f"{cid}-sys", "system", None, [""], meta={"is_visually_hidden_from_conversation": True}))
    last = f"{cid}-sys"
    topic = rng.choice(topics)
    for turn in range(rng.randint(2, 15)):
        t += rng.randint(20, 600)
        uid = f"{cid}-u{turn}"
        meta = {"attachments": [{"id": f"f{c}", "name": f"notes-{c}.pdf", "size": 1000}]} if rng.random() < 0.05 else {}
        ask = f"Can you {rng.choice(verbs)} {topic}? {text(rng.randint(1, 3))}"
        add(uid, last, message(uid, "user", t, [ask], meta=meta))
        last = uid
        if rng.random() < 0.08:
            t += 5
            add(f"{uid}-call", last, message(f"{uid}-call", "assistant", t, None, ctype="code", recipient="python"))
            mapping[f"{uid}-call"]["message"]["content"] = {"content_type": "code", "language": "python", "text": "print(1)"}
            add(f"{uid}-out", f"{uid}-call", message(f"{uid}-out", "tool", t + 1, None, ctype="execution_output"))
            mapping[f"{uid}-out"]["message"]["content"] = {"content_type": "execution_output", "text": "1"}
            last = f"{uid}-out"
        t += rng.randint(5, 60)
        aid = f"{cid}-a{turn}"
        if rng.random() < 0.1:  # a regenerated answer: the old one stays on a side branch
            add(f"{aid}-old", last, message(f"{aid}-old", "assistant", t - 2, [text(3)]))
        add(aid, last, message(aid, "assistant", t, [text(rng.randint(2, 8))]))
        last = aid
    out.append({"title": f"{topic.capitalize()} ({c})" if c % 17 else "", "create_time": t0 + c * 3 * 3600,
                "update_time": t, "mapping": mapping, "moderation_results": [], "current_node": last,
                "plugin_ids": None, "conversation_id": cid, "conversation_template_id": None,
                "gizmo_id": None, "is_archived": False, "safe_urls": [], "default_model_slug": "gpt-4o",
                "id": cid})

with open(path, "w") as f:
    json.dump(out, f)
