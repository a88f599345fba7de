#!/bin/sh
# misuse-counts.sh — how many misuse checks test/errors/ holds, by the status they expect.
#
# A check is a line of a test/errors/*.c file that expects a status: TT_EXPECT_ERR(ctx,
# TE_ERR_X, ...), cr_expect_eq(call, TE_ERR_X), the files' own EXPECT_* helpers. Lines in
# comments are skipped; a check that names two statuses (a ?: choice) counts for each.
# Usage: scripts/misuse-counts.sh [dir]   (default: test/errors next to this script)
dir=${1:-$(dirname "$0")/../test/errors}
cat "$dir"/*.c |
  sed -e 's|/\*.*\*/||g' -e 's|//.*||' |
  awk '/\/\*/ { in_comment = 1 } !in_comment { print } /\*\// { in_comment = 0 }' |
  grep -v '^[[:space:]]*#' |
  grep -oE 'TE_ERR_[A-Z_]+' |
  sort | uniq -c | sort -rn |
  awk '{ total += $1; printf "%6d %s\n", $1, $2 } END { printf "%6d in all\n", total }'
printf '%6d test cases (Test(...)) in %s\n' "$(grep -hc '^Test(' "$dir"/*.c | paste -sd+ | bc)" \
  "$(cd "$dir" && pwd)"
