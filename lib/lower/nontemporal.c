/* nontemporal.c — te_pragma(stage, x, "nontemporal", 1): the stores inside loop x stream past
 * the caches.
 *
 * Needs: the pragma's attribute ("pragma_nontemporal") around loop x as schedule_to_loops
 * made it, after loop partitioning, vectorization and unrolling (the attribute then wraps the
 * loops x became: a main loop and its tail, a vector statement, unrolled copies), before
 * make_closures. CPU targets only; GPU targets keep the attribute and nothing else.
 * Guarantees: the attribute is moved into the body of every outermost loop it wraps (or, where
 * it wraps no loop, kept around the statements), as "nontemporal", so that it is part of each
 * iteration: a parallel loop's closure (make_closures) takes it with the body, and codegen
 * (llvm_stmt.c) versions one iteration at a time — the iteration's argument buffers stored with
 * dense vectors checked 64-byte aligned, then streaming stores and a fence, else plain ones.
 * A value <= 0 removes the attribute.
 */
#include <string.h>

#include "gpu_lower.h"

/* s with "nontemporal" inside each outermost loop of it (through sequences, lets, ifs and other
   attributes), or around s where it holds no loop. *found tells whether a loop was met. */
static ir_stmt *nt_push(lw_pass_ctx *p, ir_stmt *s, bool *found) {
  switch (s->kind) {
  case IR_S_FOR: {
    *found = true;
    ir_stmt *body = ir_attr(p->ctx, "nontemporal", NULL, ir_i64(p->ctx, 1), IR_FOR_BODY(s));
    return body ? ir_for(IR_FOR_VAR(s), IR_FOR_MIN(s), IR_FOR_EXTENT(s), s->u.loop.kind,
                         s->u.loop.tag, body)
                : NULL;
  }
  case IR_S_SEQ:
  case IR_S_IF:
  case IR_S_LET_STMT:
  case IR_S_ATTR: {
    ir_stmt **kids = ir_alloc(p->ctx, sizeof(ir_stmt *) * (s->nstmts ? s->nstmts : 1));
    if (!kids)
      return NULL;
    bool any = false, changed = false;
    for (uint32_t i = 0; i < s->nstmts; i++) {
      bool f = false;
      kids[i] = s->stmts[i] ? nt_push(p, s->stmts[i], &f) : NULL;
      if (s->stmts[i] && !kids[i])
        return NULL;
      any |= f;
      changed |= kids[i] != s->stmts[i];
    }
    if (!any)
      break;
    *found = true;
    return changed ? ir_stmt_with_children(p->ctx, s, s->exprs, kids) : s;
  }
  default:
    break;
  }
  return s;
}

static ir_stmt *nt_attr(ir_mutator *m, ir_stmt *s) {
  lw_pass_ctx *p = m->data;
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  if (!r || strcmp(r->u.attr.key, "pragma_nontemporal") != 0)
    return r;
  int64_t on = 0;
  ir_stmt *body = r->stmts[0];
  if (!body || !ir_is_const_int(r->exprs[0], &on) || on <= 0)
    return body;
  bool found = false;
  ir_stmt *pushed = nt_push(p, body, &found);
  if (!pushed)
    return NULL;
  return found ? pushed : ir_attr(p->ctx, "nontemporal", NULL, ir_i64(p->ctx, 1), body);
}

ir_stmt *lw_nontemporal(lw_pass_ctx *p, ir_stmt *s) {
  if (lw_gpu_target(p))
    return s;
  ir_mutator m = {.ctx = p->ctx, .data = p};
  m.stmt[IR_S_ATTR] = nt_attr;
  return ir_mutate_stmt(&m, s);
}
