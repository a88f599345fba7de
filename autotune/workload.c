/* workload.c — the computation being tuned: its operations in order, a clone of it in another
 * context, and its arguments.
 *
 * A schedule and everything a build makes live in their context until it dies, so the tuner
 * works on copies of the workload in short-lived contexts (one per search round, one per compile
 * thread). at_workload_clone rebuilds the operations through te_placeholder and te_compute with
 * the same names, so schedule traces apply to the copy unchanged. The canonical text and the
 * flop count are in workload_text.c.
 */
#include <string.h>

#include "at.h"

/* ---------------------------------------------------------------- operations in order */

typedef struct op_list {
  te_ctx *ctx;
  int n, cap;
  sch_op **ops;
  ir_map *visiting; /* ops whose producers are being listed: a scan reads itself */
} op_list;

static bool op_listed(const op_list *l, const sch_op *op) {
  for (int i = 0; i < l->n; i++)
    if (l->ops[i] == op)
      return true;
  return false;
}

/* Post-order from op: producers before consumers. */
static bool collect(op_list *l, sch_op *op, int depth) {
  if (op_listed(l, op))
    return true;
  if (depth > 256)
    return ir_error(l->ctx, TE_ERR_INTERNAL, "te_tune: computation nested too deeply"), false;
  if (ir_map_has(l->visiting, op)) /* a cycle through a scan: listed when its walk ends */
    return true;
  if (!ir_map_put(l->visiting, op, op))
    return false;
  te_tensor **in = NULL;
  int n = sch_op_inputs(op, &in);
  for (int i = 0; i < n; i++)
    if (!collect(l, in[i]->op, depth + 1))
      return false;
  if (op_listed(l, op))
    return true;
  if (!sch_grow(l->ctx, (void ***)&l->ops, &l->cap, l->n, l->n + 1))
    return false;
  l->ops[l->n++] = op;
  return true;
}

static bool const_shape(int ndim, te_expr *const shape[]) {
  for (int i = 0; i < ndim; i++)
    if (!ir_is_const_int(shape[i], NULL))
      return false;
  return true;
}

/* Fills ins/args from ops and outs. */
static te_status finish(at_workload *wl) {
  te_ctx *ctx = wl->ctx;
  int nin = 0;
  for (int i = 0; i < wl->nops; i++)
    nin += wl->ops[i]->kind == SCH_OP_PLACEHOLDER;
  wl->ins = ir_alloc_persistent(ctx, sizeof(te_tensor *) * (size_t)(nin + 1));
  wl->args = ir_alloc_persistent(ctx, sizeof(te_tensor *) * (size_t)(nin + wl->nout + 1));
  if (!wl->ins || !wl->args)
    return te_last_status(ctx);
  wl->nin = 0;
  for (int i = 0; i < wl->nops; i++)
    if (wl->ops[i]->kind == SCH_OP_PLACEHOLDER)
      wl->ins[wl->nin++] = wl->ops[i]->outputs[0];
  memcpy(wl->args, wl->ins, sizeof(te_tensor *) * (size_t)wl->nin);
  memcpy(wl->args + wl->nin, wl->outs, sizeof(te_tensor *) * (size_t)wl->nout);
  wl->nargs = wl->nin + wl->nout;
  return TE_OK;
}

static te_status order_ops(at_workload *wl) {
  op_list l = {wl->ctx, 0, 0, NULL, ir_map_new(wl->ctx)};
  if (!l.visiting)
    return te_last_status(wl->ctx);
  for (int i = 0; i < wl->nout; i++)
    if (!collect(&l, wl->outs[i]->op, 0))
      return te_last_status(wl->ctx);
  wl->nops = l.n;
  wl->ops = l.ops;
  return finish(wl);
}

te_status at_workload_make(te_ctx *ctx, int nout, te_tensor *const outs[], const char *api,
                           at_workload *wl) {
  memset(wl, 0, sizeof *wl);
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  if (nout < 1 || !outs)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: needs at least one output tensor", api);
  for (int i = 0; i < nout; i++) {
    if (!outs[i])
      return ir_error_null(ctx, "%s: output %d is NULL", api, i);
    if (outs[i]->ctx != ctx)
      return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: output '%s' belongs to another context", api,
                      outs[i]->name);
    if (outs[i]->op->kind != SCH_OP_COMPUTE)
      return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: output '%s' is a placeholder", api,
                      outs[i]->name);
  }
  wl->ctx = ctx;
  wl->nout = nout;
  wl->outs = ir_alloc_persistent(ctx, sizeof(te_tensor *) * (size_t)nout);
  if (!wl->outs)
    return te_last_status(ctx);
  memcpy(wl->outs, outs, sizeof(te_tensor *) * (size_t)nout);
  te_status st = order_ops(wl);
  if (st != TE_OK)
    return st;
  for (int i = 0; i < wl->nops; i++) {
    sch_op *op = wl->ops[i];
    if (!const_shape(op->ndim, op->shape))
      return ir_error(ctx, TE_ERR_UNSUPPORTED,
                      "%s: tensor '%s' has a symbolic shape: tuning needs constant shapes", api,
                      op->name);
    if (op->ext) /* the sketches schedule te's loops; an extern stage has none */
      return ir_error(ctx, TE_ERR_UNSUPPORTED,
                      "%s: '%s' is an extern stage (te_extern): this version does not tune "
                      "workloads with extern stages (schedule the te stages around it by hand)",
                      api, op->name);
  }
  /* A trial clone finds what cannot be rebuilt (scalar parameters, free variables). */
  te_ctx *tmp = te_ctx_new();
  if (!tmp)
    return ir_error(ctx, TE_ERR_NOMEM, "%s: out of memory", api);
  at_workload copy;
  st = at_workload_clone(wl, tmp, &copy);
  if (st != TE_OK)
    ir_error(ctx, st, "%s: %s", api, te_last_error(tmp));
  te_ctx_free(tmp);
  return st;
}

/* ---------------------------------------------------------------- cloning */

typedef struct cloner {
  te_ctx *dst;
  ir_map *vars;    /* source VAR -> destination VAR */
  ir_map *tensors; /* source te_tensor -> destination te_tensor */
  ir_map *memo;    /* source expression -> copy */
  ir_map *custom;  /* source ir_custom_reducer -> copy: a tuple's results share one reducer */
} cloner;

static te_expr *copy_expr(cloner *c, te_expr *e);

static bool copy_args(cloner *c, te_expr *e, te_expr **out) {
  for (int i = 0; i < e->nargs; i++)
    if (!(out[i] = copy_expr(c, e->args[i])))
      return false;
  return true;
}

static te_expr *map_var(cloner *c, te_expr *v) {
  te_expr *m = ir_map_get(c->vars, v);
  if (m)
    return m;
  const char *what = v->u.var.kind == IR_VAR_PARAM ? "a scalar parameter" : "a symbolic size";
  ir_error(c->dst, TE_ERR_UNSUPPORTED, "the computation uses %s '%s': tuning needs constants", what,
           v->u.var.name);
  return NULL;
}

/* One copy per reducer: the n results of a tuple reduction (te_compute_multi's bodies) must
   keep pointing to one reducer, or the copy is refused as results of different te_reduce calls. */
static ir_custom_reducer *copy_custom(cloner *c, const ir_custom_reducer *r) {
  ir_custom_reducer *done = ir_map_get(c->custom, r);
  if (done)
    return done;
  int n = r->nvalues;
  ir_custom_reducer *o = ir_alloc_persistent(c->dst, sizeof *o);
  if (!o || !ir_map_put(c->custom, r, o))
    return NULL;
  o->nvalues = n;
  te_expr ***lists[4] = {&o->lhs, &o->rhs, &o->results, &o->identity};
  for (int k = 0; k < 4; k++)
    if (!(*lists[k] = ir_alloc_persistent(c->dst, sizeof(te_expr *) * (size_t)n)))
      return NULL;
  for (int i = 0; i < n; i++) {
    o->lhs[i] = ir_var_new(c->dst, r->lhs[i]->u.var.name, r->lhs[i]->dtype, IR_VAR_PARAM);
    o->rhs[i] = ir_var_new(c->dst, r->rhs[i]->u.var.name, r->rhs[i]->dtype, IR_VAR_PARAM);
    if (!o->lhs[i] || !o->rhs[i] || !ir_map_put(c->vars, r->lhs[i], o->lhs[i]) ||
        !ir_map_put(c->vars, r->rhs[i], o->rhs[i]))
      return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!(o->results[i] = copy_expr(c, r->results[i])) ||
        !(o->identity[i] = copy_expr(c, r->identity[i])))
      return NULL;
  return o;
}

static te_expr *copy_reduce(cloner *c, te_expr *e, te_expr **args) {
  ir_reduce r = *e->u.reduce;
  te_expr *axes[AT_MAX_AXES * 2];
  if (r.naxes > (int)(sizeof axes / sizeof axes[0]))
    return ir_error(c->dst, TE_ERR_UNSUPPORTED, "too many reduce axes"), NULL;
  for (int i = 0; i < r.naxes; i++)
    if (!(axes[i] = map_var(c, r.axes[i])))
      return NULL;
  r.axes = axes;
  if (r.cond && !(r.cond = copy_expr(c, r.cond)))
    return NULL;
  if (r.custom && !(r.custom = copy_custom(c, e->u.reduce->custom)))
    return NULL;
  return ir_reduce_make(c->dst, e->dtype, &r, e->nargs, args);
}

static te_expr *copy_node(cloner *c, te_expr *e) {
  te_ctx *d = c->dst;
  te_expr *args[64];
  if (e->nargs > 64)
    return ir_error(d, TE_ERR_UNSUPPORTED, "expression with too many operands"), NULL;
  switch (e->kind) {
  case IR_INT:
    return ir_int(d, e->dtype, e->u.i);
  case IR_FLOAT:
    return ir_float(d, e->dtype, e->u.f);
  case IR_VAR:
    return map_var(c, e);
  case IR_LOAD:
    return ir_error(d, TE_ERR_INTERNAL, "internal: LOAD in a compute body"), NULL;
  case IR_LET: {
    te_expr *v = ir_var_new(d, e->args[0]->u.var.name, e->args[0]->dtype, e->args[0]->u.var.kind);
    if (!v || !ir_map_put(c->vars, e->args[0], v))
      return NULL;
    te_expr *val = copy_expr(c, e->args[1]), *body = val ? copy_expr(c, e->args[2]) : NULL;
    return body ? ir_let(v, val, body) : NULL;
  }
  default:
    break;
  }
  if (!copy_args(c, e, args))
    return NULL;
  switch (e->kind) {
  case IR_ACCESS: {
    te_tensor *t = ir_map_get(c->tensors, e->u.tensor);
    if (!t)
      return ir_error(d, TE_ERR_INTERNAL, "internal: clone of '%s' out of order",
                      e->u.tensor->name),
             NULL;
    return ir_access(t, e->nargs, args);
  }
  case IR_CALL:
    return ir_call(d, e->u.call, e->dtype, e->nargs, args);
  case IR_REDUCE:
    return copy_reduce(c, e, args);
  default:
    return ir_make(d, (ir_expr_kind)e->kind, e->dtype, e->nargs, args, NULL);
  }
}

static te_expr *copy_expr(cloner *c, te_expr *e) {
  te_expr *done = ir_map_get(c->memo, e);
  if (done)
    return done;
  te_expr *r = copy_node(c, e);
  if (r && !ir_map_put(c->memo, e, r))
    return NULL;
  return r;
}

/* The copies of the reductions te lifted out of op's body: the clone of op lifted them again. */
static te_status map_lifted(cloner *c, const sch_op *op, te_tensor *copy) {
  for (int i = 0; i < op->nlifted; i++)
    if (!ir_map_put(c->tensors, op->lifted[i]->outputs[0], copy->op->lifted[i]->outputs[0]))
      return te_last_status(c->dst);
  return TE_OK;
}

/* A scan: its state placeholder, then te_scan of init and update as written. */
static te_status clone_scan(cloner *c, const sch_op *op, te_expr *const shape[],
                            te_expr *const vars[]) {
  te_ctx *d = c->dst;
  te_tensor *st = op->scan_state;
  te_tensor *state = te_placeholder(d, st->name, st->dtype, op->ndim, shape);
  if (!state || !ir_map_put(c->tensors, st, state))
    return te_last_status(d);
  te_expr *init = copy_expr(c, op->scan_source->args[1]);
  te_expr *update = init ? copy_expr(c, op->scan_source->args[2]) : NULL;
  te_tensor *t =
      update ? te_scan(d, op->name, state, op->scan_axis, op->scan_ninit, vars, init, update)
             : NULL;
  if (!t || !ir_map_put(c->tensors, op->outputs[0], t))
    return te_last_status(d);
  return map_lifted(c, op, t);
}

/* Operations are rebuilt from their bodies as written (sch_op_source_body): te_compute lifts
   reductions inside expressions again, so the copy's lifted stages have the same names and
   default placement as the original's; the lifted operations themselves are skipped. */
static te_status clone_op(cloner *c, const sch_op *op) {
  te_ctx *d = c->dst;
  if (op->lifted_from)
    return TE_OK;
  te_expr *shape[TE_MAX_DIMS], *vars[TE_MAX_DIMS];
  for (int i = 0; i < op->ndim; i++)
    if (!(shape[i] = copy_expr(c, op->shape[i])))
      return te_last_status(d);
  if (op->kind == SCH_OP_PLACEHOLDER) {
    te_tensor *t = te_placeholder(d, op->name, op->outputs[0]->dtype, op->ndim, shape);
    return t && ir_map_put(c->tensors, op->outputs[0], t) ? TE_OK : te_last_status(d);
  }
  for (int i = 0; i < op->ndim; i++)
    if (!(vars[i] = te_var(d, op->axes[i]->u.var.name)) ||
        !ir_map_put(c->vars, op->axes[i], vars[i]))
      return te_last_status(d);
  te_expr *const *raxes;
  int nraxes = sch_op_source_reduce_axes(op, &raxes);
  for (int i = 0; i < nraxes; i++) {
    te_expr *rv = raxes[i];
    te_expr *mn = copy_expr(c, rv->u.var.dom_min),
            *ext = mn ? copy_expr(c, rv->u.var.dom_extent) : NULL;
    te_expr *nv = ext ? ir_reduce_axis_new(d, rv->u.var.name, mn, ext) : NULL;
    if (!nv || !ir_map_put(c->vars, rv, nv))
      return te_last_status(d);
  }
  if (op->is_scan)
    return clone_scan(c, op, shape, vars);
  te_expr *bodies[16];
  te_tensor *outs[16];
  if (op->nbody > 16)
    return ir_error(d, TE_ERR_UNSUPPORTED, "compute '%s' has too many outputs", op->name);
  for (int k = 0; k < op->nbody; k++)
    if (!(bodies[k] = copy_expr(c, sch_op_source_body(op, k))))
      return te_last_status(d);
  if (op->nbody == 1 && op->nout == 1) {
    outs[0] = te_compute(d, op->name, op->ndim, shape, vars, bodies[0]);
    if (!outs[0])
      return te_last_status(d);
  } else if (te_compute_multi(d, op->name, op->ndim, shape, vars, op->nbody, bodies, outs) !=
             TE_OK) {
    return te_last_status(d);
  }
  for (int k = 0; k < op->nout && k < op->nbody; k++)
    if (!ir_map_put(c->tensors, op->outputs[k], outs[k]))
      return te_last_status(d);
  return map_lifted(c, op, outs[0]);
}

te_status at_workload_clone(const at_workload *src, te_ctx *dst, at_workload *out) {
  memset(out, 0, sizeof *out);
  cloner c = {dst, ir_map_new(dst), ir_map_new(dst), ir_map_new(dst), ir_map_new(dst)};
  if (!c.vars || !c.tensors || !c.memo || !c.custom)
    return te_last_status(dst);
  for (int i = 0; i < src->nops; i++) {
    te_status st = clone_op(&c, src->ops[i]);
    if (st != TE_OK)
      return st;
  }
  out->ctx = dst;
  out->nout = src->nout;
  out->outs = ir_alloc_persistent(dst, sizeof(te_tensor *) * (size_t)src->nout);
  out->ops = ir_alloc_persistent(dst, sizeof(sch_op *) * (size_t)(src->nops + 1));
  if (!out->outs || !out->ops)
    return te_last_status(dst);
  for (int i = 0; i < src->nout; i++)
    out->outs[i] = ir_map_get(c.tensors, src->outs[i]);
  out->nops = src->nops;
  for (int i = 0; i < src->nops; i++)
    out->ops[i] = ((te_tensor *)ir_map_get(c.tensors, src->ops[i]->outputs[0]))->op;
  return finish(out);
}
