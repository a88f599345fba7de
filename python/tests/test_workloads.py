"""The end-to-end workloads of the C suite (matmul, conv2d, softmax, blur), defined, scheduled
and built from Python, run on numpy arrays and compared with numpy."""
import numpy as np
import pytest

import te
from _util import assert_close, poisoned, rand


# ------------------------------------------------------------------------------ matmul

def matmul_def(M, N, K, dtype="float32"):
    A = te.placeholder((M, K), dtype, name="A")
    B = te.placeholder((K, N), dtype, name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def sched_default(s, C):
    pass


def sched_tiled(s, C):
    st = s[C]
    xo, yo, xi, yi = st.tile(C.op.axis[0], C.op.axis[1], 8, 16)
    ko, ki = st.split(C.op.reduce_axis[0], factor=4)
    st.reorder(xo, yo, ko, xi, ki, yi)


def sched_fast(s, C):
    st = s[C]
    xo, yo, xi, yi = st.tile(C.op.axis[0], C.op.axis[1], 8, 16)
    ko, ki = st.split(C.op.reduce_axis[0], factor=4)
    st.reorder(xo, yo, ko, xi, ki, yi)
    st.vectorize(yi)
    st.unroll(ki)
    st.parallel(st.fuse(xo, yo))


def sched_cache_write(s, C):
    # TVM's GEMM tutorial, step 4: accumulate a tile in a local buffer, then write it out.
    CC = s.cache_write(C, "local")
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 16)
    s[CC].compute_at(s[C], yo)
    xc, yc = s[CC].op.axis
    ko, ki = s[CC].split(s[CC].op.reduce_axis[0], factor=4)
    s[CC].reorder(ko, xc, ki, yc)
    s[CC].vectorize(yc)
    s[C].parallel(xo)


def sched_rfactor(s, C):
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    CF = s.rfactor(C, ki)
    s[CF].compute_at(s[C], s[C].op.axis[1])


SCHEDULES = [sched_default, sched_tiled, sched_fast, sched_cache_write, sched_rfactor]


@pytest.mark.parametrize("sched", SCHEDULES, ids=lambda f: f.__name__[6:])
@pytest.mark.parametrize("shape", [(37, 53, 29), (64, 96, 32), (1, 1, 1)])
def test_matmul(ctx, rng, sched, shape):
    M, N, K = shape
    A, B, C = matmul_def(M, N, K)
    s = te.create_schedule(C)
    sched(s, C)
    f = te.build(s, [A, B, C], target="llvm", name="matmul")
    a, b = rand(rng, (M, K)), rand(rng, (K, N))
    c = poisoned((M, N))
    assert f(a, b, c) is c
    assert_close(c, a @ b)


@pytest.mark.parametrize("dtype", ["float64", "int32"])
def test_matmul_dtypes(ctx, rng, dtype):
    A, B, C = matmul_def(19, 23, 31, dtype)
    s = te.create_schedule(C)
    sched_fast(s, C)
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (19, 31), dtype), rand(rng, (31, 23), dtype)
    assert_close(f(a, b), a @ b, dtype)


def test_matmul_packed_b(ctx, rng):
    # TVM's GEMM tutorial, step 3: B packed into [N/bn, K, bn] so the inner loop is contiguous.
    M = N = K = 64
    bn = 16
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    packedB = te.compute((N // bn, K, bn), lambda x, y, z: B[y, x * bn + z], name="packedB")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * packedB[j // bn, k, j % bn], axis=k),
                   name="C")
    s = te.create_schedule(C)
    xo, yo, xi, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, bn)
    ko, ki = s[C].split(C.op.reduce_axis[0], factor=4)
    s[C].reorder(xo, yo, ko, xi, ki, yi)
    s[C].vectorize(yi)
    x, y, z = s[packedB].op.axis
    s[packedB].vectorize(z)
    s[packedB].parallel(x)
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (M, K)), rand(rng, (K, N))
    assert_close(f(a, b), a @ b)
    assert "packedB" in te.lower(s, [A, B, C])


def test_matmul_ops_library_symbolic(ctx, rng):
    m, n, k = te.var("m"), te.var("n"), te.var("k")
    A = te.placeholder((m, k), name="A")
    B = te.placeholder((n, k), name="B")
    C = te.ops.matmul(A, B, trans_b=True, name="mm")
    s = te.create_schedule(C)
    yo, yi = s[C].split(C.op.axis[1], factor=8)
    s[C].vectorize(yi)
    f = te.build(s, [A, B, C])
    for M, N, K in [(3, 5, 7), (16, 9, 33)]:
        a, b = rand(rng, (M, K)), rand(rng, (N, K))
        c = f(a, b)                       # output allocated from the symbolic sizes
        assert c.shape == (M, N)
        assert_close(c, a @ b.T)


def test_batch_matmul(ctx, rng):
    A = te.placeholder((3, 5, 7), name="A")
    B = te.placeholder((3, 7, 4), name="B")
    C = te.ops.batch_matmul(A, B)
    f = te.build(te.create_schedule(C), [A, B, C])
    a, b = rand(rng, (3, 5, 7)), rand(rng, (3, 7, 4))
    assert_close(f(a, b), a @ b)


# ------------------------------------------------------------------------------ conv2d

def conv_ref(d, w, stride, pad, dil):
    n, c, h, wd = d.shape
    o, _, kh, kw = w.shape
    dp = np.pad(d.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - dil * (kh - 1) - 1) // stride + 1
    ow = (wd + 2 * pad - dil * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for ry in range(kh):
        for rx in range(kw):
            patch = dp[:, :, ry * dil:ry * dil + stride * (oh - 1) + 1:stride,
                       rx * dil:rx * dil + stride * (ow - 1) + 1:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, ry, rx])
    return out


@pytest.mark.parametrize("plan", ["default", "inline_pad", "pad_at", "tiled"])
@pytest.mark.parametrize("case", [(1, 3, 13, 11, 4, 3, 2, 1, 2), (1, 8, 14, 14, 8, 3, 1, 1, 1),
                                  (2, 5, 9, 12, 3, 1, 2, 0, 1)])
def test_conv2d_nchw(ctx, rng, plan, case):
    n, c, h, w, o, k, stride, pad, dil = case
    D = te.placeholder((n, c, h, w), name="data")
    W = te.placeholder((o, c, k, k), name="kernel")
    out = te.ops.conv2d_nchw(D, W, stride=stride, padding=pad, dilation=dil, name="conv")
    s = te.create_schedule(out)
    padded = pad > 0
    if plan == "inline_pad" and padded:
        s[te.ops.stage(out, "pad")].compute_inline()
    elif plan == "pad_at" and padded:
        s[te.ops.stage(out, "pad")].compute_at(s[out], out.op.axis[1])
    elif plan == "tiled":
        st = s[out]
        yo, xo, yi, xi = st.tile(out.op.axis[2], out.op.axis[3], 4, 4)
        rc, ry, rx = out.op.reduce_axis
        st.reorder(yo, xo, rc, ry, rx, yi, xi)
        st.unroll(rx)
        st.parallel(out.op.axis[1])
    f = te.build(s, [D, W, out], name="conv")
    d, wt = rand(rng, (n, c, h, w)), rand(rng, (o, c, k, k))
    got = f(d, wt)
    ref = conv_ref(d, wt, stride, pad, dil)
    assert got.shape == ref.shape
    assert_close(got, ref)


def test_conv2d_written_in_python(ctx, rng):
    # The padding as a select, the convolution as a sum over three reduce axes (TVM style).
    N, C, H, W, O, K = 1, 4, 10, 10, 6, 3
    data = te.placeholder((N, C, H, W), name="data")
    kern = te.placeholder((O, C, K, K), name="kern")
    pad = te.compute((N, C, H + 2, W + 2), lambda n, c, y, x: te.select(
        te.all(y >= 1, y < H + 1, x >= 1, x < W + 1), data[n, c, y - 1, x - 1], 0.0), name="pad")
    rc = te.reduce_axis((0, C), name="rc")
    ry = te.reduce_axis((0, K), name="ry")
    rx = te.reduce_axis((0, K), name="rx")
    out = te.compute((N, O, H, W), lambda n, o, y, x: te.sum(
        pad[n, rc, y + ry, x + rx] * kern[o, rc, ry, rx], axis=[rc, ry, rx]), name="conv")
    s = te.create_schedule(out)
    s[pad].compute_inline()
    xo, xi = s[out].split(out.op.axis[3], factor=4)
    s[out].vectorize(xi)
    f = te.build(s, [data, kern, out])
    d, k = rand(rng, (N, C, H, W)), rand(rng, (O, C, K, K))
    assert_close(f(d, k), conv_ref(d, k, 1, 1, 1))


def test_conv2d_nhwc_and_depthwise(ctx, rng):
    D = te.placeholder((1, 9, 8, 3), name="data")
    W = te.placeholder((3, 3, 3, 5), name="w")
    out = te.ops.conv2d_nhwc(D, W, stride=1, padding=1)
    f = te.build(te.create_schedule(out), [D, W, out])
    d, w = rand(rng, (1, 9, 8, 3)), rand(rng, (3, 3, 3, 5))
    ref = conv_ref(d.transpose(0, 3, 1, 2), w.transpose(3, 2, 0, 1), 1, 1, 1).transpose(0, 2, 3, 1)
    assert_close(f(d, w), ref)

    DD = te.placeholder((1, 4, 7, 7), name="dd")
    WD = te.placeholder((4, 1, 3, 3), name="wd")
    dw = te.ops.depthwise_conv2d_nchw(DD, WD, padding=1)
    f = te.build(te.create_schedule(dw), [DD, WD, dw])
    d, w = rand(rng, (1, 4, 7, 7)), rand(rng, (4, 1, 3, 3))
    ref = np.concatenate([conv_ref(d[:, c:c + 1], w[c:c + 1], 1, 1, 1) for c in range(4)], axis=1)
    assert_close(f(d, w), ref)


def test_conv2d_symbolic_image(ctx, rng):
    H, W = te.var("H"), te.var("W")
    D = te.placeholder((1, 3, H, W), name="data")
    K = te.placeholder((4, 3, 3, 3), name="kernel")
    out = te.ops.conv2d_nchw(D, K, stride=2, padding=1, name="conv")
    s = te.create_schedule(out)
    s[te.ops.stage(out, "pad")].compute_inline()
    f = te.build(s, [D, K, out])
    k = rand(rng, (4, 3, 3, 3))
    for h, w in [(9, 11), (16, 5)]:
        d = rand(rng, (1, 3, h, w))
        got = f(d, k)                     # (H + 2 - 3) // 2 + 1 evaluated from the input
        assert_close(got, conv_ref(d, k, 2, 1, 1))


# ------------------------------------------------------------------------------ softmax

def softmax_ref(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("shape,dtype", [((7, 13), "float32"), ((2, 5, 9), "float32"),
                                         ((3, 31), "float64"), ((11,), "float32")])
def test_softmax_ops(ctx, rng, shape, dtype):
    X = te.placeholder(shape, dtype, name="x")
    out = te.ops.softmax(X)
    s = te.create_schedule(out)
    if len(shape) >= 2:   # as the C test: the row max at a row of exp, the row sum at a row
        mx, ex, sm = (te.ops.stage(out, n) for n in ("max", "exp", "sum"))
        s[mx].compute_at(s[ex], ex.op.axis[len(shape) - 2])
        s[sm].compute_at(s[out], out.op.axis[len(shape) - 2])
    f = te.build(s, [X, out], name="softmax")
    x = rand(rng, shape, dtype, -5, 5)
    assert_close(f(x), softmax_ref(x.astype(np.float64)), dtype)


def test_softmax_numerically_stable(ctx):
    X = te.placeholder((4, 10), name="x")
    out = te.ops.softmax(X)
    f = te.build(te.create_schedule(out), [X, out])
    x = np.linspace(90, 100, 40, dtype=np.float32).reshape(4, 10)
    got = f(x)
    assert np.all(np.isfinite(got))
    assert_close(got, softmax_ref(x.astype(np.float64)))


def test_softmax_written_in_python(ctx, rng):
    m, n = te.var("m"), te.var("n")
    x = te.placeholder((m, n), name="x")
    k1 = te.reduce_axis((0, n), name="k1")
    mx = te.compute((m,), lambda i: te.max(x[i, k1], axis=k1), name="mx")
    e = te.compute((m, n), lambda i, j: te.exp(x[i, j] - mx[i]), name="e")
    k2 = te.reduce_axis((0, n), name="k2")
    ssum = te.compute((m,), lambda i: te.sum(e[i, k2], axis=k2), name="ssum")
    out = te.compute((m, n), lambda i, j: e[i, j] / ssum[i], name="out")
    s = te.create_schedule(out)
    s[e].compute_inline()                         # exp recomputed where it is read
    s[ssum].compute_at(s[out], out.op.axis[0])    # the row sum inside the row loop of out
    s[mx].parallel(mx.op.axis[0])
    s[out].parallel(out.op.axis[0])
    f = te.build(s, [x, out], name="softmax")
    for shape in [(3, 7), (8, 40)]:
        a = rand(rng, shape, lo=-4, hi=4)
        assert_close(f(a), softmax_ref(a.astype(np.float64)))


def test_layer_norm(ctx, rng):
    X = te.placeholder((5, 17), name="x")
    G = te.placeholder((17,), name="g")
    B = te.placeholder((17,), name="b")
    out = te.ops.layer_norm(X, G, B, eps=1e-5, name="ln")
    f = te.build(te.create_schedule(out), [X, G, B, out])
    x, g, b = rand(rng, (5, 17)), rand(rng, (17,)), rand(rng, (17,))
    x64 = x.astype(np.float64)
    mu = x64.mean(-1, keepdims=True)
    var = x64.var(-1, keepdims=True)
    assert_close(f(x, g, b), (x64 - mu) / np.sqrt(var + 1e-5) * g + b)


# ------------------------------------------------------------------------------ blur

def blur_def(H, W):
    inp = te.placeholder((H + 2, W + 2), name="In")
    bx = te.compute((H + 2, W), lambda y, x: (inp[y, x] + inp[y, x + 1] + inp[y, x + 2]) / 3.0,
                    name="blur_x")
    by = te.compute((H, W), lambda y, x: (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3.0,
                    name="blur_y")
    return inp, bx, by


def blur_ref(a):
    bx = (a[:, :-2] + a[:, 1:-1] + a[:, 2:]) / 3
    return (bx[:-2] + bx[1:-1] + bx[2:]) / 3


@pytest.mark.parametrize("plan", ["default", "inline", "tiles_at", "tiles_parallel_vec"])
def test_blur(ctx, rng, plan):
    H, W = 24, 64
    inp, bx, by = blur_def(H, W)
    s = te.create_schedule(by)
    if plan == "inline":
        s[bx].compute_inline()
    elif plan.startswith("tiles"):
        yo, xo, yi, xi = s[by].tile(by.op.axis[0], by.op.axis[1], 8, 32)
        s[bx].compute_at(s[by], xo)
        if plan == "tiles_parallel_vec":
            s[by].parallel(yo)
            xio, xii = s[by].split(xi, factor=8)
            s[by].vectorize(xii)
            bxo, bxi = s[bx].split(s[bx].op.axis[1], factor=8)
            s[bx].vectorize(bxi)
    f = te.build(s, [inp, by], name="blur")
    a = rand(rng, (H + 2, W + 2))
    out = poisoned((H, W))
    f(a, out)
    assert_close(out, blur_ref(a.astype(np.float64)))


def test_blur_symbolic_with_tails(ctx, rng):
    h, w = te.var("h"), te.var("w")
    inp = te.placeholder((h + 2, w + 2), name="In")
    bx = te.compute((h + 2, w), lambda y, x: (inp[y, x] + inp[y, x + 1] + inp[y, x + 2]) / 3.0,
                    name="blur_x")
    by = te.compute((h, w), lambda y, x: (bx[y, x] + bx[y + 1, x] + bx[y + 2, x]) / 3.0,
                    name="blur_y")
    s = te.create_schedule(by)
    yo, xo, yi, xi = s[by].tile(by.op.axis[0], by.op.axis[1], 4, 8)
    s[bx].compute_at(s[by], xo)
    s[by].parallel(yo)
    f = te.build(s, [inp, by])
    for H, W in [(5, 7), (16, 33)]:
        a = rand(rng, (H + 2, W + 2))
        got = f(a)                        # h, w solved from In's extents h + 2, w + 2
        assert_close(got, blur_ref(a.astype(np.float64)))
