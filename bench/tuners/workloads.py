"""The workloads of the tuner comparison (bench/tuners/compare.py), each written twice with the
same math and the same layouts: as te's workload text (docs/workload-text.md), which te-tune
takes as its WORKLOAD argument, and as a TVM TE computation, which MetaSchedule tunes as the
TensorIR function te.create_prim_func makes of it. A numpy reference (in float64) checks both
tuners' kernels.

Every workload is f32, row-major, its arguments in the order inputs then output (the order of
te_workload_inputs for the texts below, and of the create_prim_func argument list). The layouts
are te's operators' (include/te/ops.h): NCHW data, OIHW / [C, 1, KH, KW] kernels, padding as a
stage of its own. This module imports neither te nor TVM at load time: compare.py imports it
in processes that have only one of them.
"""
import numpy as np


class Workload:
    """One row of the table. tvm_fn(tvm) returns the TVM TE tensors [inputs..., output];
    inputs(rng) the input arrays; reference(*inputs) the expected output (float64);
    numpy_fn(*inputs, out=) the same in float32 numpy, the table's numpy column (OpenBLAS's
    sgemm for the matmuls and, after an im2col copy, for conv2d; numpy's own single-threaded
    loops for the rest). flops is te's count of the computation (te-tune's log says it too)."""

    def __init__(self, name, title, te_text, tvm_fn, input_shapes, reference, numpy_fn, flops):
        self.name, self.title, self.te_text = name, title, te_text
        self.tvm_fn, self.input_shapes, self.reference = tvm_fn, input_shapes, reference
        self.numpy_fn, self.flops = numpy_fn, flops

    def inputs(self, rng):
        # standard normal: non-zero, signed, so a kernel that drops or doubles terms shows
        return [rng.standard_normal(s).astype(np.float32) for s in self.input_shapes]


# ----------------------------------------------------------------------------- matmul 1024
def _tvm_matmul(tvm, n=1024):
    te = tvm.te
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="matmul")
    return [A, B, C]


MATMUL = Workload(
    "matmul", "matmul 1024",
    "matmul[i, j] = sum(A[i, k]*B[k, j], k)\n"
    "where A: f32[1024, 1024], B: f32[1024, 1024], k: [0, 1024)\n",
    _tvm_matmul, [(1024, 1024), (1024, 1024)],
    lambda a, b: a.astype(np.float64) @ b.astype(np.float64),
    lambda a, b, out: np.matmul(a, b, out=out),
    2.0 * 1024 ** 3)


# --------------------------------------------------------- conv2d ResNet-50 3x3 64->64 56^2
def _tvm_pad(tvm, data, c, h, w, name):
    """A zero border of 1 around NCHW data: TVM's padding form (if_then_else), the values of
    te's select with clamped reads."""
    te, tirx = tvm.te, tvm.tirx
    return te.compute(
        (1, c, h + 2, w + 2),
        lambda n, ch, y, x: tirx.if_then_else(
            tirx.all(y >= 1, y < h + 1, x >= 1, x < w + 1),
            data[n, ch, y - 1, x - 1], tirx.const(0.0, "float32")),
        name=name)


def _tvm_conv2d(tvm, c=64, o=64, h=56, w=56):
    te = tvm.te
    data = te.placeholder((1, c, h, w), name="data")
    kernel = te.placeholder((o, c, 3, 3), name="kernel")
    pad = _tvm_pad(tvm, data, c, h, w, "conv_pad")
    rc = te.reduce_axis((0, c), name="rc")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    conv = te.compute(
        (1, o, h, w),
        lambda n, f, y, x: te.sum(pad[n, rc, y + ry, x + rx] * kernel[f, rc, ry, rx],
                                  axis=[rc, ry, rx]),
        name="conv")
    return [data, kernel, conv]


def _np_pad(data):
    return np.pad(data.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))


def _np_conv2d(data, kernel):
    p = _np_pad(data)
    h, w = data.shape[2], data.shape[3]
    out = np.zeros((1, kernel.shape[0], h, w))
    for ry in range(3):
        for rx in range(3):
            out[0] += np.tensordot(kernel[:, :, ry, rx].astype(np.float64),
                                   p[0, :, ry:ry + h, rx:rx + w], axes=(1, 0))
    return out


def _np32_conv2d(data, kernel, out):
    """im2col (a copy of the 9 shifted windows) and one sgemm."""
    p = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    c, h, w = data.shape[1], data.shape[2], data.shape[3]
    win = np.lib.stride_tricks.sliding_window_view(p[0], (3, 3), axis=(1, 2))  # c, h, w, 3, 3
    cols = np.ascontiguousarray(win.transpose(0, 3, 4, 1, 2)).reshape(c * 9, h * w)
    np.matmul(kernel.reshape(kernel.shape[0], c * 9), cols,
              out=out.reshape(kernel.shape[0], h * w))


CONV2D = Workload(
    "conv2d", "conv2d 3x3 64->64 56^2",
    "conv_pad[n, c, y, x] = select(y >= 1 && y < 57 && (x >= 1 && x < 57), "
    "data[n, c, max(min(y - 1, 55), 0), max(min(x - 1, 55), 0)], 0.0f);\n"
    "conv[n, o, y, x] = sum(conv_pad[n, rc, y + ry, x + rx]*kernel[o, rc, ry, rx], rc, ry, rx)\n"
    "where data: f32[1, 64, 56, 56], kernel: f32[64, 64, 3, 3], conv_pad: [1, 64, 58, 58], "
    "conv: [1, 64, 56, 56], rc: [0, 64), ry: [0, 3), rx: [0, 3)\n",
    _tvm_conv2d, [(1, 64, 56, 56), (64, 64, 3, 3)], _np_conv2d, _np32_conv2d,
    2.0 * 64 * 56 * 56 * 64 * 9)


# ------------------------------------------------ BERT-style batch matmul, 12 x 128x64x128
def _tvm_batch_matmul(tvm, b=12, m=128, k=64, n=128):
    te = tvm.te
    A = te.placeholder((b, m, k), name="A")
    B = te.placeholder((b, k, n), name="B")
    r = te.reduce_axis((0, k), name="k")
    C = te.compute((b, m, n), lambda h, i, j: te.sum(A[h, i, r] * B[h, r, j], axis=r),
                   name="batch_matmul")
    return [A, B, C]


BATCH_MATMUL = Workload(
    "batch_matmul", "batch matmul 12x128x64x128",
    "batch_matmul[b, i, j] = sum(A[b, i, k]*B[b, k, j], k)\n"
    "where A: f32[12, 128, 64], B: f32[12, 64, 128], k: [0, 64)\n",
    _tvm_batch_matmul, [(12, 128, 64), (12, 64, 128)],
    lambda a, b: np.matmul(a.astype(np.float64), b.astype(np.float64)),
    lambda a, b, out: np.matmul(a, b, out=out),
    2.0 * 12 * 128 * 128 * 64)


# ----------------------------------------------- depthwise conv, MobileNet 3x3 112^2 x 32
def _tvm_depthwise(tvm, c=32, h=112, w=112):
    te = tvm.te
    data = te.placeholder((1, c, h, w), name="data")
    kernel = te.placeholder((c, 1, 3, 3), name="kernel")
    pad = _tvm_pad(tvm, data, c, h, w, "depthwise_pad")
    ry = te.reduce_axis((0, 3), name="ry")
    rx = te.reduce_axis((0, 3), name="rx")
    out = te.compute(
        (1, c, h, w),
        lambda n, ch, y, x: te.sum(pad[n, ch, y + ry, x + rx] * kernel[ch, 0, ry, rx],
                                   axis=[ry, rx]),
        name="depthwise")
    return [data, kernel, out]


def _np_depthwise(data, kernel):
    p = _np_pad(data)
    h, w = data.shape[2], data.shape[3]
    out = np.zeros(data.shape)
    for ry in range(3):
        for rx in range(3):
            out[0] += kernel[:, 0, ry, rx, None, None] * p[0, :, ry:ry + h, rx:rx + w]
    return out


def _np32_depthwise(data, kernel, out):
    p = np.pad(data, ((0, 0), (0, 0), (1, 1), (1, 1)))
    h, w = data.shape[2], data.shape[3]
    out[...] = 0
    for ry in range(3):
        for rx in range(3):
            out[0] += kernel[:, 0, ry, rx, None, None] * p[0, :, ry:ry + h, rx:rx + w]


DEPTHWISE = Workload(
    "depthwise", "depthwise 3x3 32ch 112^2",
    "depthwise_pad[n, c, y, x] = select(y >= 1 && y < 113 && (x >= 1 && x < 113), "
    "data[n, c, max(min(y - 1, 111), 0), max(min(x - 1, 111), 0)], 0.0f);\n"
    "depthwise[n, c, y, x] = sum(depthwise_pad[n, c, y + ry, x + rx]*kernel[c, 0, ry, rx], "
    "ry, rx)\n"
    "where data: f32[1, 32, 112, 112], kernel: f32[32, 1, 3, 3], "
    "depthwise_pad: [1, 32, 114, 114], depthwise: [1, 32, 112, 112], ry: [0, 3), rx: [0, 3)\n",
    _tvm_depthwise, [(1, 32, 112, 112), (32, 1, 3, 3)], _np_depthwise, _np32_depthwise,
    2.0 * 32 * 112 * 112 * 9)


# ------------------------------------------- dense 128 x 384 -> 1536 (weights [out, in])
def _tvm_dense(tvm, m=128, k=384, n=1536):
    te = tvm.te
    X = te.placeholder((m, k), name="X")
    W = te.placeholder((n, k), name="W")
    r = te.reduce_axis((0, k), name="k")
    Y = te.compute((m, n), lambda i, j: te.sum(X[i, r] * W[j, r], axis=r), name="dense")
    return [X, W, Y]


DENSE = Workload(
    "dense", "dense 128x384x1536",
    "dense[i, j] = sum(X[i, k]*W[j, k], k)\n"
    "where X: f32[128, 384], W: f32[1536, 384], k: [0, 384)\n",
    _tvm_dense, [(128, 384), (1536, 384)],
    lambda x, w: x.astype(np.float64) @ w.astype(np.float64).T,
    lambda x, w, out: np.matmul(x, w.T, out=out),
    2.0 * 128 * 384 * 1536)


# ---------------------------------------------------------------------- softmax 4096^2
def _tvm_softmax(tvm, n=4096, d=4096):
    te = tvm.te
    x = te.placeholder((n, d), name="x")
    k = te.reduce_axis((0, d), name="k")
    mx = te.compute((n,), lambda i: te.max(x[i, k], axis=k), name="softmax_max")
    ex = te.compute((n, d), lambda i, j: te.exp(x[i, j] - mx[i]), name="softmax_exp")
    k2 = te.reduce_axis((0, d), name="k2")
    sm = te.compute((n,), lambda i: te.sum(ex[i, k2], axis=k2), name="softmax_sum")
    out = te.compute((n, d), lambda i, j: ex[i, j] / sm[i], name="softmax")
    return [x, out]


def _np_softmax(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _np32_softmax(x, out):
    np.subtract(x, x.max(axis=1, keepdims=True), out=out)
    np.exp(out, out=out)
    out /= out.sum(axis=1, keepdims=True)


SOFTMAX = Workload(
    "softmax", "softmax 4096^2",
    "softmax_max[i] = max(x[i, k], k);\n"
    "softmax_exp[i, j] = exp(x[i, j] - softmax_max[i]);\n"
    "softmax_sum[i] = sum(softmax_exp[i, k], k);\n"
    "softmax[i, j] = softmax_exp[i, j]/softmax_sum[i]\n"
    "where x: f32[4096, 4096], softmax_max: [4096], k: [0, 4096)\n",
    _tvm_softmax, [(4096, 4096)], _np_softmax, _np32_softmax,
    # te's count (the log's "flops"): max, subtract, exp, add, divide: 5 per element
    5.0 * 4096 * 4096)


# ------------------------------------------------------------------- layer norm 4096^2
def _tvm_layer_norm(tvm, n=4096, d=4096):
    te, tirx = tvm.te, tvm.tirx
    x = te.placeholder((n, d), name="x")
    gamma = te.placeholder((d,), name="gamma")
    beta = te.placeholder((d,), name="beta")
    inv_d = tirx.const(1.0 / d, "float32")
    k = te.reduce_axis((0, d), name="k")
    mean = te.compute((n,), lambda i: te.sum(x[i, k] * inv_d, axis=k), name="layer_norm_mean")
    k2 = te.reduce_axis((0, d), name="k2")
    var = te.compute((n,), lambda i: te.sum((x[i, k2] - mean[i]) * (x[i, k2] - mean[i]) * inv_d,
                                            axis=k2), name="layer_norm_var")
    eps = tirx.const(1e-5, "float32")
    out = te.compute((n, d), lambda i, j: (x[i, j] - mean[i]) / te.sqrt(var[i] + eps) * gamma[j]
                     + beta[j], name="layer_norm")
    return [x, gamma, beta, out]


def _np_layer_norm(x, gamma, beta):
    x = x.astype(np.float64)
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * gamma + beta


def _np32_layer_norm(x, gamma, beta, out):
    mean = x.mean(axis=1, keepdims=True)
    np.subtract(x, mean, out=out)
    inv = 1.0 / np.sqrt((out * out).mean(axis=1, keepdims=True) + np.float32(1e-5))
    out *= inv
    out *= gamma
    out += beta


LAYER_NORM = Workload(
    "layer_norm", "layer norm 4096^2",
    "layer_norm_mean[i] = sum(x[i, k]*0.00024414062f, k);\n"
    "layer_norm_var[i] = sum((x[i, k] - layer_norm_mean[i])*(x[i, k] - layer_norm_mean[i])"
    "*0.00024414062f, k);\n"
    "layer_norm[i, j] = (x[i, j] - layer_norm_mean[i])/sqrt(layer_norm_var[i] + 1e-05f)"
    "*gamma[j] + beta[j]\n"
    "where x: f32[4096, 4096], gamma: f32[4096], beta: f32[4096], k: [0, 4096)\n",
    _tvm_layer_norm, [(4096, 4096), (4096,), (4096,)], _np_layer_norm, _np32_layer_norm,
    # te's count per element: the mean (2), the variance (5) and the normalization (6)
    13.0 * 4096 * 4096)


ALL = [MATMUL, CONV2D, BATCH_MATMUL, DEPTHWISE, DENSE, SOFTMAX, LAYER_NORM]
BY_NAME = {w.name: w for w in ALL}
