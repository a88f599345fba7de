"""Tensors: placeholders (inputs) and computes (element-wise definitions).

    A = te.placeholder((M, K), name="A")                 # float32 by default
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

``compute`` calls the Python function once, with one fresh index variable per dimension named
after the function's parameters, and passes the expression it returns to te_compute. A function
that returns a tuple makes a multi-output compute (te_compute_multi): one tensor per value.
"""
import ctypes
import inspect
import re
import weakref

from . import _lib
from . import errors
from .context import pick
from .dtype import dtype as _dtype, from_c
from .expr import Expr, Reduction, as_expr, const, var

L = _lib.lib
_INT = re.compile(r"^-?\d+$")


class Tensor:
    """A tensor of a computation (a te_tensor). ``A[i, j]`` reads it; ``shape`` has Python ints
    for constant extents and Exprs for symbolic ones."""

    __slots__ = ("ctx", "_p", "kind", "_nreduce", "__weakref__")

    def __init__(self, ctx, p, kind, nreduce=None):
        self.ctx, self._p, self.kind, self._nreduce = ctx, p, kind, nreduce

    @property
    def handle(self):
        return self._p

    @property
    def name(self):
        return L.te_tensor_name(self._p).decode()

    @property
    def dtype(self):
        return from_c(L.te_tensor_dtype(self._p))

    @property
    def ndim(self):
        return L.te_tensor_ndim(self._p)

    @property
    def shape(self):
        out = []
        for i in range(self.ndim):
            e = Expr(self.ctx, L.te_tensor_dim(self._p, i))
            text = str(e)
            out.append(int(text) if _INT.match(text) else e)
        return tuple(out)

    @property
    def strides(self):
        """A strided placeholder's declared strides (ints or expressions); None for others."""
        if not L.te_tensor_stride(self._p, 0) or self.ndim == 0:
            return None
        out = []
        for i in range(self.ndim):
            e = Expr(self.ctx, L.te_tensor_stride(self._p, i))
            text = str(e)
            out.append(int(text) if _INT.match(text) else e)
        return tuple(out)

    @property
    def lifted_reductions(self):
        """The reductions te lifted out of this compute's body (te_lifted_reduction), in the
        order they first appear, outer before inner: ``C = te.compute((M, N), lambda i, j:
        beta * C0[i, j] + alpha * te.sum(A[i, k] * B[k, j], axis=k))`` has one, the tensor
        "C_red0"; schedule it as ``s[C.lifted_reductions[0]]``. Empty for a placeholder."""
        n = L.te_lifted_reduction_count(self._p)
        out = []
        for i in range(max(n, 0)):
            p = errors.check_ptr(self.ctx, L.te_lifted_reduction(self._p, i),
                                 "te_lifted_reduction")
            out.append(Tensor(self.ctx, p, "compute"))
        return tuple(out)

    @property
    def op(self):
        """TVM-style access to the root axes: ``s[C].split(C.op.axis[0], 8)``."""
        return _Op(self)

    def __getitem__(self, idx):
        if not isinstance(idx, tuple):
            idx = (idx,)
        es = [as_expr(x, self.ctx) for x in idx]
        p = L.te_at(self._p, len(es), _lib.ptr_array([e.handle for e in es]))
        return Expr(self.ctx, errors.check_ptr(self.ctx, p, "te_at"))

    def __eq__(self, other):
        return isinstance(other, Tensor) and other._p == self._p

    def __hash__(self):
        return hash(self._p)

    def __repr__(self):
        shape = ", ".join(str(d) for d in self.shape)
        return "<te.Tensor %s[%s]: %s (%s)>" % (self.name, shape, self.dtype, self.kind)


class AxisRef:
    """A root axis of a tensor's stage, named before any schedule exists (``C.op.axis[0]``,
    ``C.op.reduce_axis[0]``); schedule primitives resolve it in the tensor's stage."""

    __slots__ = ("tensor", "reduce", "index")

    def __init__(self, tensor, reduce, index):
        self.tensor, self.reduce, self.index = tensor, reduce, index

    def __repr__(self):
        return "<te.AxisRef %s.op.%s[%d]>" % (self.tensor.name,
                                              "reduce_axis" if self.reduce else "axis", self.index)


class _Op:
    __slots__ = ("tensor",)

    def __init__(self, tensor):
        self.tensor = tensor

    @property
    def axis(self):
        t = self.tensor
        if t.kind == "placeholder":
            return []
        return [AxisRef(t, False, i) for i in range(t.ndim)]

    @property
    def reduce_axis(self):
        t = self.tensor
        if t.kind == "placeholder":
            return []
        if t._nreduce is None:
            t._nreduce = _count_reduce_axes(t)
        return [AxisRef(t, True, i) for i in range(t._nreduce)]

    @property
    def name(self):
        return self.tensor.name


def _count_reduce_axes(t):
    """The number of reduce axes of a compute, read from a throwaway schedule of it."""
    from .schedule import create_schedule
    s = create_schedule(t)
    return len(s[t].reduce_axis)


def _shape_exprs(shape, ctx):
    if not isinstance(shape, (list, tuple)):
        shape = (shape,)
    return [as_expr(d, ctx) for d in shape]


def placeholder(shape, dtype="float32", name="placeholder", ctx=None, strides=None):
    """An input tensor. Extents are ints or symbolic sizes (te.var).

    ``strides`` (one per dimension, in elements as DLPack counts them) declares a strided input
    (te_placeholder_strided in te/tensor.h): each an int, a size, or a stride variable
    (``te.var("s")``) bound from the array at call time. Views, crops and transposes
    (``a.T``, ``a[1:5, 2:9]``, torch views) are then passed without copies; a kernel given an
    array whose strides differ from the declared ones raises te.ShapeError."""
    c = pick(ctx, shape if isinstance(shape, (list, tuple)) else [shape])
    dims = _shape_exprs(shape, c)
    if strides is None:
        p = L.te_placeholder(c._ptr, _lib.encode(name), _dtype(dtype).c, len(dims),
                             _lib.ptr_array([d.handle for d in dims]))
        return Tensor(c, errors.check_ptr(c, p, "te_placeholder"), "placeholder")
    st = _shape_exprs(strides, c)
    if len(st) != len(dims):
        raise errors.InvalidArgError("placeholder '%s': %d strides for %d dimensions"
                                     % (name, len(st), len(dims)))
    p = L.te_placeholder_strided(c._ptr, _lib.encode(name), _dtype(dtype).c, len(dims),
                                 _lib.ptr_array([d.handle for d in dims]),
                                 _lib.ptr_array([d.handle for d in st]))
    return Tensor(c, errors.check_ptr(c, p, "te_placeholder_strided"), "placeholder")


def _index_names(fcompute, ndim):
    try:
        sig = inspect.signature(fcompute)
    except (TypeError, ValueError):
        return ["i%d" % i for i in range(ndim)]
    names, varargs = [], False
    for prm in sig.parameters.values():
        if prm.kind in (prm.POSITIONAL_ONLY, prm.POSITIONAL_OR_KEYWORD):
            names.append(prm.name)
        elif prm.kind == prm.VAR_POSITIONAL:
            varargs = True
    if varargs and len(names) <= ndim:
        names += ["i%d" % i for i in range(len(names), ndim)]
    if len(names) != ndim:
        raise errors.InvalidArgError(
            "te.compute: the function takes %d index argument(s) but the shape has %d dimension(s)"
            % (len(names), ndim))
    return names


def compute(shape, fcompute, name="compute", ctx=None):
    """A computed tensor: element [i, j, ...] = fcompute(i, j, ...). When fcompute returns a
    tuple, a multi-output compute: a tuple of tensors named NAME_v0, NAME_v1, ..."""
    c = pick(ctx, shape if isinstance(shape, (list, tuple)) else [shape])
    dims = _shape_exprs(shape, c)
    vs = [var(n, ctx=c) for n in _index_names(fcompute, len(dims))]
    body = fcompute(*vs)
    harr = _lib.ptr_array([d.handle for d in dims])
    varr = _lib.ptr_array([v.handle for v in vs])
    if isinstance(body, (list, tuple)):
        bodies = [as_expr(b, c) for b in body]
        outs = (_lib.ctypes.c_void_p * max(len(bodies), 1))()
        errors.check(c, L.te_compute_multi(c._ptr, _lib.encode(name), len(dims), harr, varr,
                                           len(bodies), _lib.ptr_array([b.handle for b in bodies]),
                                           outs), "te_compute_multi")
        nred = len(bodies[0].axes) if isinstance(bodies[0], Reduction) else 0
        return tuple(Tensor(c, outs[i], "compute", nred) for i in range(len(bodies)))
    e = as_expr(body, c) if not isinstance(body, Expr) else body
    nred = len(e.axes) if isinstance(e, Reduction) else 0
    p = L.te_compute(c._ptr, _lib.encode(name), len(dims), harr, varr, e.handle)
    return Tensor(c, errors.check_ptr(c, p, "te_compute"), "compute", nred)


def scan(state, finit, fupdate, axis=0, ninit=1, name="scan"):
    """A scan (te_scan, TVM's te.scan): the tensor ``name`` of state's shape and dtype computed
    in order along ``axis``, each step from earlier ones. ``state`` is a placeholder standing for
    the scan's own values inside ``fupdate``; ``finit(t, i, ...)`` gives the steps before
    ``ninit``, ``fupdate(t, i, ...)`` the others, reading ``state`` at ``t - 1`` ...
    ``t - ninit`` along the scan axis::

        S = te.placeholder((T, N), name="S")
        C = te.scan(S, lambda t, i: X[t, i], lambda t, i: S[t - 1, i] + X[t, i])  # cumsum
    """
    if not isinstance(state, Tensor) or state.kind != "placeholder":
        raise errors.InvalidArgError("te.scan: state must be a te.placeholder")
    c = state.ctx
    names = _index_names(finit, state.ndim)
    vs = [var(n, ctx=c) for n in names]
    init = as_expr(finit(*vs), c)
    update = as_expr(fupdate(*vs), c)
    p = L.te_scan(c._ptr, _lib.encode(name), state._p, axis, ninit,
                  _lib.ptr_array([v.handle for v in vs]), init.handle, update.handle)
    return Tensor(c, errors.check_ptr(c, p, "te_scan"), "compute", 0)


# The ctypes callbacks of extern stages, alive as long as their context (kernels call them).
_extern_callbacks = weakref.WeakKeyDictionary()


def _np_dtype(dt):
    import numpy as np
    if dt.code == 1 and dt.bits == 1:
        return np.dtype(np.bool_)
    if dt.code == 4:  # bfloat16
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype("%s%d" % ({0: "i", 1: "u", 2: "f"}[dt.code], dt.bits // 8))


def _dl_array(dl, writeable):
    """A numpy view of a DLTensor's memory (no copy), valid during the call only."""
    import numpy as np
    nd = dl.ndim
    shape = tuple(dl.shape[d] for d in range(nd))
    strides = tuple(dl.strides[d] for d in range(nd))
    dt = _np_dtype(dl.dtype)
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    buf = (ctypes.c_char * max(span * dt.itemsize, 1)).from_address(dl.data + dl.byte_offset)
    flat = np.frombuffer(buf, dtype=dt, count=span)
    return np.lib.stride_tricks.as_strided(flat, shape=shape,
                                           strides=tuple(s * dt.itemsize for s in strides),
                                           writeable=writeable)


def extern(shape, inputs, fcompute=None, dtype="float32", name="extern", symbol=None):
    """An extern stage (te_extern, TVM's te.extern): the tensor ``name`` of the declared shape
    and dtype that a function computes from whole input tensors, inside a te kernel::

        E = te.extern((M, N), [P, B], lambda ins, out: np.matmul(ins[0], ins[1], out=out))

    ``fcompute(ins, out)`` is called with numpy views of the inputs (read-only) and of the
    output (written in place), valid during the call only; it returns a non-zero int to fail
    the kernel (anything else, None or an array, is success) (te.KernelError naming the stage); an exception it
    raises is printed and fails the kernel too. ``symbol`` names a C function instead (or as
    well) for ahead-of-time kernels (te.save_modules) and the workload text; with fcompute None
    a JIT build finds it in the process by dlsym. The function may be called from several
    threads at once when the stage is computed inside a parallel loop."""
    ins = list(inputs)
    c = pick(None, ins, shape if isinstance(shape, (list, tuple)) else [shape])
    for t in ins:
        if not isinstance(t, Tensor):
            raise errors.InvalidArgError("te.extern: inputs must be te tensors")
    dims = _shape_exprs(shape, c)
    cb = None
    if fcompute is not None:
        def call(nin, pins, pout):
            try:
                arrays = [_dl_array(pins[k].contents, False) for k in range(nin)]
                rc = fcompute(arrays, _dl_array(pout.contents, True))
                return rc if isinstance(rc, int) else 0  # None, an array: success
            except Exception:  # reported here; the kernel fails with te.KernelError
                import traceback
                traceback.print_exc()
                return -1
        cb = _lib.EXTERN_FN(call)
        _extern_callbacks.setdefault(c, []).append(cb)
    p = L.te_extern(c._ptr, _lib.encode(name), _dtype(dtype).c, len(dims),
                    _lib.ptr_array([d.handle for d in dims]), len(ins),
                    _lib.ptr_array([t.handle for t in ins]),
                    ctypes.cast(cb, ctypes.c_void_p) if cb else None,
                    _lib.encode(symbol) if symbol else None)
    return Tensor(c, errors.check_ptr(c, p, "te_extern"), "compute", 0)


__all__ = ["Tensor", "AxisRef", "placeholder", "compute", "scan", "extern", "const"]
