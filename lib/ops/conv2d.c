/* conv2d.c — 2-D convolutions: NCHW with OIHW kernels, NHWC with HWIO kernels, and depthwise
 * NCHW (channel multiplier 1), each with stride, zero padding and dilation.
 *
 * Stages: "<name>_pad" (pad.c; only when padding) and the output, a sum over the reduce axes
 * (rc, ry, rx for NCHW; ry, rx, rc for NHWC; ry, rx for depthwise). Output extents follow the
 * usual formula (op_window_extent) and work with symbolic input sizes.
 */
#include <stdio.h>

#include "ops_internal.h"

/* The parameters with defaults applied (0 stride/dilation -> 1), or false on a negative one. */
static bool conv_params(te_ctx *ctx, const char *fn, const te_conv2d_params *in,
                        te_conv2d_params *out) {
  te_conv2d_params p = in ? *in : (te_conv2d_params){0, 0, 0, 0, 0, 0};
  const int64_t v[6] = {p.stride_h, p.stride_w, p.pad_h, p.pad_w, p.dilation_h, p.dilation_w};
  static const char *const names[6] = {"stride_h", "stride_w",   "pad_h",
                                       "pad_w",    "dilation_h", "dilation_w"};
  for (int i = 0; i < 6; i++) {
    if (v[i] < 0 || v[i] > (INT64_C(1) << 31)) {
      ir_error(ctx, TE_ERR_INVALID_ARG, "%s: %s must be >= 0 (0 means the default) (got %lld)", fn,
               names[i], (long long)v[i]);
      return false;
    }
  }
  if (!p.stride_h)
    p.stride_h = 1;
  if (!p.stride_w)
    p.stride_w = 1;
  if (!p.dilation_h)
    p.dilation_h = 1;
  if (!p.dilation_w)
    p.dilation_w = 1;
  *out = p;
  return true;
}

/* Checks shared by the three convolutions; acc: the _acc forms' accumulator (accum.c). */
static bool conv_begin(te_ctx *ctx, const char *fn, te_tensor *data, te_tensor *kernel,
                       const te_conv2d_params *in, const te_dtype *acc, te_conv2d_params *p,
                       const char **name, const char *def) {
  return op_begin(ctx, fn, name, def, 2, (te_tensor *const[]){data, kernel},
                  (const char *const[]){"data", "kernel"}) &&
         op_check_rank(ctx, fn, "data", data, 4) && op_check_rank(ctx, fn, "kernel", kernel, 4) &&
         op_check_inputs(ctx, fn, data, kernel, acc) && conv_params(ctx, fn, in, p);
}

static bool check_channels(te_ctx *ctx, const char *fn, te_expr *kc, te_expr *dc) {
  if (op_same_extent(kc, dc))
    return true;
  char a[64], b[64];
  ir_error(ctx, TE_ERR_SHAPE, "%s: kernel channels %s do not match input channels %s", fn,
           op_extent_str(kc, a, sizeof a), op_extent_str(dc, b, sizeof b));
  return false;
}

/* y*stride + r*dilation */
static te_expr *window_index(te_ctx *ctx, te_expr *y, int64_t stride, te_expr *r, int64_t dil) {
  return op_iadd(ctx, op_imulc(ctx, y, stride), op_imulc(ctx, r, dil));
}

static te_expr *zero(te_ctx *ctx, te_dtype t) { return te_const(ctx, t, 0.0); }

static te_tensor *conv_impl_conv2d_nchw(te_ctx *ctx, const char *fn, te_tensor *data,
                                        te_tensor *kernel, const te_conv2d_params *params,
                                        const te_dtype *acc, const char *name) {
  te_conv2d_params p;
  if (!conv_begin(ctx, fn, data, kernel, params, acc, &p, &name, "conv2d"))
    return NULL;
  te_expr **ds = data->shape, **ks = kernel->shape;
  if (!check_channels(ctx, fn, ks[1], ds[1]))
    return NULL;
  te_expr *oh =
      op_window_extent(ctx, fn, "height", ds[2], p.pad_h, ks[2], p.stride_h, p.dilation_h);
  te_expr *ow = op_window_extent(ctx, fn, "width", ds[3], p.pad_w, ks[3], p.stride_w, p.dilation_w);
  if (!oh || !ow)
    return NULL;
  if (acc && !op_check_acc_range(ctx, fn, data, kernel, *acc,
                                 op_imul(ctx, ds[1], op_imul(ctx, ks[2], ks[3]))))
    return NULL;
  te_tensor *pd =
      op_pad(ctx, name, data, (const int64_t[]){0, 0, p.pad_h, p.pad_w}, zero(ctx, data->dtype));
  te_expr *n = te_var(ctx, "n"), *o = te_var(ctx, "o"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), ds[1]);
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), ks[2]);
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), ks[3]);
  te_expr *in = TE_AT(pd, n, rc, window_index(ctx, y, p.stride_h, ry, p.dilation_h),
                      window_index(ctx, x, p.stride_w, rx, p.dilation_w));
  te_expr *body =
      te_sum(op_product(in, TE_AT(kernel, o, rc, ry, rx), acc), 3, TE_EXPRS(rc, ry, rx));
  return te_compute(ctx, name, 4, TE_EXPRS(ds[0], ks[0], oh, ow), TE_EXPRS(n, o, y, x), body);
}

static te_tensor *conv_impl_conv2d_nhwc(te_ctx *ctx, const char *fn, te_tensor *data,
                                        te_tensor *kernel, const te_conv2d_params *params,
                                        const te_dtype *acc, const char *name) {
  te_conv2d_params p;
  if (!conv_begin(ctx, fn, data, kernel, params, acc, &p, &name, "conv2d"))
    return NULL;
  te_expr **ds = data->shape, **ks = kernel->shape;
  if (!check_channels(ctx, fn, ks[2], ds[3]))
    return NULL;
  te_expr *oh =
      op_window_extent(ctx, fn, "height", ds[1], p.pad_h, ks[0], p.stride_h, p.dilation_h);
  te_expr *ow = op_window_extent(ctx, fn, "width", ds[2], p.pad_w, ks[1], p.stride_w, p.dilation_w);
  if (!oh || !ow)
    return NULL;
  if (acc && !op_check_acc_range(ctx, fn, data, kernel, *acc,
                                 op_imul(ctx, ks[0], op_imul(ctx, ks[1], ds[3]))))
    return NULL;
  te_tensor *pd =
      op_pad(ctx, name, data, (const int64_t[]){0, p.pad_h, p.pad_w, 0}, zero(ctx, data->dtype));
  te_expr *n = te_var(ctx, "n"), *y = te_var(ctx, "y"), *x = te_var(ctx, "x"),
          *o = te_var(ctx, "o");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), ks[0]);
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), ks[1]);
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), ds[3]);
  te_expr *in = TE_AT(pd, n, window_index(ctx, y, p.stride_h, ry, p.dilation_h),
                      window_index(ctx, x, p.stride_w, rx, p.dilation_w), rc);
  te_expr *body =
      te_sum(op_product(in, TE_AT(kernel, ry, rx, rc, o), acc), 3, TE_EXPRS(ry, rx, rc));
  return te_compute(ctx, name, 4, TE_EXPRS(ds[0], oh, ow, ks[3]), TE_EXPRS(n, y, x, o), body);
}

static te_tensor *conv_impl_depthwise_conv2d_nchw(te_ctx *ctx, const char *fn, te_tensor *data,
                                                  te_tensor *kernel, const te_conv2d_params *params,
                                                  const te_dtype *acc, const char *name) {
  te_conv2d_params p;
  if (!conv_begin(ctx, fn, data, kernel, params, acc, &p, &name, "depthwise_conv2d"))
    return NULL;
  te_expr **ds = data->shape, **ks = kernel->shape;
  if (!check_channels(ctx, fn, ks[0], ds[1]))
    return NULL;
  if (!op_is_const(ks[1], 1)) {
    char a[64];
    ir_error(ctx, TE_ERR_SHAPE, "%s: kernel dimension 1 (channel multiplier) must be 1 (got %s)",
             fn, op_extent_str(ks[1], a, sizeof a));
    return NULL;
  }
  te_expr *oh =
      op_window_extent(ctx, fn, "height", ds[2], p.pad_h, ks[2], p.stride_h, p.dilation_h);
  te_expr *ow = op_window_extent(ctx, fn, "width", ds[3], p.pad_w, ks[3], p.stride_w, p.dilation_w);
  if (!oh || !ow)
    return NULL;
  if (acc && !op_check_acc_range(ctx, fn, data, kernel, *acc, op_imul(ctx, ks[2], ks[3])))
    return NULL;
  te_tensor *pd =
      op_pad(ctx, name, data, (const int64_t[]){0, 0, p.pad_h, p.pad_w}, zero(ctx, data->dtype));
  te_expr *n = te_var(ctx, "n"), *c = te_var(ctx, "c"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), ks[2]);
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), ks[3]);
  te_expr *in = TE_AT(pd, n, c, window_index(ctx, y, p.stride_h, ry, p.dilation_h),
                      window_index(ctx, x, p.stride_w, rx, p.dilation_w));
  te_expr *body =
      te_sum(op_product(in, TE_AT(kernel, c, te_int(ctx, 0), ry, rx), acc), 2, TE_EXPRS(ry, rx));
  return te_compute(ctx, name, 4, TE_EXPRS(ds[0], ds[1], oh, ow), TE_EXPRS(n, c, y, x), body);
}

te_tensor *te_op_conv2d_nchw(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                             const te_conv2d_params *params, const char *name) {
  return conv_impl_conv2d_nchw(ctx, "te_op_conv2d_nchw", data, kernel, params, NULL, name);
}

te_tensor *te_op_conv2d_nchw_acc(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                                 const te_conv2d_params *params, te_dtype acc, const char *name) {
  return conv_impl_conv2d_nchw(ctx, "te_op_conv2d_nchw_acc", data, kernel, params, &acc, name);
}

te_tensor *te_op_conv2d_nhwc(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                             const te_conv2d_params *params, const char *name) {
  return conv_impl_conv2d_nhwc(ctx, "te_op_conv2d_nhwc", data, kernel, params, NULL, name);
}

te_tensor *te_op_conv2d_nhwc_acc(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                                 const te_conv2d_params *params, te_dtype acc, const char *name) {
  return conv_impl_conv2d_nhwc(ctx, "te_op_conv2d_nhwc_acc", data, kernel, params, &acc, name);
}

te_tensor *te_op_depthwise_conv2d_nchw(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                                       const te_conv2d_params *params, const char *name) {
  return conv_impl_depthwise_conv2d_nchw(ctx, "te_op_depthwise_conv2d_nchw", data, kernel, params,
                                         NULL, name);
}

te_tensor *te_op_depthwise_conv2d_nchw_acc(te_ctx *ctx, te_tensor *data, te_tensor *kernel,
                                           const te_conv2d_params *params, te_dtype acc,
                                           const char *name) {
  return conv_impl_depthwise_conv2d_nchw(ctx, "te_op_depthwise_conv2d_nchw_acc", data, kernel,
                                         params, &acc, name);
}
