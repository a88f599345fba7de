/* simplify.c — the simplify pass (and simplify_final, the same function at the end).
 *
 * Needs: nothing beyond well-formed IR.
 * Guarantees: ir_simplify_stmt's canonical forms (arith.h) under a fresh analyzer that knows
 * every symbolic size is >= 1 and binds loop and let variables while descending: constant
 * conditions folded, empty loops and no-op stores dropped, index arithmetic of splits and tiles
 * written as a person would. A fresh analyzer per run, so facts from an earlier pass (loop
 * ranges bound for another statement) never leak into this one.
 */
#include "lower.h"

ir_stmt *lw_simplify(lw_pass_ctx *p, ir_stmt *s) {
  ir_analyzer *an = lw_analyzer_new(p);
  if (!an)
    return NULL;
  return ir_simplify_stmt(an, s);
}
