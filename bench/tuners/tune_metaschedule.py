"""Tunes one workload of bench/tuners/workloads.py with TVM MetaSchedule (apache-tvm 0.27, the
venv of scripts/setup-tvm.sh) and exports its best kernel.

    python tune_metaschedule.py --workload matmul --trials 64 --work-dir DIR [--seed 0]

compare.py runs it as a process of its own per workload (MetaSchedule's builder and runner pools
and the tuning's memory go away with it) and times the whole process as MetaSchedule's tuning
time. Writes DIR/kernel.so (the best schedule, tvm.compile'd and exported) and DIR/result.json
(the trials MetaSchedule measured, its own best cost, the target). MetaSchedule's database and
logs stay in DIR/ms.

Everything is MetaSchedule's default (tune_tir: evolutionary search, XGBoost cost model,
LocalBuilder with one worker per CPU, LocalRunner with its EvaluatorConfig), with one exception:
the builder's workers import tvm.s_tir.tensor_intrin in their initializer, outside the build's
30 s timeout. TVM 0.27's default_build imports it in the first build of every worker (and the
builder starts new workers for every batch): 17 CPU seconds here, over 30 s of wall time on a
busy machine, when every candidate of the batch fails with "LocalBuilder: Timeout". The import
still happens, and still counts in the tuning time.
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads  # noqa: E402


def _import_intrinsics():
    import tvm.s_tir.tensor_intrin  # noqa: F401  (registers the tensor intrinsics)


def host_target(tvm, threads):
    """The host CPU as LLVM names it (te-tune's "llvm -mcpu=native"), with threads cores."""
    cpu = tvm.target.codegen.llvm_get_system_cpu()
    return tvm.target.Target({"kind": "llvm", "mcpu": cpu, "num-cores": threads})


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workload", required=True, choices=sorted(workloads.BY_NAME))
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--work-dir", required=True)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()

    import tvm
    from tvm.s_tir import meta_schedule as ms

    w = workloads.BY_NAME[args.workload]
    func = tvm.te.create_prim_func(w.tvm_fn(tvm))
    target = host_target(tvm, args.threads)
    ms_dir = os.path.join(args.work_dir, "ms")
    start = time.perf_counter()
    database = ms.tune_tir(
        func, target, work_dir=ms_dir, max_trials_global=args.trials,
        num_trials_per_iter=min(64, args.trials), seed=args.seed,
        builder=ms.builder.LocalBuilder(initializer=_import_intrinsics))
    tune_s = time.perf_counter() - start
    sch = ms.tir_integration.compile_tir(database, func, target)
    if sch is None:
        sys.exit("tune_metaschedule: %s: MetaSchedule found no valid schedule in %d trials "
                 "(see %s/logs)" % (w.name, args.trials, ms_dir))
    lib = tvm.compile(sch.mod, target=target)
    lib.export_library(os.path.join(args.work_dir, "kernel.so"))

    records = database.get_all_tuning_records()
    costs = [float(sum(r.run_secs) / len(r.run_secs)) for r in records
             if r.run_secs and all(float(s) < 1e9 for s in r.run_secs)]
    with open(os.path.join(args.work_dir, "result.json"), "w") as f:
        json.dump({"workload": w.name, "trials": len(records), "valid": len(costs),
                   "best_cost_s": min(costs) if costs else None, "tune_call_s": tune_s,
                   "target": str(target), "trace": str(sch.trace)}, f, indent=1)


if __name__ == "__main__":
    main()
