/* rfactor_split.c — may te_rfactor split a reduction by a custom reducer (te_reducer_new)?
 *
 * rfactor makes partial results of the reducer, then combines the partials with the same
 * reducer: the rhs of the final combination is no longer an incoming value but a partial state.
 * That is right exactly when the combiner is a commutative, associative operation on the tuple of
 * values with its identity, what te_reducer_new's contract asks for. Two things are checked:
 *   - the results and identities read nothing but the reducer's lhs/rhs variables, scalar
 *     parameters and constants (no tensor, no loop or reduce variable: the partial stage and the
 *     final stage would evaluate them at different points), and no reduction;
 *   - a probe at three fixed sample tuples a, b, c: f(a, b) == f(b, a) and
 *     f(f(a, b), c) == f(a, f(b, c)), evaluated by constant folding (relative tolerance 1e-4
 *     for floats, which round differently in the two orders). A sum of squares written as
 *     lhs + rhs * rhs fails it. Where the results do not fold to constants (a parameter, a call
 *     the folder leaves alone) the probe says nothing and the split is allowed.
 * A combiner refused here gets TE_ERR_UNSUPPORTED with the reason.
 */
#include <math.h>
#include <stdio.h>

#include "sch.h"

typedef struct reads_walk {
  const ir_custom_reducer *cr;
  te_expr *lets[16];
  int nlets;
  const char *what; /* the first thing read that may not be */
  char buf[96];
} reads_walk;

static bool own_var(reads_walk *w, te_expr *v) {
  for (int i = 0; i < w->cr->nvalues; i++)
    if (v == w->cr->lhs[i] || v == w->cr->rhs[i])
      return true;
  for (int i = 0; i < w->nlets; i++)
    if (v == w->lets[i])
      return true;
  return false;
}

/* False when e (a result or an identity) reads what the split may not move. */
static bool reads_only_own(reads_walk *w, te_expr *e) {
  switch (e->kind) {
  case IR_VAR:
    if (own_var(w, e) || e->u.var.kind == IR_VAR_PARAM)
      return true;
    snprintf(w->buf, sizeof w->buf, "the variable '%s'", e->u.var.name);
    w->what = w->buf;
    return false;
  case IR_ACCESS:
    snprintf(w->buf, sizeof w->buf, "the tensor '%s'", e->u.tensor->name);
    w->what = w->buf;
    return false;
  case IR_REDUCE:
    w->what = "a reduction";
    return false;
  case IR_LET:
    if (w->nlets < 16)
      w->lets[w->nlets++] = e->args[0];
    return reads_only_own(w, e->args[1]) && reads_only_own(w, e->args[2]);
  default:
    for (int i = 0; i < e->nargs; i++)
      if (!reads_only_own(w, e->args[i]))
        return false;
    return true;
  }
}

/* f(x, y): the reducer's results with lhs = x and rhs = y, folded. */
static void combine(te_ctx *ctx, ir_analyzer *an, const ir_custom_reducer *cr, te_expr *const x[],
                    te_expr *const y[], te_expr *out[]) {
  int n = cr->nvalues;
  te_expr *from[32], *to[32];
  for (int i = 0; i < n; i++) {
    from[i] = cr->lhs[i], to[i] = x[i];
    from[n + i] = cr->rhs[i], to[n + i] = y[i];
  }
  for (int i = 0; i < n; i++) {
    te_expr *r = ir_substitute(ctx, cr->results[i], 2 * n, from, to);
    out[i] = r ? ir_simplify(an, r) : NULL;
  }
}

static bool is_const(const te_expr *e) { return e && (e->kind == IR_INT || e->kind == IR_FLOAT); }

/* 1 when u and v are constants that differ, 0 when they agree, -1 when either is no constant. */
static int differ(const te_expr *u, const te_expr *v) {
  if (!is_const(u) || !is_const(v) || u->kind != v->kind)
    return -1;
  if (u->kind == IR_INT)
    return u->u.i != v->u.i;
  double a = u->u.f, b = v->u.f;
  if (isnan(a) || isnan(b))
    return -1;
  return fabs(a - b) > 1e-4 * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* Sample tuple s (0, 1, 2) of the reducer's value types: distinct, positive, non-integral for
   floats (so argmax-like selects see no ties and Welford-like counts no zero). NULL when a value
   type is neither int nor float. */
static bool sample(te_ctx *ctx, const ir_custom_reducer *cr, int s, te_expr *out[]) {
  static const double base[3] = {3.25, 7.5, 2.125};
  for (int i = 0; i < cr->nvalues; i++) {
    te_dtype t = cr->lhs[i]->dtype;
    double v = base[s] + 1.75 * i;
    if (ir_is_float(t))
      out[i] = ir_float(ctx, t, v);
    else if (ir_is_intlike(t))
      out[i] = ir_int(ctx, t, (int64_t)v);
    else
      return false;
    if (!out[i])
      return false;
  }
  return true;
}

te_status sch_rfactor_check_combiner(te_ctx *ctx, ir_analyzer *an, const char *fn,
                                     const char *stage, const ir_custom_reducer *cr) {
  reads_walk w = {.cr = cr};
  for (int i = 0; i < cr->nvalues; i++)
    if (!reads_only_own(&w, cr->results[i]) || !reads_only_own(&w, cr->identity[i]))
      return ir_error(ctx, TE_ERR_UNSUPPORTED,
                      "%s: stage '%s': the custom reducer's value %d reads %s; only a combiner "
                      "of its lhs and rhs values (and parameters) can combine partial results",
                      fn, stage, i, w.what);
  te_expr *a[16], *b[16], *c[16], *ab[16], *ba[16], *ab_c[16], *bc[16], *a_bc[16];
  if (cr->nvalues > 16 || !sample(ctx, cr, 0, a) || !sample(ctx, cr, 1, b) ||
      !sample(ctx, cr, 2, c))
    return TE_OK;
  combine(ctx, an, cr, a, b, ab);
  combine(ctx, an, cr, b, a, ba);
  combine(ctx, an, cr, b, c, bc);
  for (int i = 0; i < cr->nvalues; i++)
    if (!ab[i] || !bc[i])
      return te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
  combine(ctx, an, cr, ab, c, ab_c);
  combine(ctx, an, cr, a, bc, a_bc);
  for (int i = 0; i < cr->nvalues; i++) {
    const char *law = differ(ab[i], ba[i]) == 1       ? "commutative"
                      : differ(ab_c[i], a_bc[i]) == 1 ? "associative"
                                                      : NULL;
    if (law)
      return ir_error(ctx, TE_ERR_UNSUPPORTED,
                      "%s: stage '%s': the custom reducer is not %s (value %d differs when the "
                      "combination is reordered), so its partial results cannot be combined; "
                      "rfactor needs a combiner of two accumulated states",
                      fn, stage, law, i);
  }
  return TE_OK;
}
