/* pad.c — the sliding-window arithmetic and the padding stage shared by convolution and
 * pooling.
 *
 * Padding is its own injective stage ("<name>_pad") rather than a condition inside the
 * reduction, so a schedule can inline it (te_compute_inline), compute it where it is used
 * (te_compute_at) or materialize it (the default), as TVM's topi does. Its body is
 *   select(inside, data[clamp(idx - pad)], value)
 * with the indices clamped into data's bounds: te may evaluate both sides of a select, and the
 * clamped read keeps every load in bounds whatever the schedule.
 */
#include <stdio.h>

#include "ops_internal.h"

te_expr *op_window_extent(te_ctx *ctx, const char *fn, const char *what, te_expr *in, int64_t pad,
                          te_expr *k, int64_t stride, int64_t dil) {
  te_expr *span = op_iaddc(ctx, op_imulc(ctx, op_iaddc(ctx, k, -1), dil), 1);
  te_expr *num = op_isub(ctx, op_iaddc(ctx, in, 2 * pad), span);
  te_expr *out = op_iaddc(ctx, op_ifloordiv(ctx, num, te_int(ctx, stride)), 1);
  int64_t v;
  if (out && ir_is_const_int(out, &v) && v < 1) {
    char a[64], b[64];
    ir_error(ctx, TE_ERR_SHAPE,
             "%s: output %s would be %lld (< 1): input extent %s with padding %lld is smaller "
             "than the window %s (dilation %lld)",
             fn, what, (long long)v, op_extent_str(in, a, sizeof a), (long long)pad,
             op_extent_str(span, b, sizeof b), (long long)dil);
    return NULL;
  }
  return out;
}

/* lo <= v - p < lo + extent, as a bool expression (NULL-safe through te_and). */
static te_expr *inside(te_ctx *ctx, te_expr *v, int64_t p, te_expr *extent) {
  te_expr *lo = te_ge(v, te_int(ctx, p));
  te_expr *hi = te_lt(v, op_iaddc(ctx, extent, p));
  return te_and(lo, hi);
}

/* max(min(v - p, extent - 1), 0) */
static te_expr *clamped(te_ctx *ctx, te_expr *v, int64_t p, te_expr *extent) {
  te_expr *i = te_sub(v, te_int(ctx, p));
  return te_max(te_min(i, op_iaddc(ctx, extent, -1)), te_int(ctx, 0));
}

te_tensor *op_pad(te_ctx *ctx, const char *name, te_tensor *data, const int64_t pad[],
                  te_expr *value) {
  int nd = data->ndim;
  bool any = false;
  for (int d = 0; d < nd; d++)
    any |= pad[d] > 0;
  if (!any)
    return data;
  static const char *const names[TE_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
  te_expr *v[TE_MAX_DIMS], *idx[TE_MAX_DIMS], *shape[TE_MAX_DIMS];
  op_vars(ctx, nd, names, v);
  te_expr *cond = NULL;
  for (int d = 0; d < nd; d++) {
    te_expr *ext = data->shape[d];
    shape[d] = op_iaddc(ctx, ext, 2 * pad[d]);
    if (pad[d] == 0) {
      idx[d] = v[d];
      continue;
    }
    idx[d] = clamped(ctx, v[d], pad[d], ext);
    te_expr *c = inside(ctx, v[d], pad[d], ext);
    cond = cond ? te_and(cond, c) : c;
  }
  te_expr *body = te_select(cond, te_at(data, nd, idx), value);
  char buf[OP_BUF];
  return te_compute(ctx, op_stage_name(buf, name, "pad"), nd, shape, v, body);
}
