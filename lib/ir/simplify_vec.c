/* simplify_vec.c — arithmetic on RAMP and BROADCAST, for vectorized index expressions.
 *
 * Elementwise operations on broadcasts are the broadcast of the scalar operation (any dtype:
 * it is the same operation lane by lane). For integers, affine rules keep a vector index a
 * ramp: ramp(a, s, n) + broadcast(b, n) -> ramp(a + b, s, n), ramp + ramp adds bases and
 * strides, ramp * broadcast(b) -> ramp(a*b, s*b, n). A ramp that stays inside one period of a
 * positive constant divisor c divides to broadcast(a // c) and reduces to ramp(a % c, s, n):
 * ramp(x*16, 1, 16) // 16 -> broadcast(x, 16), ramp(x*16, 1, 16) % 16 -> ramp(0, 1, 16).
 */
#include "arith_internal.h"

/* The ramp's lanes lie in one period of c (c > 0, stride a constant >= 0). */
static bool ramp_in_period(ir_simp *s, te_expr *ramp, int64_t c) {
  int64_t stride, span;
  te_expr *base = ramp->args[0];
  if (!ir_is_const_int(ramp->args[1], &stride) || stride < 0 ||
      __builtin_mul_overflow(stride, (int64_t)(ramp->dtype.lanes - 1), &span))
    return false;
  ir_modular m = ir_modular_of(s->an, base);
  if (m.coeff % c == 0 && span < c - ir_floormod64(m.base, c))
    return true;
  ir_const_bound b = ir_const_bound_raw(s->an, base);
  if (b.min == IR_NEG_INF || b.max == IR_POS_INF || b.max > INT64_MAX - span)
    return false;
  return ir_floordiv64(b.min, c) == ir_floordiv64(b.max + span, c);
}

static te_expr *div_ramp(ir_simp *s, ir_expr_kind k, te_expr *ramp, te_expr *div) {
  int64_t c;
  if (!ir_is_const_int(div, &c) || c <= 0 || !ir_arith_index(ramp->args[0]->dtype) ||
      !ramp_in_period(s, ramp, c))
    return NULL;
  te_expr *base = ir_simp_binary(s, k, ramp->args[0], div);
  if (k == IR_FLOORDIV)
    return ir_broadcast(base, ramp->dtype.lanes);
  return ir_simp_ramp(s, base, ramp->args[1], ramp->dtype.lanes);
}

static te_expr *affine(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  int n = a->dtype.lanes;
  bool ra = a->kind == IR_RAMP, rb = b->kind == IR_RAMP;
  bool ba = a->kind == IR_BROADCAST, bb = b->kind == IR_BROADCAST;
  te_expr *zero = ir_int(s->ctx, ir_elem(a->dtype), 0);
  /* a ramp is (base, stride); a broadcast is (value, 0) */
  te_expr *a0 = ra || ba ? a->args[0] : NULL, *a1 = ra ? a->args[1] : zero;
  te_expr *b0 = rb || bb ? b->args[0] : NULL, *b1 = rb ? b->args[1] : zero;
  if (!a0 || !b0 || !(ra || rb))
    return NULL;
  switch (k) {
  case IR_ADD:
  case IR_SUB:
    return ir_simp_ramp(s, ir_simp_binary(s, k, a0, b0), ir_simp_binary(s, k, a1, b1), n);
  case IR_MUL:
    if (ra && bb)
      return ir_simp_ramp(s, ir_simp_binary(s, k, a0, b0), ir_simp_binary(s, k, a1, b0), n);
    if (ba && rb)
      return ir_simp_ramp(s, ir_simp_binary(s, k, a0, b0), ir_simp_binary(s, k, a0, b1), n);
    return NULL;
  case IR_FLOORDIV:
  case IR_FLOORMOD:
    return ra && bb ? div_ramp(s, k, a, b0) : NULL;
  default:
    return NULL;
  }
}

te_expr *ir_simp_vector(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  if (a->dtype.lanes <= 1)
    return NULL;
  if (a->kind == IR_BROADCAST && b->kind == IR_BROADCAST) {
    te_expr *r = ir_simp_binary(s, k, a->args[0], b->args[0]);
    return r ? ir_broadcast(r, a->dtype.lanes) : NULL;
  }
  if (!ir_is_intlike(a->dtype) || ir_is_bool(a->dtype))
    return NULL;
  return affine(s, k, a, b);
}
