/* simplify.c — ir_simplify: the driver of the expression simplifier.
 *
 * Bottom-up: children first, then the node's rules (canonical sums in simplify_sum.c, division
 * in simplify_div.c, comparisons/logic/min/max in simplify_cmp.c, vectors in simplify_vec.c,
 * constant folding in simplify_fold.c; select, cast, call and let here). Results are memoized
 * per node for the whole call (hash-consing makes shared subtrees one node), so the cost is
 * linear in the DAG. The rules aim at a fixed point in one pass; the driver re-runs the result
 * until it stops changing (at most four passes, cheap thanks to the memo), which makes
 * ir_simplify idempotent: simplify(simplify(e)) == simplify(e), the same pointer.
 */
#include "arith_internal.h"

/* ---------------------------------------------------------------- arithmetic outside the
   canonical form: floats, unsigned ints, vectors */

static te_expr *arith_other(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  te_expr *r = ir_fold_binary(s->ctx, k, a, b);
  if (r)
    return r;
  bool ints = ir_is_intlike(a->dtype);
  switch (k) {
  case IR_ADD:
    if (ints && ir_is_const_value(b, 0))
      return a;
    if (ints && ir_is_const_value(a, 0))
      return b;
    break;
  case IR_SUB:
    if (ints && ir_is_const_value(b, 0))
      return a;
    if (ints && a == b)
      return ir_const_like(s->ctx, a->dtype, 0);
    break;
  case IR_MUL:
    if (ir_is_const_value(b, 1))
      return a;
    if (ir_is_const_value(a, 1))
      return b;
    if (ints && ir_is_const_value(b, 0))
      return b;
    if (ints && ir_is_const_value(a, 0))
      return a;
    break;
  case IR_DIV:
    if (ir_is_const_value(b, 1))
      return a;
    break;
  default:
    break;
  }
  return ir_binary(k, a, b);
}

static te_expr *simp_trunc(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  te_expr *r = ir_fold_binary(s->ctx, k, a, b);
  if (r)
    return r;
  bool div = k == IR_TRUNCDIV;
  if (ir_is_const_value(b, 1))
    return div ? a : ir_const_like(s->ctx, a->dtype, 0);
  if (a == b)
    return ir_const_like(s->ctx, a->dtype, div ? 1 : 0);
  if (ir_arith_sint(a->dtype)) {
    ir_const_bound ba = ir_const_bound_raw(s->an, a), bb = ir_const_bound_raw(s->an, b);
    if (ba.min >= 0 && bb.min > 0 && ba.max < bb.min)
      return div ? ir_int(s->ctx, a->dtype, 0) : a;
  }
  return ir_binary(k, a, b);
}

te_expr *ir_simp_binary(ir_simp *s, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  if (a->dtype.lanes > 1) {
    te_expr *r = ir_simp_vector(s, k, a, b);
    if (r || ir_failed(s->ctx))
      return r;
  }
  switch (k) {
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
    return ir_arith_sint(a->dtype) ? ir_simp_sum(s, k, a, b) : arith_other(s, k, a, b);
  case IR_DIV:
    return arith_other(s, k, a, b);
  case IR_FLOORDIV:
    return ir_simp_floordiv(s, a, b);
  case IR_FLOORMOD:
    return ir_simp_floormod(s, a, b);
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
    return simp_trunc(s, k, a, b);
  case IR_MIN:
  case IR_MAX:
    return ir_simp_minmax(s, k, a, b);
  case IR_AND:
  case IR_OR:
    return ir_simp_logic(s, k, a, b);
  default:
    return ir_simp_cmp(s, k, a, b);
  }
}

te_expr *ir_simp_ramp(ir_simp *s, te_expr *base, te_expr *stride, int lanes) {
  if (!base || !stride)
    return NULL;
  if (ir_is_const_value(stride, 0))
    return ir_broadcast(base, lanes);
  (void)s;
  return ir_ramp(base, stride, lanes);
}

/* ---------------------------------------------------------------- other nodes */

static te_expr *simp_select(ir_simp *s, te_expr *c, te_expr *t, te_expr *f) {
  if (ir_is_const_value(c, 1))
    return t;
  if (ir_is_const_value(c, 0))
    return f;
  if (t == f)
    return t;
  if (c->kind == IR_NOT)
    return ir_select(c->args[0], f, t);
  (void)s;
  return ir_select(c, t, f);
}

/* Casting from `from` to `mid` and back to `from` gives the value back. */
static bool round_trips(te_dtype from, te_dtype mid) {
  if (ir_is_bool(from) || ir_is_bool(mid))
    return false;
  if (ir_is_intlike(from) && ir_is_intlike(mid))
    return mid.bits >= from.bits;
  /* f16 and bf16 are both 16 bits, and neither holds the other's values */
  return ir_is_float(from) && ir_is_float(mid) &&
         (mid.bits > from.bits || (mid.bits == from.bits && mid.code == from.code));
}

static te_expr *simp_cast(ir_simp *s, te_dtype t, te_expr *a) {
  if (ir_dtype_eq(t, a->dtype))
    return a;
  te_expr *r = ir_fold_cast(s->ctx, t, a);
  if (r)
    return r;
  if (a->kind == IR_CAST && ir_dtype_eq(a->args[0]->dtype, t) && round_trips(t, a->dtype))
    return a->args[0];
  if (a->kind == IR_BROADCAST)
    return ir_broadcast(simp_cast(s, ir_elem(t), a->args[0]), t.lanes);
  return ir_cast(t, a);
}

static te_expr *simp_call(ir_simp *s, te_expr *e, te_expr *const args[]) {
  if (e->u.call == IR_INTRIN_IF_THEN_ELSE) { /* a known condition leaves one side */
    if (ir_is_const_value(args[0], 1) || args[1] == args[2])
      return args[1];
    if (ir_is_const_value(args[0], 0))
      return args[2];
  }
  te_expr *r = ir_expr_with_args(e, e->nargs, args);
  te_expr *folded = r ? ir_fold_call(s->ctx, r) : NULL;
  return folded ? folded : r;
}

typedef struct use_count {
  te_expr *var;
  int n;
} use_count;

static int count_var(ir_visitor *v, te_expr *e) {
  use_count *u = v->data;
  if (e == u->var && ++u->n >= 2)
    return IR_ABORT;
  return IR_CONTINUE;
}

static int uses_of(te_expr *body, te_expr *var) {
  ir_visitor v = {0};
  use_count u = {var, 0};
  v.expr[IR_VAR] = count_var;
  v.data = &u;
  ir_visit_expr(&v, body);
  return u.n;
}

/* let: substitute constants, variables and single uses; otherwise keep the let and simplify
   the body knowing the variable's value (with a memo of its own: the binding is local). */
static te_expr *simp_let(ir_simp *s, te_expr *e) {
  te_expr *var = e->args[0], *value = ir_simp_expr(s, e->args[1]), *body = e->args[2];
  if (!value)
    return NULL;
  int n = uses_of(body, var);
  if (n == 0)
    return ir_simp_expr(s, body);
  if (n == 1 || value->kind == IR_INT || value->kind == IR_FLOAT || value->kind == IR_VAR)
    return ir_simp_expr(s, ir_substitute(s->ctx, body, 1, &var, &value));
  const ir_binding *saved = ir_analyzer_lookup(s->an, var);
  ir_map *memo = s->memo, *sym = s->sym;
  s->memo = ir_map_new(s->ctx);
  s->sym = ir_map_new(s->ctx);
  ir_analyzer_bind_value(s->an, var, value);
  te_expr *nb = s->memo && s->sym ? ir_simp_expr(s, body) : NULL;
  ir_analyzer_restore(s->an, var, saved);
  s->memo = memo;
  s->sym = sym;
  return ir_let(var, value, nb);
}

static te_expr *simp_node(ir_simp *s, te_expr *e, te_expr *const x[]) {
  ir_expr_kind k = (ir_expr_kind)e->kind;
  if (k >= IR_ADD && k <= IR_OR)
    return ir_simp_binary(s, k, x[0], x[1]);
  switch (k) {
  case IR_NOT:
    return ir_simp_not(s, x[0]);
  case IR_SELECT:
    return simp_select(s, x[0], x[1], x[2]);
  case IR_CAST:
    return simp_cast(s, e->dtype, x[0]);
  case IR_CALL:
    return simp_call(s, e, x);
  case IR_RAMP:
    return ir_simp_ramp(s, x[0], x[1], e->dtype.lanes);
  case IR_BROADCAST:
    return ir_broadcast(x[0], e->dtype.lanes);
  default:
    return ir_expr_with_args(e, e->nargs, x);
  }
}

static te_expr *simp_var(ir_simp *s, te_expr *v) {
  const ir_binding *b = ir_analyzer_lookup(s->an, v);
  if (b && b->value && (b->value->kind == IR_INT || b->value->kind == IR_FLOAT))
    return b->value;
  return v;
}

te_expr *ir_simp_expr(ir_simp *s, te_expr *e) {
  if (!e)
    return NULL;
  if (e->kind == IR_INT || e->kind == IR_FLOAT)
    return e;
  if (e->kind == IR_VAR)
    return simp_var(s, e);
  te_expr *r = ir_map_get(s->memo, e);
  if (r)
    return r;
  if (e->kind == IR_LET) {
    r = simp_let(s, e);
  } else {
    te_expr *small[8], **args = small;
    if (e->nargs > 8 && !(args = ir_alloc(s->ctx, e->nargs * sizeof *args)))
      return NULL;
    for (int i = 0; i < e->nargs; i++)
      if (!(args[i] = ir_simp_expr(s, e->args[i])))
        return NULL;
    r = simp_node(s, e, args);
  }
  if (r && !ir_map_put(s->memo, e, r))
    return NULL;
  return r;
}

/* ---------------------------------------------------------------- entry points */

te_expr *ir_simplify(ir_analyzer *an, te_expr *e) {
  if (!an || !e)
    return NULL;
  ir_simp s = {an, an->ctx, ir_map_new(an->ctx), ir_map_new(an->ctx), ir_map_new(an->ctx)};
  if (!s.memo || !s.lead || !s.sym)
    return NULL;
  te_expr *cur = e;
  for (int pass = 0; pass < 4; pass++) {
    te_expr *next = ir_simp_expr(&s, cur);
    if (!next || next == cur)
      return next;
    cur = next;
  }
  return cur;
}

bool ir_can_prove(ir_analyzer *an, te_expr *cond) {
  te_expr *r = ir_simplify(an, cond);
  return r && r->kind == IR_INT && r->u.i == 1;
}
