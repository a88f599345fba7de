"""te-tune against TVM MetaSchedule: both tune the same workloads (bench/tuners/workloads.py) with
the same trial counts, then both best kernels run in this one process, beside numpy, and one
table per trial count gives their speeds and tuning times. docs/bench-tuners.md explains it.

    python compare.py --te-tune build/te-tune [--trials 64,300] [--workloads matmul,softmax]

Runs in the venv of scripts/setup-tvm.sh (TVM's runtime for MetaSchedule's kernels) with te's
Python package from python/ (libte from TE_LIBRARY or the build folders). Exits 1 when either
tuner's kernel disagrees with numpy's float64 reference, or when a tuning run fails.
"""
import argparse
import ctypes
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import workloads  # noqa: E402

# A kernel is wrong when max |got - ref| exceeds this fraction of max |ref| (f32 against the
# float64 reference: the sums here are at most 4096 terms long, their rounding ~1e-6 relative).
TOLERANCE = 1e-4
TE_TARGET = "llvm -mcpu=native"


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--te-tune", default=os.path.join(REPO, "build", "te-tune"),
                    help="the te-tune binary (default build/te-tune)")
    ap.add_argument("--trials", default="64,300",
                    help="comma-separated trial counts, one table each (default 64,300)")
    ap.add_argument("--workloads", default="all",
                    help="comma-separated names (%s) or all" % ",".join(workloads.BY_NAME))
    ap.add_argument("--tuners", default="te,ms",
                    help="te, ms or both (te,ms); a tuner left out gets no column")
    ap.add_argument("--threads", type=int, default=2,
                    help="threads of every kernel, in tuning and in the timing (default 2)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=os.path.join(REPO, "build-bench", "tuners"),
                    help="logs, MetaSchedule's work dirs and results.json (default "
                         "build-bench/tuners)")
    ap.add_argument("--reuse", action="store_true",
                    help="time the kernels of an earlier run in --out again, tuning only what "
                         "it lacks")
    ap.add_argument("--min-sample-s", type=float, default=0.02,
                    help="each timing sample calls a kernel until this long (default 0.02)")
    ap.add_argument("--rounds", type=int, default=3,
                    help="timing rounds, each te, MetaSchedule and numpy in turn (default 3)")
    a = ap.parse_args()
    try:
        a.trials = [int(t) for t in a.trials.split(",")]
    except ValueError:
        ap.error("--trials: expected comma-separated integers, got %r" % a.trials)
    if not a.trials or min(a.trials) < 1:
        ap.error("--trials: every count must be at least 1")
    names = list(workloads.BY_NAME) if a.workloads == "all" else a.workloads.split(",")
    unknown = [n for n in names if n not in workloads.BY_NAME]
    if unknown:
        ap.error("--workloads: unknown %s (known: %s)" % (", ".join(unknown),
                                                         ", ".join(workloads.BY_NAME)))
    a.workloads = [workloads.BY_NAME[n] for n in names]
    a.tuners = a.tuners.split(",")
    if not a.tuners or any(t not in ("te", "ms") for t in a.tuners):
        ap.error("--tuners: expected te, ms or te,ms")
    if "te" in a.tuners and not os.access(a.te_tune, os.X_OK):
        ap.error("--te-tune: %s is not an executable (build it: make build)" % a.te_tune)
    return a


# ----------------------------------------------------------------------------- tuning
def run_timed(cmd, log_path):
    """Runs cmd with its output in log_path; returns its wall time and the machine's 1-minute
    load average before and after it, or exits on failure."""
    load = [os.getloadavg()[0]]
    start = time.perf_counter()
    with open(log_path, "w") as out:
        rc = subprocess.call(cmd, stdout=out, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - start
    if rc != 0:
        with open(log_path) as f:
            tail = f.read()[-3000:]
        sys.exit("compare: %s failed (exit %d) after %.0f s; its output (%s) ends:\n%s"
                 % (os.path.basename(cmd[1] if cmd[0] == sys.executable else cmd[0]), rc, wall,
                    log_path, tail))
    load.append(os.getloadavg()[0])
    return wall, load


def tune_te(a, w, trials, d):
    log = os.path.join(d, "te.jsonl")
    done = os.path.join(d, "te.json")
    if a.reuse and os.path.exists(done):
        return json.load(open(done))
    if os.path.exists(log):
        os.remove(log)           # a fresh search: an old log would warm it and count as done
    # --jobs matches MetaSchedule's LocalBuilder, which compiles with one process per CPU
    wall, load = run_timed([a.te_tune, "tune", w.te_text, "--trials", str(trials), "--log", log,
                      "--seed", str(a.seed), "--threads", str(a.threads), "--jobs",
                            str(os.cpu_count() or 1), "--target", TE_TARGET, "--quiet"],
                           os.path.join(d, "te.out"))
    records = [json.loads(line) for line in open(log) if line.strip()]
    trial_records = [r for r in records if not r.get("tuner", {}).get("confirm")]
    result = {"tune_s": wall, "load": load, "trials": len(trial_records),
              "valid": sum(1 for r in trial_records if r["result"]["error"] == 0),
              "flops": records[0]["flops"] if records else None}
    json.dump(result, open(done, "w"), indent=1)
    return result


def tune_ms(a, w, trials, d):
    done = os.path.join(d, "ms.json")
    if a.reuse and os.path.exists(done):
        return json.load(open(done))
    work = os.path.join(d, "ms")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    wall, load = run_timed([sys.executable, os.path.join(HERE, "tune_metaschedule.py"),
                            "--workload", w.name, "--trials", str(trials), "--work-dir", work,
                            "--seed", str(a.seed), "--threads", str(a.threads)],
                           os.path.join(d, "ms.out"))
    result = json.load(open(os.path.join(work, "result.json")))
    result["tune_s"], result["load"] = wall, load
    json.dump(result, open(done, "w"), indent=1)
    return result


# ----------------------------------------------------------------------------- kernels
class TeKernel:
    """te's best schedule from the log, built through te's Python bindings and called through
    te_module_call with the argument headers made once (no per-call conversion)."""

    def __init__(self, w, log, arrays):
        import te
        outs = te.parse(w.te_text)
        ins = te.workload_inputs(outs)
        s = te.create_schedule(outs)
        te.apply_best(s, log, target=TE_TARGET)
        self.mod = te.build(s, ins + outs, target=TE_TARGET, name="kernel")
        from te import dlpack
        self._held = [dlpack.as_dltensor(x) for x in arrays]
        self._args = (ctypes.c_void_p * len(arrays))(
            *[ctypes.addressof(h.dl) for h in self._held])
        self._none = (ctypes.c_void_p * 1)()
        self._call = te._lib.lib.te_module_call
        self._name = b"kernel"
        self._te = te

    def __call__(self):
        st = self._call(self.mod.handle, self._name, len(self._held), self._args, 0, self._none)
        if st != 0:
            self._te.errors.check(self.mod.ctx, st, "te_module_call")


class TvmKernel:
    """MetaSchedule's best kernel, exported by tune_metaschedule.py, through TVM's runtime."""

    def __init__(self, so_path, arrays):
        import tvm
        self._f = tvm.runtime.load_module(so_path)["main"]
        dev = tvm.cpu()
        self.tensors = [tvm.runtime.tensor(x, dev) for x in arrays]

    def __call__(self):
        self._f(*self.tensors)

    def output(self):
        return self.tensors[-1].numpy()


def check(what, got, ref):
    """The kernel's relative error against the reference; exits the run (after saying so
    loudly) when it is over TOLERANCE or not finite."""
    scale = float(abs(ref).max()) or 1.0
    err = float(abs(got.astype("float64") - ref).max()) / scale
    if not err <= TOLERANCE:     # also catches NaN: the output was poisoned with NaN
        sys.exit("compare: NUMERIC MISMATCH: %s: max |got - numpy| / max |numpy| = %.3g > %g"
                 % (what, err, TOLERANCE))
    return err


def time_kernels(kernels, min_sample_s, rounds, samples=5, pause_s=0.5):
    """Median seconds per call of each kernel (a dict name -> callable). Each round times every
    kernel in turn (samples of repeated calls, at least min_sample_s each), so a slow minute of
    a shared machine falls on all of them; the order rotates from round to round, and each
    kernel's turn starts after a pause, so that no runtime's kernel runs beside worker threads
    of another that are still spinning. OpenBLAS's and TVM's wait busily after a call: TVM
    0.27's worker burned 0.09 s of CPU in each of the two 100 ms windows after its last call
    and none after that (/proc/self/task, Zen 3), while te's workers sleep at once; the pause
    outlasts it."""
    number = {}
    for name, fn in kernels.items():
        fn()                                      # warm-up: pages, caches, thread pools
        n, start = 0, time.perf_counter()
        while True:
            fn()
            n += 1
            if time.perf_counter() - start >= min_sample_s:
                break
        number[name] = n
    times = {name: [] for name in kernels}
    names = list(kernels)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            fn = kernels[name]
            time.sleep(pause_s)
            fn()
            for _ in range(samples):
                n = number[name]
                start = time.perf_counter()
                for _ in range(n):
                    fn()
                times[name].append((time.perf_counter() - start) / n)
    return {name: statistics.median(t) for name, t in times.items()}


def blas_info():
    try:
        from threadpoolctl import threadpool_info
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                return "%s %s (%s, %d threads)" % (lib.get("internal_api"), lib.get("version"),
                                                   lib.get("architecture"),
                                                   lib.get("num_threads"))
    except ImportError:
        pass
    return "unknown BLAS"


# ----------------------------------------------------------------------------- table
TABLE_ROW = "%-27s | %8s %6s %8s | %8s %6s %8s | %8s | %7s %7s"


def fmt(v, spec, none="-"):
    return none if v is None else format(v, spec)


def print_table(rows, trials, threads, target, blas):
    print()
    print("te-tune vs TVM MetaSchedule 0.27, %d trials, %d threads, %s; numpy on %s"
          % (trials, threads, target, blas))
    head = TABLE_ROW % ("workload", "te tune", "trials", "GFLOP/s", "MS tune", "trials",
                        "GFLOP/s", "numpy", "te/MS", "te/MS")
    sub = TABLE_ROW % ("", "s", "", "kernel", "s", "", "kernel", "GFLOP/s", "speed", "time")
    print(head)
    print(sub)
    print("-" * len(head))
    for r in rows:
        te_r, ms_r = r.get("te"), r.get("ms")
        speed = (r["te_gflops"] / r["ms_gflops"]
                 if r.get("te_gflops") and r.get("ms_gflops") else None)
        ttime = te_r["tune_s"] / ms_r["tune_s"] if te_r and ms_r else None
        print(TABLE_ROW % (r["title"], fmt(te_r and te_r["tune_s"], ".1f"),
                           fmt(te_r and te_r["trials"], "d"), fmt(r.get("te_gflops"), ".1f"),
                           fmt(ms_r and ms_r["tune_s"], ".1f"), fmt(ms_r and ms_r["trials"], "d"),
                           fmt(r.get("ms_gflops"), ".1f"), fmt(r.get("np_gflops"), ".1f"),
                           fmt(speed, ".2f"), fmt(ttime, ".2f")))
    print("te/MS speed > 1: te's kernel is faster; te/MS time < 1: te-tune tuned in less time. "
          "Kernel times are medians of %d-thread calls in this one process." % threads)
    loads = []
    for tuner, label in (("te", "te-tune"), ("ms", "MetaSchedule")):
        seen = [x for r in rows if r.get(tuner) for x in r[tuner].get("load", [])]
        if seen:
            loads.append("while %s tuned %.1f-%.1f" % (label, min(seen), max(seen)))
    seen = [x for r in rows for x in r.get("timing_load", [])]
    if seen:
        loads.append("while timing %.1f-%.1f" % (min(seen), max(seen)))
    if loads:
        print("The machine's 1-minute load average (%d CPUs): %s." % (os.cpu_count() or 0,
                                                                       "; ".join(loads)))


def main():
    a = parse_args()
    os.environ["TVM_NUM_THREADS"] = str(a.threads)   # before TVM starts its thread pool
    os.makedirs(a.out, exist_ok=True)
    import numpy as np
    results = []
    for trials in a.trials:
        for w in a.workloads:
            d = os.path.join(a.out, "t%d" % trials, w.name)
            os.makedirs(d, exist_ok=True)
            row = {"workload": w.name, "title": w.title, "trials_asked": trials}
            if "te" in a.tuners:
                print("compare: te-tune, %s, %d trials" % (w.name, trials), flush=True)
                row["te"] = tune_te(a, w, trials, d)
                if row["te"]["flops"] is not None and row["te"]["flops"] != w.flops:
                    print("compare: warning: %s: te-tune counts %.0f FLOP, the table %.0f"
                          % (w.name, row["te"]["flops"], w.flops))
            if "ms" in a.tuners:
                print("compare: MetaSchedule, %s, %d trials" % (w.name, trials), flush=True)
                row["ms"] = tune_ms(a, w, trials, d)
            results.append((w, d, row))

    # Every kernel runs here, in one process: te through libte, MetaSchedule's through TVM's
    # runtime, numpy on its BLAS, each with a.threads threads.
    if "te" in a.tuners:
        sys.path.insert(0, os.path.join(REPO, "python"))
        import te
        te.set_num_threads(a.threads)
        target = te.target(TE_TARGET).short
    else:
        target = TE_TARGET
    try:
        from threadpoolctl import threadpool_limits
        threadpool_limits(a.threads, user_api="blas")
    except ImportError:
        pass
    blas = blas_info()
    rng = np.random.default_rng(a.seed)
    for w, d, row in results:
        inputs = w.inputs(rng)
        ref = w.reference(*inputs)
        kernels = {}
        if "te" in a.tuners:
            out = np.full(ref.shape, np.nan, np.float32)
            k = TeKernel(w, os.path.join(d, "te.jsonl"), inputs + [out])
            k()
            row["te_error"] = check("te-tune's %s (%d trials)" % (w.name, row["trials_asked"]),
                                    out, ref)
            kernels["te"] = k
        if "ms" in a.tuners:
            k = TvmKernel(os.path.join(d, "ms", "kernel.so"),
                          inputs + [np.full(ref.shape, np.nan, np.float32)])
            k()
            row["ms_error"] = check("MetaSchedule's %s (%d trials)"
                                    % (w.name, row["trials_asked"]), k.output(), ref)
            kernels["ms"] = k
        np_out = np.empty(ref.shape, np.float32)
        kernels["np"] = lambda w=w, inputs=inputs, np_out=np_out: w.numpy_fn(*inputs, out=np_out)
        kernels["np"]()
        check("numpy's %s" % w.name, np_out, ref)
        row["timing_load"] = [os.getloadavg()[0]]
        secs = time_kernels(kernels, a.min_sample_s, a.rounds)
        row["timing_load"].append(os.getloadavg()[0])
        for name, s in secs.items():
            row[name + "_s"] = s
            row[name + "_gflops"] = w.flops / s * 1e-9
    by_trials = {}
    for w, d, row in results:
        by_trials.setdefault(row["trials_asked"], []).append(row)
    for trials, rows in by_trials.items():
        print_table(rows, trials, a.threads, target, blas)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"threads": a.threads, "target": target, "blas": blas,
                   "rows": [row for _, _, row in results]}, f, indent=1)
    print("\nresults: %s" % os.path.join(a.out, "results.json"))


if __name__ == "__main__":
    main()
