#!/usr/bin/env python3
"""Export wordllama's static 256-d model (a token-embedding table, average pooling) to a model
folder memtree runs, and compute the reference vectors of wordllama's own `embed`. Offline: it
reads the files of the installed `wordllama` package only.

    python export_static.py export OUT_DIR [--max-tokens N] [--ort-lib PATH] [--check TEXTS_JSONL]
    python export_static.py reference TEXTS_JSONL VECTORS_OUT TEXTS_OUT

Needs a Python with `wordllama` (0.4.0.post1 tested; the wheel carries the weights
`weights/l2_supercat_256.safetensors` and the Llama-2 tokenizer
`tokenizers/l2_supercat_tokenizer_config.json`), `onnx`, and for --check `onnxruntime`:

    python3 -m venv V && V/bin/pip install wordllama==0.4.0.post1 onnx onnxruntime==1.31.1

What wordllama's `embed` does (inference.py): token ids without special tokens, no
truncation; the table's rows (float16, widened to float32) averaged over the real tokens;
L2 normalisation when `norm=True` (cosine similarity is the same either way).

What memtree does with a model folder: the tokenizer's post-processor adds `<s>` first,
truncation at `max_tokens` (`<s>` included), the graph's token vectors averaged over the
attention mask, L2 normalisation. So that `<s>` does not move the mean, the graph scales the
vector at position 0 (always the `<s>` the post-processor put there) by EPS: a mean over n+1
tokens with one nearly-zero vector has the direction of the mean over the n real ones, and a
text with no tokens at all (the empty string) still gets a vector (`<s>`'s direction) where
wordllama's would be 0/0. Not by zero: the engine rejects a zero vector.

`export` writes OUT_DIR/model.onnx (opset 14; inputs `input_ids` and `attention_mask`, int64
[batch, sequence]; output `last_hidden_state` [batch, sequence, 256] float32: table rows,
position 0 scaled by EPS, padding zeroed), the wheel's tokenizer as tokenizer.json, the three
small tokenizer/config files, memtree-model.json, and with --ort-lib a symlink to the ONNX
Runtime library. With --check it runs the engine's recipe in Python (tokenizers + onnxruntime,
one text per call and padded batches of ten) and fails unless every vector's cosine to
wordllama's `embed(norm=True)` is at least 0.9999 (texts without tokens left out).

`reference` writes wordllama's `embed(texts, norm=True)` as float32, row-major, for
`examples/embed_check.rs`; texts with no tokens (wordllama returns 0/0 for them) are left out,
and the texts kept are written to TEXTS_OUT, one JSON string per line.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from safetensors.numpy import load_file
import wordllama
from wordllama import WordLlama

WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
# Position 0's scale: small enough that `<s>` does not turn a vector (cosine moves ~1e-9), large
# enough that a lone `<s>` is far from the engine's degenerate-vector floor.
EPS = 1e-4
# memtree's largest `max_tokens`; the per-position scales are a constant this long.
MAX_POSITIONS = 8192
MIN_COSINE = 0.9999
BOS = "<s>"
EOS = "</s>"
UNK = "<unk>"


def package_file(rel):
    return os.path.join(os.path.dirname(wordllama.__file__), rel)


def texts_of(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def graph(table):
    """The ONNX model: Gather the rows, widen to float32, times (position scale x mask)."""
    scales = np.ones(MAX_POSITIONS, dtype=np.float32)
    scales[0] = EPS
    inits = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(scales, "position_scale"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "two"),
    ]
    nodes = [
        helper.make_node("Gather", ["table", "input_ids"], ["rows16"], axis=0),
        helper.make_node("Cast", ["rows16"], ["rows"], to=TensorProto.FLOAT),
        helper.make_node("Shape", ["input_ids"], ["shape"]),
        helper.make_node("Slice", ["shape", "one", "two"], ["seq"]),
        helper.make_node("Slice", ["position_scale", "zero", "seq"], ["scale"]),
        helper.make_node("Unsqueeze", ["scale", "one"], ["scale_col"]),  # [seq, 1]
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "two"], ["mask_col"]),  # [batch, seq, 1]
        helper.make_node("Mul", ["mask_col", "scale_col"], ["weight"]),
        helper.make_node("Mul", ["rows", "weight"], ["last_hidden_state"]),
    ]
    g = helper.make_graph(
        nodes,
        "wordllama_static",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "sequence"]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch", "sequence"]),
        ],
        [helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, ["batch", "sequence", table.shape[1]])],
        inits,
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)], producer_name="memtree export_static.py")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def write_json(path, value):
    with open(path, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def export(args):
    if not 2 <= args.max_tokens <= MAX_POSITIONS:
        sys.exit(f"export_static: --max-tokens must be from 2 to {MAX_POSITIONS}")
    os.makedirs(args.out, exist_ok=True)
    table = load_file(package_file(WEIGHTS))["embedding.weight"]
    model = graph(np.ascontiguousarray(table))
    part = os.path.join(args.out, "model.onnx.part")
    onnx.save(model, part)
    os.replace(part, os.path.join(args.out, "model.onnx"))
    with open(package_file(TOKENIZER), encoding="utf-8") as f:
        tok = json.load(f)
    # As wordllama leaves it: no truncation or padding in the file (memtree sets its own).
    tok["truncation"] = None
    tok["padding"] = None
    write_json(os.path.join(args.out, "tokenizer.json"), tok)
    write_json(
        os.path.join(args.out, "config.json"),
        {
            "model_type": "wordllama-static",
            "wordllama_config": "l2_supercat",
            "hidden_size": int(table.shape[1]),
            "vocab_size": int(table.shape[0]),
            "pad_token_id": 2,
        },
    )
    write_json(os.path.join(args.out, "special_tokens_map.json"), {"bos_token": BOS, "eos_token": EOS, "unk_token": UNK})
    # wordllama's training config pads with `</s>`; padding is masked out either way.
    write_json(
        os.path.join(args.out, "tokenizer_config.json"),
        {"model_max_length": MAX_POSITIONS, "pad_token": EOS, "bos_token": BOS, "eos_token": EOS, "unk_token": UNK},
    )
    write_json(os.path.join(args.out, "memtree-model.json"), {"name": args.name, "max_tokens": args.max_tokens})
    if args.ort_lib:
        link = os.path.join(args.out, os.path.basename(args.ort_lib))
        if os.path.lexists(link):
            os.remove(link)
        os.symlink(os.path.abspath(args.ort_lib), link)
    print(json.dumps({"out": args.out, "table": list(table.shape), "max_tokens": args.max_tokens}))
    if args.check:
        check(args.out, texts_of(args.check), args.max_tokens)


def wordllama_vectors(texts):
    """wordllama's own `embed(norm=True)`, and which texts have tokens at all (its tokenizer pads)."""
    # wordllama 0.4.0.post1 looks for its bundled tokenizer under `tokenizer/`, not the
    # `tokenizers/` the wheel ships it in, then downloads it; point its cache at the bundled one.
    with tempfile.TemporaryDirectory() as cache:
        os.mkdir(os.path.join(cache, "tokenizers"))
        os.symlink(package_file(TOKENIZER), os.path.join(cache, TOKENIZER))
        wl = WordLlama.load(config="l2_supercat", dim=256, cache_dir=cache, disable_download=True)
    assert wl.embedding.shape[1] == 256, wl.embedding.shape
    has_tokens = [sum(e.attention_mask) > 0 for e in wl.tokenizer.encode_batch(texts, add_special_tokens=False)]
    with np.errstate(invalid="ignore", divide="ignore"):
        vectors = wl.embed(texts, norm=True)
    return vectors, has_tokens


def check(out, texts, max_tokens):
    import onnxruntime as ort
    from tokenizers import Tokenizer

    want, has_tokens = wordllama_vectors(texts)
    tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    tok.enable_truncation(max_tokens)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    sess = ort.InferenceSession(os.path.join(out, "model.onnx"), so, providers=["CPUExecutionProvider"])

    def run(rows):
        encs = tok.encode_batch([texts[i] for i in rows], add_special_tokens=True)
        n = max(len(e.ids) for e in encs)
        ids = np.full((len(rows), n), 2, dtype=np.int64)
        mask = np.zeros((len(rows), n), dtype=np.int64)
        for r, e in enumerate(encs):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        hidden = sess.run(None, {"input_ids": ids, "attention_mask": mask})[0].astype(np.float64)
        v = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    single = np.concatenate([run([i]) for i in range(len(texts))])
    batched = np.zeros_like(single)
    order = sorted(range(len(texts)), key=lambda i: (len(tok.encode(texts[i]).ids), i))
    for start in range(0, len(order), 10):
        rows = order[start : start + 10]
        batched[rows] = run(rows)
    keep = np.array(has_tokens)
    worst = {}
    for label, got in [("one text per call", single), ("padded batches of ten", batched)]:
        worst[label] = float((got[keep] * want[keep]).sum(1).min())
    print(json.dumps({"texts": len(texts), "compared": int(keep.sum()), "min_cosine_vs_wordllama": worst}))
    bad = {k: v for k, v in worst.items() if v < MIN_COSINE}
    if bad:
        sys.exit(f"export_static: the folder disagrees with wordllama: {bad} (need >= {MIN_COSINE})")


def reference(args):
    texts = texts_of(args.texts)
    vectors, has_tokens = wordllama_vectors(texts)
    kept = [i for i, ok in enumerate(has_tokens) if ok]
    vectors[kept].astype(np.float32).tofile(args.vectors_out)
    with open(args.texts_out, "w", encoding="utf-8") as f:
        for i in kept:
            f.write(json.dumps(texts[i], ensure_ascii=False) + "\n")
    left_out = [i for i, ok in enumerate(has_tokens) if not ok]
    print(json.dumps({"texts": len(texts), "kept": len(kept), "left_out_no_tokens": left_out, "vectors": args.vectors_out}))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export")
    e.add_argument("out")
    e.add_argument("--name", default="wordllama-l2-256")
    e.add_argument("--max-tokens", type=int, default=MAX_POSITIONS)
    e.add_argument("--ort-lib")
    e.add_argument("--check")
    r = sub.add_parser("reference")
    r.add_argument("texts")
    r.add_argument("vectors_out")
    r.add_argument("texts_out")
    args = p.parse_args()
    if args.cmd == "export":
        export(args)
    else:
        reference(args)


if __name__ == "__main__":
    main()
