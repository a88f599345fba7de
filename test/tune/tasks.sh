#!/usr/bin/env bash
# tasks.sh — `te-tune tune-tasks` from the command line (CTest tune.tasks): each bad task file
# is refused with exit status 2 and a message naming the file, the line and the rule; a small
# run over two tasks spends its budget exactly, warms both up, measures the hand schedule, and
# writes the allocation table; a second run on the same log resumes (its trials come on top).
#   tasks.sh <te-tune>
set -u
tt=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

mm='C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[48, 40], B: f32[40, 36], k: [0, 40)'
ew='C[i, j] = A[i, j]*2.0f where A: f32[64, 50]'

# refused <what> <substring of the message> <task file contents> [more te-tune options]
refused() {
  local what=$1 want=$2 body=$3
  shift 3
  printf '%s' "$body" >"$dir/bad.jsonl"
  "$tt" tune-tasks "$dir/bad.jsonl" --trials 4 --log "$dir/bad-log.jsonl" "$@" >"$dir/out" 2>&1
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" "$dir/out"; then
    echo "FAIL $what: exit $rc, want 2 and '$want' in:"
    cat "$dir/out"
    fails=$((fails + 1))
  else
    echo "ok   $what"
  fi
}

refused "not JSON" "bad.jsonl:2: not JSON" $'{"task": "a", "weight": 1, "workload": "x"}\n{nope\n'
refused "no weight" "bad.jsonl:1: a task is" '{"task": "a", "workload": "x"}'
refused "weight 0" "task 'a': the weight must be > 0" '{"task": "a", "weight": 0, "workload": "x"}'
refused "same name twice" "task 'a' is given twice" \
  $'{"task": "a", "weight": 1, "workload": "x"}\n{"task": "a", "weight": 2, "workload": "y"}\n'
refused "empty file" "has no task" $'\n\n'
refused "no budget" "--trials N (> 0) is required" '{"task": "a", "weight": 1, "workload": "x"}' \
  --trials 0
printf '{"task": "a", "weight": 1, "workload": "x"}\n' >"$dir/one.jsonl"
"$tt" tune-tasks "$dir/one.jsonl" --trials 2 --log "$dir/x.jsonl" >"$dir/out" 2>&1
if [ $? -eq 0 ] || ! grep -qF "task 'a': its workload does not build" "$dir/out"; then
  echo "FAIL a workload that does not parse:"; cat "$dir/out"; fails=$((fails + 1))
else
  echo "ok   a workload that does not parse"
fi

# A small run: the matmul (weight 20) and the elementwise kernel (weight 1), 12 trials.
hand='split C i 8
parallel C i.o
'
python3 - "$dir/tasks.jsonl" "$mm" "$ew" "$hand" <<'EOF'
import json, sys
path, mm, ew, hand = sys.argv[1:]
with open(path, "w") as f:
    f.write(json.dumps({"task": "mm", "weight": 20, "workload": mm, "hand_trace": hand,
                        "group": "dense"}) + "\n")
    f.write(json.dumps({"task": "scale", "weight": 1, "workload": ew}) + "\n")
EOF
run() {
  "$tt" tune-tasks "$dir/tasks.jsonl" --trials 12 --batch 3 --log "$dir/log.jsonl" --threads 1 \
    --min-repeat-s 0.005 --max-repeats 5 --confirm 2 --allocation "$dir/alloc.tsv" >"$dir/run.out" 2>&1
}
if ! run; then
  echo "FAIL the small run:"; cat "$dir/run.out"; fails=$((fails + 1))
else
  cat "$dir/alloc.tsv"
  # rounds >= 1 each, trials add up to the budget, the hand schedule measured (hand_ms a number)
  if ! awk -F'\t' 'NR > 1 && $1 != "model" { n++; t += $4; if ($3 < 1) bad = 1 }
                   $1 == "mm" && $5 == "-" { bad = 1 }
                   END { exit !(n == 2 && t == 12 && !bad) }' "$dir/alloc.tsv"; then
    echo "FAIL the allocation table"; fails=$((fails + 1))
  else
    echo "ok   the allocation: both tasks warmed up, 12 trials, the hand schedule measured"
  fi
  grep -q "hand schedule of mm: measured" "$dir/run.out" || { echo "FAIL no hand line"; fails=$((fails + 1)); }
  records=$(wc -l <"$dir/log.jsonl")
  if ! run || ! grep -q "hand schedule of mm: already in the log" "$dir/run.out"; then
    echo "FAIL the second run:"; cat "$dir/run.out"; fails=$((fails + 1))
  elif [ "$(wc -l <"$dir/log.jsonl")" -le "$records" ]; then
    echo "FAIL the second run wrote nothing"; fails=$((fails + 1))
  else
    echo "ok   a second run on the same log resumes"
  fi
fi
if [ "$fails" -ne 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "all passed"
