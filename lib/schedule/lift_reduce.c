/* lift_reduce.c — reductions inside expressions become stages of their own.
 *
 * A compute may use a reduction anywhere in its body, as Halide's inline reductions allow:
 *   C[i, j] = beta * C0[i, j] + alpha * sum(A[i, k] * B[k, j], k)
 * Each such reduction R (not a body that is itself a reduction: that stays the compute's own)
 * becomes a compute of its own, named after the compute and R's place among the reductions of
 * its bodies, counted in the order they first appear (outer before inner, left to right):
 *   C_red0[i, j] = sum(A[i, k] * B[k, j], k)
 *   C[i, j]      = beta * C0[i, j] + alpha * C_red0[i, j]
 * The lifted compute's axes are the variables R uses that are bound outside it: the compute's
 * index variables, in dimension order, then the reduce axes of the reductions around R, in the
 * order they are declared; its extents are theirs. A reduction nested in another is lifted
 * first, so the outer one reads it (NAME_red1[i, k] inside NAME_red0's sum over k).
 *
 * The lifted stages start computed at the innermost loop of their reader (placement.c,
 * sch_place_lifted), so the default schedule stays one fused loop nest; they are stages like
 * any other for the primitives (te_lifted_reduction_stage finds them).
 *
 * Identical reductions (hash-consing makes them one node) are lifted once. The body as written
 * is kept for te_workload_text, with its nested reduce axes fresh so that it is the compute's
 * own, as a statement's reduce axes are.
 */
#include <stdio.h>
#include <string.h>

#include "sch.h"

typedef struct lifter {
  te_ctx *ctx;
  sch_op *op;
  const char *fn;
  te_expr *top; /* the body being lifted when it is itself a reduction: kept */
  int nred, capred;
  te_expr **reds;  /* the reductions to lift, in pre-order */
  sch_op **ops;    /* their lifted operations, as they are made */
  int nbound;      /* variables bound outside a reduction: candidates for its axes */
  te_expr **bound; /* the compute's axes, then every reduce axis of the source bodies */
} lifter;

static bool push_expr(te_ctx *ctx, te_expr ***arr, int *n, int *cap, te_expr *e) {
  for (int i = 0; i < *n; i++)
    if ((*arr)[i] == e)
      return true;
  return sch_grow(ctx, (void ***)arr, cap, *n, *n + 1) && ((*arr)[(*n)++] = e, true);
}

/* ---------------------------------------------------------------- finding them */

typedef struct finder {
  lifter *L;
  te_expr *top;
  int naxes, capaxes;
  te_expr **axes; /* reduce axes of the nested reductions, first-appearance order */
  bool oom;
} finder;

static int find_reduce(ir_visitor *v, te_expr *e) {
  finder *f = v->data;
  if (e == f->top)
    return IR_CONTINUE;
  lifter *L = f->L;
  if (!push_expr(L->ctx, &L->reds, &L->nred, &L->capred, e))
    return f->oom = true, IR_ABORT;
  for (int i = 0; i < e->u.reduce->naxes; i++)
    if (!push_expr(L->ctx, &f->axes, &f->naxes, &f->capaxes, e->u.reduce->axes[i]))
      return f->oom = true, IR_ABORT;
  return IR_CONTINUE;
}

/* The nested reductions of the bodies (into L->reds) and their reduce axes (into f). */
static bool find_nested(lifter *L, finder *f) {
  ir_visitor v = {0};
  v.expr[IR_REDUCE] = find_reduce;
  v.data = f;
  for (int k = 0; k < L->op->nbody && !f->oom; k++) {
    te_expr *b = L->op->body[k];
    f->top = b->kind == IR_REDUCE ? b : NULL;
    ir_visit_expr(&v, b);
  }
  return !f->oom;
}

/* ---------------------------------------------------------------- lifting one */

static bool own_axis(const ir_reduce *r, const te_expr *v) {
  for (int i = 0; i < r->naxes; i++)
    if (r->axes[i] == v)
      return true;
  return false;
}

/* The domain of a bound variable: an axis of the compute ranges over its shape, from 0. */
static void bound_domain(const lifter *L, int b, te_expr **min, te_expr **extent) {
  te_expr *v = L->bound[b];
  if (b < L->op->ndim) {
    *min = NULL;
    *extent = L->op->shape[b];
  } else {
    *min = v->u.var.dom_min;
    *extent = v->u.var.dom_extent;
  }
  if (*min && ir_is_const_int(*min, NULL) && (*min)->u.i == 0)
    *min = NULL;
}

/* r (its own nested reductions already lifted) as the compute NAME_red<index>; returns the
   read of it that replaces r. */
static te_expr *lift_one(lifter *L, te_expr *r, int index) {
  te_ctx *ctx = L->ctx;
  const ir_reduce *red = r->u.reduce; /* its axes' domains are constant here (compute.c) */
  te_expr *from[TE_MAX_DIMS], *to[TE_MAX_DIMS], *vars[TE_MAX_DIMS], *shape[TE_MAX_DIMS];
  te_expr *idx[TE_MAX_DIMS];
  int n = 0;
  for (int b = 0; b < L->nbound; b++) {
    te_expr *v = L->bound[b];
    if (own_axis(red, v) || !ir_expr_uses(r, v))
      continue;
    if (n == TE_MAX_DIMS) {
      ir_error(ctx, TE_ERR_UNSUPPORTED,
               "%s: tensor '%s': reduction %d uses more than %d variables bound around it (its "
               "stage would have more than %d dimensions)",
               L->fn, L->op->name, index, TE_MAX_DIMS, TE_MAX_DIMS);
      return NULL;
    }
    te_expr *min;
    bound_domain(L, b, &min, &shape[n]);
    if (!(vars[n] = ir_var_new(ctx, v->u.var.name, TE_I64, IR_VAR_INDEX)))
      return NULL;
    from[n] = v;
    to[n] = min ? ir_add(vars[n], min) : vars[n];
    idx[n] = min ? ir_sub(v, min) : v;
    if (!to[n] || !idx[n])
      return NULL;
    n++;
  }
  te_expr *body = ir_substitute(ctx, r, n, from, to);
  char name[160];
  snprintf(name, sizeof name, "%s_red%d", L->op->name, index);
  sch_op *sub = body ? sch_make_compute(ctx, L->fn, name, n, shape, vars, 1, &body) : NULL;
  if (!sub)
    return NULL;
  sub->lifted_from = L->op;
  sub->lift_index = index;
  L->ops[index] = sub;
  return ir_access(sub->outputs[0], n, idx);
}

static te_expr *lift_reduce(ir_mutator *m, te_expr *e) {
  lifter *L = m->data;
  te_expr *r = ir_mutate_expr_children(m, e); /* inner reductions first */
  if (!r || e == L->top)
    return r;
  for (int i = 0; i < L->nred; i++)
    if (L->reds[i] == e)
      return lift_one(L, r, i);
  ir_error(L->ctx, TE_ERR_INTERNAL, "lift_reduce: a reduction the finder did not see");
  return NULL;
}

/* ---------------------------------------------------------------- entry */

/* Fresh copies of the nested reductions' axes in the source bodies (a statement's reduce axes
   are its own, as te_compute makes them), and the list of every reduce axis. */
static bool freshen_source(lifter *L, finder *f) {
  sch_op *op = L->op;
  te_ctx *ctx = L->ctx;
  int n = f->naxes;
  te_expr **fresh = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(n ? n : 1));
  op->source_body = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)op->nbody);
  op->source_reduce_axes =
      ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(op->nreduce + n ? op->nreduce + n : 1));
  if (!fresh || !op->source_body || !op->source_reduce_axes)
    return false;
  for (int i = 0; i < n; i++) {
    te_expr *a = f->axes[i];
    if (!(fresh[i] = ir_reduce_axis_new(ctx, a->u.var.name, a->u.var.dom_min, a->u.var.dom_extent)))
      return false;
  }
  for (int k = 0; k < op->nbody; k++)
    if (!(op->source_body[k] = ir_substitute(ctx, op->body[k], n, f->axes, fresh)))
      return false;
  op->nsource_reduce = op->nreduce + n;
  for (int i = 0; i < op->nreduce; i++)
    op->source_reduce_axes[i] = op->reduce_axes[i];
  for (int i = 0; i < n; i++)
    op->source_reduce_axes[op->nreduce + i] = fresh[i];
  return true;
}

bool sch_lift_reductions(sch_op *op, const char *fn) {
  te_ctx *ctx = op->ctx;
  lifter L = {.ctx = ctx, .op = op, .fn = fn};
  finder f = {.L = &L};
  if (!find_nested(&L, &f))
    return false;
  if (L.nred == 0)
    return true;
  if (!freshen_source(&L, &f))
    return false;
  /* lift from the source bodies: the lifted stages' reduce axes are fresh again, their own */
  L.nred = 0;
  finder g = {.L = &L};
  te_expr **body = op->body;
  op->body = op->source_body;
  bool found = find_nested(&L, &g);
  op->body = body;
  L.nbound = op->ndim + op->nsource_reduce;
  L.bound = ir_alloc(ctx, sizeof(te_expr *) * (size_t)L.nbound);
  L.ops = ir_alloc_persistent(ctx, sizeof(sch_op *) * (size_t)L.nred);
  if (!found || !L.bound || !L.ops)
    return false;
  for (int i = 0; i < op->ndim; i++)
    L.bound[i] = op->axes[i];
  for (int i = 0; i < op->nsource_reduce; i++)
    L.bound[op->ndim + i] = op->source_reduce_axes[i];
  ir_mutator m = {0};
  m.ctx = ctx;
  m.expr[IR_REDUCE] = lift_reduce;
  m.data = &L;
  m.memo = true;
  for (int k = 0; k < op->nbody; k++) {
    te_expr *src = op->source_body[k];
    L.top = src->kind == IR_REDUCE ? src : NULL;
    te_expr *b = ir_mutate_expr(&m, src);
    if (!b)
      return false;
    op->body[k] = b;
  }
  op->nlifted = L.nred;
  op->lifted = L.ops;
  return true;
}

te_expr *sch_op_source_body(const sch_op *op, int k) {
  if (op->is_scan)
    return op->scan_source;
  return op->source_body ? op->source_body[k] : op->body[k];
}

int sch_op_source_reduce_axes(const sch_op *op, te_expr *const **axes) {
  *axes = op->source_body ? op->source_reduce_axes : op->reduce_axes;
  return op->source_body ? op->nsource_reduce : op->nreduce;
}

/* ---------------------------------------------------------------- public */

int te_lifted_reduction_count(const te_tensor *t) {
  if (!t)
    return -1;
  return t->op->kind == SCH_OP_COMPUTE ? t->op->nlifted : 0;
}

te_tensor *te_lifted_reduction(te_tensor *t, int n) {
  if (!t)
    return NULL;
  int count = te_lifted_reduction_count(t);
  if (n < 0 || n >= count) {
    ir_error(t->ctx, count ? TE_ERR_INVALID_ARG : TE_ERR_NOT_FOUND,
             "te_lifted_reduction: tensor '%s' has %d reductions inside its body (asked for %d)",
             t->name, count, n);
    return NULL;
  }
  return t->op->lifted[n]->outputs[0];
}

te_stage *te_lifted_reduction_stage(te_schedule *s, te_tensor *t, int n) {
  if (!s)
    return NULL;
  if (!t) {
    ir_error_null(s->ctx, "te_lifted_reduction_stage: tensor is NULL");
    return NULL;
  }
  te_tensor *r = te_lifted_reduction(t, n);
  return r ? te_stage_of(s, r) : NULL;
}
