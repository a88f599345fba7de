"""te's default CPU schedules for the kernels the backend makes: tiled, vectorized, parallel.

One function per kind of kernel, chosen by the anchor the kernel computes (values.Val.anchor):
  matmul  (mm, addmm, bmm, with their epilogue): the output in MR x NR register tiles, the
          product accumulated in a local tile (cache_write, or the epilogue's producer computed
          at the tile) with k outside the tile's rows (unrolled) and columns (vectorized), and
          the row tiles (times the batch) in parallel — the approach of bench/sgemm_schedule.c
          without its packing, which pays only for matrices larger than the models' layers;
  conv    (conv2d NCHW with bias / epilogue): output channels in blocks of 4 (unrolled) by
          vectors along the output row, the reduction outside the block, (n, channel block)
          in parallel;
  rows    (softmax, log_softmax, layer_norm): one row per iteration of a parallel loop, the
          row's statistics computed at it (sums and maxima as vectors of partial results,
          rfactor), its element-wise passes vectorized;
  reduce / pool: the outer output dimensions in parallel, pooling vectorized along rows;
  inline  (element-wise and layout chains): the leading dimensions fused and in parallel, the
          last one vectorized.
Small kernels stay on one thread: a parallel region costs microseconds, more than they run.

In a symbolic plan (symbolic.py) the extents may be symbolic: every choice reads them through
``est`` (their first value, at least symbolic.EST_MIN: one plan serves all sizes, so a symbolic
extent is taken as large), a split of a symbolic loop gets te's guarded tail (masked vector code
for a vectorized one), and a row reduction over a symbolic extent is not rfactored (its vector
of partial sums needs the extent to be a multiple of the vector width).
"""
from .symbolic import est, is_sym

PARALLEL_MIN = 1 << 14      # elements (or multiply-adds / 16) below which one thread is faster


def _numel(shape):
    n = 1
    for d in shape:
        n *= est(d)
    return n


def _vectorize_last(st, it, extent, lanes):
    extent = est(extent)
    if extent >= lanes:
        o, i = st.split(it, factor=lanes)
        st.vectorize(i)
        return o
    if extent > 1:
        st.vectorize(it)
    return None


def _outer(st, axes):
    """The leading axes fused into one loop (the first alone when there is one)."""
    return axes[0] if len(axes) == 1 else st.fuse(*axes)


def inline(s, root, shape, lanes):
    st = s[root]
    ax = st.axis
    _vectorize_last(st, ax[-1], shape[-1], lanes)
    if len(ax) > 1 and _numel(shape) >= PARALLEL_MIN:
        st.parallel(_outer(st, ax[:-1]))
    elif len(ax) == 1 and _numel(shape) >= 4 * PARALLEL_MIN:
        st.parallel(st.leaf_iters[0])


def matmul(s, root, anchor, lanes):
    shape = anchor.shape
    if anchor.tensor is root:
        prod = s[s.cache_write(root, "local")]
    else:
        prod = s[anchor.tensor]
    st = s[root]
    ax = st.axis
    m, n = shape[-2], shape[-1]
    mr = min(4, est(m))
    nr = anchor.extra[1]         # as aten_ops._mm_anchor packed B for
    io, jo, ii, ji = st.tile(ax[-2], ax[-1], mr, nr)
    if nr > 1:
        st.vectorize(ji)
    outer = st.fuse(ax[0], io) if len(ax) == 3 else io
    flops = _numel(shape) * est(anchor.extra[0])      # multiply-adds (extra: K, nr)
    if flops >= PARALLEL_MIN * 16 and _numel(shape) >= 4 * mr * nr:
        st.parallel(outer)
    prod.compute_at(st, jo)
    pax, red = prod.axis, prod.reduce_axis
    prod.reorder(*(list(pax[:-2]) + list(red) + [pax[-2], pax[-1]]))
    if mr > 1:
        prod.unroll(pax[-2])
    if nr > 1:
        prod.vectorize(pax[-1])


def conv(s, root, anchor, lanes):
    shape = anchor.shape
    if anchor.tensor is root:
        prod = s[s.cache_write(root, "local")]
    else:
        prod = s[anchor.tensor]
    st = s[root]
    n_, o_, y_, x_ = st.axis
    ob = min(4, est(shape[1]))
    xv = min(lanes, est(shape[3]))
    oo, oi = st.split(o_, factor=ob)
    xo, xi = st.split(x_, factor=xv)
    st.reorder(n_, oo, y_, xo, oi, xi)
    st.vectorize(xi)
    par = st.fuse(n_, oo)
    if _numel(shape) >= PARALLEL_MIN // 4:
        st.parallel(par)
    prod.compute_at(st, xo)
    pax, red = prod.axis, prod.reduce_axis
    prod.reorder(*([pax[0], pax[2]] + list(red) + [pax[1], pax[3]]))
    if ob > 1:
        prod.unroll(pax[1])
    if xv > 1:
        prod.vectorize(pax[3])


def rows(s, root, anchor, lanes):
    shape = anchor.shape
    st = s[root]
    ax = st.axis
    r = _outer(st, ax[:-1])
    _vectorize_last(st, ax[-1], shape[-1], lanes)
    d = shape[-1]
    at_row = []             # computed at the row loop, consumers first (te_compute_at's rule)
    for t in reversed(anchor.extra):
        at_row.append(t)
        ts = s[t]
        if ts.reduce_axis and not is_sym(d) and d % lanes == 0:
            # a row's sum (or max) as `lanes` partial sums in one vector (rfactor), added up
            # at the end: one vector add per `lanes` elements, not a chain of scalar adds
            ko, ki = ts.split(ts.reduce_axis[0], factor=lanes)
            rf = s.rfactor(t, ki, t.ndim)
            rs = s[rf]
            rax = rs.axis
            rs.reorder(*(list(rax[:-1]) + list(rs.reduce_axis) + [rax[-1]]))
            rs.vectorize(rax[-1])
            at_row.append(rf)
        elif not ts.reduce_axis:                                # softmax's exp pass
            _vectorize_last(ts, ts.axis[-1], d, lanes)
    for t in at_row:
        s[t].compute_at(st, r)
    if _numel(shape) >= PARALLEL_MIN and len(ax) > 1:
        st.parallel(r)


def reduce(s, root, anchor, lanes):
    st = s[root]
    ax = st.axis
    for t in anchor.extra or ():        # mean's sum: computed where each element is
        s[t].compute_at(st, st.leaf_iters[-1])
    if len(ax) > 1 and _numel(anchor.shape) >= 64:
        st.parallel(ax[0])


def pool(s, root, anchor, lanes):
    shape = anchor.shape
    st = s[root]
    n_, c_, y_, x_ = st.axis
    red = st.reduce_axis
    par = st.fuse(n_, c_)
    if est(shape[3]) >= lanes:
        xo, xi = st.split(x_, factor=lanes)
        st.reorder(*([par, y_, xo] + list(red) + [xi]))
        st.vectorize(xi)
    if _numel(shape) >= PARALLEL_MIN // 4:
        st.parallel(par)


_BY_KIND = {"matmul": matmul, "conv": conv, "rows": rows, "reduce": reduce, "pool": pool}


def schedule_kernel(s, root, v, lanes):
    """Schedules the kernel that computes Val v as tensor root (see the module's doc)."""
    a = v.anchor
    if a is None:
        inline(s, root, v.shape, lanes)
    else:
        _BY_KIND[a.kind](s, root, a, lanes)
