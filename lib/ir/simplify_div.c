/* simplify_div.c — floor division and modulo by constants, the heart of split/tile/fuse indices.
 *
 * For a divisor c > 0 and a canonical dividend sum = c*Q + R (Q: the terms whose coefficients c
 * divides, and the constant's quotient):
 *   sum // c = Q + R // c        sum % c = R % c
 * then R // c and R % c fold to constants (or R - k*c) when the bounds of R lie in one period
 * [k*c, (k+1)*c), and to base % c when modular analysis pins R modulo c. A common factor g of
 * R's coefficients and c cancels in the division ((x*4 + 3) // 8 -> x // 2) and splits off the
 * remainder of the constant in the modulo ((x*4 + 3) % 8 -> x*4 % 8 + 3). Nested divisions
 * and modulos by constants merge: (x // 4) // 8 -> x // 32, (x % 32) % 8 -> x % 8.
 * Examples: (i.o*32 + i.i) // 32 -> i.o and (i.o*32 + i.i) % 32 -> i.i for i.i in [0, 32).
 * These rules need exact integer arithmetic: i64 only (no overflow assumed, as everywhere).
 */
#include "arith_internal.h"

/* v reduced modulo c to the representative nearest 0, when |v| >= c: x*33 % 32 -> x % 32,
   (x + 35) % 32 -> (x + 3) % 32, but (x + 5) % 7 stays. */
static int64_t balanced(int64_t v, int64_t c) {
  if (v > -c && v < c)
    return v;
  int64_t r = ir_floormod64(v, c);
  if (r > c / 2)
    r -= c;
  int64_t ar = r < 0 ? -r : r;
  return (v != INT64_MIN && ar < (v < 0 ? -v : v)) ? r : v;
}

/* The bound of e, when it lies in one period of c: its index k. */
static bool one_period(ir_simp *s, te_expr *e, int64_t c, int64_t *k) {
  ir_const_bound b = ir_const_bound_raw(s->an, e);
  if (b.min == IR_NEG_INF || b.max == IR_POS_INF)
    return false;
  *k = ir_floordiv64(b.min, c);
  return *k == ir_floordiv64(b.max, c);
}

static te_expr *div_const(ir_simp *s, te_expr *a, int64_t c) {
  int64_t c1, m;
  if (a->kind == IR_FLOORDIV && ir_is_const_int(a->args[1], &c1) && c1 > 0 &&
      !__builtin_mul_overflow(c1, c, &m))
    return ir_simp_floordiv(s, a->args[0], ir_i64(s->ctx, m));
  ir_lin L, Q, R;
  ir_lin_init(&L, a->dtype);
  ir_lin_init(&Q, a->dtype);
  ir_lin_init(&R, a->dtype);
  ir_lin_add(s, &L, a, 1);
  Q.oom = R.oom = L.oom; /* a failed allocation fails the results */
  for (int i = 0; i < L.n; i++) {
    if (L.m[i].coeff % c == 0)
      ir_lin_push(&Q, L.m[i].term, L.m[i].coeff / c);
    else
      ir_lin_push(&R, L.m[i].term, L.m[i].coeff);
  }
  Q.c = ir_floordiv64(L.c, c);
  int64_t r0 = ir_floormod64(L.c, c);
  te_expr *res = NULL;
  if (R.n > 0) {
    int64_t g = c;
    for (int i = 0; i < R.n; i++)
      g = ir_gcd64(g, R.m[i].coeff);
    for (int i = 0; i < R.n; i++)
      R.m[i].coeff /= g;
    R.c = r0 / g; /* the rest of r0 never reaches the next multiple of c */
    int64_t c2 = c / g, k;
    te_expr *rest = ir_lin_to_expr(s, &R);
    if (!rest)
      goto done;
    if (one_period(s, rest, c2, &k))
      Q.c += k;
    else
      ir_lin_push(&Q, ir_floordiv(rest, ir_i64(s->ctx, c2)), 1);
  }
  res = ir_lin_to_expr(s, &Q);
done:
  ir_lin_free(&L);
  ir_lin_free(&Q);
  ir_lin_free(&R);
  return res;
}

static te_expr *mod_const(ir_simp *s, te_expr *a, int64_t c) {
  int64_t c1, k;
  if (a->kind == IR_FLOORMOD && ir_is_const_int(a->args[1], &c1) && c1 > 0 && c1 % c == 0)
    return ir_simp_floormod(s, a->args[0], ir_i64(s->ctx, c));
  ir_lin L, R;
  ir_lin_init(&L, a->dtype);
  ir_lin_init(&R, a->dtype);
  ir_lin_add(s, &L, a, 1);
  R.oom = L.oom;
  for (int i = 0; i < L.n; i++) {
    int64_t k2 = balanced(L.m[i].coeff, c);
    if (k2 != 0)
      ir_lin_push(&R, L.m[i].term, k2);
  }
  R.c = balanced(L.c, c);
  te_expr *res = NULL, *rest = NULL;
  int64_t g = c;
  for (int i = 0; i < R.n; i++)
    g = ir_gcd64(g, R.m[i].coeff);
  int64_t r1 = R.n > 0 && g > 1 ? ir_floormod64(R.c, g) : 0;
  if (r1 != 0) { /* (g*T + r1) % c == (g*T) % c + r1 for 0 <= r1 < g, g | c */
    R.c -= r1;
    rest = ir_lin_to_expr(s, &R);
    res = rest ? ir_simp_sum(s, IR_ADD, ir_simp_floormod(s, rest, ir_i64(s->ctx, c)),
                             ir_i64(s->ctx, r1))
               : NULL;
    goto done;
  }
  if (!(rest = ir_lin_to_expr(s, &R)))
    goto done;
  if (rest->kind == IR_INT) {
    res = ir_i64(s->ctx, ir_floormod64(rest->u.i, c));
  } else if (one_period(s, rest, c, &k)) {
    R.c -= k * c;
    res = ir_lin_to_expr(s, &R);
  } else {
    ir_modular m = ir_modular_of(s->an, rest);
    if (m.coeff % c == 0)
      res = ir_i64(s->ctx, ir_floormod64(m.base, c));
    else
      res = ir_floormod(rest, ir_i64(s->ctx, c));
  }
done:
  ir_lin_free(&L);
  ir_lin_free(&R);
  return res;
}

/* 0 <= a < b by bounds (then a // b == 0 and a % b == a). */
static bool below(ir_simp *s, te_expr *a, te_expr *b) {
  if (!ir_arith_sint(a->dtype))
    return false;
  ir_const_bound ba = ir_const_bound_raw(s->an, a), bb = ir_const_bound_raw(s->an, b);
  return ba.min >= 0 && bb.min > 0 && ba.max < bb.min;
}

te_expr *ir_simp_floordiv(ir_simp *s, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_expr *r = ir_fold_binary(s->ctx, IR_FLOORDIV, a, b);
  if (r)
    return r;
  int64_t c;
  if (ir_is_const_int(b, &c)) {
    if (c == 1)
      return a;
    if (ir_arith_index(a->dtype) && c == -1)
      return ir_simp_sum(s, IR_SUB, ir_i64(s->ctx, 0), a);
    if (ir_arith_index(a->dtype) && c > 0)
      return div_const(s, a, c);
  }
  if (a == b)
    return ir_const_like(s->ctx, a->dtype, 1);
  if (ir_is_const_value(a, 0))
    return a;
  if (below(s, a, b))
    return ir_int(s->ctx, a->dtype, 0);
  return ir_floordiv(a, b);
}

te_expr *ir_simp_floormod(ir_simp *s, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_expr *r = ir_fold_binary(s->ctx, IR_FLOORMOD, a, b);
  if (r)
    return r;
  int64_t c;
  if (ir_is_const_int(b, &c)) {
    if (c == 1 || (c == -1 && a->dtype.code == kDLInt))
      return ir_int(s->ctx, a->dtype, 0);
    if (ir_arith_index(a->dtype) && c > 0)
      return mod_const(s, a, c);
  }
  if (a == b || ir_is_const_value(a, 0))
    return ir_const_like(s->ctx, a->dtype, 0);
  if (below(s, a, b))
    return a;
  return ir_floormod(a, b);
}
