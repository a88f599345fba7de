"""A compiled graph for one shape signature: te kernels and PyTorch calls over slots.

Slot i holds a value at run time: the graph's inputs first, then one slot per kernel output and
per PyTorch call. A kernel is called through te_module_call with DLTensor headers made once
(the shapes are fixed for a plan); a call only writes the data pointers, so calling a kernel
costs a few microseconds of Python. Kernel outputs are fresh torch tensors.
"""
import ctypes
import os

import torch

from .. import _lib
from .. import errors

L = _lib.lib
_DL = {"float32": (2, 32), "int64": (0, 64)}     # DLPack's (code, bits)
_POISON = os.environ.get("TE_DEBUG_POISON_OUTPUTS", "0") not in ("", "0")


def _header(shape, dtype_code, bits):
    dl = _lib.DLTensor()
    n = len(shape)
    arr = (ctypes.c_int64 * max(n, 1))(*shape)
    dl.device = _lib.DLDevice(1, 0)
    dl.ndim = n
    dl.dtype = _lib.DLDataType(dtype_code, bits, 1)
    dl.shape = ctypes.cast(arr, ctypes.POINTER(ctypes.c_int64))
    dl.byte_offset = 0
    return dl, arr


class KernelStep:
    """One te kernel: reads slots ``ins``, writes a new tensor of ``shape`` into slot ``out``.
    A memo step (a copy of graph inputs only, such as a transposed weight) is run again only
    when one of its inputs changed (another tensor, or the same one written in place)."""

    def __init__(self, mod, ins, out, shape, in_shapes, in_dtypes, memo, tuned, kind, root):
        self.mod, self.ins, self.out, self.shape = mod, ins, out, tuple(shape)
        self.root = root        # the kernel's output tensor: its workload for te.tune
        self.memo, self.tuned, self.kind = memo, tuned, kind
        self.name = _lib.encode(mod.name)
        self.headers, keep = [], []
        for s, d in zip(list(in_shapes) + [shape], list(in_dtypes) + ["float32"]):
            dl, arr = _header(s, *_DL[d])
            self.headers.append(dl)
            keep.append(arr)
        self._keep = keep
        self.n = len(self.headers)
        self.tarr = (ctypes.c_void_p * self.n)(*[ctypes.addressof(h) for h in self.headers])
        self.last_key, self.last_out = None, None

    def run(self, slots, ctx):
        tens = []
        for k, i in enumerate(self.ins):
            t = slots[i]
            if not t.is_contiguous():
                t = t.contiguous()
            tens.append(t)
        if self.memo:
            key = tuple((t.data_ptr(), t._version) for t in tens)
            if key == self.last_key:
                slots[self.out] = self.last_out
                return
        out = torch.empty(self.shape, dtype=torch.float32)
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

    def run(self, slots, ctx):
        slots[self.out] = self.fn(*_subst(self.args, slots), **_subst(self.kwargs, slots))


def _subst(x, slots):
    from .lower import _SlotArg
    if isinstance(x, _SlotArg):
        return slots[x.slot]
    if isinstance(x, (list, tuple)):
        return type(x)(_subst(y, slots) for y in x)
    if isinstance(x, dict):
        return {k: _subst(v, slots) for k, v in x.items()}
    return x


class Plan:
    """The steps of one compiled graph (see the module's documentation)."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.steps, self.fallbacks = [], []
        self.n_slots, self.n_inputs = 0, 0
        self.outputs = None

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
        for step in self.steps:
            step.run(slots, self.ctx)
        from .lower import _SlotArg

        def out(x):
            if isinstance(x, _SlotArg):
                return slots[x.slot]
            if isinstance(x, (list, tuple)):
                return type(x)(out(y) for y in x)
            return x
        return out(self.outputs)
