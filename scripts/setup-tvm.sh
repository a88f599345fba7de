#!/usr/bin/env bash
# setup-tvm.sh — create (once) and update the virtual environment that holds TVM MetaSchedule for
# `make bench-tuners` (bench/tuners/), and print its path on the last line.
#
# A venv of its own ($TE_TVM_VENV, default ~/.cache/te/venv-tvm), not the test venv of
# scripts/setup-python.sh: apache-tvm and its pins (scripts/python/requirements-tvm.txt) must not
# move the packages the test suite runs on. te itself needs only numpy there (python/te is loaded
# from the source tree with ctypes). pip skips what is already satisfied.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${TE_TVM_VENV:-$HOME/.cache/te/venv-tvm}"

if [[ ! -x "$venv/bin/python" ]]; then
  echo "setup-tvm: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip >&2
fi
"$venv/bin/pip" install -q -r "$here/python/requirements-tvm.txt" >&2
echo "$venv"
