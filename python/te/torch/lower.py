"""Lowering an aten FX graph to a Plan of te kernels and PyTorch calls.

A plan is made either for one shape signature or, when the graph has Dynamo's symbolic sizes,
for all sizes at once (``symbolic=True``, symbolic.py). For one signature, the graph is first
run once eagerly on the real inputs (``_record``), which gives every node's shape and dtype and
the value of every symbolic size, and the plan is made for those sizes. A symbolic plan takes
the shapes from the graph's own metadata (``node.meta["val"]``: fake tensors whose sizes are
sympy expressions of the symbols, and SymInts), keeps them symbolic in every kernel, and reads
the symbols' values from the inputs at each call. The backend (``__init__.py``) keeps the
symbolic plan, or failing that one plan per shape signature.

Nodes are visited in order. A node te computes (aten_ops.OPS, float32) becomes a Val; a Val is
materialized — made the output of a kernel of its own — when something needs it in memory: a
graph output, a PyTorch fallback, a second consumer of an expensive or fused value, a reduction
or a layout change of a fused matmul / conv2d result. Everything else is inlined into the kernel
that materializes its consumer, and an element-wise chain after a matmul or conv2d is that
anchor's epilogue, computed tile by tile with it. A node te does not compute runs in PyTorch
(a Plan step calling node.target), and its inputs are materialized first: the graph is
partitioned into te kernels and PyTorch calls, in the graph's order.
"""
import operator
import re
import threading

import torch
import torch.fx

import te
from . import aten_ops
from .aten_ops import OPS, Unsupported
from .plan import Plan, KernelStep, TorchStep
from .schedules import schedule_kernel
from .symbolic import Symbols, SymbolicUnsupported, evaluator, free, is_sym, norm, tex_shape
from .values import Val

_TE_DTYPES = {torch.float32: "float32", torch.int64: "int64"}


class _Meta:
    __slots__ = ("shape", "dtype")

    def __init__(self, t):
        self.shape, self.dtype = tuple(norm(d) for d in t.shape), t.dtype


def _summary(x):
    if isinstance(x, torch.Tensor):
        return _Meta(x)
    if isinstance(x, (tuple, list)):
        return type(x)(_summary(y) for y in x)
    return x


def _record(gm, args):
    """{node: shape/dtype summary or Python value} from one eager run of gm on args."""
    meta = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            meta[n] = _summary(r)
            return r
    with torch.no_grad():
        Recorder(gm).run(*args)
    return meta


def _symbolic_meta(gm):
    """{node: shape/dtype summary or sympy size} from the graph's own metadata (fake tensors
    and SymInts with sympy sizes), for a symbolic plan."""
    meta = {}
    for n in gm.graph.nodes:
        if n.op == "output":
            continue
        if "val" not in n.meta:
            raise SymbolicUnsupported("node %s has no shape metadata" % n.name)
        meta[n] = _sym_summary(n.meta["val"])
    return meta


def _sym_summary(x):
    if isinstance(x, torch.Tensor):
        return _Meta(x)
    if isinstance(x, torch.SymInt):
        return norm(x)
    if isinstance(x, (torch.SymFloat, torch.SymBool)):
        raise SymbolicUnsupported("a symbolic %s" % type(x).__name__)
    if isinstance(x, (tuple, list)):
        return type(x)(_sym_summary(y) for y in x)
    return x


def is_symbolic_graph(gm):
    """Whether the graph has Dynamo's symbolic sizes (a SymInt input, or a symbolic extent)."""
    for n in gm.graph.nodes:
        if n.op != "placeholder":
            continue
        v = n.meta.get("val")
        if isinstance(v, torch.SymInt):
            return True
        if isinstance(v, torch.Tensor) and any(isinstance(d, torch.SymInt) for d in v.shape):
            return True
    return False


class _TeTuple:
    """The tuple result of a node te computes only the first element of (native_layer_norm,
    max_pool2d_with_indices): getitem 0 gives the Val."""

    def __init__(self, vals):
        self.vals = vals


class Lowerer:
    """Builds the Plan for gm and one list of inputs (see the module's documentation)."""

    def __init__(self, gm, args, options, symbolic=False):
        self.gm, self.args, self.options = gm, list(args), options
        self.symbolic = symbolic
        self.target = options.get("target", "llvm -mcpu=native")
        self.tuning_log = options.get("tuning_log")
        self.ctx = te.Context()
        self.tgt = te.target(self.target, ctx=self.ctx)
        self.lanes = max(4, self.tgt.vector_bits // 32)
        self.meta = {}
        self.env = {}
        self.plan = Plan(self.ctx)
        self.names = {}
        self.torch_vals = {}     # slot -> Val placeholder of a PyTorch-made tensor
        self.mat = {}            # id(Val) -> (Val, its materialized placeholder)
        self.node = None
        self.syms = Symbols(self.ctx)

    # ------------------------------------------------------------- helpers for aten_ops
    def name(self, base):
        n = self.names.get(base, 0)
        self.names[base] = n + 1
        return "%s%d" % (base, n)

    def shape_of(self, node):
        m = self.meta[node]
        if isinstance(m, (tuple, list)):
            m = m[0]
        return m.shape

    def materialize(self, v, memo=False):
        """v as the output of a kernel; returns the placeholder Val its consumers read. memo:
        v is a copy of graph inputs read by te only (a packed weight), which the kernel step
        may keep between calls while those inputs are unchanged (plan.KernelStep)."""
        if v.slot is not None:
            return v
        if id(v) in self.mat:
            return self.mat[id(v)][1]
        slot = self.plan.new_slot()
        root = v.tensor if (v.anchor is v) else te.compute(tex_shape(v.shape),
                                                           lambda *i: v.load(i),
                                                           name=self.name("out"))
        inputs = list(v.reads.values())
        # a symbol te must bind that is no argument's extent (say s1 of an output of extent
        # s0*s1): an unread argument of extent (s1,) carries it (plan.KernelStep)
        bare = {d for p in inputs for d in p.shape if is_sym(d)} | \
            {d for d in v.shape if is_sym(d)}
        needed = set(v.syms)
        for p in inputs:
            needed |= free(*p.shape)
        carriers = sorted((x for x in needed if x not in bare), key=str)
        carrier_ts = [te.placeholder(tex_shape((x,)), name="size_%s" % x) for x in carriers]
        args = [p.tensor for p in inputs] + carrier_ts + [root]
        key = (str(self.tgt), self.tuning_log) + _canonical(root, args)
        with _modules_lock:
            mod, tuned = _modules.get(key, (None, False))
        if mod is None:
            mod, tuned = self._build(root, v, args)
            with _modules_lock:
                _modules[key] = (mod, tuned)
        memo = memo and self.reads_inputs_only(v)
        self.plan.steps.append(KernelStep(mod, [p.slot for p in inputs], slot,
                                          [evaluator(d) for d in v.shape],
                                          [p.shape for p in inputs], [p.extra for p in inputs],
                                          memo, tuned,
                                          v.anchor.kind if v.anchor is not None else "inline",
                                          root, carriers,
                                          [[evaluator(d) for d in p.shape] if p.is_view else None
                                           for p in inputs]))
        p = Val.placeholder(v.shape, "float32", "t%d" % slot, slot)
        self.mat[id(v)] = (v, p)    # v itself kept alive, so that its id stays its own
        return p

    def _build(self, root, v, args):
        s = te.create_schedule(root)
        tuned = False
        if self.tuning_log:
            try:        # the log's best schedule for this kernel's workload, when it has one
                te.apply_best(s, self.tuning_log, self.tgt)
                tuned = True
            except te.NotFoundError:
                pass    # s is unchanged: the default schedule below
        if not tuned:
            schedule_kernel(s, root, v, self.lanes)
        return te.build(s, args, target=self.tgt, name=self.name("k")), tuned

    def plain(self, v):
        """v without a pending anchor: a fused matmul / conv2d result is materialized."""
        return self.materialize(v) if v.anchor is not None else v

    def uncostly(self, v):
        """v cheap to read many times (by a reduction): an expensive chain is materialized."""
        return self.materialize(v) if v.cost > 0 or v.anchor is not None else v

    def matmul_nr(self, n):
        """The columns of a matmul's register tile (schedules.matmul uses the same); a
        symbolic n is taken as large."""
        if is_sym(n):
            return 2 * self.lanes
        return 2 * self.lanes if n >= 2 * self.lanes else min(n, self.lanes)

    def reads_inputs_only(self, v):
        return bool(v.reads) and all(p.slot < self.plan.n_inputs for p in v.reads.values())

    def contiguous_rows(self, v):
        return self.materialize(v, memo=True) if v.strided else v

    def tuple_result(self, node, vals):
        for u in node.users:
            if not (u.target is operator.getitem and u.args[1] == 0):
                raise Unsupported("%s's other results are used" % node.target)
        return _TeTuple(vals)

    # ----------------------------------------------------------------------- the graph
    def _as_val(self, x):
        """A node argument as te sees it: Val for tensors, else the Python value."""
        if isinstance(x, Val):
            return x
        if isinstance(x, _TorchRef):
            m = x.meta
            if not isinstance(m, _Meta) or m.dtype not in _TE_DTYPES or not m.shape:
                raise Unsupported("an input of dtype %s" % getattr(m, "dtype", type(m).__name__))
            p = self.torch_vals.get(x.slot)
            if p is None:
                p = Val.placeholder(m.shape, _TE_DTYPES[m.dtype], "t%d" % x.slot, x.slot)
                self.torch_vals[x.slot] = p
            return p
        if isinstance(x, (list, tuple)):
            return type(x)(self._as_val(y) for y in x)
        return x

    def _lookup(self, node):
        v = self.env[node]
        if isinstance(v, Val) and id(v) in self.mat:
            return self.mat[id(v)][1]
        return v

    def _resolve(self, a):
        return torch.fx.node.map_aggregate(
            a, lambda x: self._lookup(x) if isinstance(x, torch.fx.Node) else x)

    def _for_torch(self, x):
        """A node argument for a PyTorch call: Vals are materialized, then read from a slot."""
        if isinstance(x, Val):
            x = self.materialize(x)
            return _SlotArg(x.slot)
        if isinstance(x, _TorchRef):
            return _SlotArg(x.slot)
        if isinstance(x, _TeTuple):
            raise RuntimeError("internal: a te tuple reaches PyTorch")
        if is_sym(x):
            return _SymArg(evaluator(x))
        if isinstance(x, (list, tuple)):
            return type(x)(self._for_torch(y) for y in x)
        return x

    def _te_node(self, node):
        fn = OPS.get(node.target)
        if fn is None:
            raise Unsupported("not covered")
        m = self.meta[node]
        first = m[0] if isinstance(m, (tuple, list)) else m
        if not isinstance(first, _Meta) or first.dtype != torch.float32:
            raise Unsupported("a result of dtype %s" % getattr(first, "dtype", "?"))
        if not first.shape:
            raise Unsupported("a 0-d result")
        args = self._as_val(self._resolve(node.args))
        kwargs = self._as_val(self._resolve(node.kwargs))
        for a in list(args) + list(kwargs.values()):
            for v in (a if isinstance(a, (list, tuple)) else [a]):
                if isinstance(v, Val) and v.kind == "input" and v.extra not in ("float32",) and \
                        node.target is not aten_ops.aten.embedding.default:
                    raise Unsupported("an input of dtype %s" % v.extra)
                if isinstance(v, Val) and not v.shape:
                    raise Unsupported("a 0-d input")
        return fn(self, node, *args, **kwargs)

    def _after(self, node, v):
        """Materializes v now when its users will need it in memory (see the module's doc)."""
        users = list(node.users)
        if isinstance(v, _TeTuple):
            return v
        many = len(users) > 1
        if v.anchor is v and v.kind not in ("matmul", "conv"):
            return self.materialize(v)
        if many and (v.cost > 0 or v.anchor is not None):
            return self.materialize(v)
        return v

    def lower(self):
        with self.ctx, self.syms:
            return self._lower()

    def _lower(self):
        if self.symbolic:
            self.meta = _symbolic_meta(self.gm)
            self._bind_symbols()
        else:
            self.meta = _record(self.gm, self.args)
        plan = self.plan
        n_in = 0
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                m = self.meta[node]
                slot = plan.new_slot()
                n_in += 1
                if isinstance(m, _Meta) and m.dtype in _TE_DTYPES and m.shape:
                    v = Val.placeholder(m.shape, _TE_DTYPES[m.dtype], "in%d" % slot, slot)
                    self.env[node] = v
                elif isinstance(m, _Meta):
                    self.env[node] = _TorchRef(slot, m)
                else:
                    # a symbolic size: its value (a plan per shape) or its sympy expression
                    self.env[node] = m
        plan.n_inputs = n_in
        for node in self.gm.graph.nodes:
            self.node = node
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outs = torch.fx.node.map_aggregate(self._resolve(node.args[0]), self._out_spec)
                plan.outputs = outs
                continue
            if node.op != "call_function":
                self._fallback(node, "a %s node" % node.op)
                continue
            if node.target is operator.getitem:
                src = self._lookup(node.args[0])
                if isinstance(src, _TeTuple):
                    self.env[node] = self._after(node, src.vals[node.args[1]])
                    continue
            if not self._has_tensor(node) or node.target in _SIZE_QUERIES:
                # size arithmetic (sym_size, operator.mul on ints): known for this plan, or
                # (symbolic plans) a sympy expression of the symbols
                self.env[node] = self.meta[node]
                continue
            try:
                v = self._te_node(node)
            except SymbolicUnsupported:
                raise
            except Unsupported as e:
                self._fallback(node, str(e))
                continue
            except te.Error as e:
                self._fallback(node, "te: %s" % e)
                continue
            self.env[node] = self._after(node, v)
        self.node = None
        return plan

    def _bind_symbols(self):
        """Where the plan reads each symbol at run time (an extent or a SymInt of its
        inputs), and each one's first value (the args given), for the schedules' choices."""
        sources = {}
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        for i, node in enumerate(placeholders):
            m = self.meta[node]
            if isinstance(m, _Meta):
                for d, ext in enumerate(m.shape):
                    if is_sym(ext) and ext.is_Symbol and ext not in sources:
                        sources[ext] = (i, d)
                        self.syms.hints[ext] = int(self.args[i].shape[d])
            elif is_sym(m) and m.is_Symbol and m not in sources:
                sources[m] = (i, None)
                self.syms.hints[m] = int(self.args[i])
        used = set()
        for m in self.meta.values():
            for x in (m if isinstance(m, (tuple, list)) else [m]):
                used |= free(*(x.shape if isinstance(x, _Meta) else [x]))
        missing = sorted(str(x) for x in used if x not in sources)
        if missing:
            raise SymbolicUnsupported("size symbol(s) %s are no input's extent"
                                      % ", ".join(missing))
        self.plan.sym_sources = [(sym, i, d) for sym, (i, d) in sources.items()]

    def _has_tensor(self, node):
        found = []
        torch.fx.node.map_aggregate(
            (node.args, node.kwargs),
            lambda x: found.append(x) if isinstance(x, torch.fx.Node) and
            isinstance(self.meta.get(x), (_Meta, tuple, list)) else None)
        m = self.meta.get(node)
        return bool(found) or isinstance(m, (_Meta, tuple, list))

    def _out_spec(self, x):
        if isinstance(x, Val):
            return _SlotArg(self.materialize(x).slot)
        if isinstance(x, _TorchRef):
            return _SlotArg(x.slot)
        if is_sym(x):
            return _SymArg(evaluator(x))
        return x

    def _fallback(self, node, reason):
        args = self._for_torch(self._resolve(node.args))
        kwargs = self._for_torch(self._resolve(node.kwargs))
        slot = self.plan.new_slot()
        self.plan.steps.append(TorchStep(node.target, args, kwargs, slot))
        if node.target is not operator.getitem:     # an element of a fallback's tuple
            self.plan.fallbacks.append((_op_name(node.target), reason))
        m = self.meta[node]
        self.env[node] = _TorchRef(slot, m)


# Operators that read a size of a tensor: their value is known for the plan (an int, or a sympy
# expression of the symbols in a symbolic plan), nothing to run.
_SIZE_QUERIES = {torch.ops.aten.sym_size.int, torch.ops.aten.sym_numel.default,
                 torch.ops.aten.sym_stride.int}

# Kernels already built, by target, tuning log and canonical workload (_canonical): the six
# layers of a transformer stack, or two graphs with the same block, build each kernel once.
_modules = {}
_modules_lock = threading.Lock()
_WHERE_NAME = re.compile(r"(?:^|, )([A-Za-z_][A-Za-z0-9_]*): ")


def _canonical(root, args):
    """(text, arg names) of root's workload with its tensors and axes renamed by their order
    in te's canonical text, so that kernels differing only in names share a key; a
    schedule is a function of the workload (schedules.py), so they share the module too."""
    text = te.workload_text([root])
    head, _, where = text.rpartition("\nwhere ")
    names = {}
    for n in _WHERE_NAME.findall(where):
        names.setdefault(n, "@%d" % len(names))
    if not names:
        return text, tuple(a.name for a in args)
    pattern = re.compile(r"\b(%s)\b" % "|".join(re.escape(n) for n in names))
    canon = pattern.sub(lambda m: names[m.group(1)], text)
    return canon, tuple(names.get(a.name, a.name) for a in args)


def _op_name(target):
    return str(target) if isinstance(target, torch._ops.OpOverload) else \
        getattr(target, "__name__", str(target))


class _TorchRef:
    """A value PyTorch computes at run time, in a slot."""
    __slots__ = ("slot", "meta")

    def __init__(self, slot, meta):
        self.slot, self.meta = slot, meta


class _SlotArg:
    """In a step's arguments: the value of a slot."""
    __slots__ = ("slot",)

    def __init__(self, slot):
        self.slot = slot


class _SymArg:
    """In a step's arguments or the outputs (symbolic plans): a size, fn(symbol values)."""
    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn
