"""Autotuning (te/tune.h): search a schedule, keep every measurement in a tuning log, apply the
best one later.

    summary = te.tune(C, target="llvm", log_path="matmul.jsonl", trials=64)
    s = te.create_schedule(C)
    te.apply_best(s, "matmul.jsonl", target="llvm")     # te.NotFoundError when no record

With ``template=fn`` the candidates are those of a schedule template written in Python
(te/knobs.py): fn(schedule, knobs) schedules by hand and takes its open values from knobs.

Present only when the loaded libte has te_tune (``te.HAS_TUNE``); otherwise the functions
raise te.UnsupportedError.
"""
import ctypes
from collections import namedtuple

from . import _lib
from . import _tune_spawn
from . import errors
from . import knobs as _knobs
from .build import Target, _target_in
from .schedule import Schedule
from .tensor import Tensor

L = _lib.lib


class te_tune_progress(ctypes.Structure):
    _fields_ = [("trials_done", ctypes.c_int), ("trials_total", ctypes.c_int),
                ("best_gflops", ctypes.c_double), ("best_cost_s", ctypes.c_double),
                ("last_gflops", ctypes.c_double), ("last_status", ctypes.c_int),
                ("last_error", ctypes.c_char_p), ("elapsed_s", ctypes.c_double),
                ("eta_s", ctypes.c_double), ("round", ctypes.c_int),
                ("best_gops", ctypes.c_double), ("last_gops", ctypes.c_double)]


class te_tune_summary(ctypes.Structure):
    _fields_ = [("trials_done", ctypes.c_int), ("measured", ctypes.c_int),
                ("errors", ctypes.c_int), ("best_cost_s", ctypes.c_double),
                ("best_gflops", ctypes.c_double), ("key", ctypes.c_char * 17),
                ("confirmed", ctypes.c_int), ("transfer_records", ctypes.c_int),
                ("transfer_workloads", ctypes.c_int), ("best_gops", ctypes.c_double),
                ("flops", ctypes.c_double), ("int_ops", ctypes.c_double)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.POINTER(te_tune_progress), ctypes.c_void_p)


class te_tune_options(ctypes.Structure):
    _fields_ = [("trials", ctypes.c_int), ("time_budget_s", ctypes.c_double),
                ("early_stop", ctypes.c_int), ("jobs", ctypes.c_int),
                ("seed", ctypes.c_uint64), ("log_path", ctypes.c_char_p),
                ("resume", ctypes.c_int), ("batch", ctypes.c_int),
                ("population", ctypes.c_int), ("generations", ctypes.c_int),
                ("epsilon", ctypes.c_double), ("no_model", ctypes.c_int),
                ("min_repeat_s", ctypes.c_double), ("min_repeats", ctypes.c_int),
                ("max_repeats", ctypes.c_int), ("timeout_s", ctypes.c_double),
                ("threads", ctypes.c_int), ("check", ctypes.c_int),
                ("description", ctypes.c_char_p), ("progress", PROGRESS_FN),
                ("progress_user", ctypes.c_void_p),
                ("summary", ctypes.POINTER(te_tune_summary)),
                # a schedule template (te_tune_template_fn) and its user pointer: tune(template=)
                # sets template_fn to a te.knobs.TemplateRun's callback; template_user is unused
                ("template_fn", _knobs.TEMPLATE_FN), ("template_user", ctypes.c_void_p),
                ("confirm", ctypes.c_int), ("confirm_rounds", ctypes.c_int),
                ("flush_cache", ctypes.c_int), ("transfer_logs", ctypes.c_char_p),
                ("clock", ctypes.c_int),
                # statements after unrolling above which a candidate is refused, not compiled
                ("max_statements", ctypes.c_int)]

# te_tune_options.clock (te_tune_clock): tune(clock="cpu" | "wall"), or the enum's value
CLOCKS = {"cpu": 0, "wall": 1}


_lib.declare({
    "te_tune": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, _lib.PP, ctypes.c_void_p,
                               ctypes.POINTER(te_tune_options)]),
    "te_apply_best": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]),
    "te_rt_cuda_started": (ctypes.c_int, []),
    "te_rt_vk_started": (ctypes.c_int, []),
    "te_tune_workload": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int, _lib.PP,
                                           ctypes.c_char_p]),
})

HAS_TUNE = _lib.has("te_tune") and _lib.has("te_apply_best")

# best_gops / last_gops: G operations a second, integer arithmetic included (the rate of an
# integer workload, int_ops > 0, whose best_gflops is 0); equal to the GFLOP/s otherwise.
TuneSummary = namedtuple("TuneSummary",
                         "trials_done measured errors best_cost_s best_gflops key confirmed "
                         "best_gops flops int_ops")
TuneProgress = namedtuple("TuneProgress", "trials_done trials_total best_gflops best_cost_s "
                          "last_gflops last_status last_error elapsed_s eta_s round "
                          "best_gops last_gops")

_OPTION_NAMES = ("trials", "time_budget_s", "early_stop", "jobs", "seed", "resume", "batch",
                 "population", "generations", "epsilon", "no_model", "min_repeat_s",
                 "min_repeats", "max_repeats", "timeout_s", "threads", "check", "confirm",
                 "confirm_rounds", "clock", "max_statements")


def _need(name):
    if not _lib.has(name):
        raise errors.UnsupportedError("%s: this libte (%s) was built without autotuning"
                                      % (name, _lib.path))


def _outs(outs):
    if isinstance(outs, Tensor):
        outs = [outs]
    outs = list(outs)
    if not outs or not all(isinstance(t, Tensor) for t in outs):
        raise errors.InvalidArgError("expected output te.Tensor(s)")
    return outs


def _gpu_started(tgt):
    """True when tgt is a GPU target whose driver this process has started (te_tune's forked
    children could not use it: the tuning then runs in a spawned process)."""
    word = str(tgt).split()[0] if str(tgt).split() else ""
    fn = {"cuda": "te_rt_cuda_started", "vulkan": "te_rt_vk_started"}.get(word)
    return bool(fn and _lib.has(fn) and getattr(L, fn)())


def tune(outs, target="llvm", log_path=None, description=None, progress=None, template=None,
         **options):
    """Tunes the computation of outs for target, appending one record per measured candidate
    to log_path. options are te_tune_options' fields (trials=64, time_budget_s, early_stop,
    jobs, seed, resume, batch, population, generations, epsilon, no_model, min_repeat_s,
    min_repeats, max_repeats, timeout_s, threads, check, confirm=4: the best this-many
    schedules measured again side by side at the end (< 0: never), confirm_rounds=3,
    clock="cpu" (a run's cost less its threads' waits for a core) or "wall", max_statements=2000:
    a candidate whose lowered body has more statements after unrolling is a failed trial, never
    compiled; see docs/tuning-measurement.md).
    progress, when given, is called with a TuneProgress after every measured trial. template, when given, is a schedule template
    template(schedule, knobs) (te.Knobs; see te/knobs.py) whose knobs are searched instead of
    the generated candidates (sketch "user" in the log); when its first run fails, tune raises
    te's error, chained to the exception the template raised. Returns a TuneSummary.
    In a process where PyTorch is loaded, or (a cuda or vulkan target) that has already
    started that GPU driver (te.device arrays, kernels run), the tuning runs in a fresh Python
    process (te_tune's forked measurement children would hang on PyTorch's threads, and GPU
    drivers do not survive fork; te/_tune_spawn.py), where progress and template cannot go:
    they are refused there (te.UnsupportedError)."""
    outs = _outs(outs)
    ctx = outs[0].ctx
    if log_path is None:
        raise errors.InvalidArgError("te.tune: log_path is required")
    unknown = set(options) - set(_OPTION_NAMES)
    if unknown:
        raise errors.InvalidArgError("te.tune: unknown option(s) %s" % ", ".join(sorted(unknown)))
    _need("te_tune")
    if template is not None and not callable(template):
        raise errors.InvalidArgError("te.tune: template must be a function (schedule, knobs), "
                                     "got %s" % type(template).__name__)
    if template is not None and not _knobs.HAS_TEMPLATES:
        raise errors.UnsupportedError("te.tune: this libte (%s) has no schedule templates "
                                      "(te_knob_*)" % _lib.path)
    tgt = _target_in(ctx, target)
    if _tune_spawn.needed() or _gpu_started(tgt):
        # PyTorch's threads would hang te_tune's forked children: tune in a fresh process
        if progress is not None or template is not None:
            _tune_spawn.refuse_callbacks(progress, template)
        from .parse import workload_text
        r = _tune_spawn.tune(workload_text(outs), str(tgt), log_path, description,
                             {k: (int(v) if isinstance(v, bool) else v)
                              for k, v in options.items()})
        return TuneSummary(*r)
    opts = te_tune_options()
    for k, v in options.items():
        if k == "clock" and isinstance(v, str):
            if v not in CLOCKS:
                raise errors.InvalidArgError("te.tune: clock must be one of %s, got %r"
                                             % (", ".join(CLOCKS), v))
            v = CLOCKS[v]
        setattr(opts, k, int(v) if isinstance(v, bool) else v)
    import os
    opts.log_path = _lib.encode(os.fspath(log_path))
    opts.description = _lib.encode(description)
    summary = te_tune_summary()
    opts.summary = ctypes.pointer(summary)
    failure = []
    if progress is not None:
        def cb(p, _user):
            if failure:
                return
            try:
                v = p.contents
                progress(TuneProgress(v.trials_done, v.trials_total, v.best_gflops, v.best_cost_s,
                                      v.last_gflops, v.last_status,
                                      (v.last_error or b"").decode("utf-8", "replace"),
                                      v.elapsed_s, v.eta_s, v.round, v.best_gops,
                                      v.last_gops))
            except BaseException as e:     # raised again after te_tune returns
                failure.append(e)
        opts.progress = PROGRESS_FN(cb)
    run = None
    if template is not None:
        run = _knobs.TemplateRun(template, outs)   # holds the callback until te_tune returns
        opts.template_fn = run.c_fn
    st = L.te_tune(ctx._ptr, len(outs), _lib.ptr_array([t._p for t in outs]), tgt._p,
                   ctypes.byref(opts))
    if run is not None:
        run.raise_for(ctx, st)
    errors.check(ctx, st, "te_tune")
    if failure:
        raise failure[0]
    return TuneSummary(summary.trials_done, summary.measured, summary.errors,
                       summary.best_cost_s, summary.best_gflops, summary.key.decode(),
                       summary.confirmed, summary.best_gops, summary.flops, summary.int_ops)


def apply_best(s, log_path, target="llvm"):
    """Replays on schedule s the best record of log_path for s's computation and target
    (te.NotFoundError when there is none: s is left unchanged). With a symbolic size, s
    becomes the dispatch among the size's tuned buckets (`te-tune tune --bucket`,
    docs/tuning-buckets.md)."""
    _need("te_apply_best")
    if not isinstance(s, Schedule):
        raise errors.InvalidArgError("te.apply_best: expected a te.Schedule")
    import os
    tgt = target if isinstance(target, Target) else _target_in(s.ctx, target)
    errors.check(s.ctx, L.te_apply_best(s._p, _lib.encode(os.fspath(log_path)), tgt._p),
                 "te_apply_best")


def tune_workload(outs):
    """(text, key): the canonical text of the computation and its key, as tuning logs store."""
    _need("te_tune_workload")
    outs = _outs(outs)
    ctx = outs[0].ctx
    key = ctypes.create_string_buffer(17)
    p = L.te_tune_workload(ctx._ptr, len(outs), _lib.ptr_array([t._p for t in outs]), key)
    if not p:
        errors.raise_last(ctx, "te_tune_workload")
    return _lib.take_string(p), key.value.decode()


Knobs = _knobs.Knobs
HAS_TEMPLATES = HAS_TUNE and _knobs.HAS_TEMPLATES

__all__ = ["tune", "apply_best", "tune_workload", "TuneSummary", "TuneProgress", "Knobs",
           "HAS_TUNE", "HAS_TEMPLATES"]
