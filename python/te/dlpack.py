"""Arrays in and out of kernels, without copies, through DLPack.

``as_dltensor(obj)`` gives a DLTensor describing obj's memory:
  - an object with ``__dlpack__`` (numpy >= 1.22, PyTorch, JAX, CuPy, ...): the capsule's
    DLManagedTensor is read through ``PyCapsule_GetPointer`` and its DLTensor header copied
    (data, shape and strides still point into obj). The capsule is not consumed: its owner's
    destructor releases it when the capsule object dies, after the call;
  - numpy arrays that numpy refuses to export (bool before numpy 1.25, read-only arrays) and
    other objects with ``__array_interface__``: the header is built from the interface.
Bool arrays are described as {kDLBool, 8} (one byte an element), which te's kernels accept.
The returned holder keeps everything the header points into alive; use it for the call only.
"""
import ctypes

from . import _lib
from . import errors
from .dtype import DType

_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_GetPointer.restype = ctypes.c_void_p
_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_IsValid.restype = ctypes.c_int
_IsValid.argtypes = [ctypes.py_object, ctypes.c_char_p]

kDLCPU = 1
kDLBfloat = 4
_TYPESTR = {"f": 2, "i": 0, "u": 1, "b": 6}


class Held:
    """A DLTensor header plus the Python objects its pointers lead into."""

    __slots__ = ("dl", "keep", "obj", "readonly")

    def __init__(self, dl, keep, obj, readonly=False):
        self.dl, self.keep, self.obj, self.readonly = dl, keep, obj, readonly

    @property
    def dtype(self):
        d = self.dl.dtype
        return DType(1, 1) if d.code == 6 and d.bits == 8 else DType(d.code, d.bits, d.lanes)

    @property
    def shape(self):
        return tuple(self.dl.shape[i] for i in range(self.dl.ndim))


def _from_capsule(obj, cap):
    if not _IsValid(cap, b"dltensor"):
        raise errors.InvalidArgError("__dlpack__ of %s did not return an unused 'dltensor' capsule"
                                     % type(obj).__name__)
    managed = _lib.DLManagedTensor.from_address(_GetPointer(cap, b"dltensor"))
    src = managed.dl_tensor
    dl = _lib.DLTensor()
    ctypes.pointer(dl)[0] = src     # a copy of the header; data/shape/strides shared
    return Held(dl, [cap], obj)


def _from_interface(obj, ai):
    typestr = ai["typestr"]
    kind, size = typestr[1], int(typestr[2:])
    code = _TYPESTR.get(kind)
    if kind == "V" and size == 2 and getattr(getattr(obj, "dtype", None), "name", "") == "bfloat16":
        code = kDLBfloat                # ml_dtypes' bfloat16 (numpy's DLPack export refuses it)
    if code is None or typestr[0] == ">":
        raise errors.DTypeError("cannot pass an array of type %r to a kernel" % typestr)
    shape = tuple(ai["shape"])
    n = len(shape)
    ptr, readonly = ai["data"] if isinstance(ai["data"], tuple) else (None, False)
    if ptr is None:
        raise errors.InvalidArgError("%s does not expose a data pointer" % type(obj).__name__)
    shape_arr = (ctypes.c_int64 * max(n, 1))(*shape)
    strides_arr = None
    if ai.get("strides") is not None:
        st = ai["strides"]
        if any(s % size for s in st):
            raise errors.ShapeError("array strides %s are not multiples of the element size %d"
                                    % (st, size))
        strides_arr = (ctypes.c_int64 * max(n, 1))(*[s // size for s in st])
    dl = _lib.DLTensor()
    dl.data = ptr or 0
    dl.device = _lib.DLDevice(kDLCPU, 0)
    dl.ndim = n
    dl.dtype = _lib.DLDataType(code, size * 8, 1)
    dl.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
    if strides_arr is not None:
        dl.strides = ctypes.cast(strides_arr, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    return Held(dl, [shape_arr, strides_arr], obj, readonly)


def as_dltensor(obj):
    """A Held DLTensor for obj (see the module's documentation). Raises te.InvalidArgError for
    objects that are neither DLPack nor array-interface providers."""
    first_error = None
    dlp = getattr(obj, "__dlpack__", None)
    if dlp is not None:
        try:
            return _from_capsule(obj, dlp())
        except (BufferError, TypeError, ValueError) as e:   # e.g. numpy 1.24 with bool
            first_error = e
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        return _from_interface(obj, ai)
    if first_error is not None:
        raise errors.InvalidArgError("cannot pass %s to a kernel: %s"
                                     % (type(obj).__name__, first_error))
    raise errors.InvalidArgError("cannot pass %s to a kernel: it has neither __dlpack__ nor "
                                 "__array_interface__" % type(obj).__name__)
