"""Extern stages (te.extern): a numpy function between te stages, against numpy; a non-zero
return and an exception fail the kernel with te.KernelError naming the stage; the refused
primitives raise te.ScheduleError."""
import numpy as np
import pytest

import te
from _util import assert_close, rand


def _pipeline(fcompute):
    M, K, N = 13, 7, 9
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    P = te.compute((M, K), lambda i, k: A[i, k] * 2.0 + 1.0, name="P")
    E = te.extern((M, N), [P, B], fcompute, name="E")
    Y = te.compute((M, N), lambda i, j: E[i, j] * 0.5, name="Y")
    return A, B, P, E, Y


def test_numpy_matmul_between_te_stages(ctx, rng):
    calls = []

    def matmul(ins, out):
        calls.append(out.shape)
        assert not ins[0].flags.writeable
        np.matmul(ins[0], ins[1], out=out)

    A, B, P, E, Y = _pipeline(matmul)
    s = te.create_schedule(Y)
    yo, yi = s[Y].split(Y.op.axis[0], 4)
    s[E].compute_at(s[Y], yo)
    s[P].compute_at(s[Y], yo)
    assert "call_extern E = <fn>(P[13, 7; 7, 1], B[7, 9; 9, 1]) -> E[13, 9; 9, 1]" in \
        te.lower(s, [A, B, Y])
    a, b = rand(rng, (13, 7)), rand(rng, (7, 9))
    got = te.build(s, [A, B, Y])(a, b)
    assert_close(got, ((a * 2 + 1) @ b) * 0.5, scale=7)
    assert calls == [(13, 9)] * 4  # once per block of 4 rows, whole


def test_nonzero_return_and_exception_fail_the_kernel(ctx, rng):
    for f in (lambda ins, out: 3, lambda ins, out: 1 // 0):
        A, B, P, E, Y = _pipeline(f)
        k = te.build(te.create_schedule(Y), [A, B, Y])
        with pytest.raises(te.KernelError, match=r"extern stage 'E'.*\(got (3|-1)\)"):
            k(rand(rng, (13, 7)), rand(rng, (7, 9)))


def test_refusals(ctx):
    A, B, P, E, Y = _pipeline(lambda ins, out: None)
    s = te.create_schedule(Y)
    with pytest.raises(te.ScheduleError, match="'E' is an extern stage"):
        s[E].split(E.op.axis[0], 2)
    with pytest.raises(te.ScheduleError, match="read by extern stage 'E'"):
        s[P].compute_inline()
    with pytest.raises(te.InvalidArgError, match="both the function and the symbol are NULL"):
        te.extern((4,), [A], None, name="F")


def test_generator_scalar_and_output_externs(ctx):
    G = te.extern((5,), [], lambda ins, out: out.__setitem__(Ellipsis, np.arange(5)), name="G")
    Y = te.compute((5,), lambda i: G[i] * 2.0, name="Y")
    assert_close(te.build(te.create_schedule(Y), [Y])(), np.arange(5) * 2.0, scale=1)
    Z = te.extern((), [], lambda ins, out: out.fill(3.5), name="Z")  # a 0-d tensor
    W = te.compute((4,), lambda i: Z[()] + 1.0, name="W")
    assert_close(te.build(te.create_schedule(W), [W])(), np.full(4, 4.5), scale=1)
    A = te.placeholder((4, 3), "float64", name="A")
    # the extern is the kernel's output; an array returned (np.multiply's) is success
    H = te.extern((4, 3), [A], lambda ins, out: np.multiply(ins[0], 2, out=out),
                  dtype="float64", name="H")
    a = np.arange(12.0).reshape(4, 3) + 1
    assert_close(te.build(te.create_schedule(H), [A, H])(a), a * 2, scale=1)
