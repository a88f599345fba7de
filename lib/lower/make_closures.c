/* make_closures.c — pass "make_closures": each parallel loop's closure, explicit in the IR.
 *
 * Needs: the finished loop nest of a CPU target (after simplify_final); a GPU target's host part
 * has no parallel loop (gpu_split refuses loops outside kernels), so it comes back unchanged.
 * Guarantees: every `for (x, min, extent) parallel` is wrapped in
 *     closure NAME_parK(c0, c1, ...) { for (x, min, extent) parallel { body } }
 * (an `attr closure` whose node is an ir_closure): the captures are the variables and buffers
 * the body uses that are bound outside it (scalar parameters, sizes, enclosing loop and let
 * variables; argument buffers and enclosing allocations), in the order a walk of the body first
 * meets them; loop and let variables and allocations of the body itself are not captured. K
 * counts the parallel loops in pre-order from 0, so nested loops get their own closures and
 * names after their parent's.
 *
 * Code generation only translates: the closure becomes a function of (x, captures...) that
 * te_rt_parallel_for runs once per iteration (codegen/llvm_parallel.c), with no analysis of its
 * own. A capture it cannot find bound is an internal error there, never a silent miss.
 */
#include <stdio.h>
#include <string.h>

#include "lower.h"

typedef struct closures {
  lw_pass_ctx *p;
  ir_map *bound; /* te_expr* VAR or ir_buffer* -> itself while in scope, NULL after */
  int count;
} closures;

/* The captures of one loop body, in first-use order. */
typedef struct capture_walk {
  closures *c;
  ir_map *seen;
  int n, cap;
  ir_capture *list;
  bool oom;
} capture_walk;

static void add_capture(capture_walk *w, te_expr *var, ir_buffer *buf) {
  const void *key = var ? (const void *)var : (const void *)buf;
  if (!ir_map_get(w->c->bound, key) || ir_map_get(w->seen, key))
    return;
  if (!ir_map_put(w->seen, key, (void *)key)) {
    w->oom = true;
    return;
  }
  if (w->n == w->cap) {
    int cap = w->cap ? 2 * w->cap : 16;
    ir_capture *l = ir_alloc(w->c->p->ctx, sizeof *l * (size_t)cap);
    if (!l) {
      w->oom = true;
      return;
    }
    if (w->n)
      memcpy(l, w->list, sizeof *l * (size_t)w->n);
    w->list = l, w->cap = cap;
  }
  w->list[w->n++] = (ir_capture){var, var ? NULL : buf};
}

static int capture_var(ir_visitor *v, te_expr *e) {
  add_capture(v->data, e, NULL);
  return IR_CONTINUE;
}

static int capture_load(ir_visitor *v, te_expr *e) {
  add_capture(v->data, NULL, e->u.buffer);
  return IR_CONTINUE;
}

static int capture_store(ir_visitor *v, ir_stmt *s) {
  add_capture(v->data, NULL, s->u.buffer);
  return IR_CONTINUE;
}

static int capture_extern(ir_visitor *v, ir_stmt *s) {
  for (int a = 0; a < s->u.ext->nargs; a++)
    add_capture(v->data, NULL, s->u.ext->buffers[a]);
  return IR_CONTINUE;
}

static ir_closure *closure_of(closures *c, ir_stmt *loop) {
  te_ctx *ctx = c->p->ctx;
  capture_walk w = {.c = c, .seen = ir_map_new(ctx)};
  ir_closure *cl = ir_alloc(ctx, sizeof *cl);
  char name[300];
  snprintf(name, sizeof name, "%s_par%d", c->p->func->name, c->count++);
  if (!w.seen || !cl || !(cl->name = ir_strdup(ctx, name)))
    return NULL;
  ir_visitor v = {.data = &w};
  v.expr[IR_VAR] = capture_var;
  v.expr[IR_LOAD] = capture_load;
  v.stmt[IR_S_STORE] = capture_store;
  v.stmt[IR_S_CALL_EXTERN] = capture_extern;
  ir_visit_stmt(&v, IR_FOR_BODY(loop));
  if (w.oom)
    return NULL;
  cl->ncaptures = w.n;
  cl->captures = w.list;
  return cl;
}

/* A statement that binds key for its children (FOR, LET_STMT, ALLOCATE). */
static ir_stmt *scoped(ir_mutator *m, ir_stmt *s, const void *key) {
  closures *c = m->data;
  if (!ir_map_put(c->bound, key, (void *)key))
    return NULL;
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  ir_map_put(c->bound, key, NULL); /* cannot fail: the key is in the table */
  return r;
}

static ir_stmt *close_for(ir_mutator *m, ir_stmt *s) {
  closures *c = m->data;
  if (s->u.loop.kind != IR_FOR_PARALLEL)
    return scoped(m, s, IR_FOR_VAR(s));
  ir_closure *cl = closure_of(c, s); /* before the body's own closures: pre-order names */
  if (!cl)
    return NULL;
  ir_stmt *loop = scoped(m, s, IR_FOR_VAR(s));
  if (!loop)
    return NULL;
  return ir_attr(c->p->ctx, "closure", cl, ir_i64(c->p->ctx, 0), loop);
}

static ir_stmt *close_let(ir_mutator *m, ir_stmt *s) { return scoped(m, s, s->exprs[0]); }
static ir_stmt *close_allocate(ir_mutator *m, ir_stmt *s) { return scoped(m, s, s->u.buffer); }

ir_stmt *lw_make_closures(lw_pass_ctx *p, ir_stmt *s) {
  lw_func *f = p->func;
  closures c = {.p = p, .bound = ir_map_new(p->ctx)};
  if (!c.bound)
    return NULL;
  for (int i = 0; i < f->nargs; i++) {
    const void *key = f->args[i].is_buffer ? (const void *)f->args[i].buffer : f->args[i].var;
    if (!ir_map_put(c.bound, key, (void *)key))
      return NULL;
  }
  for (int k = 0; k < f->nsizes; k++)
    if (!ir_map_put(c.bound, f->size_vars[k], f->size_vars[k]))
      return NULL;
  ir_mutator m = {.ctx = p->ctx, .data = &c};
  m.stmt[IR_S_FOR] = close_for;
  m.stmt[IR_S_LET_STMT] = close_let;
  m.stmt[IR_S_ALLOCATE] = close_allocate;
  return ir_mutate_stmt(&m, s);
}
