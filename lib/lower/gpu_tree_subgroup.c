/* gpu_tree_subgroup.c — vulkan: a cross-thread sum, product, max or min through subgroup
 * operations where the device has them, the shared-memory tree where it does not.
 *
 * gpu_tree.c matched the one-thread final reduction over N partials in the shared buffer SH
 * (`if (guard) for (k, 0, N) OUT[o] = f(OUT[o], SH[e(k)])`). When f is a + b, a * b, max(a, b)
 * or min(a, b) (either order) of a 32- or 64-bit scalar and every thread of the one-dimensional
 * block holds a partial (one group, N = B threads, numbered pos = threadIdx.x), it becomes
 *
 *   if (has_subgroup_ops()) {
 *     let r = subgroup_OP(SH[e(pos)])              the reduction over each subgroup
 *     barrier()                                    every partial is read before SH is reused
 *     if (subgroup_elect()) { SH[e(subgroup_id())] = r }
 *     barrier()
 *     if (guard) { for (j, 0, num_subgroups()) { OUT[o] = f(OUT[o], SH[e(j)]) } }
 *   } else {
 *     the shared-memory tree of gpu_tree.c
 *   }
 *
 * The SPIR-V back end writes the kernel twice, once with each side (spirv_kernel.c), and the
 * host runs the subgroup one on a device whose subgroups support arithmetic in compute shaders
 * (VkPhysicalDeviceSubgroupProperties), the other elsewhere. Why this shape: Vulkan's subgroup
 * size (8 on lavapipe with AVX2, 32 on NVIDIA, 64 on AMD) and which invocations form a subgroup
 * are the device's, so the reduction is over whole subgroups (every invocation takes part, which
 * N = B makes valid; which invocation holds which partial does not matter) and their results are
 * indexed by SubgroupId, of which there are at most B (SH holds e(0 .. N - 1)). The last step is
 * serial over the B / subgroup size results.
 */
#include "gpu_lower.h"

/* The subgroup operation computing f, or -1. */
static int subgroup_op(const lw_gpu_tree *t, te_expr *f) {
  if (f->nargs != 2 ||
      !((f->args[0] == t->a && f->args[1] == t->b) || (f->args[0] == t->b && f->args[1] == t->a)))
    return -1;
  switch (f->kind) {
  case IR_ADD:
    return IR_INTRIN_SUBGROUP_ADD;
  case IR_MUL:
    return IR_INTRIN_SUBGROUP_MUL;
  case IR_MIN:
    return IR_INTRIN_SUBGROUP_MIN;
  case IR_MAX:
    return IR_INTRIN_SUBGROUP_MAX;
  default:
    return -1;
  }
}

bool lw_gpu_tree_subgroup_ok(const lw_gpu_tree *t, te_expr *f, int64_t n) {
  te_dtype et = t->sh_load->dtype;
  return subgroup_op(t, f) >= 0 && t->whole_block && t->parts == n && t->one_dim && et.lanes == 1 &&
         !ir_is_bool(et) && (et.bits == 32 || et.bits == 64) &&
         (ir_is_float(et) || ir_is_intlike(et)) && et.code != kDLBfloat;
}

ir_stmt *lw_gpu_tree_subgroup(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *f, ir_stmt *fallback) {
  te_ctx *ctx = p->ctx;
  te_dtype et = t->sh_load->dtype;
  te_expr *mine_at = lw_gpu_tree_sh_at(p, t, t->pos);
  te_expr *mine = mine_at ? ir_load(t->sh, et, mine_at) : NULL;
  te_expr *red = mine ? ir_call(ctx, (ir_intrin)subgroup_op(t, f), et, 1, &mine) : NULL;
  te_expr *r = ir_var_new(ctx, "subgroup_r", et, IR_VAR_INDEX);
  te_expr *sgid = ir_call(ctx, IR_INTRIN_SUBGROUP_ID, TE_I64, 0, NULL);
  te_expr *elect = ir_call(ctx, IR_INTRIN_SUBGROUP_ELECT, TE_BOOL, 0, NULL);
  te_expr *nsg = ir_call(ctx, IR_INTRIN_NUM_SUBGROUPS, TE_I64, 0, NULL);
  te_expr *has = ir_call(ctx, IR_INTRIN_HAS_SUBGROUP_OPS, TE_BOOL, 0, NULL);
  te_expr *keep_at = sgid ? lw_gpu_tree_sh_at(p, t, sgid) : NULL;
  ir_stmt *keep = r && keep_at ? ir_store(t->sh, r, keep_at) : NULL;
  ir_stmt *elected = keep && elect ? ir_if(elect, keep, NULL) : NULL;
  /* the final combine: the serial loop over the subgroups' results */
  te_expr *j = ir_var_new(ctx, "subgroup_j", TE_I64, IR_VAR_INDEX);
  te_expr *outv = ir_load(t->out, t->out_load->dtype, t->out_index);
  te_expr *part_at = j ? lw_gpu_tree_sh_at(p, t, j) : NULL;
  te_expr *part = part_at ? ir_load(t->sh, et, part_at) : NULL;
  te_expr *fin = outv && part ? lw_gpu_tree_apply(p, t, f, outv, part) : NULL;
  ir_stmt *st = fin ? ir_store(t->out, fin, t->out_index) : NULL;
  ir_stmt *loop =
      st && nsg ? ir_for(j, ir_i64(ctx, 0), nsg, IR_FOR_SERIAL, (te_thread_tag)0, st) : NULL;
  ir_stmt *last = loop ? ir_if(t->guard, loop, NULL) : NULL;
  ir_stmt *b1 = ir_barrier(ctx), *b2 = ir_barrier(ctx);
  if (!red || !elected || !last || !b1 || !b2 || !has)
    return NULL;
  ir_stmt *body = ir_seq(ctx, 4, (ir_stmt *const[]){b1, elected, b2, last});
  ir_stmt *with = body ? ir_let_stmt(r, red, body) : NULL;
  return with ? ir_if(has, with, fallback) : NULL;
}
