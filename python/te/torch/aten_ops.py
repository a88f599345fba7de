"""The aten operators te computes, each as a function from input Vals to an output Val.

``OPS`` maps an aten overload to its handler, called as ``handler(lw, node, *args, **kwargs)``
with tensor arguments as Vals (values.py) and everything else as given in the graph; ``lw`` is
the Lowerer (lower.py), for shapes and for materializing an input. A handler that meets a case
it does not cover raises Unsupported: the node then falls back to PyTorch. docs/python.md lists
the table (``covered_ops()`` prints it).
"""
import math

import torch

import te
from .symbolic import SymbolicUnsupported, Unsupported, free, is_sym, reciprocal, tex, tex_shape
from .values import Val, broadcast_load, broadcast_shape, reshape_index

aten = torch.ops.aten


OPS = {}
_COSTLY = {"exp", "log", "tanh", "sigmoid", "erf", "sqrt", "rsqrt", "pow"}


def _reg(*overloads):
    def deco(fn):
        for o in overloads:
            OPS[o] = fn
        return fn
    return deco


def _dim(d, n):
    d = int(d)
    if d < -n or d >= max(n, 1):
        raise Unsupported("dimension %d out of range for rank %d" % (d, n))
    return d + n if d < 0 else d


# ------------------------------------------------------------------------- element-wise

def _ew(fn, *vals, cost=0):
    """fn applied element-wise to Vals and Python numbers, with broadcasting."""
    tens = [v for v in vals if isinstance(v, Val)]
    shape = broadcast_shape(*[v.shape for v in tens])
    loads = [broadcast_load(v, shape) if isinstance(v, Val) else None for v in vals]
    anchors = {id(v.anchor): v.anchor for v in tens if v.anchor is not None}
    if len(anchors) > 1:
        raise RuntimeError("internal: two anchors reach one element-wise operator")
    anchor = next(iter(anchors.values()), None)
    if anchor is not None and anchor.shape != shape:
        raise RuntimeError("internal: an epilogue that broadcasts its anchor")

    def load(idx):
        return fn(*[ld(idx) if ld is not None else v for ld, v in zip(loads, vals)])
    return Val(shape, load, anchor=anchor, cost=sum(v.cost for v in tens) + cost, srcs=tens)


def _scalar(x):
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise Unsupported("a scalar operand of type %s" % type(x).__name__)
    return float(x)


def _binary(op):
    def handler(lw, node, a, b, alpha=1):
        if not isinstance(a, Val):
            a = _scalar(a)
        if not isinstance(b, Val):
            b = _scalar(b)
        if alpha != 1:
            b = _ew(lambda y: y * float(alpha), b) if isinstance(b, Val) else b * float(alpha)
        return _ew(op, a, b)
    return handler


OPS[aten.add.Tensor] = OPS[aten.add.Scalar] = _binary(lambda x, y: x + y)
OPS[aten.sub.Tensor] = OPS[aten.sub.Scalar] = _binary(lambda x, y: x - y)
OPS[aten.rsub.Scalar] = _binary(lambda x, y: y - x)
OPS[aten.mul.Tensor] = OPS[aten.mul.Scalar] = _binary(lambda x, y: x * y)
OPS[aten.div.Tensor] = OPS[aten.div.Scalar] = _binary(lambda x, y: x / y)
OPS[aten.maximum.default] = _binary(lambda x, y: te.max(x, y))
OPS[aten.minimum.default] = _binary(lambda x, y: te.min(x, y))


def _unary(fn, cost=0):
    def handler(lw, node, x):
        return _ew(fn, x, cost=cost)
    return handler


_SQRT1_2 = 1.0 / math.sqrt(2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)

OPS[aten.relu.default] = _unary(lambda x: te.max(x, 0.0))
OPS[aten.neg.default] = _unary(lambda x: -x)
OPS[aten.exp.default] = _unary(te.exp, 1)
OPS[aten.log.default] = _unary(te.log, 1)
OPS[aten.tanh.default] = _unary(te.tanh, 1)
OPS[aten.sigmoid.default] = _unary(te.sigmoid, 1)
OPS[aten.sqrt.default] = _unary(te.sqrt, 1)
OPS[aten.rsqrt.default] = _unary(te.rsqrt, 1)
OPS[aten.erf.default] = _unary(lambda x: _erf(x), 1)
OPS[aten.abs.default] = _unary(te.abs)
OPS[aten.silu.default] = _unary(lambda x: x * te.sigmoid(x), 1)
for _o in (aten.clone.default, aten.alias.default, aten.detach.default,
           aten.lift_fresh_copy.default):
    OPS[_o] = lambda lw, node, x, **kw: x


def _erf(x):
    """erf(x) for float32 from exp, which te vectorizes (its erf is a libm call per element,
    some ten times slower in a vector loop): Abramowitz and Stegun 7.1.26,
    erf(|x|) = 1 - t (a1 + t (a2 + t (a3 + t (a4 + t a5)))) exp(-x^2), t = 1 / (1 + p |x|),
    absolute error below 1.5e-7 (a float32 ulp at 1 is 6e-8)."""
    a = te.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 +
                                                                         t * 1.061405429))))
    y = 1.0 - poly * te.exp(-(a * a))
    return te.select(x < 0.0, -y, y)


@_reg(aten.gelu.default)
def _gelu(lw, node, x, approximate="none"):
    if approximate == "tanh":
        return _ew(lambda v: 0.5 * v * (1.0 + te.tanh(_SQRT_2_PI * (v + 0.044715 * v * v * v))),
                   x, cost=1)
    return _ew(lambda v: 0.5 * v * (1.0 + _erf(v * _SQRT1_2)), x, cost=1)


@_reg(aten.pow.Tensor_Scalar)
def _pow(lw, node, x, p):
    if p == 2:
        return _ew(lambda v: v * v, x)
    if p == 1:
        return x
    return _ew(lambda v: te.power(v, float(p)), x, cost=1)


@_reg(aten._to_copy.default)
def _to_copy(lw, node, x, dtype=None, layout=None, device=None, pin_memory=None,
             non_blocking=False, memory_format=None):
    if dtype not in (None, torch.float32) or (device is not None and
                                              torch.device(device).type != "cpu"):
        raise Unsupported("a conversion to %s on %s" % (dtype, device))
    return x


# ---------------------------------------------------------------------- layout (views)
# A view of an anchor's result would tile the anchor in the view's order: the anchor is
# materialized first (lw.plain), and the view reads its placeholder.

def _view(lw, node, x, size):
    x = lw.plain(x)
    out = lw.shape_of(node)
    if out == x.shape:
        return x
    if x.kind == "input" and x.slot is not None:
        # a tensor in memory (compact when a kernel reads it): the same data in the new shape,
        # a placeholder of its own, instead of div / mod index arithmetic in the kernel
        v = Val.placeholder(out, x.extra, lw.name("t%dv" % x.slot), x.slot)
        v.is_view = True
        return v
    index = reshape_index(x.shape, out)
    xl = x.load
    return Val(out, lambda idx: xl(index(idx)), cost=x.cost, srcs=[x])


for _o in (aten.view.default, aten._unsafe_view.default, aten.reshape.default):
    OPS[_o] = _view


@_reg(aten.unsqueeze.default, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
      aten.flatten.using_ints)
def _same_elements(lw, node, x, *args):
    return _view(lw, node, x, None)


@_reg(aten.permute.default)
def _permute(lw, node, x, dims):
    x = lw.plain(x)
    n = x.ndim
    dims = [_dim(d, n) for d in dims]
    out = tuple(x.shape[d] for d in dims)
    xl = x.load

    def load(idx):
        src = [None] * n
        for k, d in enumerate(dims):
            src[d] = idx[k]
        return xl(tuple(src))
    v = Val(out, load, cost=x.cost, srcs=[x])
    v.strided = v.strided or (n > 0 and dims[-1] != n - 1 and x.shape[dims[-1]] != 1)
    return v


@_reg(aten.transpose.int)
def _transpose(lw, node, x, d0, d1):
    n = x.ndim
    dims = list(range(n))
    a, b = _dim(d0, n), _dim(d1, n)
    dims[a], dims[b] = dims[b], dims[a]
    return _permute(lw, node, x, dims)


@_reg(aten.t.default)
def _t(lw, node, x):
    return x if x.ndim < 2 else _permute(lw, node, x, [1, 0])


@_reg(aten.expand.default)
def _expand(lw, node, x, size, implicit=False):
    x = lw.plain(x)
    out = lw.shape_of(node)
    v = Val(out, broadcast_load(x, out), cost=x.cost, srcs=[x])
    if x.ndim == 2 and len(out) == 3 and tuple(out[1:]) == x.shape:
        v.batch_of = x
    return v


@_reg(aten.select.int)
def _select(lw, node, x, dim, index):
    x = lw.plain(x)
    d = _dim(dim, x.ndim)
    i = index if is_sym(index) else int(index)
    if not is_sym(i) and i < 0:
        i = x.shape[d] + i
    ti = tex(i)
    xl = x.load
    v = Val(lw.shape_of(node), lambda idx: xl(tuple(idx[:d]) + (ti,) + tuple(idx[d:])),
            cost=x.cost, srcs=[x])
    v.syms |= free(i)
    return v


@_reg(aten.slice.Tensor)
def _slice(lw, node, x, dim=0, start=None, end=None, step=1):
    x = lw.plain(x)
    d = _dim(dim, x.ndim)
    n = x.shape[d]
    s = 0 if start is None else (start if is_sym(start) else int(start))
    if not is_sym(s) and not is_sym(n):
        s = max(0, min(n, s + n if s < 0 else s))
    elif not is_sym(s) and s < 0:
        s = n + s           # from the end of a symbolic extent (Dynamo guarded it in range)
    step = int(step)
    ts = tex(s)
    xl = x.load

    def load(idx):
        i = list(idx)
        i[d] = ts + (i[d] * step if step != 1 else i[d])
        return xl(tuple(i))
    v = Val(lw.shape_of(node), load, cost=x.cost, srcs=[x])
    v.syms |= free(s)
    return v


@_reg(aten.cat.default)
def _cat(lw, node, tensors, dim=0):
    vals = [lw.plain(v) for v in tensors if v.numel != 0]
    if not vals:
        raise Unsupported("cat of empty tensors")
    d = _dim(dim, vals[0].ndim)
    starts, off = [], 0
    for v in vals:
        starts.append(off)
        off += v.shape[d]
    loads = [v.load for v in vals]
    starts = [tex(o) for o in starts]

    def load(idx):
        def part(k):
            i = list(idx)
            i[d] = idx[d] - starts[k] if not (isinstance(starts[k], int) and starts[k] == 0) \
                else idx[d]
            e = loads[k](tuple(i))
            if k + 1 == len(vals):
                return e
            # only the side taken is evaluated: the other index would be out of bounds
            return te.if_then_else(idx[d] < starts[k + 1], e, part(k + 1))
        return part(0)
    return Val(lw.shape_of(node), load, cost=sum(v.cost for v in vals), srcs=vals)


@_reg(aten.embedding.default)
def _embedding(lw, node, weight, indices, padding_idx=-1, scale_grad=False, sparse=False):
    weight, indices = lw.plain(weight), lw.plain(indices)
    if weight.ndim != 2 or indices.extra != "int64":
        raise Unsupported("embedding needs a 2-D weight and int64 indices")
    n = indices.ndim
    rows = tex(weight.shape[0])
    il, wl = indices.load, weight.load

    def load(idx):
        # clamped: an index out of range reads a valid row instead of arbitrary memory
        r = te.min(te.max(il(tuple(idx[:n])), 0), rows - 1)
        return wl((r, idx[n]))
    return Val(lw.shape_of(node), load, srcs=[weight, indices])


# --------------------------------------------------------------------------- anchors


def _mm_anchor(lw, node, a, b, batched):
    a, b = lw.plain(a), lw.plain(b)
    a, b = lw.uncostly(a), lw.uncostly(b)
    kdim = a.shape[-1]
    out = lw.shape_of(node)
    nr = lw.matmul_nr(out[-1])
    bl = None
    shared = b.batch_of if batched else b      # bmm by a weight broadcast along the batch
    if shared is not None and lw.reads_inputs_only(shared) and not is_sym(out[-1]) and \
            out[-1] > nr:
        # A weight (B made of graph inputs only): packed once into panels of nr columns,
        # Bp[j // nr][k][j % nr], so that a tile's k loop reads B contiguously instead of
        # rows N floats apart, which alias in L1 when N is a multiple of 1024. The packing
        # kernel is memoized (plan.KernelStep): it runs again only when the weight changes.
        n = out[-1]
        bsrc = shared.load
        panels = Val(((n + nr - 1) // nr, kdim, nr),
                     lambda idx: bsrc((idx[1], te.min(idx[0] * nr + idx[2], n - 1))),
                     srcs=[shared])
        bp = lw.materialize(panels, memo=True)
        b = bp
        bl = (lambda k, j: bp.load((j // nr, k, j % nr)))
    else:
        b = lw.contiguous_rows(b)     # B read along its rows, never a transposed view
    k = te.reduce_axis((0, tex(kdim)), name="k")
    if batched:
        load_b = (lambda q, kk, j: bl(kk, j)) if bl else (lambda q, kk, j: b.load((q, kk, j)))
        c = te.compute(tex_shape(out), lambda q, i, j: te.sum(
            a.load((q, i, k)) * load_b(q, k, j), axis=k), name=lw.name("bmm"))
    else:
        load_b = bl or (lambda kk, j: b.load((kk, j)))
        c = te.compute(tex_shape(out), lambda i, j: te.sum(a.load((i, k)) * load_b(k, j),
                                                           axis=k), name=lw.name("mm"))
    v = Val.of_anchor(c, out, "matmul", [a, b])
    v.extra = (kdim, nr)
    return v


@_reg(aten.mm.default)
def _mm(lw, node, a, b):
    return _mm_anchor(lw, node, a, b, False)


@_reg(aten.bmm.default)
def _bmm(lw, node, a, b):
    return _mm_anchor(lw, node, a, b, True)


@_reg(aten.addmm.default)
def _addmm(lw, node, bias, a, b, beta=1, alpha=1):
    m = _mm_anchor(lw, node, a, b, False)
    bias = lw.plain(bias)
    return _ew(lambda s, c: float(beta) * s + float(alpha) * c if (beta, alpha) != (1, 1)
               else s + c, bias, m)


@_reg(aten.convolution.default)
def _convolution(lw, node, x, w, bias, stride, padding, dilation, transposed, output_padding,
                 groups):
    x, w = lw.uncostly(lw.plain(x)), lw.plain(w)
    if transposed or x.ndim != 4 or len(stride) != 2:
        raise Unsupported("only 2-D, non-transposed convolution")
    out = lw.shape_of(node)
    n_, c_, h_, w_ = x.shape
    o_, cg, kh, kw = w.shape
    if is_sym(c_) or is_sym(o_) or is_sym(kh) or is_sym(kw):
        raise Unsupported("a convolution with symbolic channels or kernel size")
    _concrete_spatial(x, "convolution")
    h_, w_ = tex(h_), tex(w_)
    groups = int(groups)
    depthwise = groups == c_ and cg == 1 and o_ == c_
    if groups != 1 and not depthwise:
        raise Unsupported("grouped convolution other than depthwise (groups=%d)" % groups)
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def pad(ni, ci, yy, xx):
        if ph == 0 and pw == 0:
            return x.load((ni, ci, yy, xx))
        inside = te.all(yy >= 0, yy < h_, xx >= 0, xx < w_)
        return te.if_then_else(inside, x.load((ni, ci, yy, xx)), 0.0)

    if groups == 1:
        rc = te.reduce_axis((0, c_), name="rc")
        c = te.compute(tex_shape(out), lambda ni, oi, yi, xi: te.sum(
            pad(ni, rc, yi * sh + ry * dh - ph, xi * sw + rx * dw - pw) * w.load((oi, rc, ry, rx)),
            axis=[rc, ry, rx]), name=lw.name("conv"))
    else:
        c = te.compute(tex_shape(out), lambda ni, oi, yi, xi: te.sum(
            pad(ni, oi, yi * sh + ry * dh - ph, xi * sw + rx * dw - pw) * w.load((oi, 0, ry, rx)),
            axis=[ry, rx]), name=lw.name("dwconv"))
    v = Val.of_anchor(c, out, "conv", [x, w])
    if bias is None:
        return v
    bias = lw.plain(bias)
    bl = bias.load
    return _ew(lambda cv, bv: cv + bv, v, Val((o_, 1, 1), lambda idx: bl((idx[0],)), srcs=[bias]))


def _concrete_spatial(x, what):
    """Convolutions and pooling over a symbolic height or width cost 20-40x their per-shape
    kernels: the padding guards stay in the vector loop (te's loop partition needs constant
    bounds to peel them). Such a graph gets plans per shape; a symbolic batch is fine."""
    if any(is_sym(d) for d in x.shape[2:]):
        raise SymbolicUnsupported("%s over a symbolic height or width" % what)


def _rows(x):
    rows = x.shape[:-1]
    return rows, x.shape[-1]


def _row_anchor(lw, x, dim, what):
    x = lw.uncostly(lw.plain(x))
    if _dim(dim, x.ndim) != x.ndim - 1:
        raise Unsupported("%s over a dimension other than the last" % what)
    return x


@_reg(aten._softmax.default, aten._safe_softmax.default, aten._log_softmax.default)
def _softmax(lw, node, x, dim, half_to_float=False):
    log = node.target is aten._log_softmax.default
    x = _row_anchor(lw, x, dim, "softmax")
    rows, d = _rows(x)
    nm = lw.name("logsoftmax" if log else "softmax")
    k = te.reduce_axis((0, tex(d)), name="k")
    trows, tshape = tex_shape(rows), tex_shape(x.shape)
    mx = te.compute(trows, lambda *r: te.max(x.load(r + (k,)), axis=k), name=nm + "_max")
    if log:
        k2 = te.reduce_axis((0, tex(d)), name="k2")
        sm = te.compute(trows, lambda *r: te.sum(te.exp(x.load(r + (k2,)) - mx[r]), axis=k2),
                        name=nm + "_sum")
        out = te.compute(tshape, lambda *i: x.load(i) - mx[i[:-1]] - te.log(sm[i[:-1]]), name=nm)
        stages = [mx, sm]
    else:
        e = te.compute(tshape, lambda *i: te.exp(x.load(i) - mx[i[:-1]]), name=nm + "_exp")
        k2 = te.reduce_axis((0, tex(d)), name="k2")
        sm = te.compute(trows, lambda *r: te.sum(e[r + (k2,)], axis=k2), name=nm + "_sum")
        safe = node.target is aten._safe_softmax.default
        # _safe_softmax: a row that is all -inf gives zeros, not NaN
        out = te.compute(tshape, lambda *i: te.select(
            mx[i[:-1]] == -math.inf, 0.0, e[i] / sm[i[:-1]]) if safe else e[i] / sm[i[:-1]],
            name=nm)
        stages = [mx, e, sm]
    v = Val.of_anchor(out, x.shape, "rows", [x])
    v.extra = stages
    return v


@_reg(aten.native_layer_norm.default)
def _layer_norm(lw, node, x, normalized_shape, weight, bias, eps):
    x = lw.uncostly(lw.plain(x))
    if len(normalized_shape) != 1:
        raise Unsupported("layer_norm over more than the last dimension")
    rows, d = _rows(x)
    nm = lw.name("layernorm")
    k = te.reduce_axis((0, tex(d)), name="k")
    trows = tex_shape(rows)
    # a reduction is the whole body of its stage: sums here, divided by d where they are read
    total = te.compute(trows, lambda *r: te.sum(x.load(r + (k,)), axis=k), name=nm + "_sum")
    k2 = te.reduce_axis((0, tex(d)), name="k2")
    inv = reciprocal(d)

    def sq(r):
        c = x.load(r + (k2,)) - total[r] * inv
        return c * c
    sqs = te.compute(trows, lambda *r: te.sum(sq(r), axis=k2), name=nm + "_sqsum")
    w = lw.plain(weight) if weight is not None else None
    b = lw.plain(bias) if bias is not None else None

    def body(*i):
        r = i[:-1]
        y = (x.load(i) - total[r] * inv) * te.rsqrt(sqs[r] * inv + float(eps))
        if w is not None:
            y = y * w.load((i[-1],))
        if b is not None:
            y = y + b.load((i[-1],))
        return y
    out = te.compute(tex_shape(x.shape), body, name=nm)
    v = Val.of_anchor(out, x.shape, "rows", [x] + [t for t in (w, b) if t is not None])
    v.extra = [total, sqs]
    return lw.tuple_result(node, [v])   # (out, mean, rstd): te gives out only


def _reduce(lw, node, x, dims, keepdim, kind):
    x = lw.uncostly(lw.plain(x))
    n = x.ndim
    dims = sorted({_dim(d, n) for d in (dims if dims else range(n))})
    kept = [d for d in range(n) if d not in dims]
    axes = [te.reduce_axis((0, tex(x.shape[d])), name="r%d" % d) for d in dims]
    count = 1
    for d in dims:
        count *= x.shape[d]
    core = tuple(x.shape[d] for d in kept)

    def body(*o):
        src, it_o, it_r = [], iter(o), iter(axes)
        for d in range(n):
            src.append(next(it_r) if d in dims else next(it_o))
        e = x.load(tuple(src))
        return te.max(e, axis=axes) if kind == "amax" else te.sum(e, axis=axes)
    if not core:
        raise Unsupported("a reduction to a scalar")
    t = te.compute(tex_shape(core), body, name=lw.name(kind))
    stages = []
    if kind == "mean":       # a reduction is the whole body of its stage: the sum, then / count
        stages, total = [t], t
        inv = reciprocal(count)
        t = te.compute(tex_shape(core), lambda *o: total[o] * inv, name=lw.name("mean"))
    v = Val.of_anchor(t, core, "reduce", [x])
    v.extra = stages
    out = lw.shape_of(node)
    if keepdim:     # the kept 1s are a view of the materialized reduction
        p = lw.materialize(v)
        index = reshape_index(core, out)
        pl = p.load
        return Val(out, lambda idx: pl(index(idx)), srcs=[p])
    return v


@_reg(aten.sum.dim_IntList)
def _sum(lw, node, x, dims, keepdim=False, dtype=None):
    if dtype not in (None, torch.float32):
        raise Unsupported("sum to %s" % dtype)
    return _reduce(lw, node, x, dims, keepdim, "sum")


@_reg(aten.mean.dim)
def _mean(lw, node, x, dims, keepdim=False, dtype=None):
    if dtype not in (None, torch.float32):
        raise Unsupported("mean to %s" % dtype)
    return _reduce(lw, node, x, dims, keepdim, "mean")


@_reg(aten.amax.default)
def _amax(lw, node, x, dims=(), keepdim=False):
    return _reduce(lw, node, x, dims, keepdim, "amax")


def _pool(lw, node, x, kernel, stride, padding, kind):
    x = lw.uncostly(lw.plain(x))
    if x.ndim != 4:
        raise Unsupported("pooling of a rank-%d tensor" % x.ndim)
    _concrete_spatial(x, "pooling")
    kh, kw = (kernel * 2)[:2] if len(kernel) == 1 else kernel
    stride = stride or kernel
    sh, sw = (stride * 2)[:2] if len(stride) == 1 else stride
    padding = padding or [0]
    ph, pw = (padding * 2)[:2] if len(padding) == 1 else padding
    out = lw.shape_of(node)
    h_, w_ = tex(x.shape[2]), tex(x.shape[3])
    ry = te.reduce_axis((0, kh), name="ry")
    rx = te.reduce_axis((0, kw), name="rx")

    def win(ni, ci, yi, xi, fill):
        yy, xx = yi * sh + ry - ph, xi * sw + rx - pw
        if ph == 0 and pw == 0:
            return x.load((ni, ci, yy, xx))
        return te.if_then_else(te.all(yy >= 0, yy < h_, xx >= 0, xx < w_),
                               x.load((ni, ci, yy, xx)), fill)
    if kind == "max":
        t = te.compute(tex_shape(out), lambda ni, ci, yi, xi: te.max(win(ni, ci, yi, xi, -math.inf),
                                                          axis=[ry, rx]), name=lw.name("maxpool"))
    else:
        t = te.compute(tex_shape(out), lambda ni, ci, yi, xi: te.sum(win(ni, ci, yi, xi, 0.0),
                                                          axis=[ry, rx]) * (1.0 / (kh * kw)),
                       name=lw.name("avgpool"))
    return Val.of_anchor(t, out, "pool", [x])


@_reg(aten.max_pool2d_with_indices.default)
def _max_pool_idx(lw, node, x, kernel, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    if ceil_mode or any(int(d) != 1 for d in dilation):
        raise Unsupported("max_pool2d with ceil_mode or dilation")
    return lw.tuple_result(node, [_pool(lw, node, x, kernel, stride, padding, "max")])


@_reg(aten.max_pool2d.default)
def _max_pool(lw, node, x, kernel, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    if ceil_mode or any(int(d) != 1 for d in dilation):
        raise Unsupported("max_pool2d with ceil_mode or dilation")
    return _pool(lw, node, x, kernel, stride, padding, "max")


@_reg(aten.avg_pool2d.default)
def _avg_pool(lw, node, x, kernel, stride=(), padding=(0,), ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    if ceil_mode or not count_include_pad or divisor_override is not None:
        raise Unsupported("avg_pool2d with ceil_mode, count_include_pad=False or a divisor")
    return _pool(lw, node, x, kernel, stride, padding, "avg")


def covered_ops():
    """The names of the aten overloads te computes (sorted)."""
    return sorted(str(o) for o in OPS)
