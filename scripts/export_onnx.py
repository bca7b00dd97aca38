#!/usr/bin/env python3
"""Export a sentence-transformers checkpoint (safetensors) to the ONNX graph memtree runs, and
compute the torch reference vectors it is checked against. Offline: it reads a local folder only.

    python export_onnx.py export SRC_DIR OUT_DIR --name NAME --max-tokens N [--check TEXTS_JSONL]
    python export_onnx.py reference SRC_DIR TEXTS_JSONL MAX_TOKENS VECTORS_OUT

`export` writes OUT_DIR/model.onnx (fp32, opset 14; inputs `input_ids` and `attention_mask`,
int64 [batch, sequence], both axes dynamic; output `last_hidden_state` [batch, sequence, dim]),
copies the four tokenizer files and writes memtree-model.json. With --check it then runs the
graph with onnxruntime (which must be installed) on the texts, one text per call and in padded
batches of ten, and fails unless every vector's cosine to the torch reference is at least 0.9999.

`reference` is the sentence-transformers recipe in plain torch + transformers: the folder's
fast tokenizer (truncation at MAX_TOKENS), the encoder, the attention-masked mean, L2
normalisation. It writes the vectors as float32, row-major, one row per line of TEXTS_JSONL.

Needs torch (Debian's python3-torch 1.13 is enough) and transformers (4.36.2 tested); see
scripts/fetch-models.sh, which makes the venv.
"""
import argparse
import json
import os
import shutil
import sys

import numpy as np
import torch
from transformers import AutoModel, AutoTokenizer

TOKENIZER_FILES = ["tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"]
MIN_COSINE = 0.9999


class Encoder(torch.nn.Module):
    """The bare encoder: token vectors only (no pooler head, which the recipe does not use)."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, attention_mask):
        return self.model(input_ids=input_ids, attention_mask=attention_mask, return_dict=False)[0]


def load(src):
    model = AutoModel.from_pretrained(src, local_files_only=True, add_pooling_layer=False)
    model.eval()
    return model


def texts_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def mean_unit(hidden, mask):
    """Attention-masked mean over tokens, then L2 normalisation (float64 for the reference)."""
    hidden = np.asarray(hidden, dtype=np.float64)
    mask = np.asarray(mask, dtype=np.float64)[..., None]
    v = (hidden * mask).sum(1) / mask.sum(1)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def reference_vectors(src, texts, max_tokens):
    tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
    model = load(src)
    out = []
    with torch.no_grad():
        # One text per call: no padding, so the reference owes nothing to batching.
        for text in texts:
            enc = tok([text], truncation=True, max_length=max_tokens, return_tensors="pt")
            hidden = model(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"])[0]
            out.append(mean_unit(hidden.numpy(), enc["attention_mask"].numpy())[0])
    return np.stack(out)


def export(args):
    os.makedirs(args.out, exist_ok=True)
    model = load(args.src)
    tok = AutoTokenizer.from_pretrained(args.src, local_files_only=True)
    # Two rows of different lengths, so nothing about the dummy's shape can be baked in.
    dummy = tok(["a short one", "and a somewhat longer second sentence for the trace"], padding=True, return_tensors="pt")
    part = os.path.join(args.out, "model.onnx.part")
    with torch.no_grad():
        torch.onnx.export(
            Encoder(model),
            (dummy["input_ids"], dummy["attention_mask"]),
            part,
            input_names=["input_ids", "attention_mask"],
            output_names=["last_hidden_state"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "last_hidden_state": {0: "batch", 1: "sequence"},
            },
            opset_version=14,
            do_constant_folding=True,
        )
    os.replace(part, os.path.join(args.out, "model.onnx"))
    for name in TOKENIZER_FILES:
        shutil.copyfile(os.path.join(args.src, name), os.path.join(args.out, name))
    with open(os.path.join(args.out, "memtree-model.json"), "w", encoding="utf-8") as f:
        json.dump({"name": args.name, "max_tokens": args.max_tokens}, f)
        f.write("\n")
    if args.check:
        check(args.src, args.out, texts_of(args.check), args.max_tokens)


def check(src, out, texts, max_tokens):
    try:
        import onnxruntime as ort
    except ImportError:
        sys.exit("export_onnx: --check needs onnxruntime in this Python (pip install onnxruntime==1.31.1)")
    want = reference_vectors(src, texts, max_tokens)
    tok = AutoTokenizer.from_pretrained(src, local_files_only=True)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(os.path.join(out, "model.onnx"), so, providers=["CPUExecutionProvider"])
    single = []
    for text in texts:
        enc = tok([text], truncation=True, max_length=max_tokens, return_tensors="np")
        feed = {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": enc["attention_mask"].astype(np.int64)}
        single.append(mean_unit(sess.run(None, feed)[0], feed["attention_mask"])[0])
    # Padded batches of ten texts of neighbouring lengths (the engine's way, and cheaper than
    # padding all of them to the longest): padding must not move a vector.
    order = sorted(range(len(texts)), key=lambda i: (len(tok(texts[i], truncation=True, max_length=max_tokens)["input_ids"]), i))
    batched = np.zeros_like(want)
    for start in range(0, len(order), 10):
        rows = order[start : start + 10]
        enc = tok([texts[i] for i in rows], truncation=True, max_length=max_tokens, padding=True, return_tensors="np")
        feed = {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": enc["attention_mask"].astype(np.int64)}
        batched[rows] = mean_unit(sess.run(None, feed)[0], feed["attention_mask"])
    worst = {}
    for label, got in [("one text per call", np.stack(single)), ("padded batches of ten", batched)]:
        worst[label] = float((got * want).sum(1).min())
    print(json.dumps({"texts": len(texts), "min_cosine_vs_torch": worst}))
    bad = {k: v for k, v in worst.items() if v < MIN_COSINE}
    if bad:
        sys.exit(f"export_onnx: the exported graph disagrees with torch: {bad} (need >= {MIN_COSINE})")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("src")
    e.add_argument("out")
    e.add_argument("--name", required=True)
    e.add_argument("--max-tokens", type=int, required=True)
    e.add_argument("--check")
    r = sub.add_parser("reference")
    r.add_argument("src")
    r.add_argument("texts")
    r.add_argument("max_tokens", type=int)
    r.add_argument("vectors_out")
    args = p.parse_args()
    torch.set_num_threads(2)
    if args.cmd == "export":
        export(args)
    else:
        texts = texts_of(args.texts)
        reference_vectors(args.src, texts, args.max_tokens).astype(np.float32).tofile(args.vectors_out)
        print(json.dumps({"texts": len(texts), "vectors": args.vectors_out}))


if __name__ == "__main__":
    main()
