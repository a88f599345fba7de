/* spirv_math.c — math calls (IR_CALL intrinsics) through GLSL.std.450.
 *
 * Direct: exp exp2 log log2 sqrt rsqrt sin cos tan floor ceil trunc fma abs. Composed:
 *   log10(x)   = log2(x) * log10(2)
 *   tanh(x)    = Tanh(clamp(x, -10, 10)) (some drivers compute Tanh as a quotient of
 *                exponentials that overflows to inf/inf; tanh(±10) is ±1 in f32)
 *   sigmoid(x) = 1 / (1 + exp(-x))
 *   erf(x)     = Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, f32 accuracy)
 *   round(x)   = half away from zero, as C (GLSL's Round leaves .5 to the driver):
 *                t = trunc(x); t + (|x - t| >= 0.5 ? sign(x) : 0)
 *   pow(x, y)  = Pow(|x|, y) with C's cases GLSL leaves undefined: y == 0 gives 1; x < 0 gives
 *                the sign of an odd integer y, or NaN for a non-integer y.
 * GLSL.std.450's exp, log, trigonometric, pow and tanh take only 16/32-bit floats: on f64 these
 * and log10, sigmoid and erf are te's own SPIR-V functions of f64 arithmetic (spirv_math64.c);
 * sqrt, rsqrt, floor, ceil, trunc, round, abs and fma are GLSL.std.450's on f64 too.
 * if_then_else is a structured selection (spirv_expr.c).
 */
#include <math.h>

#include "spirv.h"

static uint32_t bin(cg_spv *s, SpvOp op, uint32_t type, uint32_t a, uint32_t b) {
  return cg_spv_inst(s, op, type, 2, (uint32_t[]){a, b});
}

static uint32_t math_erf(cg_spv *s, te_dtype t, uint32_t type, uint32_t x) {
  static const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  uint32_t ax = cg_spv_glsl(s, type, GLSLstd450FAbs, 1, &x);
  uint32_t one = cg_spv_const_float(s, t, 1);
  uint32_t den = bin(s, SpvOpFAdd, type, one,
                     bin(s, SpvOpFMul, type, cg_spv_const_float(s, t, 0.3275911), ax));
  uint32_t k = bin(s, SpvOpFDiv, type, one, den);
  uint32_t p = cg_spv_const_float(s, t, a[4]);
  for (int i = 3; i >= 0; i--)
    p = bin(s, SpvOpFAdd, type, bin(s, SpvOpFMul, type, p, k), cg_spv_const_float(s, t, a[i]));
  p = bin(s, SpvOpFMul, type, p, k);
  uint32_t nx2 =
      cg_spv_inst(s, SpvOpFNegate, type, 1, (uint32_t[]){bin(s, SpvOpFMul, type, ax, ax)});
  uint32_t y = bin(s, SpvOpFSub, type, one,
                   bin(s, SpvOpFMul, type, p, cg_spv_glsl(s, type, GLSLstd450Exp, 1, &nx2)));
  return bin(s, SpvOpFMul, type, cg_spv_glsl(s, type, GLSLstd450FSign, 1, &x), y);
}

static uint32_t math_round(cg_spv *s, te_dtype t, uint32_t type, uint32_t x) {
  uint32_t tr = cg_spv_glsl(s, type, GLSLstd450Trunc, 1, &x);
  uint32_t d = bin(s, SpvOpFSub, type, x, tr);
  uint32_t ad = cg_spv_glsl(s, type, GLSLstd450FAbs, 1, &d);
  uint32_t half = bin(s, SpvOpFOrdGreaterThanEqual, s->t_bool, ad, cg_spv_const_float(s, t, 0.5));
  uint32_t step = cg_spv_inst(s, SpvOpSelect, type, 3,
                              (uint32_t[]){half, cg_spv_glsl(s, type, GLSLstd450FSign, 1, &x),
                                           cg_spv_const_float(s, t, 0)});
  return bin(s, SpvOpFAdd, type, tr, step);
}

static uint32_t math_pow(cg_spv *s, te_dtype t, uint32_t type, uint32_t x, uint32_t y) {
  uint32_t zero = cg_spv_const_float(s, t, 0), one = cg_spv_const_float(s, t, 1);
  uint32_t ax = cg_spv_glsl(s, type, GLSLstd450FAbs, 1, &x);
  uint32_t r = cg_spv_glsl(s, type, GLSLstd450Pow, 2, (uint32_t[]){ax, y});
  uint32_t yint =
      bin(s, SpvOpFOrdEqual, s->t_bool, cg_spv_glsl(s, type, GLSLstd450Trunc, 1, &y), y);
  uint32_t half = bin(s, SpvOpFMul, type, y, cg_spv_const_float(s, t, 0.5));
  uint32_t odd =
      bin(s, SpvOpFUnordNotEqual, s->t_bool, cg_spv_glsl(s, type, GLSLstd450Trunc, 1, &half), half);
  uint32_t neg_r = cg_spv_inst(s, SpvOpFNegate, type, 1, &r);
  uint32_t signed_r = cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){odd, neg_r, r});
  uint32_t nan = cg_spv_const_float(s, t, NAN);
  uint32_t neg_case = cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){yint, signed_r, nan});
  uint32_t xneg = bin(s, SpvOpFOrdLessThan, s->t_bool, x, zero);
  r = cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){xneg, neg_case, r});
  uint32_t y0 = bin(s, SpvOpFOrdEqual, s->t_bool, y, zero);
  return cg_spv_inst(s, SpvOpSelect, type, 3, (uint32_t[]){y0, one, r});
}

/* The GLSL.std.450 instruction of a one-argument float intrinsic (0 when composed). */
static enum GLSLstd450 direct_op(ir_intrin id, bool *f32_only) {
  *f32_only = true;
  switch (id) {
  case IR_INTRIN_EXP:
    return GLSLstd450Exp;
  case IR_INTRIN_EXP2:
    return GLSLstd450Exp2;
  case IR_INTRIN_LOG:
    return GLSLstd450Log;
  case IR_INTRIN_LOG2:
    return GLSLstd450Log2;
  case IR_INTRIN_SIN:
    return GLSLstd450Sin;
  case IR_INTRIN_COS:
    return GLSLstd450Cos;
  case IR_INTRIN_TAN:
    return GLSLstd450Tan;
  default:
    break;
  }
  *f32_only = false;
  switch (id) {
  case IR_INTRIN_SQRT:
    return GLSLstd450Sqrt;
  case IR_INTRIN_RSQRT:
    return GLSLstd450InverseSqrt;
  case IR_INTRIN_FLOOR:
    return GLSLstd450Floor;
  case IR_INTRIN_CEIL:
    return GLSLstd450Ceil;
  case IR_INTRIN_TRUNC:
    return GLSLstd450Trunc;
  default:
    return GLSLstd450Bad;
  }
}

static bool needs_f32(ir_intrin id) {
  bool f32;
  return direct_op(id, &f32) != GLSLstd450Bad
             ? f32
             : id == IR_INTRIN_LOG10 || id == IR_INTRIN_TANH || id == IR_INTRIN_SIGMOID ||
                   id == IR_INTRIN_ERF || id == IR_INTRIN_POW;
}

static uint32_t math_float(cg_spv *s, ir_intrin id, te_dtype t, const uint32_t *a) {
  uint32_t type = cg_spv_t_dtype(s, t);
  bool f32;
  enum GLSLstd450 op = direct_op(id, &f32);
  if (op != GLSLstd450Bad)
    return cg_spv_glsl(s, type, op, 1, a);
  switch (id) {
  case IR_INTRIN_LOG10:
    return bin(s, SpvOpFMul, type, cg_spv_glsl(s, type, GLSLstd450Log2, 1, a),
               cg_spv_const_float(s, t, 0.30102999566398119521));
  case IR_INTRIN_TANH: {
    uint32_t c = cg_spv_glsl(
        s, type, GLSLstd450FClamp, 3,
        (uint32_t[]){a[0], cg_spv_const_float(s, t, -10), cg_spv_const_float(s, t, 10)});
    return cg_spv_glsl(s, type, GLSLstd450Tanh, 1, &c);
  }
  case IR_INTRIN_SIGMOID: {
    uint32_t n = cg_spv_inst(s, SpvOpFNegate, type, 1, a);
    uint32_t one = cg_spv_const_float(s, t, 1);
    return bin(s, SpvOpFDiv, type, one,
               bin(s, SpvOpFAdd, type, one, cg_spv_glsl(s, type, GLSLstd450Exp, 1, &n)));
  }
  case IR_INTRIN_ERF:
    return math_erf(s, t, type, a[0]);
  case IR_INTRIN_ROUND:
    return math_round(s, t, type, a[0]);
  case IR_INTRIN_POW:
    return math_pow(s, t, type, a[0], a[1]);
  case IR_INTRIN_FMA:
    return cg_spv_glsl(s, type, GLSLstd450Fma, 3, a);
  default:
    return 0;
  }
}

cg_spv_val cg_spv_call(cg_spv *s, te_expr *e) {
  ir_intrin id = e->u.call;
  const char *name = id < IR_INTRIN_COUNT ? ir_intrin_table[id].name : "?";
  if (id == IR_INTRIN_LIKELY)
    return cg_spv_expr(s, e->args[0]);
  if (id == IR_INTRIN_IF_THEN_ELSE) { /* only the chosen side is evaluated */
    cg_spv_val c = cg_spv_expr(s, e->args[0]);
    return c.id ? cg_spv_select_branchy(s, e, c.id) : c;
  }
  if (cg_spv_is_int_op(id))
    return cg_spv_int_op(s, e);
  if (cg_spv_is_subgroup_op(id))
    return cg_spv_subgroup_op(s, e);
  te_dtype t = e->dtype;
  uint32_t a[3] = {0};
  bool narrow = false;
  for (int i = 0; i < e->nargs && i < 3; i++) {
    cg_spv_val v = cg_spv_expr(s, e->args[i]);
    if (!v.id)
      return v;
    a[i] = v.id, narrow = v.narrow;
  }
  if (ir_is_float(t) && t.bits == 64 && needs_f32(id))
    return (cg_spv_val){cg_spv_f64_call(s, id, a), false};
  if (id == IR_INTRIN_ABS && !ir_is_float(t)) {
    if (!ir_is_int(t)) /* unsigned */
      return (cg_spv_val){a[0], false};
    return (cg_spv_val){cg_spv_glsl(s, cg_spv_val_type(s, t, narrow), GLSLstd450SAbs, 1, a),
                        narrow};
  }
  if (id == IR_INTRIN_ABS)
    return (cg_spv_val){cg_spv_glsl(s, cg_spv_t_dtype(s, t), GLSLstd450FAbs, 1, a), false};
  uint32_t r = ir_is_float(t) ? math_float(s, id, t, a) : 0;
  if (!r && !s->oom)
    ir_error(s->ctx, TE_ERR_UNSUPPORTED,
             "te_build: kernel '%s': the SPIR-V back end has no '%s' for %s", s->kernel, name,
             ir_is_float(t) ? "this type" : "integers");
  return (cg_spv_val){r, false};
}
