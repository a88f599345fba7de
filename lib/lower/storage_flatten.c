/* storage_flatten.c — multi-dimensional tensors become flat buffers.
 *
 * Needs: the REALIZE / PROVIDE / ACCESS form of schedule_to_loops; pctx->tensor_buffers maps
 * every argument tensor to its buffer (args.c).
 * Guarantees: no REALIZE, PROVIDE or ACCESS is left:
 *   REALIZE t [min_d, extent_d) { body }  ->  ALLOCATE t[extent_0 * ... * extent_n-1] { body }
 *       (a new buffer of the realize's scope whose logical shape is the region's extents);
 *   PROVIDE t[i_0, ..., i_n-1] = v          ->  STORE t[flat] = v
 *   ACCESS  t[i_0, ..., i_n-1]              ->  LOAD  t[flat]
 * with the row-major flat index written as a person would (Horner form)
 *   flat = (...((i_0 - min_0) * extent_1 + (i_1 - min_1)) * extent_2 + ...) + (i_n-1 - min_n-1)
 * where, for argument tensors, min is 0 and the extents are the tensor's shape (compact
 * row-major strides, which the generated entry point checks on every DLTensor; a strided
 * placeholder's (te_placeholder_strided) index is sum i_d * stride_d instead). A realize with a
 * storage order (te_reorder_storage) takes the dims in that order instead, its buffer's shape
 * the extents in that order; a dim stored split by f (te_reorder_storage of a split axis) is two
 * storage dims, (i_d - min_d) / f of extent ceil(extent_d / f) and (i_d - min_d) % f of extent
 * f, wherever the order puts them. A 0-d tensor is element 0. The simplify pass after this one
 * cleans the arithmetic.
 */
#include "lower.h"

/* A realized tensor in scope: its buffer (shape in storage order), the region's mins and the
   storage layout (ir_realize_info's order and split; NULL: row-major). */
typedef struct realized {
  ir_buffer *buffer;
  te_expr **mins;
  const ir_realize_info *layout;
} realized;

typedef struct flatten {
  lw_pass_ctx *p;
  ir_map *realized; /* te_tensor* -> realized* for the REALIZEs enclosing the current node */
} flatten;

/* The buffer, mins and storage layout of t where it is used; NULL mins mean all zero, a NULL
   layout row-major. */
static ir_buffer *buffer_of(flatten *fl, te_tensor *t, te_expr ***mins,
                            const ir_realize_info **layout) {
  realized *r = ir_map_get(fl->realized, t);
  if (r) {
    *mins = r->mins;
    *layout = r->layout;
    return r->buffer;
  }
  *mins = NULL;
  *layout = NULL;
  ir_buffer *b = ir_map_get(fl->p->tensor_buffers, t);
  if (!b)
    ir_error(fl->p->ctx, TE_ERR_INTERNAL,
             "internal: storage_flatten: tensor '%s' is neither realized nor a kernel argument",
             t->name);
  return b;
}

static bool is_zero(te_expr *e) {
  int64_t v;
  return ir_is_const_int(e, &v) && v == 0;
}

static bool is_one(te_expr *e) {
  int64_t v;
  return ir_is_const_int(e, &v) && v == 1;
}

/* The flat index of a strided argument: sum idx[d] * strides[d]. */
static te_expr *strided_index(ir_buffer *b, int n, te_expr *const idx[]) {
  te_expr *flat = NULL;
  for (int d = 0; d < n; d++) {
    te_expr *term = is_one(b->strides[d]) ? idx[d] : ir_mul(idx[d], b->strides[d]);
    if (!(flat = flat ? ir_add(flat, term) : term))
      return NULL;
  }
  return flat;
}

/* The index of storage dim o (ir_realize_info.order's encoding) for the indices idx. */
static te_expr *storage_index(te_ctx *ctx, te_expr **mins, const ir_realize_info *l, int o,
                              te_expr *const idx[]) {
  int d = o % IR_STORAGE_INNER;
  te_expr *i = idx[d];
  if (mins && !is_zero(mins[d]))
    i = ir_sub(i, mins[d]);
  if (!i || !l || l->split[d] <= 0)
    return i;
  te_expr *f = ir_i64(ctx, l->split[d]);
  return o >= IR_STORAGE_INNER ? ir_floormod(i, f) : ir_floordiv(i, f);
}

/* The flat index of idx (already flattened themselves) into b: row-major over the storage dims
   (layout->order[k] is the k-th outermost; NULL layout: 0, 1, ...), b's shape in that order;
   a strided argument's declared strides. */
static te_expr *flat_index(te_ctx *ctx, ir_buffer *b, te_expr **mins, const ir_realize_info *l,
                           int n, te_expr *const idx[]) {
  if (n == 0)
    return ir_i64(ctx, 0);
  if (b->strides)
    return strided_index(b, n, idx);
  te_expr *flat = NULL;
  int nstore = l ? l->norder : n;
  for (int k = 0; k < nstore; k++) {
    te_expr *i = storage_index(ctx, mins, l, l ? l->order[k] : k, idx);
    if (!i)
      return NULL;
    if (!flat)
      flat = i;
    else
      flat = ir_add(is_one(b->shape[k]) ? flat : ir_mul(flat, b->shape[k]), i);
    if (!flat)
      return NULL;
  }
  return flat;
}

/* Mutates the indices of a PROVIDE/ACCESS (they may read tensors themselves). */
static bool mutate_all(ir_mutator *m, int n, te_expr *const in[], te_expr *out[]) {
  for (int d = 0; d < n; d++)
    if (!(out[d] = ir_mutate_expr(m, in[d])))
      return false;
  return true;
}

static te_expr *flatten_access(ir_mutator *m, te_expr *e) {
  flatten *fl = m->data;
  te_expr *idx[TE_MAX_DIMS];
  if (!ir_check(m->ctx, e->nargs <= TE_MAX_DIMS, "access rank"))
    return NULL;
  if (!mutate_all(m, e->nargs, e->args, idx))
    return NULL;
  te_expr **mins;
  const ir_realize_info *layout;
  ir_buffer *b = buffer_of(fl, e->u.tensor, &mins, &layout);
  if (!b)
    return NULL;
  te_expr *flat = flat_index(m->ctx, b, mins, layout, e->nargs, idx);
  return flat ? ir_load(b, e->dtype, flat) : NULL;
}

static ir_stmt *flatten_provide(ir_mutator *m, ir_stmt *s) {
  flatten *fl = m->data;
  int n = s->nexprs - 1;
  te_expr *idx[TE_MAX_DIMS];
  if (!ir_check(m->ctx, n >= 0 && n <= TE_MAX_DIMS, "provide rank"))
    return NULL;
  te_expr *value = ir_mutate_expr(m, s->exprs[0]);
  if (!value || !mutate_all(m, n, s->exprs + 1, idx))
    return NULL;
  te_expr **mins;
  const ir_realize_info *layout;
  ir_buffer *b = buffer_of(fl, s->u.tensor, &mins, &layout);
  if (!b)
    return NULL;
  te_expr *flat = flat_index(m->ctx, b, mins, layout, n, idx);
  return flat ? ir_store(b, value, flat) : NULL;
}

static ir_stmt *flatten_realize(ir_mutator *m, ir_stmt *s) {
  flatten *fl = m->data;
  te_ctx *ctx = m->ctx;
  te_tensor *t = s->u.realize.tensor;
  int n = s->nexprs / 2;
  if (!ir_check(ctx, n == t->ndim && n <= TE_MAX_DIMS, "realize rank"))
    return NULL;
  te_expr *extents[2 * TE_MAX_DIMS];
  realized *r = ir_alloc(ctx, sizeof *r);
  te_expr **mins = ir_alloc(ctx, (size_t)(n + 1) * sizeof *mins);
  if (!r || !mins)
    return NULL;
  const ir_realize_info *ri = &s->u.realize;
  if (!ir_check(ctx, ri->norder == 0 || (ri->norder >= n && ri->norder <= 2 * n),
                "realize storage order rank"))
    return NULL;
  for (int d = 0; d < n; d++) /* region bounds read no tensor (made from loop bounds, sizes) */
    mins[d] = s->exprs[2 * d];
  int nstore = ri->norder ? ri->norder : n;
  te_expr *count = ir_i64(ctx, 1);
  for (int k = 0; k < nstore; k++) { /* the extents in storage order */
    int o = ri->norder ? ri->order[k] : k, d = o % IR_STORAGE_INNER;
    te_expr *ext = s->exprs[2 * d + 1];
    int64_t f = ri->split[d];
    if (f > 0) /* a split dim: f, or the rounded-up count of f-element pieces */
      ext = o >= IR_STORAGE_INNER ? ir_i64(ctx, f)
                                  : ir_floordiv(ir_add(ext, ir_i64(ctx, f - 1)), ir_i64(ctx, f));
    extents[k] = ext;
    count = !ext || is_one(count) ? ext : ir_mul(count, ext);
    if (!count)
      return NULL;
  }
  r->mins = mins;
  r->layout = ri->norder ? ri : NULL;
  r->buffer = ir_buffer_new(ctx, t->name, t->dtype, nstore, extents, s->u.realize.scope, t, -1);
  if (!r->buffer)
    return NULL;
  realized *outer = ir_map_get(fl->realized, t);
  if (!ir_map_put(fl->realized, t, r))
    return NULL;
  ir_stmt *body = ir_mutate_stmt(m, s->stmts[0]);
  if (!ir_map_put(fl->realized, t, outer))
    return NULL;
  return body ? ir_allocate(ctx, r->buffer, count, body) : NULL;
}

/* call_extern over tensors -> the same call over their buffers (extents and strides stay). An
   argument realized here starts at element 0: extern stages realize whole tensors. */
static ir_stmt *flatten_call_extern(ir_mutator *m, ir_stmt *s) {
  flatten *fl = m->data;
  const ir_extern_call *c = s->u.ext;
  ir_extern_call *f = ir_alloc(m->ctx, sizeof *f);
  ir_buffer **bufs = ir_alloc(m->ctx, sizeof *bufs * (size_t)c->nargs);
  if (!f || !bufs)
    return NULL;
  *f = *c;
  for (int a = 0; a < c->nargs; a++) {
    te_expr **mins;
    const ir_realize_info *layout;
    if (!(bufs[a] = buffer_of(fl, c->tensors[a], &mins, &layout)))
      return NULL;
  }
  f->buffers = bufs;
  return ir_call_extern(m->ctx, f, s->nexprs, s->exprs);
}

ir_stmt *lw_storage_flatten(lw_pass_ctx *p, ir_stmt *s) {
  flatten fl = {.p = p, .realized = ir_map_new(p->ctx)};
  if (!fl.realized)
    return NULL;
  ir_mutator m = {.ctx = p->ctx, .data = &fl};
  m.expr[IR_ACCESS] = flatten_access;
  m.stmt[IR_S_PROVIDE] = flatten_provide;
  m.stmt[IR_S_REALIZE] = flatten_realize;
  m.stmt[IR_S_CALL_EXTERN] = flatten_call_extern;
  return ir_mutate_stmt(&m, s);
}
