"""Workloads as text (te/parse.h): parse a tensor-expression text into tensors, print any
computation in its canonical text, and the workload key (hash) of a text.

    outs = te.parse("C[i, j] = sum(A[i, k]*B[k, j], k) where A: f32[M, K], B: f32[K, N], "
                    "k: [0, K)")
    text = te.workload_text(outs)          # canonical: parse(text) gives the same computation
    key = te.workload_key(text)            # "%016x" of te_workload_hash

Present when the loaded libte has te_parse (``te.HAS_PARSE``); otherwise te.UnsupportedError.
"""
import ctypes

from . import _lib
from . import errors
from .context import pick
from .tensor import Tensor

L = _lib.lib

_lib.declare({
    "te_parse": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p))]),
    "te_workload_text": (ctypes.c_void_p, [ctypes.c_int, _lib.PP]),
    "te_workload_hash": (ctypes.c_uint64, [ctypes.c_char_p]),
    "te_workload_inputs": (ctypes.c_int, [ctypes.c_int, _lib.PP, ctypes.POINTER(ctypes.c_int),
                                          ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p)),
                                          ctypes.POINTER(ctypes.c_int),
                                          ctypes.POINTER(ctypes.POINTER(ctypes.c_void_p))]),
})

HAS_PARSE = _lib.has("te_parse")


def _need(name):
    if not _lib.has(name):
        raise errors.UnsupportedError("%s: this libte (%s) does not have it" % (name, _lib.path))


def parse(text, ctx=None):
    """Builds the computation of a workload text; returns its output tensors (a list)."""
    _need("te_parse")
    c = pick(ctx)
    n = ctypes.c_int()
    outs = ctypes.POINTER(ctypes.c_void_p)()
    errors.check(c, L.te_parse(c._ptr, _lib.encode(text), ctypes.byref(n), ctypes.byref(outs)),
                 "te_parse")
    return [Tensor(c, outs[i], "compute") for i in range(n.value)]


def workload_text(outs):
    """The canonical text of the computation that produces outs."""
    _need("te_workload_text")
    if isinstance(outs, Tensor):
        outs = [outs]
    outs = list(outs)
    if not outs or not all(isinstance(t, Tensor) for t in outs):
        raise errors.InvalidArgError("te.workload_text: expected output te.Tensor(s)")
    p = L.te_workload_text(len(outs), _lib.ptr_array([t._p for t in outs]))
    if not p:
        errors.raise_last(outs[0].ctx, "te_workload_text")
    return _lib.take_string(p)


def workload_inputs(outs):
    """The placeholders the computation of outs reads, in first-use order (te_workload_inputs):
    with outs, the argument list of its kernel, ``te.build(s, workload_inputs(outs) + outs)``.
    Raises te.UnsupportedError for a computation with scalar parameters (not handled here)."""
    _need("te_workload_inputs")
    if isinstance(outs, Tensor):
        outs = [outs]
    outs = list(outs)
    if not outs or not all(isinstance(t, Tensor) for t in outs):
        raise errors.InvalidArgError("te.workload_inputs: expected output te.Tensor(s)")
    ctx = outs[0].ctx
    nin, nparams = ctypes.c_int(), ctypes.c_int()
    ins, params = ctypes.POINTER(ctypes.c_void_p)(), ctypes.POINTER(ctypes.c_void_p)()
    errors.check(ctx, L.te_workload_inputs(len(outs), _lib.ptr_array([t._p for t in outs]),
                                           ctypes.byref(nin), ctypes.byref(ins),
                                           ctypes.byref(nparams), ctypes.byref(params)),
                 "te_workload_inputs")
    if nparams.value:
        raise errors.UnsupportedError("te.workload_inputs: the computation has %d scalar "
                                      "parameter(s); build it with them listed by hand"
                                      % nparams.value)
    return [Tensor(ctx, ins[i], "placeholder") for i in range(nin.value)]


def workload_hash(text):
    """te_workload_hash of a canonical text (a 64-bit int)."""
    _need("te_workload_hash")
    return L.te_workload_hash(_lib.encode(text))


def workload_key(text):
    """The workload key of a canonical text as tuning logs print it (16 hex digits)."""
    return "%016x" % workload_hash(text)


__all__ = ["parse", "workload_text", "workload_inputs", "workload_hash", "workload_key",
           "HAS_PARSE"]
