#!/usr/bin/env bash
# run.sh [BUILD_DIR] [compare.py options] — te-tune against TVM MetaSchedule (make bench-tuners).
#
# Sets up TVM's venv (scripts/setup-tvm.sh), then runs bench/tuners/compare.py in it with te's
# Python package from python/ and libte and te-tune from BUILD_DIR (default build). Options go to
# compare.py: e.g. `--trials 8 --workloads matmul,softmax` checks the whole path in minutes; the
# default (64 and 300 trials, every workload) takes hours. Bench-only: both tuners measure time,
# so run it on a quiet machine.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build="$(realpath "${1:-$repo/build}")"
shift || true
venv="$("$repo/scripts/setup-tvm.sh" | tail -1)"
# OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE (set on some machines for older OpenBLAS builds) slow
# numpy's current OpenBLAS: unset here alone, as `make bench` does
exec env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE TE_LIBRARY="$build/libte.so" \
  PYTHONPATH="$repo/python${PYTHONPATH:+:$PYTHONPATH}" \
  "$venv/bin/python" "$here/compare.py" --te-tune "$build/te-tune" "$@"
