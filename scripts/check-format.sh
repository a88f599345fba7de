#!/usr/bin/env bash
# check-format.sh — every C source and header git tracks is formatted as .clang-format says.
#
#   scripts/check-format.sh          list the files clang-format would change; exit 1 if any
#   scripts/check-format.sh --fix    reformat them in place
#
# Run by CTest as format.clang_format (so by `make test` and CI). The clang-format that
# scripts/setup.sh installs (Debian's, 14) is the reference: another version may format a few
# constructs differently, so CLANG_FORMAT names the binary where several are installed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
clang_format=${CLANG_FORMAT:-clang-format}
command -v "$clang_format" >/dev/null || { echo "check-format: $clang_format not found" >&2; exit 1; }

mapfile -t files < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
if [ "${1:-}" = "--fix" ]; then
  "$clang_format" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  "$clang_format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check-format: not formatted as .clang-format says (scripts/check-format.sh --fix):\n' >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files formatted"
