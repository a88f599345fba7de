/* tensor.c — placeholders, computes, reductions and tensor reads (the public tensor.h API).
 *
 * te_compute gives every operation fresh variables of its own: the user's index variables and
 * the reduce axes in the body are replaced by new ones, so one te_var may index several computes
 * and the schedule can name an operation's axes by identity.
 */
#include <stdio.h>
#include <string.h>

#include "sch.h"

bool sch_is_identifier(const char *s) {
  if (!s || !*s)
    return false;
  if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
    return false;
  for (s++; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

/* Checks a shape: every extent non-NULL, an integer, from this context; constants > 0. */
bool sch_check_shape(te_ctx *ctx, const char *fn, const char *name, int ndim,
                     te_expr *const shape[]) {
  if (ndim < 0 || ndim > TE_MAX_DIMS) {
    ir_error(ctx, TE_ERR_SHAPE, "%s: tensor '%s': rank must be in [0, %d] (got %d)", fn, name,
             TE_MAX_DIMS, ndim);
    return false;
  }
  if (ndim > 0 && !shape) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s': shape is NULL", fn, name);
    return false;
  }
  for (int i = 0; i < ndim; i++) {
    te_expr *e = shape[i];
    if (!e) {
      ir_error_null(ctx, "%s: tensor '%s': extent %d is NULL", fn, name, i);
      return false;
    }
    if (e->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s': extent %d belongs to another context", fn,
               name, i);
      return false;
    }
    if (!ir_is_intlike(e->dtype) || ir_is_bool(e->dtype) || e->dtype.lanes != 1) {
      char b[32];
      ir_error(ctx, TE_ERR_TYPE, "%s: tensor '%s': extent %d must be an integer (got %s)", fn, name,
               i, te_dtype_str(e->dtype, b, sizeof b));
      return false;
    }
    int64_t v;
    ir_analyzer *an = ir_analyzer_new(ctx); /* `1 - 12` is a constant extent too */
    te_expr *simple = an ? ir_simplify(an, ir_cast(TE_I64, e)) : e;
    if (ir_is_const_int(simple, &v) && v <= 0) {
      ir_error(ctx, TE_ERR_SHAPE, "%s: tensor '%s': extent %d must be > 0 (got %lld)", fn, name, i,
               (long long)v);
      return false;
    }
  }
  return true;
}

/* The shape as i64 extents in simplest form (so `H + 2` with H = 30 reads 32 everywhere). */
te_expr **sch_copy_shape(te_ctx *ctx, int ndim, te_expr *const shape[]) {
  te_expr **s = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(ndim ? ndim : 1));
  ir_analyzer *an = ir_analyzer_new(ctx);
  if (!s || !an)
    return NULL;
  for (int i = 0; i < ndim; i++)
    s[i] = ir_simplify(an, ir_cast(TE_I64, shape[i]));
  return s;
}

te_tensor *sch_make_output(sch_op *op, te_dtype dtype, int value_index) {
  te_tensor *t = ir_alloc_persistent(op->ctx, sizeof *t);
  if (!t)
    return NULL;
  t->ctx = op->ctx;
  t->name = op->name;
  if (op->nout > 1) { /* the outputs of a multi-output compute are NAME_v0, NAME_v1, ... */
    char buf[160];
    snprintf(buf, sizeof buf, "%s_v%d", op->name, value_index);
    if (!(t->name = ir_strdup_persistent(op->ctx, buf)))
      return NULL;
  }
  t->dtype = dtype;
  t->ndim = op->ndim;
  t->shape = op->shape;
  t->op = op;
  t->value_index = value_index;
  return t;
}

sch_op *sch_op_new(te_ctx *ctx, sch_op_kind kind, const char *name, int ndim,
                   te_expr *const shape[], const char *const axis_names[], int nout) {
  sch_op *op = ir_alloc_persistent(ctx, sizeof *op);
  if (!op)
    return NULL;
  op->kind = kind;
  op->ctx = ctx;
  op->name = ir_strdup_persistent(ctx, name);
  op->ndim = ndim;
  op->shape = sch_copy_shape(ctx, ndim, shape);
  op->nout = nout;
  op->outputs = ir_alloc_persistent(ctx, sizeof(te_tensor *) * (size_t)nout);
  if (!op->name || !op->shape || !op->outputs)
    return NULL;
  if (kind == SCH_OP_PLACEHOLDER)
    return op;
  op->nbody = nout;
  op->body = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)nout);
  op->axes = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)(ndim ? ndim : 1));
  if (!op->body || !op->axes)
    return NULL;
  for (int i = 0; i < ndim; i++)
    if (!(op->axes[i] = ir_var_new(ctx, axis_names[i], TE_I64, IR_VAR_INDEX)))
      return NULL;
  return op;
}

static te_tensor *placeholder_impl(te_ctx *ctx, const char *name, te_dtype dtype, int ndim,
                                   te_expr *const shape[]) {
  if (!ctx)
    return NULL;
  if (!sch_is_identifier(name)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_placeholder: name '%s' is not a C identifier",
             name ? name : "(null)");
    return NULL;
  }
  if (dtype.lanes != 1 || !ir_dtype_supported(dtype)) {
    char b[32];
    ir_error(ctx, TE_ERR_TYPE, "te_placeholder: tensor '%s': dtype %s is not supported", name,
             te_dtype_str(dtype, b, sizeof b));
    return NULL;
  }
  if (!sch_check_shape(ctx, "te_placeholder", name, ndim, shape))
    return NULL;
  sch_op *op = sch_op_new(ctx, SCH_OP_PLACEHOLDER, name, ndim, shape, NULL, 1);
  if (!op)
    return NULL;
  op->outputs[0] = sch_make_output(op, dtype, 0);
  return op->outputs[0];
}

te_tensor *te_placeholder(te_ctx *ctx, const char *name, te_dtype dtype, int ndim,
                          te_expr *const shape[]) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(ctx, placeholder_impl(ctx, name, dtype, ndim, shape));
}

/* Checks the declared strides of placeholder t and records them on it: each an integer of this
   context whose variables are te_var sizes or stride variables; a constant must be >= 0. */
static te_tensor *set_strides(te_ctx *ctx, te_tensor *t, te_expr *const strides[]) {
  const char *fn = "te_placeholder_strided";
  te_expr **st = ir_alloc_persistent(ctx, sizeof *st * (size_t)(t->ndim ? t->ndim : 1));
  ir_analyzer *an = ir_analyzer_new(ctx);
  if (!st || !an)
    return NULL;
  for (int d = 0; d < t->ndim; d++) {
    te_expr *e = strides[d];
    if (!e) {
      ir_error_null(ctx, "%s: tensor '%s': stride %d is NULL", fn, t->name, d);
      return NULL;
    }
    if (e->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s': stride %d belongs to another context", fn,
               t->name, d);
      return NULL;
    }
    if (!ir_is_intlike(e->dtype) || ir_is_bool(e->dtype) || e->dtype.lanes != 1) {
      char b[32];
      ir_error(ctx, TE_ERR_TYPE, "%s: tensor '%s': stride %d must be an integer (got %s)", fn,
               t->name, d, te_dtype_str(e->dtype, b, sizeof b));
      return NULL;
    }
    st[d] = ir_simplify(an, ir_cast(TE_I64, e));
    int64_t v;
    if (!st[d])
      return NULL;
    if (ir_is_const_int(st[d], &v) && v < 0) {
      ir_error(ctx, TE_ERR_SHAPE,
               "%s: tensor '%s': stride %d must be >= 0 (got %lld); negative strides are not "
               "supported",
               fn, t->name, d, (long long)v);
      return NULL;
    }
  }
  t->strides = st;
  return t;
}

te_tensor *te_placeholder_strided(te_ctx *ctx, const char *name, te_dtype dtype, int ndim,
                                  te_expr *const shape[], te_expr *const strides[]) {
  if (!ctx)
    return NULL;
  ir_call_begin(ctx);
  te_tensor *t = placeholder_impl(ctx, name, dtype, ndim, shape);
  if (t && strides)
    t = set_strides(ctx, t, strides);
  return ir_call_end_ptr(ctx, t);
}

te_expr *te_tensor_stride(const te_tensor *t, int i) {
  if (!t || !t->strides || i < 0 || i >= t->ndim)
    return NULL;
  return t->strides[i];
}

te_expr *te_reduce_axis(te_ctx *ctx, const char *name, te_expr *min, te_expr *extent) {
  if (!ctx)
    return NULL;
  if (!min || !extent) {
    ir_error_null(ctx, "te_reduce_axis: axis '%s': %s is NULL", name ? name : "(null)",
                  !min ? "min" : "extent");
    return NULL;
  }
  if (!sch_is_identifier(name)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_reduce_axis: name '%s' is not a C identifier",
             name ? name : "(null)");
    return NULL;
  }
  te_expr *ends[2] = {min, extent};
  const char *what[2] = {"min", "extent"};
  for (int i = 0; i < 2; i++) {
    if (ends[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "te_reduce_axis: axis '%s': %s belongs to another context",
               name, what[i]);
      return NULL;
    }
    if (!ir_is_intlike(ends[i]->dtype) || ir_is_bool(ends[i]->dtype)) {
      ir_error(ctx, TE_ERR_TYPE, "te_reduce_axis: axis '%s': %s must be an integer", name, what[i]);
      return NULL;
    }
  }
  int64_t v;
  if (ir_is_const_int(extent, &v) && v <= 0) {
    ir_error(ctx, TE_ERR_SHAPE, "te_reduce_axis: axis '%s': extent must be > 0 (got %lld)", name,
             (long long)v);
    return NULL;
  }
  return ir_reduce_axis_new(ctx, name, ir_cast(TE_I64, min), ir_cast(TE_I64, extent));
}

/* ---------------------------------------------------------------- reductions */

static te_expr *make_reduce(const char *fn, ir_reducer_kind kind, te_expr *body, int nk,
                            te_expr *const axes[]) {
  if (!body) {
    for (int i = 0; i < nk && axes; i++) /* an axis may carry the context */
      if (axes[i]) {
        ir_error_null(axes[i]->ctx, "%s: body is NULL", fn);
        break;
      }
    return NULL;
  }
  te_ctx *ctx = body->ctx;
  if (nk < 1 || !axes) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: needs at least one reduce axis (got %d)", fn, nk);
    return NULL;
  }
  for (int i = 0; i < nk; i++) {
    if (!axes[i]) {
      ir_error_null(ctx, "%s: axis %d is NULL", fn, i);
      return NULL;
    }
    if (axes[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "%s: axis %d belongs to another context", fn, i);
      return NULL;
    }
    if (axes[i]->kind != IR_VAR || axes[i]->u.var.kind != IR_VAR_REDUCE) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "%s: axis %d is not a reduce axis (make it with te_reduce_axis)", fn, i);
      return NULL;
    }
    for (int j = 0; j < i; j++)
      if (axes[j] == axes[i]) {
        ir_error(ctx, TE_ERR_INVALID_ARG, "%s: reduce axis '%s' is given twice", fn,
                 axes[i]->u.var.name);
        return NULL;
      }
  }
  if (body->dtype.lanes != 1 || ir_is_bool(body->dtype)) {
    char b[32];
    ir_error(ctx, TE_ERR_TYPE, "%s: cannot reduce a value of type %s", fn,
             te_dtype_str(body->dtype, b, sizeof b));
    return NULL;
  }
  ir_reduce r = {0};
  r.kind = kind;
  r.naxes = nk;
  r.axes = ir_alloc(ctx, sizeof(te_expr *) * (size_t)nk);
  if (!r.axes)
    return NULL;
  memcpy(r.axes, axes, sizeof(te_expr *) * (size_t)nk);
  return ir_reduce_make(ctx, body->dtype, &r, 1, &body);
}

te_expr *te_sum(te_expr *body, int nk, te_expr *const axes[]) {
  return make_reduce("te_sum", IR_REDUCER_SUM, body, nk, axes);
}
te_expr *te_max_r(te_expr *body, int nk, te_expr *const axes[]) {
  return make_reduce("te_max_r", IR_REDUCER_MAX, body, nk, axes);
}
te_expr *te_min_r(te_expr *body, int nk, te_expr *const axes[]) {
  return make_reduce("te_min_r", IR_REDUCER_MIN, body, nk, axes);
}
te_expr *te_prod(te_expr *body, int nk, te_expr *const axes[]) {
  return make_reduce("te_prod", IR_REDUCER_PROD, body, nk, axes);
}

/* ---------------------------------------------------------------- reads */

te_expr *te_at(te_tensor *t, int n, te_expr *const idx[]) {
  if (!t)
    return NULL;
  te_ctx *ctx = t->ctx;
  if (n != t->ndim) {
    ir_error(ctx, TE_ERR_SHAPE, "te_at: tensor '%s' has rank %d but %d indices were given", t->name,
             t->ndim, n);
    return NULL;
  }
  if (n > 0 && !idx) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_at: tensor '%s': indices are NULL", t->name);
    return NULL;
  }
  te_expr *cast[TE_MAX_DIMS];
  for (int i = 0; i < n; i++) {
    if (!idx[i]) {
      ir_error_null(ctx, "te_at: tensor '%s': index %d is NULL", t->name, i);
      return NULL;
    }
    if (idx[i]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "te_at: tensor '%s': index %d belongs to another context",
               t->name, i);
      return NULL;
    }
    if (!ir_is_intlike(idx[i]->dtype) || ir_is_bool(idx[i]->dtype) || idx[i]->dtype.lanes != 1) {
      char b[32];
      ir_error(ctx, TE_ERR_TYPE, "te_at: tensor '%s': index %d must be an integer (got %s)",
               t->name, i, te_dtype_str(idx[i]->dtype, b, sizeof b));
      return NULL;
    }
    cast[i] = ir_cast(TE_I64, idx[i]);
  }
  return ir_access(t, n, cast);
}

/* ---------------------------------------------------------------- accessors */

const char *te_tensor_name(const te_tensor *t) { return t ? t->name : NULL; }
te_dtype te_tensor_dtype(const te_tensor *t) {
  te_dtype none = {0, 0, 0};
  return t ? t->dtype : none;
}
int te_tensor_ndim(const te_tensor *t) { return t ? t->ndim : -1; }
te_expr *te_tensor_dim(const te_tensor *t, int i) {
  if (!t)
    return NULL;
  if (i < 0 || i >= t->ndim) {
    ir_error(t->ctx, TE_ERR_INVALID_ARG, "te_tensor_dim: tensor '%s' has rank %d (asked for %d)",
             t->name, t->ndim, i);
    return NULL;
  }
  return t->shape[i];
}
