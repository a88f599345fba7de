/* unroll.c — loops marked unrolled (te_unroll) become copies of their body.
 *
 * Needs: loop partitioning is done (so the steady-state loop of a non-dividing split has the
 * split's constant factor as its extent, and the tail its own constant extent).
 * Guarantees: no FOR of kind IR_FOR_UNROLLED is left. A loop over [min, min + extent) becomes
 * the sequence body[var := min], body[var := min + 1], ... (inner loops first).
 *
 * te_pragma(stage, loop, "unroll_max_step", n) also unrolls, inside that loop, every serial loop
 * nest of constant extents with at most n iterations in all (innermost first).
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
#include <stdint.h>
#include <string.h>

#include "lower.h"

#define LW_UNROLL_MAX 1024

typedef struct unroll {
  lw_pass_ctx *p;
  ir_analyzer *an;
  int64_t max_step; /* te_pragma unroll_max_step in effect (0: none) */
} unroll;

/* The iterations of the loop nest s (product of constant extents, the largest over a sequence;
   INT64_MAX when one is not constant): what unroll_max_step compares with. */
static int64_t steps_of(ir_stmt *s) {
  if (!s)
    return 1;
  if (s->kind == IR_S_FOR) {
    int64_t e, inner = steps_of(IR_FOR_BODY(s));
    if (!ir_is_const_int(IR_FOR_EXTENT(s), &e) || inner == INT64_MAX)
      return INT64_MAX;
    return e > 0 && inner > INT64_MAX / e ? INT64_MAX : e * inner;
  }
  int64_t worst = 1;
  for (uint32_t i = 0; i < s->nstmts; i++) {
    int64_t k = steps_of(s->stmts[i]);
    if (k > worst)
      worst = k;
  }
  return worst;
}

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
    int64_t max = ir_const_upper_bound(u->an, IR_FOR_EXTENT(loop));
    if (max == INT64_MAX) {
      /* The schedule refused unrolled loops without a constant bound (ops_to_loops.c), so this
         is the tail loop_partition peeled off a bounded loop, whose bound the analyzer cannot
         see through the tail's symbolic start (e.g. n - i.o*4 for i.o >= n//4). The unrolled
         main loop is what the user asked for; the remainder stays a loop. */
      return ir_for(IR_FOR_VAR(loop), IR_FOR_MIN(loop), IR_FOR_EXTENT(loop), IR_FOR_SERIAL,
                    loop->u.loop.tag, body);
    }
    extent = max;
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
  /* iterations of the original nest (inner loops count whether or not they get unrolled, so
     unroll_max_step bounds the total code size, as TVM's auto_unroll_max_step does) */
  int64_t inner_steps = u->max_step > 0 ? steps_of(IR_FOR_BODY(s)) : INT64_MAX;
  ir_analyzer_bind(u->an, var, IR_FOR_MIN(s), IR_FOR_EXTENT(s));
  ir_stmt *body = ir_mutate_stmt(m, IR_FOR_BODY(s));
  ir_analyzer_unbind(u->an, var);
  if (!body)
    return NULL; /* failure, or an empty body: no loop either way */
  if (s->u.loop.kind == IR_FOR_UNROLLED)
    return unroll_loop(u, s, body);
  /* under te_pragma(..., "unroll_max_step", n): a serial loop nest of at most n iterations
     with constant extents is unrolled too (TVM's auto_unroll_max_step) */
  int64_t e;
  if (u->max_step > 0 && s->u.loop.kind == IR_FOR_SERIAL && ir_is_const_int(IR_FOR_EXTENT(s), &e) &&
      inner_steps != INT64_MAX && e > 0 && inner_steps <= u->max_step / e)
    return unroll_loop(u, s, body);
  if (body == IR_FOR_BODY(s))
    return s;
  return ir_for(var, IR_FOR_MIN(s), IR_FOR_EXTENT(s), s->u.loop.kind, s->u.loop.tag, body);
}

static ir_stmt *unroll_attr(ir_mutator *m, ir_stmt *s) {
  unroll *u = m->data;
  int64_t v;
  if (strcmp(s->u.attr.key, "pragma_unroll_max_step") != 0 || !ir_is_const_int(s->exprs[0], &v))
    return ir_mutate_stmt_children(m, s);
  int64_t outer = u->max_step;
  u->max_step = v;
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  u->max_step = outer;
  return r;
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
  m.stmt[IR_S_ATTR] = unroll_attr;
  return ir_mutate_stmt(&m, s);
}
