"""Quantized integer kernels from Python: the operators & | ^ ~ << >> on integer expressions
(logic on bools), the shift and saturating-cast functions, te.ops.matmul(out_dtype="int32") on
uint8 x int8, requantize, and Stage.tensorize("vpdpbusd") (run where the CPU has AVX512-VNNI)."""
import numpy as np
import pytest

import te


def run(out, inputs, arrays, out_dtype, schedule=None):
    s = te.create_schedule(out)
    if schedule:
        schedule(s)
    f = te.build(s, list(inputs) + [out])
    res = np.full(tuple(int(d) for d in out.shape), 0x5a, dtype=out_dtype)
    f(*arrays, res)
    return res


def test_bit_operators(ctx):
    n = 37
    A = te.placeholder((n,), "int32", name="A")
    B = te.placeholder((n,), "int32", name="B")
    out = te.compute((n,), lambda i: ((A[i] & B[i]) ^ ~A[i]) | (B[i] << 3) | (A[i] >> 2),
                     name="out")
    rng = np.random.default_rng(1)
    a = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    a[:4] = [0, -1, -2**31, 2**31 - 1]
    want = ((a & b) ^ ~a) | (b << 3) | (a >> 2)
    got = run(out, [A, B], [a, b], np.int32,
              lambda s: s[out].vectorize(s[out].split(out.op.axis[0], 16)[1]))
    np.testing.assert_array_equal(got, want)


def test_logic_stays_logic_on_bools(ctx):
    x = te.var("x")
    e = (x < 3) & (x > 1)
    assert e.dtype.is_bool


def test_shifts_past_the_width_and_rounding(ctx):
    n = 40
    X = te.placeholder((n,), "int8", name="X")
    S = te.placeholder((n,), "int32", name="S")
    out = te.compute((n,), lambda i: te.rounding_shift_right(X[i], S[i]) +
                     te.shift_right_logical(X[i], S[i]), name="out")
    x = np.arange(-128, 127, 255 // n + 1)[:n].astype(np.int8)
    x = np.resize(x, n).astype(np.int8)
    s = (np.arange(n) % 12 - 2).astype(np.int32)   # -2 .. 9: negative ones count as huge
    want = np.empty(n, np.int64)
    for i in range(n):
        sh = int(s[i]) & 0xffffffff
        v = int(x[i])
        r = v if sh == 0 else (v + (1 << (sh - 1))) >> sh if sh <= 64 else 0
        lo = 0 if sh >= 8 else (v & 0xff) >> sh
        want[i] = r + lo
    got = run(out, [X, S], [x, s], np.int8)
    np.testing.assert_array_equal(got, want.astype(np.int8))


def test_saturating_cast(ctx):
    X = te.placeholder((6,), "float32", name="X")
    out = te.compute((6,), lambda i: te.saturating_cast(X[i], "uint8"), name="out")
    x = np.array([np.nan, -5, 3.7, 255.5, 1e9, -np.inf], np.float32)
    np.testing.assert_array_equal(run(out, [X], [x], np.uint8), [0, 0, 3, 255, 255, 0])


def test_int8_matmul_accumulates_in_int32_and_requantizes(ctx):
    M, N, K = 9, 10, 300
    A = te.placeholder((M, K), "uint8", name="A")
    B = te.placeholder((K, N), "int8", name="B")
    C = te.ops.matmul(A, B, out_dtype="int32", name="C")
    assert str(C.dtype) in ("int32", "i32")
    rng = np.random.default_rng(2)
    a = rng.integers(0, 256, (M, K)).astype(np.uint8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    a[0, :] = 255
    b[:, 0] = -128
    exact = a.astype(np.int64) @ b.astype(np.int64)
    np.testing.assert_array_equal(run(C, [A, B], [a, b], np.int32), exact)
    with pytest.raises(te.DTypeError, match="te_op_matmul_acc"):
        te.ops.matmul(A, te.placeholder((K, N), "uint8", name="B8"))
    Q = te.ops.requantize(C, 0.001, 5, "int8", name="q")
    got = run(Q, [A, B], [a, b], np.int8)
    want = np.clip(np.floor(exact * 0.001 + 0.5) + 5, -128, 127)
    assert np.abs(got.astype(np.int64) - want).max() <= 1


def _has_vnni():
    try:
        return "avx512_vnni" in open("/proc/cpuinfo").read()
    except OSError:
        return False


def test_tensorize_vpdpbusd(ctx):
    M, N, K = 6, 32, 64
    A = te.placeholder((M, K), "uint8", name="A")
    Bp = te.placeholder((K // 4, N, 4), "int8", name="Bp")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(
        A[i, k].astype("int32") * Bp[k // 4, j, k % 4].astype("int32"), axis=k), name="C")
    s = te.create_schedule(C)
    i, j = C.op.axis
    jo, ji = s[C].split(j, 16)
    ko, ki = s[C].split(C.op.reduce_axis[0], 4)
    s[C].reorder(i, jo, ko, ki, ji)
    s[C].vectorize(ji)
    s[C].tensorize(ki, "vpdpbusd")
    assert "dot4_u8s8" in te.lower(s, [A, Bp, C])
    if not _has_vnni():
        pytest.skip("this CPU has no AVX512-VNNI")
    rng = np.random.default_rng(3)
    a = rng.integers(0, 256, (M, K)).astype(np.uint8)
    b = rng.integers(-128, 128, (K // 4, N, 4)).astype(np.int8)
    c = np.zeros((M, N), np.int32)
    te.build(s, [A, Bp, C])(a, b, c)
    np.testing.assert_array_equal(c, a.astype(np.int64) @ b.transpose(0, 2, 1).reshape(K, N))
