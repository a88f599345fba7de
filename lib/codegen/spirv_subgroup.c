/* spirv_subgroup.c — the subgroup intrinsics (intrinsics.def, gpu_tree_subgroup.c) in SPIR-V.
 *
 *   subgroup_add/mul/min/max(v)  OpGroupNonUniform{F,I}Add, {F,I}Mul, {F,S,U}Min, {F,S,U}Max
 *                                with scope Subgroup and group operation Reduce
 *   subgroup_elect()             OpGroupNonUniformElect
 *   subgroup_id(), num_subgroups()  the SubgroupId / NumSubgroups built-ins (u32 Input
 *                                variables, declared on first use, in the entry's interface),
 *                                narrow i64 values (spirv.h)
 * Each use turns on CG_SPV_SUBGROUP: the GroupNonUniform and GroupNonUniformArithmetic
 * capabilities, which the host checks against the device's subgroup properties. The kernel's
 * module without them is the other side of has_subgroup_ops() (spirv_stmt.c).
 */
#include "spirv.h"

static SpvOp reduce_op(ir_intrin id, te_dtype t) {
  bool f = ir_is_float(t), sg = ir_is_int(t);
  switch (id) {
  case IR_INTRIN_SUBGROUP_ADD:
    return f ? SpvOpGroupNonUniformFAdd : SpvOpGroupNonUniformIAdd;
  case IR_INTRIN_SUBGROUP_MUL:
    return f ? SpvOpGroupNonUniformFMul : SpvOpGroupNonUniformIMul;
  case IR_INTRIN_SUBGROUP_MIN:
    return f ? SpvOpGroupNonUniformFMin : sg ? SpvOpGroupNonUniformSMin : SpvOpGroupNonUniformUMin;
  default:
    return f ? SpvOpGroupNonUniformFMax : sg ? SpvOpGroupNonUniformSMax : SpvOpGroupNonUniformUMax;
  }
}

/* The value of a u32 built-in Input variable, as a narrow i64. */
static cg_spv_val builtin_u32(cg_spv *s, SpvBuiltIn bi, uint32_t *var, const char *name) {
  if (!*var) {
    *var = cg_spv_id(s);
    uint32_t pin = cg_spv_t_ptr(s, SpvStorageClassInput, s->t_u32);
    cg_spv_op(s, &s->globals, SpvOpVariable, 3, (uint32_t[]){pin, *var, SpvStorageClassInput});
    cg_spv_decorate(s, *var, SpvDecorationBuiltIn, 1, (uint32_t[]){(uint32_t)bi});
    cg_spv_name(s, *var, name);
  }
  uint32_t u = cg_spv_inst(s, SpvOpLoad, s->t_u32, 1, var);
  return (cg_spv_val){cg_spv_inst(s, SpvOpBitcast, s->t_i32, 1, &u), true};
}

bool cg_spv_is_subgroup_op(ir_intrin id) {
  return id == IR_INTRIN_SUBGROUP_ADD || id == IR_INTRIN_SUBGROUP_MUL ||
         id == IR_INTRIN_SUBGROUP_MIN || id == IR_INTRIN_SUBGROUP_MAX ||
         id == IR_INTRIN_SUBGROUP_ELECT || id == IR_INTRIN_SUBGROUP_ID ||
         id == IR_INTRIN_NUM_SUBGROUPS;
}

cg_spv_val cg_spv_subgroup_op(cg_spv *s, te_expr *e) {
  s->features |= CG_SPV_SUBGROUP;
  uint32_t scope = cg_spv_const_u32(s, SpvScopeSubgroup);
  switch (e->u.call) {
  case IR_INTRIN_SUBGROUP_ELECT:
    return (cg_spv_val){cg_spv_inst(s, SpvOpGroupNonUniformElect, s->t_bool, 1, &scope), false};
  case IR_INTRIN_SUBGROUP_ID:
    return builtin_u32(s, SpvBuiltInSubgroupId, &s->subgroup_id_var, "SubgroupId");
  case IR_INTRIN_NUM_SUBGROUPS:
    return builtin_u32(s, SpvBuiltInNumSubgroups, &s->num_subgroups_var, "NumSubgroups");
  default: {
    te_dtype t = e->dtype;
    cg_spv_val v = cg_spv_expr(s, e->args[0]);
    if (!v.id)
      return v;
    uint32_t x = cg_spv_widen(s, v, t); /* a real 64-bit value for 64-bit data */
    uint32_t r = cg_spv_inst(s, reduce_op(e->u.call, t), cg_spv_t_dtype(s, t), 3,
                             (uint32_t[]){scope, SpvGroupOperationReduce, x});
    return (cg_spv_val){r, false};
  }
  }
}
