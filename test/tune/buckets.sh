#!/usr/bin/env bash
# buckets.sh — `te-tune tune WORKLOAD --bucket n=...` from the command line (CTest tune.buckets):
# bad bucket lists and workloads are refused with exit status 2 and a message naming the
# problem; a small run tunes every bucket (its records keyed by the workload at that size),
# builds the dispatch and appends one bucket index line (the symbolic workload's key, the sizes,
# each bucket's key, the dispatch's trace: "specialize n == V {" per bucket, "n <= V" per bucket
# but the largest);
# a second run with --resume adds trials to each bucket and a newer index.
#   buckets.sh <te-tune>
set -u
tt=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fails=0

wl='M[i, j] = sum(A[i, k]*B[k, j], k); C[i, j] = M[i, j] + bias[j] where A: f32[n, 24], B: f32[24, 20], bias: f32[20], k: [0, 24)'
quick=(--trials 3 --batch 3 --threads 1 --min-repeat-s 0.001 --max-repeats 3 --confirm 2 --target llvm)

# refused <what> <substring of the message> <te-tune tune arguments...>
refused() {
  local what=$1 want=$2
  shift 2
  "$tt" tune "$@" --log "$dir/bad.jsonl" >"$dir/out" 2>&1
  local rc=$?
  if [ "$rc" -ne 2 ] || ! grep -qF -- "$want" "$dir/out"; then
    echo "FAIL $what: exit $rc, want 2 and '$want' in:"
    cat "$dir/out"
    fails=$((fails + 1))
  else
    echo "ok   $what"
  fi
}

refused "no values" "--bucket n: no values" "$wl" --bucket n=
refused "no name" "expected SIZE=V1,V2" "$wl" --bucket 16,64
refused "a value 0" "'0' is not a size >= 1" "$wl" --bucket n=0,16
refused "a value twice" "16 is given twice" "$wl" --bucket n=16,64,16
refused "two --bucket" "--bucket is given twice" "$wl" --bucket n=16 --bucket n=32
refused "an operator" "not an operator" matmul M=64 N=64 K=64 --bucket M=16,32
refused "no such size" "no size, stride or parameter named 'm'" "$wl" --bucket m=16
refused "another symbolic size" "symbolic shape" \
  'C[i, j] = A[i, j]*2.0f where A: f32[n, w]' --bucket n=8
[ -e "$dir/bad.jsonl" ] && { echo "FAIL a refused run wrote the log"; fails=$((fails + 1)); }

if ! "$tt" tune "$wl" --bucket n=40,8,16 "${quick[@]}" --log "$dir/log.jsonl" >"$dir/run.out" 2>&1; then
  echo "FAIL the small run:"; cat "$dir/run.out"; fails=$((fails + 1))
else
  tail -6 "$dir/run.out"
  python3 - "$dir/log.jsonl" <<'EOF' || fails=$((fails + 1))
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
index = [r for r in recs if "buckets" in r]
assert len(index) == 1, "one bucket index expected, got %d" % len(index)
b = index[0]
assert b["buckets"]["size"] == "n" and b["buckets"]["values"] == [8, 16, 40], b["buckets"]
assert b["result"]["costs"] == [] and b["result"]["error"] == 0
assert "n: [0" not in b["workload"]["text"] and "f32[n, 24]" in b["workload"]["text"]
trace = b["trace"]
heads = [l for l in trace.split("\n") if l.startswith("specialize")]
assert heads == ["specialize n == 8 {", "specialize n <= 8 {", "specialize n == 16 {",
                 "specialize n <= 16 {", "specialize n == 40 {"], heads
for v, key in zip(b["buckets"]["values"], b["buckets"]["keys"]):
    mine = [r for r in recs if r["workload"]["key"] == key and "buckets" not in r]
    assert mine, "no records of bucket %d" % v
    assert all("f32[%d, 24]" % v in r["workload"]["text"] for r in mine)
    trials = [r for r in mine if not r.get("tuner", {}).get("confirm")]
    assert len(trials) == 3, "bucket %d: %d trials" % (v, len(trials))
print("ok   the log: 3 trials per bucket, one index, the dispatch n == 8, n <= 8, n == 16, n <= 16, n == 40, else 40")
EOF
  grep -q "^8 *n <= 8 " "$dir/run.out" && grep -q "^16 *8 < n <= 16 " "$dir/run.out" &&
    grep -q "^40 *n > 16 " "$dir/run.out" ||
    { echo "FAIL the summary table:"; cat "$dir/run.out"; fails=$((fails + 1)); }
  if ! "$tt" tune "$wl" --bucket n=8,16,40 "${quick[@]}" --trials 5 --resume \
      --log "$dir/log.jsonl" >"$dir/run2.out" 2>&1; then
    echo "FAIL the resumed run:"; cat "$dir/run2.out"; fails=$((fails + 1))
  elif [ "$(grep -c '"buckets"' "$dir/log.jsonl")" -ne 2 ] ||
       [ "$(grep -c '^trial ' "$dir/run2.out")" -ne 6 ]; then
    echo "FAIL the resumed run: 2 more trials per bucket and a second index expected:"
    cat "$dir/run2.out"; fails=$((fails + 1))
  else
    echo "ok   a resumed run tunes each bucket further and writes a newer index"
  fi
fi
if [ "$fails" -ne 0 ]; then
  echo "$fails failed"
  exit 1
fi
echo "all passed"
