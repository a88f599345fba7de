"""Dynamo's symbolic sizes as te's: one plan per graph that serves every size.

With ``torch.compile(..., dynamic=True)`` (or a dimension Dynamo marked dynamic) the aten
graph's tensors have sizes that are sympy expressions of Dynamo's symbols (``s0``, ``s0*s1``,
...). A symbolic plan keeps them symbolic: a dimension of a ``Val`` (values.py) is an int or a
sympy expression, shape arithmetic (reshape's groups of equal products, cat's offsets) is done
in sympy, and every symbol becomes a te size variable of the same name (``tex``), which each
kernel binds from its arrays' extents at call time. At run time the plan reads each symbol's
value from the graph's inputs (their extents, or the SymInt arguments Dynamo passes) and
computes from them the extents of the tensors it allocates (``evaluator``).

Schedules still choose tile sizes, vector widths and whether to go parallel from the shapes;
a symbolic extent is taken as large (``est``: its first value, at least ``EST_MIN``), since
one plan serves every size: a split of a symbolic loop gets a guarded tail, which te
vectorizes as masked code.

A case a handler cannot express symbolically raises ``SymbolicUnsupported``; the backend then
keeps one plan per concrete shape for that graph instead, and lists why (__init__.py).
"""
import operator
import threading

import sympy
import torch

import te

EST_MIN = 64        # a symbolic extent is estimated as at least this many, for schedules


class Unsupported(Exception):
    """This node, with these arguments, is not one te computes (the reason says why)."""


class SymbolicUnsupported(Unsupported):
    """This graph needs concrete sizes somewhere (the reason says where): plan per shape."""


_current = threading.local()


class Symbols:
    """The symbols of one symbolic lowering: their te variables and first values (hints)."""

    def __init__(self, ctx):
        self.ctx, self.vars, self.hints = ctx, {}, {}

    def var(self, sym):
        v = self.vars.get(sym)
        if v is None:
            v = te.var(str(sym), ctx=self.ctx)
            self.vars[sym] = v
        return v

    def __enter__(self):
        self._prev = getattr(_current, "syms", None)
        _current.syms = self
        return self

    def __exit__(self, *exc):
        _current.syms = self._prev


def current():
    return getattr(_current, "syms", None)


def is_sym(d):
    return isinstance(d, sympy.Basic)


def norm(d):
    """A dimension as a plan keeps it: an int, or a sympy expression that is not a constant."""
    if isinstance(d, torch.SymInt):
        d = d.node.expr
    if isinstance(d, sympy.Basic):
        if d.is_Integer:
            return int(d)
        if not d.free_symbols:
            raise SymbolicUnsupported("a size %s that is not an integer" % d)
        return d
    return int(d)


def free(*dims):
    """The symbols in dims (ints have none)."""
    out = set()
    for d in dims:
        if isinstance(d, sympy.Basic):
            out |= d.free_symbols
    return out


def _walk(e, leaf):
    """e (a sympy size expression) folded by the operators Dynamo writes sizes with."""
    from torch.utils._sympy import functions as F
    if e.is_Integer:
        return leaf(int(e))
    if e.is_Symbol:
        return leaf(e)
    args = [_walk(a, leaf) for a in e.args]
    if isinstance(e, sympy.Add):
        return _fold(operator.add, args)
    if isinstance(e, sympy.Mul):
        return _fold(operator.mul, args)
    if isinstance(e, F.FloorDiv):
        return args[0] // args[1]
    if isinstance(e, (F.Mod, F.PythonMod)) or type(e).__name__ == "Mod":
        return args[0] % args[1]
    if isinstance(e, sympy.Pow) and e.args[1].is_Integer and int(e.args[1]) > 0:
        return _fold(operator.mul, [args[0]] * int(e.args[1]))
    raise SymbolicUnsupported("a size expression te does not express: %s" % e)


def _fold(op, xs):
    r = xs[0]
    for x in xs[1:]:
        r = op(r, x)
    return r


def tex(d):
    """A dimension (int or sympy) as a te expression: ints stay ints."""
    if not isinstance(d, sympy.Basic):
        return d
    syms = current()
    if syms is None:
        raise RuntimeError("internal: a symbolic size outside a symbolic lowering")
    return _walk(d, lambda x: syms.var(x) if isinstance(x, sympy.Symbol) else x)


def tex_shape(shape):
    return tuple(tex(d) for d in shape)


def est(d):
    """A dimension's size for a schedule's choices: symbols at their first value, >= EST_MIN."""
    if not isinstance(d, sympy.Basic):
        return d
    syms = current()
    hints = syms.hints if syms is not None else {}
    return _walk(d, lambda x: max(hints.get(x, EST_MIN), EST_MIN)
                 if isinstance(x, sympy.Symbol) else x)


def hint(d):
    """A dimension at the symbols' first values (the shape the plan was made from)."""
    if not isinstance(d, sympy.Basic):
        return d
    hints = current().hints
    return _walk(d, lambda x: hints[x] if isinstance(x, sympy.Symbol) else x)


def same(a, b):
    """a and b equal for every value of the symbols."""
    if isinstance(a, sympy.Basic) or isinstance(b, sympy.Basic):
        return sympy.expand(a - b) == 0
    return a == b


def reciprocal(d):
    """1 / d as a float32 te expression (a constant when d is an int)."""
    if not isinstance(d, sympy.Basic):
        return 1.0 / d
    return 1.0 / te.cast(tex(d), "float32")


def evaluator(d):
    """A function env -> int of dimension d (env: each symbol's value), built once: sympy's
    subs would cost some 100 us a call."""
    if not isinstance(d, sympy.Basic):
        return lambda env, v=d: v
    r = _walk(d, lambda x: _Fn(lambda env, x=x: env[x]) if isinstance(x, sympy.Symbol) else x)
    return r.f if isinstance(r, _Fn) else (lambda env, v=r: v)


class _Fn:
    """A function of env under construction, combined with ints and other _Fn by operators."""
    __slots__ = ("f",)

    def __init__(self, f):
        self.f = f

    @staticmethod
    def _of(x):
        return x.f if isinstance(x, _Fn) else (lambda env, v=x: v)

    def _bin(self, other, op, swap=False):
        a, b = self.f, _Fn._of(other)
        if swap:
            a, b = b, a
        return _Fn(lambda env: op(a(env), b(env)))

    def __add__(self, o):
        return self._bin(o, operator.add)

    def __mul__(self, o):
        return self._bin(o, operator.mul)

    def __floordiv__(self, o):
        return self._bin(o, operator.floordiv)

    def __mod__(self, o):
        return self._bin(o, operator.mod)

    def __radd__(self, o):
        return self._bin(o, operator.add, True)

    def __rmul__(self, o):
        return self._bin(o, operator.mul, True)

    def __rfloordiv__(self, o):
        return self._bin(o, operator.floordiv, True)

    def __rmod__(self, o):
        return self._bin(o, operator.mod, True)
