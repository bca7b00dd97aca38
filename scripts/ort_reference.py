#!/usr/bin/env python3
"""The physical reference for the engine's embedding rate (examples/embed_throughput.rs):
the same model.onnx and tokenizer.json run by plain onnxruntime on ONE intra-op thread, one
text per call (no padding at all), mean pooling and L2 normalisation in numpy.

    target/ort-venv/bin/python scripts/ort_reference.py MODEL_DIR TEXTS_JSONL MAX_TOKENS [VECTORS_OUT]

TEXTS_JSONL holds one JSON string per line. Prints one JSON object: texts, tokens, wall and
CPU seconds (this process). With VECTORS_OUT, also writes the vectors (float32, row-major).
The venv: python3 -m venv target/ort-venv &&
target/ort-venv/bin/pip install onnxruntime==1.31.1 tokenizers==0.23.2 numpy
"""
import json
import sys
import time

import numpy as np
import onnxruntime as ort
from tokenizers import Tokenizer


def main():
    model_dir, texts_path, max_tokens = sys.argv[1], sys.argv[2], int(sys.argv[3])
    out = sys.argv[4] if len(sys.argv) > 4 else None
    texts = [json.loads(line) for line in open(texts_path, encoding="utf-8") if line.strip()]
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.no_padding()
    tok.enable_truncation(max_tokens)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(f"{model_dir}/model.onnx", so, providers=["CPUExecutionProvider"])
    names = {i.name for i in sess.get_inputs()}
    # Warm-up: the first call pays for lazy initialisation.
    enc = tok.encode("warm up")
    feed = {"input_ids": np.array([enc.ids], dtype=np.int64), "attention_mask": np.array([enc.attention_mask], dtype=np.int64)}
    if "token_type_ids" in names:
        feed["token_type_ids"] = np.array([enc.type_ids], dtype=np.int64)
    sess.run(None, feed)

    vecs = []
    tokens = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for text in texts:
        enc = tok.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        mask = np.array([enc.attention_mask], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.array([enc.type_ids], dtype=np.int64)
        h = sess.run(None, feed)[0]
        v = (h * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        vecs.append(v[0].astype(np.float32))
        tokens += len(enc.ids)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    if out:
        np.stack(vecs).astype(np.float32).tofile(out)
    print(json.dumps({"texts": len(texts), "tokens": tokens, "wall_s": wall, "cpu_s": cpu}))


if __name__ == "__main__":
    main()
