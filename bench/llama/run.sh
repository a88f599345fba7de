#!/usr/bin/env bash
# bench/llama/run.sh — te-llama against the plain C decoder (llama2.c's run.c way: naive
# matrix-vector loops, #pragma omp parallel for, -Ofast -march=native -fopenmp) and against
# PyTorch (bench/llama/torch_llama.py, where torch is installed), on random checkpoints of the
# 110M and 1.1B (TinyLlama-shaped, grouped-query) configs: prompt tok/s (a 128-token prompt),
# generated tok/s, 1 and 2 threads, and generation as a fraction of its bandwidth limit.
# `make bench-llama` runs it.
#
#   bench/llama/run.sh [BUILD_DIR] [DATA_DIR]
#     BUILD_DIR  a configured te build (default: build); te-llama-bench is built in it
#     DATA_DIR   where the checkpoints are written (default: BUILD_DIR/llama-bench; the 1.1B
#                model takes 4.4 GB at f32, 2.2 GB at bf16, 1.2 GB at Q8_0)
#   LLAMA_BENCH_CONFIGS="110M 1.1B"  LLAMA_BENCH_THREADS="1 2"  LLAMA_BENCH_GEN=32 (tokens a
#   round; 3 rounds)
#   LLAMA_BENCH_FORMATS="v1 bf16 q8 q8-runq": te-llama on the f32 (version 1), bf16 and Q8_0
#     files against the plain C on the f32 file (the targets are ratios to plain C at f32);
#     q8-runq: te-llama and the plain C (runq.c's way) both on the Q8_0 file
#   LLAMA_BENCH_TORCH=1: also PyTorch on the f32 file (0: skip); PYTHON (default: the te venv)
#   OMP_WAIT_POLICY=passive by default: on a shared machine spinning threads that lose their
#   core stall every parallel loop of both engines
# f32 runs on the version-1 file: its tensors start at 64-byte boundaries (the legacy layout's
# 28-byte header leaves every tensor misaligned, which costs te's vector loads and run.c's alike).
# The table is also written to DATA_DIR/results.txt.
set -euo pipefail
build=${1:-build}
data=${2:-$build/llama-bench}
configs=${LLAMA_BENCH_CONFIGS:-110M 1.1B}
formats=${LLAMA_BENCH_FORMATS:-v1 bf16 q8 q8-runq}
threads=${LLAMA_BENCH_THREADS:-1 2}
gen=${LLAMA_BENCH_GEN:-32}
torch=${LLAMA_BENCH_TORCH:-1}
python=${PYTHON:-$HOME/.cache/te/venv/bin/python}
here=$(cd "$(dirname "$0")" && pwd)

cmake --build "$build" --target te-llama-bench te-llama-make-checkpoint -j2 >/dev/null
mkdir -p "$data"
out="$data/results.txt"
: >"$out"
checkpoint() { # config format -> path (written once)
  local ck="$data/$1-$2.bin"
  [ -s "$ck" ] || "$build/apps/llama/te-llama-make-checkpoint" --config "$1" --format "$2" --out "$ck"
  echo "$ck"
}
for c in $configs; do
  f32=$(checkpoint "$c" v1)
  for f in $formats; do
    case $f in
    q8-runq) ck=$(checkpoint "$c" q8) plain=() ;;
    v1) ck=$f32 plain=() ;;
    *) ck=$(checkpoint "$c" "$f") plain=(--plain "$f32") ;;
    esac
    for t in $threads; do
      echo "== $c $f, $t thread(s)" | tee -a "$out"
      OMP_NUM_THREADS=$t OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "$build/apps/llama/te-llama-bench" "$ck" \
        --threads "$t" --prompt 128 --gen "$gen" "${plain[@]}" | tee -a "$out"
    done
  done
  if [ "$torch" = 1 ] && "$python" -c "import torch" 2>/dev/null; then
    for t in $threads; do
      echo "== $c PyTorch f32, $t thread(s)" | tee -a "$out"
      OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "$python" "$here/torch_llama.py" "$f32" --threads "$t" --prompt 128 --gen "$gen" | tee -a "$out"
    done
  fi
done
echo "results in $out"
