/* gpu_warp.c — kernels holding a tensor-core tile (mma_m16n8k16/k32) run a warp per thread.
 *
 * Needs: gpu_split and gpu_barriers are done (kernels, launch extents, barriers and trees are
 * made for the body's own threads).
 * Guarantees, for each kernel whose body holds an mma store (ir_is_mma_call; gpu.h,
 * lw_gpu_kernel::lane):
 *   - the launch's x extent is 32 times the body's (checked against the target's threads per
 *     block when constant), the body's threadIdx.x is the hardware one / 32 and lane is % 32;
 *   - every other store to a global or shared buffer is `if (laneid == 0) store`.
 * Why: mma.sync is one instruction of a whole warp, each lane holding fragments of the three
 * tiles, while te's kernels are written for one thread. Letting a warp stand for each thread
 * keeps that model: every condition and loop of the body depends only on block and (warp)
 * thread indices and parameters, so the 32 lanes take the same path and all reach the mma
 * together (.aligned); the rest of the body runs in every lane, its stores made once (lane 0,
 * so a read-modify-write is never applied twice). Local buffers are per lane and written by
 * every lane. Kernels without the call are left as they are.
 */
#include <stdio.h>

#include "gpu_lower.h"

static int find_mma(ir_visitor *v, te_expr *e) {
  if (ir_is_mma_call(e)) {
    *(bool *)v->data = true;
    return IR_ABORT;
  }
  return IR_CONTINUE;
}

bool lw_gpu_has_mma(ir_stmt *s) {
  bool found = false;
  ir_visitor v = {.data = &found};
  v.expr[IR_CALL] = find_mma;
  ir_visit_stmt(&v, s);
  return found;
}

static ir_stmt *lane0_store(ir_mutator *m, ir_stmt *s) {
  te_expr *lane = m->data, *v = s->exprs[0];
  if (s->u.buffer->scope == TE_SCOPE_LOCAL || ir_is_mma_call(v))
    return s;
  return ir_if(ir_binary(IR_EQ, lane, ir_i64(m->ctx, 0)), s, NULL);
}

static bool make_warp_kernel(lw_pass_ctx *p, lw_gpu_kernel *k) {
  te_ctx *ctx = p->ctx;
  int64_t x = 0, y = 1, z = 1;
  if (ir_is_const_int(k->block[0], &x) && ir_is_const_int(k->block[1], &y) &&
      ir_is_const_int(k->block[2], &z) && 32 * x * y * z > p->target->max_threads_per_block) {
    ir_error(ctx, TE_ERR_SCHEDULE,
             "%s: kernel '%s': its tensor-core tile (mma.sync) runs a warp of 32 hardware "
             "threads for each of its %lld threads: %lld threads a block exceed the target's %d "
             "(target '%s'); bind fewer threads",
             p->api, k->name, (long long)(x * y * z), (long long)(32 * x * y * z),
             p->target->max_threads_per_block, p->target->str);
    return false;
  }
  if (!(k->lane = ir_var_new(ctx, "laneid", TE_I64, IR_VAR_INDEX)))
    return false;
  k->block[0] = ir_is_const_int(k->block[0], &x) ? ir_i64(ctx, 32 * x)
                                                 : ir_binary(IR_MUL, k->block[0], ir_i64(ctx, 32));
  ir_mutator m = {.ctx = ctx, .data = k->lane};
  m.stmt[IR_S_STORE] = lane0_store;
  return (k->body = ir_mutate_stmt(&m, k->body)) != NULL;
}

ir_stmt *lw_gpu_warp(lw_pass_ctx *p, ir_stmt *s) {
  if (!lw_gpu_target(p) || !p->func->gpu)
    return s;
  lw_gpu_module *m = p->func->gpu;
  for (int i = 0; i < m->nkernels; i++)
    if (lw_gpu_has_mma(m->kernels[i].body) && !make_warp_kernel(p, &m->kernels[i]))
      return NULL;
  return s;
}
