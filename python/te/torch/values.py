"""Values of a graph being lowered to te: tensors known by how to load an element.

A ``Val`` is a tensor of the FX graph seen from te: its shape (ints, or in a symbolic plan
sympy expressions of Dynamo's size symbols: symbolic.py) and ``load(idx)``, the te expression
of its element at the index expressions idx. Element-wise and layout operators (add, relu, view, permute, ...) make new Vals whose
``load`` composes their inputs' loads, so a chain of them is inlined into whatever finally
computes it: no stage, no memory. Three things end a chain:

  - an input of a kernel: a te placeholder (``Val.placeholder``), for a graph input, a value a
    PyTorch fallback computed, or a value an earlier kernel materialized;
  - an anchor: a te compute with a reduction (matmul, conv2d, softmax, ...), ``anchor`` set; a
    matmul or conv2d anchor may be fused with the element-wise chain that consumes it (its
    epilogue, computed per tile of the kernel's output);
  - materialization (lower.py): the chain becomes the output of a kernel of its own, and its
    consumers read it through a placeholder.
"""
import te
from .symbolic import SymbolicUnsupported, free, hint, norm, same, tex, tex_shape


class Val:
    """A tensor of the lowered graph (see the module's documentation).

    shape   tuple of ints and (symbolic plans) sympy expressions
    load    function(tuple of index exprs) -> te expression of one element
    anchor  the anchor Val this value's load reads (itself for an anchor), or None
    cost    transcendental calls per element its load inlines (exp, tanh, erf, ...): a value
            with a cost is materialized before a reduction reads it many times
    tensor  the te tensor for a placeholder or an anchor (None for an inlined chain)
    kind    "input", "inline" or the anchor's kind ("matmul", "conv", "rows", "pool")
    slot    the runtime slot that holds it once materialized or given (None before)
    syms    the size symbols its load and shape use (a kernel binds each from its arrays)
    is_view a placeholder reading its slot's (compact) tensor reshaped to its own shape: a
            reshape of a value in memory costs no index arithmetic (plan.KernelStep views it)
    batch_of  for an expand of a 2-D value to (batch, rows, cols): that value (a bmm by a
            weight so broadcast is a matrix product by the weight, packed once)
    """

    __slots__ = ("shape", "load", "anchor", "cost", "tensor", "kind", "slot", "extra", "reads",
                 "strided", "syms", "batch_of", "is_view")

    def __init__(self, shape, load, kind="inline", anchor=None, cost=0, tensor=None, srcs=()):
        self.shape = tuple(norm(d) for d in shape)
        self.load, self.kind, self.anchor, self.cost = load, kind, anchor, cost
        self.tensor, self.slot, self.extra = tensor, None, None
        # the placeholders this value's load reaches ({id: Val}): a kernel's inputs
        self.reads = {}
        for v in srcs:
            self.reads.update(v.reads)
        # its last dimension is not the last of what it reads (a transpose): a matmul's B
        # operand that is strided this way is copied first, so that B is read along rows
        self.strided = any(v.strided for v in srcs)
        self.syms = free(*self.shape)
        self.batch_of = None    # a 2-D Val this one repeats along a leading batch dimension
        self.is_view = False    # a placeholder of a slot's tensor seen in another shape
        for v in srcs:
            self.syms |= v.syms

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def numel(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def materialized(self):
        return self.slot is not None

    @staticmethod
    def placeholder(shape, dtype, name, slot):
        t = te.placeholder(tex_shape(shape), dtype=dtype, name=name)
        v = Val(shape, lambda idx: t[tuple(idx)], kind="input", tensor=t)
        v.slot, v.extra = slot, str(dtype)
        v.reads = {id(v): v}
        return v

    @staticmethod
    def of_anchor(tensor, shape, kind, srcs):
        v = Val(shape, lambda idx: tensor[tuple(idx)], kind=kind, tensor=tensor, srcs=srcs)
        v.anchor, v.strided = v, False
        return v


def broadcast_load(v, out_shape):
    """v's load seen at the index of a tensor of out_shape it is broadcast to (NumPy rules)."""
    off = len(out_shape) - v.ndim
    ones = [v.shape[d] == 1 and out_shape[d + off] != 1 for d in range(v.ndim)]

    def load(idx):
        return v.load(tuple(0 if ones[d] else idx[d + off] for d in range(v.ndim)))
    return load


def broadcast_shape(*shapes):
    n = max(len(s) for s in shapes)
    out = []
    for d in range(n):
        ext = 1
        for s in shapes:
            k = d - (n - len(s))
            if k >= 0 and s[k] != 1:
                ext = s[k]
        out.append(ext)
    return tuple(out)


def reshape_index(in_shape, out_shape):
    """index of in_shape -> index of out_shape's element with the same row-major position, as
    a function of the out index: dimensions are matched in groups of equal products, so a
    split or a merge costs one multiply-add or one div/mod, and an unchanged dimension none."""
    ii = [d for d in range(len(in_shape)) if in_shape[d] != 1]   # size-1 dims index 0
    oo = [d for d in range(len(out_shape)) if out_shape[d] != 1]
    groups, a, b = [], 0, 0
    while a < len(ii):
        if b >= len(oo):
            raise SymbolicUnsupported("a reshape %s -> %s te cannot match" % (in_shape, out_shape))
        gi, gj = [ii[a]], [oo[b]]
        pi, pj = in_shape[ii[a]], out_shape[oo[b]]
        a, b = a + 1, b + 1
        # the products are equal overall, so this ends; with symbolic sizes the smaller side
        # is the one smaller at the plan's first sizes, and the groups must be equal for all
        while not same(pi, pj):
            hi, hj = hint(pi), hint(pj)
            if hi == hj or (hi < hj and a >= len(ii)) or (hi > hj and b >= len(oo)):
                raise SymbolicUnsupported("a reshape %s -> %s whose dimensions te cannot "
                                          "match for every size" % (in_shape, out_shape))
            if hi < hj:
                gi.append(ii[a])
                pi *= in_shape[ii[a]]
                a += 1
            else:
                gj.append(oo[b])
                pj *= out_shape[oo[b]]
                b += 1
        groups.append((gi, gj))
    ni = len(in_shape)

    def index(out_idx):
        res = [0] * ni
        for dims_i, dims_o in groups:
            if len(dims_i) == 1 and len(dims_o) == 1:
                res[dims_i[0]] = out_idx[dims_o[0]]
                continue
            lin = None
            for d in dims_o:
                lin = out_idx[d] if lin is None else lin * tex(out_shape[d]) + out_idx[d]
            stride = 1
            for d in reversed(dims_i):
                x = lin if same(stride, 1) else lin // tex(stride)
                res[d] = x if d == dims_i[0] else x % tex(in_shape[d])
                stride *= in_shape[d]
        return tuple(res)
    return index
