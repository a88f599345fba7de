/* util.c — argument checks, folded index arithmetic and shape text for the operator library.
 *
 * Operators state their shape rules in terms of extents that are either constants or symbolic
 * expressions. Folding constants here keeps constant shapes constant (so kernels get constant
 * loop bounds and messages print numbers), and op_same_extent relies on hash-consing: the same
 * expression of the same te_vars is the same pointer.
 */
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"

bool op_begin(te_ctx *ctx, const char *fn, const char **name, const char *def, int n,
              te_tensor *const ts[], const char *const labels[]) {
  if (!ctx)
    return false;
  for (int i = 0; i < n; i++) {
    if (!ts[i]) {
      ir_error_null(ctx, "%s: %s is NULL", fn, labels[i]);
      return false;
    }
    if (ts[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "%s: %s '%s' belongs to another context", fn, labels[i],
               ts[i]->name);
      return false;
    }
  }
  if (!*name)
    *name = def;
  if (!sch_is_identifier(*name) || strlen(*name) > OP_NAME_MAX) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "%s: name '%.80s' is not a C identifier of at most %d characters", fn, *name,
             OP_NAME_MAX);
    return false;
  }
  return true;
}

const char *op_stage_name(char *buf, const char *name, const char *suffix) {
  snprintf(buf, OP_BUF, "%s_%s", name, suffix);
  return buf;
}

/* ---------------------------------------------------------------- folded index arithmetic */

te_expr *op_iadd(te_ctx *ctx, te_expr *a, te_expr *b) {
  int64_t x, y;
  bool ca = ir_is_const_int(a, &x), cb = ir_is_const_int(b, &y);
  if (ca && cb)
    return te_int(ctx, x + y);
  if (ca && x == 0)
    return b;
  if (cb && y == 0)
    return a;
  return te_add(a, b);
}

te_expr *op_isub(te_ctx *ctx, te_expr *a, te_expr *b) {
  int64_t x, y;
  bool ca = ir_is_const_int(a, &x), cb = ir_is_const_int(b, &y);
  if (ca && cb)
    return te_int(ctx, x - y);
  if (cb && y == 0)
    return a;
  return te_sub(a, b);
}

te_expr *op_imul(te_ctx *ctx, te_expr *a, te_expr *b) {
  int64_t x, y;
  bool ca = ir_is_const_int(a, &x), cb = ir_is_const_int(b, &y);
  if (ca && cb)
    return te_int(ctx, x * y);
  if ((ca && x == 0) || (cb && y == 0))
    return te_int(ctx, 0);
  if (ca && x == 1)
    return b;
  if (cb && y == 1)
    return a;
  return te_mul(a, b);
}

te_expr *op_ifloordiv(te_ctx *ctx, te_expr *a, te_expr *b) {
  int64_t x = 0, y = 0;
  bool ca = ir_is_const_int(a, &x), cb = ir_is_const_int(b, &y);
  if (cb && y == 1)
    return a;
  if (ca && cb && y != 0)
    return te_int(ctx, ir_floordiv64(x, y));
  return te_floordiv(a, b);
}

te_expr *op_iaddc(te_ctx *ctx, te_expr *a, int64_t c) { return op_iadd(ctx, a, te_int(ctx, c)); }
te_expr *op_imulc(te_ctx *ctx, te_expr *a, int64_t c) { return op_imul(ctx, a, te_int(ctx, c)); }

bool op_same_extent(te_expr *a, te_expr *b) {
  int64_t x, y;
  if (!a || !b)
    return false;
  if (a == b)
    return true;
  return ir_is_const_int(a, &x) && ir_is_const_int(b, &y) && x == y;
}

bool op_is_const(te_expr *e, int64_t c) {
  int64_t v;
  return ir_is_const_int(e, &v) && v == c;
}

/* ---------------------------------------------------------------- text */

const char *op_extent_str(te_expr *e, char *buf, size_t size) {
  int64_t v;
  if (ir_is_const_int(e, &v)) {
    snprintf(buf, size, "%lld", (long long)v);
    return buf;
  }
  char *s = te_expr_text(e);
  snprintf(buf, size, "%s", s ? s : "?");
  te_free(s);
  return buf;
}

const char *op_shape_str(const te_tensor *t, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size, "[");
  for (int d = 0; d < t->ndim && n < size; d++) {
    char e[64];
    n += (size_t)snprintf(buf + n, size - n, "%s%s", d ? ", " : "",
                          op_extent_str(t->shape[d], e, sizeof e));
  }
  if (n < size)
    snprintf(buf + n, size - n, "]");
  return buf;
}

/* ---------------------------------------------------------------- common checks */

bool op_check_rank(te_ctx *ctx, const char *fn, const char *label, const te_tensor *t, int rank) {
  if (t->ndim == rank)
    return true;
  char s[160];
  ir_error(ctx, TE_ERR_SHAPE, "%s: %s '%s' must have rank %d (got rank %d, shape %s)", fn, label,
           t->name, rank, t->ndim, op_shape_str(t, s, sizeof s));
  return false;
}

bool op_check_same_dtype(te_ctx *ctx, const char *fn, const te_tensor *a, const te_tensor *b) {
  if (ir_dtype_eq(a->dtype, b->dtype))
    return true;
  char x[32], y[32];
  ir_error(ctx, TE_ERR_TYPE, "%s: dtypes of '%s' (%s) and '%s' (%s) differ", fn, a->name,
           te_dtype_str(a->dtype, x, sizeof x), b->name, te_dtype_str(b->dtype, y, sizeof y));
  return false;
}

bool op_check_float(te_ctx *ctx, const char *fn, const te_tensor *t) {
  if (ir_is_float(t->dtype))
    return true;
  char x[32];
  ir_error(ctx, TE_ERR_TYPE, "%s: '%s' must have a float dtype (got %s)", fn, t->name,
           te_dtype_str(t->dtype, x, sizeof x));
  return false;
}

bool op_check_number(te_ctx *ctx, const char *fn, const te_tensor *t) {
  if (!ir_is_bool(t->dtype))
    return true;
  ir_error(ctx, TE_ERR_TYPE, "%s: '%s' has dtype bool; a number type is required", fn, t->name);
  return false;
}

void op_vars(te_ctx *ctx, int n, const char *const names[], te_expr *out[]) {
  for (int i = 0; i < n; i++)
    out[i] = te_var(ctx, names[i]);
}
