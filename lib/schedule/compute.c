/* compute.c — te_compute: checking a compute definition and giving it variables of its own.
 *
 * Rules checked here (each with a message naming the tensor):
 *   - one distinct te_var per dimension;
 *   - a reduce axis appears only inside a reduction over it;
 *   - a reduction inside an expression gives one value (te_reduce's tuples are whole bodies);
 *   - the body's type is a supported scalar type.
 * The operation then gets fresh axis variables and fresh reduce axes (same names and domains),
 * substituted for the user's, so the same te_var may index several computes. Reductions inside
 * an expression are then lifted into stages of their own (lift_reduce.c).
 */
#include <string.h>

#include "sch.h"

typedef struct body_check {
  te_ctx *ctx;
  const char *name;
  int nscope;
  te_expr *scope[SCH_MAX_SCOPE_AXES]; /* reduce axes of the enclosing reductions */
  int nvars;
  te_expr *const *vars; /* the compute's index variables */
  int depth;
} body_check;

/* A reduction inside another: its axes' domains may not depend on the variables bound around
   it (the lifted stage's domain would vary with its own axes). The body's own reduction is
   checked when its axes are made fresh (freshen_reduce). */
static bool check_nested_domains(body_check *c, const ir_reduce *r) {
  for (int i = 0; i < r->naxes; i++) {
    te_expr *a = r->axes[i];
    if (ir_expr_uses_any(a->u.var.dom_min, c->nscope, c->scope) ||
        ir_expr_uses_any(a->u.var.dom_extent, c->nscope, c->scope) ||
        ir_expr_uses_any(a->u.var.dom_min, c->nvars, c->vars) ||
        ir_expr_uses_any(a->u.var.dom_extent, c->nvars, c->vars)) {
      ir_error(c->ctx, TE_ERR_UNSUPPORTED,
               "te_compute: tensor '%s': the domain of reduce axis '%s' depends on a variable "
               "bound around its reduction (not supported by this version)",
               c->name, a->u.var.name);
      return false;
    }
  }
  return true;
}

static bool in_scope(const body_check *c, const te_expr *v) {
  for (int i = 0; i < c->nscope; i++)
    if (c->scope[i] == v)
      return true;
  return false;
}

/* Walks e, the body or a part of it: a reduce axis appears only inside a reduction over it; a
   reduction inside an expression (one te lifts into a stage of its own) gives one value. */
static bool check_expr(body_check *c, te_expr *e, bool top) {
  if (!e)
    return true;
  if (++c->depth > 10000) {
    ir_error(c->ctx, TE_ERR_INVALID_ARG, "te_compute: tensor '%s': the body is too deep", c->name);
    return false;
  }
  bool ok = true;
  if (e->kind == IR_VAR && e->u.var.kind == IR_VAR_REDUCE && !in_scope(c, e)) {
    ir_error(c->ctx, TE_ERR_INVALID_ARG,
             "te_compute: tensor '%s': reduce axis '%s' is used outside a reduction over it",
             c->name, e->u.var.name);
    ok = false;
  } else if (e->kind == IR_REDUCE) {
    ir_reduce *r = e->u.reduce;
    int saved = c->nscope;
    if (!top && r->custom && r->custom->nvalues > 1) {
      ir_error(c->ctx, TE_ERR_INVALID_ARG,
               "te_compute: tensor '%s': a reduction of %d values (te_reduce) must be the whole "
               "body of a te_compute_multi, not part of an expression",
               c->name, r->custom->nvalues);
      ok = false;
    } else if (!top && !check_nested_domains(c, r)) {
      ok = false;
    } else if (c->nscope + r->naxes > SCH_MAX_SCOPE_AXES) {
      ir_error(c->ctx, TE_ERR_UNSUPPORTED,
               "te_compute: tensor '%s': more than %d reduce axes in nested reductions", c->name,
               SCH_MAX_SCOPE_AXES);
      ok = false;
    } else {
      for (int i = 0; i < r->naxes; i++)
        c->scope[c->nscope++] = r->axes[i];
      for (int i = 0; ok && i < e->nargs; i++)
        ok = check_expr(c, e->args[i], false);
      ok = ok && check_expr(c, r->cond, false);
    }
    c->nscope = saved;
  } else {
    for (int i = 0; ok && i < e->nargs; i++)
      ok = check_expr(c, e->args[i], false);
  }
  c->depth--;
  return ok;
}

static bool check_vars(te_ctx *ctx, const char *name, int ndim, te_expr *const vars[]) {
  if (ndim > 0 && !vars) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_compute: tensor '%s': vars is NULL", name);
    return false;
  }
  for (int i = 0; i < ndim; i++) {
    if (!vars[i]) {
      ir_error_null(ctx, "te_compute: tensor '%s': var %d is NULL", name, i);
      return false;
    }
    if (vars[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "te_compute: tensor '%s': var %d belongs to another context", name, i);
      return false;
    }
    if (vars[i]->kind != IR_VAR || vars[i]->u.var.kind != IR_VAR_INDEX) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "te_compute: tensor '%s': var %d is not an index variable (make it with te_var)",
               name, i);
      return false;
    }
    for (int j = 0; j < i; j++)
      if (vars[j] == vars[i]) {
        ir_error(ctx, TE_ERR_INVALID_ARG,
                 "te_compute: tensor '%s': variable '%s' indexes two dimensions (%d and %d)", name,
                 vars[i]->u.var.name, j, i);
        return false;
      }
  }
  return true;
}

/* Fresh copies of the reduce axes of r; substitutes them (and the axis vars) in the sources. */
static te_expr *freshen_reduce(te_ctx *ctx, te_expr *body, int ndim, te_expr *const from[],
                               te_expr *const to[], sch_op *op) {
  ir_reduce *r = body->u.reduce;
  int n = ndim + r->naxes;
  te_expr **f = ir_alloc(ctx, sizeof(te_expr *) * (size_t)n);
  te_expr **t = ir_alloc(ctx, sizeof(te_expr *) * (size_t)n);
  ir_reduce *nr = ir_alloc(ctx, sizeof *nr);
  if (!f || !t || !nr)
    return NULL;
  if (ndim > 0) { /* a full reduction to a 0-d tensor has no vars (from may be NULL) */
    memcpy(f, from, sizeof(te_expr *) * (size_t)ndim);
    memcpy(t, to, sizeof(te_expr *) * (size_t)ndim);
  }
  *nr = *r;
  nr->axes = ir_alloc(ctx, sizeof(te_expr *) * (size_t)r->naxes);
  if (!nr->axes)
    return NULL;
  for (int i = 0; i < r->naxes; i++) {
    te_expr *a = r->axes[i];
    if (ir_expr_uses_any(a->u.var.dom_min, ndim, from) ||
        ir_expr_uses_any(a->u.var.dom_extent, ndim, from)) {
      ir_error(ctx, TE_ERR_UNSUPPORTED,
               "te_compute: tensor '%s': the domain of reduce axis '%s' depends on an index "
               "variable of the compute (not supported by this version)",
               op->name, a->u.var.name);
      return NULL;
    }
    nr->axes[i] = ir_reduce_axis_new(ctx, a->u.var.name, a->u.var.dom_min, a->u.var.dom_extent);
    f[ndim + i] = a;
    t[ndim + i] = nr->axes[i];
  }
  if (r->cond)
    nr->cond = ir_substitute(ctx, r->cond, n, f, t);
  te_expr **src = ir_alloc(ctx, sizeof(te_expr *) * body->nargs);
  if (!src)
    return NULL;
  for (int i = 0; i < body->nargs; i++)
    src[i] = ir_substitute(ctx, body->args[i], n, f, t);
  op->nreduce = r->naxes;
  op->reduce_axes = nr->axes;
  return ir_reduce_make(ctx, body->dtype, nr, body->nargs, src);
}

/* body with from -> to substituted and, for a reduction, fresh reduce axes (recorded in op). */
te_expr *sch_freshen_body(te_ctx *ctx, te_expr *body, int n, te_expr *const from[],
                          te_expr *const to[], sch_op *op) {
  if (body->kind == IR_REDUCE)
    return freshen_reduce(ctx, body, n, from, to, op);
  return ir_substitute(ctx, body, n, from, to);
}

/* Checks one body: type, reductions only at the top, reduce axes only inside them; all bodies
   of a multi-output compute are reductions sharing reducer, axes and condition, or none is. */
static bool check_body(te_ctx *ctx, const char *fn, const char *name, te_expr *body, te_expr *first,
                       int ndim, te_expr *const vars[]) {
  if (!body) {
    ir_error_null(ctx, "%s: tensor '%s': body is NULL", fn, name);
    return false;
  }
  if (body->ctx != ctx) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s': body belongs to another context", fn, name);
    return false;
  }
  if (body->dtype.lanes != 1 || !ir_dtype_supported(body->dtype)) {
    char b[32];
    ir_error(ctx, TE_ERR_TYPE, "%s: tensor '%s': body type %s is not supported", fn, name,
             te_dtype_str(body->dtype, b, sizeof b));
    return false;
  }
  if (first && first != body) {
    bool same = first->kind == IR_REDUCE && body->kind == IR_REDUCE &&
                first->u.reduce->custom == body->u.reduce->custom &&
                first->u.reduce->kind == body->u.reduce->kind &&
                first->u.reduce->cond == body->u.reduce->cond &&
                first->u.reduce->naxes == body->u.reduce->naxes && first->nargs == body->nargs;
    for (int i = 0; same && i < first->u.reduce->naxes; i++)
      same = first->u.reduce->axes[i] == body->u.reduce->axes[i];
    if ((first->kind == IR_REDUCE || body->kind == IR_REDUCE) && !same) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "%s: tensor '%s': the bodies must all be results of one te_reduce call, or none a "
               "reduction",
               fn, name);
      return false;
    }
  }
  body_check c = {.ctx = ctx, .name = name, .nvars = ndim, .vars = vars};
  return check_expr(&c, body, true);
}

/* The operation of te_compute / te_compute_multi: nbody outputs over one loop nest. */
sch_op *sch_make_compute(te_ctx *ctx, const char *fn, const char *name, int ndim,
                         te_expr *const shape[], te_expr *const vars[], int nbody,
                         te_expr *const bodies[]) {
  if (!ctx)
    return NULL;
  if (!sch_is_identifier(name)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: name '%s' is not a C identifier", fn,
             name ? name : "(null)");
    return NULL;
  }
  if (!sch_check_shape(ctx, fn, name, ndim, shape))
    return NULL;
  if (!check_vars(ctx, name, ndim, vars))
    return NULL;
  for (int k = 0; k < nbody; k++)
    if (!check_body(ctx, fn, name, bodies[k], bodies[0], ndim, vars))
      return NULL;
  const char *axis_names[TE_MAX_DIMS];
  for (int i = 0; i < ndim; i++)
    axis_names[i] = vars[i]->u.var.name;
  sch_op *op = sch_op_new(ctx, SCH_OP_COMPUTE, name, ndim, shape, axis_names, nbody);
  if (!op)
    return NULL;
  /* the first body fixes the fresh reduce axes; the others are renamed the same way */
  te_expr *first = sch_freshen_body(ctx, bodies[0], ndim, vars, op->axes, op);
  if (!first)
    return NULL;
  for (int k = 0; k < nbody; k++) {
    te_expr *b = first;
    if (k > 0 && bodies[k]->kind == IR_REDUCE) {
      int n = ndim + op->nreduce;
      te_expr *from[TE_MAX_DIMS + 64], *to[TE_MAX_DIMS + 64];
      if (n > (int)(sizeof from / sizeof *from)) {
        ir_error(ctx, TE_ERR_UNSUPPORTED, "%s: tensor '%s': too many reduce axes", fn, name);
        return NULL;
      }
      for (int i = 0; i < ndim; i++)
        from[i] = vars[i], to[i] = op->axes[i];
      for (int i = 0; i < op->nreduce; i++)
        from[ndim + i] = bodies[0]->u.reduce->axes[i], to[ndim + i] = op->reduce_axes[i];
      b = ir_substitute(ctx, bodies[k], n, from, to);
    } else if (k > 0) {
      b = ir_substitute(ctx, bodies[k], ndim, vars, op->axes);
    }
    if (!b)
      return NULL;
    op->body[k] = b;
    if (!(op->outputs[k] = sch_make_output(op, b->dtype, k)))
      return NULL;
  }
  return sch_lift_reductions(op, fn) ? op : NULL;
}

static te_tensor *compute_impl(te_ctx *ctx, const char *name, int ndim, te_expr *const shape[],
                               te_expr *const vars[], te_expr *body) {
  if (ctx && body && body->kind == IR_REDUCE && body->u.reduce->custom &&
      body->u.reduce->custom->nvalues > 1) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "te_compute: tensor '%s': a reducer of %d values needs te_compute_multi",
             name ? name : "(null)", body->u.reduce->custom->nvalues);
    return NULL;
  }
  sch_op *op = sch_make_compute(ctx, "te_compute", name, ndim, shape, vars, 1, &body);
  return op ? op->outputs[0] : NULL;
}

te_tensor *te_compute(te_ctx *ctx, const char *name, int ndim, te_expr *const shape[],
                      te_expr *const vars[], te_expr *body) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(ctx, compute_impl(ctx, name, ndim, shape, vars, body));
}

static te_status compute_multi_impl(te_ctx *ctx, const char *name, int ndim, te_expr *const shape[],
                                    te_expr *const vars[], int nout, te_expr *const bodies[],
                                    te_tensor *outs[]) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  if (nout < 1 || !bodies || !outs)
    return ir_error(ctx, TE_ERR_INVALID_ARG,
                    "te_compute_multi: needs at least one body and an "
                    "output array (got %d)",
                    nout);
  for (int k = 0; k < nout; k++) {
    outs[k] = NULL;
    if (!bodies[k])
      return ir_error_null(ctx, "te_compute_multi: body %d is NULL", k);
  }
  te_expr *b0 = bodies[0];
  if (b0->kind == IR_REDUCE && b0->u.reduce->custom && b0->u.reduce->custom->nvalues != nout)
    return ir_error(
        ctx, TE_ERR_INVALID_ARG,
        "te_compute_multi: tensor '%s': the reducer has %d values but %d bodies were given",
        name ? name : "(null)", b0->u.reduce->custom->nvalues, nout);
  for (int k = 0; k < nout; k++)
    if (bodies[k]->kind == IR_REDUCE && bodies[k]->u.reduce->value_index != k)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "te_compute_multi: tensor '%s': body %d is result %d of its reduction; pass "
                      "te_reduce's results in order",
                      name ? name : "(null)", k, bodies[k]->u.reduce->value_index);
  sch_op *op = sch_make_compute(ctx, "te_compute_multi", name, ndim, shape, vars, nout, bodies);
  if (!op)
    return te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
  for (int k = 0; k < nout; k++)
    outs[k] = op->outputs[k];
  return TE_OK;
}

te_status te_compute_multi(te_ctx *ctx, const char *name, int ndim, te_expr *const shape[],
                           te_expr *const vars[], int nout, te_expr *const bodies[],
                           te_tensor *outs[]) {
  if (!ctx)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(ctx, compute_multi_impl(ctx, name, ndim, shape, vars, nout, bodies, outs));
}

/* ---------------------------------------------------------------- queries */

typedef struct input_walk {
  te_ctx *ctx;
  int n, cap;
  te_tensor **list;
} input_walk;

static int collect_access(ir_visitor *v, te_expr *e) {
  input_walk *w = v->data;
  for (int i = 0; i < w->n; i++)
    if (w->list[i] == e->u.tensor)
      return IR_CONTINUE;
  if (w->n == w->cap) {
    int cap = w->cap ? w->cap * 2 : 8;
    te_tensor **l = ir_alloc(w->ctx, sizeof(te_tensor *) * (size_t)cap);
    if (!l)
      return IR_ABORT;
    if (w->n)
      memcpy(l, w->list, sizeof(te_tensor *) * (size_t)w->n);
    w->list = l;
    w->cap = cap;
  }
  w->list[w->n++] = e->u.tensor;
  return IR_CONTINUE;
}

int sch_expr_inputs(te_ctx *ctx, int nexpr, te_expr *const exprs[], te_tensor ***out) {
  input_walk w = {ctx, 0, 0, NULL};
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = collect_access;
  v.data = &w;
  for (int i = 0; i < nexpr; i++) {
    if (!exprs[i])
      continue;
    ir_visit_expr(&v, exprs[i]); /* visits a reduction's condition too */
  }
  *out = w.list;
  return w.n;
}

int sch_op_inputs(sch_op *op, te_tensor ***out) {
  if (op->kind != SCH_OP_COMPUTE) {
    *out = NULL;
    return 0;
  }
  if (op->ext) { /* a copy: callers may keep it */
    te_tensor **in = ir_alloc(op->ctx, sizeof *in * (size_t)(op->ext->ninputs + 1));
    if (!in) {
      *out = NULL;
      return 0;
    }
    memcpy(in, op->ext->inputs, sizeof *in * (size_t)op->ext->ninputs);
    *out = in;
    return op->ext->ninputs;
  }
  return sch_expr_inputs(op->ctx, op->nbody, op->body, out);
}

bool sch_op_is_injective(const sch_op *op) {
  return op->kind == SCH_OP_COMPUTE && op->nreduce == 0 && !op->is_scan && !op->ext;
}
