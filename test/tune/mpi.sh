#!/usr/bin/env bash
# mpi.sh TE_TUNE — `te-tune tune --mpi` under mpirun, as a user runs it (CTest tune.mpi).
#
# 1. Three ranks (rank 0 searches, ranks 1 and 2 measure) tune a small matmul: every trial is in
#    the log, measured by rank 1 or rank 2 (tuner.measured_on), both ranks took part, and the
#    confirm pass ran on rank 0.
# 2. A measuring rank killed mid-run: the job stops, the log holds only whole records, and
#    `--resume` (here without MPI) continues to the requested trials.
# 3. Misuse: --mpi outside mpirun (one rank) is a usage error naming the rule.
# Without MPI support in te-tune (or without mpirun) the test is skipped (exit 77), unless
# TE_REQUIRE lists `mpi`: then it fails.
set -euo pipefail
tool=$(realpath "$1")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # CI runs as root
export OMPI_MCA_rmaps_base_oversubscribe=1                     # 3 ranks on a 2-core machine
export OMPI_MCA_btl_vader_single_copy_mechanism=none            # no CMA inside containers

fail() { echo "FAIL tune.mpi: $*" >&2; exit 1; }
skip() {
  if [[ ",${TE_REQUIRE-}," == *,mpi,* ]]; then fail "$* (TE_REQUIRE has mpi)"; fi
  echo "SKIP tune.mpi: $*"
  exit 77
}

out=$("$tool" tune --mpi matmul M=8 N=8 K=8 2>&1) && fail "--mpi with one rank succeeded"
case "$out" in
  *"built without MPI"*) skip "te-tune was built without MPI (scripts/setup.sh installs Open MPI)" ;;
  *"needs 2 ranks or more"*) ;;
  *) fail "--mpi with one rank: unexpected message: $out" ;;
esac
command -v mpirun >/dev/null || skip "no mpirun on PATH"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/te_tune_mpi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
wl=(matmul M=37 N=29 K=23)
common=(--quiet --min-repeat-s 0.001 --max-repeats 3 --timeout 60)

# 1. A whole run on three ranks.
mpirun -n 3 "$tool" tune "${wl[@]}" "${common[@]}" --trials 12 --log run.jsonl --mpi > run.out 2>&1 ||
  { cat run.out; fail "mpirun -n 3 te-tune tune --mpi failed"; }
trials=$(grep -vc '"confirm":true' run.jsonl || true)
[[ "$trials" -eq 12 ]] || fail "12 trials asked, $trials trial records in the log"
for r in 1 2; do
  grep -q "\"measured_on\":\"[^\"]* rank $r\"" run.jsonl || fail "rank $r measured nothing"
done
if grep -v '"confirm":true' run.jsonl | grep -q '"measured_on":"[^"]* rank 0"'; then
  fail "rank 0 measured a trial: it only searches"
fi
grep -q '"confirm":true' run.jsonl || fail "no confirm pass on rank 0"
"$tool" best --log run.jsonl "${wl[@]}" > /dev/null || fail "te-tune best finds no record"

# 2. Kill a measuring rank mid-run.
mpirun -n 3 "$tool" tune "${wl[@]}" "${common[@]}" --trials 400 --log kill.jsonl --mpi \
  > kill.out 2>&1 &
job=$!
victim=""
for _ in $(seq 1 600); do # up to 60 s for a few records
  if [[ -f kill.jsonl && $(wc -l < kill.jsonl) -ge 5 ]]; then
    for pid in $(pgrep -f "kill.jsonl --mpi" || true); do
      if tr '\0' '\n' < "/proc/$pid/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then
        victim=$pid
      fi
    done
    [[ -n "$victim" ]] && break
  fi
  sleep 0.1
done
[[ -n "$victim" ]] || { kill "$job" 2>/dev/null || true; fail "no rank 1 found to kill"; }
kill -9 "$victim"
for _ in $(seq 1 600); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then
  kill -9 "$job" 2>/dev/null || true
  pkill -9 -f "kill.jsonl --mpi" || true
  fail "the job did not stop within 60 s of losing rank 1"
fi
wait "$job" && fail "the job succeeded although rank 1 was killed"
done_before=$(grep -vc '"confirm":true' kill.jsonl || true)
[[ "$done_before" -ge 5 && "$done_before" -lt 400 ]] || fail "$done_before records before the kill"
python3 - kill.jsonl <<'PY' || fail "the log holds a cut record after the kill"
import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    if line.strip():
        json.loads(line)
PY
want=$((done_before + 3))
"$tool" tune "${wl[@]}" "${common[@]}" --trials "$want" --log kill.jsonl --resume --confirm 0 \
  > resume.out 2>&1 || { cat resume.out; fail "--resume after the kill failed"; }
after=$(grep -vc '"confirm":true' kill.jsonl || true)
[[ "$after" -eq "$want" ]] || fail "--resume to $want trials left $after trial records"
grep -q "$want trials (3 measured now" resume.out || { cat resume.out; fail "resume summary"; }
echo "tune.mpi: 12 trials on ranks 1-2; killed rank 1 after $done_before records; resumed to $want"
