/* stage_values.c — what bound inference and loop generation share about one stage:
 *   - its body with inlined stages substituted (sch_stage_sources);
 *   - the value of every iteration variable in terms of the leaf loop variables
 *     (sch_iter_values), and the guards that non-dividing splits need (sch_split_guards);
 *   - leaf domains from root domains (sch_propagate_domains).
 *
 * Conventions: a root iterator that is still a leaf loops over [dom_min, dom_min + extent) with
 * its own variable; an iterator made by split or fuse loops over [0, extent). So a split parent
 * is outer * inner_extent + inner + parent_min, and fused parts are fused // inner_extent +
 * outer_min and fused % inner_extent + inner_min.
 */
#include <string.h>

#include "sch.h"

/* ---------------------------------------------------------------- inlining */

static te_expr *inline_expr(ir_mutator *m, te_expr *e);

static te_expr *inline_access(ir_mutator *m, te_expr *e) {
  te_expr *x = ir_mutate_expr_children(m, e);
  if (!x)
    return NULL;
  te_stage *st = sch_stage_of_tensor(m->data, x->u.tensor);
  if (!st || st->attach != SCH_ATTACH_INLINE)
    return x;
  sch_op *op = st->op;
  te_expr *body = op->body[x->u.tensor->value_index];
  te_expr *sub = ir_substitute(m->ctx, body, op->ndim, op->axes, x->args);
  return sub ? inline_expr(m, sub) : NULL;
}

static te_expr *inline_expr(ir_mutator *m, te_expr *e) { return ir_mutate_expr(m, e); }

te_expr *sch_inline_expr(te_schedule *s, te_expr *e) {
  if (!e)
    return NULL;
  ir_mutator m = {0};
  m.ctx = s->ctx;
  m.expr[IR_ACCESS] = inline_access;
  m.data = s;
  m.memo = true;
  return ir_mutate_expr(&m, e);
}

/* The values the stage computes (a reduction's sources, else the body), with inlined stages
   substituted; *cond is a reduction's condition (or NULL). */
te_expr *sch_stage_source(te_stage *st, int value_index, te_expr **cond) {
  te_expr *b = st->op->body[value_index];
  if (cond)
    *cond = NULL;
  if (b->kind == IR_REDUCE) {
    if (cond && b->u.reduce->cond)
      *cond = sch_inline_expr(st->sch, b->u.reduce->cond);
    return sch_inline_expr(
        st->sch, b->args[b->u.reduce->value_index < b->nargs ? b->u.reduce->value_index : 0]);
  }
  return sch_inline_expr(st->sch, b);
}

/* ---------------------------------------------------------------- domains */

static te_expr *ceil_div(ir_analyzer *an, te_expr *a, te_expr *b) {
  te_ctx *ctx = a->ctx;
  te_expr *one = ir_i64(ctx, 1);
  return ir_simplify(an, ir_floordiv(ir_sub(ir_add(a, b), one), b));
}

/* Given the root iterators' domains, sets every derived iterator's domain. */
te_status sch_propagate_domains(te_stage *st, ir_analyzer *an) {
  te_ctx *ctx = st->sch->ctx;
  te_expr *zero = ir_i64(ctx, 0);
  for (int i = 0; i < st->nrel; i++) {
    sch_rel *r = &st->rels[i];
    if (r->kind == SCH_REL_SPLIT) {
      te_expr *ext = r->parent->dom_extent;
      int64_t e = 0;
      bool ce = ir_is_const_int(ext, &e);
      te_expr *inner, *outer;
      if (r->factor > 0) {
        /* a factor larger than a constant extent makes one partial tile: shrink it */
        inner = ir_i64(ctx, ce && e < r->factor ? e : r->factor);
        outer = ceil_div(an, ext, inner);
      } else {
        outer = ir_i64(ctx, ce && e < r->nparts ? e : r->nparts);
        inner = ceil_div(an, ext, outer);
      }
      r->outer->dom_min = r->inner->dom_min = zero;
      r->outer->dom_extent = outer;
      r->inner->dom_extent = inner;
    } else {
      /* A region computed at a consumer's loop may be empty at some iterations, with extents
         that go negative (a tail tile): two of them must not multiply into a positive count,
         which would run the body and divide by the inner's extent, zero or less. */
      r->fused->dom_min = zero;
      r->fused->dom_extent = ir_simplify(an, ir_mul(ir_max(r->fuse_outer->dom_extent, zero),
                                                    ir_max(r->fuse_inner->dom_extent, zero)));
    }
    if (ir_failed(ctx))
      return te_last_status(ctx);
  }
  return TE_OK;
}

/* ---------------------------------------------------------------- values and guards */

/* Recomputing a point is harmless only when the whole computation of the point is redone: in
   a reduction, every data loop must enclose all the reduce loops (init and update are then both
   repeated). */
static bool recomputing_is_harmless(const te_stage *st) {
  bool seen_reduce = false;
  for (int j = 0; j < st->nleaf && st->op->nreduce > 0; j++) {
    if (st->leaf[j]->type == SCH_ITER_REDUCE)
      seen_reduce = true;
    else if (seen_reduce)
      return false;
  }
  return true;
}

/* True when a split shifts its last tile inwards: asked for with te_set_tail, and the
   parent is at least one tile long (else the guard stays). */
bool sch_split_shifts(const sch_rel *r, ir_analyzer *an) {
  if (r->kind != SCH_REL_SPLIT || r->parent->tail != TE_TAIL_SHIFT_INWARDS)
    return false;
  if (!recomputing_is_harmless(r->parent->stage))
    return false;
  return ir_can_prove(an, ir_binary(IR_GE, r->parent->dom_extent, r->inner->dom_extent));
}

/* True when the points past the end of it are past the end of its root axis too: it is the
   root or reached from it through outer loops of splits only. Rounding up the inner loop of a
   split (or a piece of a fuse) instead runs into points of the next outer iteration. */
static bool padding_lies_past_the_end(const te_stage *st, const te_iter *it) {
  for (int depth = 0; depth < 10000; depth++) {
    const sch_rel *made = NULL;
    for (int i = 0; i < st->nrel && !made; i++) {
      const sch_rel *r = &st->rels[i];
      if (r->kind == SCH_REL_SPLIT ? r->outer == it || r->inner == it : r->fused == it)
        made = r;
    }
    if (!made)
      return true; /* a root */
    if (made->kind != SCH_REL_SPLIT || made->inner == it)
      return false;
    it = made->parent;
  }
  return false;
}

/* True when a split rounds its last tile up unguarded (te_set_tail TE_TAIL_ROUND_UP): the
   points past the parent's end are padding, or points computed again where that is harmless
   (else the guard stays). */
static bool split_rounds_up(const sch_rel *r) {
  if (r->kind != SCH_REL_SPLIT || r->parent->tail != TE_TAIL_ROUND_UP)
    return false;
  const te_stage *st = r->parent->stage;
  return padding_lies_past_the_end(st, r->parent) || recomputing_is_harmless(st);
}

/* Fills map iter -> value (an expression of the leaf variables) for every iterator. */
ir_map *sch_iter_values(te_stage *st, ir_analyzer *an) {
  te_ctx *ctx = st->sch->ctx;
  ir_map *v = ir_map_new(ctx);
  if (!v)
    return NULL;
  for (int i = 0; i < st->nleaf; i++)
    ir_map_put(v, st->leaf[i], st->leaf[i]->var);
  for (int i = st->nrel - 1; i >= 0; i--) {
    sch_rel *r = &st->rels[i];
    if (r->kind == SCH_REL_SPLIT) {
      te_expr *o = ir_map_get(v, r->outer), *in = ir_map_get(v, r->inner);
      if (!o || !in)
        continue; /* not reachable: cannot happen for a well-formed stage */
      te_expr *start = ir_mul(o, r->inner->dom_extent);
      /* shift inwards: the last tile starts at extent - tile, recomputing some points */
      if (sch_split_shifts(r, an))
        start = ir_min(start, ir_sub(r->parent->dom_extent, r->inner->dom_extent));
      ir_map_put(v, r->parent, ir_add(ir_add(start, in), r->parent->dom_min));
    } else {
      te_expr *f = ir_map_get(v, r->fused);
      if (!f)
        continue;
      te_expr *ie = r->fuse_inner->dom_extent;
      ir_map_put(v, r->fuse_outer, ir_add(ir_floordiv(f, ie), r->fuse_outer->dom_min));
      ir_map_put(v, r->fuse_inner, ir_add(ir_floormod(f, ie), r->fuse_inner->dom_min));
    }
  }
  return v;
}

/* The conditions under which the loop nest's point is inside the stage's domain: one per
   non-dividing split, over data iterators (reduce = false) or reduce iterators (true). */
int sch_split_guards(te_stage *st, ir_analyzer *an, ir_map *values, bool reduce, te_expr ***out) {
  te_ctx *ctx = st->sch->ctx;
  te_expr **g = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(st->nrel ? st->nrel : 1));
  int n = 0;
  if (!g)
    return -1;
  for (int i = 0; i < st->nrel; i++) {
    sch_rel *r = &st->rels[i];
    if (r->kind != SCH_REL_SPLIT || (r->parent->type == SCH_ITER_REDUCE) != reduce)
      continue;
    if (sch_split_shifts(r, an) || split_rounds_up(r))
      continue;
    te_expr *covered = ir_mul(r->outer->dom_extent, r->inner->dom_extent);
    if (ir_can_prove(an, ir_binary(IR_EQ, covered, r->parent->dom_extent)))
      continue;
    te_expr *val = ir_map_get(values, r->parent);
    te_expr *end = ir_add(r->parent->dom_min, r->parent->dom_extent);
    g[n++] = ir_simplify(an, ir_lt(val, end));
  }
  *out = g;
  return n;
}

/* True when a split of the stage rounds its loops up (te_set_tail TE_TAIL_ROUND_UP). */
bool sch_stage_rounds_up(const te_stage *st) {
  for (int i = 0; i < st->nrel; i++)
    if (st->rels[i].kind == SCH_REL_SPLIT && st->rels[i].parent->tail == TE_TAIL_ROUND_UP)
      return true;
  return false;
}

/* The extent the loops cover for iterator it: its domain for a leaf, outer * inner for a split
   parent (more than the domain when the split does not divide and nothing guards it), and for
   the outer iterator of a fuse the rows its fused loop covers, ceil(covered / inner extent): a
   rounded-up fused loop runs into rows past the outer's domain (the inner stays in its own). */
te_expr *sch_covered_extent(te_stage *st, te_iter *it) {
  for (int i = 0; i < st->nrel; i++) {
    sch_rel *r = &st->rels[i];
    if (r->kind == SCH_REL_SPLIT && r->parent == it)
      return ir_mul(sch_covered_extent(st, r->outer), sch_covered_extent(st, r->inner));
    if (r->kind == SCH_REL_FUSE && r->fuse_outer == it) {
      te_expr *inner = r->fuse_inner->dom_extent;
      te_expr *one = ir_i64(st->sch->ctx, 1);
      return ir_floordiv(ir_add(sch_covered_extent(st, r->fused), ir_sub(inner, one)), inner);
    }
  }
  return it->dom_extent;
}

/* Reads of bounded tensors with every index clamped into the tensor's shape: a rounded-up stage
   computes points outside its domain, whose values nobody reads, and those points must not read
   outside the stage's inputs. */
static te_expr *clamp_access(ir_mutator *m, te_expr *e) {
  te_expr *x = ir_mutate_expr_children(m, e);
  if (!x)
    return NULL;
  te_tensor *t = x->u.tensor;
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < x->nargs; d++) {
    te_expr *last = ir_sub(t->shape[d], ir_i64(m->ctx, 1));
    idx[d] = ir_max(ir_min(x->args[d], last), ir_i64(m->ctx, 0));
  }
  return ir_access(t, x->nargs, idx);
}

te_expr *sch_clamp_reads(te_ctx *ctx, te_expr *e) {
  ir_mutator m = {0};
  m.ctx = ctx;
  m.expr[IR_ACCESS] = clamp_access;
  m.memo = true;
  return e ? ir_mutate_expr(&m, e) : NULL;
}

/* Substitutes the stage's root variables by their values. */
te_expr *sch_subst_roots(te_stage *st, ir_map *values, te_expr *e) {
  if (!e)
    return NULL;
  te_expr *from[2 * TE_MAX_DIMS + 64], *to[2 * TE_MAX_DIMS + 64];
  int n = 0;
  for (int i = 0; i < st->nroot && n < (int)(sizeof from / sizeof *from); i++) {
    te_expr *v = ir_map_get(values, st->root[i]);
    if (!v || v == st->root[i]->var)
      continue;
    from[n] = st->root[i]->var;
    to[n++] = v;
  }
  return n ? ir_substitute(st->sch->ctx, e, n, from, to) : e;
}
