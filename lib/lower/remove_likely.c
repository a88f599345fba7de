/* remove_likely.c — strips likely() wrappers.
 *
 * Needs: loop partitioning is done (likely() is its hint: a guard it may peel off).
 * Guarantees: no IR_INTRIN_LIKELY call is left; likely(c) becomes c. Code generation then sees
 * plain conditions, and simplify_final can fold the ones that became constant.
 */
#include "lower.h"

static te_expr *strip_likely(ir_mutator *m, te_expr *e) {
  if (e->u.call == IR_INTRIN_LIKELY && e->nargs == 1)
    return ir_mutate_expr(m, e->args[0]);
  return ir_mutate_expr_children(m, e);
}

ir_stmt *lw_remove_likely(lw_pass_ctx *p, ir_stmt *s) {
  ir_mutator m = {.ctx = p->ctx, .memo = true};
  m.expr[IR_CALL] = strip_likely;
  return ir_mutate_stmt(&m, s);
}
