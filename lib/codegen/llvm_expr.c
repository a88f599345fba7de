/* llvm_expr.c — expressions of the lowered IR as LLVM values.
 *
 * Every expression kind that can reach code generation (after storage flattening: no ACCESS,
 * no REDUCE) has a case here. Semantics follow ir.h:
 *   - integers wrap; signedness picks the instruction (sdiv/udiv, icmp slt/ult, sext/zext);
 *   - FLOORDIV/FLOORMOD on signed integers round towards -inf: C's quotient/remainder plus a
 *     correction when the remainder is nonzero and its sign differs from the divisor's (LLVM
 *     folds the correction away when it knows the signs, e.g. a positive constant divisor);
 *     on unsigned integers they are udiv/urem; TRUNCDIV/TRUNCMOD are sdiv/srem (udiv/urem);
 *   - float comparisons are ordered, except != which is unordered (true for NaN, as in C);
 *   - float min/max are fcmp + select;
 *   - float -> int casts truncate (fptosi/fptoui), bool -> anything is a zero extension;
 *   - fadd, fsub and fmul carry the `contract` fast-math flag (ir.h allows contracting a*b+c
 *     into an fma, and nothing else), so LLVM fuses sums of products on FMA targets;
 *   - inside masked vector code the divisor of an integer vector division is 1 in the lanes
 *     that are off (their operands may come from masked loads: 0), and a scalar division's
 *     divisor is 1 where it is 0 (it runs even when every lane is off), so neither can trap.
 * LET binds its variable for its body only (the previous binding is restored).
 */
#include "llvm_cg.h"

LLVMValueRef cg_bind(cg_llvm *cg, te_expr *var, LLVMValueRef value) {
  LLVMValueRef prev = ir_map_get(cg->vars, var);
  if (!ir_map_put(cg->vars, var, value))
    return prev;
  return prev;
}

static LLVMValueRef cg_var(cg_llvm *cg, te_expr *e) {
  LLVMValueRef v = ir_map_get(cg->vars, e);
  if (!v)
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': variable '%s' is not bound",
             cg->kernel, e->u.var.name ? e->u.var.name : "?");
  return v;
}

/* Signed floor division / modulo from C's truncating ones. */
static LLVMValueRef cg_floor_divmod(cg_llvm *cg, bool is_mod, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = cg->b;
  LLVMTypeRef t = LLVMTypeOf(a);
  LLVMValueRef q = LLVMBuildSDiv(B, a, b, "");
  LLVMValueRef r = LLVMBuildSRem(B, a, b, "");
  LLVMValueRef zero = LLVMConstNull(t);
  LLVMValueRef nonzero = LLVMBuildICmp(B, LLVMIntNE, r, zero, "");
  LLVMValueRef signs_differ = LLVMBuildICmp(B, LLVMIntSLT, LLVMBuildXor(B, r, b, ""), zero, "");
  LLVMValueRef adjust = LLVMBuildAnd(B, nonzero, signs_differ, "");
  if (is_mod)
    return LLVMBuildSelect(B, adjust, LLVMBuildAdd(B, r, b, ""), r, "fmod");
  bool vec = LLVMGetTypeKind(t) == LLVMVectorTypeKind;
  LLVMValueRef one = LLVMConstInt(vec ? LLVMGetElementType(t) : t, 1, 0);
  if (vec)
    one = cg_splat(cg, one, (int)LLVMGetVectorSize(t));
  return LLVMBuildSelect(B, adjust, LLVMBuildSub(B, q, one, ""), q, "fdiv");
}

/* if_then_else(c, t, f) with one condition for all lanes: a branch to the side taken, whose
   value comes out through a phi (each side may have made blocks of its own). */
static LLVMValueRef cg_branch_choice(cg_llvm *cg, LLVMValueRef c, te_expr *t, te_expr *f) {
  LLVMBasicBlockRef then_bb = cg_new_block(cg, "ite.then"), else_bb = cg_new_block(cg, "ite.else");
  LLVMBasicBlockRef end = cg_new_block(cg, "ite.end");
  LLVMBuildCondBr(cg->b, c, then_bb, else_bb);
  LLVMPositionBuilderAtEnd(cg->b, then_bb);
  LLVMValueRef tv = cg_expr(cg, t);
  LLVMBasicBlockRef then_end = LLVMGetInsertBlock(cg->b);
  LLVMBuildBr(cg->b, end);
  LLVMPositionBuilderAtEnd(cg->b, else_bb);
  LLVMValueRef fv = tv ? cg_expr(cg, f) : NULL;
  LLVMBasicBlockRef else_end = LLVMGetInsertBlock(cg->b);
  LLVMBuildBr(cg->b, end);
  LLVMPositionBuilderAtEnd(cg->b, end);
  if (!fv)
    return NULL;
  LLVMValueRef phi = LLVMBuildPhi(cg->b, LLVMTypeOf(tv), "ite");
  LLVMValueRef vals[2] = {tv, fv};
  LLVMBasicBlockRef from[2] = {then_end, else_end};
  LLVMAddIncoming(phi, vals, from, 2);
  return phi;
}

/* if_then_else(c, t, f), only the side c chooses evaluated. A vector condition: each side's
   vector loads and stores are masked with its lanes (and the enclosing mask), as inside
   `attr vector_mask` (the vectorize pass widened their scalar loads for that), then a select. */
static LLVMValueRef cg_if_then_else(cg_llvm *cg, te_expr *e) {
  LLVMValueRef c = cg_expr(cg, e->args[0]);
  if (!c)
    return NULL;
  unsigned lanes = e->args[0]->dtype.lanes;
  if (lanes == 1)
    return cg_branch_choice(cg, c, e->args[1], e->args[2]);
  LLVMValueRef saved = cg->mask;
  bool nested = saved && LLVMGetVectorSize(LLVMTypeOf(saved)) == lanes;
  LLVMValueRef not_c = LLVMBuildNot(cg->b, c, "");
  cg->mask = nested ? LLVMBuildAnd(cg->b, saved, c, "mask") : c;
  LLVMValueRef tv = cg_expr(cg, e->args[1]);
  cg->mask = nested ? LLVMBuildAnd(cg->b, saved, not_c, "mask") : not_c;
  LLVMValueRef fv = tv ? cg_expr(cg, e->args[2]) : NULL;
  cg->mask = saved;
  return fv ? LLVMBuildSelect(cg->b, c, tv, fv, "") : NULL;
}

/* b, or 1 in the lanes the current vector mask has off. */
static LLVMValueRef cg_safe_divisor(cg_llvm *cg, te_dtype t, LLVMValueRef b) {
  if (!cg->mask || LLVMIsAConstantInt(b))
    return b;
  /* A scalar division inside masked vector code runs even when every lane is off, e.g. the
     index of a fused loop whose extent the mask made 0 (i // extent): there a 0 divisor becomes
     1, whose quotient no enabled lane uses. */
  if (t.lanes == 1) {
    LLVMValueRef zero = LLVMBuildICmp(cg->b, LLVMIntEQ, b, cg_const_int(cg, t, 0), "");
    return LLVMBuildSelect(cg->b, zero, cg_const_int(cg, t, 1), b, "");
  }
  if (LLVMGetVectorSize(LLVMTypeOf(cg->mask)) != t.lanes)
    return b;
  return LLVMBuildSelect(cg->b, cg->mask, b, cg_const_int(cg, t, 1), "");
}

static LLVMValueRef cg_int_binary(cg_llvm *cg, ir_expr_kind k, te_dtype t, LLVMValueRef a,
                                  LLVMValueRef b) {
  LLVMBuilderRef B = cg->b;
  bool s = ir_is_int(t);
  if (k == IR_DIV || (k >= IR_FLOORDIV && k <= IR_TRUNCMOD))
    b = cg_safe_divisor(cg, t, b);
  switch (k) {
  case IR_ADD:
    return LLVMBuildAdd(B, a, b, "");
  case IR_SUB:
    return LLVMBuildSub(B, a, b, "");
  case IR_MUL:
    return LLVMBuildMul(B, a, b, "");
  case IR_DIV:
  case IR_FLOORDIV:
    return s ? cg_floor_divmod(cg, false, a, b) : LLVMBuildUDiv(B, a, b, "");
  case IR_FLOORMOD:
    return s ? cg_floor_divmod(cg, true, a, b) : LLVMBuildURem(B, a, b, "");
  case IR_TRUNCDIV:
    return s ? LLVMBuildSDiv(B, a, b, "") : LLVMBuildUDiv(B, a, b, "");
  case IR_TRUNCMOD:
    return s ? LLVMBuildSRem(B, a, b, "") : LLVMBuildURem(B, a, b, "");
  case IR_MIN:
    return LLVMBuildSelect(B, LLVMBuildICmp(B, s ? LLVMIntSLT : LLVMIntULT, a, b, ""), a, b, "min");
  case IR_MAX:
    return LLVMBuildSelect(B, LLVMBuildICmp(B, s ? LLVMIntSGT : LLVMIntUGT, a, b, ""), a, b, "max");
  case IR_EQ:
    return LLVMBuildICmp(B, LLVMIntEQ, a, b, "");
  case IR_NE:
    return LLVMBuildICmp(B, LLVMIntNE, a, b, "");
  case IR_LT:
    return LLVMBuildICmp(B, s ? LLVMIntSLT : LLVMIntULT, a, b, "");
  case IR_LE:
    return LLVMBuildICmp(B, s ? LLVMIntSLE : LLVMIntULE, a, b, "");
  case IR_GT:
    return LLVMBuildICmp(B, s ? LLVMIntSGT : LLVMIntUGT, a, b, "");
  case IR_GE:
    return LLVMBuildICmp(B, s ? LLVMIntSGE : LLVMIntUGE, a, b, "");
  case IR_AND:
    return LLVMBuildAnd(B, a, b, "");
  case IR_OR:
    return LLVMBuildOr(B, a, b, "");
  default:
    return NULL;
  }
}

/* v with the `contract` flag when it is an instruction (constants fold). */
static LLVMValueRef cg_contract(LLVMValueRef v) {
  if (v && LLVMIsAInstruction(v) && LLVMCanValueUseFastMathFlags(v))
    LLVMSetFastMathFlags(v, LLVMFastMathAllowContract);
  return v;
}

static LLVMValueRef cg_float_binary(cg_llvm *cg, ir_expr_kind k, LLVMValueRef a, LLVMValueRef b) {
  LLVMBuilderRef B = cg->b;
  switch (k) {
  case IR_ADD:
    return cg_contract(LLVMBuildFAdd(B, a, b, ""));
  case IR_SUB:
    return cg_contract(LLVMBuildFSub(B, a, b, ""));
  case IR_MUL:
    return cg_contract(LLVMBuildFMul(B, a, b, ""));
  case IR_DIV:
    return LLVMBuildFDiv(B, a, b, "");
  case IR_MIN:
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOLT, a, b, ""), a, b, "fmin");
  case IR_MAX:
    return LLVMBuildSelect(B, LLVMBuildFCmp(B, LLVMRealOGT, a, b, ""), a, b, "fmax");
  case IR_EQ:
    return LLVMBuildFCmp(B, LLVMRealOEQ, a, b, "");
  case IR_NE:
    return LLVMBuildFCmp(B, LLVMRealUNE, a, b, "");
  case IR_LT:
    return LLVMBuildFCmp(B, LLVMRealOLT, a, b, "");
  case IR_LE:
    return LLVMBuildFCmp(B, LLVMRealOLE, a, b, "");
  case IR_GT:
    return LLVMBuildFCmp(B, LLVMRealOGT, a, b, "");
  case IR_GE:
    return LLVMBuildFCmp(B, LLVMRealOGE, a, b, "");
  default:
    return NULL;
  }
}

static LLVMValueRef cg_binary(cg_llvm *cg, te_expr *e) {
  LLVMValueRef a = cg_expr(cg, e->args[0]);
  LLVMValueRef b = a ? cg_expr(cg, e->args[1]) : NULL;
  if (!b)
    return NULL;
  te_dtype t = e->args[0]->dtype;
  LLVMValueRef r = ir_is_float(t) ? cg_float_binary(cg, (ir_expr_kind)e->kind, a, b)
                                  : cg_int_binary(cg, (ir_expr_kind)e->kind, t, a, b);
  if (!r) {
    char buf[32];
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': '%s' on %s", cg->kernel,
             ir_expr_kind_name[e->kind], ir_dtype_name(t, buf, sizeof buf));
  }
  return r;
}

LLVMValueRef cg_cast_value(cg_llvm *cg, LLVMValueRef v, te_dtype from, te_dtype to) {
  LLVMBuilderRef B = cg->b;
  if (ir_dtype_eq(from, to))
    return v;
  LLVMTypeRef dt = cg_type(cg, to);
  if (!dt)
    return NULL;
  if (ir_is_handle(from)) /* an address as an integer (alignment and overlap checks) */
    return LLVMBuildPtrToInt(B, v, dt, "");
  if (ir_is_half(from) || ir_is_half(to))
    return cg_half_cast(cg, v, from, to); /* llvm_half.c */
  if (ir_is_bool(to)) {
    LLVMValueRef zero = LLVMConstNull(LLVMTypeOf(v));
    return ir_is_float(from) ? LLVMBuildFCmp(B, LLVMRealUNE, v, zero, "")
                             : LLVMBuildICmp(B, LLVMIntNE, v, zero, "");
  }
  if (ir_is_float(from) && ir_is_float(to))
    return to.bits > from.bits ? LLVMBuildFPExt(B, v, dt, "") : LLVMBuildFPTrunc(B, v, dt, "");
  if (ir_is_float(from))
    return ir_is_int(to) ? LLVMBuildFPToSI(B, v, dt, "") : LLVMBuildFPToUI(B, v, dt, "");
  bool from_signed = ir_is_int(from); /* bool and unsigned extend with zeros */
  if (ir_is_float(to))
    return from_signed ? LLVMBuildSIToFP(B, v, dt, "") : LLVMBuildUIToFP(B, v, dt, "");
  if (to.bits == from.bits)
    return v; /* i32 <-> u32: same bits */
  if (to.bits < from.bits)
    return LLVMBuildTrunc(B, v, dt, "");
  return from_signed ? LLVMBuildSExt(B, v, dt, "") : LLVMBuildZExt(B, v, dt, "");
}

/* base + stride * <0, 1, ..., lanes-1> */
static LLVMValueRef cg_ramp(cg_llvm *cg, te_expr *e) {
  int lanes = e->dtype.lanes;
  LLVMValueRef base = cg_expr(cg, e->args[0]);
  LLVMValueRef stride = base ? cg_expr(cg, e->args[1]) : NULL;
  if (!stride)
    return NULL;
  te_dtype st = e->args[0]->dtype;
  LLVMValueRef steps[CG_MAX_LANES]; /* as cg_splat's: building a constant never fails */
  if (!ir_check(cg->ctx, lanes <= CG_MAX_LANES, "cg_ramp: too many lanes"))
    return NULL;
  for (int i = 0; i < lanes; i++)
    steps[i] = ir_is_float(st) ? LLVMConstReal(LLVMTypeOf(base), i)
                               : LLVMConstInt(LLVMTypeOf(base), (unsigned long long)i, 0);
  LLVMValueRef iota = LLVMConstVector(steps, (unsigned)lanes);
  LLVMValueRef vb = cg_splat(cg, base, lanes), vs = cg_splat(cg, stride, lanes);
  if (ir_is_float(st))
    return LLVMBuildFAdd(cg->b, vb, LLVMBuildFMul(cg->b, vs, iota, ""), "ramp");
  return LLVMBuildAdd(cg->b, vb, LLVMBuildMul(cg->b, vs, iota, ""), "ramp");
}

static LLVMValueRef cg_let(cg_llvm *cg, te_expr *e) {
  LLVMValueRef value = cg_expr(cg, e->args[1]);
  if (!value)
    return NULL;
  LLVMValueRef prev = cg_bind(cg, e->args[0], value);
  LLVMValueRef body = cg_expr(cg, e->args[2]);
  cg_bind(cg, e->args[0], prev);
  return body;
}

static LLVMValueRef cg_unary(cg_llvm *cg, te_expr *e) {
  LLVMValueRef a = cg_expr(cg, e->args[0]);
  if (!a)
    return NULL;
  switch (e->kind) {
  case IR_NOT:
    return LLVMBuildNot(cg->b, a, "");
  case IR_CAST:
    return cg_cast_value(cg, a, e->args[0]->dtype, e->dtype);
  case IR_BROADCAST:
    if (e->args[0]->dtype.lanes == 1)
      return cg_splat(cg, a, e->dtype.lanes);
    break;
  default:
    break;
  }
  ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': unexpected '%s'", cg->kernel,
           ir_expr_kind_name[e->kind]);
  return NULL;
}

LLVMValueRef cg_expr(cg_llvm *cg, te_expr *e) {
  if (!e)
    return NULL;
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    return cg_const_int(cg, e->dtype, e->u.i);
  case IR_FLOAT:
    return cg_const_float(cg, e->dtype, e->u.f);
  case IR_VAR:
    return cg_var(cg, e);
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
  case IR_MIN:
  case IR_MAX:
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_AND:
  case IR_OR:
    return cg_binary(cg, e);
  case IR_NOT:
  case IR_CAST:
  case IR_BROADCAST:
    return cg_unary(cg, e);
  case IR_SELECT: {
    LLVMValueRef c = cg_expr(cg, e->args[0]);
    LLVMValueRef t = c ? cg_expr(cg, e->args[1]) : NULL;
    LLVMValueRef f = t ? cg_expr(cg, e->args[2]) : NULL;
    return f ? LLVMBuildSelect(cg->b, c, t, f, "") : NULL;
  }
  case IR_CALL:
    if (e->u.call == IR_INTRIN_IF_THEN_ELSE)
      return cg_if_then_else(cg, e);
    if (e->u.call == IR_INTRIN_WARP_SHUFFLE_XOR) {
      if (cg->warp_shuffle)
        return cg->warp_shuffle(cg, e);
      ir_error(cg->ctx, TE_ERR_INTERNAL,
               "internal: codegen: kernel '%s': warp_shuffle_xor outside a cuda kernel",
               cg->kernel ? cg->kernel : "?");
      return NULL;
    }
    return e->u.call == IR_INTRIN_PREFETCH ? cg_prefetch(cg, e->args[0]) : cg_call(cg, e);
  case IR_LOAD:
    return cg_load(cg, e);
  case IR_RAMP:
    return cg_ramp(cg, e);
  case IR_LET:
    return cg_let(cg, e);
  default:
    break;
  }
  ir_error(cg->ctx, TE_ERR_INTERNAL,
           "internal: codegen: kernel '%s': '%s' expression cannot reach code generation",
           cg->kernel, ir_expr_kind_name[e->kind]);
  return NULL;
}
