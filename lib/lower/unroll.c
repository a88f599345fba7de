/* unroll.c — loops marked unrolled (te_unroll) become copies of their body.
 *
 * Needs: loop partitioning is done (so the steady-state loop of a non-dividing split has the
 * split's constant factor as its extent, and the tail its own constant extent).
 * Guarantees: no FOR of kind IR_FOR_UNROLLED is left. A loop over [min, min + extent) becomes
 * the sequence body[var := min], body[var := min + 1], ... (inner loops first).
 *
 * Extents that are not constants (a tail whose length depends on a symbolic size): the loop is
 * unrolled up to a constant upper bound of its extent, found by the analyzer from the enclosing
 * loops and the sizes, with each copy guarded by `if (k < extent)` (as Halide does). Without a
 * constant upper bound: the schedule already refused such loops (ops_to_loops.c checks every
 * unrolled loop's extent), so what remains is a tail that loop partitioning peeled off with a
 * symbolic start; it stays a serial loop. An extent above LW_UNROLL_MAX copies is
 * TE_ERR_SCHEDULE: it would only make a huge kernel.
 */
#include <inttypes.h>

#include "lower.h"

#define LW_UNROLL_MAX 1024

typedef struct unroll {
  lw_pass_ctx *p;
  ir_analyzer *an;
} unroll;

static te_expr *iter_value(te_ctx *ctx, te_expr *min, int64_t k) {
  int64_t m;
  if (ir_is_const_int(min, &m))
    return ir_i64(ctx, m + k);
  return k == 0 ? min : ir_add(min, ir_i64(ctx, k));
}

/* The copies of body for var in [min, min + count), guarded by k < extent when guard is set. */
static ir_stmt *unrolled(te_ctx *ctx, ir_stmt *loop, ir_stmt *body, int64_t count, bool guard) {
  te_expr *var = IR_FOR_VAR(loop);
  ir_stmt **copies = ir_alloc(ctx, (size_t)(count + 1) * sizeof *copies);
  if (!copies)
    return NULL;
  for (int64_t k = 0; k < count; k++) {
    te_expr *value = iter_value(ctx, IR_FOR_MIN(loop), k);
    ir_stmt *c = value ? ir_substitute_stmt(ctx, body, 1, &var, &value) : NULL;
    if (c && guard)
      c = ir_if(ir_lt(ir_i64(ctx, k), IR_FOR_EXTENT(loop)), c, NULL);
    if (!c)
      return NULL;
    copies[k] = c;
  }
  return ir_seq(ctx, (int)count, copies); /* NULL for zero copies: no statement */
}

static ir_stmt *unroll_loop(unroll *u, ir_stmt *loop, ir_stmt *body) {
  te_ctx *ctx = u->p->ctx;
  const char *name = IR_FOR_VAR(loop)->u.var.name;
  int64_t extent;
  bool guard = false;
  if (!ir_is_const_int(IR_FOR_EXTENT(loop), &extent)) {
    ir_const_bound b = ir_const_bound_of(u->an, IR_FOR_EXTENT(loop));
    if (b.max == INT64_MAX) {
      /* The schedule refused unrolled loops without a constant bound (ops_to_loops.c), so this
         is the tail loop_partition peeled off a bounded loop, whose bound the analyzer cannot
         see through the tail's symbolic start (e.g. n - i.o*4 for i.o >= n//4). The unrolled
         main loop is what the user asked for; the remainder stays a loop. */
      return ir_for(IR_FOR_VAR(loop), IR_FOR_MIN(loop), IR_FOR_EXTENT(loop), IR_FOR_SERIAL,
                    loop->u.loop.tag, body);
    }
    extent = b.max;
    guard = true;
  }
  if (extent > LW_UNROLL_MAX) {
    ir_error(ctx, TE_ERR_SCHEDULE,
             "te_unroll: loop '%s' has extent %" PRId64 "; unrolling is limited to %d copies "
             "(split the loop and unroll the inner part)",
             name, extent, LW_UNROLL_MAX);
    return NULL;
  }
  return unrolled(ctx, loop, body, extent < 0 ? 0 : extent, guard);
}

static ir_stmt *unroll_for(ir_mutator *m, ir_stmt *s) {
  unroll *u = m->data;
  te_expr *var = IR_FOR_VAR(s);
  ir_analyzer_bind(u->an, var, IR_FOR_MIN(s), IR_FOR_EXTENT(s));
  ir_stmt *body = ir_mutate_stmt(m, IR_FOR_BODY(s));
  ir_analyzer_unbind(u->an, var);
  if (!body)
    return NULL; /* failure, or an empty body: no loop either way */
  if (s->u.loop.kind == IR_FOR_UNROLLED)
    return unroll_loop(u, s, body);
  if (body == IR_FOR_BODY(s))
    return s;
  return ir_for(var, IR_FOR_MIN(s), IR_FOR_EXTENT(s), s->u.loop.kind, s->u.loop.tag, body);
}

static ir_stmt *unroll_let(ir_mutator *m, ir_stmt *s) {
  unroll *u = m->data;
  ir_analyzer_bind_value(u->an, s->exprs[0], s->exprs[1]);
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  ir_analyzer_unbind(u->an, s->exprs[0]);
  return r;
}

ir_stmt *lw_unroll(lw_pass_ctx *p, ir_stmt *s) {
  unroll u = {.p = p, .an = lw_analyzer_new(p)};
  if (!u.an)
    return NULL;
  ir_mutator m = {.ctx = p->ctx, .data = &u};
  m.stmt[IR_S_FOR] = unroll_for;
  m.stmt[IR_S_LET_STMT] = unroll_let;
  return ir_mutate_stmt(&m, s);
}
