/* walk.c — the generic visitor and mutator.
 *
 * Children are uniform arrays, so the default recursion needs no per-node code: a visitor walks
 * args (plus a REDUCE's condition), a mutator rebuilds a node only when a child changed (the
 * same pointer comes back otherwise, so "unchanged" is a pointer compare for the caller).
 *
 * NULL results. For expressions, NULL always means failure (the context holds the error) and
 * propagates. For statements, a NULL result with no error on the context means "no statement":
 * a SEQ drops it, an IF with an empty then-branch keeps the else under the negated condition,
 * and a statement whose body became empty (FOR, LET, ALLOCATE, ...) becomes empty itself.
 */
#include <string.h>

#include "base/ctx_internal.h"
#include "ir.h"

/* ---------------------------------------------------------------- visitor */

static int visit_expr(ir_visitor *v, te_expr *e) {
  if (!e)
    return IR_CONTINUE;
  int r = v->expr[e->kind] ? v->expr[e->kind](v, e) : IR_CONTINUE;
  if (r != IR_CONTINUE)
    return r == IR_ABORT ? IR_ABORT : IR_CONTINUE;
  for (int i = 0; i < e->nargs; i++)
    if (visit_expr(v, e->args[i]) == IR_ABORT)
      return IR_ABORT;
  if (e->kind == IR_REDUCE && e->u.reduce->cond)
    return visit_expr(v, e->u.reduce->cond);
  return IR_CONTINUE;
}

int ir_visit_expr(ir_visitor *v, te_expr *e) { return visit_expr(v, e); }

int ir_visit_stmt(ir_visitor *v, ir_stmt *s) {
  if (!s)
    return IR_CONTINUE;
  int r = v->stmt[s->kind] ? v->stmt[s->kind](v, s) : IR_CONTINUE;
  if (r != IR_CONTINUE)
    return r == IR_ABORT ? IR_ABORT : IR_CONTINUE;
  for (int i = 0; i < s->nexprs; i++)
    if (visit_expr(v, s->exprs[i]) == IR_ABORT)
      return IR_ABORT;
  for (uint32_t i = 0; i < s->nstmts; i++)
    if (ir_visit_stmt(v, s->stmts[i]) == IR_ABORT)
      return IR_ABORT;
  return IR_CONTINUE;
}

/* ---------------------------------------------------------------- rebuilding */

te_expr *ir_expr_with_args(te_expr *e, int nargs, te_expr *const args[]) {
  if (!e)
    return NULL;
  if (e->kind == IR_VAR)
    return e;
  if (nargs == e->nargs && (nargs == 0 || memcmp(args, e->args, (size_t)nargs * sizeof *args) == 0))
    return e;
  te_dtype t = e->dtype;
  /* nodes whose type follows their operands (a substitution may change an operand's type) */
  if (nargs > 0 && args[0]) {
    switch (e->kind) {
    case IR_ADD:
    case IR_SUB:
    case IR_MUL:
    case IR_DIV:
    case IR_FLOORDIV:
    case IR_FLOORMOD:
    case IR_TRUNCDIV:
    case IR_TRUNCMOD:
    case IR_MIN:
    case IR_MAX:
    case IR_AND:
    case IR_OR:
    case IR_NOT:
      t = args[0]->dtype;
      break;
    case IR_SELECT:
      if (args[1])
        t = args[1]->dtype;
      break;
    case IR_LET:
      if (args[2])
        t = args[2]->dtype;
      break;
    default:
      break;
    }
  }
  return ir_make(e->ctx, (ir_expr_kind)e->kind, t, nargs, args, &e->u);
}

ir_stmt *ir_stmt_with_children(te_ctx *ctx, ir_stmt *s, te_expr *const exprs[],
                               ir_stmt *const stmts[]) {
  if (!s)
    return NULL;
  return ir_stmt_make(ctx, (ir_stmt_kind)s->kind, s->nexprs, exprs, (int)s->nstmts, stmts, &s->u);
}

/* ---------------------------------------------------------------- mutator */

/* A REDUCE's condition and axes are children too: a substitution may rename axes (an axis
   mapped to something that is not a variable stays as it was). */
static te_expr *mutate_reduce(ir_mutator *m, te_expr *e, te_expr *const args[], bool changed) {
  const ir_reduce *r = e->u.reduce;
  te_expr *cond = r->cond ? ir_mutate_expr(m, r->cond) : NULL;
  if (r->cond && !cond)
    return NULL;
  te_expr **axes = NULL;
  for (int i = 0; i < r->naxes; i++) {
    te_expr *a = ir_mutate_expr(m, r->axes[i]);
    if (!a)
      return NULL;
    if (a == r->axes[i] || a->kind != IR_VAR)
      continue;
    if (!axes) {
      if (!(axes = ir_alloc(e->ctx, (size_t)r->naxes * sizeof *axes)))
        return NULL;
      memcpy(axes, r->axes, (size_t)r->naxes * sizeof *axes);
    }
    axes[i] = a;
  }
  if (cond == r->cond && !axes)
    return changed ? ir_expr_with_args(e, e->nargs, args) : e;
  ir_reduce nr = *r;
  nr.cond = cond;
  if (axes)
    nr.axes = axes;
  return ir_reduce_make(e->ctx, e->dtype, &nr, e->nargs, args);
}

te_expr *ir_mutate_expr_children(ir_mutator *m, te_expr *e) {
  if (!e)
    return NULL;
  te_expr *small[8], **args = small;
  if (e->nargs > 8) {
    args = ir_alloc(e->ctx, e->nargs * sizeof *args);
    if (!args)
      return NULL;
  }
  bool changed = false;
  for (int i = 0; i < e->nargs; i++) {
    args[i] = ir_mutate_expr(m, e->args[i]);
    if (!args[i])
      return NULL;
    changed |= args[i] != e->args[i];
  }
  if (e->kind == IR_REDUCE)
    return mutate_reduce(m, e, args, changed);
  return changed ? ir_expr_with_args(e, e->nargs, args) : e;
}

te_expr *ir_mutate_expr(ir_mutator *m, te_expr *e) {
  if (!e)
    return NULL;
  if (m->memo) {
    if (!m->memo_map && !(m->memo_map = ir_map_new(m->ctx ? m->ctx : e->ctx)))
      return NULL;
    te_expr *hit = ir_map_get(m->memo_map, e);
    if (hit)
      return hit;
  }
  te_expr *r = m->expr[e->kind] ? m->expr[e->kind](m, e) : ir_mutate_expr_children(m, e);
  if (r && m->memo && !ir_map_put(m->memo_map, e, r))
    return NULL;
  return r;
}

ir_stmt *ir_mutate_stmt(ir_mutator *m, ir_stmt *s) {
  if (!s)
    return NULL;
  return m->stmt[s->kind] ? m->stmt[s->kind](m, s) : ir_mutate_stmt_children(m, s);
}

/* A statement child that became empty: what the parent becomes (see the file comment). */
static ir_stmt *parent_of_empty(ir_mutator *m, ir_stmt *s, te_expr **exprs, ir_stmt **stmts) {
  if (s->kind == IR_S_SEQ)
    return ir_seq(m->ctx, (int)s->nstmts, stmts);
  if (s->kind == IR_S_IF) {
    if (stmts[0])
      return ir_if(exprs[0], stmts[0], NULL);
    if (s->nstmts > 1 && stmts[1])
      return ir_if(ir_not(exprs[0]), stmts[1], NULL);
  }
  return NULL;
}

ir_stmt *ir_mutate_stmt_children(ir_mutator *m, ir_stmt *s) {
  if (!s)
    return NULL;
  te_ctx *ctx = m->ctx;
  if (!ctx && s->nexprs)
    ctx = m->ctx = s->exprs[0]->ctx;
  te_expr *ebuf[2 * TE_MAX_DIMS + 2], **exprs = ebuf;
  ir_stmt *sbuf[4], **stmts = sbuf;
  if (s->nexprs > 2 * TE_MAX_DIMS + 2)
    exprs = ir_alloc(ctx, s->nexprs * sizeof *exprs);
  if (s->nstmts > 4)
    stmts = ir_alloc(ctx, s->nstmts * sizeof *stmts);
  if (!exprs || !stmts)
    return NULL;
  bool changed = false, emptied = false;
  for (int i = 0; i < s->nexprs; i++) {
    exprs[i] = ir_mutate_expr(m, s->exprs[i]);
    if (!exprs[i])
      return NULL;
    changed |= exprs[i] != s->exprs[i];
  }
  for (uint32_t i = 0; i < s->nstmts; i++) {
    stmts[i] = s->stmts[i] ? ir_mutate_stmt(m, s->stmts[i]) : NULL;
    if (!stmts[i] && s->stmts[i]) {
      if (ir_failed(ctx))
        return NULL;
      emptied = true;
    }
    changed |= stmts[i] != s->stmts[i];
  }
  if (emptied)
    return parent_of_empty(m, s, exprs, stmts);
  return changed ? ir_stmt_with_children(ctx, s, exprs, stmts) : s;
}
