#!/usr/bin/env python3
"""Writes the tiny cross-encoders the rerank tests load (tests/data/reranker/), so that the
stage's plumbing is tested with a real ONNX graph and a real tokenizer, without the weights
of a trained model (which could not ship: README "Reranking").

  tiny/model.onnx, tiny/tokenizer.json   a one-layer BERT sequence classifier (hidden 16),
                                         random weights (seeded), a 200-token WordPiece vocab
  embedder/model.onnx                    the same encoder without its head: its output is
                                         token vectors, not one score per pair (wrong outputs)
  big-vocab/tokenizer.json               a tokenizer with more tokens than the model's
                                         embedding has rows (a vocabulary that does not match)

Run with a Python that has torch, transformers and tokenizers (the venv of
`scripts/fetch-models.sh all-mpnet-base-v2`, or any current PyTorch):
  python scripts/make-test-reranker.py tests/data/reranker
The files are committed; rerunning with another torch may change their bytes, not what the
tests check.
"""

import inspect
import json
import os
import string
import sys

import torch
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors
from transformers import BertConfig, BertForSequenceClassification, BertModel

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the a an and or of to in on at for with from by is was are were be been i you he she it we they "
    "my your his her our their what when where who which how why did do does have has had will "
    "launch phoenix moves may june july meeting project trip hiking dog cat book concert paris "
    "berlin rome friday monday week weekend yesterday today tomorrow alice bob carol dave "
    "team plan budget report deadline release bug fix test code review"
).split()


def vocab(extra=0):
    tokens = list(SPECIAL)
    tokens += list(string.ascii_lowercase) + ["##" + c for c in string.ascii_lowercase]
    tokens += list(string.digits) + list(".,!?'\":;-()")
    tokens += [w for w in WORDS if w not in tokens]
    tokens += [f"extra{i}" for i in range(extra)]
    return {t: i for i, t in enumerate(tokens)}


def tokenizer(v, path):
    tok = Tokenizer(models.WordPiece(vocab=v, unk_token="[UNK]", max_input_chars_per_word=100))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True, clean_text=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", v["[CLS]"]), ("[SEP]", v["[SEP]"])],
    )
    tok.save(path)


def export(module, path, outputs):
    ids = torch.tensor([[2, 60, 3, 61, 62, 3]])
    mask = torch.ones_like(ids)
    types = torch.tensor([[0, 0, 0, 1, 1, 1]])
    kwargs = dict(
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=outputs,
        dynamic_axes={
            "input_ids": {0: "batch", 1: "seq"},
            "attention_mask": {0: "batch", 1: "seq"},
            "token_type_ids": {0: "batch", 1: "seq"},
            outputs[0]: {0: "batch"},
        },
        opset_version=17,
    )
    if "dynamo" in inspect.signature(torch.onnx.export).parameters:
        kwargs["dynamo"] = False
    with torch.no_grad():
        torch.onnx.export(module, (ids, mask, types), path, **kwargs)


class Logits(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).logits


class Hidden(torch.nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, input_ids, attention_mask, token_type_ids):
        return self.m(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids).last_hidden_state


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/data/reranker"
    torch.manual_seed(7)
    v = vocab()
    config = BertConfig(
        vocab_size=len(v),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=512,
        type_vocab_size=2,
        num_labels=1,
    )
    model = BertForSequenceClassification(config).eval()
    for d in ["tiny", "embedder", "big-vocab"]:
        os.makedirs(os.path.join(out, d), exist_ok=True)
    export(Logits(model), os.path.join(out, "tiny", "model.onnx"), ["logits"])
    tokenizer(v, os.path.join(out, "tiny", "tokenizer.json"))
    with open(os.path.join(out, "tiny", "memtree-reranker.json"), "w") as f:
        json.dump({"name": "tiny-test-cross-encoder", "max_tokens": 64}, f, indent=2)
    export(Hidden(model.bert), os.path.join(out, "embedder", "model.onnx"), ["last_hidden_state"])
    tokenizer(v, os.path.join(out, "embedder", "tokenizer.json"))
    tokenizer(vocab(extra=500), os.path.join(out, "big-vocab", "tokenizer.json"))
    print(f"vocab {len(v)} tokens; written under {out}")


if __name__ == "__main__":
    main()
