#!/usr/bin/env python3
"""torch_llama.py: the LLaMA decoder of llama2.c in plain PyTorch (eager), the PyTorch row of
`make bench-llama` (bench/llama/run.sh).

    torch_llama.py CHECKPOINT [--threads N] [--prompt 128] [--gen 32] [--rounds 3]
                   [--greedy N]

CHECKPOINT is a version-1 llama2.c file (f32; te-llama-make-checkpoint --format v1 writes one):
a 256-byte header (magic "ak42", version 1, dim, hidden_dim, n_layers, n_heads, n_kv_heads,
vocab_size, seq_len, the shared-classifier flag), then rms_att, rms_ffn, rms_final, the
embedding, wq, wk, wv, wo, w1, w2, w3 and, when not shared, the classifier.

The model is llama2.c's math written as a PyTorch user would: nn.functional.linear for every
product, RoPE on (even, odd) pairs with llama2.c's frequencies, grouped-query attention over a
KV cache through scaled_dot_product_attention, SwiGLU. The prompt runs as one batch (a causal
mask), as te-llama runs it; then tokens are generated one at a time.

Prints the prompt's and the generation's tokens per second (generation: the best of --rounds
rounds of --gen tokens), per wall-clock second and per CPU second / threads, as
te-llama-bench does (on a shared machine the wall clock measures the scheduler). --greedy N prints instead the N greedy tokens that follow BOS (token 1),
which `te-llama -t 0` with an empty prompt prints as text: a check that this is the same model.
"""
import argparse
import struct
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def load(path):
    with open(path, "rb") as f:
        head = f.read(256)
    magic, version, dim, hidden, layers, heads, kv_heads, vocab, seq = struct.unpack("<Ii7i", head[:36])
    if magic != 0x616B3432 or version != 1:
        sys.exit(f"{path}: not a version-1 llama2.c checkpoint (magic {magic:#x}, version {version})")
    shared = head[36] != 0
    raw = np.memmap(path, dtype=np.float32, mode="r", offset=256)
    at = 0

    def take(*shape):
        nonlocal at
        n = int(np.prod(shape))
        t = torch.from_numpy(np.array(raw[at : at + n]).reshape(shape))
        at += n
        return t

    hs = dim // heads
    kv = kv_heads * hs
    w = {}
    w["rms_att"] = take(layers, dim)
    w["rms_ffn"] = take(layers, dim)
    w["rms_final"] = take(dim)
    w["emb"] = take(vocab, dim)
    for name, rows, cols in (("wq", dim, dim), ("wk", kv, dim), ("wv", kv, dim), ("wo", dim, dim),
                             ("w1", hidden, dim), ("w2", dim, hidden), ("w3", hidden, dim)):
        w[name] = take(layers, rows, cols)
    w["cls"] = w["emb"] if shared else take(vocab, dim)
    cfg = dict(dim=dim, hidden=hidden, layers=layers, heads=heads, kv_heads=kv_heads, vocab=vocab,
               seq=seq, hs=hs)
    return cfg, w


class Llama:
    def __init__(self, cfg, w):
        self.c, self.w = cfg, w
        c = cfg
        j = torch.arange(0, c["hs"], 2, dtype=torch.float32)
        freq = 1.0 / torch.pow(10000.0, j / c["hs"])
        ang = torch.outer(torch.arange(c["seq"], dtype=torch.float32), freq)
        self.cos, self.sin = torch.cos(ang), torch.sin(ang)  # [seq, hs/2]
        shape = (c["layers"], c["kv_heads"], c["seq"], c["hs"])
        self.kc, self.vc = torch.zeros(shape), torch.zeros(shape)

    @staticmethod
    def rmsnorm(x, g):
        return g * (x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5))

    def rope(self, x, pos):  # x [T, H, hs]: pairs (2j, 2j+1) turned by pos * freq_j
        T = x.shape[0]
        cos = self.cos[pos : pos + T, None, :]
        sin = self.sin[pos : pos + T, None, :]
        x0, x1 = x[..., 0::2], x[..., 1::2]
        return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).flatten(-2)

    def forward(self, tokens, pos):
        """Logits after the last of tokens (at positions pos .. pos + len - 1)."""
        c, w = self.c, self.w
        T, H, G, hs = len(tokens), c["heads"], c["kv_heads"], c["hs"]
        x = w["emb"][torch.tensor(tokens)]
        mask = None
        if T > 1:  # token t sees the cache and the prompt's tokens up to itself
            mask = torch.ones(T, pos + T, dtype=torch.bool).tril(diagonal=pos)
        for l in range(c["layers"]):
            xb = self.rmsnorm(x, w["rms_att"][l])
            q = self.rope(F.linear(xb, w["wq"][l]).view(T, H, hs), pos)
            k = self.rope(F.linear(xb, w["wk"][l]).view(T, G, hs), pos)
            v = F.linear(xb, w["wv"][l]).view(T, G, hs)
            self.kc[l, :, pos : pos + T] = k.transpose(0, 1)
            self.vc[l, :, pos : pos + T] = v.transpose(0, 1)
            keys = self.kc[l, :, : pos + T].repeat_interleave(H // G, dim=0)
            vals = self.vc[l, :, : pos + T].repeat_interleave(H // G, dim=0)
            att = F.scaled_dot_product_attention(q.transpose(0, 1), keys, vals, attn_mask=mask)
            x = x + F.linear(att.transpose(0, 1).reshape(T, H * hs), w["wo"][l])
            xb = self.rmsnorm(x, w["rms_ffn"][l])
            h = F.silu(F.linear(xb, w["w1"][l])) * F.linear(xb, w["w3"][l])
            x = x + F.linear(h, w["w2"][l])
        return F.linear(self.rmsnorm(x[-1], w["rms_final"]), w["cls"])


def bench_tokens(n):  # te-llama-bench's tokens
    return [3 + (i * 7919) % 20000 for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checkpoint")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--gen", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--greedy", type=int, default=0)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    cfg, w = load(a.checkpoint)
    with torch.inference_mode():
        if a.greedy:
            m, tok, out = Llama(cfg, w), 1, []
            for pos in range(a.greedy):
                tok = int(torch.argmax(m.forward([tok], pos)))
                out.append(tok)
            print(" ".join(map(str, out)))
            return
        toks = bench_tokens(a.prompt + a.rounds * a.gen)
        m = Llama(cfg, w)
        m.forward(toks[:8], 0)  # warm up (first-call allocations), then a fresh cache
        m = Llama(cfg, w)
        t0, c0 = time.perf_counter(), time.process_time()
        m.forward(toks[: a.prompt], 0)
        prompt = rates(a.prompt, t0, c0, a.threads)
        best, pos = (0.0, 0.0), a.prompt
        for _ in range(a.rounds):
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(a.gen):
                m.forward([toks[pos]], pos)
                pos += 1
            r = rates(a.gen, t0, c0, a.threads)
            best = (max(best[0], r[0]), max(best[1], r[1]))
    print(f"PyTorch   prompt {prompt[0]:8.2f} tok/s (cpu {prompt[1]:8.2f})   gen {best[0]:8.2f} tok/s "
          f"(cpu {best[1]:8.2f})   torch {torch.__version__}, eager, f32")


def rates(n, t0, c0, threads):
    """(per wall-clock second, per CPU second / threads), as te-llama-bench reports them."""
    return n / (time.perf_counter() - t0), n * threads / (time.process_time() - c0)


if __name__ == "__main__":
    main()
