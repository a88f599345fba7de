#!/usr/bin/env bash
# transfer.sh [BUILD_DIR] [TRIALS] — does a cost model trained on other workloads' logs
# (te-tune tune --transfer-logs) reach a good schedule in fewer trials?
#
# Tunes matmuls of three sizes (the "earlier logs"), then a fourth size twice per seed: cold (a
# fresh model) and warm (--transfer-logs on the three logs). Prints, for each run, the trials it
# took to reach 90% of the best throughput any run of that workload found, and its final best.
# Bench-only: tuning runs measure time, so run it on a quiet machine.
set -euo pipefail
build="$(realpath "${1:-build}")"
trials="${2:-48}"
tool="$build/te-tune"
work=$(mktemp -d "${TMPDIR:-/tmp}/te_transfer.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/earlier"
common=(--trials "$trials" --quiet --confirm 0 --threads 1)
for m in 256 384 512; do
  "$tool" tune matmul M=$m N=$m K=$m "${common[@]}" --log "$work/earlier/mm$m.jsonl" > /dev/null
done
for seed in 1 2; do
  "$tool" tune matmul M=448 N=448 K=448 "${common[@]}" --seed $seed --log "$work/cold$seed.jsonl" \
    > /dev/null
  "$tool" tune matmul M=448 N=448 K=448 "${common[@]}" --seed $seed --log "$work/warm$seed.jsonl" \
    --transfer-logs "$work/earlier" > /dev/null
done
python3 - "$work" <<'PY'
import json, statistics, sys, os
work = sys.argv[1]
runs = {}
for name in sorted(os.listdir(work)):
    if not name.endswith(".jsonl"):
        continue
    thr = []
    for line in open(os.path.join(work, name)):
        r = json.loads(line)
        c = r["result"]["costs"]
        thr.append(r["flops"] / statistics.median(c) * 1e-9 if c and r["result"]["error"] == 0 else 0)
    runs[name[:-6]] = thr
best = max(max(t) for t in runs.values())
print(f"matmul 448^3, 90% of the best of all runs ({best:.1f} GFLOP/s) = {0.9 * best:.1f} GFLOP/s")
print("run     trials to 90%   final best GFLOP/s")
for name, thr in runs.items():
    so_far, reach = 0, None
    for i, t in enumerate(thr):
        so_far = max(so_far, t)
        if reach is None and so_far >= 0.9 * best:
            reach = i + 1
    print(f"{name:7s} {str(reach) if reach else 'not in ' + str(len(thr)):>13s}   {max(thr):8.1f}")
PY
