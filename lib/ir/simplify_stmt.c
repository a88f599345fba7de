/* simplify_stmt.c — ir_simplify_stmt: simplify every expression of a statement in context.
 *
 * Descending, loop variables are bound to [min, min + extent) and let variables to their values
 * in the analyzer, so indices simplify with the facts of their loops (restored on the way out).
 * Structural cleanups: a loop whose extent is provably <= 0 disappears, a loop of extent 1
 * becomes its body with the variable replaced by min (thread-bound loops stay: their extent is
 * a launch parameter), an if with a decided condition becomes its branch, a let of a constant or
 * variable is substituted, an evaluate of a constant and a store of a value just loaded from
 * the same place vanish, and sequences flatten. likely(c) keeps its wrapper unless c folds.
 *
 * Returns NULL for "no statement" (no error on the context), as the generic mutator does.
 */
#include "arith_internal.h"

static te_expr *simp_expr(ir_mutator *m, te_expr *e) { return ir_simplify(m->data, e); }

static ir_stmt *simp_stmt(ir_mutator *m, ir_stmt *s) { return ir_mutate_stmt(m, s); }

static bool is_const(te_expr *e) { return e->kind == IR_INT || e->kind == IR_FLOAT; }

/* body with var bound to [min, min + extent) or to value while it is simplified. */
static ir_stmt *in_scope(ir_mutator *m, te_expr *var, te_expr *min, te_expr *ext, te_expr *value,
                         ir_stmt *body) {
  ir_analyzer *an = m->data;
  const ir_binding *saved = ir_analyzer_lookup(an, var);
  if (value)
    ir_analyzer_bind_value(an, var, value);
  else
    ir_analyzer_bind(an, var, min, ext);
  ir_stmt *r = simp_stmt(m, body);
  ir_analyzer_restore(an, var, saved);
  return r;
}

static ir_stmt *simp_for(ir_mutator *m, ir_stmt *s) {
  ir_analyzer *an = m->data;
  te_expr *var = IR_FOR_VAR(s), *min = ir_simplify(an, IR_FOR_MIN(s));
  te_expr *ext = ir_simplify(an, IR_FOR_EXTENT(s));
  if (!min || !ext)
    return NULL;
  if (ir_const_bound_of(an, ext).max <= 0)
    return NULL;
  if (ir_is_const_value(ext, 1) && s->u.loop.kind != IR_FOR_THREAD) {
    ir_stmt *body = ir_substitute_stmt(m->ctx, IR_FOR_BODY(s), 1, &var, &min);
    return body ? simp_stmt(m, body) : NULL;
  }
  ir_stmt *body = in_scope(m, var, min, ext, NULL, IR_FOR_BODY(s));
  if (!body)
    return NULL;
  if (body == IR_FOR_BODY(s) && min == IR_FOR_MIN(s) && ext == IR_FOR_EXTENT(s))
    return s;
  te_expr *ex[3] = {var, min, ext};
  return ir_stmt_with_children(m->ctx, s, ex, &body);
}

static ir_stmt *simp_let(ir_mutator *m, ir_stmt *s) {
  te_expr *var = s->exprs[0], *value = ir_simplify(m->data, s->exprs[1]);
  ir_stmt *body = s->stmts[0];
  if (!value)
    return NULL;
  if (!ir_stmt_uses(body, var))
    return simp_stmt(m, body);
  if (is_const(value) || value->kind == IR_VAR) {
    body = ir_substitute_stmt(m->ctx, body, 1, &var, &value);
    return body ? simp_stmt(m, body) : NULL;
  }
  ir_stmt *nb = in_scope(m, var, NULL, NULL, value, body);
  if (!nb)
    return NULL;
  if (nb == body && value == s->exprs[1])
    return s;
  te_expr *ex[2] = {var, value};
  return ir_stmt_with_children(m->ctx, s, ex, &nb);
}

static ir_stmt *simp_if(ir_mutator *m, ir_stmt *s) {
  te_expr *cond = ir_simplify(m->data, s->exprs[0]);
  ir_stmt *else_s = s->nstmts > 1 ? s->stmts[1] : NULL;
  if (!cond)
    return NULL;
  if (ir_is_const_value(cond, 1))
    return s->nstmts ? simp_stmt(m, s->stmts[0]) : NULL; /* NULL: no statement left */
  if (ir_is_const_value(cond, 0))
    return else_s ? simp_stmt(m, else_s) : NULL;
  ir_stmt *t = simp_stmt(m, s->stmts[0]);
  if (!t && ir_failed(m->ctx))
    return NULL;
  ir_stmt *f = else_s ? simp_stmt(m, else_s) : NULL;
  if (!f && ir_failed(m->ctx))
    return NULL;
  if (!t && !f)
    return NULL;
  if (!t)
    return ir_if(ir_simplify(m->data, ir_not(cond)), f, NULL);
  if (cond == s->exprs[0] && t == s->stmts[0] && f == else_s)
    return s;
  return ir_if(cond, t, f);
}

static ir_stmt *simp_evaluate(ir_mutator *m, ir_stmt *s) {
  te_expr *v = ir_simplify(m->data, s->exprs[0]);
  if (!v || is_const(v))
    return NULL;
  return v == s->exprs[0] ? s : ir_evaluate(v);
}

static ir_stmt *simp_store(ir_mutator *m, ir_stmt *s) {
  te_expr *value = ir_simplify(m->data, s->exprs[0]), *index = ir_simplify(m->data, s->exprs[1]);
  if (!value || !index)
    return NULL;
  if (value->kind == IR_LOAD && value->u.buffer == s->u.buffer && value->args[0] == index)
    return NULL; /* A[i] = A[i] */
  if (value == s->exprs[0] && index == s->exprs[1])
    return s;
  return ir_store(s->u.buffer, value, index);
}

/* Children simplified, then ir_seq: empty ones dropped, nested sequences flattened. */
static ir_stmt *simp_seq(ir_mutator *m, ir_stmt *s) {
  ir_stmt *small[8], **out = small;
  int n = (int)s->nstmts;
  if (n > 8 && !(out = ir_alloc(m->ctx, (size_t)n * sizeof *out)))
    return NULL;
  bool changed = false;
  for (int i = 0; i < n; i++) {
    out[i] = simp_stmt(m, s->stmts[i]);
    if (!out[i] && ir_failed(m->ctx))
      return NULL;
    changed |= out[i] != s->stmts[i] || (out[i] && out[i]->kind == IR_S_SEQ);
  }
  return changed ? ir_seq(m->ctx, n, out) : s;
}

static ir_stmt *simp_assert(ir_mutator *m, ir_stmt *s) {
  te_expr *cond = ir_simplify(m->data, s->exprs[0]);
  if (!cond)
    return NULL;
  if (ir_is_const_value(cond, 1))
    return s->nstmts ? simp_stmt(m, s->stmts[0]) : NULL; /* NULL: no statement left */
  return ir_mutate_stmt_children(m, s);
}

ir_stmt *ir_simplify_stmt(ir_analyzer *an, ir_stmt *s) {
  if (!an || !s)
    return NULL;
  ir_mutator m = {0};
  m.ctx = an->ctx;
  m.data = an;
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    m.expr[k] = simp_expr;
  m.stmt[IR_S_FOR] = simp_for;
  m.stmt[IR_S_LET_STMT] = simp_let;
  m.stmt[IR_S_IF] = simp_if;
  m.stmt[IR_S_EVALUATE] = simp_evaluate;
  m.stmt[IR_S_STORE] = simp_store;
  m.stmt[IR_S_ASSERT] = simp_assert;
  m.stmt[IR_S_SEQ] = simp_seq;
  return ir_mutate_stmt(&m, s);
}
