#!/usr/bin/env python3
"""embed_bench.py — te-embed against sentence-transformers on PyTorch (eager and torch.compile).

    make bench-models            (sets up the venv, builds te-embed, fetches the model)
    python bench/models/embed_bench.py --te-embed build/apps/embed/te-embed \\
        --model build-models/all-minilm-l6-v2 [--reps N] [--no-compile]

For 1 and 2 threads and two workloads, a batch of 1 sentence of 12 words and a batch of 32
sentences of 100 words, prints sentences per second (the median pass of --reps) of:
  te-embed        its --time N measure: tokenizing, batching, the forward passes, pooling
  eager           SentenceTransformer.encode (tokenizing included), PyTorch eager
  compile         the same with the transformer under torch.compile (Inductor), warmed up on
                  the workload's shapes first
and the ratios te-embed / eager and te-embed / compile (targets: >= 1.5 and >= 1.0); then the
same rates per second of each process's CPU time (all its threads: a loaded machine changes
that less than the wall clock). The sentences are random draws from a fixed list of common
English words (seeded).
"""
import argparse
import os
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time

WORDS = ("time person year way day thing man world life hand part child eye woman place work "
         "week case point government company number group problem fact be have do say get make "
         "go know take see come think look want give use find tell ask seem feel try leave call "
         "good new first last long great little own other old right big high different small "
         "large next early young important few public bad same able to of in for on with at by "
         "from up about into over after the a and that it not he as you this but his they her "
         "she or an will my one all would there their compiler kernel tensor schedule memory "
         "model sentence embedding attention layer vector thread cache").split()


def sentences(n, words, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(words)).capitalize() + "." for _ in range(n)]


def te_embed_rate(exe, model, sents, threads, reps):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(sents) + "\n")
        path = f.name
    try:
        with open(path) as stdin:
            p = subprocess.run([exe, "--model", model, "--threads", str(threads), "--batch",
                                str(len(sents)), "--time", str(reps)], stdin=stdin,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               check=True)
    finally:
        os.unlink(path)
    ms = float(re.search(r"median ([0-9.]+) ms", p.stderr).group(1))
    cpu_ms = float(re.search(r"cpu median ([0-9.]+) ms", p.stderr).group(1))
    return len(sents) / (ms / 1e3), len(sents) / (cpu_ms / 1e3)


def torch_rate(model, sents, reps):
    for _ in range(3):  # warm-up (and, under torch.compile, compiling for these shapes)
        model.encode(sents, batch_size=len(sents))
    times, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        model.encode(sents, batch_size=len(sents))
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return len(sents) / statistics.median(times), len(sents) / statistics.median(cpu)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--te-embed", required=True)
    ap.add_argument("--model", required=True)
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--no-compile", action="store_true")
    a = ap.parse_args()
    import torch
    from sentence_transformers import SentenceTransformer

    eager = SentenceTransformer(a.model, device="cpu")
    compiled = None
    if not a.no_compile:
        compiled = SentenceTransformer(a.model, device="cpu")
        compiled[0].auto_model = torch.compile(compiled[0].auto_model)
    workloads = [("batch 1 x 12 words", sentences(1, 12, 1)),
                 ("batch 32 x 100 words", sentences(32, 100, 2))]
    print(f"te-embed vs sentence-transformers (torch {torch.__version__}), sentences/s, "
          f"median of {a.reps} passes; load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} CPUs")
    print(f"{'workload':22} {'threads':>7} {'te-embed':>9} {'eager':>9} {'compile':>9} "
          f"{'te/eager':>9} {'te/compile':>10}")
    nan = (float("nan"), float("nan"))
    rows = []
    for threads in (1, 2):
        torch.set_num_threads(threads)
        for name, sents in workloads:
            reps = a.reps * (8 if len(sents) == 1 else 1)
            te = te_embed_rate(a.te_embed, a.model, sents, threads, reps)
            ea = torch_rate(eager, sents, reps)
            co = torch_rate(compiled, sents, reps) if compiled else nan
            rows.append((name, threads, te, ea, co))
            print(f"{name:22} {threads:>7} {te[0]:9.2f} {ea[0]:9.2f} {co[0]:9.2f} "
                  f"{te[0] / ea[0]:9.2f} {te[0] / co[0]:10.2f}", flush=True)
    # On a loaded machine the wall-clock rates mostly measure how much of a core each process
    # got; per second of the process's CPU time (all its threads) they measure the work.
    print(f"\nthe same per CPU second (median pass's process CPU time, all threads)")
    print(f"{'workload':22} {'threads':>7} {'te-embed':>9} {'eager':>9} {'compile':>9} "
          f"{'te/eager':>9} {'te/compile':>10}")
    for name, threads, te, ea, co in rows:
        print(f"{name:22} {threads:>7} {te[1]:9.2f} {ea[1]:9.2f} {co[1]:9.2f} "
              f"{te[1] / ea[1]:9.2f} {te[1] / co[1]:10.2f}")
    print(f"load average {os.getloadavg()[0]:.1f} at the end")
    return 0


sys.exit(main())
