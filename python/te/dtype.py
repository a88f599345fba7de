"""Data types: te's dtypes are DLPack's (code, bits, lanes).

In Python a dtype is a ``te.DType``: a ``str`` holding numpy's name ("float32", "int64",
"bool", ...), so it compares equal to that string and converts to a numpy dtype with
``numpy.dtype(d)``. Wherever a dtype is expected, these are accepted: a DType, numpy's names
("float32"), te's short names ("f32", "i64", "u8", "bool"), numpy dtypes and scalar types
(``numpy.float32``), and Python's ``float`` (float64), ``int`` (int64) and ``bool``.

Low precision: "float16" (numpy.float16 arrays) and "bfloat16", whose arrays are ml_dtypes'
(``ml_dtypes.bfloat16``, from PyPI; numpy has no bfloat16). ``expr.astype("bfloat16")`` casts.
"""
import ctypes
import math

from . import _lib
from . import errors

kDLInt, kDLUInt, kDLFloat, kDLBfloat, kDLBool = 0, 1, 2, 4, 6

_BY_NAME = {}     # every accepted spelling -> (code, bits)
_CANON = {}       # (code, bits) -> numpy-style name
for _code, _pfx, _npfx, _sizes in ((kDLInt, "i", "int", (8, 16, 32, 64)),
                                   (kDLUInt, "u", "uint", (8, 16, 32, 64)),
                                   (kDLFloat, "f", "float", (16, 32, 64))):
    for _b in _sizes:
        _CANON[(_code, _b)] = "%s%d" % (_npfx, _b)
        _BY_NAME["%s%d" % (_npfx, _b)] = _BY_NAME["%s%d" % (_pfx, _b)] = (_code, _b)
_CANON[(kDLUInt, 1)] = "bool"
_CANON[(kDLBfloat, 16)] = "bfloat16"
_BY_NAME.update({"bool": (kDLUInt, 1), "bfloat16": (kDLBfloat, 16), "bf16": (kDLBfloat, 16),
                 "float": (kDLFloat, 64), "int": (kDLInt, 64), "double": (kDLFloat, 64)})


class DType(str):
    """A te dtype: a str with numpy's name, plus ``code``, ``bits``, ``lanes`` (DLPack) and
    ``short`` (te's name in IR text: "f32")."""

    def __new__(cls, code, bits, lanes=1):
        name = _CANON.get((code, bits), "dl(%d,%d)" % (code, bits))
        if lanes != 1:
            name += "x%d" % lanes
        self = str.__new__(cls, name)
        self.code, self.bits, self.lanes = code, bits, lanes
        return self

    @property
    def short(self):
        buf = ctypes.create_string_buffer(32)
        return _lib.lib.te_dtype_str(self.c, buf, 32).decode()

    @property
    def c(self):
        """The DLDataType struct."""
        return _lib.DLDataType(self.code, self.bits, self.lanes)

    @property
    def is_float(self):
        return self.code in (kDLFloat, kDLBfloat)

    @property
    def is_int(self):
        return self.code == kDLInt

    @property
    def is_uint(self):
        return self.code == kDLUInt and self.bits != 1

    @property
    def is_bool(self):
        return self.code == kDLUInt and self.bits == 1

    @property
    def itemsize(self):
        """Bytes per element in memory (a bool is one byte)."""
        return max(1, (self.bits * self.lanes + 7) // 8)

    def __repr__(self):
        return "te.DType(%r)" % str(self)

    def __reduce__(self):
        return (DType, (self.code, self.bits, self.lanes))


def from_c(dl):
    return DType(dl.code, dl.bits, dl.lanes)


def dtype(x):
    """Converts any accepted spelling of a dtype to a DType (InvalidArgError otherwise)."""
    if isinstance(x, DType):
        return x
    if x is float:
        return DType(kDLFloat, 64)
    if x is bool:
        return DType(kDLUInt, 1)
    if x is int:
        return DType(kDLInt, 64)
    if isinstance(x, _lib.DLDataType):
        return from_c(x)
    name = None
    if isinstance(x, str):
        name = x
    else:
        # numpy dtypes and scalar types, without importing numpy
        try:
            import numpy
            name = numpy.dtype(x).name
        except Exception:
            name = None
    if name is not None:
        key = name.strip().lower()
        lanes = 1
        if "x" in key and key.rsplit("x", 1)[1].isdigit() and key.rsplit("x", 1)[0] in _BY_NAME:
            key, lanes = key.rsplit("x", 1)[0], int(key.rsplit("x", 1)[1])
        if key in _BY_NAME:
            code, bits = _BY_NAME[key]
            return DType(code, bits, lanes)
    raise errors.InvalidArgError("not a te dtype: %r (use e.g. 'float32', 'int64', 'bool')" % (x,))


float16 = DType(kDLFloat, 16)
bfloat16 = DType(kDLBfloat, 16)
float32 = DType(kDLFloat, 32)
float64 = DType(kDLFloat, 64)
int8 = DType(kDLInt, 8)
int16 = DType(kDLInt, 16)
int32 = DType(kDLInt, 32)
int64 = DType(kDLInt, 64)
uint8 = DType(kDLUInt, 8)
uint16 = DType(kDLUInt, 16)
uint32 = DType(kDLUInt, 32)
uint64 = DType(kDLUInt, 64)
bool_ = DType(kDLUInt, 1)


def numpy_dtype(x):
    """The numpy dtype for te dtype x: numpy's own, or ml_dtypes.bfloat16 for "bfloat16"
    (te.UnsupportedError naming the package when ml_dtypes is not installed)."""
    import numpy
    d = dtype(x)
    if d.code == kDLBfloat and d.bits == 16:
        try:
            import ml_dtypes
        except ImportError:
            raise errors.UnsupportedError("bfloat16 arrays need the ml_dtypes package "
                                          "(pip install ml_dtypes)") from None
        return numpy.dtype(ml_dtypes.bfloat16)
    return numpy.dtype(str(d))


def half_bits(x, value):
    """The 16-bit pattern of value rounded to f16 or bf16 dtype x (to nearest, ties to even;
    overflow to inf; NaN to the quiet NaN of its sign): how a scalar of that dtype is passed."""
    d = dtype(x)
    mant, bias = (7, 127) if d.code == kDLBfloat else (10, 15)
    top = (1 << (15 - mant)) - 1                   # the all-ones exponent
    sign = 0x8000 if math.copysign(1.0, value) < 0 else 0
    if math.isnan(value):
        return sign | (top << mant) | (1 << (mant - 1))
    a = abs(value)
    emin = 1 - bias
    largest = (2.0 - 2.0 ** -mant) * 2.0 ** bias
    if math.isinf(a) or a >= largest + 2.0 ** (bias - mant - 1):
        return sign | (top << mant)
    e = max(math.frexp(a)[1] - 1, emin) if a else emin
    q = 2.0 ** (e - mant)
    r = round(a / q) * q                           # Python's round: ties to even
    if r < 2.0 ** emin:                            # subnormal (or zero)
        return sign | int(r / 2.0 ** (emin - mant))
    e = math.frexp(r)[1] - 1
    return sign | ((e + bias) << mant) | (int(r / 2.0 ** (e - mant)) - (1 << mant))
