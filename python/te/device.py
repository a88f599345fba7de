"""Arrays in GPU memory, allocated through te's runtime, and kernels called on them.

    a = te.device.array(np_a, "cuda")          # a copy in device memory (te_device_alloc)
    c = f(a, b)                                # a cuda kernel; its output allocated on the device
    c.numpy()                                  # copied back
    t = torch.from_dlpack(c)                   # a torch CUDA tensor sharing the memory

Two kinds of device:
  - "cuda": memory from te/device.h (te_device_alloc / te_device_copy through the CUDA driver,
    loaded at run time; TE_CUDA_DRIVER names another driver file, as the C tests' fake). The
    array exports itself through DLPack as {kDLCUDA, 0}, so torch.from_dlpack (on a machine
    where torch has CUDA) and te's cuda kernels take it without a copy; torch CUDA tensors go
    into te's cuda kernels the same way (te/dlpack.py reads their __dlpack__).
  - "vulkan": a storage buffer of te's Vulkan runtime (te_rt_vk_buffer_new: host-visible memory,
    mapped for its whole life; Mesa's lavapipe counts, so this works without a GPU). A vulkan
    kernel called on such arrays reads and writes them through the mapping: te's Vulkan
    launcher still copies its arguments into the module's own buffers and back at each call (it
    takes host tensors, te/build.h), so these arrays keep data on the device's side between
    Python calls without making calls cheaper yet. DLPack has no consumer for te's buffer
    handles: __dlpack__ refuses (BufferError); __dlpack_device__ says (kDLVulkan, 0).

A device that cannot be used raises te.KernelError (TE_ERR_RUNTIME) with the driver's reason
(``te.device.available(kind)`` asks without raising). Arrays are compact (row-major), of te's
dtypes, and are freed when the last reference goes (or by ``free()``).
"""
import ctypes

from . import _lib
from . import errors
from .dlpack import Held, as_dltensor
from .dtype import dtype as te_dtype, numpy_dtype

L = _lib.lib

kDLCPU, kDLCUDA, kDLVulkan = 1, 2, 7
_KINDS = {"cuda": kDLCUDA, "vulkan": kDLVulkan}

_P, _S, _U64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_uint64
_lib.declare({
    "te_device_available": (ctypes.c_int, [ctypes.c_int]),
    "te_device_alloc": (_S, [_lib.DLDevice, ctypes.c_size_t, ctypes.POINTER(_P)]),
    "te_device_free": (_S, [_lib.DLDevice, _P]),
    "te_device_copy": (_S, [_P, _lib.DLDevice, _P, _lib.DLDevice, ctypes.c_size_t]),
    "te_device_sync": (_S, [_lib.DLDevice]),
    "te_device_last_error": (ctypes.c_char_p, []),
    "te_rt_vk_init": (ctypes.c_int32, []),
    "te_rt_vk_buffer_new": (ctypes.c_int32, [_U64, ctypes.POINTER(_P)]),
    "te_rt_vk_buffer_free": (None, [_P]),
    "te_rt_vk_buffer_data": (_P, [_P]),
    "te_rt_last_error": (ctypes.c_char_p, []),
})


def _kind(device):
    if device not in _KINDS:
        raise errors.InvalidArgError("device must be 'cuda' or 'vulkan' (got %r)" % (device,))
    return device


def _need(name):
    if not _lib.has(name):
        raise errors.UnsupportedError("this libte has no %s (device arrays need a newer libte)"
                                      % name)
    return getattr(L, name)


def _why_not(device):
    """None when the device can be used in this process, else the driver's message."""
    if device == "cuda":
        if _need("te_device_available")(kDLCUDA):
            return None
        return (L.te_device_last_error() or b"").decode("utf-8", "replace")
    if _need("te_rt_vk_init")() == 0:
        return None
    return (L.te_rt_last_error() or b"").decode("utf-8", "replace")


def available(device):
    """True when arrays and kernels of this device ("cuda", "vulkan") can be used here."""
    return _why_not(_kind(device)) is None


def _require(device):
    why = _why_not(device)
    if why is not None:
        raise errors.KernelError("te.device: no %s device: %s" % (device, why))


_CUDA0 = _lib.DLDevice(kDLCUDA, 0)
_CPU = _lib.DLDevice(kDLCPU, 0)


def _check_cuda(status, what):
    if status != 0:
        msg = (L.te_device_last_error() or b"").decode("utf-8", "replace")
        raise errors.error_for(status, "%s: %s" % (what, msg))


# DLPack export: the capsule's DLManagedTensor keeps the array alive until its consumer calls
# the deleter (or the capsule dies unused), as the DLPack protocol asks.
_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_exported = {}


@_DELETER
def _managed_deleter(address):
    _exported.pop(address, None)


# The capsule's destructor gets the dying capsule's address: raw pointers, not py_object (a
# py_object argument would take a reference to an object being freed).
_CAPSULE_DTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p,
                                   ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


@_CAPSULE_DTOR
def _capsule_dtor(capsule):
    # an unconsumed capsule owns its tensor: release it (a consumer renames it "used_dltensor")
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        _exported.pop(_PyCapsule_GetPointer(capsule, b"dltensor"), None)


class DeviceArray:
    """A compact array in a device's memory (see the module's documentation)."""

    __slots__ = ("device", "shape", "dtype", "nbytes", "_ptr", "_buf", "_shape_arr",
                 "__weakref__")

    def __init__(self, shape, dtype="float32", device="cuda"):
        self.device = _kind(device)
        self.shape = tuple(int(n) for n in shape)
        if any(n < 0 for n in self.shape):
            raise errors.ShapeError("te.device: negative extent in shape %s" % (self.shape,))
        self.dtype = te_dtype(dtype)
        count = 1
        for n in self.shape:
            count *= n
        self.nbytes = count * max(self.dtype.bits // 8, 1)
        self._ptr = self._buf = None
        self._shape_arr = (ctypes.c_int64 * max(len(self.shape), 1))(*self.shape)
        _require(self.device)
        out = ctypes.c_void_p()
        if self.device == "cuda":
            _check_cuda(L.te_device_alloc(_CUDA0, max(self.nbytes, 1), ctypes.byref(out)),
                        "te_device_alloc")
            self._ptr = out.value
        else:
            st = L.te_rt_vk_buffer_new(self.nbytes, ctypes.byref(out))
            if st != 0:
                raise errors.error_for(st, "te_rt_vk_buffer_new: %s" % (
                    (L.te_rt_last_error() or b"").decode("utf-8", "replace")))
            self._buf = out.value
            self._ptr = L.te_rt_vk_buffer_data(self._buf)

    # ------------------------------------------------------------------------ memory
    def free(self):
        """Releases the memory now (also done when the array is collected)."""
        if self.device == "cuda" and self._ptr:
            L.te_device_free(_CUDA0, self._ptr)
        elif self._buf:
            L.te_rt_vk_buffer_free(self._buf)
        self._ptr = self._buf = None

    def __del__(self):
        try:
            self.free()
        except Exception:   # interpreter shutdown: the library may be gone
            pass

    def _live(self):
        if not self._ptr:
            raise errors.InvalidArgError("te.device: the array was freed")
        return self._ptr

    def _host_view(self, obj):
        np = _numpy()
        a = np.ascontiguousarray(obj, dtype=numpy_dtype(str(self.dtype)))
        if a.shape != self.shape:
            raise errors.ShapeError("te.device: array of shape %s copied into a device array "
                                    "of shape %s" % (a.shape, self.shape))
        return a

    def copyfrom(self, obj):
        """Copies a host array (numpy or anything numpy converts) of the same shape in."""
        a = self._host_view(obj)
        if self.device == "cuda":
            _check_cuda(L.te_device_copy(self._live(), _CUDA0, a.ctypes.data, _CPU,
                                         self.nbytes), "te_device_copy")
        else:
            ctypes.memmove(self._live(), a.ctypes.data, self.nbytes)
        return self

    def numpy(self):
        """A host copy (numpy.ndarray)."""
        np = _numpy()
        out = np.empty(self.shape, dtype=numpy_dtype(str(self.dtype)))
        if self.device == "cuda":
            _check_cuda(L.te_device_sync(_CUDA0), "te_device_sync")
            _check_cuda(L.te_device_copy(out.ctypes.data, _CPU, self._live(), _CUDA0,
                                         self.nbytes), "te_device_copy")
        else:
            ctypes.memmove(out.ctypes.data, self._live(), self.nbytes)
        return out

    asnumpy = numpy

    # ------------------------------------------------------------------------ DLPack
    def _dltensor(self, device_type, data):
        dl = _lib.DLTensor()
        dl.data = data
        dl.device = _lib.DLDevice(device_type, 0)
        dl.ndim = len(self.shape)
        d = self.dtype
        dl.dtype = _lib.DLDataType(6 if d.code == 1 and d.bits == 1 else d.code,
                                   8 if d.bits == 1 else d.bits, 1)
        dl.shape = ctypes.cast(self._shape_arr, ctypes.POINTER(ctypes.c_int64))
        dl.byte_offset = 0
        return dl

    def __dlpack_device__(self):
        return (_KINDS[self.device], 0)

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of the CUDA memory (legacy, unversioned DLManagedTensor). Work te
        launched is synchronized first; stream is accepted and otherwise ignored."""
        if self.device != "cuda":
            raise BufferError("te.device: a Vulkan array has no DLPack form other libraries "
                              "can read (use .numpy())")
        if copy:
            raise BufferError("te.device: __dlpack__(copy=True) is not supported")
        _check_cuda(L.te_device_sync(_CUDA0), "te_device_sync")
        managed = _lib.DLManagedTensor()
        managed.dl_tensor = self._dltensor(kDLCUDA, self._live())
        managed.deleter = ctypes.cast(_managed_deleter, ctypes.c_void_p).value
        address = ctypes.addressof(managed)
        _exported[address] = (managed, self)      # alive until the deleter runs
        return _PyCapsule_New(address, b"dltensor", ctypes.cast(_capsule_dtor, ctypes.c_void_p))

    def torch(self):
        """A torch CUDA tensor sharing this memory (torch.from_dlpack); te.UnsupportedError
        when torch is missing or has no CUDA device, te.InvalidArgError for a Vulkan array."""
        if self.device != "cuda":
            raise errors.InvalidArgError("te.device: a Vulkan array cannot become a torch "
                                         "tensor (torch has no Vulkan memory): use .numpy()")
        try:
            import torch
        except ImportError:
            raise errors.UnsupportedError("te.device: torch is not installed") from None
        if not torch.cuda.is_available():
            raise errors.UnsupportedError("te.device: torch has no CUDA device here, so it "
                                          "cannot hold te's CUDA memory")
        return torch.from_dlpack(self)

    def held_for(self, target_kind):
        """The DLTensor te_module_call takes for a kernel of target_kind ("cuda", "vulkan",
        "llvm"), keeping this array alive; te.InvalidArgError when the kernel cannot read it."""
        if self.device == "cuda" and target_kind == "cuda":
            return Held(self._dltensor(kDLCUDA, self._live()), [self._shape_arr], self)
        if self.device == "vulkan" and target_kind == "vulkan":
            # the launcher takes host tensors: the buffer's mapping is one (see the module doc)
            return Held(self._dltensor(kDLCPU, self._live()), [self._shape_arr], self)
        raise errors.InvalidArgError(
            "te.device: a %s array cannot be passed to a kernel built for '%s' (copy it with "
            ".numpy() or te.device.array(x, device))" % (self.device, target_kind))

    def __repr__(self):
        return "<te.DeviceArray %s %s on %s>" % (self.shape, self.dtype, self.device)


def _numpy():
    try:
        import numpy
    except ImportError:
        raise errors.UnsupportedError("te.device: copies to and from the host need numpy") \
            from None
    return numpy


def empty(shape, dtype="float32", device="cuda"):
    """An uninitialized DeviceArray."""
    return DeviceArray(shape, dtype, device)


def array(obj, device="cuda", dtype=None):
    """A DeviceArray holding a copy of a host array (numpy, or anything numpy converts; a
    DeviceArray is copied through the host)."""
    if isinstance(obj, DeviceArray):
        obj = obj.numpy()
    np = _numpy()
    a = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=numpy_dtype(str(
        te_dtype(dtype))))
    return DeviceArray(a.shape, str(a.dtype) if dtype is None else dtype, device).copyfrom(a)


def target_kind(target_spec):
    """"cuda", "vulkan" or "llvm" for a target string."""
    word = str(target_spec).split()[0] if str(target_spec).split() else "llvm"
    return "cuda" if word in ("cuda", "nvptx") else "vulkan" if word == "vulkan" else "llvm"


def as_kernel_arg(value, target_kind_):
    """The Held DLTensor for one tensor argument of a kernel of target_kind_."""
    if isinstance(value, DeviceArray):
        return value.held_for(target_kind_)
    return as_dltensor(value)
