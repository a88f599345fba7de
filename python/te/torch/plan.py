"""A compiled graph: te kernels and PyTorch calls over slots.

Slot i holds a value at run time: the graph's inputs first, then one slot per kernel output and
per PyTorch call. A kernel is called through te_module_call with DLTensor headers made once; a
call writes the data pointers and, in a symbolic plan, the extents (the inputs' own, the
output's computed from the symbols' values of this call, ``env``), so calling a kernel costs a
few microseconds of Python. Kernel outputs are fresh torch tensors.
"""
import ctypes
import os

import torch

from .. import _lib
from .. import errors

L = _lib.lib
_DL = {"float32": (2, 32), "int64": (0, 64)}     # DLPack's (code, bits)
_POISON = os.environ.get("TE_DEBUG_POISON_OUTPUTS", "0") not in ("", "0")
_CARRIER = ctypes.c_float(0.0)     # the data of a size carrier: an argument te never reads


def _header(shape, dtype_code, bits):
    dl = _lib.DLTensor()
    n = len(shape)
    arr = (ctypes.c_int64 * max(n, 1))(*[d if isinstance(d, int) else 1 for d in shape])
    dl.device = _lib.DLDevice(1, 0)
    dl.ndim = n
    dl.dtype = _lib.DLDataType(dtype_code, bits, 1)
    dl.shape = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    return dl, arr


class KernelStep:
    """One te kernel: reads slots ``ins``, writes a new tensor into slot ``out``, of the shape
    ``out_shape`` gives (a function of env per dimension: symbolic.evaluator). ``carriers``:
    symbols the kernel binds from arguments of their own, one extent each (lower.materialize).
    A memo step (a copy of graph inputs only, such as a transposed weight) is run again only
    when one of its inputs changed (another tensor, or the same one written in place)."""

    def __init__(self, mod, ins, out, out_shape, in_shapes, in_dtypes, memo, tuned, kind, root,
                 carriers=(), views=None):
        self.mod, self.ins, self.out = mod, ins, out
        # per input: None, or the shape (functions of env) its tensor is viewed in (a reshape)
        self.views = list(views or [None] * len(ins))
        self.out_shape = list(out_shape)
        # the output's shape when it is the same for every call, else None (symbolic)
        self.shape = None if self._needs_env(out_shape) else tuple(f({}) for f in out_shape)
        self.symbolic = self.shape is None or bool(carriers) or \
            any(not isinstance(d, int) for s in in_shapes for d in s)
        self.carriers = list(carriers)
        self.root = root        # the kernel's output tensor: its workload for te.tune
        self.memo, self.tuned, self.kind = memo, tuned, kind
        self.name = _lib.encode(mod.name)
        self.headers, keep = [], []
        shapes = list(in_shapes) + [(1,)] * len(self.carriers) + [self.shape or out_shape]
        dtypes = list(in_dtypes) + ["float32"] * len(self.carriers) + ["float32"]
        for s, d in zip(shapes, dtypes):
            dl, arr = _header(s, *_DL[d])
            self.headers.append(dl)
            keep.append(arr)
        self._keep = keep
        self.n = len(self.headers)
        self.nin = len(ins)
        for h in self.headers[self.nin:self.nin + len(self.carriers)]:
            h.data = ctypes.addressof(_CARRIER)
        self.tarr = (ctypes.c_void_p * self.n)(*[ctypes.addressof(h) for h in self.headers])
        self.last_key, self.last_out = None, None

    @staticmethod
    def _needs_env(fns):
        try:
            for f in fns:
                f({})
        except KeyError:
            return True
        return False

    def run(self, slots, env):
        tens = []
        for k, i in enumerate(self.ins):
            t = slots[i]
            if not t.is_contiguous():
                t = t.contiguous()
            view = self.views[k]
            if view is not None:
                t = t.view(tuple(f(env) for f in view))
            tens.append(t)
        shape = self.shape or tuple(f(env) for f in self.out_shape)
        if self.memo:
            # the same inputs, unchanged, and (symbolic plans) the same extents: a weight
            # broadcast to a symbolic batch is made again for another batch size
            key = tuple((t.data_ptr(), t._version) for t in tens) + (shape,)
            if key == self.last_key:
                slots[self.out] = self.last_out
                return
        if self.symbolic:
            for k, t in enumerate(tens):
                arr = self._keep[k]
                for d, ext in enumerate(t.shape):
                    arr[d] = ext
            for k, sym in enumerate(self.carriers):
                self._keep[self.nin + k][0] = env[sym]
            arr = self._keep[-1]
            for d, ext in enumerate(shape):
                arr[d] = ext
        out = torch.empty(shape, dtype=torch.float32)
        if _POISON:
            out.fill_(float("nan"))
        for h, t in zip(self.headers, tens):
            h.data = t.data_ptr()
        self.headers[-1].data = out.data_ptr()
        st = L.te_module_call(self.mod._p, self.name, self.n, self.tarr, 0, None)
        if st:
            errors.check(self.mod.ctx, st, "te_module_call")
        if self.memo:
            self.last_key, self.last_out = key, out
        slots[self.out] = out


class TorchStep:
    """One node run by PyTorch (a fallback): fn(*args, **kwargs) with slots substituted."""

    def __init__(self, fn, args, kwargs, out):
        self.fn, self.args, self.kwargs, self.out = fn, args, kwargs, out

    def run(self, slots, env):
        slots[self.out] = self.fn(*_subst(self.args, slots, env),
                                  **_subst(self.kwargs, slots, env))


def _subst(x, slots, env):
    from .lower import _SlotArg, _SymArg
    if isinstance(x, _SlotArg):
        return slots[x.slot]
    if isinstance(x, _SymArg):
        return x.fn(env)
    if isinstance(x, (list, tuple)):
        return type(x)(_subst(y, slots, env) for y in x)
    if isinstance(x, dict):
        return {k: _subst(v, slots, env) for k, v in x.items()}
    return x


class Plan:
    """The steps of one compiled graph (see the module's documentation)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.steps, self.fallbacks = [], []
        self.n_slots, self.n_inputs = 0, 0
        self.outputs = None
        self.sym_sources = []       # (symbol, input index, dimension or None for a SymInt)

    def new_slot(self):
        self.n_slots += 1
        return self.n_slots - 1

    @property
    def kernels(self):
        return [s for s in self.steps if isinstance(s, KernelStep)]

    def run(self, args):
        slots = [None] * self.n_slots
        for i, a in enumerate(args):
            slots[i] = a.detach() if isinstance(a, torch.Tensor) and a.requires_grad else a
        env = {sym: (int(args[i]) if d is None else args[i].shape[d])
               for sym, i, d in self.sym_sources}
        for step in self.steps:
            step.run(slots, env)
        return _subst(self.outputs, slots, env)
