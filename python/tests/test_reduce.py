"""Reductions: sum / max / min / prod over one and several axes, conditional reductions
(where=), custom commutative reducers (argmax) and multi-output computes."""
import numpy as np
import pytest

import te
from _util import assert_close, assert_equal, poisoned, rand


@pytest.mark.parametrize("red,ref", [(te.sum, np.sum), (te.max, np.max), (te.min, np.min),
                                     (te.prod, np.prod)])
def test_builtin_reductions(ctx, rng, red, ref):
    A = te.placeholder((5, 6, 3), "float64", name="A")
    k = te.reduce_axis((0, 6), name="k")
    l = te.reduce_axis((0, 3), name="l")
    B = te.compute((5,), lambda i: red(A[i, k, l], axis=[k, l]), name="B")
    assert len(B.op.reduce_axis) == 2
    f = te.build(te.create_schedule(B), [A, B])
    a = rand(rng, (5, 6, 3), "float64", 0.5, 1.5)
    assert_close(f(a), ref(a, axis=(1, 2)), scale=0.01)


def test_reduce_axis_with_offset(ctx, rng):
    A = te.placeholder((4, 10), name="A")
    k = te.reduce_axis((2, 7), name="k")     # [2, 7)
    B = te.compute((4,), lambda i: te.sum(A[i, k], axis=k), name="B")
    a = rand(rng, (4, 10))
    assert_close(te.build(te.create_schedule(B), [A, B])(a), a[:, 2:7].sum(1))


@pytest.mark.parametrize("red,ref,fill", [(te.sum, np.sum, 0), (te.max, np.max, -np.inf),
                                          (te.min, np.min, np.inf), (te.prod, np.prod, 1)])
def test_where(ctx, rng, red, ref, fill):
    A = te.placeholder((3, 8), "float64", name="A")
    k = te.reduce_axis((0, 8), name="k")
    B = te.compute((3,), lambda i: red(A[i, k], axis=k, where=A[i, k] > 0), name="B")
    f = te.build(te.create_schedule(B), [A, B])
    a = rand(rng, (3, 8), "float64")
    a[:, 0] = 0.75                            # every row has a positive element
    assert_close(f(a), ref(np.where(a > 0, a, fill), axis=1), scale=0.01)


def argmax_reducer():
    return te.comm_reducer(
        lambda x, y: (te.select(y[1] > x[1], y[0], x[0]), te.max(x[1], y[1])),
        lambda t0, t1: (-1, float("-inf")), name="argmax")


@pytest.mark.parametrize("plan", ["default", "split", "parallel"])
def test_argmax(ctx, rng, plan):
    M, N = 11, 17
    A = te.placeholder((M, N), name="A")
    k = te.reduce_axis((0, N), name="k")
    argmax = argmax_reducer()
    idx, val = te.compute((M,), lambda i: argmax((k, A[i, k]), axis=k), name="am")
    assert (idx.name, val.name) == ("am_v0", "am_v1")
    assert idx.dtype == "int64" and val.dtype == "float32"
    s = te.create_schedule([idx, val])
    if plan == "split":
        s[idx].split(idx.op.reduce_axis[0], factor=4)
    elif plan == "parallel":
        s[idx].parallel(idx.op.axis[0])
    f = te.build(s, [A, idx, val])
    a = rand(rng, (M, N))
    i_out, v_out = f(a)
    assert_equal(i_out, a.argmax(axis=1))
    assert_equal(v_out, a.max(axis=1))


def test_custom_reducer_with_condition(ctx, rng):
    sum_sq = te.comm_reducer(lambda x, y: x + y, lambda t: 0, name="sumsq")
    A = te.placeholder((4, 9), name="A")
    k = te.reduce_axis((0, 9), name="k")
    B = te.compute((4,), lambda i: sum_sq(A[i, k] * A[i, k], axis=k, where=k % 2 == 0), name="B")
    a = rand(rng, (4, 9))
    assert_close(te.build(te.create_schedule(B), [A, B])(a), (a[:, ::2] ** 2).sum(1))


def test_multi_output_elementwise(ctx, rng):
    A = te.placeholder((6,), name="A")
    P, Q = te.compute((6,), lambda i: (A[i] + 1, A[i] * A[i]), name="pq")
    f = te.build(te.create_schedule([P, Q]), [A, P, Q])
    a = rand(rng, (6,))
    p, q = f(a)
    assert_close(p, a + 1)
    assert_close(q, a * a)


def test_reducer_errors(ctx):
    bad = te.comm_reducer(lambda x, y: (x + y, x), lambda t: 0, name="bad")
    A = te.placeholder((3,), name="A")
    k = te.reduce_axis((0, 3), name="k")
    with pytest.raises(te.InvalidArgError, match="1 value"):
        bad(A[k], axis=k)
    with pytest.raises(te.InvalidArgError, match="axis"):
        te.sum(A[0], axis=None)
    with pytest.raises(te.Error):
        te.sum(A[k], axis=te.var("i"))       # not a reduce axis


def test_zero_dimensional_result(ctx):
    A = te.placeholder((5,), name="A")
    k = te.reduce_axis(5, name="k")
    S = te.compute((), lambda: te.sum(A[k], axis=k), name="S")
    assert S.shape == () and S.ndim == 0
    f = te.build(te.create_schedule(S), [A, S])
    a = np.arange(5, dtype=np.float32)
    assert f(a).shape == () and float(f(a)) == 10.0
    out = poisoned(())
    f(a, out)
    assert float(out) == 10.0
