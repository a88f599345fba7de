"""Arrays through DLPack: the kernel reads and writes the caller's memory (no copies), any
object with __dlpack__ works, dtypes map (bool included), outputs can be left out, and the
DLPack capsules are released after the call."""
import sys

import numpy as np
import pytest

import te
from _util import assert_equal, poisoned, rand


@pytest.fixture
def double(ctx):
    n = te.var("n")
    A = te.placeholder((n, 4), name="A")
    B = te.compute((n, 4), lambda i, j: A[i, j] * 2, name="B")
    return te.build(te.create_schedule(B), [A, B], name="double")


def test_kernel_writes_into_callers_array(double):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = poisoned((3, 4))
    address = out.ctypes.data
    r = double(a, out)
    assert r is out and out.ctypes.data == address
    assert_equal(out, a * 2)


def test_views_are_not_copied(double):
    # rows 2..5 of a bigger buffer are a compact view: the kernel writes into the buffer
    big = np.full((8, 4), -1, np.float32)
    src = np.ones((8, 4), np.float32) * 5
    double(src[2:6], big[2:6])
    assert np.all(big[2:6] == 10) and np.all(big[:2] == -1) and np.all(big[6:] == -1)


def test_input_memory_is_read_in_place(ctx):
    # a kernel that reads A and writes A's elements into B, reading A after the caller changed it
    A = te.placeholder((4,), name="A")
    B = te.compute((4,), lambda i: A[i] + 0, name="B")
    f = te.build(te.create_schedule(B), [A, B])
    a = np.zeros(4, np.float32)
    b = poisoned(4)
    a[:] = [1, 2, 3, 4]
    f(a, b)
    assert_equal(b, a)


class OnlyDLPack:
    """An object that offers nothing but the DLPack protocol (as a framework tensor would)."""

    def __init__(self, arr):
        self._arr = arr
        self.calls = 0

    def __dlpack__(self, stream=None):
        self.calls += 1
        return self._arr.__dlpack__()

    def __dlpack_device__(self):
        return self._arr.__dlpack_device__()


def test_any_dlpack_object(double):
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    out = poisoned((2, 4))
    wa, wout = OnlyDLPack(a), OnlyDLPack(out)
    assert double(wa, wout) is wout
    assert wa.calls == 1 and wout.calls == 1
    assert_equal(out, a * 2)


def test_capsules_are_released(double):
    a = np.ones((5, 4), np.float32)
    out = np.empty((5, 4), np.float32)
    before = sys.getrefcount(a), sys.getrefcount(out)
    for _ in range(20):
        double(a, out)
    assert (sys.getrefcount(a), sys.getrefcount(out)) == before


def test_outputs_allocated_when_left_out(double):
    a = rand(np.random.default_rng(0), (7, 4))
    out = double(a)                          # n = 7 from a
    assert isinstance(out, np.ndarray) and out.shape == (7, 4) and out.dtype == np.float32
    assert_equal(out, a * 2)


def test_multiple_outputs_returned_in_order(ctx):
    A = te.placeholder((5,), "int32", name="A")
    Lo = te.compute((5,), lambda i: A[i] - 1, name="Lo")
    Hi = te.compute((5,), lambda i: A[i] + 1, name="Hi")
    f = te.build(te.create_schedule([Lo, Hi]), [A, Hi, Lo])
    a = np.arange(5, dtype=np.int32)
    hi, lo = f(a)
    assert_equal(lo, a - 1)
    assert_equal(hi, a + 1)
    hi2 = poisoned(5, np.int32)
    lo2 = poisoned(5, np.int32)
    assert f(a, hi2, lo2) == (hi2, lo2)
    assert_equal(lo2, a - 1)
    assert_equal(hi2, a + 1)


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16",
                                   "uint32", "uint64", "float32", "float64"])
def test_dtype_mapping(ctx, dtype):
    A = te.placeholder((6,), dtype, name="A")
    B = te.compute((6,), lambda i: A[i] + 1, name="B")
    f = te.build(te.create_schedule(B), [A, B])
    a = np.arange(6).astype(dtype)
    out = f(a)
    assert out.dtype == np.dtype(dtype)
    assert_equal(out, a + 1)
    wrong = "float64" if dtype != "float64" else "float32"
    with pytest.raises(te.DTypeError, match="must be"):
        f(a.astype(wrong))


def test_bool_arrays_in_and_out(ctx):
    # numpy 1.24 does not export bool through DLPack: te passes them through the array interface
    A = te.placeholder((6,), "bool", name="A")
    X = te.placeholder((6,), "int32", name="X")
    B = te.compute((6,), lambda i: A[i] & (X[i] > 2), name="B")
    f = te.build(te.create_schedule(B), [A, X, B])
    a = np.array([1, 1, 0, 1, 0, 1], bool)
    x = np.arange(6, dtype=np.int32)
    out = poisoned(6, bool)
    f(a, x, out)
    assert_equal(out, a & (x > 2))
    with pytest.raises(te.DTypeError):
        f(a.astype(np.int32), x, out)


def test_read_only_arrays(double):
    a = np.ones((2, 4), np.float32)
    a.setflags(write=False)
    assert_equal(double(a), np.full((2, 4), 2, np.float32))   # fine as an input
    with pytest.raises(te.InvalidArgError, match="read-only"):
        double(np.ones((2, 4), np.float32), a)        # not as an output


def test_layout_and_overlap_refused(double):
    a = np.ones((4, 8), np.float32)
    with pytest.raises(te.ShapeError, match="compact row-major"):
        double(a[:, ::2])
    with pytest.raises(te.ShapeError, match="compact row-major"):
        double(np.asfortranarray(np.ones((3, 4), np.float32)))
    same = np.ones((3, 4), np.float32)
    with pytest.raises(te.InvalidArgError, match="overlap"):
        double(same, same)
