"""Helpers shared by the tests: random non-zero inputs, poisoned outputs, and comparisons that a
kernel writing nothing cannot pass.

Outputs the bindings allocate are poisoned too: conftest.py sets TE_DEBUG_POISON_OUTPUTS=1, so
te fills them with the same garbage as poisoned() before the kernel runs."""
import numpy as np

POISON_BYTE = 0x5A   # every byte of a poisoned integer or bool array (as te's C tests)


def rand(rng, shape, dtype="float32", lo=-1.0, hi=1.0):
    """Random non-zero data of a dtype."""
    if np.dtype(dtype).kind == "f":
        a = rng.uniform(lo, hi, size=shape).astype(dtype)
        a[a == 0] = 0.5
        return a
    return rng.integers(1, 9, size=shape).astype(dtype)


def poison(a):
    """Fills a with garbage in place (NaN for floats, 0x5A bytes for integers and bools), so
    that an element the kernel leaves unwritten shows; returns a."""
    if a.dtype.kind == "f":
        a.fill(np.nan)
    else:
        a.reshape(-1).view(np.uint8).fill(POISON_BYTE)
    return a


def poisoned(shape, dtype="float32"):
    """A new output array filled with garbage (see poison)."""
    return poison(np.empty(shape, dtype=dtype))


def tol(dtype):
    """The relative tolerance of a float dtype (te's C tests use the same)."""
    return {"float32": 1e-4, "float64": 1e-10, "float16": 3e-3,
            "bfloat16": 2e-2}.get(np.dtype(dtype).name, 0)


def _where(bad):
    idx = np.argwhere(bad)
    return tuple(int(i) for i in idx[0]) if idx.size else ()


def assert_equal(got, ref, err_msg=""):
    """got equals ref exactly (same shape). Bools are compared byte by byte: numpy reads a
    poison byte 0x5A as True, so a comparison of values would pass an unwritten element whose
    answer is True. A NaN in a float ref fails (it would match the NaN poison)."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, "%s shape %s, expected %s" % (err_msg, got.shape, ref.shape)
    if got.dtype == np.bool_:
        g = got.reshape(-1).view(np.uint8).reshape(got.shape)
        r = ref.astype(np.bool_).astype(np.uint8)
    else:
        g, r = got, ref
        if ref.dtype.kind == "f":
            assert not np.isnan(ref).any(), \
                "%s the reference has NaN at %s: it cannot be told from the poison" \
                % (err_msg, _where(np.isnan(ref)))
    bad = g != r
    assert not bad.any(), "%s %d of %d elements differ; first at %s: got %r, expected %r" % (
        err_msg, int(bad.sum()), bad.size, _where(bad), g[_where(bad)], r[_where(bad)])


def assert_close(got, ref, dtype=None, scale=1.0, err_msg=""):
    """got (what te computed) against ref (numpy's answer, at any precision), by got's dtype
    (or dtype): floats within rtol * (|ref| + m), where m is the mean magnitude of ref's finite
    elements (an element near zero is judged at the scale of the values around it) and rtol is
    tol(dtype) * scale; infinities exactly. A NaN in ref fails: the poison is NaN, so a NaN
    result could be an element never written. Integers and bools: exactly (assert_equal)."""
    got, ref = np.asarray(got), np.asarray(ref)
    dt = np.dtype(dtype) if dtype is not None else got.dtype
    if dt.kind != "f" and dt.name != "bfloat16":    # ml_dtypes' bfloat16 is kind "V"
        return assert_equal(got, ref, err_msg)
    assert got.shape == ref.shape, "%s shape %s, expected %s" % (err_msg, got.shape, ref.shape)
    r = ref.astype(np.float64)
    assert not np.isnan(r).any(), "%s the reference has NaN at %s: it cannot be told from " \
        "the poison" % (err_msg, _where(np.isnan(r)))
    g = got.astype(np.float64)
    finite = np.isfinite(r)
    m = float(np.abs(r[finite]).mean()) if finite.any() else 0.0
    rtol = tol(dt) * scale
    with np.errstate(invalid="ignore"):
        ok = np.where(finite, np.abs(g - r) <= rtol * (np.abs(r) + m), g == r)
    bad = ~ok
    if bad.any():
        w = _where(bad)
        raise AssertionError("%s %d of %d elements differ; first at %s: got %.9g, expected %.9g "
                             "(rtol %.3g of |expected| + %.3g, the reference's mean magnitude)"
                             % (err_msg, int(bad.sum()), bad.size, w, g[w], r[w], rtol, m))
