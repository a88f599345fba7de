/* rfactor.c — te_rfactor: turn one reduce loop of a reduction into a data-parallel axis.
 *
 * For C[i] = sum(body(i, k), k) with k split into k.o and k.i, rfactor(C, k.i, 0) makes
 *     C_rf[k.i, i] = sum(body(i, k.o * 4 + k.i), k.o)   where k.o * 4 + k.i < K
 *     C[i]         = sum(C_rf[k.i, i], k.i)
 * so the partial sums over k.o can run in parallel (or across GPU threads). Only reduce
 * iterators made by splits are supported (a fused reduce iterator is refused).
 *
 * A custom reducer (te_reducer_new) of n values is factored the same way, all n members at
 * once: C_rf is a stage of n outputs reducing with the reducer over the other leaves (starting
 * from its identities), and C combines C_rf's n partials with the same reducer. That needs a
 * combiner of two accumulated states (rfactor_split.c checks what it can).
 */
#include <stdio.h>
#include <string.h>

#include "trace.h"

static te_status check(const char *fn, te_schedule *s, te_tensor *t, te_iter *it, int axis,
                       te_stage **out) {
  te_ctx *ctx = s->ctx;
  if (!t)
    return ir_error_null(ctx, "%s: tensor is NULL", fn);
  te_stage *st = sch_stage_of_tensor(s, t);
  if (!st)
    return ir_error(ctx, TE_ERR_NOT_FOUND, "%s: tensor '%s' has no stage in this schedule", fn,
                    t->name);
  te_status ext = sch_extern_refuse(st, fn, "it has no reduction te could factor");
  if (ext != TE_OK)
    return ext;
  te_expr *body = st->op->body[0];
  ir_custom_reducer *cr = body->kind == IR_REDUCE ? body->u.reduce->custom : NULL;
  if (body->kind != IR_REDUCE || st->op->nbody != (cr ? cr->nvalues : 1))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is not a reduction (te_sum, te_prod, te_min_r, te_max_r or "
                    "te_reduce)",
                    fn, st->name);
  if (!it)
    return ir_error_null(ctx, "%s: stage '%s': iter is NULL", fn, st->name);
  if (it->stage != st)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: iter '%s' belongs to stage '%s', not to '%s'", fn,
                    it->name, it->stage->name, st->name);
  if (sch_leaf_pos(st, it) < 0)
    return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s': iter '%s' is not a leaf loop", fn,
                    st->name, it->name);
  if (it->type != SCH_ITER_REDUCE)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s': iter '%s' is data-parallel; rfactor takes a reduction axis",
                    fn, st->name, it->name);
  te_stage *inner = sch_attached_at(st);
  if (inner)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is computed at a loop of '%s'; rfactor '%s' before placing "
                    "other stages in it",
                    fn, inner->name, st->name, st->name);
  if (axis < 0 || axis > st->op->ndim)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "%s: stage '%s': factor axis must be in [0, %d] (got %d)", fn, st->name,
                    st->op->ndim, axis);
  for (int i = 0; i < st->nrel; i++)
    if (st->rels[i].kind == SCH_REL_FUSE && st->rels[i].fused->type == SCH_ITER_REDUCE)
      return ir_error(ctx, TE_ERR_UNSUPPORTED,
                      "%s: stage '%s': rfactor of a stage with fused reduce iters is not supported",
                      fn, st->name);
  *out = st;
  return TE_OK;
}

/* Root domains (data: whole shape, reduce: their axes) and derived ones. */
static te_status domains(te_stage *st, ir_analyzer *an) {
  te_ctx *ctx = st->sch->ctx;
  for (int d = 0; d < st->op->ndim; d++) {
    st->root[d]->dom_min = ir_i64(ctx, 0);
    st->root[d]->dom_extent = st->op->shape[d];
  }
  for (int k = 0; k < st->op->nreduce; k++) {
    te_expr *ax = st->op->reduce_axes[k];
    st->root[st->op->ndim + k]->dom_min = ax->u.var.dom_min;
    st->root[st->op->ndim + k]->dom_extent = ax->u.var.dom_extent;
  }
  return sch_propagate_domains(st, an);
}

static te_status rfactor_impl(te_schedule *s, te_tensor *t, te_iter *it, int axis, te_tensor **rf) {
  const char *fn = "te_rfactor";
  if (!s)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = s->ctx;
  te_stage *st = NULL;
  te_status r = check(fn, s, t, it, axis, &st);
  if (r != TE_OK)
    return r;
  sch_op *op = st->op;
  te_expr *red = op->body[0];
  ir_reducer_kind kind = red->u.reduce->kind;
  ir_custom_reducer *cr = red->u.reduce->custom;
  int nv = op->nbody; /* the tuple's members (1 for a built-in reducer) */
  ir_analyzer *an = ir_analyzer_new(ctx);
  if (!an)
    return te_last_status(ctx);
  if (cr && (r = sch_rfactor_check_combiner(ctx, an, fn, st->name, cr)) != TE_OK)
    return r;
  if ((r = domains(st, an)) != TE_OK)
    return r;
  ir_map *values = sch_iter_values(st, an);
  if (!values)
    return te_last_status(ctx);

  /* C_rf: the data axes with it inserted at axis; the other reduce leaves as reduce axes */
  int nd = op->ndim + 1;
  te_expr *shape[TE_MAX_DIMS + 1];
  const char *names[TE_MAX_DIMS + 1];
  for (int d = 0, k = 0; d < nd; d++) {
    shape[d] = d == axis ? it->dom_extent : op->shape[k];
    names[d] = d == axis ? it->name : op->axes[k++]->u.var.name;
  }
  if (nd > TE_MAX_DIMS)
    return ir_error(ctx, TE_ERR_SHAPE, "%s: stage '%s' has too many dimensions to add one", fn,
                    st->name);
  char name[160];
  snprintf(name, sizeof name, "%s_rf", st->name);
  sch_op *rop = sch_op_new(ctx, SCH_OP_COMPUTE, name, nd, shape, names, nv);
  te_expr **raxes = rop ? rop->axes : NULL;
  te_expr **rred = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)st->nleaf);
  te_expr **from = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(st->nleaf + op->ndim + op->nreduce));
  te_expr **to = ir_alloc(ctx, sizeof(te_expr *) * (size_t)(st->nleaf + op->ndim + op->nreduce));
  if (!rop || !rred || !from || !to)
    return te_last_status(ctx);
  /* step 1: roots -> values in leaves; data axes -> C_rf's axes */
  int n = 0;
  for (int d = 0, k = 0; d < nd; d++)
    if (d != axis) {
      from[n] = op->axes[k++];
      to[n++] = raxes[d];
    }
  for (int k = 0; k < op->nreduce; k++) {
    from[n] = op->reduce_axes[k];
    to[n++] = ir_map_get(values, st->root[op->ndim + k]);
  }
  te_expr *src[16];
  for (int v = 0; v < red->nargs; v++)
    src[v] = ir_substitute(ctx, red->args[v], n, from, to);
  te_expr *cond = red->u.reduce->cond ? ir_substitute(ctx, red->u.reduce->cond, n, from, to) : NULL;
  te_expr **guards;
  int ng = sch_split_guards(st, an, values, true, &guards);
  for (int g = 0; g < ng; g++) { /* likely(): loop partitioning peels the tail */
    te_expr *lg = ir_call(ctx, IR_INTRIN_LIKELY, TE_BOOL, 1, &guards[g]);
    cond = cond ? ir_and(cond, lg) : lg;
  }
  /* step 2: leaves -> it becomes the new data axis, other reduce leaves new reduce axes */
  int m = 0, nr = 0;
  for (int j = 0; j < st->nleaf; j++) {
    te_iter *l = st->leaf[j];
    if (l->type != SCH_ITER_REDUCE)
      continue;
    from[m] = l->var;
    /* a root leaf loops from its domain's min; the new data axis starts at 0 */
    to[m++] = l == it ? ir_add(raxes[axis], l->dom_min)
                      : (rred[nr++] = ir_reduce_axis_new(ctx, l->name, l->dom_min, l->dom_extent));
  }
  for (int v = 0; v < red->nargs; v++)
    if (!src[v] || !(src[v] = ir_substitute(ctx, src[v], m, from, to)))
      return te_last_status(ctx);
  if (cond)
    cond = ir_simplify(an, ir_substitute(ctx, cond, m, from, to));
  rop->nreduce = nr;
  rop->reduce_axes = rred;
  for (int v = 0; v < nv; v++) {
    te_dtype dt = op->body[v]->dtype;
    te_expr *rbody;
    if (nr > 0) {
      ir_reduce rr = {kind, cr, nr, rred, cond, v};
      rbody = ir_reduce_make(ctx, dt, &rr, red->nargs, src);
    } else { /* nothing left to reduce: the value itself, or the identity where cond fails */
      te_expr *id = cr ? cr->identity[v] : sch_reduce_identity(ctx, kind, dt);
      rbody = cond ? ir_select(cond, src[v], id) : src[v];
    }
    if (!rbody || !(rop->outputs[v] = sch_make_output(rop, dt, v)))
      return te_last_status(ctx);
    rop->body[v] = rbody;
  }

  /* C: the reduction of C_rf over the rfactored axis */
  sch_op *cop = ir_alloc_persistent(ctx, sizeof *cop);
  te_expr **caxes = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(op->ndim ? op->ndim : 1));
  te_expr **cred = ir_alloc_persistent(ctx, sizeof(te_expr *));
  if (!cop || !caxes || !cred)
    return te_last_status(ctx);
  *cop = *op;
  te_expr *idx[TE_MAX_DIMS + 1];
  for (int d = 0; d < op->ndim; d++)
    caxes[d] = ir_var_new(ctx, op->axes[d]->u.var.name, TE_I64, IR_VAR_INDEX);
  cred[0] = ir_reduce_axis_new(ctx, it->name, ir_i64(ctx, 0), it->dom_extent);
  for (int d = 0, k = 0; d < nd; d++)
    idx[d] = d == axis ? cred[0] : caxes[k++];
  te_expr *acc[16];
  for (int v = 0; v < nv; v++)
    acc[v] = ir_access(rop->outputs[v], nd, idx);
  cop->axes = caxes;
  cop->nreduce = 1;
  cop->reduce_axes = cred;
  cop->body = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)nv);
  if (!cop->body)
    return te_last_status(ctx);
  for (int v = 0; v < nv; v++) {
    ir_reduce fr = {kind, cr, 1, cred, NULL, v};
    if (!(cop->body[v] = ir_reduce_make(ctx, op->body[v]->dtype, &fr, nv, acc)))
      return te_last_status(ctx);
  }

  int pos = sch_stage_index(s, st);
  if (!sch_stage_insert(s, pos, rop) || !sch_stage_reset(st, cop))
    return te_last_status(ctx);
  if (rf)
    *rf = rop->outputs[0];
  return sch_trace_step(s, SCH_STEP_rfactor, (sch_arg[]){{.tensor = t}, {.iter = it}, {.i = axis}});
}

te_status te_rfactor(te_schedule *s, te_tensor *t, te_iter *it, int axis, te_tensor **rf) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(s, "te_rfactor", rfactor_impl(s, t, it, axis, rf));
}
