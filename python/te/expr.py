"""Scalar expressions with Python operators.

An ``Expr`` wraps one te_expr (immutable, hash-consed, owned by its context). Python operators
build new ones through the C API, so promotion and type errors are te's own:

    a + b, a - b, a * b, a / b (float division), a // b, a % b (floor division / modulo of
    integers), -a, abs(a), a ** b (pow), a < b, a <= b, a > b, a >= b, a == b, a != b,
    a & b, a | b, ~a (bool logic on bools; Python's `and`/`or`/`not` cannot be overloaded),
    a & b, a | b, a ^ b, ~a, a << b, a >> b (bitwise and shifts on integers: te_bitwise_*,
    te_shift_left, te_shift_right, whose semantics include/te/expr.h defines for every amount)

Python numbers become immediates: an int is an i64 literal and a float an f32 literal, and an
immediate takes the type of the other operand (``x_f64 * 0.5`` is f64). ``a == b`` gives an
expression that also works as a truth value: True when a and b are the same expression (nodes
are hash-consed, so structurally equal expressions are the same), which keeps Exprs usable as
dict keys and in ``in`` tests. ``a.equal(b)`` and ``te.eq(a, b)`` always give the expression.
"""
import builtins
import math

from . import _lib
from . import errors
from .context import pick
from .dtype import DType, dtype as _dtype, from_c

L = _lib.lib


class Expr:
    """A scalar expression. ``dtype`` is its te.DType; ``str()`` is its IR text."""

    __slots__ = ("ctx", "_p")
    __array_ufunc__ = None   # numpy defers to our operators: np.float32(2) * e is an Expr

    def __init__(self, ctx, p):
        self.ctx = ctx
        self._p = p

    @property
    def handle(self):
        """The te_expr pointer (an int)."""
        return self._p

    @property
    def dtype(self):
        return from_c(L.te_expr_dtype(self.handle))

    @property
    def name(self):
        """The text of the expression (a variable's name for a variable)."""
        return str(self)

    def __str__(self):
        return _lib.take_string(L.te_expr_text(self.handle)) or ""

    def __repr__(self):
        return "<te.Expr %s: %s>" % (self, self.dtype.short)

    def __hash__(self):
        return hash(self.handle)

    def same_as(self, other):
        """True when other is the same expression (structurally equal, as nodes are hash-consed)."""
        return isinstance(other, Expr) and self.handle == other.handle

    def __bool__(self):
        raise errors.DTypeError(
            "a te.Expr has no Python truth value (%s): combine conditions with & | ~ or "
            "te.all / te.any, and choose values with te.select" % self)

    # arithmetic
    def __add__(self, o): return _dunder(L.te_add, "te_add", self, o)
    def __radd__(self, o): return _dunder(L.te_add, "te_add", o, self)
    def __sub__(self, o): return _dunder(L.te_sub, "te_sub", self, o)
    def __rsub__(self, o): return _dunder(L.te_sub, "te_sub", o, self)
    def __mul__(self, o): return _dunder(L.te_mul, "te_mul", self, o)
    def __rmul__(self, o): return _dunder(L.te_mul, "te_mul", o, self)
    def __truediv__(self, o): return _dunder(L.te_div, "te_div", self, o)
    def __rtruediv__(self, o): return _dunder(L.te_div, "te_div", o, self)
    def __floordiv__(self, o): return _dunder(L.te_floordiv, "te_floordiv", self, o)
    def __rfloordiv__(self, o): return _dunder(L.te_floordiv, "te_floordiv", o, self)
    def __mod__(self, o): return _dunder(L.te_floormod, "te_floormod", self, o)
    def __rmod__(self, o): return _dunder(L.te_floormod, "te_floormod", o, self)
    def __pow__(self, o): return call("pow", self, o) if _convertible(o) else NotImplemented
    def __rpow__(self, o): return call("pow", o, self) if _convertible(o) else NotImplemented
    def __neg__(self): return _unop(L.te_neg, "te_neg", self)
    def __pos__(self): return self
    def __abs__(self): return call("abs", self)

    # comparisons
    def __lt__(self, o): return _dunder(L.te_lt, "te_lt", self, o)
    def __le__(self, o): return _dunder(L.te_le, "te_le", self, o)
    def __gt__(self, o): return _dunder(L.te_gt, "te_gt", self, o)
    def __ge__(self, o): return _dunder(L.te_ge, "te_ge", self, o)

    def __eq__(self, o):
        if not _convertible(o):
            return NotImplemented
        return _Compare(self, o, True)

    def __ne__(self, o):
        if not _convertible(o):
            return NotImplemented
        return _Compare(self, o, False)

    def equal(self, o):
        """The bool expression self == o."""
        return _binop(L.te_eq, "te_eq", self, o)

    def not_equal(self, o):
        """The bool expression self != o."""
        return _binop(L.te_ne, "te_ne", self, o)

    # logic on bools, bitwise operations on integers
    def __and__(self, o): return _logic_or_bits(L.te_and, "te_and", "bitwise_and", self, o)
    def __rand__(self, o): return _logic_or_bits(L.te_and, "te_and", "bitwise_and", o, self)
    def __or__(self, o): return _logic_or_bits(L.te_or, "te_or", "bitwise_or", self, o)
    def __ror__(self, o): return _logic_or_bits(L.te_or, "te_or", "bitwise_or", o, self)
    def __xor__(self, o): return _bits("bitwise_xor", self, o)
    def __rxor__(self, o): return _bits("bitwise_xor", o, self)
    def __lshift__(self, o): return _bits("shift_left", self, o)
    def __rlshift__(self, o): return _bits("shift_left", o, self)
    def __rshift__(self, o): return _bits("shift_right", self, o)
    def __rrshift__(self, o): return _bits("shift_right", o, self)

    def __invert__(self):
        if self.dtype.is_bool:
            return _unop(L.te_not, "te_not", self)
        return call("bitwise_not", self)

    def astype(self, dtype):
        """te.cast(self, dtype)."""
        return cast(self, dtype)


class _Compare(Expr):
    """The result of ``a == b`` / ``a != b``: an expression made when first used as one, and a
    truth value meaning "the same expression" (so Exprs work in dicts and ``in`` tests)."""

    __slots__ = ("_a", "_b", "_eq")

    def __init__(self, a, b, eq):
        Expr.__init__(self, a.ctx, None)
        self._a, self._b, self._eq = a, b, eq

    @property
    def handle(self):
        if self._p is None:
            fn, name = (L.te_eq, "te_eq") if self._eq else (L.te_ne, "te_ne")
            self._p = _binop(fn, name, self._a, self._b)._p
        return self._p

    def __bool__(self):
        same = isinstance(self._b, Expr) and self._a.handle == self._b.handle
        return same if self._eq else not same

    def __hash__(self):
        return hash(self.handle)


class Reduction(Expr):
    """The result of a reduction (te.sum, te.max, ..., a custom reducer): remembers its axes."""

    __slots__ = ("axes",)

    def __init__(self, ctx, p, axes):
        Expr.__init__(self, ctx, p)
        self.axes = list(axes)


# ------------------------------------------------------------------------------- helpers

def _convertible(x):
    return isinstance(x, (Expr, int, float, bool)) or _is_np_scalar(x)


def _is_np_scalar(x):
    return hasattr(x, "dtype") and hasattr(x, "item") and getattr(x, "shape", None) == ()


def const(value, dtype=None, ctx=None):
    """An immediate. Without dtype: bool -> bool, int -> int64, float -> float32."""
    c = pick(ctx)
    if _is_np_scalar(value):
        if dtype is None:
            dtype = value.dtype
        value = value.item()
    if isinstance(value, bool):
        d = _dtype(dtype) if dtype is not None else _dtype("bool")
        return _wrap(c, L.te_const(c._ptr, d.c, float(value)), "te_const")
    if isinstance(value, int):
        if dtype is None or _dtype(dtype) == "int64":
            return _wrap(c, L.te_int(c._ptr, value if -2**63 <= value < 2**63 else
                                     _overflow(value)), "te_int")
        d = _dtype(dtype)
        if builtins.abs(value) < 2**53:
            return _wrap(c, L.te_const(c._ptr, d.c, float(value)), "te_const")
        return cast(_wrap(c, L.te_int(c._ptr, value - 2**64 if value >= 2**63 else value),
                          "te_int"), d)
    if isinstance(value, float):
        d = _dtype(dtype) if dtype is not None else _dtype("float32")
        if dtype is None or d.is_float:
            return _wrap(c, L.te_float(c._ptr, d.c, value), "te_float")
        return _wrap(c, L.te_const(c._ptr, d.c, value), "te_const")
    raise errors.InvalidArgError("te.const: cannot make an expression of %r" % (value,))


def _overflow(value):
    raise errors.InvalidArgError("te.const: integer %d does not fit in int64" % value)


def as_expr(x, ctx):
    """x as an Expr of context ctx (numbers become immediates)."""
    if isinstance(x, Expr):
        return x
    if isinstance(x, (bool, int, float)) or _is_np_scalar(x):
        return const(x, ctx=ctx)
    conv = getattr(x, "__te_expr__", None)
    if conv is not None:
        return conv()
    raise errors.InvalidArgError("expected a te.Expr or a number, got %s" % type(x).__name__)


def _wrap(ctx, p, what):
    return Expr(ctx, errors.check_ptr(ctx, p, what))


def _binop(fn, what, a, b):
    ctx = pick(None, a, b)
    ea, eb = as_expr(a, ctx), as_expr(b, ctx)
    return _wrap(ctx, fn(ea.handle, eb.handle), what)


def _dunder(fn, what, a, b):
    if not (_convertible(a) and _convertible(b)):
        return NotImplemented
    return _binop(fn, what, a, b)


def _is_boolish(x):
    return isinstance(x, bool) or (isinstance(x, Expr) and x.dtype.is_bool)


def _logic_or_bits(logic_fn, what, bits_name, a, b):
    """a & b / a | b: logic when either side is a bool, else the bitwise call."""
    if not (_convertible(a) and _convertible(b)):
        return NotImplemented
    if _is_boolish(a) or _is_boolish(b):
        return _binop(logic_fn, what, a, b)
    return call(bits_name, a, b)


def _bits(name, a, b):
    if not (_convertible(a) and _convertible(b)):
        return NotImplemented
    return call(name, a, b)


def _unop(fn, what, a):
    return _wrap(a.ctx, fn(a.handle), what)


def _ctx_of_args(args, ctx=None):
    return pick(ctx, *args)


# ----------------------------------------------------------------------------- variables

def var(name="v", dtype="int64", ctx=None):
    """A new variable: an int64 index variable or symbolic size (te_var); with another dtype a
    scalar kernel parameter (te_param)."""
    c = pick(ctx)
    d = _dtype(dtype)
    if d == "int64":
        return _wrap(c, L.te_var(c._ptr, _lib.encode(name)), "te_var")
    return _wrap(c, L.te_param(c._ptr, _lib.encode(name), d.c), "te_param")


size_var = var


def param(name, dtype, ctx=None):
    """A scalar kernel parameter of the given dtype (te_param), e.g. alpha: float32."""
    c = pick(ctx)
    return _wrap(c, L.te_param(c._ptr, _lib.encode(name), _dtype(dtype).c), "te_param")


# --------------------------------------------------------------------------- operations

def select(cond, t, f):
    """cond ? t : f (t and f promoted to a common type)."""
    ctx = pick(None, cond, t, f)
    ec, et, ef = as_expr(cond, ctx), as_expr(t, ctx), as_expr(f, ctx)
    return _wrap(ctx, L.te_select(ec.handle, et.handle, ef.handle), "te_select")


def if_then_else(cond, t, f):
    """cond ? t : f evaluating only the side cond takes (te_if_then_else): the other side's reads
    are not made, so they may be out of bounds, as in padding without clamps."""
    if not _lib.has("te_if_then_else"):
        raise errors.UnsupportedError("te.if_then_else: this libte (%s) has no te_if_then_else"
                                      % _lib.path)
    ctx = pick(None, cond, t, f)
    ec, et, ef = as_expr(cond, ctx), as_expr(t, ctx), as_expr(f, ctx)
    return _wrap(ctx, L.te_if_then_else(ec.handle, et.handle, ef.handle), "te_if_then_else")


def cast(x, dtype, ctx=None):
    """x converted to dtype (float to int truncates towards zero). te.cast(dtype, x) works too."""
    if isinstance(dtype, (Expr, int, float)) and not isinstance(x, (Expr, int, float)):
        x, dtype = dtype, x
    c = pick(ctx, x)
    e = as_expr(x, c)
    return _wrap(c, L.te_cast(_dtype(dtype).c, e.handle), "te_cast")


def call(fn, *args, ctx=None):
    """A math call by name (te_call): exp exp2 log log2 log10 sqrt rsqrt sin cos tan tanh
    sigmoid erf floor ceil round trunc abs pow(2 args) fma(3 args)."""
    c = pick(ctx, *args)
    # A Python number takes the type of the first float expression among the arguments, as an
    # immediate does in an arithmetic operation (te_call itself does not convert).
    like = next((a.dtype for a in args if isinstance(a, Expr) and a.dtype.is_float), None)
    es = [a if isinstance(a, Expr) else
          const(a, like, c) if like is not None and isinstance(a, (int, float)) else
          as_expr(a, c) for a in args]
    arr = _lib.ptr_array([e.handle for e in es])
    return _wrap(c, L.te_call(c._ptr, _lib.encode(fn), len(es), arr), "te_call")


def _math1(fn):
    def f(x):
        return call(fn, x)
    f.__name__ = fn
    f.__doc__ = "te_call(\"%s\", x)." % fn
    return f


exp = _math1("exp")
exp2 = _math1("exp2")
log = _math1("log")
log2 = _math1("log2")
log10 = _math1("log10")
sqrt = _math1("sqrt")
rsqrt = _math1("rsqrt")
sin = _math1("sin")
cos = _math1("cos")
tan = _math1("tan")
tanh = _math1("tanh")
sigmoid = _math1("sigmoid")
erf = _math1("erf")
floor = _math1("floor")
ceil = _math1("ceil")
round = _math1("round")   # noqa: A001 (te.round, as numpy's)
trunc = _math1("trunc")
abs = _math1("abs")       # noqa: A001


def power(x, y):
    """x ** y (te_call "pow")."""
    return call("pow", x, y)


pow = power               # noqa: A001


def fma(a, b, c):
    """a * b + c (te_call "fma")."""
    return call("fma", a, b, c)


def bitwise_and(a, b):
    """a & b on integers (te_bitwise_and)."""
    return call("bitwise_and", a, b)


def bitwise_or(a, b):
    """a | b on integers (te_bitwise_or)."""
    return call("bitwise_or", a, b)


def bitwise_xor(a, b):
    """a ^ b on integers (te_bitwise_xor)."""
    return call("bitwise_xor", a, b)


def bitwise_not(a):
    """~a on integers (te_bitwise_not)."""
    return call("bitwise_not", a)


def shift_left(x, s):
    """x << s (te_shift_left): x's type; 0 when s >= the width."""
    return call("shift_left", x, s)


def shift_right(x, s):
    """x >> s (te_shift_right): arithmetic for signed x, logical for unsigned x."""
    return call("shift_right", x, s)


def shift_right_logical(x, s):
    """x >> s filling with zeros whatever x's signedness (te_shift_right_logical)."""
    return call("shift_right_logical", x, s)


def rounding_shift_right(x, s):
    """x / 2**s rounded to nearest, ties up (te_rounding_shift_right), without overflow."""
    return call("rounding_shift_right", x, s)


def saturating_cast(x, dtype):
    """x converted to dtype, clamped to its range (NaN gives 0) (te_saturating_cast)."""
    if isinstance(x, (str, DType)) and not isinstance(dtype, (str, DType)):
        x, dtype = dtype, x
    c = pick(None, x)
    e = as_expr(x, c)
    return _wrap(c, L.te_saturating_cast(_dtype(dtype).c, e.handle), "te_saturating_cast")


def eq(a, b):
    """The bool expression a == b."""
    return _binop(L.te_eq, "te_eq", a, b)


def ne(a, b):
    """The bool expression a != b."""
    return _binop(L.te_ne, "te_ne", a, b)


def logical_and(a, b):
    return _binop(L.te_and, "te_and", a, b)


def logical_or(a, b):
    return _binop(L.te_or, "te_or", a, b)


def logical_not(a):
    c = pick(None, a)
    return _unop(L.te_not, "te_not", as_expr(a, c))


def all(*conds):  # noqa: A001
    """The conjunction of bool expressions (te.all(a, b, c))."""
    if len(conds) == 1 and isinstance(conds[0], (list, tuple)):
        conds = tuple(conds[0])
    if not conds:
        raise errors.InvalidArgError("te.all: needs at least one condition")
    out = conds[0]
    for c in conds[1:]:
        out = logical_and(out, c)
    return as_expr(out, pick(None, *conds))


def any(*conds):  # noqa: A001
    """The disjunction of bool expressions."""
    if len(conds) == 1 and isinstance(conds[0], (list, tuple)):
        conds = tuple(conds[0])
    if not conds:
        raise errors.InvalidArgError("te.any: needs at least one condition")
    out = conds[0]
    for c in conds[1:]:
        out = logical_or(out, c)
    return as_expr(out, pick(None, *conds))


def _axes(axis):
    if axis is None:
        raise errors.InvalidArgError("a reduction needs axis= (reduce axes from te.reduce_axis)")
    axes = list(axis) if isinstance(axis, (list, tuple)) else [axis]
    for a in axes:
        if not isinstance(a, Expr):
            raise errors.InvalidArgError("reduction axes must be te.reduce_axis expressions, got %s"
                                         % type(a).__name__)
    return axes


def _reduction(fn, what, body, axis, where, reducer_name):
    axes = _axes(axis)
    ctx = pick(None, body, axes)
    if where is not None:
        return _builtin_reducers[reducer_name](body, axis=axes, where=where)
    e = as_expr(body, ctx)
    arr = _lib.ptr_array([a.handle for a in axes])
    p = errors.check_ptr(ctx, fn(e.handle, len(axes), arr), what)
    return Reduction(ctx, p, axes)


def sum(expr, axis=None, where=None):  # noqa: A001
    """The sum of expr over the reduce axes (only where ``where`` holds, when given)."""
    return _reduction(L.te_sum, "te_sum", expr, axis, where, "sum")


def prod(expr, axis=None, where=None):
    """The product of expr over the reduce axes."""
    return _reduction(L.te_prod, "te_prod", expr, axis, where, "prod")


def max(a, b=None, axis=None, where=None):  # noqa: A001
    """te.max(a, b): the larger of two values; te.max(expr, axis=k): a max reduction."""
    if axis is None and b is not None:
        return _binop(L.te_max, "te_max", a, b)
    if axis is None and b is None:
        raise errors.InvalidArgError("te.max: give two values, or an expression and axis=")
    return _reduction(L.te_max_r, "te_max_r", a, axis if b is None else b, where, "max")


def min(a, b=None, axis=None, where=None):  # noqa: A001
    """te.min(a, b): the smaller of two values; te.min(expr, axis=k): a min reduction."""
    if axis is None and b is not None:
        return _binop(L.te_min, "te_min", a, b)
    if axis is None and b is None:
        raise errors.InvalidArgError("te.min: give two values, or an expression and axis=")
    return _reduction(L.te_min_r, "te_min_r", a, axis if b is None else b, where, "min")


def reduce_axis(dom, name="k", ctx=None):
    """A reduction axis over ``dom``: an extent n ([0, n)) or a pair (begin, end) as in TVM."""
    c = pick(ctx, dom if isinstance(dom, (list, tuple)) else [dom])
    if isinstance(dom, (list, tuple)):
        if len(dom) != 2:
            raise errors.InvalidArgError("te.reduce_axis: dom must be (begin, end) or an extent")
        lo, hi = as_expr(dom[0], c), as_expr(dom[1], c)
        if isinstance(dom[0], int) and dom[0] == 0:
            ext = hi
        elif isinstance(dom[0], int) and isinstance(dom[1], int):
            ext = as_expr(dom[1] - dom[0], c)
        else:
            ext = hi - lo
    else:
        lo, ext = const(0, ctx=c), as_expr(dom, c)
    return _wrap(c, L.te_reduce_axis(c._ptr, _lib.encode(name), lo.handle, ext.handle),
                 "te_reduce_axis")


# ------------------------------------------------------------------------- custom reducers

class CommReducer:
    """A commutative reducer made from Python functions, as TVM's te.comm_reducer:

        argmax = te.comm_reducer(
            lambda x, y: (te.select(y[1] > x[1], y[0], x[0]), te.max(x[1], y[1])),
            lambda t0, t1: (-1, float("-inf")), name="argmax")
        idx, val = argmax((k_index, A[i, k]), axis=k)

    fcombine(x, y) takes the accumulated and the incoming value (tuples for several values) and
    returns the combined value(s); fidentity(*dtypes) returns the identity value(s). The C
    reducer (te_reducer_new) is made once per context and dtypes, when first used."""

    def __init__(self, fcombine, fidentity, name="reduce"):
        self.fcombine, self.fidentity, self.name = fcombine, fidentity, name
        self._cache = {}

    def _instance(self, ctx, dtypes):
        import weakref
        key = (id(ctx), tuple(dtypes))
        hit = self._cache.get(key)
        if hit is not None and hit[0]() is ctx:
            return hit[1]
        n = len(dtypes)
        lhs = [param("%s_x%d" % (self.name, i), d, ctx=ctx) for i, d in enumerate(dtypes)]
        rhs = [param("%s_y%d" % (self.name, i), d, ctx=ctx) for i, d in enumerate(dtypes)]
        if n == 1:
            res, ident = self.fcombine(lhs[0], rhs[0]), self.fidentity(dtypes[0])
            res = list(res) if isinstance(res, (list, tuple)) else [res]
            ident = list(ident) if isinstance(ident, (list, tuple)) else [ident]
        else:
            res = list(self.fcombine(tuple(lhs), tuple(rhs)))
            ident = list(self.fidentity(*dtypes))
        if len(res) != n or len(ident) != n:
            raise errors.InvalidArgError(
                "te.comm_reducer %s: fcombine and fidentity must give %d value(s)" % (self.name, n))
        res = [as_expr(r, ctx) if isinstance(r, Expr) else const(r, d, ctx)
               for r, d in zip(res, dtypes)]
        ident = [as_expr(v, ctx) if isinstance(v, Expr) else const(v, d, ctx)
                 for v, d in zip(ident, dtypes)]
        arr = lambda es: _lib.ptr_array([e.handle for e in es])  # noqa: E731
        p = errors.check_ptr(ctx, L.te_reducer_new(ctx._ptr, n, arr(lhs), arr(rhs), arr(res),
                                                   arr(ident)), "te_reducer_new")
        self._cache[key] = (weakref.ref(ctx), p)
        return p

    def __call__(self, values, axis=None, where=None):
        single = not isinstance(values, (list, tuple))
        vals = [values] if single else list(values)
        axes = _axes(axis)
        ctx = pick(None, vals, axes, [where])
        es = [as_expr(v, ctx) for v in vals]
        red = self._instance(ctx, [e.dtype for e in es])
        cond = as_expr(where, ctx).handle if where is not None else None
        out = (_lib.ctypes.c_void_p * len(es))()
        errors.check(ctx, L.te_reduce(red, len(es), _lib.ptr_array([e.handle for e in es]),
                                      len(axes), _lib.ptr_array([a.handle for a in axes]),
                                      cond, out), "te_reduce")
        outs = tuple(Reduction(ctx, out[i], axes) for i in range(len(es)))
        return outs[0] if single else outs

    def __repr__(self):
        return "<te.CommReducer %s>" % self.name


def comm_reducer(fcombine, fidentity, name="reduce"):
    """Makes a CommReducer (see its documentation)."""
    return CommReducer(fcombine, fidentity, name)


def _lowest(d):
    d = _dtype(d)
    if d.is_float:
        return -math.inf
    if d.is_bool:
        return False
    if d.is_uint:
        return 0
    return -(2 ** (d.bits - 1))


def _highest(d):
    d = _dtype(d)
    if d.is_float:
        return math.inf
    if d.is_bool:
        return True
    if d.is_uint:
        return 2 ** d.bits - 1
    return 2 ** (d.bits - 1) - 1


# The built-in reductions with a condition (where=) go through custom reducers.
_builtin_reducers = {
    "sum": CommReducer(lambda x, y: x + y, lambda t: 0, "sum"),
    "prod": CommReducer(lambda x, y: x * y, lambda t: 1, "prod"),
    "max": CommReducer(lambda x, y: max(x, y), _lowest, "max"),
    "min": CommReducer(lambda x, y: min(x, y), _highest, "min"),
}

__all__ = ["Expr", "Reduction", "CommReducer", "DType"]
