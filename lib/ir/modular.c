/* modular.c — modular facts: e == coeff * k + base for some integer k.
 *
 * The lattice of TVM's ModularSet: coeff 0 means e is exactly base, coeff 1 means nothing is
 * known; otherwise 0 <= base < coeff. Facts flow through + - * (any operands), floordiv and
 * floormod by positive constants, min/max/select (the join: gcd of both coefficients and the
 * difference of the bases), and variables bound to a value or to a single point. This is what
 * proves (x*4 + 2) % 2 == 0 and the alignment of vector accesses. i64 only (no wraparound).
 */
#include "arith_internal.h"

typedef ir_modular mod;

static mod unknown(void) { return (mod){1, 0}; }

static mod make(int64_t coeff, int64_t base) {
  if (coeff < 0)
    coeff = coeff == INT64_MIN ? 1 : -coeff;
  if (coeff == 1)
    return unknown();
  if (coeff > 0)
    base = ir_floormod64(base, coeff);
  return (mod){coeff, base};
}

static mod join(mod a, mod b) {
  int64_t d;
  if (__builtin_sub_overflow(a.base, b.base, &d))
    return unknown();
  int64_t g = ir_gcd64(ir_gcd64(a.coeff, b.coeff), d);
  return make(g, a.base);
}

static mod add_mod(mod a, mod b, int sign) {
  int64_t base;
  if (sign > 0 ? __builtin_add_overflow(a.base, b.base, &base)
               : __builtin_sub_overflow(a.base, b.base, &base))
    return unknown();
  return make(ir_gcd64(a.coeff, b.coeff), base);
}

/* (c1 k + b1)(c2 m + b2) = c1 c2 km + c1 b2 k + c2 b1 m + b1 b2. */
static mod mul_mod(mod a, mod b) {
  int64_t t1, t2, t3, base;
  if (__builtin_mul_overflow(a.coeff, b.coeff, &t1) ||
      __builtin_mul_overflow(a.coeff, b.base, &t2) ||
      __builtin_mul_overflow(b.coeff, a.base, &t3) || __builtin_mul_overflow(a.base, b.base, &base))
    return unknown();
  return make(ir_gcd64(ir_gcd64(t1, t2), t3), base);
}

static mod div_mod(mod a, int64_t c) {
  if (a.coeff % c != 0)
    return unknown();
  return make(a.coeff / c, ir_floordiv64(a.base, c));
}

static mod mod_mod(mod a, int64_t c) {
  if (a.coeff % c == 0)
    return make(0, ir_floormod64(a.base, c));
  return make(ir_gcd64(a.coeff, c), a.base);
}

static mod modular(ir_analyzer *an, te_expr *e);

static mod var_mod(ir_analyzer *an, te_expr *v) {
  const ir_binding *b = ir_map_get(an->vars, v);
  if (b && b->value)
    return modular(an, b->value);
  ir_const_bound cb = ir_const_bound_raw(an, v);
  if (cb.min == cb.max && cb.min != IR_NEG_INF)
    return make(0, cb.min);
  return unknown();
}

static mod modular(ir_analyzer *an, te_expr *e) {
  if (!e || !ir_arith_index(e->dtype))
    return unknown();
  if (an->depth > 48)
    return unknown();
  int64_t c;
  mod r = unknown();
  an->depth++;
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    r = make(0, e->u.i);
    break;
  case IR_VAR:
    r = var_mod(an, e);
    break;
  case IR_ADD:
    r = add_mod(modular(an, e->args[0]), modular(an, e->args[1]), 1);
    break;
  case IR_SUB:
    r = add_mod(modular(an, e->args[0]), modular(an, e->args[1]), -1);
    break;
  case IR_MUL:
    r = mul_mod(modular(an, e->args[0]), modular(an, e->args[1]));
    break;
  case IR_FLOORDIV:
    if (ir_is_const_int(e->args[1], &c) && c > 0)
      r = div_mod(modular(an, e->args[0]), c);
    break;
  case IR_FLOORMOD:
    if (ir_is_const_int(e->args[1], &c) && c > 0)
      r = mod_mod(modular(an, e->args[0]), c);
    break;
  case IR_MIN:
  case IR_MAX:
    r = join(modular(an, e->args[0]), modular(an, e->args[1]));
    break;
  case IR_SELECT:
    r = join(modular(an, e->args[1]), modular(an, e->args[2]));
    break;
  default:
    break;
  }
  an->depth--;
  if (r.coeff != 0) { /* a single-point bound is an exact value */
    ir_const_bound cb = ir_const_bound_raw(an, e);
    if (cb.min == cb.max && cb.min != IR_NEG_INF && cb.min != IR_POS_INF)
      r = make(0, cb.min);
  }
  return r;
}

ir_modular ir_modular_of(ir_analyzer *an, te_expr *e) {
  if (!an || !e)
    return unknown();
  return modular(an, e);
}
