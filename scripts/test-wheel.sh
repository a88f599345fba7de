#!/usr/bin/env bash
# test-wheel.sh PYTHON WORK_DIR — the Python package as users get it (CTest's python.wheel):
#   1. `pip wheel ./python` builds the wheel (scikit-build-core, which PYTHON's environment must
#      have: the reused venv of scripts/setup-python.sh; its CMake build folder is
#      WORK_DIR/build, kept between runs so a rebuild is incremental);
#   2. a fresh virtual environment in WORK_DIR/venv gets the wheel with `pip install`, numpy
#      coming from PyPI (or pip's cache) as the wheel's dependency;
#   3. `import te` there loads the bundled libte with TE_LIBRARY unset, from outside the tree;
#   4. python/tests runs against the installed package (TE_PYTHON_INSTALLED=1). PyTorch, a few
#      GB, is not installed again: a .pth file adds PYTHON's site-packages after the fresh
#      environment's own, so the backend tests see torch and te's installed entry point.
set -euo pipefail
py="$1"
work="$2"
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mkdir -p "$work"
rm -rf "$work/dist" "$work/venv"

echo "test-wheel: pip wheel $repo/python"
"$py" -m pip wheel --no-build-isolation --no-deps -q "$repo/python" -w "$work/dist" \
  -Cbuild-dir="$work/build"
wheel=$(ls "$work"/dist/te-*.whl)
echo "test-wheel: built $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

"$py" -m venv "$work/venv"
vpy="$work/venv/bin/python"
unset TE_LIBRARY PYTHONPATH
if ! "$vpy" -m pip install -q "$wheel" pytest; then
  echo "test-wheel: no PyPI: numpy and pytest from $py's environment instead" >&2
  "$py" -c 'import site; print(site.getsitepackages()[0])' \
    >"$("$vpy" -c 'import site; print(site.getsitepackages()[0])')/te-test-reused.pth"
  "$vpy" -m pip install -q --no-index --no-deps "$wheel"
fi

cd "$work"     # not the source tree: `import te` must find the installed package
"$vpy" -c 'import te, os; assert os.path.dirname(te.library_path) == os.path.dirname(te.__file__), te.library_path; print("test-wheel: import te ->", te.library_path)'
"$vpy" -m pip check

site="$("$vpy" -c 'import site; print(site.getsitepackages()[0])')"
if [[ ! -e "$site/te-test-reused.pth" ]]; then
  "$py" -c 'import site; print(site.getsitepackages()[0])' >"$site/te-test-reused.pth"
fi
TE_PYTHON_INSTALLED=1 PYTHONDONTWRITEBYTECODE=1 "$vpy" "$repo/python/tests/run_pytest.py"
