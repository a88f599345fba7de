#!/usr/bin/env bash
# bench/llama/run.sh — te-llama against the plain C decoder (llama2.c's run.c way: naive
# matrix-vector loops, #pragma omp parallel for, -Ofast -march=native -fopenmp), on random
# checkpoints of the 110M and 1.1B (TinyLlama-shaped, grouped-query) configs, f32 and int8 Q8_0:
# prompt tok/s (a 128-token prompt), generated tok/s, 1 and 2 threads, and generation as a
# fraction of its bandwidth limit. `make bench-llama` runs it.
#
#   bench/llama/run.sh [BUILD_DIR] [DATA_DIR]
#     BUILD_DIR  a configured te build (default: build); te-llama-bench is built in it
#     DATA_DIR   where the checkpoints are written (default: BUILD_DIR/llama-bench; 1.1B f32
#                takes 4.4 GB, all four 6.5 GB)
#   LLAMA_BENCH_CONFIGS="110M 1.1B"  LLAMA_BENCH_FORMATS="legacy q8"  LLAMA_BENCH_THREADS="1 2"
#   LLAMA_BENCH_GEN=32 (tokens generated per round; 3 rounds)
#   OMP_WAIT_POLICY=passive by default: on a shared machine spinning threads that lose their
#   core stall every parallel loop of both engines
# The table is also written to DATA_DIR/results.txt.
set -euo pipefail
build=${1:-build}
data=${2:-$build/llama-bench}
configs=${LLAMA_BENCH_CONFIGS:-110M 1.1B}
formats=${LLAMA_BENCH_FORMATS:-legacy q8}
threads=${LLAMA_BENCH_THREADS:-1 2}
gen=${LLAMA_BENCH_GEN:-32}

cmake --build "$build" --target te-llama-bench te-llama-make-checkpoint -j2 >/dev/null
mkdir -p "$data"
out="$data/results.txt"
: >"$out"
for c in $configs; do
  for f in $formats; do
    ck="$data/$c-$f.bin"
    [ -s "$ck" ] || "$build/apps/llama/te-llama-make-checkpoint" --config "$c" --format "$f" --out "$ck"
    for t in $threads; do
      echo "== $c $f, $t thread(s)" | tee -a "$out"
      OMP_NUM_THREADS=$t OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive} "$build/apps/llama/te-llama-bench" "$ck" --threads "$t" --prompt 128 \
        --gen "$gen" | tee -a "$out"
    done
  done
done
echo "results in $out"
