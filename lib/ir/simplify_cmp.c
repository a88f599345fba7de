/* simplify_cmp.c — comparisons, boolean logic, min and max.
 *
 * Integer comparisons are decided from the bounds of the simplified difference (x + 3 < x + 5
 * -> true; i.o*32 + i.i < 128 -> true for i.o in [0, 4), i.i in [0, 32)); undecided ones are
 * normalised to `positive terms < negative terms`, the constant on the side where it is positive
 * or alone on its side (x + 3 < y, i.o*32 + i.i < 100, x < -2), a common factor divided out
 * (x*4 < 100 -> x < 25), > and >= become < and <= with the operands swapped, and == / != put
 * the lowest term on the left. min/max drop an operand that bounds prove redundant, including
 * inside nested min/max. Floats only fold constants: every other rewrite could change a NaN or
 * signed-zero result.
 */
#include "arith_internal.h"

/* 1: a <= b, 0: a > b, -1: unknown; with sym, symbolic ranges are tried too (costly). */
static int simp_le(ir_simp *s, te_expr *a, te_expr *b, bool sym) {
  if (!a || !b)
    return -1;
  if (a == b)
    return 1;
  if (!ir_arith_sint(a->dtype))
    return -1;
  if (ir_arith_index(a->dtype)) {
    te_expr *d = ir_simp_sum(s, IR_SUB, a, b);
    if (!d)
      return -1;
    ir_const_bound bd = ir_const_bound_raw(s->an, d);
    if (sym && bd.max > 0 && bd.min <= 0)
      bd = ir_sym_bound(s, d, bd);
    if (bd.max <= 0)
      return 1;
    if (bd.min > 0)
      return 0;
    /* x // c <= y // c when x <= y (floor division by c > 0 is monotone):
       min(n//16, (n + 15)//16) -> n//16 */
    int64_t c;
    if (a->kind == IR_FLOORDIV && b->kind == IR_FLOORDIV && a->args[1] == b->args[1] &&
        ir_is_const_int(a->args[1], &c) && c > 0 && simp_le(s, a->args[0], b->args[0], sym) == 1)
      return 1;
    return -1;
  }
  ir_const_bound ba = ir_const_bound_raw(s->an, a), bb = ir_const_bound_raw(s->an, b);
  if (ba.max <= bb.min)
    return 1;
  if (ba.min > bb.max)
    return 0;
  return -1;
}

int ir_simp_le(ir_simp *s, te_expr *a, te_expr *b) { return simp_le(s, a, b, true); }

/* The cheap test, for the many questions the nesting rules ask. */
static int le_fast(ir_simp *s, te_expr *a, te_expr *b) { return simp_le(s, a, b, false); }

/* ---------------------------------------------------------------- min / max */

/* k(a, b) where a is a min or a max itself; NULL when no rule applies. */
static te_expr *nested(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  bool is_min = k == IR_MIN;
  te_expr *a1 = a->args[0], *a2 = a->args[1];
  if (a->kind == k) {
    /* min(min(a1, a2), b): b >= a1 or b >= a2 makes b redundant; b <= a1 makes a1 redundant */
    if (is_min ? (le_fast(s, a1, b) == 1 || le_fast(s, a2, b) == 1)
               : (le_fast(s, b, a1) == 1 || le_fast(s, b, a2) == 1))
      return a;
    if (is_min ? le_fast(s, b, a1) == 1 : le_fast(s, a1, b) == 1)
      return ir_simp_minmax(s, k, a2, b);
    if (is_min ? le_fast(s, b, a2) == 1 : le_fast(s, a2, b) == 1)
      return ir_simp_minmax(s, k, a1, b);
  } else if (a->kind == (is_min ? IR_MAX : IR_MIN)) {
    /* min(max(a1, a2), b) == b when b <= a1 or b <= a2 (and dually) */
    if (is_min ? (le_fast(s, b, a1) == 1 || le_fast(s, b, a2) == 1)
               : (le_fast(s, a1, b) == 1 || le_fast(s, a2, b) == 1))
      return b;
  }
  return NULL;
}

te_expr *ir_simp_minmax(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_expr *r = ir_fold_binary(s->ctx, k, a, b);
  if (r || a == b)
    return r ? r : a;
  if (!ir_arith_sint(a->dtype))
    return ir_binary(k, a, b);
  int le = ir_simp_le(s, a, b);
  if (le >= 0)
    return (le == 1) == (k == IR_MIN) ? a : b;
  /* a <= b unknown (they may be equal): b <= a still decides, e.g. max(i, 0) for i in [0, 5) */
  if (ir_simp_le(s, b, a) == 1)
    return k == IR_MIN ? b : a;
  if ((a->kind == IR_MIN || a->kind == IR_MAX) && (r = nested(s, k, a, b)))
    return r;
  if ((b->kind == IR_MIN || b->kind == IR_MAX) && (r = nested(s, k, b, a)))
    return r;
  if (ir_failed(s->ctx))
    return NULL;
  if (ir_simp_order(s, a, b) > 0)
    return ir_binary(k, b, a);
  return ir_binary(k, a, b);
}

/* ---------------------------------------------------------------- comparisons */

static te_expr *truth(ir_simp *s, te_dtype t, bool v) {
  return ir_const_like(s->ctx, ir_bool_of(t), v ? 1 : 0);
}

/* -1: undecided. */
static int decide_bound(ir_simp *s, ir_expr_kind k, te_expr *d, ir_const_bound b) {
  switch (k) {
  case IR_LT:
    return b.max < 0 ? 1 : b.min >= 0 ? 0 : -1;
  case IR_LE:
    return b.max <= 0 ? 1 : b.min > 0 ? 0 : -1;
  case IR_EQ:
  case IR_NE: {
    int eq = (b.min == 0 && b.max == 0) ? 1 : (b.min > 0 || b.max < 0) ? 0 : -1;
    if (eq < 0) {
      ir_modular m = ir_modular_of(s->an, d);
      if (m.coeff != 1 && (m.coeff == 0 ? m.base != 0 : m.base % m.coeff != 0))
        eq = 0;
    }
    return eq < 0 ? -1 : (k == IR_EQ) == (eq == 1);
  }
  default:
    return -1;
  }
}

static int decide(ir_simp *s, ir_expr_kind k, te_expr *d) {
  ir_const_bound b = ir_const_bound_raw(s->an, d);
  int v = decide_bound(s, k, d, b);
  return v >= 0 ? v : decide_bound(s, k, d, ir_sym_bound(s, d, b));
}

/* Divides d = g*T + c (coefficients in L) by g, keeping the comparison's meaning. */
static void divide_out(ir_expr_kind k, ir_lin *L) {
  int64_t g = 0;
  for (int i = 0; i < L->n; i++)
    g = ir_gcd64(g, L->m[i].coeff);
  if (g <= 1)
    return;
  int64_t c = L->c;
  if (k == IR_LT) { /* gT + c < 0  <=>  T <= floor((-1 - c)/g) */
    if (c == INT64_MIN)
      return;
    L->c = -ir_floordiv64(-1 - c, g) - 1;
  } else if (k == IR_LE) { /* gT + c <= 0  <=>  T <= floor(-c/g) */
    if (c == INT64_MIN)
      return;
    L->c = -ir_floordiv64(-c, g);
  } else {
    if (c % g != 0)
      return; /* decided by the modular test already */
    L->c = c / g;
  }
  for (int i = 0; i < L->n; i++)
    L->m[i].coeff /= g;
}

static te_expr *cmp_index(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  te_expr *d = ir_simp_sum(s, IR_SUB, a, b);
  if (!d)
    return NULL;
  int v = decide(s, k, d);
  if (v >= 0)
    return ir_bool(s->ctx, v == 1);
  ir_lin L, P, N;
  ir_lin_init(&L, a->dtype);
  ir_lin_init(&P, a->dtype);
  ir_lin_init(&N, a->dtype);
  ir_lin_add(s, &L, d, 1);
  te_expr *r = NULL;
  if (!ir_lin_normalize(s, &L))
    goto done;
  divide_out(k, &L);
  int64_t flip = ((k == IR_EQ || k == IR_NE) && L.n > 0 && L.m[0].coeff < 0) ? -1 : 1;
  for (int i = 0; i < L.n; i++) {
    int64_t c = flip < 0 ? ir_neg_wrap(L.m[i].coeff) : L.m[i].coeff;
    ir_lin_push(c > 0 ? &P : &N, L.m[i].term, c > 0 ? c : ir_neg_wrap(c));
  }
  /* the constant goes where it is positive, or beside the terms when one side has none:
     x + 3 < y, x < y + 1, x < -2, -7 <= w//9 */
  int64_t c = flip < 0 ? ir_neg_wrap(L.c) : L.c;
  if (N.n == 0 && P.n > 0)
    N.c = ir_neg_wrap(c);
  else if (P.n == 0)
    P.c = c;
  else if (c > 0)
    P.c = c;
  else
    N.c = ir_neg_wrap(c);
  r = ir_binary(k, ir_lin_to_expr(s, &P), ir_lin_to_expr(s, &N));
done:
  ir_lin_free(&L);
  ir_lin_free(&P);
  ir_lin_free(&N);
  return r;
}

/* Narrow signed ints: decide from the operands' own bounds (their difference could wrap). */
static int decide_narrow(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  ir_const_bound x = ir_const_bound_raw(s->an, a), y = ir_const_bound_raw(s->an, b);
  switch (k) {
  case IR_LT:
    return x.max < y.min ? 1 : x.min >= y.max ? 0 : -1;
  case IR_LE:
    return x.max <= y.min ? 1 : x.min > y.max ? 0 : -1;
  case IR_EQ:
    return (x.max < y.min || x.min > y.max) ? 0 : -1;
  case IR_NE:
    return (x.max < y.min || x.min > y.max) ? 1 : -1;
  default:
    return -1;
  }
}

te_expr *ir_simp_cmp(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_expr *r = ir_fold_binary(s->ctx, k, a, b);
  if (r)
    return r;
  if (k == IR_GT || k == IR_GE) {
    te_expr *t = a;
    a = b;
    b = t;
    k = k == IR_GT ? IR_LT : IR_LE;
  }
  te_dtype t = a->dtype;
  if (a == b && (!ir_is_float(t) || k == IR_LT))
    return truth(s, t, k == IR_EQ || k == IR_LE);
  if (ir_arith_index(t))
    return cmp_index(s, k, a, b);
  if (ir_arith_sint(t)) {
    int v = decide_narrow(s, k, a, b);
    if (v >= 0)
      return ir_bool(s->ctx, v == 1);
  }
  return ir_binary(k, a, b);
}

/* ---------------------------------------------------------------- logic */

te_expr *ir_simp_not(ir_simp *s, te_expr *a) {
  if (!a)
    return NULL;
  te_expr *r = ir_fold_not(s->ctx, a);
  if (r)
    return r;
  if (a->kind == IR_NOT)
    return a->args[0];
  te_expr *x = a->kind >= IR_EQ && a->kind <= IR_GE ? a->args[0] : NULL, *y = x ? a->args[1] : NULL;
  bool ints = x && !ir_is_float(x->dtype);
  switch (a->kind) {
  case IR_EQ:
    return ir_simp_cmp(s, IR_NE, x, y);
  case IR_NE:
    return ir_simp_cmp(s, IR_EQ, x, y);
  case IR_LT:
    return ints ? ir_simp_cmp(s, IR_LE, y, x) : ir_not(a);
  case IR_LE:
    return ints ? ir_simp_cmp(s, IR_LT, y, x) : ir_not(a);
  default:
    return ir_not(a);
  }
}

te_expr *ir_simp_logic(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_expr *r = ir_fold_binary(s->ctx, k, a, b);
  if (r)
    return r;
  bool is_and = k == IR_AND;
  for (int i = 0; i < 2; i++) {
    te_expr *x = i ? b : a, *other = i ? a : b;
    if (ir_is_const_value(x, 1))
      return is_and ? other : x;
    if (ir_is_const_value(x, 0))
      return is_and ? x : other;
  }
  if (a == b)
    return a;
  if ((a->kind == IR_NOT && a->args[0] == b) || (b->kind == IR_NOT && b->args[0] == a))
    return truth(s, a->dtype, !is_and);
  if (a->kind >= IR_EQ && a->kind <= IR_GE) { /* c && !c, with !c normalised: x < y && y <= x */
    te_expr *na = ir_simp_not(s, a);
    if (!na)
      return NULL;
    if (na == b)
      return truth(s, a->dtype, !is_and);
  }
  if (ir_simp_order(s, a, b) > 0)
    return ir_binary(k, b, a);
  return ir_binary(k, a, b);
}
