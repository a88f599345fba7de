/* gpu_tree_match.c — which one-thread final reductions gpu_tree.c may make trees, and how the
 * block's threads divide among them.
 *
 * After gpu_rewrite.c an rfactor'd reduction whose partials were computed by threads leaves,
 * at the kernel's top level,
 *
 *   if (threadIdx.y == 0) { prefix; for (k, 0, N) { OUT[o] = f(OUT[o], SH[e(k)]) } }
 *
 * (here the factor axis was bound to threadIdx.y and threadIdx.x indexes output columns; the
 * prefix is what else runs on that thread, such as OUT[o]'s initial value). The indices the
 * guard sets to 0 participate, the others group: the threads that agree on the grouping ones
 * form a group, which reduces its own N partials, numbered by the participating indices
 * linearized (pos = x + X * (y + Y * z) over those present). The match needs:
 *   - N constant, 2 <= N <= the threads of a group (so pos < N names a thread for each partial);
 *   - f reads OUT[o] and SH[e(k)] once each and k nowhere else, o without k, e without the
 *     participating indices, the prefix without SH;
 *   - e(k) affine in k and the grouping thread indices with strides that keep every (k, group)
 *     its own element of SH (a mixed-radix layout), so the groups' trees cannot collide.
 * A final reduction under a further condition (`if (threadIdx.x < extent)`, where the launch
 * has more x threads than the stage) is not matched and stays serial.
 * The warp form (cuda) also needs the hardware numbering to line up: with `low` the threads of
 * the grouping indices below the participating ones, low a power of two dividing 32, a warp
 * then holds 32 / low consecutive pos values of each of its groups and pos + d is lane + d * low.
 */
#include <stdlib.h>

#include "gpu_lower.h"

static bool is_shared(const lw_gpu_kernel *k, ir_buffer *b, int64_t *count) {
  for (int i = 0; i < k->nshared; i++)
    if (k->shared[i].buffer == b) {
      *count = k->shared[i].count;
      return true;
    }
  return false;
}

/* Whether s loads or stores buffer b. */
typedef struct uses_buf {
  ir_buffer *b;
} uses_buf;
static int ub_load(ir_visitor *v, te_expr *e) {
  return e->u.buffer == ((uses_buf *)v->data)->b ? IR_ABORT : IR_CONTINUE;
}
static int ub_store(ir_visitor *v, ir_stmt *s) {
  return s->u.buffer == ((uses_buf *)v->data)->b ? IR_ABORT : IR_CONTINUE;
}
bool lw_gpu_stmt_uses_buffer(ir_stmt *s, ir_buffer *b) {
  uses_buf u = {b};
  ir_visitor v = {0};
  v.expr[IR_LOAD] = ub_load;
  v.stmt[IR_S_STORE] = ub_store;
  v.data = &u;
  return ir_visit_stmt(&v, s) == IR_ABORT;
}

static te_expr *tm_load(ir_mutator *m, te_expr *e) {
  lw_gpu_tree *t = m->data;
  if (e->u.buffer == t->sh && ir_expr_uses(e->args[0], t->k) && e->dtype.lanes == 1) {
    t->nsh++;
    t->sh_load = e;
    t->sh_index = e->args[0];
    return t->b;
  }
  if (e->u.buffer == t->out && e->args[0] == t->out_index && e->dtype.lanes == 1) {
    t->nout++;
    t->out_load = e;
    return t->a;
  }
  return ir_mutate_expr_children(m, e);
}

/* The thread indices the single-thread guard sets to 0, as bits (1 << tag). */
static unsigned guard_dims(const lw_gpu_kernel *k, te_expr *c) {
  if (c->kind == IR_AND)
    return guard_dims(k, c->args[0]) | guard_dims(k, c->args[1]);
  for (int d = TE_THREAD_X; d <= TE_THREAD_Z; d++)
    if (k->idx[d] && c->args[0] == k->idx[d])
      return 1u << d;
  return 0;
}

/* f of the loop's store over t->a, t->b, trying each shared buffer as SH; false when none fits. */
static bool match_combine(lw_pass_ctx *p, const lw_gpu_kernel *k, ir_stmt *st, lw_gpu_tree *t,
                          te_expr **f, int64_t n) {
  te_expr *v = st->exprs[0];
  int64_t count = 0;
  for (int i = 0; i < k->nshared; i++) {
    t->sh = k->shared[i].buffer;
    t->a = ir_var_new(p->ctx, "tree_a", v->dtype, IR_VAR_INDEX);
    t->b = ir_var_new(p->ctx, "tree_b", v->dtype, IR_VAR_INDEX);
    if (!t->a || !t->b)
      return false;
    t->nout = t->nsh = 0;
    ir_mutator m = {.ctx = p->ctx, .data = t};
    m.expr[IR_LOAD] = tm_load;
    *f = ir_mutate_expr(&m, v);
    if (*f && t->nsh == 1 && t->nout == 1 && !ir_expr_uses(*f, t->k) &&
        is_shared(k, t->sh, &count) && count >= n && t->sh != t->out &&
        ir_dtype_eq(ir_elem(t->sh_load->dtype), v->dtype))
      return true;
  }
  t->sh = NULL;
  return false;
}

/* The constant stride of e in var (e(var + 1) - e(var)), with e affine in var: false otherwise. */
static bool stride_of(te_ctx *ctx, ir_analyzer *an, te_expr *e, te_expr *var, int64_t *stride) {
  te_expr *one = ir_add(var, ir_i64(ctx, 1)), *two = ir_add(var, ir_i64(ctx, 2));
  te_expr *e1 = ir_substitute(ctx, e, 1, &var, &one), *e2 = ir_substitute(ctx, e, 1, &var, &two);
  te_expr *d1 = e1 ? ir_simplify(an, ir_sub(e1, e)) : NULL;
  te_expr *d2 = e2 ? ir_simplify(an, ir_sub(e2, e1)) : NULL;
  int64_t a, b;
  if (!d1 || !d2 || !ir_is_const_int(d1, &a) || !ir_is_const_int(d2, &b) || a != b)
    return false;
  te_expr *zero = ir_i64(ctx, 0);
  te_expr *rest = ir_substitute(ctx, e, 1, &var, &zero);
  te_expr *back = rest ? ir_simplify(an, ir_add(rest, ir_mul(var, ir_i64(ctx, a)))) : NULL;
  *stride = a;
  return back && back == ir_simplify(an, e);
}

/* Whether e(k) gives every (k in [0, n), grouping thread) its own element: e is affine in k
   and in each grouping thread index, and the strides, smallest first, each exceed the span of
   the ones before (a mixed-radix number: distinct digits give distinct values). */
static bool layout_injective(lw_pass_ctx *p, const lw_gpu_kernel *k, const lw_gpu_tree *t,
                             unsigned grouping, int64_t n) {
  ir_analyzer *an = lw_analyzer_new(p);
  if (!an)
    return false;
  int64_t strides[4], extents[4];
  int nd = 0;
  if (!stride_of(p->ctx, an, t->sh_index, t->k, &strides[nd]))
    return false;
  extents[nd++] = n;
  for (int d = TE_THREAD_X; d <= TE_THREAD_Z; d++) {
    int64_t ext;
    if (!(grouping & (1u << d)) || !ir_is_const_int(k->block[d - TE_THREAD_X], &ext) || ext < 2)
      continue;
    if (!stride_of(p->ctx, an, t->sh_index, k->idx[d], &strides[nd]))
      return false;
    extents[nd++] = ext;
  }
  bool used[4] = {0};
  int64_t span = 0; /* the largest difference the digits placed so far make */
  for (int round = 0; round < nd; round++) {
    int best = -1;
    for (int i = 0; i < nd; i++)
      if (!used[i] && (best < 0 || llabs(strides[i]) < llabs(strides[best])))
        best = i;
    used[best] = true;
    int64_t s = llabs(strides[best]);
    if (s <= span || s > (INT64_MAX / 4) / extents[best])
      return false;
    span += s * (extents[best] - 1);
  }
  return true;
}

/* pos, parts, low and warp_ok of t from the participating dims (bits). */
static bool number_threads(te_ctx *ctx, const lw_gpu_kernel *k, lw_gpu_tree *t, unsigned part) {
  te_expr *pos = NULL;
  int64_t parts = 1, low = 1, ext[3];
  int first = -1, last = -1;
  for (int d = TE_THREAD_X; d <= TE_THREAD_Z; d++) {
    if (!ir_is_const_int(k->block[d - TE_THREAD_X], &ext[d - TE_THREAD_X]))
      return false;
    if (!(part & (1u << d)))
      continue;
    te_expr *i = k->idx[d];
    pos = pos ? ir_add(pos, ir_mul(i, ir_i64(ctx, parts))) : i;
    parts *= ext[d - TE_THREAD_X];
    first = first < 0 ? d : first;
    last = d;
  }
  if (!pos)
    return false;
  bool gaps = false, above = false;
  for (int d = TE_THREAD_X; d <= TE_THREAD_Z; d++) {
    int64_t e = ext[d - TE_THREAD_X];
    if (d < first)
      low *= e;
    else if (d > first && d < last && !(part & (1u << d)) && e > 1)
      gaps = true;
    else if (d > last && e > 1)
      above = true;
  }
  t->pos = pos, t->parts = parts, t->low = low;
  t->whole_block = low == 1 && !gaps && !above;
  t->one_dim = ext[1] == 1 && ext[2] == 1;
  int64_t per_warp = low <= 32 && 32 % low == 0 ? 32 / low : 0;
  /* groups above: a warp's pos values must not run into the next group's */
  t->warp_ok = !gaps && per_warp >= 2 &&
               (!above || parts % per_warp == 0 || (parts < per_warp && per_warp % parts == 0));
  return true;
}

/* t and f for s when it is a tree candidate (see the top of the file); false otherwise. */
bool lw_gpu_tree_match(lw_pass_ctx *p, const lw_gpu_kernel *k, ir_stmt *s, lw_gpu_tree *t,
                       te_expr **f, int64_t *n) {
  *t = (lw_gpu_tree){0};
  if (s->kind != IR_S_IF || s->nstmts < 1 || (s->nstmts > 1 && s->stmts[1]) ||
      !lw_gpu_is_single_guard(k, s->exprs[0]))
    return false;
  t->guard = s->exprs[0];
  ir_stmt *loop = s->stmts[0];
  if (loop->kind == IR_S_SEQ && loop->nstmts >= 2) {
    int np = (int)loop->nstmts - 1;
    t->prefix = np == 1 ? loop->stmts[0] : ir_seq(p->ctx, np, loop->stmts);
    loop = loop->stmts[np];
    if (!t->prefix)
      return false;
  }
  int64_t lo;
  if (loop->kind != IR_S_FOR || loop->u.loop.kind != IR_FOR_SERIAL ||
      !ir_is_const_int(IR_FOR_MIN(loop), &lo) || lo != 0 ||
      !ir_is_const_int(IR_FOR_EXTENT(loop), n) || *n < 2)
    return false;
  ir_stmt *st = IR_FOR_BODY(loop);
  if (st->kind != IR_S_STORE || st->exprs[0]->dtype.lanes != 1)
    return false;
  t->out = st->u.buffer, t->out_index = st->exprs[1], t->k = IR_FOR_VAR(loop);
  if (ir_expr_uses(t->out_index, t->k) || !match_combine(p, k, st, t, f, *n))
    return false;
  if (t->prefix && lw_gpu_stmt_uses_buffer(t->prefix, t->sh))
    return false;
  unsigned part = guard_dims(k, t->guard), grouping = 0;
  te_expr *pvars[3];
  int npv = 0;
  for (int d = TE_THREAD_X; d <= TE_THREAD_Z; d++) {
    if (part & (1u << d))
      pvars[npv++] = k->idx[d];
    else if (k->idx[d])
      grouping |= 1u << d;
  }
  if (ir_expr_uses_any(t->sh_index, npv, pvars) || ir_expr_uses_any(t->out_index, npv, pvars))
    return false;
  if (!number_threads(p->ctx, k, t, part) || *n > t->parts)
    return false;
  return layout_injective(p, k, t, grouping, *n);
}
