/* ops_to_loops.c — the schedule as one loop nest (docs/design.md §4), after bound inference.
 *
 * Every stage at root becomes `produce T { loops }`, in topological order; intermediate stages
 * at root are realized (given storage) around the whole program. A stage computed at a
 * consumer's loop L is emitted inside L, before the rest of L's body, as
 *     realize P(region) { produce P { loops }  rest of L's body }
 * A reduction is an init nest (the data loops inside the first reduce loop, storing the
 * identity) placed just before that loop, and an update nest. Non-dividing splits make guards,
 * emitted as `if (likely(cond))` around the innermost body; loop partitioning peels them later.
 * An extern stage (extern.c) has no loops: its nest is one call_extern statement, realized whole
 * wherever it is computed (sch_check_externs checks its rules once bounds are known).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sch.h"

typedef struct nest {
  te_schedule *s;
  te_ctx *ctx;
  ir_analyzer *an;
} nest;

static ir_stmt *stage_nest(nest *n, te_stage *st);
static ir_stmt *realize_outputs(te_stage *st, te_expr *const mins[], te_expr *const exts[],
                                ir_stmt *body);

te_expr *sch_reduce_identity(te_ctx *ctx, ir_reducer_kind k, te_dtype t) {
  bool f = ir_is_float(t);
  switch (k) {
  case IR_REDUCER_SUM:
    return f ? ir_float(ctx, t, 0.0) : ir_int(ctx, t, 0);
  case IR_REDUCER_PROD:
    return f ? ir_float(ctx, t, 1.0) : ir_int(ctx, t, 1);
  case IR_REDUCER_MAX:
    if (f)
      return ir_float(ctx, t, -INFINITY);
    return ir_int(ctx, t, ir_is_uint(t) ? 0 : (int64_t)(-1ULL << (t.bits - 1)));
  case IR_REDUCER_MIN:
    if (f)
      return ir_float(ctx, t, INFINITY);
    if (ir_is_uint(t))
      return ir_int(ctx, t, t.bits == 64 ? -1 : (int64_t)((1ULL << t.bits) - 1));
    return ir_int(ctx, t, (int64_t)((1ULL << (t.bits - 1)) - 1));
  default:
    break;
  }
  ir_error(ctx, TE_ERR_INTERNAL, "internal: no identity for reducer %d", (int)k);
  return NULL;
}

static te_expr *combine(ir_reducer_kind k, te_expr *acc, te_expr *x) {
  switch (k) {
  case IR_REDUCER_SUM:
    return ir_binary(IR_ADD, acc, x);
  case IR_REDUCER_PROD:
    return ir_binary(IR_MUL, acc, x);
  case IR_REDUCER_MAX:
    return ir_binary(IR_MAX, acc, x);
  case IR_REDUCER_MIN:
    return ir_binary(IR_MIN, acc, x);
  default:
    return NULL;
  }
}

/* `if (likely(g0 && g1 ...)) body`, or body when there is no guard. */
static ir_stmt *guard(nest *n, int ng, te_expr *const g[], ir_stmt *body) {
  if (ng == 0 || !body)
    return body;
  te_expr *c = g[0];
  for (int i = 1; i < ng; i++)
    c = ir_and(c, g[i]);
  return ir_if(ir_call(n->ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &c), body, NULL);
}

static ir_stmt *make_for(nest *n, te_iter *it, ir_stmt *body) {
  if (!body)
    return NULL;
  te_expr *ext = ir_simplify(n->an, it->dom_extent);
  /* the bound unroll.c unrolls to: with clamps relaxed, so that a tile's rows computed at a
     tile of a symbolic extent, min(n - 1, i*4 + 3) - i*4 + 1, are bounded by 4 */
  if (it->kind == IR_FOR_UNROLLED && ir_const_upper_bound(n->an, ext) == INT64_MAX) {
    char *e = ir_expr_to_string(ext);
    ir_error(n->ctx, TE_ERR_SCHEDULE,
             "te_unroll: stage '%s': loop '%s' has no constant extent (extent %s, with no constant "
             "upper bound); unroll a loop of constant extent, such as the inner loop of a split",
             it->stage->name, it->name, e ? e : "?");
    te_free(e);
    return NULL;
  }
  ir_stmt *s = ir_for(it->var, it->dom_min, ext, it->kind, it->tag, body);
  if (it->tensorize && s) /* matched after vectorization, lib/lower/tensorize.c */
    s = ir_attr(n->ctx, "tensorize", it, ir_i64(n->ctx, it->tensorize), s);
  for (int i = it->npragmas - 1; i >= 0 && s; i--) {
    char key[96];
    snprintf(key, sizeof key, "pragma_%s", it->pragma_keys[i]);
    s = ir_attr(n->ctx, ir_strdup(n->ctx, key), it, ir_i64(n->ctx, it->pragma_values[i]), s);
  }
  return s;
}

/* Stages computed at (consumer, leaf) wrap the rest of the leaf's body. */
static ir_stmt *wrap_attached(nest *n, te_stage *consumer, te_iter *leaf, ir_stmt *inner) {
  for (int i = n->s->nstage - 1; i >= 0 && inner; i--) {
    te_stage *p = n->s->stages[i];
    if (p->attach != SCH_ATTACH_AT || p->attach_stage != consumer || p->attach_iter != leaf)
      continue;
    ir_stmt *prod = stage_nest(n, p);
    if (!prod)
      return NULL;
    te_expr *mins[TE_MAX_DIMS], *exts[TE_MAX_DIMS];
    for (int d = 0; d < p->op->ndim; d++) {
      mins[d] = p->root[d]->dom_min;
      exts[d] = p->root[d]->alloc_extent;
    }
    inner = realize_outputs(p, mins, exts, ir_seq2(n->ctx, prod, inner));
  }
  return inner;
}

typedef struct stage_parts {
  te_stage *st;
  ir_stmt *update, *init; /* innermost bodies, guarded */
  int first_reduce;       /* leaf position of the first reduce loop (nleaf when none) */
} stage_parts;

/* The loops from position j inwards around the update body. */
static ir_stmt *loops_from(nest *n, stage_parts *p, int j) {
  te_stage *st = p->st;
  if (j == st->nleaf)
    return p->update;
  ir_stmt *inner = wrap_attached(n, st, st->leaf[j], loops_from(n, p, j + 1));
  ir_stmt *loop = make_for(n, st->leaf[j], inner);
  if (j != p->first_reduce || !p->init)
    return loop;
  /* the init nest: the data loops inside this point, storing the identity */
  ir_stmt *init = p->init;
  for (int k = st->nleaf - 1; k >= j; k--)
    if (st->leaf[k]->type == SCH_ITER_DATA)
      init = make_for(n, st->leaf[k], init);
  return ir_seq2(n->ctx, init, loop);
}

/* The update of a reduction: out_k[idx] = combine_k(out_k[idx], src_k) for every output k at
   once. A custom reducer's lhs/rhs variables get fresh copies bound by lets, so every value is
   read before any is written (argmax updates index and value together). */
static ir_stmt *reduce_update(nest *n, te_stage *st, ir_map *values, te_expr *const idx[]) {
  te_ctx *ctx = n->ctx;
  sch_op *op = st->op;
  te_expr *red = op->body[0];
  te_expr *src[16];
  for (int k = 0; k < op->nbody && k < 16; k++) {
    src[k] = sch_subst_roots(st, values, sch_stage_source(st, k, NULL));
    if (sch_stage_rounds_up(st))
      src[k] = sch_clamp_reads(n->ctx, src[k]);
    if (!src[k])
      return NULL;
  }
  if (red->u.reduce->kind != IR_REDUCER_CUSTOM) {
    te_expr *acc = ir_access(op->outputs[0], op->ndim, idx);
    return ir_provide(op->outputs[0], combine(red->u.reduce->kind, acc, src[0]), op->ndim, idx);
  }
  ir_custom_reducer *cr = red->u.reduce->custom;
  int nv = cr->nvalues;
  te_expr *from[32], *to[32];
  for (int k = 0; k < nv; k++) {
    from[k] = cr->lhs[k];
    from[nv + k] = cr->rhs[k];
    to[k] = ir_var_new(ctx, cr->lhs[k]->u.var.name, cr->lhs[k]->dtype, IR_VAR_PARAM);
    to[nv + k] = ir_var_new(ctx, cr->rhs[k]->u.var.name, cr->rhs[k]->dtype, IR_VAR_PARAM);
  }
  ir_stmt *body = NULL;
  for (int k = nv - 1; k >= 0; k--) {
    te_expr *v = ir_substitute(ctx, cr->results[k], 2 * nv, from, to);
    body = ir_seq2(ctx, ir_provide(op->outputs[k], v, op->ndim, idx), body);
  }
  for (int k = nv - 1; k >= 0 && body; k--) {
    body = ir_let_stmt(to[nv + k], src[k], body);
    body = ir_let_stmt(to[k], ir_access(op->outputs[k], op->ndim, idx), body);
  }
  return body;
}

static ir_stmt *reduce_init(nest *n, te_stage *st, te_expr *const idx[]) {
  sch_op *op = st->op;
  ir_reduce *r = op->body[0]->u.reduce;
  ir_stmt *init = NULL;
  for (int k = op->nbody - 1; k >= 0; k--) {
    te_tensor *t = op->outputs[k];
    te_expr *id = r->kind == IR_REDUCER_CUSTOM ? r->custom->identity[k]
                                               : sch_reduce_identity(n->ctx, r->kind, t->dtype);
    init = ir_seq2(n->ctx, ir_provide(t, id, op->ndim, idx), init);
  }
  return init;
}

static ir_stmt *stage_nest(nest *n, te_stage *st) {
  te_ctx *ctx = n->ctx;
  sch_op *op = st->op;
  if (op->ext) /* no loops: one call (extern.c) */
    return sch_extern_stmt(st);
  ir_map *values = sch_iter_values(st, n->an);
  if (!values)
    return NULL;
  te_expr **dg, **rg;
  int ndg = sch_split_guards(st, n->an, values, false, &dg);
  int nrg = sch_split_guards(st, n->an, values, true, &rg);
  if (ndg < 0 || nrg < 0)
    return NULL;
  if (op->nbody > 16) {
    ir_error(ctx, TE_ERR_UNSUPPORTED, "te_build: stage '%s' has more than 16 outputs", st->name);
    return NULL;
  }
  te_expr *idx[TE_MAX_DIMS];
  for (int d = 0; d < op->ndim; d++)
    idx[d] = ir_simplify(n->an, ir_map_get(values, st->root[d]));
  if (sch_stage_rounds_up(st) && st->is_output) {
    ir_error(ctx, TE_ERR_SCHEDULE,
             "te_set_tail: stage '%s' is an output: rounding its loops up would write outside the "
             "caller's buffer",
             st->name);
    return NULL;
  }
  stage_parts p = {st, NULL, NULL, st->nleaf};
  if (op->body[0]->kind == IR_REDUCE) {
    te_expr *cond = NULL;
    sch_stage_source(st, 0, &cond);
    ir_stmt *upd = reduce_update(n, st, values, idx);
    if (upd && cond)
      upd = ir_if(sch_subst_roots(st, values, cond), upd, NULL);
    te_expr **all = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(ndg + nrg + 1));
    if (!all || !upd)
      return NULL;
    memcpy(all, dg, sizeof(te_expr *) * (size_t)ndg);
    memcpy(all + ndg, rg, sizeof(te_expr *) * (size_t)nrg);
    p.update = guard(n, ndg + nrg, all, upd);
    p.init = guard(n, ndg, dg, reduce_init(n, st, idx));
    for (int j = 0; j < st->nleaf; j++)
      if (st->leaf[j]->type == SCH_ITER_REDUCE) {
        p.first_reduce = j;
        break;
      }
  } else {
    ir_stmt *body = NULL;
    for (int k = op->nbody - 1; k >= 0; k--) {
      te_expr *src = sch_subst_roots(st, values, sch_stage_source(st, k, NULL));
      if (sch_stage_rounds_up(st))
        src = sch_clamp_reads(ctx, src);
      if (!src)
        return NULL;
      body = ir_seq2(ctx, ir_provide(op->outputs[k], src, op->ndim, idx), body);
    }
    p.update = guard(n, ndg, dg, body);
  }
  if (!p.update)
    return NULL;
  ir_stmt *loops = loops_from(n, &p, 0);
  return loops ? ir_attr(ctx, "produce", op->outputs[0], ir_i64(ctx, 0), loops) : NULL;
}

/* realize every output of st around body */
static ir_stmt *realize_outputs(te_stage *st, te_expr *const mins[], te_expr *const exts[],
                                ir_stmt *body) {
  for (int k = st->op->nout - 1; k >= 0 && body; k--)
    body =
        ir_realize_laid_out(st->op->outputs[k], st->scope, st->op->ndim, mins, exts, st->nstorage,
                            st->nstorage ? st->storage : NULL, st->storage_split, body);
  return body;
}

/* The loop nest of a schedule whose lifted reductions are placed. */
static te_status loops_of(nest *np, ir_stmt **out) {
  nest n = *np;
  te_schedule *s = n.s;
  te_ctx *ctx = s->ctx;
  te_status r = sch_infer_bounds(s, n.an);
  if (r != TE_OK)
    return r;
  ir_stmt *body = NULL;
  for (int i = 0; i < s->nstage; i++) {
    te_stage *st = s->stages[i];
    if (st->attach == SCH_ATTACH_INLINE || st->attach == SCH_ATTACH_AT)
      continue;
    ir_stmt *nest_s = stage_nest(&n, st);
    if (!nest_s)
      return ir_failed(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
    body = ir_seq2(ctx, body, nest_s);
  }
  /* intermediate stages at root live for the whole kernel */
  for (int i = s->nstage - 1; i >= 0; i--) {
    te_stage *st = s->stages[i];
    if (st->attach != SCH_ATTACH_ROOT || st->is_output)
      continue;
    te_expr *mins[TE_MAX_DIMS], *exts[TE_MAX_DIMS];
    for (int d = 0; d < st->op->ndim; d++) {
      mins[d] = ir_i64(ctx, 0);
      exts[d] = st->root[d]->alloc_extent; /* the shape, padded when loops are rounded up */
    }
    body = realize_outputs(st, mins, exts, body);
  }
  if (!body)
    return ir_failed(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
  *out = body;
  return TE_OK;
}

te_status sch_schedule_to_stmt(te_schedule *s, ir_stmt **out) {
  te_ctx *ctx = s->ctx;
  *out = NULL;
  nest n = {s, ctx, ir_analyzer_new(ctx)};
  if (!n.an)
    return te_last_status(ctx);
  sch_place_lifted(s);
  te_status r = sch_check_scans(s);
  if (r == TE_OK)
    r = loops_of(&n, out);
  if (r == TE_OK && (r = sch_check_externs(s)) != TE_OK) /* after bound inference */
    *out = NULL;
  sch_unplace_lifted(s);
  return r;
}

/* ---------------------------------------------------------------- inputs */

int sch_schedule_inputs(te_schedule *s, te_tensor ***out) {
  te_ctx *ctx = s->ctx;
  int n = 0, cap = 0;
  te_tensor **list = NULL;
  for (int i = 0; i < s->nstage; i++) {
    te_tensor **in;
    int k = sch_op_inputs(s->stages[i]->op, &in);
    for (int j = 0; j < k; j++) {
      if (in[j]->op->kind != SCH_OP_PLACEHOLDER)
        continue;
      bool dup = false;
      for (int q = 0; q < n; q++)
        dup |= list[q] == in[j];
      if (dup)
        continue;
      if (!sch_grow(ctx, (void ***)&list, &cap, n, n + 1))
        return -1;
      list[n++] = in[j];
    }
  }
  *out = list;
  return n;
}
