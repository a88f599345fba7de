"""te as a torch.compile backend: ``torch.compile(model, backend="te")``.

The package's entry point (python/pyproject.toml, group torch_dynamo_backends) registers
``backend`` under the name "te". TorchDynamo hands it the FX graph it captured; AOTAutograd
turns that into an aten graph (with the decompositions of ``DECOMPOSITIONS``), and each
forward graph becomes a te program: lower.py partitions it into te kernels (aten_ops.OPS, with
element-wise chains fused into their producers) and PyTorch calls for the rest, and
schedules.py gives each kernel te's default CPU schedule, or the best record of a te-tune log
(``options={"tuning_log": path}``). A graph with Dynamo's symbolic sizes (``dynamic=True``, or a
dimension marked dynamic) gets one symbolic plan that serves every size (symbolic.py): its
kernels are built once, with te size variables for the symbols. A graph without them, or one
whose symbolic plan te cannot make (listed as a ("shapes", reason) fallback), keeps one plan
per shape signature (the inputs' shapes and dtypes, and the values of the symbolic sizes).
Backward graphs run in PyTorch.

    compiled = torch.compile(model, backend="te", options={"tuning_log": "mm.jsonl"})
    te.torch.fallbacks()   # [("aten.foo.default", "why"), ...] of the graphs compiled so far

Operators that fall back are logged once per plan (logger "te.torch", level WARNING).
"""
import logging
import os
import threading

import torch

import te
from .aten_ops import OPS, covered_ops

log = logging.getLogger("te.torch")
aten = torch.ops.aten

# Composite operators rewritten into ones te computes before lowering.
_DECOMPOSE = [aten._scaled_dot_product_flash_attention_for_cpu.default,
              aten._scaled_dot_product_attention_math.default, aten.addmm.out,
              aten.linear.default, aten.native_dropout.default, aten.baddbmm.default,
              aten.silu.default, aten.hardswish.default, aten.leaky_relu.default,
              aten.var_mean.correction, aten.masked_fill.Scalar]

_lock = threading.Lock()
_fallbacks = []
_kernels = []
_stats = {"graphs": 0, "plans": 0, "symbolic_plans": 0, "kernels": 0, "tuned_kernels": 0}


def fallbacks():
    """(operator, reason) of every node that ran in PyTorch, over the plans made so far."""
    with _lock:
        return list(_fallbacks)


def kernels():
    """The KernelSteps of every plan made so far (each with .root, the te tensor it computes:
    te.tune([step.root], ...) tunes that kernel's workload for a tuning_log)."""
    with _lock:
        return list(_kernels)


def stats():
    """Counts of compiled graphs; plans made (each one te compile: a symbolic plan, or one per
    shape signature), of which symbolic; kernels in them, and tuned kernels."""
    with _lock:
        return dict(_stats)


def reset():
    """Forgets the recorded fallbacks and counts (compiled graphs keep their plans)."""
    with _lock:
        _fallbacks.clear()
        _kernels.clear()
        for k in _stats:
            _stats[k] = 0


def _decompositions():
    from torch._decomp import get_decompositions
    table = get_decompositions([o for o in _DECOMPOSE if o not in OPS])
    from .decompose import TABLE
    table.update(TABLE)
    return table


class CompiledGraph:
    """An aten forward graph with its plans: one symbolic plan for a graph with symbolic sizes
    (when te can make it), else one per shape signature."""

    def __init__(self, gm, options):
        from .lower import is_symbolic_graph
        self.gm, self.options = gm, dict(options or {})
        self.plans = {}
        self.threads = None
        self.symbolic = is_symbolic_graph(gm)   # None once te failed to make the symbolic plan
        self.symbolic_plan = None
        self._said_device = False       # the fallback of inputs on another device listed

    @staticmethod
    def signature(args):
        return tuple((tuple(a.shape), a.dtype, a.device.type) if isinstance(a, torch.Tensor)
                     else (type(a).__name__, a) for a in args)

    def plan_for(self, args):
        if self.symbolic_plan is not None:
            return self.symbolic_plan
        if self.symbolic:
            plan = self._symbolic(args)
            if plan is not None:
                self.symbolic_plan = plan
                return plan
        key = self.signature(args)
        plan = self.plans.get(key)
        if plan is None:
            from .lower import Lowerer
            try:
                plan = Lowerer(self.gm, args, self.options).lower()
            except te.Error as e:
                # a kernel te could not build: this graph runs in PyTorch, and says so
                plan = _EagerPlan(self.gm, "te could not compile this graph: %s" % e)
            self.plans[key] = plan
            self._record(plan)
        return plan

    def _not_on_cpu(self, devices):
        """Says once per graph that its inputs on another device run it in PyTorch."""
        if self._said_device:
            return
        self._said_device = True
        reason = ("inputs on %s: te's backend makes CPU kernels only (it has no GPU schedules "
                  "for its kernels yet; te.device and te.build(target='cuda') take CUDA "
                  "tensors directly), so this graph runs in PyTorch" % ", ".join(sorted(devices)))
        with _lock:
            _fallbacks.append(("graph", reason))
        log.warning("te: %s", reason)

    def _symbolic(self, args):
        """The graph's symbolic plan, or None (recorded as a fallback) when te cannot make
        it: a handler that needs concrete sizes, or a kernel te refuses with symbolic ones."""
        from .lower import Lowerer
        from .symbolic import SymbolicUnsupported
        try:
            plan = Lowerer(self.gm, args, self.options, symbolic=True).lower()
        except (SymbolicUnsupported, te.Error) as e:
            self.symbolic = None
            reason = "symbolic sizes: %s; one plan per shape instead" % e
            with _lock:
                _fallbacks.append(("shapes", reason))
            log.warning("te: %s", reason)
            return None
        with _lock:
            _stats["symbolic_plans"] += 1
        self._record(plan)
        return plan

    def _record(self, plan):
        with _lock:
            _stats["plans"] += 1
            _stats["kernels"] += len(plan.kernels)
            _stats["tuned_kernels"] += sum(1 for k in plan.kernels if k.tuned)
            _fallbacks.extend(plan.fallbacks)
            _kernels.extend(plan.kernels)
        if plan.fallbacks:
            log.warning("te: %d operator(s) of this graph run in PyTorch: %s",
                        len(plan.fallbacks),
                        "; ".join("%s (%s)" % f for f in plan.fallbacks))

    def __call__(self, *args):
        devices = {a.device.type for a in args if isinstance(a, torch.Tensor)} - {"cpu"}
        if devices:
            self._not_on_cpu(devices)
            return self.gm(*args)          # te's kernels here are CPU kernels
        n = torch.get_num_threads()
        if n != self.threads:
            te.set_num_threads(n)
            self.threads = n
        plan = self.plan_for(args)
        with torch.no_grad():
            return plan.run(args)


class _EagerPlan:
    """The plan of a graph te could not compile: the whole graph in PyTorch."""

    def __init__(self, gm, reason):
        self.gm, self.kernels = gm, []
        self.fallbacks = [("graph", reason)]

    def run(self, args):
        return self.gm(*args)


def _fw_compiler(options):
    def compile_fw(gm, example_inputs):
        from torch._functorch.aot_autograd import make_boxed_func
        with _lock:
            _stats["graphs"] += 1
        cg = CompiledGraph(gm, options)
        return make_boxed_func(cg)
    return compile_fw


def _bw_compiler(gm, example_inputs):
    from torch._functorch.aot_autograd import make_boxed_func
    return make_boxed_func(gm.forward)


def backend(gm, example_inputs, options=None, **kwargs):
    """The torch.compile backend "te" (see the module's documentation). options:
    tuning_log  a te-tune log: each kernel whose workload has a record gets its best schedule;
    target      the te target (default "llvm -mcpu=native")."""
    from torch._dynamo.backends.common import aot_autograd
    opts = dict(options or {})
    opts.update(kwargs)
    unknown = set(opts) - {"tuning_log", "target"}
    if unknown:
        raise te.InvalidArgError("te backend: unknown option(s) %s (known: tuning_log, target)"
                                 % ", ".join(sorted(unknown)))
    log_path = opts.get("tuning_log")
    if log_path is not None and not os.path.isfile(log_path):
        raise te.FileError("te backend: tuning_log '%s' is not a file" % log_path)
    compiler = aot_autograd(fw_compiler=_fw_compiler(opts), bw_compiler=_bw_compiler,
                            decompositions=_decompositions())
    return compiler(gm, example_inputs)


def register():
    """Registers "te" with TorchDynamo by hand (the entry point does it for an installed te)."""
    from torch._dynamo.backends.registry import register_backend, _BACKENDS
    if "te" not in _BACKENDS:
        register_backend(name="te")(backend)


__all__ = ["backend", "fallbacks", "kernels", "stats", "reset", "register", "covered_ops"]
