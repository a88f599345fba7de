"""Helpers shared by the tests."""
import numpy as np


def rand(rng, shape, dtype="float32", lo=-1.0, hi=1.0):
    """Random non-zero data of a dtype."""
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(lo, hi, size=shape).astype(dtype)
        a[a == 0] = 0.5
        return a
    return rng.integers(1, 9, size=shape).astype(dtype)


def poisoned(shape, dtype="float32"):
    """An output array filled with garbage, so that an element left unwritten shows."""
    a = np.empty(shape, dtype=dtype)
    a.fill(np.nan if np.dtype(dtype).kind == "f" else 123)
    return a


def tol(dtype):
    return {"float32": 1e-4, "float64": 1e-10}.get(str(np.dtype(dtype)), 0)


def assert_close(got, ref, dtype="float32", scale=1.0):
    t = tol(dtype) * scale
    np.testing.assert_allclose(got, ref, rtol=t, atol=t)
