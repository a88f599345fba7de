/* gpu_tree.c — cross-thread reductions as trees in shared memory (after gpu_barrier.c).
 *
 * An rfactor'd reduction whose factor axis is bound to thread indices leaves its partial
 * results in a shared buffer, and the final reduction runs in one thread of each group
 * (gpu_rewrite.c's single-thread guard; groups and the match: gpu_tree_match.c):
 *
 *   barrier()                                   (placed by gpu_barrier.c)
 *   if (guard) { prefix; for (k, 0, N) { OUT[o] = f(OUT[o], SH[e(k)]) } }
 *
 * N - 1 combinations in a row. When it matches, the statement becomes log2(N) steps of the
 * group's threads, numbered pos (the participating thread indices linearized), P the power of
 * two >= N:
 *
 *   if (guard) { prefix }
 *   for s = P/2, P/4, ..., 1:
 *     if (pos < min(s, N - s)) { SH[e(pos)] = f(SH[e(pos)], SH[e(pos + s)]) }
 *     barrier()
 *   if (guard) { OUT[o] = f(OUT[o], SH[e(0)]) }
 *
 * In step s, thread pos < s writes the element it alone reads, and reads element pos + s,
 * which no thread writes in that step (pos + s >= s); the groups' elements are disjoint (the
 * match proves e's layout). So each step is race-free, and after the last one SH[e(0)] holds f
 * over the group's N partials. This reorders the combinations: f is assumed associative and
 * commutative, as every reduction te has is (sum, product, min, max; a float sum rounds
 * differently, within the tolerance of a reordered sum). The steps are straight-line code at
 * the kernel's top level, so every barrier is in block-uniform control flow (gpu.h). On cuda the
 * matched statement becomes warp shuffles instead (gpu_tree_warp.c) where the warps line up with
 * the groups (lw_gpu_tree.warp_ok), except in a kernel holding a tensor-core tile (a warp per
 * thread, gpu_warp.c), which keeps the shared-memory steps. On vulkan a sum, product, max or min
 * over partials of every thread of the block also gets a subgroup form, chosen at run time by the
 * device's support (gpu_tree_subgroup.c).
 */
#include "gpu_lower.h"
#include "target/target.h"

te_expr *lw_gpu_tree_sh_at(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *kx) {
  te_expr *k = t->k;
  return kx ? ir_substitute(p->ctx, t->sh_index, 1, &k, &kx) : NULL;
}

/* f(x, y) for the match's combine. */
te_expr *lw_gpu_tree_apply(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *f, te_expr *x,
                           te_expr *y) {
  return ir_substitute(p->ctx, f, 2, (te_expr *const[]){t->a, t->b}, (te_expr *const[]){x, y});
}

/* The steps replacing the match (after its prefix). */
static ir_stmt *tree_build(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *f, int64_t n) {
  te_ctx *ctx = p->ctx;
  te_dtype et = t->sh_load->dtype;
  int64_t pow2 = 1;
  while (pow2 < n)
    pow2 *= 2;
  ir_stmt *steps[2 * 64 + 1];
  int ns = 0;
  te_expr *mine_at = lw_gpu_tree_sh_at(p, t, t->pos);
  for (int64_t stride = pow2 / 2; stride >= 1; stride /= 2) {
    int64_t lim = stride < n - stride ? stride : n - stride;
    te_expr *other_at = lw_gpu_tree_sh_at(p, t, ir_add(t->pos, ir_i64(ctx, stride)));
    te_expr *other = other_at ? ir_load(t->sh, et, other_at) : NULL;
    te_expr *mine = mine_at ? ir_load(t->sh, et, mine_at) : NULL;
    te_expr *val = mine && other ? lw_gpu_tree_apply(p, t, f, mine, other) : NULL;
    ir_stmt *store = val ? ir_store(t->sh, val, mine_at) : NULL;
    te_expr *guard = ir_lt(t->pos, ir_i64(ctx, lim));
    steps[ns++] = store && guard ? ir_if(guard, store, NULL) : NULL;
    steps[ns++] = ir_barrier(ctx);
  }
  te_expr *first = ir_load(t->sh, et, lw_gpu_tree_sh_at(p, t, ir_i64(ctx, 0)));
  te_expr *outv = ir_load(t->out, t->out_load->dtype, t->out_index);
  te_expr *fin = first && outv ? lw_gpu_tree_apply(p, t, f, outv, first) : NULL;
  ir_stmt *st = fin ? ir_store(t->out, fin, t->out_index) : NULL;
  steps[ns++] = st ? ir_if(t->guard, st, NULL) : NULL;
  for (int i = 0; i < ns; i++)
    if (!steps[i])
      return NULL;
  return ir_seq(ctx, ns, steps);
}

/* The statement replacing the match: its prefix, then the tree for the target. */
static ir_stmt *tree_for_target(lw_pass_ctx *p, ir_stmt *body, const lw_gpu_tree *t, te_expr *f,
                                int64_t n) {
  /* cuda: warp shuffles; a kernel with a tensor-core tile runs a warp per thread (gpu_warp.c),
     whose lanes are not the threads the tree is written for */
  ir_stmt *tree;
  if (p->target->kind == TG_CUDA && !lw_gpu_has_mma(body) && t->warp_ok)
    tree = lw_gpu_tree_warp(p, t, f, n); /* gpu_tree_warp.c */
  else {
    tree = tree_build(p, t, f, n);
    if (tree && p->target->kind == TG_VULKAN && lw_gpu_tree_subgroup_ok(t, f, n))
      tree = lw_gpu_tree_subgroup(p, t, f, tree); /* gpu_tree_subgroup.c */
  }
  if (!tree || !t->prefix)
    return tree;
  ir_stmt *prefix = ir_if(t->guard, t->prefix, NULL);
  return prefix ? ir_seq(p->ctx, 2, (ir_stmt *const[]){prefix, tree}) : NULL;
}

ir_stmt *lw_gpu_tree_reductions(lw_pass_ctx *p, lw_gpu_kernel *k, ir_stmt *body) {
  if (!k->idx[TE_THREAD_X] && !k->idx[TE_THREAD_Y] && !k->idx[TE_THREAD_Z])
    return body;
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
    if (!lw_gpu_tree_match(p, k, s, &t, &f, &extent)) {
      if (ir_failed(p->ctx))
        return NULL;
      continue;
    }
    bool later_use = false;
    for (int j = i + 1; j < n && !later_use; j++)
      later_use = lw_gpu_stmt_uses_buffer(body->stmts[j], t.sh);
    if (later_use)
      continue;
    items[i] = tree_for_target(p, body, &t, f, extent);
    if (!items[i])
      return NULL;
    changed = true;
  }
  if (!changed)
    return body;
  k->uses_barrier = true;
  return seq ? ir_seq(p->ctx, n, items) : items[0];
}
