"""Low precision: the dtype strings ("float16", "bfloat16", "int8", "uint8"), expr.astype,
numpy float16 arrays and bfloat16 arrays through ml_dtypes, in kernels checked against numpy
in float64 within the dtype's tolerance; an f16 scalar parameter; a bf16 matmul accumulated in
f32, through te.ops.matmul(out_dtype="float32") and through Stage.tensorize("vdpbf16ps") (run
where the CPU has AVX512-BF16). The bfloat16 tests need ml_dtypes (in scripts/python/requirements-test.txt, so in the
reused venv); under an interpreter without it they are skipped with that reason."""
import numpy as np
import pytest

import te
from _util import assert_close, rand


def test_dtype_strings():
    assert te.dtype("float16") == te.float16 and te.float16.bits == 16 and te.float16.is_float
    assert te.dtype("bfloat16") == te.bfloat16 and te.bfloat16.code == 4
    assert te.dtype("bf16") == "bfloat16" and te.dtype("f16") == "float16"
    assert te.float16.short == "f16" and te.bfloat16.short == "bf16"
    assert te.dtype(np.float16) == "float16"
    assert te.dtype("int8").bits == 8 and te.dtype("int8").is_int
    assert te.dtype("uint8").is_uint and te.dtype("uint8") == te.uint8


def test_astype_and_placeholders(ctx):
    A = te.placeholder((4,), "float16", name="A")
    B = te.placeholder((4,), "bfloat16", name="B")
    i = te.var("i")
    assert A.dtype == "float16" and B.dtype == "bfloat16"
    assert A[i].astype("float32").dtype == "float32"
    assert (A[i] * 2).dtype == "float16"             # the immediate takes A's type
    assert (A[i] + B[i]).dtype == "float32"          # neither holds the other: f32
    assert te.const(1.5, "bfloat16").dtype == "bfloat16"
    x = te.placeholder((4,), "int8", name="x")
    assert x[i].astype("uint8").dtype == "uint8"


def test_float16_elementwise(ctx, rng):
    A = te.placeholder((37, 5), "float16", name="A")
    B = te.placeholder((37, 5), "float16", name="B")
    C = te.compute((37, 5), lambda i, j: A[i, j] * B[i, j] + te.exp(A[i, j]), name="C")
    s = te.create_schedule(C)
    jo, ji = s[C].split(C.op.axis[1], factor=4)
    s[C].vectorize(ji)
    f = te.build(s, [A, B, C])
    a, b = rand(rng, (37, 5), "float16"), rand(rng, (37, 5), "float16")
    got = f(a, b)
    assert got.dtype == np.float16
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    assert_close(got, a64 * b64 + np.exp(a64))


def test_float16_scalar_parameter(ctx, rng):
    A = te.placeholder((29,), "float16", name="A")
    p = te.var("p", "float16")
    C = te.compute((29,), lambda i: A[i] * p, name="C")
    f = te.build(te.create_schedule(C), [A, C, p])
    a = rand(rng, (29,), "float16")
    assert_close(f(a, -1.75), a.astype(np.float64) * -1.75)


def test_bfloat16_matmul_f32_accumulator(ctx, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes "
                                    "(pip install ml_dtypes; the venv of scripts/setup-python.sh "
                                    "has it)")
    M, N, K = 13, 35, 21
    A = te.placeholder((M, K), "bfloat16", name="A")
    B = te.placeholder((K, N), "bfloat16", name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k].astype("float32") *
                                                B[k, j].astype("float32"), axis=k), name="C")
    assert C.dtype == "float32"
    s = te.create_schedule(C)
    jo, ji = s[C].split(C.op.axis[1], factor=16)
    s[C].vectorize(ji)
    f = te.build(s, [A, B, C])
    a = rand(rng, (M, K), "float32").astype(ml_dtypes.bfloat16)
    b = rand(rng, (K, N), "float32").astype(ml_dtypes.bfloat16)
    got = f(a, b)
    assert got.dtype == np.float32
    assert_close(got, a.astype(np.float64) @ b.astype(np.float64))


def test_bfloat16_ops_matmul_out_dtype_float32(ctx, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes")
    M, N, K = 7, 9, 300
    A = te.placeholder((M, K), "bfloat16", name="A")
    B = te.placeholder((K, N), "bfloat16", name="B")
    C = te.ops.matmul(A, B, out_dtype="float32")
    assert C.dtype == "float32"
    f = te.build(te.create_schedule(C), [A, B, C])
    a = rand(rng, (M, K), "float32").astype(ml_dtypes.bfloat16)
    b = rand(rng, (K, N), "float32").astype(ml_dtypes.bfloat16)
    assert_close(f(a, b), a.astype(np.float64) @ b.astype(np.float64))


def _has_avx512_bf16():
    try:
        return "avx512_bf16" in open("/proc/cpuinfo").read()
    except OSError:
        return False


def test_tensorize_vdpbf16ps(ctx, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes")
    M, N, K = 6, 32, 64
    A = te.placeholder((M, K), "bfloat16", name="A")
    Bp = te.placeholder((K // 2, N, 2), "bfloat16", name="Bp")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(
        A[i, k].astype("float32") * Bp[k // 2, j, k % 2].astype("float32"), axis=k), name="C")
    s = te.create_schedule(C)
    i, j = C.op.axis
    jo, ji = s[C].split(j, 16)
    ko, ki = s[C].split(C.op.reduce_axis[0], 2)
    s[C].reorder(i, jo, ko, ki, ji)
    s[C].vectorize(ji)
    s[C].tensorize(ki, "vdpbf16ps")
    assert "dot2_bf16" in te.lower(s, [A, Bp, C])
    if not _has_avx512_bf16():
        pytest.skip("this CPU has no AVX512-BF16")
    a = rand(rng, (M, K), "float32").astype(ml_dtypes.bfloat16)
    b = rand(rng, (K // 2, N, 2), "float32").astype(ml_dtypes.bfloat16)
    got = te.build(s, [A, Bp, C])(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64).transpose(0, 2, 1).reshape(K, N)
    assert_close(got, want)


def test_bfloat16_output_array(ctx, rng):
    ml_dtypes = pytest.importorskip("ml_dtypes", reason="bfloat16 arrays need ml_dtypes")
    A = te.placeholder((19,), "float32", name="A")
    C = te.compute((19,), lambda i: (A[i] * 3).astype("bfloat16"), name="C")
    f = te.build(te.create_schedule(C), [A, C])
    a = rand(rng, (19,), "float32")
    got = f(a)                                       # te allocates a bfloat16 array
    assert got.dtype == ml_dtypes.bfloat16
    # exactly numpy's (ml_dtypes') rounding of the f32 product: one rounding, to nearest even
    want = (a * np.float32(3)).astype(ml_dtypes.bfloat16)
    assert (got.view(np.uint16) == want.view(np.uint16)).all()
