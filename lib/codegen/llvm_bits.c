/* llvm_bits.c — the integer operators (bitwise_*, shifts, rounding_shift_right) as LLVM IR.
 *
 * LLVM's shl/lshr/ashr give poison for an amount >= the width; te defines those amounts
 * (include/te/expr.h), so each shift compares the amount (unsigned) with the width and selects
 * the "shifted out" value, or clamps the amount where that gives the same answer (ashr by w - 1
 * is the sign fill). On x86 the compare and select fold into the vector shifts, which already
 * saturate the amount (vpsllvd and friends).
 */
#include "llvm_cg.h"

/* x shifted by s with every amount defined: arith right shifts sign-fill past the width, the
   others give 0. */
static LLVMValueRef shift(cg_llvm *cg, ir_intrin id, te_dtype t, LLVMValueRef x, LLVMValueRef s) {
  LLVMValueRef w = cg_const_int(cg, t, t.bits);
  bool arith = id == IR_INTRIN_SHIFT_RIGHT && ir_is_int(t);
  if (arith) {
    LLVMValueRef top = cg_const_int(cg, t, t.bits - 1);
    LLVMValueRef in = LLVMBuildICmp(cg->b, LLVMIntULT, s, top, "");
    return LLVMBuildAShr(cg->b, x, LLVMBuildSelect(cg->b, in, s, top, ""), "sra");
  }
  LLVMValueRef in = LLVMBuildICmp(cg->b, LLVMIntULT, s, w, "");
  LLVMValueRef safe = LLVMBuildSelect(cg->b, in, s, cg_const_int(cg, t, 0), "");
  LLVMValueRef r = id == IR_INTRIN_SHIFT_LEFT ? LLVMBuildShl(cg->b, x, safe, "")
                                              : LLVMBuildLShr(cg->b, x, safe, "");
  return LLVMBuildSelect(cg->b, in, r, cg_const_int(cg, t, 0), "sh");
}

/* floor(x / 2^s) + bit s-1 of x (0 when s = 0): x / 2^s rounded half up, with no overflow. The
   bit is read by the same saturating shift, so s past the width gives the sign fill (signed: -1
   + 1 = 0) or 0. */
static LLVMValueRef rounding_shift(cg_llvm *cg, te_dtype t, LLVMValueRef x, LLVMValueRef s) {
  ir_intrin kind = ir_is_int(t) ? IR_INTRIN_SHIFT_RIGHT : IR_INTRIN_SHIFT_RIGHT_LOGICAL;
  LLVMValueRef zero = cg_const_int(cg, t, 0), one = cg_const_int(cg, t, 1);
  LLVMValueRef hi = shift(cg, kind, t, x, s);
  LLVMValueRef none = LLVMBuildICmp(cg->b, LLVMIntEQ, s, zero, "");
  LLVMValueRef below = LLVMBuildSub(cg->b, s, one, ""); /* wraps to "huge" for s = 0: unused */
  LLVMValueRef bit = LLVMBuildAnd(cg->b, shift(cg, kind, t, x, below), one, "");
  bit = LLVMBuildSelect(cg->b, none, zero, bit, "");
  return LLVMBuildAdd(cg->b, hi, bit, "rshr");
}

LLVMValueRef cg_int_op(cg_llvm *cg, ir_intrin id, te_dtype t, LLVMValueRef *a) {
  switch (id) {
  case IR_INTRIN_BITWISE_AND:
    return LLVMBuildAnd(cg->b, a[0], a[1], "and");
  case IR_INTRIN_BITWISE_OR:
    return LLVMBuildOr(cg->b, a[0], a[1], "or");
  case IR_INTRIN_BITWISE_XOR:
    return LLVMBuildXor(cg->b, a[0], a[1], "xor");
  case IR_INTRIN_BITWISE_NOT:
    return LLVMBuildNot(cg->b, a[0], "not");
  case IR_INTRIN_SHIFT_LEFT:
  case IR_INTRIN_SHIFT_RIGHT:
  case IR_INTRIN_SHIFT_RIGHT_LOGICAL:
    return shift(cg, id, t, a[0], a[1]);
  case IR_INTRIN_ROUNDING_SHIFT_RIGHT:
    return rounding_shift(cg, t, a[0], a[1]);
  default:
    return NULL;
  }
}
