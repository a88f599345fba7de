"""Loading libte and declaring its C API for ctypes.

This module is the only place that knows the C signatures. Every other module calls
``_lib.lib.te_*`` through the prototypes declared here, so a wrong argument type is caught by
ctypes instead of becoming undefined behaviour in C.

libte.so is looked up, in order, at:
  1. ``TE_LIBRARY`` in the environment: the path of the library file (or of its folder);
  2. this package's folder: the copy a wheel bundles (``pip install ./python``);
  3. the Python installation's prefix (``<prefix>/lib``, ``<prefix>/lib64``) and the dynamic
     loader's path (``ldconfig``, ``LD_LIBRARY_PATH``: ``libte.so.0`` / ``libte.so``);
  4. the source tree's build folders (``<repo>/build*/libte.so``), for development.
"""
import ctypes
import ctypes.util
import glob
import os
import sys

# ----------------------------------------------------------------------------------- DLPack


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


# te_extern_fn: int fn(int32_t ninputs, const DLTensor *const inputs[], DLTensor *output)
EXTERN_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.POINTER(ctypes.POINTER(DLTensor)),
                             ctypes.POINTER(DLTensor))


class DLManagedTensor(ctypes.Structure):
    _fields_ = [
        ("dl_tensor", DLTensor),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
    ]


class te_conv2d_params(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("stride_h", "stride_w", "pad_h", "pad_w", "dilation_h", "dilation_w")]


class te_pool2d_params(ctypes.Structure):
    _fields_ = [(n, ctypes.c_int64) for n in
                ("kernel_h", "kernel_w", "stride_h", "stride_w", "pad_h", "pad_w")]


class te_build_times(ctypes.Structure):
    _fields_ = [("lower_s", ctypes.c_double), ("llvm_s", ctypes.c_double),
                ("jit_s", ctypes.c_double)]


# ------------------------------------------------------------------------------ finding it

_HERE = os.path.dirname(os.path.abspath(__file__))
_REPO = os.path.dirname(os.path.dirname(_HERE))


def _candidates():
    env = os.environ.get("TE_LIBRARY")
    if env:
        # An explicit choice is not second-guessed: a wrong path is an error, not a fallback.
        yield os.path.join(env, "libte.so") if os.path.isdir(env) else env
        return
    bundled = os.path.join(_HERE, "libte.so")   # the wheel's copy (cmake/TePythonWheel.cmake)
    if os.path.exists(bundled):
        yield bundled
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, "/usr/local", "/usr")):
        for libdir in ("lib", "lib64", "lib/x86_64-linux-gnu", "lib/aarch64-linux-gnu"):
            path = os.path.join(prefix, libdir, "libte.so")
            if os.path.exists(path):
                yield path
    yield "libte.so.0"   # the loader's path: LD_LIBRARY_PATH, ldconfig's cache
    found = ctypes.util.find_library("te")
    if found:
        yield found
    # The source tree: build/ (what `make` builds) first, then the newest other build folder.
    main = os.path.join(_REPO, "build", "libte.so")
    if os.path.exists(main):
        yield main
    builds = sorted(glob.glob(os.path.join(_REPO, "build*", "libte.so")),
                    key=os.path.getmtime, reverse=True)
    yield from (b for b in builds if b != main)


def _load():
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("te: cannot load libte.so (set TE_LIBRARY to its path). Tried:\n  " +
                      "\n  ".join(errors or ["nothing"]))


lib, path = _load()

# ---------------------------------------------------------------------------- prototypes

P = ctypes.c_void_p          # every opaque te_* pointer
S = ctypes.c_int             # te_status
I64 = ctypes.c_int64
CS = ctypes.c_char_p
INT = ctypes.c_int
PP = ctypes.POINTER(ctypes.c_void_p)   # arrays of pointers, and out-parameters
DT = DLDataType

_PROTOS = {
    # core.h
    "te_status_str": (CS, [S]),
    "te_ctx_new": (P, []),
    "te_ctx_free": (None, [P]),
    "te_last_status": (S, [P]),
    "te_last_error": (CS, [P]),
    "te_clear_error": (None, [P]),
    "te_free": (None, [P]),
    "te_dtype_str": (CS, [DT, ctypes.c_char_p, ctypes.c_size_t]),
    "te_dtype_eq": (INT, [DT, DT]),
    # expr.h
    "te_int": (P, [P, I64]),
    "te_float": (P, [P, DT, ctypes.c_double]),
    "te_const": (P, [P, DT, ctypes.c_double]),
    "te_var": (P, [P, CS]),
    "te_param": (P, [P, CS, DT]),
    "te_neg": (P, [P]),
    "te_not": (P, [P]),
    "te_select": (P, [P, P, P]),
    "te_if_then_else": (P, [P, P, P]),
    "te_cast": (P, [DT, P]),
    "te_call": (P, [P, CS, INT, PP]),
    "te_expr_dtype": (DT, [P]),
    "te_expr_ctx": (P, [P]),
    "te_expr_text": (P, [P]),
    # tensor.h
    "te_placeholder": (P, [P, CS, DT, INT, PP]),
    "te_placeholder_strided": (P, [P, CS, DT, INT, PP, PP]),
    "te_tensor_stride": (P, [P, INT]),
    "te_reduce_axis": (P, [P, CS, P, P]),
    "te_compute": (P, [P, CS, INT, PP, PP, P]),
    "te_at": (P, [P, INT, PP]),
    "te_sum": (P, [P, INT, PP]),
    "te_max_r": (P, [P, INT, PP]),
    "te_min_r": (P, [P, INT, PP]),
    "te_prod": (P, [P, INT, PP]),
    "te_reducer_new": (P, [P, INT, PP, PP, PP, PP]),
    "te_reduce": (S, [P, INT, PP, INT, PP, P, PP]),
    "te_compute_multi": (S, [P, CS, INT, PP, PP, INT, PP, PP]),
    "te_tensor_name": (CS, [P]),
    "te_tensor_dtype": (DT, [P]),
    "te_tensor_ndim": (INT, [P]),
    "te_tensor_dim": (P, [P, INT]),
    "te_lifted_reduction_count": (INT, [P]),
    "te_lifted_reduction": (P, [P, INT]),
    "te_scan": (P, [P, CS, P, INT, INT, PP, P, P]),
    "te_extern": (P, [P, CS, DT, INT, PP, INT, PP, P, CS]),
    "te_extern_symbol": (CS, [P]),
    # schedule.h
    "te_schedule_new": (P, [P, INT, PP]),
    "te_stage_of": (P, [P, P]),
    "te_lifted_reduction_stage": (P, [P, P, INT]),
    "te_axis": (P, [P, INT]),
    "te_reduce_iter": (P, [P, INT]),
    "te_leaf_count": (INT, [P]),
    "te_leaf": (P, [P, INT]),
    "te_iter_name": (CS, [P]),
    "te_split": (S, [P, P, I64, PP, PP]),
    "te_split_nparts": (S, [P, P, I64, PP, PP]),
    "te_tile": (S, [P, P, P, I64, I64, PP, PP, PP, PP]),
    "te_fuse": (S, [P, P, P, PP]),
    "te_reorder": (S, [P, INT, PP]),
    "te_reorder_storage": (S, [P, INT, PP]),
    "te_vectorize": (S, [P, P]),
    "te_unroll": (S, [P, P]),
    "te_parallel": (S, [P, P]),
    "te_bind": (S, [P, P, INT]),
    "te_compute_at": (S, [P, P, P]),
    "te_compute_inline": (S, [P]),
    "te_compute_root": (S, [P]),
    "te_cache_read": (S, [P, P, INT, INT, PP, PP]),
    "te_cache_write": (S, [P, P, INT, PP]),
    "te_rfactor": (S, [P, P, P, INT, PP]),
    "te_set_tail": (S, [P, P, INT]),
    "te_pragma": (S, [P, P, CS, I64]),
    "te_tensorize": (S, [P, P, CS]),
    "te_scope_name": (CS, [INT]),
    "te_thread_tag_name": (CS, [INT]),
    "te_tail_name": (CS, [INT]),
    "te_schedule_trace": (P, [P]),
    "te_schedule_replay": (S, [P, CS]),
    "te_specialize": (S, [P, P, PP]),
    # build.h
    "te_target_parse": (P, [P, CS]),
    "te_target_str": (CS, [P]),
    "te_target_vector_bits": (INT, [P]),
    "te_lower_text": (P, [P, INT, PP, INT, PP]),
    "te_build": (S, [P, CS, INT, PP, INT, PP, P, PP]),
    "te_module_call": (S, [P, CS, INT, PP, INT, PP]),
    "te_module_entry": (P, [P, CS]),
    "te_module_source": (CS, [P, CS]),
    "te_module_build_times": (te_build_times, [P]),
    # Optional: present in newer libraries (checked with has()).
    "te_set_num_threads": (None, [INT]),
    "te_num_threads": (INT, []),
    "te_target_short_str": (CS, [P]),
    "te_module_save": (S, [P, CS, ctypes.c_uint]),
    "te_modules_save": (S, [P, INT, PP, CS, ctypes.c_uint]),
    "te_tune_stage": (P, [P, CS]),        # tune.h, but a plain look-up by name
    "te_tune_tensor": (P, [P, CS]),
    # ops.h
    "te_op_matmul": (P, [P, P, P, INT, INT, CS]),
    "te_op_batch_matmul": (P, [P, P, P, INT, INT, CS]),
    "te_op_conv2d_nchw": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), CS]),
    "te_op_matmul_acc": (P, [P, P, P, INT, INT, DT, CS]),
    "te_op_batch_matmul_acc": (P, [P, P, P, INT, INT, DT, CS]),
    "te_op_conv2d_nchw_acc": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), DT, CS]),
    "te_op_conv2d_nhwc_acc": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), DT, CS]),
    "te_op_depthwise_conv2d_nchw_acc": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), DT, CS]),
    "te_op_requantize": (P, [P, P, ctypes.c_double, ctypes.c_int64, DT, CS]),
    "te_op_conv2d_nhwc": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), CS]),
    "te_op_depthwise_conv2d_nchw": (P, [P, P, P, ctypes.POINTER(te_conv2d_params), CS]),
    "te_op_max_pool2d": (P, [P, P, ctypes.POINTER(te_pool2d_params), CS]),
    "te_op_avg_pool2d": (P, [P, P, ctypes.POINTER(te_pool2d_params), CS]),
    "te_op_softmax": (P, [P, P, CS]),
    "te_op_layer_norm": (P, [P, P, P, P, ctypes.c_double, CS]),
    "te_op_relu": (P, [P, P, CS]),
    "te_op_bias_add": (P, [P, P, P, INT, CS]),
    "te_op_unary": (P, [P, P, CS, CS]),
    "te_op_cast": (P, [P, P, DT, CS]),
    "te_saturating_cast": (P, [DT, P]),
    "te_op_stage": (P, [P, CS]),
}
for _n in ("add", "sub", "mul", "div", "floordiv", "floormod", "min", "max",
           "lt", "le", "gt", "ge", "eq", "ne", "and", "or"):
    _PROTOS["te_" + _n] = (P, [P, P])
for _n in ("add", "sub", "mul", "div", "maximum", "minimum"):
    _PROTOS["te_op_" + _n] = (P, [P, P, P, CS])


def _declare(protos):
    for name, (restype, argtypes) in protos.items():
        fn = getattr(lib, name, None)
        if fn is None:
            continue
        fn.restype = restype
        fn.argtypes = argtypes


_declare(_PROTOS)


def has(name):
    """True when the loaded libte exports the C function ``name``."""
    return getattr(lib, name, None) is not None


def declare(protos):
    """Declares more prototypes (used by optional modules such as tuning)."""
    _declare(protos)


def ptr_array(items):
    """A C array of pointers (``te_expr *const[]`` and the like) from ints / None."""
    arr = (ctypes.c_void_p * max(len(items), 1))()
    for i, p in enumerate(items):
        arr[i] = p
    return arr


def take_string(p):
    """Copies a string te returned to the caller and frees it with te_free."""
    if not p:
        return None
    try:
        return ctypes.string_at(p).decode("utf-8", "replace")
    finally:
        lib.te_free(p)


def encode(s):
    return None if s is None else s.encode("utf-8")
