"""Strided placeholders (te.placeholder(..., strides=...)): numpy views — transposes, crops,
every-other-element slices, broadcasts — reach the kernel through DLPack without copies, their
strides bound or checked at call time."""
import numpy as np
import pytest

import te
from _util import poisoned


def _axpb(strides):
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A", strides=strides)
    B = te.placeholder((m, n), name="B")
    C = te.compute((m, n), lambda i, j: A[i, j] * 3 + B[i, j], name="C")
    s = te.create_schedule(C)
    jo, ji = s[C].split(C.op.axis[1], 8)
    s[C].vectorize(ji)
    return A, te.build(s, [A, B, C], name="axpb")


@pytest.mark.parametrize("make_view", [
    lambda base: base.T,                      # transposed: strides (1, rows)
    lambda base: base[1:6, 2:13],             # crop: row stride of the base
    lambda base: base[::2, 1::3],             # every other row, every third column
    lambda base: base[2:3, :],                # one row
    lambda base: np.broadcast_to(base[0], (5, base.shape[1])),   # row stride 0
])
def test_numpy_views_without_copies(ctx, rng, make_view):
    A, f = _axpb((te.var("s0"), te.var("s1")))
    base = rng.uniform(0.5, 2.0, (9, 17)).astype(np.float32)
    a = make_view(base)
    assert not a.flags["C_CONTIGUOUS"] or a.shape[0] == 1
    b = rng.uniform(0.5, 2.0, a.shape).astype(np.float32)
    out = poisoned(a.shape)
    f(a, b, out)
    np.testing.assert_allclose(out, a * 3 + b, rtol=1e-6)


def test_compact_arrays_still_work(ctx, rng):
    A, f = _axpb((te.var("s0"), te.var("s1")))
    a = rng.uniform(0.5, 2.0, (4, 21)).astype(np.float32)
    b = rng.uniform(0.5, 2.0, (4, 21)).astype(np.float32)
    out = poisoned((4, 21))
    f(a, b, out)
    np.testing.assert_allclose(out, a * 3 + b, rtol=1e-6)


def test_declared_unit_stride_is_checked(ctx, rng):
    A, f = _axpb((te.var("rs"), 1))
    assert A.strides[1] == 1 and str(A.strides[0]) == "rs"
    base = rng.uniform(0.5, 2.0, (9, 17)).astype(np.float32)
    crop = base[2:7, 3:11]
    b = np.ones(crop.shape, np.float32)
    out = poisoned(crop.shape)
    f(crop, b, out)
    np.testing.assert_allclose(out, crop * 3 + 1, rtol=1e-6)
    with pytest.raises(te.ShapeError, match=r"argument 'A' \(#0\) dim 1 stride.*expected 1, got 2"):
        f(base[:, ::2], np.ones((9, 9), np.float32), poisoned((9, 9)))


def test_compact_placeholder_refuses_a_view(ctx, rng):
    # the same view a strided placeholder takes is refused by a compact one: no hidden copy
    m, n = te.var("m"), te.var("n")
    A = te.placeholder((m, n), name="A")
    C = te.compute((m, n), lambda i, j: A[i, j] + 1, name="C")
    f = te.build(te.create_schedule(C), [A, C])
    with pytest.raises(te.ShapeError, match="only compact row-major"):
        f(np.ones((4, 6), np.float32).T, poisoned((6, 4)))


def test_torch_views_without_copies(ctx):
    torch = pytest.importorskip("torch")
    A, f = _axpb((te.var("s0"), te.var("s1")))
    g = torch.Generator().manual_seed(7)
    base = torch.rand((8, 12), generator=g) + 0.5
    a = base.t()[1:10, ::2]                      # a transposed, cropped, every-other-row view
    assert not a.is_contiguous()
    b = torch.rand(a.shape, generator=g) + 0.5
    out = torch.full(a.shape, float("nan"))
    f(a, b, out)
    torch.testing.assert_close(out, a * 3 + b)
