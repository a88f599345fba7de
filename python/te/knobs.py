"""Schedule templates for te.tune (te/tune.h: te_tune_options.template_fn, te_knob_*).

A template is a Python function ``template(s, knobs)`` that schedules ``s`` by hand, leaving
some values open as knobs; te.tune(..., template=template) searches the knobs' product:

    def template(s, knobs):
        st = s["C"]                                         # s lives in te_tune's context
        io, ii = knobs.split(st, st.axis[0], "ti", (4, 8, 16))
        jo, ji = st.split(st.axis[1], factor=knobs.int("tj", (8, 16)))
        k = st.reduce_axis[0]
        knobs.reorder(st, "order", [(io, jo, k, ii, ji), (io, jo, ii, k, ji)])
        if knobs.choice("vec", 2):
            st.vectorize(ji)

    te.tune(C, log_path="mm.jsonl", trials=12, template=template)

The template runs once first with the first candidate of every knob (that run names the knobs
and must succeed, else te.tune raises te's error, chained to what the template raised), then
once per candidate the search looks at, on the calling thread. ``s`` is a te.Schedule of the
tuned computation in a context of te_tune's: take its tensors and stages by name
(``s.tensor("A")``, ``s.stage("C")`` or ``s["C"]``); the objects of a run, ``knobs`` included,
are valid during that run only. A run that raises makes its candidate invalid (skipped, never
measured), and so does a te error that the template catches: as in C, the error stays on the
context and fails the run.
"""
import ctypes
import operator
import warnings

from . import _lib
from . import errors
from .context import BorrowedContext
from .schedule import Iter, Schedule, Stage
from .tensor import Tensor

L = _lib.lib

TEMPLATE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)

_I64P = ctypes.POINTER(ctypes.c_int64)
_lib.declare({
    "te_knob_choice": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int,
                                      ctypes.POINTER(ctypes.c_int)]),
    "te_knob_int": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, _I64P,
                                   _I64P]),
    "te_knob_split": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                     ctypes.c_char_p, ctypes.c_int, _I64P, _lib.PP, _lib.PP]),
    "te_knob_reorder": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.c_int, ctypes.c_int, _lib.PP]),
})

HAS_TEMPLATES = all(_lib.has(n) for n in ("te_knob_choice", "te_knob_int", "te_knob_split",
                                          "te_knob_reorder", "te_tune_stage", "te_tune_tensor"))

_INVALID_ARG = errors.InvalidArgError.status


class Knobs:
    """The knobs of one run of a template (te_knobs). Each call returns the value chosen for the
    candidate being built (in the first run: the first candidate); split and reorder also apply
    it. A call that breaks a rule (a bad or repeated name, no candidates or repeated ones, a
    knob whose candidates differ from the first run's, ...) raises te.InvalidArgError with te's
    message naming the knob."""

    __slots__ = ("schedule", "_p")

    def __init__(self, schedule, p):
        self.schedule, self._p = schedule, p

    def _k(self, what):
        if not self._p:
            raise errors.InvalidArgError("%s: these knobs belong to a run of the template that "
                                         "is over" % what)
        return self._p

    def _check(self, status, what):
        errors.check(self.schedule.ctx, status, what)

    def _stage(self, stage, what):
        if isinstance(stage, (Tensor, str)):
            stage = self.schedule[stage]
        if not isinstance(stage, Stage):
            raise errors.InvalidArgError("%s: expected a te.Stage (s[T] or s[name]), got %s"
                                         % (what, type(stage).__name__))
        if stage.schedule._p != self.schedule._p:
            raise errors.InvalidArgError("%s: stage '%s' is not of the template's schedule"
                                         % (what, stage.tensor.name))
        return stage

    def choice(self, name, n):
        """One of n alternatives: an int in [0, n) (te_knob_choice)."""
        out = ctypes.c_int()
        self._check(L.te_knob_choice(self._k("te_knob_choice"), _name(name), _count(n, name),
                                     ctypes.byref(out)), "te_knob_choice")
        return out.value

    def int(self, name, candidates):
        """One of the distinct ints candidates (te_knob_int)."""
        n, vals = _int64s(candidates, "te_knob_int", name)
        out = ctypes.c_int64()
        self._check(L.te_knob_int(self._k("te_knob_int"), _name(name), n, vals,
                                  ctypes.byref(out)), "te_knob_int")
        return out.value

    def split(self, stage, iter, name, factors):
        """stage.split(iter, factor=f) with f one of the distinct factors (te_knob_split);
        returns (outer, inner). stage: a te.Stage, a tensor or a stage's name; iter: a te.Iter
        of it or T.op.axis[i]."""
        k = self._k("te_knob_split")
        st = self._stage(stage, "te_knob_split")
        it = st._iter(iter, "te_knob_split")
        n, vals = _int64s(factors, "te_knob_split", name)
        o, i = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(L.te_knob_split(k, st._p, it, _name(name), n, vals, ctypes.byref(o),
                                    ctypes.byref(i)), "te_knob_split")
        return Iter(st, o.value), Iter(st, i.value)

    def reorder(self, stage, name, orders):
        """stage.reorder(*order) with order one of orders, each a sequence of the stage's loops
        that permutes the first (te_knob_reorder); returns the chosen order's index."""
        k = self._k("te_knob_reorder")
        st = self._stage(stage, "te_knob_reorder")
        try:
            rows = [list(r) for r in orders]
        except TypeError:
            raise errors.InvalidArgError("te_knob_reorder: knob '%s': orders must be a list of "
                                         "sequences of loops" % name) from None
        width = len(rows[0]) if rows else 0
        for r, row in enumerate(rows):
            if len(row) != width:
                raise errors.InvalidArgError(
                    "te_knob_reorder: knob '%s': order %d has %d loops, order 0 has %d"
                    % (name, r, len(row), width))
        rows = [[st._iter(x, "te_knob_reorder") for x in row] for row in rows]
        flat = [p for row in rows for p in row]
        self._check(L.te_knob_reorder(k, st._p, _name(name), len(rows), width,
                                      _lib.ptr_array(flat)), "te_knob_reorder")
        # te_knob_reorder does not say which order it chose: the stage's loops do.
        moved = set(rows[0])
        now = [p for p in (L.te_leaf(st._p, i) for i in range(L.te_leaf_count(st._p)))
               if p in moved]
        for r, row in enumerate(rows):
            if row == now:
                return r
        raise errors.InternalError("te_knob_reorder: knob '%s': the stage's loops are in none "
                                   "of the orders" % name)

    def __repr__(self):
        return "<te.Knobs of %r%s>" % (self.schedule, "" if self._p else " (over)")


def _name(name):
    if name is not None and not isinstance(name, str):
        raise errors.InvalidArgError("knob names are str, got %s" % type(name).__name__)
    return _lib.encode(name)


def _count(n, name):
    try:
        return operator.index(n)
    except TypeError:
        raise errors.InvalidArgError("te_knob_choice: knob '%s': the number of choices must be "
                                     "an int, got %s" % (name, type(n).__name__)) from None


def _int64s(values, what, name):
    try:
        vals = [operator.index(v) for v in values]
    except TypeError:
        raise errors.InvalidArgError("%s: knob '%s': the candidates must be a sequence of ints "
                                     "(got %r)" % (what, name, values)) from None
    return len(vals), (ctypes.c_int64 * max(len(vals), 1))(*vals)


def _ctx_of(s_p, names):
    """The te_ctx of te_tune's schedule s_p: that of the expression of a tensor's extent."""
    for name in names:
        t = L.te_tune_tensor(s_p, _lib.encode(name))
        if t:
            e = (L.te_tensor_dim(t, 0) if L.te_tensor_ndim(t) > 0
                 else L.te_at(t, 0, _lib.ptr_array([])))
            c = L.te_expr_ctx(e) if e else None
            if c:
                return c
    return None


class TemplateRun:
    """A Python template as te_tune's template_fn (``c_fn``) for one te_tune call. Nothing the
    template raises crosses into C: it becomes the run's te_status (a te.Error's own, else
    TE_ERR_INVALID_ARG). ``raise_for`` then raises, after te_tune returns, what the caller must
    see."""

    def __init__(self, template, outs):
        self.template = template
        self.names = [t.name for t in outs]
        self.runs = 0
        self.first_error = None    # what the first run raised: te_tune fails with it
        self.stop = None           # a KeyboardInterrupt or SystemExit: later runs fail at once
        self.warned = False
        self.c_fn = TEMPLATE_FN(self._call)

    def _call(self, s_p, k_p, _user):
        first, self.runs = self.runs == 0, self.runs + 1
        if self.stop is not None:
            return _INVALID_ARG
        knobs = None
        try:
            try:
                c = _ctx_of(s_p, self.names)
                if not c:
                    raise errors.InternalError("te.tune: the template's schedule has no tensor "
                                               "named like the outputs (%s)"
                                               % ", ".join(self.names))
                ctx = BorrowedContext(c)
                s = Schedule(ctx, s_p, [])
                s.outputs = [s.tensor(n) for n in self.names]
                knobs = Knobs(s, k_p)
                self.template(s, knobs)
                return 0
            except BaseException as e:   # nothing may cross into C
                return self._failed(e, first)
            finally:
                if knobs is not None:
                    knobs._p = None
        except BaseException:   # a failure while failing (e.g. warnings as errors)
            return _INVALID_ARG

    def _failed(self, e, first):
        if first:
            self.first_error = e
        if not isinstance(e, Exception):
            self.stop = e
        elif not first and not isinstance(e, errors.Error) and not self.warned:
            # te warns once with te's message; a Python error has none there, so say it here.
            self.warned = True
            warnings.warn("te.tune: the schedule template raised %s: %s (this candidate and "
                          "any other that raises are skipped)" % (type(e).__name__, e),
                          RuntimeWarning)
        st = getattr(e, "status", 0)
        return st if isinstance(e, errors.Error) and st in errors.ERRORS else _INVALID_ARG

    def raise_for(self, ctx, status):
        """After te_tune returned status on ctx: raises a KeyboardInterrupt (or SystemExit) the
        template got, or te_tune's error chained to what the template's first run raised."""
        if self.stop is not None:
            if status != 0:
                L.te_clear_error(ctx._ptr)
            raise self.stop
        if status == 0 or self.first_error is None:
            return
        e = self.first_error
        try:
            errors.check(ctx, status, "te_tune")
        except errors.Error as err:
            if str(e) and str(e) not in err.message:   # te never saw this message
                err = errors.error_for(status, "%s (the template raised %s: %s)"
                                       % (err.message, type(e).__name__, e))
            raise err from e


__all__ = ["Knobs", "HAS_TEMPLATES"]
