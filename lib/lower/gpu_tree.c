/* gpu_tree.c — cross-thread reductions as trees in shared memory (after gpu_barrier.c).
 *
 * An rfactor'd reduction bound to threadIdx.x leaves its partial results in a shared buffer,
 * and the final reduction runs in one thread (gpu_rewrite.c's single-thread guard):
 *
 *   barrier()                                   (placed by gpu_barrier.c)
 *   if (threadIdx.x == 0) { for (k, 0, N) { OUT[o] = f(OUT[o], SH[k]) } }
 *
 * N - 1 combinations in a row. When the kernel's block is one-dimensional, N >= 2, the loop is
 * a top-level statement of the kernel (not inside a loop), f reads OUT[o] and SH[k] once each
 * and k nowhere else, and no later statement touches SH (the tree overwrites it), the
 * statement becomes log2(N) steps of the block's threads, P the power of two >= N:
 *
 *   for s = P/2, P/4, ..., 1:
 *     if (threadIdx.x < min(s, N - s)) { SH[threadIdx.x] = f(SH[threadIdx.x], SH[threadIdx.x + s])
 * } barrier() if (threadIdx.x == 0) { OUT[o] = f(OUT[o], SH[0]) }
 *
 * This reorders the combinations: f is assumed associative and commutative, as every
 * reduction te has is (sum, product, min, max; a float sum rounds differently, within the
 * tolerance of a reordered sum). The steps are straight-line code at the kernel's top level,
 * so every barrier is in block-uniform control flow (gpu.h). On cuda the matched statement
 * becomes warp shuffles instead (gpu_tree_warp.c), except in a kernel holding a tensor-core
 * tile (a warp per thread, gpu_warp.c), which keeps the shared-memory steps. On vulkan a sum,
 * product, max or min over partials of every thread of the block also gets a subgroup form,
 * chosen at run time by the device's support (gpu_tree_subgroup.c).
 */
#include "gpu_lower.h"
#include "target/target.h"

static te_expr *tm_load(ir_mutator *m, te_expr *e) {
  lw_gpu_tree *t = m->data;
  if (e->u.buffer == t->sh && e->args[0] == t->k && e->dtype.lanes == 1) {
    t->nsh++;
    t->sh_load = e;
    return t->b;
  }
  if (e->u.buffer == t->out && e->args[0] == t->out_index && e->dtype.lanes == 1) {
    t->nout++;
    t->out_load = e;
    return t->a;
  }
  return ir_mutate_expr_children(m, e);
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
static bool stmt_uses_buffer(ir_stmt *s, ir_buffer *b) {
  uses_buf u = {b};
  ir_visitor v = {0};
  v.expr[IR_LOAD] = ub_load;
  v.stmt[IR_S_STORE] = ub_store;
  v.data = &u;
  return ir_visit_stmt(&v, s) == IR_ABORT;
}

static bool is_shared(const lw_gpu_kernel *k, ir_buffer *b, int64_t *count) {
  for (int i = 0; i < k->nshared; i++)
    if (k->shared[i].buffer == b) {
      *count = k->shared[i].count;
      return true;
    }
  return false;
}

/* The combine of s, `if (single guard) for (k, 0, N) OUT[o] = f(OUT[o], SH[k])`, into t and
 *f (over t->a, t->b); false when s is not of that form. */
static bool tree_candidate(lw_pass_ctx *p, const lw_gpu_kernel *k, ir_stmt *s, lw_gpu_tree *t,
                           te_expr **f, int64_t *n) {
  if (s->kind != IR_S_IF || s->nstmts < 1 || (s->nstmts > 1 && s->stmts[1]) ||
      !lw_gpu_is_single_guard(k, s->exprs[0]))
    return false;
  ir_stmt *loop = s->stmts[0];
  int64_t lo, block;
  if (loop->kind != IR_S_FOR || loop->u.loop.kind != IR_FOR_SERIAL ||
      !ir_is_const_int(IR_FOR_MIN(loop), &lo) || lo != 0 ||
      !ir_is_const_int(IR_FOR_EXTENT(loop), n) || *n < 2 || !ir_is_const_int(k->block[0], &block) ||
      *n > block)
    return false;
  ir_stmt *st = IR_FOR_BODY(loop);
  if (st->kind != IR_S_STORE || st->exprs[0]->dtype.lanes != 1)
    return false;
  *t = (lw_gpu_tree){.out = st->u.buffer, .out_index = st->exprs[1], .k = IR_FOR_VAR(loop)};
  if (ir_expr_uses(t->out_index, t->k))
    return false;
  /* SH: the shared buffer the value reads at k */
  te_expr *v = st->exprs[0];
  int64_t count = 0;
  for (int i = 0; i < k->nshared && !t->sh; i++) {
    t->sh = k->shared[i].buffer;
    t->a = ir_var_new(p->ctx, "tree_a", v->dtype, IR_VAR_INDEX);
    t->b = ir_var_new(p->ctx, "tree_b", v->dtype, IR_VAR_INDEX);
    if (!t->a || !t->b)
      return false;
    t->nout = t->nsh = 0;
    ir_mutator m = {.ctx = p->ctx, .data = t};
    m.expr[IR_LOAD] = tm_load;
    *f = ir_mutate_expr(&m, v);
    if (!*f || t->nsh != 1 || t->nout != 1 || ir_expr_uses(*f, t->k) ||
        !is_shared(k, t->sh, &count) || count < *n || t->sh == t->out ||
        !ir_dtype_eq(ir_elem(t->sh_load->dtype), v->dtype))
      t->sh = NULL;
  }
  return t->sh != NULL;
}

/* f(x, y) for the match's combine. */
te_expr *lw_gpu_tree_apply(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *f, te_expr *x,
                           te_expr *y) {
  return ir_substitute(p->ctx, f, 2, (te_expr *const[]){t->a, t->b}, (te_expr *const[]){x, y});
}

/* The tree steps and the final combine replacing s (the candidate). */
static ir_stmt *tree_build(lw_pass_ctx *p, const lw_gpu_kernel *k, ir_stmt *s, const lw_gpu_tree *t,
                           te_expr *f, int64_t n) {
  te_ctx *ctx = p->ctx;
  te_expr *tid = k->idx[TE_THREAD_X];
  te_dtype et = t->sh_load->dtype;
  int64_t pow2 = 1;
  while (pow2 < n)
    pow2 *= 2;
  ir_stmt *steps[2 * 64 + 1];
  int ns = 0;
  for (int64_t stride = pow2 / 2; stride >= 1; stride /= 2) {
    int64_t lim = stride < n - stride ? stride : n - stride;
    te_expr *other = ir_load(t->sh, et, ir_add(tid, ir_int(ctx, TE_I64, stride)));
    te_expr *mine = ir_load(t->sh, et, tid);
    te_expr *val = mine && other ? lw_gpu_tree_apply(p, t, f, mine, other) : NULL;
    ir_stmt *store = val ? ir_store(t->sh, val, tid) : NULL;
    te_expr *guard = ir_lt(tid, ir_int(ctx, TE_I64, lim));
    steps[ns++] = store && guard ? ir_if(guard, store, NULL) : NULL;
    steps[ns++] = ir_barrier(ctx);
  }
  te_expr *first = ir_load(t->sh, et, ir_int(ctx, TE_I64, 0));
  te_expr *outv = ir_load(t->out, t->out_load->dtype, t->out_index);
  te_expr *fin = first && outv ? lw_gpu_tree_apply(p, t, f, outv, first) : NULL;
  ir_stmt *st = fin ? ir_store(t->out, fin, t->out_index) : NULL;
  steps[ns++] = st ? ir_if(s->exprs[0], st, NULL) : NULL;
  for (int i = 0; i < ns; i++)
    if (!steps[i])
      return NULL;
  return ir_seq(ctx, ns, steps);
}

ir_stmt *lw_gpu_tree_reductions(lw_pass_ctx *p, lw_gpu_kernel *k, ir_stmt *body) {
  if (k->idx[TE_THREAD_Y] || k->idx[TE_THREAD_Z] || !k->idx[TE_THREAD_X])
    return body;
  /* cuda: warp shuffles; a kernel with a tensor-core tile runs a warp per thread (gpu_warp.c),
     whose lanes are not the threads the tree is written for */
  bool use_warps = p->target->kind == TG_CUDA && !lw_gpu_has_mma(body);
  bool seq = body->kind == IR_S_SEQ;
  int n = seq ? (int)body->nstmts : 1;
  ir_stmt **items = ir_alloc(p->ctx, sizeof *items * (size_t)n);
  if (!items)
    return NULL;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    ir_stmt *s = seq ? body->stmts[i] : body;
    items[i] = s;
    lw_gpu_tree t;
    te_expr *f = NULL;
    int64_t extent = 0;
    if (!tree_candidate(p, k, s, &t, &f, &extent)) {
      if (ir_failed(p->ctx))
        return NULL;
      continue;
    }
    bool later_use = false;
    for (int j = i + 1; j < n && !later_use; j++)
      later_use = stmt_uses_buffer(body->stmts[j], t.sh);
    if (later_use)
      continue;
    if (use_warps)
      items[i] = lw_gpu_tree_warp(p, k, s, &t, f, extent); /* gpu_tree_warp.c */
    else {
      items[i] = tree_build(p, k, s, &t, f, extent);
      if (items[i] && p->target->kind == TG_VULKAN && lw_gpu_tree_subgroup_ok(k, &t, f, extent))
        items[i] = lw_gpu_tree_subgroup(p, k, s, &t, f, items[i]); /* gpu_tree_subgroup.c */
    }
    if (!items[i])
      return NULL;
    changed = true;
  }
  if (!changed)
    return body;
  k->uses_barrier = true;
  return seq ? ir_seq(p->ctx, n, items) : items[0];
}
