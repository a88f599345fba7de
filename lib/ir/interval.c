/* interval.c — symbolic intervals for bound inference.
 *
 * ir_interval_of(an, e, n, vars, doms): the range of e when each vars[i] ranges over doms[i]
 * (endpoints may be symbolic; NULL is unbounded) and every other variable stays itself. The
 * relaxed variables are bound to their domains in the analyzer while e is simplified, so
 * (i.o*32 + i.i) // 32 is i.o before the relaxation even starts. Then, structurally:
 *   + and - exact; * by a constant or by a bound-signed expression; // by a positive point
 *   (monotone); % by a positive point: [min % c, max % c] when both ends fall in one period,
 *   else [0, c - 1]; min/max endpoint-wise; select the union of its branches;
 *   anything else: the constant bounds, else unbounded.
 * Every endpoint is simplified, so split, tile and fuse indices give exact, readable answers:
 *   i.o*32 + i.i, i.i in [0, 31] -> [i.o*32, i.o*32 + 31];  f // 8, f in [0, 63] -> [0, 7];
 *   x + r - 1, r in [0, 2] -> [x - 1, x + 1].
 */
#include <stdlib.h>

#include "arith_internal.h"

typedef ir_interval iv;

typedef struct ivc {
  ir_analyzer *an;
  int n;
  te_expr *const *vars;
  const iv *doms;
} ivc;

static iv point(te_expr *e) { return (iv){e, e}; }
static bool is_point(iv a) { return a.min && a.min == a.max; }
static te_expr *simp(ivc *c, te_expr *e) { return e ? ir_simplify(c->an, e) : NULL; }

/* Both ends through f, NULL staying NULL. */
static te_expr *end2(ivc *c, ir_expr_kind k, te_expr *a, te_expr *b) {
  return a && b ? simp(c, ir_binary(k, a, b)) : NULL;
}

static iv fallback(ivc *c, te_expr *e) {
  iv r = {NULL, NULL};
  if (!ir_is_intlike(e->dtype) || e->dtype.lanes != 1)
    return r;
  ir_const_bound b = ir_const_bound_raw(c->an, e);
  if (b.min != IR_NEG_INF)
    r.min = ir_int(c->an->ctx, e->dtype, b.min);
  if (b.max != IR_POS_INF)
    r.max = ir_int(c->an->ctx, e->dtype, b.max);
  return r;
}

static iv eval(ivc *c, te_expr *e);

/* a * b where b is a point of known sign. */
static iv mul_point(ivc *c, iv a, te_expr *b) {
  ir_const_bound sb = ir_const_bound_raw(c->an, b);
  if (sb.min >= 0)
    return (iv){end2(c, IR_MUL, a.min, b), end2(c, IR_MUL, a.max, b)};
  if (sb.max <= 0)
    return (iv){end2(c, IR_MUL, a.max, b), end2(c, IR_MUL, a.min, b)};
  return (iv){NULL, NULL};
}

static bool nonneg(ivc *c, te_expr *e) { return e && ir_const_bound_raw(c->an, e).min >= 0; }

static iv mul_iv(ivc *c, te_expr *e, iv a, iv b) {
  iv r = {NULL, NULL};
  if (is_point(b))
    r = mul_point(c, a, b.min);
  else if (is_point(a))
    r = mul_point(c, b, a.min);
  else if (nonneg(c, a.min) && nonneg(c, b.min))
    r = (iv){end2(c, IR_MUL, a.min, b.min), end2(c, IR_MUL, a.max, b.max)};
  return (r.min || r.max) ? r : fallback(c, e);
}

static iv div_iv(ivc *c, te_expr *e, iv a, iv b) {
  if (!is_point(b))
    return fallback(c, e);
  ir_const_bound sb = ir_const_bound_raw(c->an, b.min);
  if (sb.min > 0)
    return (iv){end2(c, IR_FLOORDIV, a.min, b.min), end2(c, IR_FLOORDIV, a.max, b.min)};
  if (sb.max < 0)
    return (iv){end2(c, IR_FLOORDIV, a.max, b.min), end2(c, IR_FLOORDIV, a.min, b.min)};
  return fallback(c, e);
}

static iv mod_iv(ivc *c, te_expr *e, iv a, iv b) {
  if (!is_point(b) || ir_const_bound_raw(c->an, b.min).min <= 0)
    return fallback(c, e);
  te_expr *d = b.min;
  if (a.min && a.max) {
    te_expr *qmin = end2(c, IR_FLOORDIV, a.min, d), *qmax = end2(c, IR_FLOORDIV, a.max, d);
    if (qmin && qmin == qmax)
      return (iv){end2(c, IR_FLOORMOD, a.min, d), end2(c, IR_FLOORMOD, a.max, d)};
  }
  if (d->kind == IR_INT) { /* [0, c - 1], or tighter from the constant bounds */
    iv f = fallback(c, e);
    if (f.min && f.max)
      return f;
  }
  te_expr *one = ir_int(c->an->ctx, d->dtype, 1);
  return (iv){ir_int(c->an->ctx, d->dtype, 0), end2(c, IR_SUB, d, one)};
}

/* min/max of two ends where NULL is -inf (lower ends) or +inf (upper ends). */
static te_expr *pick(ivc *c, ir_expr_kind k, te_expr *x, te_expr *y, bool null_wins) {
  if (!x || !y)
    return null_wins ? NULL : (x ? x : y);
  return simp(c, ir_binary(k, x, y));
}

static iv eval(ivc *c, te_expr *e) {
  if (!ir_expr_uses_any(e, c->n, c->vars))
    return point(e);
  te_expr **x = e->args;
  switch ((ir_expr_kind)e->kind) {
  case IR_VAR:
    for (int i = 0; i < c->n; i++)
      if (c->vars[i] == e)
        return c->doms[i];
    return point(e);
  case IR_ADD: {
    iv a = eval(c, x[0]), b = eval(c, x[1]);
    return (iv){end2(c, IR_ADD, a.min, b.min), end2(c, IR_ADD, a.max, b.max)};
  }
  case IR_SUB: {
    iv a = eval(c, x[0]), b = eval(c, x[1]);
    return (iv){end2(c, IR_SUB, a.min, b.max), end2(c, IR_SUB, a.max, b.min)};
  }
  case IR_MUL:
    return mul_iv(c, e, eval(c, x[0]), eval(c, x[1]));
  case IR_FLOORDIV:
    return div_iv(c, e, eval(c, x[0]), eval(c, x[1]));
  case IR_FLOORMOD:
    return mod_iv(c, e, eval(c, x[0]), eval(c, x[1]));
  case IR_MIN:
  case IR_MAX: {
    iv a = eval(c, x[0]), b = eval(c, x[1]);
    bool mn = e->kind == IR_MIN;
    return (iv){pick(c, (ir_expr_kind)e->kind, a.min, b.min, mn),
                pick(c, (ir_expr_kind)e->kind, a.max, b.max, !mn)};
  }
  case IR_SELECT:
    return ir_interval_union(c->an, eval(c, x[1]), eval(c, x[2]));
  case IR_LET: {
    te_expr *body = ir_substitute(c->an->ctx, x[2], 1, &x[0], &x[1]);
    return body ? eval(c, body) : (iv){NULL, NULL};
  }
  default:
    return fallback(c, e);
  }
}

ir_interval ir_interval_of(ir_analyzer *an, te_expr *e, int n, te_expr *const vars[],
                           const ir_interval doms[]) {
  iv r = {NULL, NULL};
  if (!an || !e || n < 0)
    return r;
  const ir_binding **saved = n ? ir_malloc(an->ctx, (size_t)n * sizeof *saved) : NULL;
  if (n && !saved) {
    ir_error(an->ctx, TE_ERR_NOMEM, "ir_interval_of: out of memory");
    return r;
  }
  for (int i = 0; i < n; i++) {
    saved[i] = ir_analyzer_lookup(an, vars[i]);
    te_expr *ext = ir_interval_extent(an, doms[i]);
    if (ext)
      ir_analyzer_bind(an, vars[i], doms[i].min, ext);
    else
      ir_analyzer_unbind(an, vars[i]);
  }
  ivc c = {an, n, vars, doms};
  te_expr *se = ir_simplify(an, e);
  if (se)
    r = eval(&c, se);
  for (int i = n - 1; i >= 0; i--)
    ir_analyzer_restore(an, vars[i], saved[i]);
  free(saved);
  return r;
}

ir_interval ir_interval_union(ir_analyzer *an, ir_interval a, ir_interval b) {
  ivc c = {an, 0, NULL, NULL};
  return (iv){pick(&c, IR_MIN, a.min, b.min, true), pick(&c, IR_MAX, a.max, b.max, true)};
}

ir_interval ir_interval_from_range(ir_analyzer *an, te_expr *min, te_expr *extent) {
  if (!an || !min || !extent)
    return (iv){NULL, NULL};
  te_expr *one = ir_int(an->ctx, min->dtype, 1);
  return (iv){ir_simplify(an, min), ir_simplify(an, ir_sub(ir_add(min, extent), one))};
}

te_expr *ir_interval_extent(ir_analyzer *an, ir_interval a) {
  if (!an || !a.min || !a.max)
    return NULL;
  te_expr *one = ir_int(an->ctx, a.min->dtype, 1);
  return ir_simplify(an, ir_add(ir_sub(a.max, a.min), one));
}
