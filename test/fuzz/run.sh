#!/usr/bin/env bash
# run.sh BUILD_DIR SECONDS [TARGET...] — runs each libFuzzer target of BUILD_DIR (configured with
# -DTE_FUZZ=ON and clang; `make test-fuzz` does it) for SECONDS seconds, one after the other,
# and prints how many inputs each executed and how many per second.
#
# Seeds: by default every run tries the same inputs (CI cannot fail on inputs nobody tried):
# libFuzzer's seed is fixed (FUZZ_SEED, default 1) and each target stops after a fixed number of
# inputs (FUZZ_RUNS, else its own default below: about what two minutes reached on a loaded
# 2-core machine, each count run whole with seed 1 and passing) or after SECONDS, whichever
# comes first; a slower machine runs a prefix of the same inputs. (The same inputs given the
# same starting corpus: FUZZ_KEEP_CORPUS=1 starts elsewhere.)
# FUZZ_SEED=random lets libFuzzer draw a fresh seed and runs for SECONDS (FUZZ_RUNS still caps
# it when set): exploring. The seed each target used is printed; FUZZ_SEED=<it> repeats the run.
#
# Each target starts from its seeds (test/fuzz/corpus/<name>) and past crashes
# (test/fuzz/regressions/<name>); what it finds goes to BUILD_DIR/fuzz-work/<name>, emptied first
# unless FUZZ_KEEP_CORPUS=1 (then a run continues from the last one's inputs: for long campaigns;
# a short run would spend its time re-running them), and crashes to BUILD_DIR/fuzz-crashes/<name>/.
# Exit status 1 when a target found a crash (its report is printed, with the command that replays
# it), else 0. Targets default to all five: parse target replay tune_log schedule. A long campaign
# is the same with more seconds (README.md in this folder).
set -uo pipefail

if [[ $# -lt 2 ]]; then
  echo "usage: $0 BUILD_DIR SECONDS [TARGET...]" >&2
  exit 2
fi
build=$1
seconds=$2
shift 2
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=(parse target replay tune_log schedule)
fuzz_seed=${FUZZ_SEED:-1}
# inputs per target under a fixed seed: fuzz_schedule builds and runs a kernel per input
declare -A default_runs=([parse]=200000 [target]=20000 [replay]=15000 [tune_log]=8000
                         [schedule]=300)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin="$build/test/fuzz"

failed=0
summary=()
for t in "${targets[@]}"; do
  exe="$bin/fuzz_$t"
  if [[ ! -x "$exe" ]]; then
    echo "fuzz: $exe is not built (configure with CC=clang-14 -DTE_FUZZ=ON)" >&2
    exit 2
  fi
  work="$build/fuzz-work/$t"
  crashes="$build/fuzz-crashes/$t"
  [[ "${FUZZ_KEEP_CORPUS:-0}" == 1 ]] || rm -rf "$work"
  mkdir -p "$work" "$crashes"
  args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$crashes/")
  runs_cap=${FUZZ_RUNS:-}
  if [[ $fuzz_seed == random || $fuzz_seed == 0 ]]; then
    args+=(-seed=0) # libFuzzer draws one
  else
    args+=(-seed="$fuzz_seed")
    runs_cap=${runs_cap:-${default_runs[$t]:-}}
  fi
  [[ -n $runs_cap ]] && args+=(-runs="$runs_cap")
  [[ -f "$src/$t.dict" ]] && args+=(-dict="$src/$t.dict")
  dirs=("$work" "$src/corpus/$t")
  [[ -d "$src/regressions/$t" ]] && dirs+=("$src/regressions/$t")
  log="$build/fuzz-work/$t.log"
  echo "fuzz: $t for ${seconds}s${runs_cap:+ or $runs_cap inputs}"
  "$exe" "${args[@]}" "${dirs[@]}" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  corpus=$(find "$work" -type f | wc -l)
  used=$(sed -n 's/^INFO: Seed: *//p' "$log" | head -1)
  echo "fuzz: $t ran with seed ${used:-?} (FUZZ_SEED=${used:-?} gives the same inputs again)"
  if [[ $rc -ne 0 ]]; then
    failed=1
    crash=$(grep -o "Test unit written to .*" "$log" | tail -1 | sed 's/Test unit written to //')
    echo "fuzz: $t FAILED (exit $rc); its report:" >&2
    grep -v -E '^#[0-9]+' "$log" | tail -60 >&2
    echo "fuzz: replay it with: $exe ${crash:-<crash file>}" >&2
    echo "fuzz: rerun the campaign with: FUZZ_SEED=${used:-?} $0 $build $seconds $t" >&2
    summary+=("$(printf '%-10s %10s %8s %8s  CRASH %s' "$t" "${runs:-?}" "${rate:-?}" "$corpus" "${crash:-}")")
  else
    summary+=("$(printf '%-10s %10s %8s %8s' "$t" "${runs:-?}" "${rate:-?}" "$corpus")")
  fi
done

echo "fuzz: ${seconds}s per target"
printf '%-10s %10s %8s %8s\n' target execs exec/s corpus
printf '%s\n' "${summary[@]}"
exit $failed
