/* schedule_to_loops.c — the first pass: the schedule becomes one loop nest.
 *
 * Needs: pctx->sch and the signature made by lw_make_signature (args.c).
 * Guarantees: a statement in REALIZE / PROVIDE / ACCESS form (sch_schedule_to_stmt, after bound
 * inference) whose every free variable is a kernel argument: a scalar parameter given to
 * te_build, or a symbolic size bound from a tensor argument. A variable used by the computation
 * but not given is the user's mistake, reported here with its name, because only the whole loop
 * nest (bodies, extents of intermediate tensors, reduce domains) shows every variable used.
 */
#include "lower.h"
#include "schedule/sch.h"

typedef struct free_vars {
  te_ctx *ctx;
  ir_map *seen;  /* expressions already walked (the DAG is shared) */
  ir_map *bound; /* variables bound by FOR, LET_STMT, LET */
  int n, cap;
  te_expr **used; /* variables used, in first-use order */
} free_vars;

static bool push_used(free_vars *fv, te_expr *v) {
  if (fv->n == fv->cap) {
    int cap = fv->cap ? 2 * fv->cap : 16;
    te_expr **nu = ir_alloc(fv->ctx, (size_t)cap * sizeof *nu);
    if (!nu)
      return false;
    for (int i = 0; i < fv->n; i++)
      nu[i] = fv->used[i];
    fv->used = nu;
    fv->cap = cap;
  }
  fv->used[fv->n++] = v;
  return true;
}

static int fv_expr(ir_visitor *v, te_expr *e) {
  free_vars *fv = v->data;
  if (ir_map_has(fv->seen, e))
    return IR_PRUNE;
  if (!ir_map_put(fv->seen, e, e))
    return IR_ABORT;
  if (e->kind == IR_VAR)
    return push_used(fv, e) ? IR_CONTINUE : IR_ABORT;
  if (e->kind == IR_LET && !ir_map_put(fv->bound, e->args[0], e))
    return IR_ABORT;
  return IR_CONTINUE;
}

static int fv_binder(ir_visitor *v, ir_stmt *s) {
  free_vars *fv = v->data;
  return ir_map_put(fv->bound, s->exprs[0], s) ? IR_CONTINUE : IR_ABORT;
}

static bool is_arg_var(const lw_func *f, te_expr *v) {
  for (int k = 0; k < f->nsizes; k++)
    if (f->size_vars[k] == v)
      return true;
  for (int i = 0; i < f->nargs; i++)
    if (!f->args[i].is_buffer && f->args[i].var == v)
      return true;
  return false;
}

/* Every free variable of s must be a scalar argument or a size variable. */
static bool check_free_vars(lw_pass_ctx *p, ir_stmt *s) {
  free_vars fv = {.ctx = p->ctx, .seen = ir_map_new(p->ctx), .bound = ir_map_new(p->ctx)};
  if (!fv.seen || !fv.bound)
    return false;
  ir_visitor v = {0};
  for (int k = 0; k < IR_EXPR_COUNT; k++)
    v.expr[k] = fv_expr;
  v.stmt[IR_S_FOR] = fv_binder;
  v.stmt[IR_S_LET_STMT] = fv_binder;
  v.data = &fv;
  if (ir_visit_stmt(&v, s) == IR_ABORT)
    return false;
  for (int i = 0; i < fv.n; i++) {
    te_expr *var = fv.used[i];
    if (ir_map_has(fv.bound, var) || is_arg_var(p->func, var))
      continue;
    const char *name = var->u.var.name;
    switch (var->u.var.kind) {
    case IR_VAR_PARAM:
      ir_error(p->ctx, TE_ERR_INVALID_ARG,
               "%s: scalar parameter '%s' is used by the computation but is not among the "
               "kernel's scalars",
               p->api, name);
      return false;
    case IR_VAR_INDEX:
      ir_error(p->ctx, TE_ERR_INVALID_ARG,
               "%s: variable '%s' is used by the computation but is neither among the kernel's "
               "scalars nor the extent of a dimension of a kernel tensor",
               p->api, name);
      return false;
    default:
      ir_error(p->ctx, TE_ERR_INTERNAL,
               "internal: %s: variable '%s' is free in the loop nest after schedule_to_loops",
               p->api, name);
      return false;
    }
  }
  return true;
}

ir_stmt *lw_schedule_to_loops(lw_pass_ctx *p, ir_stmt *unused) {
  (void)unused;
  ir_stmt *s = NULL;
  if (sch_schedule_to_stmt(p->sch, &s) != TE_OK)
    return NULL;
  if (!ir_check(p->ctx, s != NULL, "sch_schedule_to_stmt gave no statement"))
    return NULL;
  return check_free_vars(p, s) ? s : NULL;
}
