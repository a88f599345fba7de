/* sym_bound.c — bounds through symbolic loop ranges.
 *
 * Constant bounds see a loop variable with a symbolic range, such as the tail loop
 * for (i.o, n//16, (n + 15)//16 - n//16), only through the constant bounds of its ends: nothing
 * useful. Here a canonical sum is bounded by moving each such variable to the end of its range
 * that maximizes (or minimizes) its term and canonicalizing again, so that what the range has in
 * common with the rest cancels: n - i.o*16 is at most n - (n//16)*16 = n%16 <= 15. Used by the
 * simplifier where constant bounds decide nothing (min/max, comparisons), and by
 * ir_const_bound_of, whose callers (unrolling a tail, say) need a constant bound of such sums.
 * Never nested (the analyzer's sym_depth), so the cost stays one extra canonicalization.
 */
#include "arith_internal.h"

/* A variable whose range has a symbolic min or extent (constant ranges are exact already). */
static const ir_binding *sym_range(ir_simp *s, te_expr *e) {
  if (e->kind != IR_VAR)
    return NULL;
  const ir_binding *b = ir_analyzer_lookup(s->an, e);
  if (!b || !b->min || (b->min->kind == IR_INT && b->extent->kind == IR_INT))
    return NULL;
  return b;
}

/* d (canonical) with each variable term k*v of symbolic range replaced by the end of v's range
   that maximizes (upper) or minimizes it, then canonicalized: the sum's rules cancel what the
   range has in common with the rest. Sound for any other use of v: max(k*v + g(v)) <=
   max(k*v) + max(g(v)), and g's bound still sees v's binding. NULL when nothing applies. */
static te_expr *sym_end(ir_simp *s, ir_lin *L, bool upper) {
  ir_lin E;
  ir_lin_init(&E, L->t);
  E.c = L->c;
  bool any = false;
  for (int i = 0; i < L->n; i++) {
    const ir_binding *b = sym_range(s, L->m[i].term);
    int64_t k = L->m[i].coeff;
    if (!b) {
      ir_lin_push(&E, L->m[i].term, k);
      continue;
    }
    any = true;
    te_expr *end = b->min;
    if ((k > 0) == upper)
      end = ir_sub(ir_add(b->min, b->extent), ir_int(s->ctx, L->t, 1));
    end = ir_simp_expr(s, end);
    if (end)
      ir_lin_add(s, &E, end, k);
    else
      E.oom = true;
  }
  te_expr *r = any ? ir_lin_to_expr(s, &E) : NULL;
  ir_lin_free(&E);
  return r;
}

/* The bounds b of d, tightened by moving the variables with symbolic ranges to their ends: in
   for (i.o, n//16, ...), n - i.o*16 - 16 is at most n - (n//16)*16 - 16 = n%16 - 16 < 0.
   Callers ask only when b decides nothing; cached per d for the ir_simplify call. */
ir_const_bound ir_sym_bound(ir_simp *s, te_expr *d, ir_const_bound b) {
  ir_analyzer *an = s->an;
  if (an->sym_depth > 0 || !s->sym || !ir_arith_index(d->dtype))
    return b;
  ir_const_bound *hit = ir_map_get(s->sym, d);
  if (hit)
    return *hit;
  ir_lin L;
  ir_lin_init(&L, d->dtype);
  ir_lin_add(s, &L, d, 1);
  an->sym_depth++;
  te_expr *hi = L.oom ? NULL : sym_end(s, &L, true), *lo = hi ? sym_end(s, &L, false) : NULL;
  an->sym_depth--;
  ir_lin_free(&L);
  if (hi) {
    ir_const_bound bh = ir_const_bound_raw(an, hi);
    if (bh.max < b.max)
      b.max = bh.max;
  }
  if (lo) {
    ir_const_bound bl = ir_const_bound_raw(an, lo);
    if (bl.min > b.min)
      b.min = bl.min;
  }
  if ((hit = ir_alloc(s->ctx, sizeof *hit))) {
    *hit = b;
    ir_map_put(s->sym, d, hit);
  }
  return b;
}

typedef struct sym_scan {
  ir_analyzer *an;
  bool found;
} sym_scan;

static int scan_var(ir_visitor *v, te_expr *e) {
  sym_scan *sc = v->data;
  const ir_binding *b = ir_analyzer_lookup(sc->an, e);
  if (b && b->min && !(b->min->kind == IR_INT && b->extent->kind == IR_INT)) {
    sc->found = true;
    return IR_ABORT;
  }
  return IR_CONTINUE;
}

ir_const_bound ir_sym_tighten(ir_analyzer *an, te_expr *e, ir_const_bound b) {
  if (an->sym_depth > 0 || !ir_arith_index(e->dtype))
    return b;
  sym_scan sc = {an, false};
  ir_visitor v = {0};
  v.expr[IR_VAR] = scan_var;
  v.data = &sc;
  ir_visit_expr(&v, e);
  if (!sc.found)
    return b;
  ir_simp s = {an, an->ctx, ir_map_new(an->ctx), ir_map_new(an->ctx), ir_map_new(an->ctx)};
  if (!s.memo || !s.lead || !s.sym)
    return b;
  te_expr *d = ir_simp_expr(&s, e);
  return d ? ir_sym_bound(&s, d, b) : b;
}
