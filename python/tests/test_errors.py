"""Errors: every non-OK te_status is raised as its own te.Error subclass carrying te's message;
bad input never crashes, and the context is clean again after an error."""
import os

import numpy as np
import pytest

import te
from _util import assert_close

STATUS_CLASSES = {
    1: (te.InvalidArgError, ValueError), 2: (te.DTypeError, TypeError),
    3: (te.ShapeError, ValueError), 4: (te.ScheduleError, te.Error),
    5: (te.BoundsError, te.Error), 6: (te.TargetError, te.Error),
    7: (te.CodegenError, te.Error), 8: (te.KernelError, RuntimeError),
    9: (te.FileError, OSError), 10: (te.ParseError, ValueError),
    11: (te.OutOfMemoryError, MemoryError), 12: (te.UnsupportedError, NotImplementedError),
    13: (te.NotFoundError, LookupError), 14: (te.InternalError, te.Error),
}


def test_one_class_per_status():
    from te import errors
    seen = set()
    for code, (cls, builtin) in STATUS_CLASSES.items():
        assert issubclass(cls, te.Error) and issubclass(cls, builtin)
        assert cls.status == code
        assert cls.status_name == errors.STATUS_NAMES[code] and cls.status_name.startswith("TE_ERR_")
        e = errors.error_for(code, "msg %d" % code)
        assert type(e) is cls and str(e) == "msg %d" % code and e.message == "msg %d" % code
        seen.add(cls)
    assert len(seen) == 14
    assert te.TypeMismatchError is te.DTypeError and te.RuntimeError_ is te.KernelError


def raises(cls, pattern, fn):
    with pytest.raises(cls, match=pattern) as info:
        fn()
    assert type(info.value) is cls, "%s raised, %s expected" % (type(info.value), cls)
    return info.value


def test_invalid_arg(ctx):
    other = te.Context()
    X = te.placeholder((4,), name="X", ctx=other)
    A = te.placeholder((4,), name="A")
    raises(te.InvalidArgError, "different contexts", lambda: A[0] + X[0])
    raises(te.InvalidArgError, "not a C identifier", lambda: te.placeholder((2,), name="a b"))
    raises(te.InvalidArgError, "not a te dtype", lambda: te.placeholder((2,), "complex64"))
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    raises(te.InvalidArgError, "not among the kernel's tensors",
           lambda: te.build(te.create_schedule(B), [B]))
    f = te.build(te.create_schedule(B), [A, B])
    raises(te.InvalidArgError, "takes 2 arguments", lambda: f(1, 2, 3))
    raises(te.InvalidArgError, "neither __dlpack__", lambda: f([1.0, 2.0, 3.0, 4.0]))


def test_dtype_errors(ctx):
    A = te.placeholder((4, 4), name="A")
    i = te.var("i")
    e = raises(te.DTypeError, "te_div: integer operands", lambda: i / 2)
    assert e.status_name == "TE_ERR_TYPE"
    raises(te.DTypeError, "must be an integer", lambda: A[0.5, 1])
    raises(te.DTypeError, "condition must be bool", lambda: te.select(A[0, 0], 1, 2))
    raises(te.DTypeError, "needs a float argument", lambda: te.exp(i))
    raises(te.DTypeError, "dtypes of 'A' \\(f32\\) and 'B' \\(f64\\) differ",
           lambda: te.ops.matmul(A, te.placeholder((4, 4), "float64", name="B")))
    B = te.compute((4, 4), lambda x, y: A[x, y], name="B")
    f = te.build(te.create_schedule(B), [A, B])
    raises(te.DTypeError, "argument 'A' \\(#0\\) must be f32",
           lambda: f(np.zeros((4, 4)), np.zeros((4, 4), np.float32)))


def test_shape_errors(ctx):
    A = te.placeholder((4, 4), name="A")
    raises(te.ShapeError, "rank 2 but 1 indices", lambda: A[1])
    raises(te.ShapeError, "must be > 0", lambda: te.placeholder((0, 3)))
    raises(te.ShapeError, "must have rank 4", lambda: te.ops.conv2d_nchw(A, A))
    B = te.compute((4, 4), lambda x, y: A[x, y] * 2, name="B")
    f = te.build(te.create_schedule(B), [A, B])
    a = np.zeros((4, 4), np.float32)
    raises(te.ShapeError, "argument 'B' \\(#1\\) dim 1 extent: expected 4, got 5",
           lambda: f(a, np.zeros((4, 5), np.float32)))
    raises(te.ShapeError, "compact row-major", lambda: f(np.zeros((4, 8), np.float32)[:, ::2]))
    raises(te.ShapeError, "ndim: expected 2, got 1", lambda: f(np.zeros(16, np.float32)))


def test_schedule_errors(ctx):
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1, name="B")
    C = te.compute((8,), lambda i: B[i] * 2, name="C")
    s = te.create_schedule(C)
    raises(te.ScheduleError, "te_split: stage 'C': iter 'i': factor must be > 0 \\(got 0\\)",
           lambda: s[C].split(C.op.axis[0], factor=0))
    raises(te.ScheduleError, "outputs cannot be inlined", lambda: s[C].compute_inline())
    o, i = s[C].split(C.op.axis[0], factor=4)
    raises(te.ScheduleError, "", lambda: s[C].fuse(i, o))       # not outer-then-inner


def test_target_parse_unsupported_notfound_io(ctx, tmp_path):
    raises(te.TargetError, "unknown target kind 'blah'", lambda: te.target("blah"))
    raises(te.TargetError, "unknown CPU 'not-a-cpu'", lambda: te.target("llvm -mcpu=not-a-cpu"))
    # float16 and bfloat16 are dtypes now (test_lowp.py); an 8-bit float is not one te has
    raises(te.UnsupportedError, "f8 is not supported", lambda: te.const(1.0, te.DType(2, 8)))
    raises(te.NotFoundError, "unknown function 'nope'", lambda: te.call("nope", te.const(1.0)))
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1, name="B")
    s = te.create_schedule(B)
    raises(te.ParseError, "line 1: unknown step 'bogus'", lambda: s.replay("bogus B i"))
    raises(te.NotFoundError, "no iter 'zz'", lambda: s.replay("split B zz 4"))
    raises(te.NotFoundError, "reads no stage called 'B_pad'", lambda: te.ops.stage(B, "pad"))
    f = te.build(s, [A, B])
    raises(te.NotFoundError, "no 'zz' text", lambda: f.get_source("zz"))
    raises(te.FileError, "cannot write", lambda: f.save(str(tmp_path / "missing" / "k")))
    raises(te.TargetError, "no PTX", lambda: f.save(str(tmp_path / "k"), "ptx"))
    assert not os.listdir(tmp_path)                       # a failed save leaves nothing


def test_context_is_clean_after_an_error(ctx):
    i = te.var("i")
    with pytest.raises(te.DTypeError):
        i / 2
    # sticky errors would make the next call fail: the wrapper cleared it
    assert str(i // 2) == "i//2"
    assert te._lib.lib.te_last_status(ctx.handle) == 0


def test_no_crash_on_bad_input(ctx):
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 1, name="B")
    s = te.create_schedule(B)
    for bad in (None, 3, "A", A[0], s):
        with pytest.raises(te.Error):
            s[B].split(bad, factor=2)
        with pytest.raises(te.Error):
            s[bad] if not isinstance(bad, te.Stage) else s[A]
    with pytest.raises(te.Error):
        te.build(s, [A, B], target="llvm -mtriple=")
    with pytest.raises(te.Error):
        te.compute((4,), lambda i, j: A[i])              # arity does not match the shape
    with pytest.raises(te.Error):
        te.reduce_axis((0, 1, 2))
    with pytest.raises(te.Error):
        te.sum(A[0])                                     # no axis
    with pytest.raises(TypeError):
        A[0] + "x"


def test_kernel_names_that_clash_with_called_functions(ctx):
    # libte (this version) crashes when a kernel is named like a function kernels call
    # (tanh, expf, memcpy, ...): the bindings refuse such names, and a default name avoids them
    X = te.placeholder((4,), name="x")
    T = te.ops.unary(X, "tanh")                          # the output is called "tanh"
    s = te.create_schedule(T)
    for bad in ("tanh", "expf", "memcpy", "te_rt_alloc"):
        with pytest.raises(te.InvalidArgError, match="name of a function kernels call"):
            te.build(s, [X, T], name=bad)
    f = te.build(s, [X, T])
    assert f.name == "tanh_kernel"
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    assert_close(f(x), np.tanh(x), scale=0.01)
