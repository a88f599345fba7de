/* subst.c — substitution of variables and use queries.
 *
 * Variables are identities, so substitution replaces VAR nodes by pointer; it is a memoized
 * mutator (each shared subexpression is rewritten once). Use queries are visitors that abort at
 * the first hit.
 */
#include "ir.h"

typedef struct subst_data {
  int n;
  te_expr *const *from, *const *to;
} subst_data;

static te_expr *subst_var(ir_mutator *m, te_expr *e) {
  subst_data *d = m->data;
  for (int i = 0; i < d->n; i++)
    if (d->from[i] == e)
      return d->to[i];
  return e;
}

static void subst_init(ir_mutator *m, te_ctx *ctx, subst_data *d) {
  *m = (ir_mutator){0};
  m->ctx = ctx;
  m->data = d;
  m->memo = true;
  m->expr[IR_VAR] = subst_var;
}

te_expr *ir_substitute(te_ctx *ctx, te_expr *e, int n, te_expr *const from[], te_expr *const to[]) {
  if (!e)
    return NULL;
  if (n <= 0)
    return e;
  for (int i = 0; i < n; i++)
    if (!to[i])
      return NULL;
  subst_data d = {n, from, to};
  ir_mutator m;
  subst_init(&m, ctx ? ctx : e->ctx, &d);
  return ir_mutate_expr(&m, e);
}

ir_stmt *ir_substitute_stmt(te_ctx *ctx, ir_stmt *s, int n, te_expr *const from[],
                            te_expr *const to[]) {
  if (!s)
    return NULL;
  if (n <= 0)
    return s;
  for (int i = 0; i < n; i++)
    if (!to[i])
      return NULL;
  subst_data d = {n, from, to};
  ir_mutator m;
  subst_init(&m, ctx, &d);
  return ir_mutate_stmt(&m, s);
}

typedef struct uses_data {
  int n;
  te_expr *const *vars;
} uses_data;

static int uses_var(ir_visitor *v, te_expr *e) {
  uses_data *d = v->data;
  for (int i = 0; i < d->n; i++)
    if (d->vars[i] == e)
      return IR_ABORT;
  return IR_CONTINUE;
}

bool ir_expr_uses_any(te_expr *e, int n, te_expr *const vars[]) {
  if (!e || n <= 0)
    return false;
  uses_data d = {n, vars};
  ir_visitor v = {0};
  v.data = &d;
  v.expr[IR_VAR] = uses_var;
  return ir_visit_expr(&v, e) == IR_ABORT;
}

bool ir_expr_uses(te_expr *e, te_expr *var) { return ir_expr_uses_any(e, 1, &var); }

bool ir_stmt_uses(ir_stmt *s, te_expr *var) {
  if (!s || !var)
    return false;
  uses_data d = {1, &var};
  ir_visitor v = {0};
  v.data = &d;
  v.expr[IR_VAR] = uses_var;
  return ir_visit_stmt(&v, s) == IR_ABORT;
}
