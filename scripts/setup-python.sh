#!/usr/bin/env bash
# setup-python.sh [--bench] — create (once) and update the virtual environment that te's Python
# tests and benchmarks use, and print its path on the last line.
#
# The environment lives at $TE_VENV (default ~/.cache/te/venv) and is reused across runs, so a
# machine pays for large packages (PyTorch) once. Installs scripts/python/requirements-test.txt,
# and with --bench also requirements-bench.txt. pip skips what is already satisfied.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${TE_VENV:-$HOME/.cache/te/venv}"
lists=("$here/python/requirements-test.txt")
if [[ "${1-}" == "--bench" ]]; then
  lists+=("$here/python/requirements-bench.txt")
fi

if [[ ! -x "$venv/bin/python" ]]; then
  echo "setup-python: creating $venv" >&2
  mkdir -p "$(dirname "$venv")"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip >&2
fi
for list in "${lists[@]}"; do
  "$venv/bin/pip" install -q -r "$list" >&2
done
echo "$venv"
