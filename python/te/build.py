"""Targets, lowering, compiling, and calling kernels on arrays.

    f = te.build(s, [A, B, C], target="llvm -mcpu=native", name="matmul")
    f(a, b, c)          # numpy arrays (or anything with __dlpack__), c written in place
    c = f(a, b)         # outputs left out are allocated (numpy) and returned

The argument list gives the kernel's parameters in order: tensors (inputs and outputs) and
scalar parameters (te.var / te.param expressions), which te passes after the tensors. Symbolic
sizes are not parameters: the kernel reads them from the arrays and checks every extent.
"""
import ast
import ctypes
import operator
import os
import re

from . import _lib
from . import errors
from .context import pick
from .expr import Expr
from .schedule import Schedule
from .tensor import Tensor
from .dlpack import as_dltensor
from . import device as _device
from .dtype import dtype as te_dtype, half_bits, numpy_dtype

L = _lib.lib

SAVE_FLAGS = {"object": 1, "static_lib": 2, "header": 4, "llvm_ir": 8, "asm": 16, "ptx": 32,
              "spirv": 64}
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

# Symbols that JIT-compiled kernels may call (lib/codegen/llvm_jit.c binds them by name). A
# kernel with one of these names makes this version of libte crash in te_build (a double
# dispose on the JIT's error path), so the bindings refuse them before calling C.
_MATH = ("exp exp2 exp10 log log2 log10 sin cos sincos tan tanh erf pow fma sqrt fabs floor ceil "
         "round trunc rint nearbyint fmin fmax fmod ldexp").split()
RESERVED_NAMES = frozenset(_MATH + [m + "f" for m in _MATH] + ["memcpy", "memmove", "memset"])


def _check_kernel_name(name, default):
    if name in RESERVED_NAMES or name.startswith("te_rt_"):
        if default:
            return name + "_kernel"
        raise errors.InvalidArgError(
            "te.build: kernel name '%s' is the name of a function kernels call; choose another"
            % name)
    return name


class Target:
    """A compilation target (te_target), e.g. "llvm", "llvm -mcpu=native",
    "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v2". str() is the canonical form with the
    CPU and features resolved."""

    __slots__ = ("ctx", "_p", "spec")

    def __init__(self, spec="llvm", ctx=None):
        c = pick(ctx)
        self.ctx, self.spec = c, spec
        self._p = errors.check_ptr(c, L.te_target_parse(c._ptr, _lib.encode(spec)),
                                   "te_target_parse")

    def __str__(self):
        return L.te_target_str(self._p).decode()

    @property
    def short(self):
        """The target as people read it ("llvm -mcpu=znver5"; te_target_short_str): for
        messages, not a key (logs and saved libraries record str())."""
        if not _lib.has("te_target_short_str"):
            raise errors.UnsupportedError("this libte has no te_target_short_str")
        return L.te_target_short_str(self._p).decode()

    @property
    def vector_bits(self):
        """The vector register width in bits (512 with AVX-512, 256 with AVX2, else 128): the
        natural te_vectorize width is this / the element's bits."""
        if not _lib.has("te_target_vector_bits"):
            raise errors.UnsupportedError("this libte has no te_target_vector_bits")
        return L.te_target_vector_bits(self._p)

    def lanes(self, dtype):
        """The natural number of vector lanes for dtype on this target (vector_bits / bits)."""
        from .dtype import dtype as _dt
        return max(1, self.vector_bits // _dt(dtype).bits)

    def __repr__(self):
        return "<te.Target %s>" % self


def target(spec="llvm", ctx=None):
    return Target(spec, ctx)


def _split_args(args):
    if isinstance(args, (Tensor, Expr)):
        args = [args]
    tensors, scalars = [], []
    for a in args:
        if isinstance(a, Tensor):
            tensors.append(a)
        elif isinstance(a, Expr):
            scalars.append(a)
        else:
            raise errors.InvalidArgError("kernel arguments must be te.Tensor or scalar te.Expr "
                                         "(te.var / te.param), got %s" % type(a).__name__)
    return list(args), tensors, scalars


def _target_in(ctx, t):
    if isinstance(t, Target):
        return t
    return Target(t or "llvm", ctx)


def lower(s, args, simple_mode=True):
    """The loop IR of schedule s after te's lowering pipeline, as text (te_lower_text). args
    as for te.build. simple_mode is accepted for TVM compatibility (te always gives text)."""
    if not isinstance(s, Schedule):
        raise errors.InvalidArgError("te.lower: expected a te.Schedule, got %s" % type(s).__name__)
    _, tensors, scalars = _split_args(args)
    p = L.te_lower_text(s._p, len(tensors), _lib.ptr_array([t._p for t in tensors]),
                        len(scalars), _lib.ptr_array([e.handle for e in scalars]))
    if not p:
        errors.raise_last(s.ctx, "te_lower_text")
    return _lib.take_string(p)


def build(s, args, target="llvm", name=None):
    """Compiles schedule s into a Module with one kernel called name (a C identifier; default:
    the first output's name when it is one, else "kernel")."""
    if not isinstance(s, Schedule):
        raise errors.InvalidArgError("te.build: expected a te.Schedule, got %s" % type(s).__name__)
    order, tensors, scalars = _split_args(args)
    if name is None:
        name = s.outputs[0].name if _IDENT.match(s.outputs[0].name) else "kernel"
        name = _check_kernel_name(name, True)
    else:
        name = _check_kernel_name(str(name), False)
    tgt = _target_in(s.ctx, target)
    out = ctypes.c_void_p()
    errors.check(s.ctx, L.te_build(s._p, _lib.encode(name), len(tensors),
                                   _lib.ptr_array([t._p for t in tensors]), len(scalars),
                                   _lib.ptr_array([e.handle for e in scalars]), tgt._p,
                                   ctypes.byref(out)), "te_build")
    outputs = set()
    for t in s.outputs:
        outputs.add(t._p)
    return Module(s.ctx, out.value, name, order, outputs, tgt)


class Module:
    """A compiled kernel (te_module). Call it with arrays: ``f(a, b, c)``; see te.build."""

    __slots__ = ("ctx", "_p", "name", "args", "_outputs", "target")

    def __init__(self, ctx, p, name, args, outputs, tgt):
        self.ctx, self._p, self.name, self.args = ctx, p, name, list(args)
        self._outputs, self.target = outputs, tgt

    @property
    def handle(self):
        return self._p

    def __getitem__(self, name):
        if name != self.name:
            raise errors.NotFoundError("module has no kernel '%s' (it has '%s')"
                                       % (name, self.name))
        return self

    def get_source(self, kind="ll"):
        """The module's code as text: "ll" (optimized LLVM IR) or "asm"."""
        p = L.te_module_source(self._p, _lib.encode(kind))
        if p is None:
            errors.raise_last(self.ctx, "te_module_source")
        return p.decode("utf-8", "replace")

    source = get_source

    @property
    def entry(self):
        """The address of the kernel's C entry point (int32_t NAME(DLTensor *, ...))."""
        return errors.check_ptr(self.ctx, L.te_module_entry(self._p, _lib.encode(self.name)),
                                "te_module_entry")

    @property
    def build_times(self):
        """(lower_s, llvm_s, jit_s): seconds spent building."""
        t = L.te_module_build_times(self._p)
        return {"lower_s": t.lower_s, "llvm_s": t.llvm_s, "jit_s": t.jit_s}

    def save(self, path_prefix, what=("object", "static_lib", "header")):
        """Writes the kernel for programs that call it without te (te_module_save):
        what is a list of "object", "static_lib", "header", "llvm_ir", "asm" (or the flags
        as an int). path_prefix "dir/name" gives dir/name.o, dir/libname.a, dir/name.h, ..."""
        save_modules([self], path_prefix, what)

    export_library = save

    # -------------------------------------------------------------------------- calling
    def _is_output(self, a):
        return isinstance(a, Tensor) and a._p in self._outputs

    def __call__(self, *values):
        args = self.args
        if len(values) == len(args):
            full = list(values)
        else:
            fillable = [i for i, a in enumerate(args) if not self._is_output(a)]
            if len(values) != len(fillable):
                raise errors.InvalidArgError(
                    "kernel '%s' takes %d arguments (%s), or %d without its outputs; got %d"
                    % (self.name, len(args), ", ".join(_argname(a) for a in args),
                       len(fillable), len(values)))
            full = [None] * len(args)
            for i, v in zip(fillable, values):
                full[i] = v
            allocated = [i for i in range(len(args)) if full[i] is None]
            _allocate(self, full, allocated)
        held, scalars, keep = [], [], []
        kind = _device.target_kind(self.target.spec)
        for a, v in zip(args, full):
            if isinstance(a, Tensor):
                h = _device.as_kernel_arg(v, kind)
                if h.readonly and self._is_output(a):
                    raise errors.InvalidArgError("kernel '%s': output '%s' is a read-only array"
                                                 % (self.name, a.name))
                held.append(h)
            else:
                cval = _scalar(a, v, self.name)
                keep.append(cval)
                scalars.append(ctypes.cast(ctypes.pointer(cval), ctypes.c_void_p))
        tarr = (ctypes.c_void_p * max(len(held), 1))(
            *[ctypes.addressof(h.dl) for h in held])
        sarr = (ctypes.c_void_p * max(len(scalars), 1))(*[p.value for p in scalars])
        st = L.te_module_call(self._p, _lib.encode(self.name), len(held), tarr, len(scalars), sarr)
        errors.check(self.ctx, st, "te_module_call")
        del held, keep
        outs = [full[i] for i, a in enumerate(args) if self._is_output(a)]
        return outs[0] if len(outs) == 1 else tuple(outs)

    def __repr__(self):
        return "<te.Module %s(%s) for %s>" % (self.name, ", ".join(_argname(a) for a in self.args),
                                              self.target.spec)


def _argname(a):
    return a.name if isinstance(a, Tensor) else str(a)


_CTYPES = {("int", 8): ctypes.c_int8, ("int", 16): ctypes.c_int16, ("int", 32): ctypes.c_int32,
           ("int", 64): ctypes.c_int64, ("uint", 8): ctypes.c_uint8, ("uint", 16): ctypes.c_uint16,
           ("uint", 32): ctypes.c_uint32, ("uint", 64): ctypes.c_uint64,
           ("float", 32): ctypes.c_float, ("float", 64): ctypes.c_double}


def _scalar(param, value, kname):
    d = param.dtype
    if d.is_bool:
        return ctypes.c_uint8(1 if value else 0)
    kind = "float" if d.is_float else ("int" if d.is_int else "uint")
    ct = _CTYPES.get((kind, d.bits))
    if ct is None and not (kind == "float" and d.bits == 16):
        raise errors.UnsupportedError("kernel '%s': scalar %s of dtype %s cannot be passed"
                                      % (kname, param, d))
    if hasattr(value, "item"):
        value = value.item()
    if not isinstance(value, (int, float, bool)):
        raise errors.InvalidArgError("kernel '%s': scalar %s needs a number, got %s"
                                     % (kname, param, type(value).__name__))
    if kind != "float" and isinstance(value, float):
        if value != int(value):
            raise errors.DTypeError("kernel '%s': scalar %s is %s; got %r"
                                    % (kname, param, d, value))
        value = int(value)
    if kind == "float" and d.bits == 16:     # passed as its 16 bits (te/build.h)
        return ctypes.c_uint16(half_bits(d, float(value)))
    return ct(value)


# ----------------------------------------------------------------- allocating outputs

_BINOPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
           ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod}
_FUNCS = {"min": min, "max": max,
          "tdiv": lambda a, b: int(a / b) if b else 0,
          "tmod": lambda a, b: a - int(a / b) * b if b else 0,
          "select": lambda c, a, b: a if c else b}


def _eval_extent(text, env):
    """The value of a printed i64 extent (te's IR text is Python-like: + - * // %, min, max)."""
    def ev(n):
        if isinstance(n, ast.Expression):
            return ev(n.body)
        if isinstance(n, ast.Constant) and isinstance(n.value, int):
            return n.value
        if isinstance(n, ast.Name):
            if n.id not in env:
                raise KeyError(n.id)
            return env[n.id]
        if isinstance(n, ast.BinOp) and type(n.op) in _BINOPS:
            return _BINOPS[type(n.op)](ev(n.left), ev(n.right))
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, ast.USub):
            return -ev(n.operand)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _FUNCS:
            return _FUNCS[n.func.id](*[ev(a) for a in n.args])
        raise ValueError("unsupported extent expression")
    return ev(ast.parse(text, mode="eval"))


def _names(text):
    return {n.id for n in ast.walk(ast.parse(text, mode="eval")) if isinstance(n, ast.Name)
            and n.id not in _FUNCS}


def _solve_sizes(pending, env):
    """Binds symbolic sizes from the extents of the given arrays: a dimension "n" gives n, and a
    dimension affine in one unknown size ("h + 2", "2*w") is solved for it. The first binding
    of a name wins: inconsistent arrays are the kernel's to report (it checks every extent)."""
    progress = True
    while progress and pending:
        progress, rest = False, []
        for text, n in pending:
            try:
                unknown = _names(text) - set(env)
            except SyntaxError:
                continue
            if not unknown:
                continue
            if len(unknown) > 1:
                rest.append((text, n))
                continue
            x = unknown.pop()
            try:
                f = [_eval_extent(text, dict(env, **{x: v})) for v in (0, 1, 2)]
            except (ValueError, ZeroDivisionError):
                continue
            a = f[1] - f[0]
            if a != 0 and f[2] - f[1] == a and (n - f[0]) % a == 0:
                env[x] = (n - f[0]) // a
                progress = True
        pending = rest


def _torch_of(values):
    """The torch module when an input array is a torch tensor (outputs are then torch tensors
    too), else None. torch is not imported here unless a caller already passed its tensors."""
    for v in values:
        if v is not None and type(v).__module__.split(".")[0] == "torch":
            import torch
            if isinstance(v, torch.Tensor):
                return torch
    return None


def _device_of(values):
    """The device ("cuda", "vulkan") of the first te.device array among values, else None."""
    for v in values:
        if isinstance(v, _device.DeviceArray):
            return v.device
    return None


def _allocate(mod, full, missing):
    torch = _torch_of(full)
    dev = _device_of(full)
    try:
        import numpy
    except ImportError:
        if torch is None:
            raise errors.UnsupportedError("kernel '%s': allocating outputs needs numpy; pass "
                                          "them" % mod.name) from None
    env, pending = {}, []
    for a, v in zip(mod.args, full):
        if v is None or not isinstance(a, Tensor):
            continue
        shape = getattr(v, "shape", None)
        if shape is None:
            shape = as_dltensor(v).shape
        for d, n in zip(a.shape, shape):
            if isinstance(d, Expr):
                pending.append((str(d), int(n)))
    _solve_sizes(pending, env)
    for i in missing:
        t = mod.args[i]
        dims = []
        for d in t.shape:
            if isinstance(d, int):
                dims.append(d)
                continue
            try:
                dims.append(_eval_extent(str(d), env))
            except (KeyError, ValueError, SyntaxError, ZeroDivisionError):
                raise errors.ShapeError(
                    "kernel '%s': cannot infer extent '%s' of output '%s' from the inputs; pass "
                    "the output array" % (mod.name, d, t.name)) from None
        if dev is not None:   # device inputs: the outputs on that device too (poisoned alike)
            full[i] = _device.array(_new_output(numpy, dims, str(t.dtype)), dev)
        elif torch is not None:
            full[i] = _new_torch_output(torch, dims, str(t.dtype))
        else:
            full[i] = _new_output(numpy, dims, str(t.dtype))


def _new_output(numpy, dims, dtype):
    """An output array for the kernel to fill (numpy.empty: the kernel writes every element).

    With the environment variable TE_DEBUG_POISON_OUTPUTS=1 (the test suite sets it) the array
    starts as garbage instead: NaN for floats, 0x5A in every byte for integers and bools. Fresh
    numpy.empty memory is often the block the previous call's result was freed from, still
    holding that answer, so without the poison a kernel that writes nothing can pass a test."""
    a = numpy.empty(dims, dtype=numpy_dtype(dtype))
    if os.environ.get("TE_DEBUG_POISON_OUTPUTS", "0") not in ("", "0"):
        if te_dtype(dtype).is_float:
            a.fill(numpy.nan)
        else:
            a.reshape(-1).view(numpy.uint8).fill(0x5A)
    return a


def _new_torch_output(torch, dims, dtype):
    """As _new_output, a CPU torch tensor (for calls whose inputs were torch tensors)."""
    dt = getattr(torch, dtype if dtype != "bool" else "bool", None)
    if not isinstance(dt, torch.dtype):
        raise errors.UnsupportedError("cannot allocate a torch output of dtype %s" % dtype)
    a = torch.empty(dims, dtype=dt)
    if os.environ.get("TE_DEBUG_POISON_OUTPUTS", "0") not in ("", "0"):
        if a.is_floating_point():
            a.fill_(float("nan"))
        else:
            a.view(-1).view(torch.uint8).fill_(0x5A)
    return a


def save_modules(modules, path_prefix, what=("object", "static_lib", "header")):
    """Writes the kernels of several modules of one context into one set of files
    (te_modules_save; te_module_save for one)."""
    if not modules:
        raise errors.InvalidArgError("te.save_modules: no modules (nothing to save)")
    flags = what if isinstance(what, int) else 0
    if not isinstance(what, int):
        if isinstance(what, str):
            what = [what]
        for w in what:
            if w not in SAVE_FLAGS:
                raise errors.InvalidArgError("save: unknown output %r (one of %s)"
                                             % (w, ", ".join(SAVE_FLAGS)))
            flags |= SAVE_FLAGS[w]
    path_prefix = os.fspath(path_prefix)
    ctx = modules[0].ctx
    if len(modules) == 1 and _lib.has("te_module_save"):
        st = L.te_module_save(modules[0]._p, _lib.encode(path_prefix), flags)
    elif _lib.has("te_modules_save"):
        st = L.te_modules_save(ctx._ptr, len(modules), _lib.ptr_array([m._p for m in modules]),
                               _lib.encode(path_prefix), flags)
    else:
        raise errors.UnsupportedError("this libte has no te_module_save")
    errors.check(ctx, st, "te_module_save")


def set_num_threads(n):
    """The number of threads parallel loops use from now on (n <= 0: the default)."""
    L.te_set_num_threads(int(n))


def num_threads():
    return L.te_num_threads()
