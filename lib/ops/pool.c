/* pool.c — 2-D max and average pooling, NCHW.
 *
 * Max pooling pads with the dtype's lowest value so that padding never wins; average pooling
 * pads with zero and divides by the full window size (count_include_pad), so its output is the
 * window sum (stage "<name>_sum") times a constant. Padding must be smaller than the window:
 * every window then holds at least one real element.
 */
#include <float.h>
#include <stdio.h>

#include "ops_internal.h"

static bool pool_params(te_ctx *ctx, const char *fn, const te_pool2d_params *in,
                        te_pool2d_params *out) {
  if (!in) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: params is NULL (the window size is required)", fn);
    return false;
  }
  te_pool2d_params p = *in;
  const int64_t lim = INT64_C(1) << 31;
  if (p.kernel_h < 1 || p.kernel_w < 1 || p.kernel_h > lim || p.kernel_w > lim) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: kernel_h and kernel_w must be >= 1 (got %lld x %lld)",
             fn, (long long)p.kernel_h, (long long)p.kernel_w);
    return false;
  }
  if (p.stride_h < 0 || p.stride_w < 0 || p.stride_h > lim || p.stride_w > lim) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "%s: stride_h and stride_w must be >= 0 (0 means 1) (got %lld, %lld)", fn,
             (long long)p.stride_h, (long long)p.stride_w);
    return false;
  }
  if (p.pad_h < 0 || p.pad_w < 0 || p.pad_h >= p.kernel_h || p.pad_w >= p.kernel_w) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "%s: padding must be >= 0 and smaller than the window (got pad %lld x %lld, window "
             "%lld x %lld)",
             fn, (long long)p.pad_h, (long long)p.pad_w, (long long)p.kernel_h,
             (long long)p.kernel_w);
    return false;
  }
  if (!p.stride_h)
    p.stride_h = 1;
  if (!p.stride_w)
    p.stride_w = 1;
  *out = p;
  return true;
}

/* The dtype's lowest value (finite for floats). */
static te_expr *lowest(te_ctx *ctx, te_dtype t) {
  if (ir_is_float(t))
    return te_const(ctx, t, t.bits == 32 ? -FLT_MAX : -DBL_MAX);
  if (ir_is_uint(t))
    return te_const(ctx, t, 0.0);
  return te_const(ctx, t, t.bits >= 64 ? (double)INT64_MIN : -(double)(INT64_C(1) << (t.bits - 1)));
}

typedef enum { POOL_MAX, POOL_SUM } pool_kind;

/* The padded window reduction [N, C, OH, OW] called out_name. */
static te_tensor *pool_reduce(te_ctx *ctx, const char *fn, te_tensor *data,
                              const te_pool2d_params *p, pool_kind kind, const char *name,
                              const char *out_name) {
  te_expr **ds = data->shape;
  te_expr *kh = te_int(ctx, p->kernel_h), *kw = te_int(ctx, p->kernel_w);
  te_expr *oh = op_window_extent(ctx, fn, "height", ds[2], p->pad_h, kh, p->stride_h, 1);
  te_expr *ow = op_window_extent(ctx, fn, "width", ds[3], p->pad_w, kw, p->stride_w, 1);
  if (!oh || !ow)
    return NULL;
  te_expr *fill = kind == POOL_MAX ? lowest(ctx, data->dtype) : te_const(ctx, data->dtype, 0.0);
  te_tensor *pd = op_pad(ctx, name, data, (const int64_t[]){0, 0, p->pad_h, p->pad_w}, fill);
  te_expr *n = te_var(ctx, "n"), *c = te_var(ctx, "c"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), kh);
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), kw);
  te_expr *in = TE_AT(pd, n, c, op_iadd(ctx, op_imulc(ctx, y, p->stride_h), ry),
                      op_iadd(ctx, op_imulc(ctx, x, p->stride_w), rx));
  te_expr *axes[2] = {ry, rx};
  te_expr *body = kind == POOL_MAX ? te_max_r(in, 2, axes) : te_sum(in, 2, axes);
  return te_compute(ctx, out_name, 4, TE_EXPRS(ds[0], ds[1], oh, ow), TE_EXPRS(n, c, y, x), body);
}

te_tensor *te_op_max_pool2d(te_ctx *ctx, te_tensor *data, const te_pool2d_params *params,
                            const char *name) {
  const char *fn = "te_op_max_pool2d";
  te_pool2d_params p;
  if (!op_begin(ctx, fn, &name, "max_pool2d", 1, &data, (const char *const[]){"data"}) ||
      !op_check_rank(ctx, fn, "data", data, 4) || !op_check_number(ctx, fn, data) ||
      !pool_params(ctx, fn, params, &p))
    return NULL;
  return pool_reduce(ctx, fn, data, &p, POOL_MAX, name, name);
}

te_tensor *te_op_avg_pool2d(te_ctx *ctx, te_tensor *data, const te_pool2d_params *params,
                            const char *name) {
  const char *fn = "te_op_avg_pool2d";
  te_pool2d_params p;
  if (!op_begin(ctx, fn, &name, "avg_pool2d", 1, &data, (const char *const[]){"data"}) ||
      !op_check_rank(ctx, fn, "data", data, 4) || !op_check_float(ctx, fn, data) ||
      !pool_params(ctx, fn, params, &p))
    return NULL;
  char buf[OP_BUF];
  te_tensor *sum = pool_reduce(ctx, fn, data, &p, POOL_SUM, name, op_stage_name(buf, name, "sum"));
  if (!sum)
    return NULL;
  te_expr *n = te_var(ctx, "n"), *c = te_var(ctx, "c"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *count = te_const(ctx, data->dtype, (double)(p.kernel_h * p.kernel_w));
  te_expr *body = te_div(TE_AT(sum, n, c, y, x), count);
  return te_compute(ctx, name, 4, sum->shape, TE_EXPRS(n, c, y, x), body);
}
