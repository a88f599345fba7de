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
  for (int k = 0; k < w->producer->nout; k++)
    mine |= w->producer->outputs[k] == e->u.tensor;
  if (!mine)
    return IR_CONTINUE;
  if (w->n == w->cap) {
    int cap = w->cap ? 2 * w->cap : 8;
    te_expr **a = ir_alloc(w->ctx, sizeof(te_expr *) * (size_t)cap);
    if (!a)
      return IR_ABORT;
    if (w->n)
      memcpy(a, w->accesses, sizeof(te_expr *) * (size_t)w->n);
    w->accesses = a;
    w->cap = cap;
  }
  w->accesses[w->n++] = e;
  return IR_CONTINUE;
}

/* True when r is c itself or is computed (through a chain of compute_at) inside c's loop at
   leaf position at or deeper: then it runs inside the producer's realize and may read it. */
static bool inside(te_stage *r, te_stage *c, int at) {
  for (int depth = 0; r && depth < 1000; depth++) {
    if (r == c)
      return true;
    if (r->attach != SCH_ATTACH_AT)
      return false;
    if (r->attach_stage == c)
      return sch_leaf_pos(c, r->attach_iter) >= at;
    r = r->attach_stage;
  }
  return false;
}

/* The first stage that reads p but would run outside c's loop at leaf position at (NULL when
   every reader is inside): such a schedule cannot compute p there. */
/* The stage st is computed in: its attachment, or for a lifted reduction still at its default
   the stage it will be placed in (placement.c). */
static te_stage *placed_in(te_stage *st) {
  if (st->attach == SCH_ATTACH_AT)
    return st->attach_stage;
  if (st->attach == SCH_ATTACH_ROOT && st->fused_default && !st->is_output)
    return sch_only_reader(st);
  return NULL;
}

/* True when r runs inside p's loops (a scan's lifted reductions reading the scan): wherever p
   goes, r goes with it. */
static bool within(te_stage *r, te_stage *p) {
  for (int depth = 0; r && depth < 1000; depth++)
    if ((r = placed_in(r)) == p)
      return true;
  return false;
}

te_stage *sch_reader_outside(te_stage *p, te_stage *c, int at) {
  te_schedule *s = p->sch;
  for (int i = 0; i < s->nstage; i++) {
    te_stage *r = s->stages[i];
    if (r == p || r->attach == SCH_ATTACH_INLINE || !sch_stage_reads(r, p) || within(r, p))
      continue;
    if (!inside(r, c, at))
      return r;
  }
  return NULL;
}

/* The loop variables that range freely inside one iteration of c's leaf at: c's inner leaves
   and every leaf of the stages computed there. */
typedef struct relaxed {
  int n, cap;
  te_expr **vars;
  ir_interval *doms;
} relaxed;

static bool relax_add(te_ctx *ctx, ir_analyzer *an, relaxed *x, te_iter *l) {
  for (int i = 0; i < x->n; i++)
    if (x->vars[i] == l->var)
      return true;
  if (x->n == x->cap) {
    int cap = x->cap ? 2 * x->cap : 16;
    te_expr **v = ir_alloc(ctx, sizeof(te_expr *) * (size_t)cap);
    ir_interval *d = ir_alloc(ctx, sizeof(ir_interval) * (size_t)cap);
    if (!v || !d)
      return false;
    if (x->n) {
      memcpy(v, x->vars, sizeof(te_expr *) * (size_t)x->n);
      memcpy(d, x->doms, sizeof(ir_interval) * (size_t)x->n);
    }
    x->vars = v;
    x->doms = d;
    x->cap = cap;
  }
  x->vars[x->n] = l->var;
  x->doms[x->n++] = ir_interval_from_range(an, l->dom_min, l->dom_extent);
  return true;
}

/* The interval of e with every relaxed variable ranging over its domain. Domains may be written
   in other relaxed variables (a stage's loops in its consumer's), so relax until none is left. */
static ir_interval relax(ir_analyzer *an, te_expr *e, const relaxed *x) {
  ir_interval r = ir_interval_of(an, e, x->n, x->vars, x->doms);
  for (int it = 0; it < 16 && r.min && r.max; it++) {
    bool lo_free = ir_expr_uses_any(r.min, x->n, x->vars);
    bool hi_free = ir_expr_uses_any(r.max, x->n, x->vars);
    if (!lo_free && !hi_free)
      return r;
    if (lo_free)
      r.min = ir_interval_of(an, r.min, x->n, x->vars, x->doms).min;
    if (hi_free)
      r.max = ir_interval_of(an, r.max, x->n, x->vars, x->doms).max;
  }
  if (r.min && ir_expr_uses_any(r.min, x->n, x->vars))
    r.min = NULL;
  if (r.max && ir_expr_uses_any(r.max, x->n, x->vars))
    r.max = NULL;
  return r;
}

/* Shared storage (GPU) is one buffer per block that the block's threads fill together: its
   region is what every thread of the block reads, so the consumer's loops bound to threadIdx
   at or outside the attachment point (and those of the stages it is computed in) range freely
   too. Loops bound to blockIdx stay symbolic: each block has its own copy. */
static bool relax_shared_threads(te_ctx *ctx, ir_analyzer *an, relaxed *x, const te_stage *p,
                                 te_stage *c, int at) {
  if (p->scope != TE_SCOPE_SHARED)
    return true;
  for (int depth = 0; c && depth < 1000; depth++) {
    for (int j = 0; j <= at && j < c->nleaf; j++)
      if (c->leaf[j]->kind == IR_FOR_THREAD && c->leaf[j]->tag >= TE_THREAD_X &&
          !relax_add(ctx, an, x, c->leaf[j]))
        return false;
    if (c->attach != SCH_ATTACH_AT)
      break;
    at = sch_leaf_pos(c->attach_stage, c->attach_iter);
    c = c->attach_stage;
  }
  return true;
}

/* Appends the reads of p in reader r (written in r's leaf variables) to w. */
static te_status collect_reads(te_stage *r, ir_analyzer *an, ir_visitor *v) {
  te_ctx *ctx = r->sch->ctx;
  ir_map *values = sch_iter_values(r, an);
  if (!values)
    return te_last_status(ctx);
  for (int k = 0; k < r->op->nbody; k++) {
    te_expr *cond = NULL;
    te_expr *src = sch_subst_roots(r, values, sch_stage_source(r, k, &cond));
    if (!src)
      return te_last_status(ctx);
    ir_visit_expr(v, src);
    if (cond)
      ir_visit_expr(v, sch_subst_roots(r, values, cond));
  }
  return TE_OK;
}

/* The storage a region needs. Clamping to the shape makes extents like min(y + 2, 12) - y + 1,
   whose constant bound interval arithmetic overestimates; the unclamped extent (here 3) bounds
   it exactly, so storage takes the constant bound of that, capped by a constant shape. A
   consumer's own clamped region leaves clamps inside the unclamped extent too (a row block's
   tail: min(i*342 + 341, 2047)//6 - i*57 + 1 rows of a packed input); ir_const_upper_bound takes
   them off and gives the bound of a full block (57). Without a constant bound, storage is the
   symbolic extent, never negative (an empty region). */
static te_expr *storage_extent(te_ctx *ctx, ir_analyzer *an, ir_interval unclamped, te_expr *extent,
                               te_expr *shape) {
  if (!extent)
    return NULL; /* a constructor failed (the context holds why) */
  int64_t cap = INT64_MAX, sv;
  if (ir_is_const_int(shape, &sv))
    cap = sv;
  if (unclamped.min && unclamped.max) {
    int64_t b = ir_const_upper_bound(an, ir_interval_extent(an, unclamped));
    if (b != INT64_MAX)
      return ir_i64(ctx, b < cap ? (b > 0 ? b : 0) : cap);
  }
  int64_t b = ir_const_upper_bound(an, extent);
  if (b != INT64_MAX)
    return ir_i64(ctx, b < cap ? (b > 0 ? b : 0) : cap);
  return ir_simplify(an, ir_max(extent, ir_i64(ctx, 0)));
}

/* Root domains of producer p, computed at consumer c's leaf at. */
static te_status region_at(te_stage *p, ir_analyzer *an) {
  te_schedule *s = p->sch;
  te_ctx *ctx = s->ctx;
  te_stage *c = p->attach_stage;
  int at = sch_leaf_pos(c, p->attach_iter);
  if (at < 0)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_compute_at: stage '%s': iter '%s' of '%s' is no longer a leaf loop",
                    p->name, p->attach_iter->name, c->name);
  relaxed x = {0, 0, NULL, NULL};
  for (int j = at + 1; j < c->nleaf; j++)
    if (!relax_add(ctx, an, &x, c->leaf[j]))
      return te_last_status(ctx);
  if (!relax_shared_threads(ctx, an, &x, p, c, at))
    return te_last_status(ctx);
  region_walk w = {p->op, 0, 0, NULL, ctx};
  bool whole = p->op->ext != NULL; /* an extern computes (and reads) whole tensors */
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = collect;
  v.data = &w;
  for (int i = 0; i < s->nstage; i++) {
    te_stage *r = s->stages[i];
    if (r == p || r->attach == SCH_ATTACH_INLINE || !sch_stage_reads(r, p))
      continue;
    if (!inside(r, c, at)) /* possible when placements changed after te_compute_at */
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "te_compute_at: stage '%s' is computed at loop '%s' of '%s' but stage '%s' "
                      "reads it outside that loop (compute '%s' inside it too, or compute '%s' at "
                      "root)",
                      p->name, p->attach_iter->name, c->name, r->name, r->name, p->name);
    /* a reader inside the loop: all its loops, and those of the stages between, are free */
    for (te_stage *q = r; q != c; q = q->attach_stage)
      for (int j = 0; j < q->nleaf; j++)
        if (!relax_add(ctx, an, &x, q->leaf[j]))
          return te_last_status(ctx);
    whole = whole || r->op->ext;
    te_status st = collect_reads(r, an, &v);
    if (st != TE_OK)
      return st;
  }
  if (w.n == 0 && !whole)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_compute_at: no stage inside loop '%s' of '%s' reads stage '%s'",
                    p->attach_iter->name, c->name, p->name);
  for (int d = 0; d < p->op->ndim; d++) {
    ir_interval r = {NULL, NULL};
    for (int a = 0; a < w.n; a++) {
      ir_interval ra = relax(an, w.accesses[a]->args[d], &x);
      r = a == 0 ? ra : ir_interval_union(an, r, ra);
    }
    te_expr *last = ir_sub(p->op->shape[d], ir_i64(ctx, 1));
    if (p->op->is_scan && (d == p->op->scan_axis || p->op->scan_dependent[d]))
      r.min = r.max = NULL; /* every step needs the ones before it: the whole axis */
    if (whole)
      r.min = r.max = NULL;
    te_expr *lo = r.min ? ir_max(r.min, ir_i64(ctx, 0)) : ir_i64(ctx, 0);
    te_expr *hi = r.max ? ir_min(r.max, last) : last;
    ir_interval clamped = {ir_simplify(an, lo), ir_simplify(an, hi)};
    p->root[d]->dom_min = clamped.min;
    p->root[d]->dom_extent = ir_interval_extent(an, clamped);
    p->root[d]->alloc_extent =
        whole ? p->op->shape[d]
              : storage_extent(ctx, an, r, p->root[d]->dom_extent, p->op->shape[d]);
    if (!p->root[d]->dom_min || !p->root[d]->alloc_extent)
      return te_last_status(ctx);
  }
  return ir_failed(ctx) ? te_last_status(ctx) : TE_OK;
}

te_status sch_infer_bounds(te_schedule *s, ir_analyzer *an) {
  te_ctx *ctx = s->ctx;
  for (int i = s->nstage - 1; i >= 0; i--) {
    te_stage *st = s->stages[i];
    if (st->attach == SCH_ATTACH_INLINE)
      continue;
    if (st->attach == SCH_ATTACH_AT && !st->is_output) {
      te_status r = region_at(st, an);
      if (r != TE_OK)
        return r;
    } else {
      for (int d = 0; d < st->op->ndim; d++) {
        if (!(st->root[d]->dom_min = ir_i64(ctx, 0)))
          return te_last_status(ctx);
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
    if (r != TE_OK)
      return r;
    if (sch_stage_rounds_up(st)) { /* storage padded to what the rounded loops write */
      for (int d = 0; d < st->op->ndim; d++) {
        te_expr *cov = ir_simplify(an, sch_covered_extent(st, st->root[d]));
        int64_t b = ir_const_upper_bound(an, cov); /* a short block rounds up to a full one */
        st->root[d]->alloc_extent = b != INT64_MAX
                                        ? ir_i64(ctx, b)
                                        : ir_simplify(an, ir_max(cov, st->root[d]->alloc_extent));
      }
    }
    /* producers computed inside this stage see its loop variables with their ranges */
    for (int j = 0; j < st->nleaf; j++)
      ir_analyzer_bind(an, st->leaf[j]->var, st->leaf[j]->dom_min, st->leaf[j]->dom_extent);
  }
  return TE_OK;
}
