/* norm.c — normalizations over the last axis: softmax (numerically stable) and layer norm.
 *
 * Both are written as several stages so that a schedule can place each one (TVM's topi does
 * the same): reductions over the last axis give tensors of the leading shape ("outer"), and an
 * injective stage of x's shape combines them.
 *   softmax:    <name>_max, <name>_exp (injective), <name>_sum, <name> (exp / sum)
 *   layer norm: <name>_mean, <name>_var (two-pass, so no cancellation), <name>
 */
#include <float.h>
#include <stdio.h>

#include "ops_internal.h"

static const char *const var_names[TE_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};

/* x[v[0..r-1), last] */
static te_expr *at_last(te_tensor *x, te_expr *const v[], te_expr *last) {
  te_expr *idx[TE_MAX_DIMS];
  int r = x->ndim;
  for (int d = 0; d < r - 1; d++)
    idx[d] = v[d];
  idx[r - 1] = last;
  return te_at(x, r, idx);
}

/* reducer(body(v, k)) over k in [0, D) as a tensor of x's leading shape. */
static te_tensor *reduce_last(te_ctx *ctx, const char *name, const char *suffix, te_tensor *x,
                              te_expr *(*reducer)(te_expr *, int, te_expr *const[]),
                              te_expr *const v[], te_expr *k, te_expr *body) {
  char buf[OP_BUF];
  te_expr *b = reducer(body, 1, &k);
  return te_compute(ctx, op_stage_name(buf, name, suffix), x->ndim - 1, x->shape, v, b);
}

static bool norm_begin(te_ctx *ctx, const char *fn, te_tensor *x, const char **name,
                       const char *def, int n, te_tensor *const ts[], const char *const labels[]) {
  if (!op_begin(ctx, fn, name, def, n, ts, labels))
    return false;
  if (x->ndim < 1) {
    ir_error(ctx, TE_ERR_SHAPE, "%s: '%s' must have rank >= 1 (got a rank-0 tensor)", fn, x->name);
    return false;
  }
  return op_check_float(ctx, fn, x);
}

te_tensor *te_op_softmax(te_ctx *ctx, te_tensor *x, const char *name) {
  const char *fn = "te_op_softmax";
  if (!norm_begin(ctx, fn, x, &name, "softmax", 1, &x, (const char *const[]){"x"}))
    return NULL;
  int r = x->ndim;
  te_expr *v[TE_MAX_DIMS];
  op_vars(ctx, r, var_names, v);
  te_expr *D = x->shape[r - 1];
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), D);
  te_tensor *mx = reduce_last(ctx, name, "max", x, te_max_r, v, k, at_last(x, v, k));
  if (!mx)
    return NULL;
  char buf[OP_BUF];
  te_expr *e = te_call(ctx, "exp", 1, TE_EXPRS(te_sub(te_at(x, r, v), te_at(mx, r - 1, v))));
  te_tensor *ex = te_compute(ctx, op_stage_name(buf, name, "exp"), r, x->shape, v, e);
  if (!ex)
    return NULL;
  te_tensor *sum = reduce_last(ctx, name, "sum", x, te_sum, v, k, at_last(ex, v, k));
  if (!sum)
    return NULL;
  return te_compute(ctx, name, r, x->shape, v, te_div(te_at(ex, r, v), te_at(sum, r - 1, v)));
}

static bool check_affine(te_ctx *ctx, const char *fn, te_tensor *x, te_tensor *t) {
  if (!op_check_same_dtype(ctx, fn, x, t))
    return false;
  if (t->ndim == 1 && op_same_extent(t->shape[0], x->shape[x->ndim - 1]))
    return true;
  char a[160], b[160];
  ir_error(ctx, TE_ERR_SHAPE,
           "%s: '%s' must have shape [D] with D the last extent of '%s' %s "
           "(got %s)",
           fn, t->name, x->name, op_shape_str(x, a, sizeof a), op_shape_str(t, b, sizeof b));
  return false;
}

/* 1 / D in x's dtype (folded when D is constant). */
static te_expr *inverse_extent(te_ctx *ctx, te_dtype t, te_expr *D) {
  int64_t d;
  if (ir_is_const_int(D, &d))
    return te_const(ctx, t, 1.0 / (double)d);
  return te_div(te_const(ctx, t, 1.0), te_cast(t, D));
}

te_tensor *te_op_layer_norm(te_ctx *ctx, te_tensor *x, te_tensor *gamma, te_tensor *beta,
                            double eps, const char *name) {
  const char *fn = "te_op_layer_norm";
  if (!norm_begin(ctx, fn, x, &name, "layer_norm", 3, (te_tensor *const[]){x, gamma, beta},
                  (const char *const[]){"x", "gamma", "beta"}) ||
      !check_affine(ctx, fn, x, gamma) || !check_affine(ctx, fn, x, beta))
    return NULL;
  if (!(eps >= 0 && eps <= DBL_MAX)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: eps must be finite and >= 0 (got %g)", fn, eps);
    return NULL;
  }
  int r = x->ndim;
  te_dtype t = x->dtype;
  te_expr *v[TE_MAX_DIMS];
  op_vars(ctx, r, var_names, v);
  te_expr *D = x->shape[r - 1];
  te_expr *inv = inverse_extent(ctx, t, D);
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), D);
  te_tensor *mean = reduce_last(ctx, name, "mean", x, te_sum, v, k, te_mul(at_last(x, v, k), inv));
  if (!mean)
    return NULL;
  te_expr *dev = te_sub(at_last(x, v, k), te_at(mean, r - 1, v));
  te_tensor *var = reduce_last(ctx, name, "var", x, te_sum, v, k, te_mul(te_mul(dev, dev), inv));
  if (!var)
    return NULL;
  te_expr *denom =
      te_call(ctx, "sqrt", 1, TE_EXPRS(te_add(te_at(var, r - 1, v), te_const(ctx, t, eps))));
  te_expr *norm = te_div(te_sub(te_at(x, r, v), te_at(mean, r - 1, v)), denom);
  te_expr *last = v[r - 1];
  te_expr *body = te_add(te_mul(norm, te_at(gamma, 1, &last)), te_at(beta, 1, &last));
  return te_compute(ctx, name, r, x->shape, v, body);
}
