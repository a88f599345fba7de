#!/usr/bin/env python3
"""predict.py LOG... [--top N] [--rounds R] [--runs K] — does a te-tune search's cost predict
what another process measures? (docs/tuning-measurement.md, issue #20)

For each log (one workload and target; te-tune tune ... --clock wall or --clock cpu): the
search's best N schedules, by the cost the search ranked them by (the median of
result.cpu_costs when tuner.measure.clock is "cpu", else of result.costs: the log's rule), and,
where the confirm pass measured one again, its confirmed cost. Then, in this process, each
schedule is rebuilt from the record (workload text, trace, target) and timed as a user times a
kernel: the wall time of single calls (time.perf_counter around the C entry, called through
ctypes on buffers made once, 64-byte aligned as te-tune's are: --align), in R rounds of K calls that alternate between the schedules, so
that a burst of load falls on all of them. Every log's finalists are timed together, so one clock's
picks are compared with the other's under the same minutes. Each call is read on both clocks
(the cpu clock as autotune/clock.c reads it: wall less the mean run-queue wait of this
process's threads, at most the busiest one's time on a core). Per schedule it prints the search cost, the confirmed cost, here the median
wall time, the lowest round median of the wall times (the least disturbed round) and the median
cpu-clock time, and the ratios search/wall-here, search/cpu-here and confirmed/cpu-here; then how
many of the search's ranking pairs each of the clocks here keeps (concordant pairs), and how far
the search's best is from the fastest of its finalists here. Run with TE_LIBRARY=build/libte.so PYTHONPATH=python and the te venv's python (numpy).
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import numpy as np

import search_curve  # bench/tuners: a record's cost on its clock
import te
from te import device as _device


def record_cost(r):
    """A confirm record's confirmed cost, else the median on the clock the search ranked by."""
    c = search_curve.cost(r)
    if c < float("inf") and r.get("tuner", {}).get("confirm") and r["tuner"].get("confirm_cost_s"):
        return r["tuner"]["confirm_cost_s"]
    return c


def read_log(path):
    recs = []
    with open(path) as f:
        for line in f:
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if "buckets" not in r and "trace" in r:
                recs.append(r)
    return recs


def finalists(recs, top):
    """The top schedules of the search (trials, by search cost), each with its confirm cost."""
    trials = [r for r in recs if not r.get("tuner", {}).get("confirm")]
    best = {}
    for r in trials:
        c = record_cost(r)
        if c < float("inf") and (r["trace"] not in best or c < best[r["trace"]][0]):
            best[r["trace"]] = (c, r)
    ranked = sorted(best.values(), key=lambda x: x[0])[:top]
    confirmed = {}
    for r in recs:
        if r.get("tuner", {}).get("confirm"):
            confirmed[r["trace"]] = record_cost(r)
    return [(c, confirmed.get(r["trace"]), r) for c, r in ranked]


NP = {"float32": np.float32, "float64": np.float64, "int8": np.int8, "uint8": np.uint8,
      "int32": np.int32, "int16": np.int16, "int64": np.int64}


def aligned(v, align):
    """v copied to an address that is a multiple of align bytes (plus align / 2 when align is
    negative: a buffer as misaligned as numpy's large allocations may be)."""
    a = abs(align)
    buf = np.empty(v.nbytes + 2 * a, np.uint8)
    off = (-buf.ctypes.data) % a + (a // 2 if align < 0 else 0)
    out = buf[off:off + v.nbytes].view(v.dtype).reshape(v.shape)
    out[...] = v
    return out


class Kernel:
    def __init__(self, rec, rng, align):
        outs = te.parse(rec["workload"]["text"])
        s = te.create_schedule(outs)
        s.replay(rec["trace"])
        args = te.workload_inputs(outs) + list(outs)
        self.mod = te.build(s, args, target=rec["target"])
        self.arrays = []
        for a in args:
            dt = NP[str(a.dtype)]
            v = rng.uniform(0.1, 1.0, size=a.shape) if np.issubdtype(dt, np.floating) else \
                rng.integers(-7, 8, size=a.shape)
            self.arrays.append(aligned(v.astype(dt), align))
        kind = _device.target_kind(self.mod.target.spec)
        self.held = [_device.as_kernel_arg(v, kind) for v in self.arrays]
        self.ptrs = [ctypes.addressof(h.dl) for h in self.held]
        fn = ctypes.CFUNCTYPE(ctypes.c_int32, *[ctypes.c_void_p] * len(self.ptrs))
        self.entry = fn(self.mod.entry)

    def run(self, team):
        w0 = team.read()
        t0 = time.perf_counter()
        st = self.entry(*self.ptrs)
        t1 = time.perf_counter()
        w1 = team.read()
        if st != 0:
            raise RuntimeError("kernel returned %d" % st)
        wall = t1 - t0
        if not w0 or len(w0) != len(w1):
            return wall, wall
        wait = sum(min(max(b[1] - a[1], 0) * 1e-9, wall) for a, b in zip(w0, w1)) / len(w0)
        busiest = max(max(b[0] - a[0], 0) * 1e-9 for a, b in zip(w0, w1))
        cpu = min(wall - wait, busiest) if busiest > 0 else wall - wait
        return wall, max(cpu, 0.01 * wall)


class Team:
    """This process's threads' times on a core and waiting for one (ns), as autotune/clock.c
    reads them: the cpu clock of a call is its wall time less the threads' mean wait, at most
    the busiest thread's time on a core. Opened after the warm-up, so
    te's pool workers are in it (run with OPENBLAS_NUM_THREADS=1: numpy's idle threads would
    dilute the mean)."""

    def __init__(self):
        self.fds, self.clocks = [], []
        try:
            for tid in os.listdir("/proc/self/task"):
                self.fds.append(os.open("/proc/self/task/%s/schedstat" % tid, os.O_RDONLY))
                # the thread's CPU-time clock, as clock.c makes it (schedstat's own lags a tick)
                c = ((~int(tid)) << 3 | 6) & 0xffffffff
                self.clocks.append(c - (1 << 32) if c >= 1 << 31 else c)
        except OSError:
            self.fds = []

    def read(self):
        try:
            return [(time.clock_gettime_ns(c), int(os.pread(fd, 96, 0).split()[1]))
                    for fd, c in zip(self.fds, self.clocks)]
        except OSError:
            return None


def concordant(pred, actual):
    n = ok = 0
    for i in range(len(pred)):
        for j in range(i + 1, len(pred)):
            if pred[i] != pred[j] and actual[i] != actual[j]:
                n += 1
                ok += (pred[i] < pred[j]) == (actual[i] < actual[j])
    return ok, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--align", type=int, default=64,
                    help="buffers' alignment in bytes (te-tune's are 64 and more; -64: 32 off)")
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    # every log's finalists, timed together: the same minutes fall on all of them
    groups, ks = [], []
    for path in a.logs:
        recs = read_log(path)
        fin = finalists(recs, a.top)
        meas = fin[0][2].get("tuner", {}).get("measure", {}) if fin else {}
        groups.append((path, recs, fin, meas.get("clock", "wall"), len(ks)))
        if meas.get("threads"):
            te.set_num_threads(meas["threads"])
        ks += [Kernel(r, rng, a.align) for _, _, r in fin]
    team = Team()
    for k in ks:  # warm-up: the pool's threads, the caches, the pages
        for _ in range(2):
            k.run(team)
    team = Team()  # now with the pool's workers
    wall = [[] for _ in ks]
    cpu = [[] for _ in ks]
    round_med = [[] for _ in ks]
    for rd in range(a.rounds):
        for off in range(len(ks)):
            i = (rd + off) % len(ks)
            t = [ks[i].run(team) for _ in range(a.runs)]
            wall[i] += [w for w, _ in t]
            cpu[i] += [c for _, c in t]
            round_med[i].append(statistics.median(w for w, _ in t))
    act = [statistics.median(t) for t in wall]
    acpu = [statistics.median(t) for t in cpu]
    amin = [min(m) for m in round_med]
    print("timed here: %d schedules, %d rounds of %d calls, %d threads in the team, load1 %.1f"
          % (len(ks), a.rounds, a.runs, len(team.fds), os.getloadavg()[0]))
    for path, recs, fin, clock, first in groups:
        if not fin:
            print("%s: no successful trials" % path)
            continue
        print("%s (searched on the %s clock, %d trials):" % (
            path, clock, sum(1 for r in recs if not r.get("tuner", {}).get("confirm"))))
        print("  %-4s %9s %9s %9s %9s %9s %8s %8s %8s" % (
            "rank", "search", "confirm", "wall_here", "wmin_here", "cpu_here", "s/wall",
            "s/cpu", "c/cpu"))
        for j, (c, cc, r) in enumerate(fin):
            i = first + j
            print("  %-4d %9.4f %9s %9.4f %9.4f %9.4f %8.3f %8.3f %8s" % (
                j + 1, c * 1e3, "%.4f" % (cc * 1e3) if cc else "-", act[i] * 1e3,
                amin[i] * 1e3, acpu[i] * 1e3, c / act[i], c / acpu[i],
                "%.3f" % (cc / acpu[i]) if cc else "-"))
        sl = slice(first, first + len(fin))
        pred = [c for c, _, _ in fin]
        for name, v in (("wall", act[sl]), ("cpu", acpu[sl])):
            ok, n = concordant(pred, v)
            print("  ranking pairs the %s clock here keeps: %d of %d" % (name, ok, n))
        best_here = min(range(len(fin)), key=lambda j: act[first + j])
        print("  the search's best is %.3fx the fastest of its finalists here (wall)"
              % (act[first] / act[first + best_here]))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
