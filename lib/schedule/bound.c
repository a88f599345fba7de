/* bound.c — bound inference: the range of every iteration variable of every stage.
 *
 * Stages are visited consumers first. An output or a stage computed at root covers its whole
 * shape. A stage computed at a consumer's loop L covers the region the consumer reads inside
 * one iteration of L: the consumer's index expressions are written in its leaf variables; those
 * at or outside L stay symbolic and those inside L range over their domains, and interval
 * arithmetic gives each dimension's [min, max], clamped to the producer's shape (a guarded tail
 * of the consumer must not make the producer read outside its inputs). Ranges then pass from
 * root to leaf iterators through the split and fuse relations (stage_values.c).
 */
#include <stdint.h>
#include <string.h>

#include "sch.h"

typedef struct region_walk {
  const sch_op *producer;
  int n, cap;
  te_expr **accesses;
  te_ctx *ctx;
} region_walk;

static int collect(ir_visitor *v, te_expr *e) {
  region_walk *w = v->data;
  bool mine = false;
  for (int k = 0; k < w->producer->nout; k++) mine |= w->producer->outputs[k] == e->u.tensor;
  if (!mine) return IR_CONTINUE;
  if (w->n == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    te_expr **a = ir_alloc(w->ctx, sizeof(te_expr *) * (size_t)cap);
    if (!a) return IR_ABORT;
    if (w->n) memcpy(a, w->accesses, sizeof(te_expr *) * (size_t)w->n);
    w->accesses = a;
    w->cap = cap;
  }
  w->accesses[w->n++] = e;
  return IR_CONTINUE;
}

/* Every stage other than consumer that reads producer (not through inlining into consumer). */
static te_stage *other_reader(te_schedule *s, te_stage *producer, te_stage *consumer) {
  for (int i = 0; i < s->nstage; i++) {
    te_stage *o = s->stages[i];
    if (o == consumer || o == producer || o->attach == SCH_ATTACH_INLINE) continue;
    if (sch_stage_reads(o, producer)) return o;
  }
  return NULL;
}

/* The storage a region needs. Clamping to the shape makes extents like min(y + 2, 12) - y + 1,
   whose constant bound interval arithmetic overestimates; the unclamped extent (here 3) bounds
   it exactly, so storage takes the constant bound of that, capped by a constant shape. Without
   a constant bound, storage is the symbolic extent, never negative (an empty region). */
static te_expr *storage_extent(ir_analyzer *an, ir_interval unclamped, te_expr *extent,
                               te_expr *shape) {
  te_ctx *ctx = extent->ctx;
  int64_t cap = INT64_MAX, sv;
  if (ir_is_const_int(shape, &sv)) cap = sv;
  if (unclamped.min && unclamped.max) {
    ir_const_bound b = ir_const_bound_of(an, ir_interval_extent(an, unclamped));
    if (b.max != INT64_MAX) return ir_i64(ctx, b.max < cap ? (b.max > 0 ? b.max : 0) : cap);
  }
  ir_const_bound b = ir_const_bound_of(an, extent);
  if (b.max != INT64_MAX) return ir_i64(ctx, b.max < cap ? (b.max > 0 ? b.max : 0) : cap);
  return ir_simplify(an, ir_max(extent, ir_i64(ctx, 0)));
}

/* Root domains of producer p, computed at consumer c's leaf at. */
static te_status region_at(te_stage *p, ir_analyzer *an) {
  te_schedule *s = p->sch;
  te_ctx *ctx = s->ctx;
  te_stage *c = p->attach_stage;
  te_stage *other = other_reader(s, p, c);
  if (other)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_compute_at: stage '%s' is computed at a loop of '%s' but stage '%s' reads "
                    "it too (compute it at root, or inline it)",
                    p->name, c->name, other->name);
  int at = sch_leaf_pos(c, p->attach_iter);
  if (at < 0)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_compute_at: stage '%s': iter '%s' of '%s' is no longer a leaf loop", p->name,
                    p->attach_iter->name, c->name);
  ir_map *values = sch_iter_values(c, an);
  if (!values) return te_last_status(ctx);
  /* the consumer's loops inside the attachment point range over their domains */
  int nrel = c->nleaf - at - 1;
  te_expr **vars = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(nrel > 0 ? nrel : 1));
  ir_interval *doms = ir_alloc(ctx, sizeof(ir_interval) * (size_t)(nrel > 0 ? nrel : 1));
  if (!vars || !doms) return te_last_status(ctx);
  for (int i = 0; i < nrel; i++) {
    te_iter *l = c->leaf[at + 1 + i];
    vars[i] = l->var;
    doms[i] = ir_interval_from_range(an, l->dom_min, l->dom_extent);
  }
  region_walk w = {p->op, 0, 0, NULL, ctx};
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = collect;
  v.data = &w;
  for (int k = 0; k < c->op->nbody; k++) {
    te_expr *cond = NULL;
    te_expr *src = sch_subst_roots(c, values, sch_stage_source(c, k, &cond));
    if (!src) return te_last_status(ctx);
    ir_visit_expr(&v, src);
    if (cond) ir_visit_expr(&v, sch_subst_roots(c, values, cond));
  }
  if (w.n == 0)
    return ir_error(ctx, TE_ERR_SCHEDULE, "te_compute_at: stage '%s' does not read stage '%s'",
                    c->name, p->name);
  for (int d = 0; d < p->op->ndim; d++) {
    ir_interval r = {NULL, NULL};
    for (int a = 0; a < w.n; a++) {
      ir_interval x = ir_interval_of(an, w.accesses[a]->args[d], nrel, vars, doms);
      r = a == 0 ? x : ir_interval_union(an, r, x);
    }
    te_expr *last = ir_sub(p->op->shape[d], ir_i64(ctx, 1));
    te_expr *lo = r.min ? ir_max(r.min, ir_i64(ctx, 0)) : ir_i64(ctx, 0);
    te_expr *hi = r.max ? ir_min(r.max, last) : last;
    ir_interval clamped = {ir_simplify(an, lo), ir_simplify(an, hi)};
    p->root[d]->dom_min = clamped.min;
    p->root[d]->dom_extent = ir_interval_extent(an, clamped);
    p->root[d]->alloc_extent = storage_extent(an, r, p->root[d]->dom_extent, p->op->shape[d]);
  }
  return ir_failed(ctx) ? te_last_status(ctx) : TE_OK;
}

te_status sch_infer_bounds(te_schedule *s, ir_analyzer *an) {
  te_ctx *ctx = s->ctx;
  for (int i = s->nstage - 1; i >= 0; i--) {
    te_stage *st = s->stages[i];
    if (st->attach == SCH_ATTACH_INLINE) continue;
    if (st->attach == SCH_ATTACH_AT && !st->is_output) {
      te_status r = region_at(st, an);
      if (r != TE_OK) return r;
    } else {
      for (int d = 0; d < st->op->ndim; d++) {
        st->root[d]->dom_min = ir_i64(ctx, 0);
        st->root[d]->dom_extent = st->op->shape[d];
        st->root[d]->alloc_extent = st->op->shape[d];
      }
    }
    for (int k = 0; k < st->op->nreduce; k++) {
      te_expr *ax = st->op->reduce_axes[k];
      st->root[st->op->ndim + k]->dom_min = ax->u.var.dom_min;
      st->root[st->op->ndim + k]->dom_extent = ax->u.var.dom_extent;
    }
    te_status r = sch_propagate_domains(st, an);
    if (r != TE_OK) return r;
    /* producers computed inside this stage see its loop variables with their ranges */
    for (int j = 0; j < st->nleaf; j++)
      ir_analyzer_bind(an, st->leaf[j]->var, st->leaf[j]->dom_min, st->leaf[j]->dom_extent);
  }
  return TE_OK;
}
