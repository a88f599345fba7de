"""Reductions inside expressions (te_lifted_reduction): gemm with beta and alpha in one compute,
the column mean, a nested reduction; the lifted stages are scheduled like any stage, their
trace replays, and misuse raises."""
import numpy as np
import pytest

import te
from _util import assert_close, rand


def _gemm(M, N, K):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    C0 = te.placeholder((M, N), name="C0")
    alpha = te.param("alpha", "float32")
    beta = te.param("beta", "float32")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: beta * C0[i, j] + alpha * te.sum(A[i, k] * B[k, j], axis=k),
                   name="C")
    return A, B, C0, alpha, beta, C


@pytest.mark.parametrize("sched", ["default", "root", "at_outer_vector", "rfactor"])
def test_gemm_beta_alpha(ctx, rng, sched):
    M, N, K = 13, 19, 23
    A, B, C0, alpha, beta, C = _gemm(M, N, K)
    (R,) = C.lifted_reductions
    assert R.name == "C_red0" and R.shape == (M, N)
    s = te.create_schedule(C)
    if sched == "root":
        s[R].compute_root()
    elif sched == "at_outer_vector":
        jo, ji = s[C].split(C.op.axis[1], 8)
        s[R].compute_at(s[C], jo)
        s[R].reorder(R.op.reduce_axis[0], R.op.axis[1])
        s[R].vectorize(R.op.axis[1])
    elif sched == "rfactor":
        ko, ki = s[R].split(R.op.reduce_axis[0], 4)
        s.rfactor(R, ki, 2)
    f = te.build(s, [A, B, C0, C, alpha, beta])
    a, b, c0 = rand(rng, (M, K)), rand(rng, (K, N)), rand(rng, (M, N))
    out = f(a, b, c0, np.zeros((M, N), np.float32) + np.nan, 1.25, -0.75)
    assert_close(out, -0.75 * c0 + 1.25 * (a.astype(np.float64) @ b), scale=K)
    if sched != "default":
        t = te.create_schedule(C)
        t.replay(s.trace())
        assert t.trace() == s.trace()


def test_column_mean_and_nested(ctx, rng):
    X = te.placeholder((17, 9), "float64", name="X")
    k = te.reduce_axis((0, 17), name="k")
    mean = te.compute((9,), lambda j: te.sum(X[k, j], axis=k) / 17.0, name="mean")
    x = rand(rng, (17, 9), "float64")
    assert_close(te.build(te.create_schedule(mean), [X, mean])(x), x.mean(0), scale=0.01)

    Y = te.placeholder((9, 5), "float64", name="Y")
    l = te.reduce_axis((0, 5), name="l")
    m = te.reduce_axis((0, 9), name="m")
    # D[i] = sum_m X[i, m] * max_l Y[m, l]: a reduction inside a reduction
    D = te.compute((17,), lambda i: te.sum(X[i, m] * te.max(Y[m, l], axis=l), axis=m), name="D")
    assert [t.name for t in D.lifted_reductions] == ["D_red0"]
    y = rand(rng, (9, 5), "float64")
    got = te.build(te.create_schedule(D), [X, Y, D])(x, y)
    assert_close(got, x[:, :9] @ y.max(1), scale=0.01)


def test_misuse(ctx):
    X = te.placeholder((4, 4), name="X")
    k = te.reduce_axis((0, 4), name="k")
    with pytest.raises(te.InvalidArgError, match="reduce axis 'k' is used outside"):
        te.compute((4,), lambda i: X[i, k] + te.sum(X[i, k], axis=k), name="bad")
    plain = te.compute((4,), lambda i: X[i, 0] * 2, name="plain")
    assert plain.lifted_reductions == ()
