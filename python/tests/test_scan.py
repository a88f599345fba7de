"""Scans (te_scan): a cumulative sum, a first-order IIR filter along rows then columns, an RNN
cell over time, against numpy; the scan axis refuses parallel loops."""
import numpy as np
import pytest

import te
from _util import assert_close, rand


def test_cumsum(ctx, rng):
    X = te.placeholder((17, 13), "float64", name="X")
    S = te.placeholder((17, 13), "float64", name="S")
    C = te.scan(S, lambda t, i: X[t, i], lambda t, i: S[t - 1, i] + X[t, i], name="C")
    s = te.create_schedule(C)
    io, ii = s[C].split(C.op.axis[1], 4)
    s[C].reorder(io, C.op.axis[0], ii)
    s[C].parallel(io)
    s[C].vectorize(ii)
    x = rand(rng, (17, 13), "float64")
    assert_close(te.build(s, [X, C])(x), np.cumsum(x, axis=0), scale=0.01)
    t = te.create_schedule(C)
    t.replay(s.trace())
    assert t.trace() == s.trace()


def test_iir_rows_then_columns(ctx, rng):
    H, W, a = 11, 19, 0.25
    X = te.placeholder((H, W), name="X")
    R0 = te.placeholder((H, W), name="R")
    R = te.scan(R0, lambda i, t: X[i, t], lambda i, t: a * X[i, t] + (1 - a) * R0[i, t - 1],
                axis=1, name="R")
    V0 = te.placeholder((H, W), name="V")
    V = te.scan(V0, lambda u, j: R[u, j], lambda u, j: a * R[u, j] + (1 - a) * V0[u - 1, j],
                name="V")
    s = te.create_schedule(V)
    s[R].compute_at(s[V], V.op.axis[0])
    x = rand(rng, (H, W))
    ref = x.astype(np.float64).copy()
    for t in range(1, W):
        ref[:, t] = a * ref[:, t] + (1 - a) * ref[:, t - 1]
    for u in range(1, H):
        ref[u] = a * ref[u] + (1 - a) * ref[u - 1]
    assert_close(te.build(s, [X, V])(x), ref, scale=0.1)


def test_rnn_cell(ctx, rng):
    T, H, I = 6, 9, 5
    x = te.placeholder((T, I), name="x")
    W = te.placeholder((H, H), name="W")
    U = te.placeholder((H, I), name="U")
    h0 = te.placeholder((H,), name="h0")
    hs = te.placeholder((T, H), name="h")
    j = te.reduce_axis((0, H), name="j")
    k = te.reduce_axis((0, I), name="k")
    h = te.scan(hs, lambda t, i: h0[i],
                lambda t, i: te.tanh(te.sum(W[i, j] * hs[t - 1, j], axis=j) +
                                     te.sum(U[i, k] * x[t, k], axis=k)), name="h")
    wh, ux = h.lifted_reductions
    s = te.create_schedule(h)
    s[ux].compute_root()
    f = te.build(s, [x, W, U, h0, h])
    xv, wv, uv, h0v = (rand(rng, (T, I)), rand(rng, (H, H)) * 0.3, rand(rng, (H, I)),
                       rand(rng, (H,)))
    ref = np.zeros((T, H))
    ref[0] = h0v
    for t in range(1, T):
        ref[t] = np.tanh(wv.astype(np.float64) @ ref[t - 1] + uv @ xv[t])
    assert_close(f(xv, wv, uv, h0v, np.full((T, H), np.nan, np.float32)), ref, scale=H)


def test_scan_axis_stays_serial(ctx):
    X = te.placeholder((8, 4), name="X")
    S = te.placeholder((8, 4), name="S")
    C = te.scan(S, lambda t, i: X[t, i], lambda t, i: S[t - 1, i] * X[t, i], name="C")
    s = te.create_schedule(C)
    with pytest.raises(te.ScheduleError, match="scan axis 't' cannot be parallel"):
        s[C].parallel(C.op.axis[0])
    with pytest.raises(te.InvalidArgError, match="only the 1 step before it"):
        te.scan(S, lambda t, i: X[t, i], lambda t, i: S[t, i] * X[t, i], name="bad")
