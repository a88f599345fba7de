#!/usr/bin/env bash
# buckets.sh [BUILD_DIR] [TRIALS] — what shape buckets buy (docs/tuning-buckets.md): a dense
# layer Y = X W (X: n x 384, W: 384 x 1536, n the tokens) tuned with `te-tune tune --bucket
# n=16,64,256`, then timed at several n as the dispatching kernel and as the kernel of one
# bucket's schedule only (what tuning at n = 256 alone gives every n), one thread, in one
# process (te's Python bindings). Prints microseconds per call (median of process CPU time
# over repeated calls) and the ratio.
# Bench-only: tuning runs measure time, so run it on a quiet machine.
set -euo pipefail
build="$(realpath "${1:-build}")"
trials="${2:-32}"
work=$(mktemp -d "${TMPDIR:-/tmp}/te_buckets.XXXXXX")
trap 'rm -rf "$work"' EXIT
wl='Y[i, j] = sum(X[i, k]*W[k, j], k) where X: f32[n, 384], W: f32[384, 1536], k: [0, 384)'
"$build/te-tune" tune "$wl" --bucket n=16,64,256 --trials "$trials" --threads 1 --target llvm \
  --log "$work/log.jsonl" --quiet | tail -5
[ -n "${TE_BUCKETS_KEEP_LOG:-}" ] && cp "$work/log.jsonl" "$TE_BUCKETS_KEEP_LOG"
python_bin="${TE_PYTHON:-$HOME/.cache/te/venv/bin/python}"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
PYTHONPATH="$repo/python${PYTHONPATH:+:$PYTHONPATH}" TE_LIBRARY="$build/libte.so" "$python_bin" - "$work/log.jsonl" "$wl" <<'PY'
import json, statistics, sys, time
import numpy as np
import te
log, wl = sys.argv[1:]
te.set_num_threads(1)
index = [json.loads(l) for l in open(log) if '"buckets"' in l][-1]
# the same log with an index of bucket 256 alone: its schedule for every n
one = dict(index, buckets=dict(size="n", values=[256], keys=index["buckets"]["keys"][-1:]))
with open(log + ".one", "w") as f:
    f.writelines(l for l in open(log) if '"buckets"' not in l)
    f.write(json.dumps(one) + "\n")

def kernel(path):
    outs = te.parse(wl)
    s = te.create_schedule(outs)
    te.apply_best(s, path, target="llvm")
    return te.build(s, te.workload_inputs(outs) + outs)

dispatch, single = kernel(log), kernel(log + ".one")
rng = np.random.default_rng(0)
w = rng.standard_normal((384, 1536)).astype(np.float32)
print("n      dispatch_us  bucket256_only_us  speedup")
for n in (1, 8, 16, 24, 48, 64, 100, 200, 256, 300):
    x = rng.standard_normal((n, 384)).astype(np.float32)
    ya, yb = np.empty((n, 1536), np.float32), np.empty((n, 1536), np.float32)
    times = {id(dispatch): [], id(single): []}
    reps = max(3, int(2000 / n))
    for _ in range(7):  # alternating rounds
        for f, y in ((dispatch, ya), (single, yb)):
            t0 = time.process_time()
            for _ in range(reps):
                f(x, w, y)
            times[id(f)].append((time.process_time() - t0) / reps * 1e6)
    np.testing.assert_allclose(ya, x @ w, rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(yb, x @ w, rtol=1e-4, atol=1e-3)
    a, b = statistics.median(times[id(dispatch)]), statistics.median(times[id(single)])
    print(f"{n:<6d} {a:11.1f}  {b:17.1f}  {b / a:7.2f}x")
PY
