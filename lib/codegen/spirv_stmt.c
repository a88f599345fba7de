/* spirv_stmt.c — statements to SPIR-V, with structured control flow.
 *
 * Vulkan requires structured control flow: every conditional branch is preceded by
 * OpSelectionMerge naming the block where the two paths meet, and every loop has a header block
 * with OpLoopMerge naming its merge and continue blocks. The IR's statements map directly:
 *
 *   IF (c) T else E        OpSelectionMerge %m; OpBranchConditional c %t %e|%m
 *                          %t: T; OpBranch %m   [%e: E; OpBranch %m]   %m:
 *   FOR (v, min, extent)   store min to v's Function variable; compute end = min + extent
 *                          %h: OpLoopMerge %m %c; OpBranch %t
 *                          %t: v < end ? %b : %m   (OpBranchConditional)
 *                          %b: body; OpBranch %c
 *                          %c: v = v + 1; OpBranch %h   %m:
 *
 * A loop variable lives in a Function-storage variable (read with OpLoad at each use; drivers
 * promote it to a register), so no phi nodes are needed; it is narrow (32-bit, spirv.h).
 * UNROLLED loops get the Unroll loop control; VECTORIZED loops that reach here (the vectorizer's
 * fallback) run as serial loops, which is their meaning.
 *
 * BARRIER is OpControlBarrier(Workgroup, Workgroup, AcquireRelease | WorkgroupMemory): every
 * invocation of the workgroup waits, and workgroup-memory writes before it are visible after.
 */
#include "spirv.h"

static bool spv_seq(cg_spv *s, ir_stmt *st) {
  for (uint32_t i = 0; i < st->nstmts; i++)
    if (st->stmts[i] && !cg_spv_stmt(s, st->stmts[i]))
      return false;
  return true;
}

static bool spv_store(cg_spv *s, ir_stmt *st) {
  te_expr *value = st->exprs[0];
  cg_spv_val v = cg_spv_expr(s, value);
  uint32_t idx = v.id ? cg_spv_index(s, st->exprs[1]) : 0;
  cg_spv_buf *b = NULL;
  uint32_t ptr = idx ? cg_spv_elem_ptr(s, st->u.buffer, idx, &b) : 0;
  if (!ptr)
    return false;
  uint32_t id = cg_spv_widen(s, v, value->dtype);
  if (ir_is_bool(value->dtype)) {
    te_dtype u8 = {kDLUInt, 8, 1};
    id = cg_spv_inst(s, SpvOpSelect, b->mem_type, 3,
                     (uint32_t[]){id, cg_spv_const_int(s, u8, 1), cg_spv_const_int(s, u8, 0)});
  }
  cg_spv_op(s, &s->code, SpvOpStore, 2, (uint32_t[]){ptr, id});
  cg_spv_cache_clear(s);
  return true;
}

static bool spv_if(cg_spv *s, ir_stmt *st) {
  te_expr *cond = st->exprs[0];
  if (cond->kind == IR_CALL && cond->u.call == IR_INTRIN_HAS_SUBGROUP_OPS) {
    /* one side per module (spirv_kernel.c writes the kernel with each) */
    ir_stmt *side = s->subgroups ? st->stmts[0] : st->nstmts > 1 ? st->stmts[1] : NULL;
    return !side || cg_spv_stmt(s, side);
  }
  cg_spv_val c = cg_spv_expr(s, st->exprs[0]);
  if (!c.id)
    return false;
  ir_stmt *then_s = st->stmts[0], *else_s = st->nstmts > 1 ? st->stmts[1] : NULL;
  uint32_t lt = cg_spv_id(s), merge = cg_spv_id(s), le = else_s ? cg_spv_id(s) : merge;
  cg_spv_op(s, &s->code, SpvOpSelectionMerge, 2, (uint32_t[]){merge, SpvSelectionControlMaskNone});
  cg_spv_op(s, &s->code, SpvOpBranchConditional, 3, (uint32_t[]){c.id, lt, le});
  cg_spv_label(s, lt);
  if (then_s && !cg_spv_stmt(s, then_s))
    return false;
  cg_spv_branch(s, merge);
  if (else_s) {
    cg_spv_label(s, le);
    if (!cg_spv_stmt(s, else_s))
      return false;
    cg_spv_branch(s, merge);
  }
  cg_spv_label(s, merge);
  return true;
}

/* A narrow 32-bit form of a loop bound. */
static uint32_t spv_bound(cg_spv *s, te_expr *e) {
  cg_spv_val v = cg_spv_expr(s, e);
  if (!v.id)
    return 0;
  return e->dtype.bits == 64 ? cg_spv_narrow(s, v) : v.id;
}

static bool spv_for(cg_spv *s, ir_stmt *st) {
  te_expr *var = IR_FOR_VAR(st);
  if (!ir_is_int(var->dtype) || var->dtype.bits < 32) {
    ir_error(s->ctx, TE_ERR_UNSUPPORTED, "te_build: kernel '%s': loop variable '%s' is not i32/i64",
             s->kernel, var->u.var.name);
    return false;
  }
  uint32_t lo = spv_bound(s, IR_FOR_MIN(st));
  uint32_t ext = lo ? spv_bound(s, IR_FOR_EXTENT(st)) : 0;
  if (!ext)
    return false;
  uint32_t i32 = s->t_i32;
  uint32_t end = cg_spv_inst(s, SpvOpIAdd, i32, 2, (uint32_t[]){lo, ext});
  uint32_t ptr = cg_spv_id(s);
  cg_spv_op(
      s, &s->fvars, SpvOpVariable, 3,
      (uint32_t[]){cg_spv_t_ptr(s, SpvStorageClassFunction, i32), ptr, SpvStorageClassFunction});
  cg_spv_name(s, ptr, var->u.var.name);
  cg_spv_op(s, &s->code, SpvOpStore, 2, (uint32_t[]){ptr, lo});
  uint32_t header = cg_spv_id(s), test = cg_spv_id(s), body = cg_spv_id(s);
  uint32_t cont = cg_spv_id(s), merge = cg_spv_id(s);
  cg_spv_branch(s, header);

  cg_spv_label(s, header);
  uint32_t control =
      st->u.loop.kind == IR_FOR_UNROLLED ? SpvLoopControlUnrollMask : SpvLoopControlMaskNone;
  cg_spv_op(s, &s->code, SpvOpLoopMerge, 3, (uint32_t[]){merge, cont, control});
  cg_spv_branch(s, test);

  cg_spv_label(s, test);
  uint32_t i = cg_spv_inst(s, SpvOpLoad, i32, 1, &ptr);
  uint32_t c = cg_spv_inst(s, SpvOpSLessThan, s->t_bool, 2, (uint32_t[]){i, end});
  cg_spv_op(s, &s->code, SpvOpBranchConditional, 3, (uint32_t[]){c, body, merge});
  s->block = 0;

  cg_spv_label(s, body);
  cg_spv_binding *b = ir_alloc(s->ctx, sizeof *b);
  if (!b)
    return false;
  *b = (cg_spv_binding){ptr, true, true};
  cg_spv_binding *old = cg_spv_bind(s, var, b);
  bool ok = !IR_FOR_BODY(st) || cg_spv_stmt(s, IR_FOR_BODY(st));
  ir_map_put(s->vars, var, old);
  if (!ok)
    return false;
  cg_spv_branch(s, cont);

  cg_spv_label(s, cont);
  uint32_t i2 = cg_spv_inst(s, SpvOpLoad, i32, 1, &ptr);
  uint32_t inc = cg_spv_inst(s, SpvOpIAdd, i32, 2, (uint32_t[]){i2, cg_spv_const_i32(s, 1)});
  cg_spv_op(s, &s->code, SpvOpStore, 2, (uint32_t[]){ptr, inc});
  cg_spv_branch(s, header);
  cg_spv_label(s, merge);
  return true;
}

static bool spv_let_stmt(cg_spv *s, ir_stmt *st) {
  cg_spv_val v = cg_spv_expr(s, st->exprs[1]);
  cg_spv_binding *b = v.id ? ir_alloc(s->ctx, sizeof *b) : NULL;
  if (!b)
    return false;
  *b = (cg_spv_binding){v.id, v.narrow, false};
  cg_spv_binding *old = cg_spv_bind(s, st->exprs[0], b);
  bool ok = !st->stmts[0] || cg_spv_stmt(s, st->stmts[0]);
  ir_map_put(s->vars, st->exprs[0], old);
  return ok;
}

static void spv_barrier(cg_spv *s) {
  uint32_t wg = cg_spv_const_u32(s, SpvScopeWorkgroup);
  uint32_t sem = cg_spv_const_u32(s, SpvMemorySemanticsAcquireReleaseMask |
                                         SpvMemorySemanticsWorkgroupMemoryMask);
  cg_spv_op(s, &s->code, SpvOpControlBarrier, 3, (uint32_t[]){wg, wg, sem});
  cg_spv_cache_clear(s);
}

bool cg_spv_stmt(cg_spv *s, ir_stmt *st) {
  if (!st)
    return true;
  switch ((ir_stmt_kind)st->kind) {
  case IR_S_SEQ:
    return spv_seq(s, st);
  case IR_S_STORE:
    return spv_store(s, st);
  case IR_S_IF:
    return spv_if(s, st);
  case IR_S_FOR:
    if (st->u.loop.kind == IR_FOR_SERIAL || st->u.loop.kind == IR_FOR_UNROLLED ||
        st->u.loop.kind == IR_FOR_VECTORIZED)
      return spv_for(s, st);
    break;
  case IR_S_LET_STMT:
    return spv_let_stmt(s, st);
  case IR_S_ATTR:
    return !st->stmts[0] || cg_spv_stmt(s, st->stmts[0]);
  case IR_S_EVALUATE:
    return cg_spv_expr(s, st->exprs[0]).id != 0;
  case IR_S_BARRIER:
    spv_barrier(s);
    return true;
  default:
    break;
  }
  ir_error(s->ctx, TE_ERR_INTERNAL,
           "internal: te_build: kernel '%s': '%s' statement%s cannot reach SPIR-V generation "
           "(gpu_split removes it)",
           s->kernel, ir_stmt_kind_name[st->kind],
           st->kind == IR_S_FOR ? " of this loop kind" : "");
  return false;
}
