#!/usr/bin/env python3
"""search_curve.py LOG... — how fast a te-tune search found its best (issue #20).

For each log (one workload, one target, one seed each): the trials, how many of them
stored an operand in a packed layout (a `reorder_storage` step in the trace), the best
search-time cost after the trials, the trial at which the best so far first reached 90%
of that best's throughput, and the best packed trial. Confirm records are left out: this
is about the search. Costs are the records' medians on the clock the search ranked them by
(result.cpu_costs when tuner.measure.clock is "cpu", else result.costs: docs/tuning-log.md).
"""
import json
import statistics
import sys


def cost(r):
    res = r["result"]
    c, cpu = res.get("costs") or [], res.get("cpu_costs") or []
    if res["error"] != 0 or not c:
        return float("inf")
    clock = r.get("tuner", {}).get("measure", {}).get("clock")
    return statistics.median(cpu if clock == "cpu" and len(cpu) == len(c) else c)


def curve(path):
    recs = []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            t = r.get("tuner", {})
            if t.get("confirm") or "buckets" in r:
                continue
            recs.append(r)
    costs = [cost(r) for r in recs]
    packed = ["reorder_storage" in r["trace"] for r in recs]
    best = min(costs) if costs else float("inf")
    to90 = next((i + 1 for i, c in enumerate(costs) if c <= best / 0.9), None)
    pbest = min((c for c, p in zip(costs, packed) if p), default=float("inf"))
    pfirst = next((i + 1 for i, p in enumerate(packed) if p), None)
    loads = [r["tuner"].get("load1", -1) for r in recs]
    return len(recs), sum(packed), best, to90, pbest, pfirst, min(loads or [0]), max(loads or [0])


def main():
    print("%-28s %6s %6s %10s %6s %10s %7s %s" % ("log", "trials", "packed", "best_ms",
          "to90%", "packed_ms", "1st_pk", "load1"))
    for p in sys.argv[1:]:
        n, npk, best, to90, pbest, pfirst, lo, hi = curve(p)
        print("%-28s %6d %6d %10.3f %6s %10.3f %7s %.1f-%.1f" % (
            p.split("/")[-1], n, npk, best * 1e3, to90, pbest * 1e3, pfirst, lo, hi))


if __name__ == "__main__":
    main()
