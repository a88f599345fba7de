/* reducer.c — custom commutative reducers and tuple reductions (te_reducer_new, te_reduce).
 *
 * A reducer of n values is given as expressions: results[i] combines the accumulated values
 * lhs[0..n) with incoming values rhs[0..n) (lhs and rhs are te_param variables the user made
 * for the purpose), and identity[i] starts the accumulation. argmax, for instance, reduces
 * (index, value) pairs with
 *     results = { select(rv > lv, ri, li), max(lv, rv) },  identity = { -1, -inf }.
 * te_reduce gives one REDUCE expression per value; te_compute_multi makes them the outputs of
 * one stage, so the whole tuple is updated at once in one loop nest (ops_to_loops.c).
 */
#include <string.h>

#include "sch.h"

struct te_reducer {
  te_ctx *ctx;
  ir_custom_reducer r;
};

static bool is_param(te_expr *e) { return e && e->kind == IR_VAR && e->u.var.kind == IR_VAR_PARAM; }

te_reducer *te_reducer_new(te_ctx *ctx, int n, te_expr *const lhs[], te_expr *const rhs[],
                           te_expr *const results[], te_expr *const identity[]) {
  const char *fn = "te_reducer_new";
  if (!ctx)
    return NULL;
  if (n < 1 || n > 16 || !lhs || !rhs || !results || !identity) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: needs 1 to 16 values and all four arrays (got %d)", fn,
             n);
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    if (!lhs[i] || !rhs[i] || !results[i] || !identity[i]) {
      ir_error_null(ctx, "%s: %s[%d] is NULL", fn,
                    !lhs[i]       ? "lhs"
                    : !rhs[i]     ? "rhs"
                    : !results[i] ? "results"
                                  : "identity",
                    i);
      return NULL;
    }
    if (!is_param(lhs[i]) || !is_param(rhs[i]) || lhs[i] == rhs[i]) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "%s: lhs[%d] and rhs[%d] must be two distinct te_param variables", fn, i, i);
      return NULL;
    }
    te_dtype t = lhs[i]->dtype;
    if (!ir_dtype_eq(rhs[i]->dtype, t) || !ir_dtype_eq(results[i]->dtype, t) ||
        !ir_dtype_eq(identity[i]->dtype, t)) {
      char b[32];
      ir_error(ctx, TE_ERR_TYPE,
               "%s: value %d: lhs, rhs, result and identity must all have lhs's type %s", fn, i,
               te_dtype_str(t, b, sizeof b));
      return NULL;
    }
  }
  te_reducer *red = ir_alloc_persistent(ctx, sizeof *red);
  te_expr **arr = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(4 * n));
  if (!red || !arr)
    return NULL;
  red->ctx = ctx;
  red->r.nvalues = n;
  red->r.lhs = arr;
  red->r.rhs = arr + n;
  red->r.results = arr + 2 * n;
  red->r.identity = arr + 3 * n;
  memcpy(red->r.lhs, lhs, sizeof(te_expr *) * (size_t)n);
  memcpy(red->r.rhs, rhs, sizeof(te_expr *) * (size_t)n);
  memcpy(red->r.results, results, sizeof(te_expr *) * (size_t)n);
  memcpy(red->r.identity, identity, sizeof(te_expr *) * (size_t)n);
  return red;
}

static te_status reduce_impl(te_reducer *red, int n, te_expr *const values[], int nk,
                             te_expr *const axes[], te_expr *cond, te_expr *out[]) {
  const char *fn = "te_reduce";
  if (!red)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = red->ctx;
  if (!out)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: out is NULL", fn);
  for (int i = 0; i < n && i < red->r.nvalues; i++)
    out[i] = NULL;
  if (n != red->r.nvalues || !values)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: the reducer takes %d values (got %d)", fn,
                    red->r.nvalues, n);
  if (nk < 1 || !axes)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: needs at least one reduce axis (got %d)", fn, nk);
  for (int i = 0; i < n; i++) {
    if (!values[i])
      return ir_error_null(ctx, "%s: value %d is NULL", fn, i);
    te_expr *v = ir_dtype_eq(values[i]->dtype, red->r.lhs[i]->dtype) ? values[i] : NULL;
    if (!v) {
      char a[32], b[32];
      return ir_error(ctx, TE_ERR_TYPE, "%s: value %d has type %s but the reducer expects %s", fn,
                      i, te_dtype_str(values[i]->dtype, a, sizeof a),
                      te_dtype_str(red->r.lhs[i]->dtype, b, sizeof b));
    }
  }
  for (int i = 0; i < nk; i++) {
    if (!axes[i])
      return ir_error_null(ctx, "%s: axis %d is NULL", fn, i);
    if (axes[i]->kind != IR_VAR || axes[i]->u.var.kind != IR_VAR_REDUCE)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: axis %d is not a reduce axis (make it with te_reduce_axis)", fn, i);
    for (int j = 0; j < i; j++)
      if (axes[j] == axes[i])
        return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: reduce axis '%s' is given twice", fn,
                        axes[i]->u.var.name);
  }
  if (cond && !ir_is_bool(cond->dtype))
    return ir_error(ctx, TE_ERR_TYPE, "%s: the condition must be a bool", fn);
  te_expr **ax = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)nk);
  if (!ax)
    return TE_ERR_NOMEM;
  memcpy(ax, axes, sizeof(te_expr *) * (size_t)nk);
  for (int i = 0; i < n; i++) {
    ir_reduce r = {IR_REDUCER_CUSTOM, &red->r, nk, ax, cond, i};
    out[i] = ir_reduce_make(ctx, values[i]->dtype, &r, n, values);
    if (!out[i])
      return te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
  }
  return TE_OK;
}

te_status te_reduce(te_reducer *red, int n, te_expr *const values[], int nk, te_expr *const axes[],
                    te_expr *cond, te_expr *out[]) {
  if (!red)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(red->ctx, reduce_impl(red, n, values, nk, axes, cond, out));
}
