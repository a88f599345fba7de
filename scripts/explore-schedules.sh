#!/usr/bin/env bash
# explore-schedules.sh [N] [TEST ARGS...] — runs the property test (e2e.random_schedules) at N
# fresh run seeds (default 10), one run after the other, and prints every seed that fails, with
# the command that repeats it and the failure's report.
#
# CTest runs the property test at a fixed list of run seeds (test/e2e/test_random_schedules.c),
# so that CI checks the same schedules every time; this script is how new schedules get tried.
# A failing seed is a bug to fix: fix it, add a regression test, and add the seed to that list
# (test/README.md, "The property test").
#
#   BUILD_DIR                  the build folder (default: build)
#   TE_RANDOM_SCHEDULES_CASES  cases per run seed and workload (default here 40, the test's own
#                              10: each run also repeats the fixed corpus, 40 cases a workload)
#   TEST ARGS                  passed to the test binary, e.g. --filter 'random_schedules/scan'
#
# Logs of failing runs go to $BUILD_DIR/explore-schedules/<seed>.log. Exit status 1 when a
# seed failed, 0 when none did, 2 on a usage error.
set -uo pipefail

n=10
if [[ $# -gt 0 && $1 =~ ^[0-9]+$ ]]; then
  n=$1
  shift
elif [[ $# -gt 0 && $1 != -* ]]; then
  echo "usage: $0 [N] [TEST ARGS...]" >&2
  exit 2
fi
build=${BUILD_DIR:-build}
bin="$build/test/e2e/test_random_schedules"
if [[ ! -x "$bin" ]]; then
  echo "explore-schedules: $bin is not built (cmake --build $build)" >&2
  exit 2
fi
cases=${TE_RANDOM_SCHEDULES_CASES:-40}
logs="$build/explore-schedules"
mkdir -p "$logs"

failed=()
for ((k = 1; k <= n; k++)); do
  # a fresh run seed in [1, 10^9 + 7), as the test's TE_RANDOM_SCHEDULES_SEED=random draws them
  seed=$(($(od -An -N4 -tu4 /dev/urandom) % 1000000006 + 1))
  log="$logs/$seed.log"
  start=$SECONDS
  TE_RANDOM_SCHEDULES_CASES=$cases TE_RANDOM_SCHEDULES_SEED=$seed "$bin" "$@" >"$log" 2>&1
  rc=$?
  if [[ $rc -eq 0 ]]; then
    echo "explore-schedules: [$k/$n] run seed $seed passed ($((SECONDS - start))s)"
    rm -f "$log"
    continue
  fi
  failed+=("$seed")
  echo "explore-schedules: [$k/$n] run seed $seed FAILED (exit $rc); repeat it with:"
  echo "  TE_RANDOM_SCHEDULES_CASES=$cases TE_RANDOM_SCHEDULES_SEED=$seed $bin $*"
  grep -E -A12 'Assertion Failed|CRASH|Timeout|ERROR: (Address|Leak)Sanitizer|runtime error' "$log" |
    head -60
  echo "explore-schedules: the whole log is $log"
done

echo "explore-schedules: $n run seeds, ${#failed[@]} failed${failed[*]:+: ${failed[*]}}"
[[ ${#failed[@]} -eq 0 ]]
