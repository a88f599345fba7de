#!/usr/bin/env bash
# setup-bench.sh — install the benchmark anchors (bench/): OpenBLAS, oneDNN and Halide 14, only
# those missing. Not needed by `make demo` or `make test`. Runs setup.sh first.
set -euo pipefail

here="$(dirname "${BASH_SOURCE[0]}")"
"$here/setup.sh"
exec "$here/install-packages.sh" libopenblas-dev libdnnl-dev libhalide14-0-dev
