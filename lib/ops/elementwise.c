/* elementwise.c — element-wise operators: binary operators with NumPy broadcasting, relu,
 * bias_add along one axis, unary math through te_call, and casts. Each is one injective stage,
 * so te_compute_inline can fold it into its consumer.
 */
#include <stdio.h>
#include <string.h>

#include "ops_internal.h"

static const char *const var_names[TE_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};

typedef te_expr *(*binary_fn)(te_expr *, te_expr *);

/* The broadcast of a and b: out shape and the index of each operand per output dimension. */
static bool broadcast(te_ctx *ctx, const char *fn, te_tensor *a, te_tensor *b, te_expr *const v[],
                      int r, te_expr *shape[], te_expr *ia[], te_expr *ib[]) {
  te_expr *one = te_int(ctx, 1), *zero = te_int(ctx, 0);
  for (int d = 0; d < r; d++) {
    int da = d - (r - a->ndim), db = d - (r - b->ndim);
    te_expr *ea = da >= 0 ? a->shape[da] : one, *eb = db >= 0 ? b->shape[db] : one;
    if (op_same_extent(ea, eb)) {
      shape[d] = ea;
    } else if (op_is_const(ea, 1)) {
      shape[d] = eb;
    } else if (op_is_const(eb, 1)) {
      shape[d] = ea;
    } else {
      char sa[160], sb[160], xa[64], xb[64];
      ir_error(ctx, TE_ERR_SHAPE,
               "%s: shapes %s of '%s' and %s of '%s' are not broadcastable: dimension %d of the "
               "result (%s vs %s)%s",
               fn, op_shape_str(a, sa, sizeof sa), a->name, op_shape_str(b, sb, sizeof sb), b->name,
               d, op_extent_str(ea, xa, sizeof xa), op_extent_str(eb, xb, sizeof xb),
               ir_is_const_int(ea, NULL) && ir_is_const_int(eb, NULL)
                   ? ""
                   : " (symbolic extents must be the identical expression)");
      return false;
    }
    if (da >= 0)
      ia[da] = op_is_const(ea, 1) ? zero : v[d];
    if (db >= 0)
      ib[db] = op_is_const(eb, 1) ? zero : v[d];
  }
  return true;
}

static te_tensor *binary(te_ctx *ctx, const char *fn, const char *def, binary_fn f, te_tensor *a,
                         te_tensor *b, const char *name) {
  if (!op_begin(ctx, fn, &name, def, 2, (te_tensor *const[]){a, b},
                (const char *const[]){"a", "b"}) ||
      !op_check_number(ctx, fn, a) || !op_check_number(ctx, fn, b))
    return NULL;
  if (f == te_div && !ir_is_float(a->dtype) && !ir_is_float(b->dtype)) {
    char x[32], y[32];
    ir_error(ctx, TE_ERR_TYPE,
             "%s: float division of integer tensors '%s' (%s) and '%s' (%s); cast one to a "
             "float type first (te_op_cast)",
             fn, a->name, te_dtype_str(a->dtype, x, sizeof x), b->name,
             te_dtype_str(b->dtype, y, sizeof y));
    return NULL;
  }
  int r = a->ndim > b->ndim ? a->ndim : b->ndim;
  te_expr *v[TE_MAX_DIMS], *shape[TE_MAX_DIMS], *ia[TE_MAX_DIMS], *ib[TE_MAX_DIMS];
  op_vars(ctx, r, var_names, v);
  if (!broadcast(ctx, fn, a, b, v, r, shape, ia, ib))
    return NULL;
  te_expr *body = f(te_at(a, a->ndim, ia), te_at(b, b->ndim, ib));
  return te_compute(ctx, name, r, shape, v, body);
}

te_tensor *te_op_add(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_add", "add", te_add, a, b, name);
}
te_tensor *te_op_sub(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_sub", "sub", te_sub, a, b, name);
}
te_tensor *te_op_mul(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_mul", "mul", te_mul, a, b, name);
}
te_tensor *te_op_div(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_div", "div", te_div, a, b, name);
}
te_tensor *te_op_maximum(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_maximum", "maximum", te_max, a, b, name);
}
te_tensor *te_op_minimum(te_ctx *ctx, te_tensor *a, te_tensor *b, const char *name) {
  return binary(ctx, "te_op_minimum", "minimum", te_min, a, b, name);
}

/* out[v] = f(x[v]) over x's shape. */
static te_tensor *map1(te_ctx *ctx, te_tensor *x, const char *name,
                       te_expr *(*f)(te_ctx *, te_expr *, const void *), const void *arg) {
  te_expr *v[TE_MAX_DIMS];
  op_vars(ctx, x->ndim, var_names, v);
  te_expr *body = f(ctx, te_at(x, x->ndim, v), arg);
  return te_compute(ctx, name, x->ndim, x->shape, v, body);
}

static te_expr *relu_body(te_ctx *ctx, te_expr *e, const void *arg) {
  (void)arg;
  return te_max(e, te_const(ctx, te_expr_dtype(e), 0.0));
}

te_tensor *te_op_relu(te_ctx *ctx, te_tensor *x, const char *name) {
  const char *fn = "te_op_relu";
  if (!op_begin(ctx, fn, &name, "relu", 1, &x, (const char *const[]){"x"}) ||
      !op_check_number(ctx, fn, x))
    return NULL;
  return map1(ctx, x, name, relu_body, NULL);
}

te_tensor *te_op_bias_add(te_ctx *ctx, te_tensor *x, te_tensor *bias, int axis, const char *name) {
  const char *fn = "te_op_bias_add";
  if (!op_begin(ctx, fn, &name, "bias_add", 2, (te_tensor *const[]){x, bias},
                (const char *const[]){"x", "bias"}) ||
      !op_check_same_dtype(ctx, fn, x, bias) || !op_check_number(ctx, fn, x))
    return NULL;
  int r = x->ndim, ax = axis < 0 ? axis + r : axis;
  if (ax < 0 || ax >= r) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: axis %d is out of range for '%s' of rank %d", fn, axis,
             x->name, r);
    return NULL;
  }
  if (bias->ndim != 1 || !op_same_extent(bias->shape[0], x->shape[ax])) {
    char a[160], b[160];
    ir_error(ctx, TE_ERR_SHAPE, "%s: bias '%s' %s must have shape [%s] (axis %d of '%s' %s)", fn,
             bias->name, op_shape_str(bias, b, sizeof b),
             op_extent_str(x->shape[ax], (char[64]){0}, 64), ax, x->name,
             op_shape_str(x, a, sizeof a));
    return NULL;
  }
  te_expr *v[TE_MAX_DIMS];
  op_vars(ctx, r, var_names, v);
  te_expr *body = te_add(te_at(x, r, v), te_at(bias, 1, &v[ax]));
  return te_compute(ctx, name, r, x->shape, v, body);
}

static te_expr *unary_body(te_ctx *ctx, te_expr *e, const void *arg) {
  const char *f = arg;
  if (strcmp(f, "neg") == 0)
    return te_neg(e);
  return te_call(ctx, f, 1, &e);
}

/* fn must be a one-argument te_call function (or "neg") applicable to x's dtype. */
static bool check_unary(te_ctx *ctx, const char *fn, te_tensor *x, const char *f) {
  if (strcmp(f, "neg") == 0)
    return true;
  int id = ir_intrin_lookup(f);
  if (id < 0 || (ir_intrin_table[id].flags & IR_INTRIN_INTERNAL)) {
    ir_error(ctx, TE_ERR_NOT_FOUND,
             "%s: unknown function '%.40s' (expected a te_call math "
             "function such as exp, tanh, sqrt, abs, or neg)",
             fn, f);
    return false;
  }
  if (ir_intrin_table[id].nargs != 1) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: function '%s' takes %d arguments, not 1", fn, f,
             ir_intrin_table[id].nargs);
    return false;
  }
  if ((ir_intrin_table[id].flags & IR_INTRIN_FLOAT) && !ir_is_float(x->dtype)) {
    char t[32];
    ir_error(ctx, TE_ERR_TYPE,
             "%s: function '%s' needs a float tensor; '%s' is %s (cast it "
             "first with te_op_cast)",
             fn, f, x->name, te_dtype_str(x->dtype, t, sizeof t));
    return false;
  }
  return true;
}

te_tensor *te_op_unary(te_ctx *ctx, te_tensor *x, const char *f, const char *name) {
  const char *fn = "te_op_unary";
  if (!op_begin(ctx, fn, &name, f ? f : "unary", 1, &x, (const char *const[]){"x"}))
    return NULL;
  if (!f) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: fn is NULL", fn);
    return NULL;
  }
  if (!op_check_number(ctx, fn, x) || !check_unary(ctx, fn, x, f))
    return NULL;
  return map1(ctx, x, name, unary_body, f);
}

static te_expr *cast_body(te_ctx *ctx, te_expr *e, const void *arg) {
  (void)ctx;
  return te_cast(*(const te_dtype *)arg, e);
}

te_tensor *te_op_cast(te_ctx *ctx, te_tensor *x, te_dtype dtype, const char *name) {
  const char *fn = "te_op_cast";
  if (!op_begin(ctx, fn, &name, "cast", 1, &x, (const char *const[]){"x"}))
    return NULL;
  if (dtype.lanes != 1 || !ir_dtype_supported(dtype)) {
    char t[32];
    ir_error(ctx, dtype.lanes != 1 ? TE_ERR_TYPE : TE_ERR_UNSUPPORTED,
             "%s: cannot cast '%s' to %s (a supported scalar dtype is required)", fn, x->name,
             te_dtype_str(dtype, t, sizeof t));
    return NULL;
  }
  return map1(ctx, x, name, cast_body, &dtype);
}
