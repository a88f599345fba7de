/* prefetch.c — te_pragma(stage, x, "prefetch", d): prefetch what loop x reads d iterations ahead.
 *
 * Needs: flattened IR (LOADs), before loop partitioning (the pragma's attribute still wraps the
 * one loop it names). CPU targets only; GPU targets keep the attribute and nothing else.
 * Guarantees: at the start of each iteration of x, for every buffer read in x's body at an index
 * that depends on x, `prefetch(B[index with x := x + d])` — loops inside x are taken at their
 * first iteration, and a read whose index uses a variable bound inside x otherwise (a let), or
 * of a buffer allocated inside x (a producer computed at one of its inner loops: that buffer does
 * not exist where the iteration starts), is skipped. A prefetch never faults, so the addresses
 * past the end of the last iterations are harmless; codegen emits llvm.prefetch (read, high
 * locality, data cache). Vectorized loops are left alone (their body is one vector step, already
 * in flight); a prefetched loop inside a vectorized one is widened with it, and each lane's
 * address is prefetched.
 */
#include <string.h>

#include "gpu_lower.h"
#include "schedule/sch.h"

typedef struct pf_walk {
  te_ctx *ctx;
  te_expr *x;        /* the prefetched loop's variable */
  ir_map *inner_min; /* variable bound inside the body -> its first value (NULL: unknown) */
  ir_map *inner_buf; /* buffers allocated inside the body: they do not exist where x starts */
  int n, cap;
  te_expr **loads; /* distinct loads to prefetch (hash-consed: pointer = structure) */
} pf_walk;

static int pf_inner_for(ir_visitor *v, ir_stmt *s) {
  pf_walk *w = v->data;
  ir_map_put(w->inner_min, IR_FOR_VAR(s), IR_FOR_MIN(s));
  return IR_CONTINUE;
}

static int pf_inner_let(ir_visitor *v, ir_stmt *s) {
  pf_walk *w = v->data;
  ir_map_put(w->inner_min, s->exprs[0], w->x); /* marks "bound inside, no first value" */
  return IR_CONTINUE;
}

static int pf_inner_allocate(ir_visitor *v, ir_stmt *s) {
  pf_walk *w = v->data;
  ir_map_put(w->inner_buf, s->u.buffer, s->u.buffer);
  return IR_CONTINUE;
}

static int pf_load(ir_visitor *v, te_expr *e) {
  pf_walk *w = v->data;
  te_expr *idx = e->args[0];
  if (e->dtype.lanes != 1 || !ir_expr_uses(idx, w->x) || ir_map_get(w->inner_buf, e->u.buffer))
    return IR_CONTINUE;
  for (int i = 0; i < w->n; i++)
    if (w->loads[i] == e)
      return IR_CONTINUE;
  if (w->n == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    te_expr **l = ir_alloc(w->ctx, sizeof(te_expr *) * (size_t)cap);
    if (!l)
      return IR_ABORT;
    if (w->n)
      memcpy(l, w->loads, sizeof(te_expr *) * (size_t)w->n);
    w->loads = l;
    w->cap = cap;
  }
  w->loads[w->n++] = e;
  return IR_CONTINUE;
}

/* The prefetches for one iteration of loop s (variable x) at distance d. */
static ir_stmt *pf_statements(lw_pass_ctx *p, ir_stmt *s, int64_t d) {
  te_ctx *ctx = p->ctx;
  pf_walk w = {ctx, IR_FOR_VAR(s), ir_map_new(ctx), ir_map_new(ctx), 0, 0, NULL};
  if (!w.inner_min || !w.inner_buf)
    return NULL;
  ir_visitor v = {0};
  v.stmt[IR_S_FOR] = pf_inner_for;
  v.stmt[IR_S_LET_STMT] = pf_inner_let;
  v.stmt[IR_S_ALLOCATE] = pf_inner_allocate;
  v.expr[IR_LOAD] = pf_load;
  v.data = &w;
  ir_visit_stmt(&v, IR_FOR_BODY(s));
  ir_stmt *out = NULL;
  for (int i = w.n - 1; i >= 0; i--) {
    te_expr *idx = w.loads[i]->args[0];
    /* inner loops at their first iteration (their mins may use outer inner loops: repeat) */
    for (int round = 0; round < 8; round++) {
      bool changed = false;
      for (size_t k = 0; k < w.inner_min->cap; k++) {
        te_expr *var = (te_expr *)w.inner_min->keys[k];
        te_expr *first = w.inner_min->vals[k];
        if (!var || first == w.x || !ir_expr_uses(idx, var))
          continue;
        idx = ir_substitute(ctx, idx, 1, &var, &first);
        changed = true;
      }
      if (!changed)
        break;
    }
    bool inner_left = false; /* a let-bound variable: its value is not known here */
    for (size_t k = 0; k < w.inner_min->cap; k++)
      if (w.inner_min->keys[k] && ir_expr_uses(idx, (te_expr *)w.inner_min->keys[k]))
        inner_left = true;
    if (inner_left)
      continue;
    te_expr *ahead = ir_add(w.x, ir_i64(ctx, d));
    idx = ir_simplify(p->an, ir_substitute(ctx, idx, 1, &w.x, &ahead));
    te_expr *load = ir_load(w.loads[i]->u.buffer, w.loads[i]->dtype, idx);
    te_expr *call = ir_call(ctx, IR_INTRIN_PREFETCH, load ? load->dtype : TE_I32, 1, &load);
    out = ir_seq2(ctx, ir_evaluate(call), out);
  }
  return out;
}

static ir_stmt *pf_loop(lw_pass_ctx *p, ir_stmt *s, te_expr *x, int64_t d) {
  if (s->kind == IR_S_FOR && IR_FOR_VAR(s) == x) {
    if (s->u.loop.kind == IR_FOR_VECTORIZED)
      return s;
    ir_stmt *pre = pf_statements(p, s, d);
    if (!pre)
      return s;
    return ir_for(x, IR_FOR_MIN(s), IR_FOR_EXTENT(s), s->u.loop.kind, s->u.loop.tag,
                  ir_seq2(p->ctx, pre, IR_FOR_BODY(s)));
  }
  if (s->kind == IR_S_ATTR) { /* other pragmas of the same loop wrap it too */
    ir_stmt *b = pf_loop(p, s->stmts[0], x, d);
    return b == s->stmts[0] ? s : ir_stmt_with_children(p->ctx, s, s->exprs, &b);
  }
  return s;
}

static ir_stmt *pf_attr(ir_mutator *m, ir_stmt *s) {
  lw_pass_ctx *p = m->data;
  ir_stmt *r = ir_mutate_stmt_children(m, s);
  int64_t d;
  if (!r || strcmp(r->u.attr.key, "pragma_prefetch") != 0 || !ir_is_const_int(r->exprs[0], &d) ||
      d <= 0 || !r->u.attr.node)
    return r;
  te_expr *x = ((te_iter *)r->u.attr.node)->var;
  ir_stmt *b = pf_loop(p, r->stmts[0], x, d);
  return b == r->stmts[0] ? r : ir_stmt_with_children(p->ctx, r, r->exprs, &b);
}

ir_stmt *lw_prefetch(lw_pass_ctx *p, ir_stmt *s) {
  if (lw_gpu_target(p))
    return s;
  ir_mutator m = {.ctx = p->ctx, .data = p};
  m.stmt[IR_S_ATTR] = pf_attr;
  return ir_mutate_stmt(&m, s);
}
