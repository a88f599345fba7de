"""te: tensor expressions and schedules compiled to native kernels, from Python.

A thin ctypes layer over libte's C API (include/te/*.h): every function here calls the C
function of the same meaning, and every error te reports is raised as a te.Error subclass
carrying te's message.

    import numpy as np, te
    n = te.var("n")
    A = te.placeholder((n, 64), name="A")
    B = te.compute((n, 64), lambda i, j: A[i, j] * 2, name="B")
    s = te.create_schedule(B)
    xo, xi = s[B].split(B.op.axis[1], factor=16)
    s[B].vectorize(xi)
    f = te.build(s, [A, B], target="llvm", name="double")
    b = f(np.ones((10, 64), np.float32))      # output allocated and returned

See apps/python_tutorial.py for a tour.
"""
from . import _lib
from .errors import *  # noqa: F401,F403  (Error and one class per te_status)
from .errors import Error
from .context import Context, current_context, reset_default_context
from .dtype import (DType, dtype, float16, bfloat16, float32, float64, int8, int16, int32, int64,
                    uint8, uint16, uint32, uint64, bool_)
from .expr import (Expr, Reduction, CommReducer, const, var, size_var, param, select,
                   if_then_else, cast, call, exp, exp2, log, log2, log10, sqrt, rsqrt, sin, cos,
                   tan, tanh, sigmoid, erf, floor, ceil, round, trunc, abs, power, pow, fma, eq,
                   ne, logical_and, logical_or, logical_not, all, any, sum, prod, max, min,
                   reduce_axis, comm_reducer, bitwise_and, bitwise_or, bitwise_xor, bitwise_not,
                   shift_left, shift_right, shift_right_logical, rounding_shift_right,
                   saturating_cast)
from .tensor import Tensor, AxisRef, placeholder, compute, scan, extern
from .schedule import Schedule, Stage, Iter, create_schedule, thread_axis
from .build import (Target, Module, target, lower, build, save_modules, set_num_threads,
                    num_threads)
from . import ops
from . import device
from .device import DeviceArray
from .parse import (parse, workload_text, workload_inputs, workload_hash, workload_key,
                    HAS_PARSE)

__version__ = "0.1.0"
library_path = _lib.path

try:   # autotuning, when this libte has it (include/te/tune.h)
    from .tune import *  # noqa: F401,F403
except ImportError:
    pass
