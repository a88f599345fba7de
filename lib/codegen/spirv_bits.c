/* spirv_bits.c — the integer operators (bitwise_*, shifts, rounding_shift_right) in SPIR-V.
 *
 * As on the CPU (llvm_bits.c): SPIR-V leaves a shift by >= the width undefined, so each shift
 * compares the amount (unsigned) with the width and selects the "shifted out" value. Narrow i64
 * operands are widened first (the bits above 32 matter to these operations).
 */
#include "spirv.h"

static uint32_t op2(cg_spv *s, SpvOp op, uint32_t type, uint32_t a, uint32_t b) {
  return cg_spv_inst(s, op, type, 2, (uint32_t[]){a, b});
}

static uint32_t sel(cg_spv *s, uint32_t type, uint32_t c, uint32_t a, uint32_t b) {
  return cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){c, a, b});
}

/* x shifted by amount a (both of type t): arith right shifts sign-fill past the width. */
static uint32_t shift(cg_spv *s, ir_intrin id, te_dtype t, uint32_t type, uint32_t x, uint32_t a) {
  uint32_t w = cg_spv_const_int(s, t, t.bits), zero = cg_spv_const_int(s, t, 0);
  if (id == IR_INTRIN_SHIFT_RIGHT && ir_is_int(t)) {
    uint32_t top = cg_spv_const_int(s, t, t.bits - 1);
    uint32_t in = op2(s, SpvOpULessThan, s->t_bool, a, top);
    return op2(s, SpvOpShiftRightArithmetic, type, x, sel(s, type, in, a, top));
  }
  uint32_t in = op2(s, SpvOpULessThan, s->t_bool, a, w);
  uint32_t safe = sel(s, type, in, a, zero);
  SpvOp op = id == IR_INTRIN_SHIFT_LEFT ? SpvOpShiftLeftLogical : SpvOpShiftRightLogical;
  return sel(s, type, in, op2(s, op, type, x, safe), zero);
}

/* As llvm_bits.c: floor(x / 2^s) + bit s-1 of x, both by the saturating shift. */
static uint32_t rounding_shift(cg_spv *s, te_dtype t, uint32_t type, uint32_t x, uint32_t a) {
  ir_intrin kind = ir_is_int(t) ? IR_INTRIN_SHIFT_RIGHT : IR_INTRIN_SHIFT_RIGHT_LOGICAL;
  uint32_t zero = cg_spv_const_int(s, t, 0), one = cg_spv_const_int(s, t, 1);
  uint32_t hi = shift(s, kind, t, type, x, a);
  uint32_t none = op2(s, SpvOpIEqual, s->t_bool, a, zero);
  uint32_t moved = shift(s, kind, t, type, x, op2(s, SpvOpISub, type, a, one));
  uint32_t bit = sel(s, type, none, zero, op2(s, SpvOpBitwiseAnd, type, moved, one));
  return op2(s, SpvOpIAdd, type, hi, bit);
}

bool cg_spv_is_int_op(ir_intrin id) {
  return id >= IR_INTRIN_BITWISE_AND && id <= IR_INTRIN_ROUNDING_SHIFT_RIGHT;
}

cg_spv_val cg_spv_int_op(cg_spv *s, te_expr *e) {
  ir_intrin id = e->u.call;
  te_dtype t = e->dtype;
  uint32_t a[2] = {0};
  for (int i = 0; i < e->nargs && i < 2; i++) {
    cg_spv_val v = cg_spv_expr(s, e->args[i]);
    if (!v.id)
      return v;
    a[i] = cg_spv_widen(s, v, e->args[i]->dtype);
  }
  uint32_t type = cg_spv_t_dtype(s, t), r = 0;
  switch (id) {
  case IR_INTRIN_BITWISE_AND:
    r = op2(s, SpvOpBitwiseAnd, type, a[0], a[1]);
    break;
  case IR_INTRIN_BITWISE_OR:
    r = op2(s, SpvOpBitwiseOr, type, a[0], a[1]);
    break;
  case IR_INTRIN_BITWISE_XOR:
    r = op2(s, SpvOpBitwiseXor, type, a[0], a[1]);
    break;
  case IR_INTRIN_BITWISE_NOT:
    r = cg_spv_inst(s, SpvOpNot, type, 1, a);
    break;
  case IR_INTRIN_ROUNDING_SHIFT_RIGHT:
    r = rounding_shift(s, t, type, a[0], a[1]);
    break;
  default:
    r = shift(s, id, t, type, a[0], a[1]);
    break;
  }
  return (cg_spv_val){r, false};
}
