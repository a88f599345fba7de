"""The operator library (te.ops) against numpy: pooling, element-wise and broadcasting
operators, bias_add, unary functions, casts; stage names."""
import numpy as np
import pytest

import te
from _util import assert_close, assert_equal, rand


def build_run(out, inputs, arrays, schedule=None):
    s = te.create_schedule(out)
    if schedule:
        schedule(s)
    return te.build(s, list(inputs) + [out])(*arrays)


def pool_ref(a, k, stride, pad, kind):
    n, c, h, w = a.shape
    fill = -np.inf if kind == "max" else 0
    p = np.pad(a, ((0, 0), (0, 0), (pad, pad), (pad, pad)), constant_values=fill)
    oh = (h + 2 * pad - k) // stride + 1
    ow = (w + 2 * pad - k) // stride + 1
    out = np.empty((n, c, oh, ow), a.dtype)
    for y in range(oh):
        for x in range(ow):
            win = p[:, :, y * stride:y * stride + k, x * stride:x * stride + k]
            out[:, :, y, x] = win.max((2, 3)) if kind == "max" else win.sum((2, 3)) / (k * k)
    return out


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_pooling(ctx, rng, kind):
    D = te.placeholder((1, 3, 9, 10), name="data")
    fn = te.ops.max_pool2d if kind == "max" else te.ops.avg_pool2d
    out = fn(D, kernel=3, stride=2, padding=1, name="pool")
    a = rand(rng, (1, 3, 9, 10))
    got = build_run(out, [D], [a],
                    lambda s: s[te.ops.stage(out, "pad")].compute_inline())
    assert_close(got, pool_ref(a, 3, 2, 1, kind))


def test_broadcasting_elementwise(ctx, rng):
    A = te.placeholder((4, 1, 5), name="a")
    B = te.placeholder((3, 1), name="b")
    a, b = rand(rng, (4, 1, 5)), rand(rng, (3, 1), lo=0.5, hi=2)
    for fn, ref in ((te.ops.add, np.add), (te.ops.subtract, np.subtract),
                    (te.ops.multiply, np.multiply), (te.ops.divide, np.divide),
                    (te.ops.maximum, np.maximum), (te.ops.minimum, np.minimum)):
        out = fn(A, B)
        assert out.shape == (4, 3, 5)
        assert_close(build_run(out, [A, B], [a, b]), ref(a, b))
    with pytest.raises(te.ShapeError):
        te.ops.add(A, te.placeholder((2, 3), name="c"))


def test_relu_bias_unary_cast(ctx, rng):
    X = te.placeholder((2, 3, 4, 4), name="x")
    bias = te.placeholder((3,), name="bias")
    x, b = rand(rng, (2, 3, 4, 4)), rand(rng, (3,))
    assert_close(build_run(te.ops.relu(X), [X], [x]), np.maximum(x, 0))
    assert_close(build_run(te.ops.bias_add(X, bias, axis=1), [X, bias], [x, b]),
                 x + b[None, :, None, None])
    assert_close(build_run(te.ops.unary(X, "tanh"), [X], [x]), np.tanh(x))
    assert_close(build_run(te.ops.unary(X, "neg"), [X], [x]), -x)
    got = build_run(te.ops.cast(X, "int32"), [X], [x * 10])
    assert got.dtype == np.int32
    assert_equal(got, (x * 10).astype(np.int32))
    with pytest.raises(te.NotFoundError):
        te.ops.unary(X, "frobnicate")


def test_dense_layer_pipeline(ctx, rng):
    # matmul + bias_add + relu, the bias and relu stages inlined into the output
    X = te.placeholder((6, 8), name="x")
    W = te.placeholder((5, 8), name="w")
    bias = te.placeholder((5,), name="bias")
    mm = te.ops.matmul(X, W, trans_b=True, name="mm")
    out = te.ops.relu(te.ops.bias_add(mm, bias, axis=1, name="ba"), name="out")
    s = te.create_schedule(out)
    s[te.ops.stage(out, "ba") if False else out].parallel(out.op.axis[0])
    f = te.build(s, [X, W, bias, out])
    x, w, b = rand(rng, (6, 8)), rand(rng, (5, 8)), rand(rng, (5,))
    assert_close(f(x, w, b), np.maximum(x @ w.T + b, 0))


def test_stage_names_and_defaults(ctx):
    X = te.placeholder((3, 4), name="x")
    sm = te.ops.softmax(X)
    assert sm.name == "softmax"
    assert [te.ops.stage(sm, n).name for n in ("max", "exp", "sum")] == \
        ["softmax_max", "softmax_exp", "softmax_sum"]
    assert te.ops.matmul(X, te.placeholder((4, 2), name="y")).name == "matmul"
    conv = te.ops.conv2d_nchw(te.placeholder((1, 2, 5, 5), name="d"),
                              te.placeholder((3, 2, 3, 3), name="k"), padding=(1, 0))
    assert te.ops.stage(conv, "pad").shape == (1, 2, 7, 5)
    assert len(conv.op.reduce_axis) == 3
