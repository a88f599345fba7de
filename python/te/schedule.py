"""Schedules: how a computation is executed.

    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 32, 32)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)

``s[T]`` is the stage that computes tensor T. A primitive takes the stage's iteration variables
(``Iter``: from an earlier primitive, ``stage.axis``, ``stage.reduce_axis``, ``stage.leaf_iters``)
or a tensor's root axes by position (``T.op.axis[i]``). Every primitive is a thin wrapper of the
C one and raises te.ScheduleError (or another te.Error) with te's message when it refuses.
"""
import ctypes

from . import _lib
from . import errors
from .context import pick
from .tensor import AxisRef, Tensor

L = _lib.lib


def _words(name_of):
    """{word: value} of a C enum, read from the library (te_scope_name and friends return NULL
    past the last enumerator), so the words are written once, in lib/ir/enums.def."""
    table, value = {}, 0
    while True:
        word = name_of(value)
        if word is None:
            return table
        table[word.decode()] = value
        value += 1


SCOPES = _words(L.te_scope_name)            # {"global": 0, "local": 1, "shared": 2}
THREAD_TAGS = _words(L.te_thread_tag_name)  # {"blockIdx.x": 0, ..., "threadIdx.z": 5}
TAILS = _words(L.te_tail_name)              # {"guard": 0, "shift_inwards": 1, "round_up": 2}


def _enum(table, value, what):
    if isinstance(value, int) and value in table.values():
        return value
    if isinstance(value, str) and value in table:
        return table[value]
    raise errors.InvalidArgError("%s must be one of %s (got %r)" % (what, ", ".join(table), value))


class Iter:
    """An iteration variable (loop) of one stage; named after its origin ("i", "i.o", "i.j.f")."""

    __slots__ = ("stage", "_p")

    def __init__(self, stage, p):
        self.stage, self._p = stage, p

    @property
    def name(self):
        return L.te_iter_name(self._p).decode()

    @property
    def handle(self):
        return self._p

    def __eq__(self, other):
        return isinstance(other, Iter) and other._p == self._p

    def __hash__(self):
        return hash(self._p)

    def __repr__(self):
        return "<te.Iter %s of stage %s>" % (self.name, self.stage.tensor.name)


class Stage:
    """The stage of one operation in a schedule (te_stage)."""

    __slots__ = ("schedule", "tensor", "_p")

    def __init__(self, schedule, tensor, p):
        self.schedule, self.tensor, self._p = schedule, tensor, p

    @property
    def ctx(self):
        return self.schedule.ctx

    @property
    def handle(self):
        return self._p

    def _check(self, status, what):
        errors.check(self.ctx, status, what)

    def _iter(self, x, what):
        if isinstance(x, Iter):
            return x._p
        if isinstance(x, AxisRef):
            if x.tensor != self.tensor:
                raise errors.InvalidArgError(
                    "%s: stage '%s': %r is an axis of tensor '%s', not of this stage"
                    % (what, self.tensor.name, x, x.tensor.name))
            fn = L.te_reduce_iter if x.reduce else L.te_axis
            return errors.check_ptr(self.ctx, fn(self._p, x.index),
                                    "te_reduce_iter" if x.reduce else "te_axis")
        raise errors.InvalidArgError("%s: expected a te.Iter (or T.op.axis[i]), got %s"
                                     % (what, type(x).__name__))

    def _probe(self, fn):
        return [Iter(self, p) for p in _probe(self.ctx, fn, self._p)]

    @property
    def axis(self):
        """The root data-parallel iteration variables."""
        return self._probe(L.te_axis)

    @property
    def reduce_axis(self):
        """The root reduction iteration variables."""
        return self._probe(L.te_reduce_iter)

    @property
    def leaf_iters(self):
        """The current loops, outermost first."""
        return [Iter(self, L.te_leaf(self._p, i)) for i in range(L.te_leaf_count(self._p))]

    @property
    def op(self):
        return self.tensor.op

    # -- loop structure
    def split(self, parent, factor=None, nparts=None):
        """Splits a loop into (outer, inner): inner has extent factor, or outer has nparts."""
        if (factor is None) == (nparts is None):
            raise errors.InvalidArgError("split: stage '%s': give exactly one of factor= and "
                                         "nparts=" % self.tensor.name)
        o, i = ctypes.c_void_p(), ctypes.c_void_p()
        it = self._iter(parent, "te_split")
        if factor is not None:
            self._check(L.te_split(self._p, it, int(factor), ctypes.byref(o), ctypes.byref(i)),
                        "te_split")
        else:
            self._check(L.te_split_nparts(self._p, it, int(nparts), ctypes.byref(o),
                                          ctypes.byref(i)), "te_split_nparts")
        return Iter(self, o.value), Iter(self, i.value)

    def split_nparts(self, parent, nparts):
        return self.split(parent, nparts=nparts)

    def tile(self, x_parent, y_parent, x_factor, y_factor):
        """Splits x and y and orders (xo, yo, xi, yi); returns those four."""
        outs = [ctypes.c_void_p() for _ in range(4)]
        self._check(L.te_tile(self._p, self._iter(x_parent, "te_tile"),
                              self._iter(y_parent, "te_tile"), int(x_factor), int(y_factor),
                              *[ctypes.byref(o) for o in outs]), "te_tile")
        return tuple(Iter(self, o.value) for o in outs)

    def fuse(self, *args):
        """Fuses adjacent loops (outermost first) into one; returns it."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        if len(args) < 2:
            raise errors.InvalidArgError("fuse: stage '%s': needs at least two loops"
                                         % self.tensor.name)
        cur = self._iter(args[0], "te_fuse")
        for nxt in args[1:]:
            f = ctypes.c_void_p()
            self._check(L.te_fuse(self._p, cur, self._iter(nxt, "te_fuse"), ctypes.byref(f)),
                        "te_fuse")
            cur = f.value
        return Iter(self, cur)

    def reorder(self, *args):
        """The given loops take, in this order, the positions they occupied."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        its = [self._iter(a, "te_reorder") for a in args]
        self._check(L.te_reorder(self._p, len(its), _lib.ptr_array(its)), "te_reorder")

    def reorder_storage(self, *args):
        """Lays out this stage's buffer with its data axes in this order (outermost first, the
        last contiguous); the loops are unchanged. Not for outputs or placeholders."""
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            args = tuple(args[0])
        its = [self._iter(a, "te_reorder_storage") for a in args]
        self._check(L.te_reorder_storage(self._p, len(its), _lib.ptr_array(its)),
                    "te_reorder_storage")

    # -- annotations
    def vectorize(self, var):
        self._check(L.te_vectorize(self._p, self._iter(var, "te_vectorize")), "te_vectorize")

    def unroll(self, var):
        self._check(L.te_unroll(self._p, self._iter(var, "te_unroll")), "te_unroll")

    def parallel(self, var):
        self._check(L.te_parallel(self._p, self._iter(var, "te_parallel")), "te_parallel")

    def bind(self, var, thread):
        """Binds a loop to a GPU index: "blockIdx.x" ... "threadIdx.z"."""
        tag = _enum(THREAD_TAGS, getattr(thread, "tag", thread), "bind: thread")
        self._check(L.te_bind(self._p, self._iter(var, "te_bind"), tag), "te_bind")

    def set_tail(self, var, tail):
        """How a split that does not divide is handled: "guard", "shift_inwards", "round_up"."""
        self._check(L.te_set_tail(self._p, self._iter(var, "te_set_tail"),
                                  _enum(TAILS, tail, "set_tail: tail")), "te_set_tail")

    def pragma(self, var, key, value=1):
        """A pragma on a loop, e.g. ("unroll_max_step", 16) or ("prefetch", 1)."""
        self._check(L.te_pragma(self._p, self._iter(var, "te_pragma"), _lib.encode(key),
                                int(value)), "te_pragma")

    def tensorize(self, var, intrinsic):
        """Maps reduce loop ``var`` (extent 4, or 2) and the vector update inside it onto one
        instruction (te_tensorize), "vpdpbusd" or "vdpbf16ps"; or, on cuda, the outermost loop of
        a tensor-core tile onto "mma_m16n8k16" (f16/bf16) or "mma_m16n8k32" (s8/u8); a loop that
        does not match raises ScheduleError when the schedule is built."""
        self._check(L.te_tensorize(self._p, self._iter(var, "te_tensorize"),
                                   _lib.encode(intrinsic)), "te_tensorize")

    # -- placement
    def compute_at(self, parent, scope):
        """Computes this stage inside loop ``scope`` of stage ``parent`` (its consumer)."""
        if isinstance(parent, Tensor):
            parent = self.schedule[parent]
        if not isinstance(parent, Stage):
            raise errors.InvalidArgError("compute_at: parent must be a te.Stage (s[T]), got %s"
                                         % type(parent).__name__)
        self._check(L.te_compute_at(self._p, parent._p, parent._iter(scope, "te_compute_at")),
                    "te_compute_at")

    def compute_inline(self):
        self._check(L.te_compute_inline(self._p), "te_compute_inline")

    def compute_root(self):
        self._check(L.te_compute_root(self._p), "te_compute_root")

    def __eq__(self, other):
        return isinstance(other, Stage) and other._p == self._p

    def __hash__(self):
        return hash(self._p)

    def __repr__(self):
        return "<te.Stage %s: %s>" % (self.tensor.name, " ".join(i.name for i in self.leaf_iters))


class Schedule:
    """A schedule of the computation of some output tensors (te_schedule)."""

    __slots__ = ("ctx", "_p", "outputs")

    def __init__(self, ctx, p, outputs):
        self.ctx, self._p, self.outputs = ctx, p, outputs

    @property
    def handle(self):
        return self._p

    def __getitem__(self, tensor):
        if isinstance(tensor, Stage):
            return tensor
        if isinstance(tensor, str):
            return self.stage(tensor)
        if not isinstance(tensor, Tensor):
            raise errors.InvalidArgError("s[T]: T must be a te.Tensor or a stage's name, got %s"
                                         % type(tensor).__name__)
        p = errors.check_ptr(self.ctx, L.te_stage_of(self._p, tensor._p), "te_stage_of")
        return Stage(self, tensor, p)

    def stage(self, name):
        """The stage called name (``s["C"]`` too): a tensor's name, or a stage's name as
        trace() shows it (te_tune_stage). te.NotFoundError when there is none, or when no tensor
        of that name is the stage's (a second stage of a name is "T_1": take it as s[tensor])."""
        _need_lookup("te_tune_stage")
        p = errors.check_ptr(self.ctx, L.te_tune_stage(self._p, _name(name, "stage")),
                             "te_tune_stage")
        t = _quiet(self.ctx, L.te_tune_tensor, self._p, _lib.encode(name))
        if not t or _quiet(self.ctx, L.te_stage_of, self._p, t) != p:
            raise errors.NotFoundError("schedule.stage: stage '%s' has no tensor of its name: "
                                       "take it as s[tensor]" % name)
        return Stage(self, self._tensor(t), p)

    def tensor(self, name):
        """The tensor called name among the schedule's stages (te_tune_tensor): the way to a
        template's tensors, which live in te_tune's context. te.NotFoundError when there is
        none. (tune.h says placeholders are included; this libte does not find them yet.)"""
        _need_lookup("te_tune_tensor")
        p = errors.check_ptr(self.ctx, L.te_tune_tensor(self._p, _name(name, "tensor")),
                             "te_tune_tensor")
        return self._tensor(p)

    def _tensor(self, p):
        st = _quiet(self.ctx, L.te_stage_of, self._p, p)
        if not st:
            return Tensor(self.ctx, p, "placeholder")
        return Tensor(self.ctx, p, "compute", len(_probe(self.ctx, L.te_reduce_iter, st)))

    def cache_read(self, tensor, scope, readers):
        """A stage that copies tensor into a buffer of ``scope`` ("global", "local", "shared")
        for the given reader tensors/stages; returns the cache tensor."""
        if not isinstance(readers, (list, tuple)):
            readers = [readers]
        stages = [self[r] for r in readers]
        out = ctypes.c_void_p()
        errors.check(self.ctx, L.te_cache_read(self._p, _tensor_p(tensor),
                                               _enum(SCOPES, scope, "cache_read: scope"),
                                               len(stages), _lib.ptr_array([st._p for st in stages]),
                                               ctypes.byref(out)), "te_cache_read")
        return Tensor(self.ctx, out.value, "compute", 0)

    def cache_write(self, tensor, scope):
        """Computes tensor into a cache of ``scope``, and tensor becomes a copy of it; returns
        the cache tensor (which now holds the computation, reductions included)."""
        out = ctypes.c_void_p()
        errors.check(self.ctx, L.te_cache_write(self._p, _tensor_p(tensor),
                                                _enum(SCOPES, scope, "cache_write: scope"),
                                                ctypes.byref(out)), "te_cache_write")
        return Tensor(self.ctx, out.value, "compute", tensor._nreduce)

    def rfactor(self, tensor, axis, factor_axis=0):
        """Factors the reduction of tensor over the reduce loop ``axis`` (a te.Iter of its
        stage) into a new stage (returned) whose dimension factor_axis is that loop."""
        it = self[tensor]._iter(axis, "te_rfactor")
        out = ctypes.c_void_p()
        errors.check(self.ctx, L.te_rfactor(self._p, _tensor_p(tensor), it, int(factor_axis),
                                            ctypes.byref(out)), "te_rfactor")
        return Tensor(self.ctx, out.value, "compute", None)

    def specialize(self, cond):
        """A branch of this schedule taken when cond holds at run time (te_specialize): a
        condition over the computation's sizes, stride variables and parameters (e.g.
        ``te.all(n % 16 == 0, cs == 1)``). Returns the branch, a Schedule that starts as a copy
        of this one and is scheduled on its own; branches are tried in the order made, then
        this schedule. te.ScheduleError for a condition that uses a loop variable or reads a
        tensor."""
        if not hasattr(cond, "handle"):
            raise errors.InvalidArgError("specialize: cond must be a te expression, got %s"
                                         % type(cond).__name__)
        out = ctypes.c_void_p()
        errors.check(self.ctx, L.te_specialize(self._p, cond.handle, ctypes.byref(out)),
                     "te_specialize")
        return Schedule(self.ctx, out.value, self.outputs)

    def trace(self):
        """The primitives applied so far, one step a line (replayable text)."""
        return _lib.take_string(L.te_schedule_trace(self._p)) or ""

    def replay(self, trace):
        """Applies a trace (from trace(), or a tuning log) to this schedule."""
        errors.check(self.ctx, L.te_schedule_replay(self._p, _lib.encode(trace)),
                     "te_schedule_replay")

    def __repr__(self):
        return "<te.Schedule of %s>" % ", ".join(t.name for t in self.outputs)


def _quiet(ctx, fn, *args):
    """fn(*args), a C function that returns NULL on failure, without leaving its error on the
    context (unless the context had one already: the first error is the one kept)."""
    clean = L.te_last_status(ctx._ptr) == 0
    p = fn(*args)
    if not p and clean:
        L.te_clear_error(ctx._ptr)
    return p


def _probe(ctx, fn, stage_p):
    """fn(stage, 0), fn(stage, 1), ... up to the first NULL (past the last one: not an error)."""
    out = []
    while True:
        p = _quiet(ctx, fn, stage_p, len(out))
        if not p:
            return out
        out.append(p)


def _need_lookup(fn):
    if not _lib.has(fn):
        raise errors.UnsupportedError("%s: this libte (%s) has no look-up by name"
                                      % (fn, _lib.path))


def _name(name, what):
    if not isinstance(name, str):
        raise errors.InvalidArgError("schedule.%s: the name must be a str, got %s"
                                     % (what, type(name).__name__))
    return name.encode("utf-8")


def _tensor_p(t):
    if not isinstance(t, Tensor):
        raise errors.InvalidArgError("expected a te.Tensor, got %s" % type(t).__name__)
    return t._p


def create_schedule(outs, ctx=None):
    """A schedule for computing the given output tensor(s), every stage at its default."""
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    outs = list(outs)
    for t in outs:
        _tensor_p(t)
    c = pick(ctx, outs)
    p = L.te_schedule_new(c._ptr, len(outs), _lib.ptr_array([t._p for t in outs]))
    return Schedule(c, errors.check_ptr(c, p, "te_schedule_new"), outs)


def thread_axis(tag):
    """TVM compatibility: te.thread_axis("threadIdx.x") is just the tag, for Stage.bind."""
    _enum(THREAD_TAGS, tag, "thread_axis")
    return tag


__all__ = ["Schedule", "Stage", "Iter", "create_schedule", "thread_axis"]
