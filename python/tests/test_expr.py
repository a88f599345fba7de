"""Expressions: Python operators, immediates and promotion, math calls, dtypes, comparisons,
and element-wise kernels that check each operator's meaning against numpy."""
import math

import numpy as np
import pytest

import te
from _util import assert_close, assert_equal, poisoned, rand


def test_dtypes_spellings():
    assert te.dtype("f32") == "float32" == te.float32
    assert te.dtype(np.float64) == "float64"
    assert te.dtype(np.dtype("int8")) == te.int8
    assert te.dtype("bool").is_bool and te.dtype(bool) == "bool"
    assert te.dtype(float) == "float64" and te.dtype(int) == "int64"
    assert te.dtype("uint16").bits == 16 and te.dtype("uint16").code == 1
    assert te.float32.short == "f32" and te.bool_.short == "bool"
    assert te.dtype("f32x16").lanes == 16
    with pytest.raises(te.InvalidArgError):
        te.dtype("complex64")


def test_operators_build_expressions(ctx):
    i, j = te.var("i"), te.var("j")
    A = te.placeholder((4, 4), name="A")
    assert str(i + 1) == "i + 1"
    assert str(1 + i) == "1 + i"
    assert str(i * 2 - j) == "i*2 - j"
    assert str(i // 2) == "i//2" and str(i % 3) == "i%3"
    assert str(A[i, j] * 2) == "A[i, j]*2.0f"       # the immediate takes A's type
    assert str(2.5 / A[i, j]) == "2.5f/A[i, j]"
    assert (-A[i, j]).dtype == "float32"
    assert (i < j).dtype == "bool" and (i <= 2).dtype == "bool"
    assert str(i > j) == "i > j" and str(i >= j) == "i >= j"
    assert str((i < j) & (j < 3)) == "i < j && j < 3"
    assert str((i < j) | ~(j < 3)) == "i < j || !(j < 3)"
    assert str(te.max(i, j)) == "max(i, j)" and str(te.min(i, 0)) == "min(i, 0)"
    assert str(abs(A[i, j])) == "abs(A[i, j])"
    assert str(A[i, j] ** 2) == "pow(A[i, j], 2.0f)"


def test_equality_is_expression_and_identity(ctx):
    i, i2 = te.var("i"), te.var("i")
    e = i == 3
    assert isinstance(e, te.Expr) and e.dtype == "bool" and str(e) == "i == 3"
    assert str(i != 3) == "i != 3"
    assert str(i.equal(i2)) == "i == i_1" and str(te.ne(i, i2)) == "i != i_1"
    # as a truth value: the same (hash-consed) expression, so dicts and `in` work
    assert bool(i + 1 == i + 1) and not bool(i == i2) and bool(i != i2)
    d = {i: "first", i2: "second"}
    assert d[i] == "first" and i2 in d and (i + 1) in {i + 1}
    assert (i == "text") is False


def test_truth_value_of_expression_raises(ctx):
    with pytest.raises(te.DTypeError, match="no Python truth value"):
        if te.var("i") < 3:
            pass


def test_promotion_and_casts(ctx):
    x32 = te.placeholder((2,), "float32", name="x")[0]
    x64 = te.placeholder((2,), "float64", name="y")[0]
    n8 = te.placeholder((2,), "int8", name="n")[0]
    assert (x32 + x64).dtype == "float64"
    assert (n8 + x32).dtype == "float32"          # int meets float: becomes the float
    assert (n8 + 1).dtype == "int8"               # immediate takes the operand's type
    assert (x64 * 0.5).dtype == "float64"
    assert te.cast(x32, "int32").dtype == "int32"
    assert te.cast("float64", n8).dtype == "float64"   # the C argument order works too
    assert x32.astype(te.int16).dtype == "int16"


def test_numpy_scalars_as_operands(ctx):
    x = te.placeholder((2,), "float64", name="x")[0]
    for e in (np.float32(2) * x, x * np.float64(2), np.int64(3) + x, x - np.int32(1)):
        assert isinstance(e, te.Expr) and e.dtype == "float64"
    i = te.var("i")
    assert str(np.int64(4) * i) == "4*i"


def test_constants(ctx):
    assert te.const(3).dtype == "int64" and str(te.const(3)) == "3"
    assert te.const(1.5).dtype == "float32"
    assert te.const(1.5, "float64").dtype == "float64" and str(te.const(1.5, "f64")) == "1.5"
    assert te.const(True).dtype == "bool" and str(te.const(False)) == "false"
    assert te.const(7, "uint8").dtype == "uint8"
    assert te.const(np.float64(2.0)).dtype == "float64"
    assert te.const(2**62 + 1, "uint64").dtype == "uint64"
    with pytest.raises(te.InvalidArgError):
        te.const(2**70)


def test_params_and_vars(ctx):
    n = te.var("n")
    alpha = te.var("alpha", "float32")
    beta = te.param("beta", "float64")
    assert n.dtype == "int64" and alpha.dtype == "float32" and beta.dtype == "float64"
    assert str(n) == "n" and n.name == "n"
    assert te.size_var("m").dtype == "int64"


def test_math_calls(ctx):
    x = te.placeholder((2,), name="x")[0]
    for fn in (te.exp, te.exp2, te.log, te.log2, te.log10, te.sqrt, te.rsqrt, te.sin, te.cos,
               te.tan, te.tanh, te.sigmoid, te.erf, te.floor, te.ceil, te.round, te.trunc, te.abs):
        e = fn(x)
        assert e.dtype == "float32" and str(e).startswith(fn.__name__ + "(")
    assert str(te.power(x, 2)) == "pow(x[0], 2.0f)"
    assert str(te.fma(x, x, 1)) == "fma(x[0], x[0], 1.0f)"
    assert str(te.call("tanh", x)) == "tanh(x[0])"


def run_unary(fn, ref, a, dtype="float32", odtype=None):
    n = a.shape[0]
    A = te.placeholder((n,), dtype, name="A")
    B = te.compute((n,), lambda i: fn(A[i]), name="B")
    f = te.build(te.create_schedule(B), [A, B])
    out = f(a)
    assert out.dtype == np.dtype(odtype or dtype)
    assert_close(out, ref(a), scale=0.2)


@pytest.mark.parametrize("fn,ref,lo,hi", [
    (te.exp, np.exp, -3, 3), (te.log, np.log, 0.1, 5), (te.sqrt, np.sqrt, 0.1, 9),
    (te.tanh, np.tanh, -3, 3), (te.sigmoid, lambda a: 1 / (1 + np.exp(-a)), -4, 4),
    (te.abs, np.abs, -2, 2), (te.floor, np.floor, -5, 5), (te.ceil, np.ceil, -5, 5),
    (te.sin, np.sin, -3, 3), (te.cos, np.cos, -3, 3), (te.log2, np.log2, 0.2, 8),
    (te.erf, np.vectorize(math.erf), -2, 2), (lambda x: x ** 2, np.square, -3, 3),
    (lambda x: te.power(x, 0.5), np.sqrt, 0.1, 4)])
def test_math_kernels(ctx, rng, fn, ref, lo, hi):
    run_unary(fn, ref, rand(rng, (37,), lo=lo, hi=hi))


def test_arithmetic_kernels(ctx, rng):
    n = 50
    A = te.placeholder((n,), "float64", name="A")
    B = te.placeholder((n,), "float64", name="B")
    outs = {
        "add": (lambda i: A[i] + B[i], lambda a, b: a + b),
        "sub": (lambda i: A[i] - B[i] * 2, lambda a, b: a - b * 2),
        "div": (lambda i: A[i] / B[i], lambda a, b: a / b),
        "minmax": (lambda i: te.max(A[i], B[i]) - te.min(A[i], 0.25), lambda a, b:
                   np.maximum(a, b) - np.minimum(a, 0.25)),
        "select": (lambda i: te.select(A[i] > B[i], A[i], -B[i]), lambda a, b:
                   np.where(a > b, a, -b)),
        "neg": (lambda i: -A[i] + 1, lambda a, b: 1 - a),
    }
    a, b = rand(rng, (n,), "float64"), rand(rng, (n,), "float64")
    for name, (body, ref) in outs.items():
        C = te.compute((n,), body, name=name)
        f = te.build(te.create_schedule(C), [A, B, C])
        assert_close(f(a, b), ref(a, b), scale=0.01, err_msg=name)


def test_integer_floor_semantics(ctx):
    n = 9
    A = te.placeholder((n,), "int32", name="A")
    B = te.placeholder((n,), "int32", name="B")
    Q = te.compute((n,), lambda i: A[i] // B[i], name="Q")
    R = te.compute((n,), lambda i: A[i] % B[i], name="R")
    s = te.create_schedule([Q, R])
    f = te.build(s, [A, B, Q, R])
    a = np.array([7, -7, 7, -7, 0, 5, -5, 13, -13], np.int32)
    b = np.array([2, 2, -2, -2, 3, 5, 3, -4, 4], np.int32)
    q, r = f(a, b)                        # both outputs allocated and returned
    assert_equal(q, a // b)   # numpy's // and % also round to -inf
    assert_equal(r, a % b)


def test_comparisons_and_bool_outputs(ctx, rng):
    n = 20
    A = te.placeholder((n,), name="A")
    B = te.placeholder((n,), name="B")
    ops_ = {"lt": (lambda x, y: x < y, np.less), "le": (lambda x, y: x <= y, np.less_equal),
            "gt": (lambda x, y: x > y, np.greater), "ge": (lambda x, y: x >= y, np.greater_equal),
            "eq": (lambda x, y: x.equal(y), np.equal), "ne": (te.ne, np.not_equal),
            "and": (lambda x, y: (x > 0) & (y > 0), lambda a, b: (a > 0) & (b > 0)),
            "or": (lambda x, y: te.any(x > 0, y > 0), lambda a, b: (a > 0) | (b > 0)),
            "not": (lambda x, y: ~(x > y), lambda a, b: ~(a > b))}
    a = rand(rng, (n,))
    b = a.copy()
    b[::3] = rand(rng, (len(b[::3]),))
    for name, (fn, ref) in ops_.items():
        C = te.compute((n,), lambda i: fn(A[i], B[i]), name=name)
        assert C.dtype == "bool"
        f = te.build(te.create_schedule(C), [A, B, C])
        got = f(a, b)
        assert got.dtype == np.bool_
        assert_equal(got, ref(a, b), err_msg=name)


def test_bool_input_and_cast(ctx):
    n = 8
    M = te.placeholder((n,), "bool", name="M")
    X = te.placeholder((n,), "float32", name="X")
    Y = te.compute((n,), lambda i: te.select(M[i], X[i], te.cast(M[i], "float32") - 1), name="Y")
    f = te.build(te.create_schedule(Y), [M, X, Y])
    m = np.array([1, 0, 1, 1, 0, 0, 1, 0], bool)
    x = np.arange(n, dtype=np.float32)
    assert_equal(f(m, x), np.where(m, x, -1))


def test_if_then_else_pads_without_clamps(ctx):
    # the read A[i - 1, j - 1] is made only inside: at the border it would be out of bounds
    A = te.placeholder((5, 7), "float32", name="A")
    B = te.compute((7, 9), lambda i, j: te.if_then_else(
        te.all(i >= 1, i <= 5, j >= 1, j <= 7), A[i - 1, j - 1], -1.0), name="B")
    s = te.create_schedule(B)
    jo, ji = s[B].split(B.op.axis[1], factor=4)
    s[B].vectorize(ji)
    assert "if_then_else" in te.lower(s, [A, B])
    f = te.build(s, [A, B])
    a = np.arange(35, dtype=np.float32).reshape(5, 7) + 1
    ref = np.full((7, 9), -1, np.float32)
    ref[1:6, 1:8] = a
    assert_equal(f(a), ref)


def test_casts_truncate(ctx):
    X = te.placeholder((6,), "float32", name="X")
    Y = te.compute((6,), lambda i: te.cast(X[i], "int32"), name="Y")
    f = te.build(te.create_schedule(Y), [X, Y])
    x = np.array([1.7, -1.7, 0.2, -0.2, 100.9, -3.0], np.float32)
    assert_equal(f(x), x.astype(np.int32))


def test_scalar_parameters(ctx, rng):
    n = te.var("n")
    alpha = te.var("alpha", "float32")
    off = te.param("off", "int64")
    X = te.placeholder((n,), name="X")
    Y = te.compute((n,), lambda i: alpha * X[i] + te.cast(off, "float32"), name="Y")
    f = te.build(te.create_schedule(Y), [X, alpha, Y, off])   # params mixed in: call order kept
    x = rand(rng, (13,))
    y = poisoned(13)
    f(x, 2.5, y, 3)
    assert_close(y, 2.5 * x + 3)
    assert_close(f(x, np.float32(-1.0), 4), -x + 4)          # output left out: allocated
