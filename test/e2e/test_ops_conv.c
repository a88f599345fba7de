/* test_ops_conv.c — te_op_conv2d_nchw, te_op_conv2d_nhwc and te_op_depthwise_conv2d_nchw
 * against plain C: odd shapes with stride, padding and dilation together, scaled-down ResNet
 * layer shapes (7x7/2 stem, 3x3 body, 1x1/2 projection), a symbolic-size input, and each under
 * the default, tiled, pad-inlined and pad-computed-at schedules (test_ops_util.h).
 */
#include "test_ops_util.h"

TestSuite(ops_conv, .init = tt_setup, .fini = tt_teardown);

typedef enum { NCHW, NHWC, DEPTHWISE } layout;

typedef struct conv_case {
  int64_t n, c, h, w, o, kh, kw;
  te_conv2d_params p; /* stride and dilation already >= 1 */
} conv_case;

static int64_t out_extent(int64_t in, int64_t pad, int64_t k, int64_t s, int64_t d) {
  return (in + 2 * pad - d * (k - 1) - 1) / s + 1;
}

/* The input value at (n, c, y, x) of the unpadded image, 0 outside. */
static double in_at(const tt_buf *d, layout l, const conv_case *cc, int64_t n, int64_t c, int64_t y,
                    int64_t x) {
  if (y < 0 || y >= cc->h || x < 0 || x >= cc->w)
    return 0;
  if (l == NHWC)
    return tt_get(d, ((n * cc->h + y) * cc->w + x) * cc->c + c);
  return tt_get(d, ((n * cc->c + c) * cc->h + y) * cc->w + x);
}

static double k_at(const tt_buf *k, layout l, const conv_case *cc, int64_t o, int64_t c, int64_t ry,
                   int64_t rx) {
  if (l == NHWC)
    return tt_get(k, ((ry * cc->kw + rx) * cc->c + c) * cc->o + o);
  if (l == DEPTHWISE)
    return tt_get(k, (o * cc->kh + ry) * cc->kw + rx);
  return tt_get(k, ((o * cc->c + c) * cc->kh + ry) * cc->kw + rx);
}

static void ref_conv(const tt_buf *d, const tt_buf *k, tt_buf *out, layout l, const conv_case *cc) {
  const te_conv2d_params *p = &cc->p;
  int64_t oh = out_extent(cc->h, p->pad_h, cc->kh, p->stride_h, p->dilation_h);
  int64_t ow = out_extent(cc->w, p->pad_w, cc->kw, p->stride_w, p->dilation_w);
  int64_t oc = l == DEPTHWISE ? cc->c : cc->o;
  for (int64_t n = 0; n < cc->n; n++)
    for (int64_t o = 0; o < oc; o++)
      for (int64_t y = 0; y < oh; y++)
        for (int64_t x = 0; x < ow; x++) {
          double s = 0;
          for (int64_t c = 0; c < (l == DEPTHWISE ? 1 : cc->c); c++)
            for (int64_t ry = 0; ry < cc->kh; ry++)
              for (int64_t rx = 0; rx < cc->kw; rx++) {
                int64_t ch = l == DEPTHWISE ? o : c;
                s += in_at(d, l, cc, n, ch, y * p->stride_h + ry * p->dilation_h - p->pad_h,
                           x * p->stride_w + rx * p->dilation_w - p->pad_w) *
                     k_at(k, l, cc, o, c, ry, rx);
              }
          int64_t flat =
              l == NHWC ? ((n * oh + y) * ow + x) * oc + o : ((n * oc + o) * oh + y) * ow + x;
          tt_set(out, flat, s);
        }
}

static void check_conv(layout l, const conv_case *cc) {
  const te_conv2d_params *p = &cc->p;
  int64_t oh = out_extent(cc->h, p->pad_h, cc->kh, p->stride_h, p->dilation_h);
  int64_t ow = out_extent(cc->w, p->pad_w, cc->kw, p->stride_w, p->dilation_w);
  int64_t ds[4], ks[4], os[4];
  te_tensor *out;
  int64_t oc = l == DEPTHWISE ? cc->c : cc->o;
  if (l == NHWC) {
    memcpy(ds, (int64_t[]){cc->n, cc->h, cc->w, cc->c}, sizeof ds);
    memcpy(ks, (int64_t[]){cc->kh, cc->kw, cc->c, cc->o}, sizeof ks);
    memcpy(os, (int64_t[]){cc->n, oh, ow, oc}, sizeof os);
  } else {
    memcpy(ds, (int64_t[]){cc->n, cc->c, cc->h, cc->w}, sizeof ds);
    if (l == DEPTHWISE)
      memcpy(ks, (int64_t[]){cc->c, 1, cc->kh, cc->kw}, sizeof ks);
    else
      memcpy(ks, (int64_t[]){cc->o, cc->c, cc->kh, cc->kw}, sizeof ks);
    memcpy(os, (int64_t[]){cc->n, oc, oh, ow}, sizeof os);
  }
  te_tensor *D = tt_placeholder("data", TE_F32, 4, ds),
            *K = tt_placeholder("kernel", TE_F32, 4, ks);
  if (l == NCHW)
    out = te_op_conv2d_nchw(tt_ctx, D, K, p, "conv");
  else if (l == NHWC)
    out = te_op_conv2d_nhwc(tt_ctx, D, K, p, "conv");
  else
    out = te_op_depthwise_conv2d_nchw(tt_ctx, D, K, p, "conv");
  TT_NN(out);
  for (int i = 0; i < 4; i++) {
    int64_t v = -1;
    te_expr *e = te_tensor_dim(out, i);
    char *txt = te_expr_text(e);
    v = txt ? strtoll(txt, NULL, 10) : -1;
    te_free(txt);
    cr_assert_eq(v, os[i], "output dim %d: %lld, expected %lld", i, (long long)v, (long long)os[i]);
  }
  tt_buf *d = tt_alloc(TE_F32, 4, ds), *k = tt_alloc(TE_F32, 4, ks);
  tt_buf *got = tt_alloc(TE_F32, 4, os), *ref = tt_alloc(TE_F32, 4, os);
  ops_fill(2, TT_BUFS(d, k), 51);
  ref_conv(d, k, ref, l, cc);
  bool padded = p->pad_h > 0 || p->pad_w > 0;
  /* compute_at of the pad stage at the output's row axis (NCHW: y is axis 2; NHWC: axis 1). */
  ops_plan plan = {.nreduce = l == DEPTHWISE ? 2 : 3};
  if (padded) {
    plan.inline_stages[0] = "pad";
    plan.at[0] = (ops_at){"pad", NULL, l == NHWC ? 1 : 2};
  }
  char what[160];
  snprintf(what, sizeof what, "%s %lldx%lldx%lldx%lld -> %lld, k %lldx%lld, s %lld p %lld d %lld",
           l == NCHW   ? "conv2d_nchw"
           : l == NHWC ? "conv2d_nhwc"
                       : "depthwise",
           (long long)cc->n, (long long)cc->c, (long long)cc->h, (long long)cc->w, (long long)oc,
           (long long)cc->kh, (long long)cc->kw, (long long)p->stride_h, (long long)p->pad_h,
           (long long)p->dilation_h);
  int64_t red = (l == DEPTHWISE ? 1 : cc->c) * cc->kh * cc->kw;
  int runs =
      ops_check(what, out, &plan, 3, TT_TENSORS(D, K, out), TT_BUFS(d, k, got), got, ref, red);
  cr_assert_eq(runs, padded ? 4 : 2);
}

/* The odd case of the brief: 1x3x13x11, 4 output channels, 3x3, stride 2, pad 1, dilation 2. */
static const conv_case odd = {1, 3, 13, 11, 4, 3, 3, {2, 2, 1, 1, 2, 2}};
/* Uneven strides, paddings and dilations per axis. */
static const conv_case uneven = {2, 5, 9, 12, 3, 3, 2, {1, 2, 2, 0, 1, 3}};
/* ResNet-50 layers, channels and image scaled down by 8 and 4. */
static const conv_case stem = {1, 3, 23, 23, 8, 7, 7, {2, 2, 3, 3, 1, 1}};  /* 7x7/2, pad 3 */
static const conv_case body = {1, 8, 14, 14, 8, 3, 3, {1, 1, 1, 1, 1, 1}};  /* 3x3/1, pad 1 */
static const conv_case proj = {1, 8, 14, 14, 16, 1, 1, {2, 2, 0, 0, 1, 1}}; /* 1x1/2 */

Test(ops_conv, nchw_odd_stride_pad_dilation) { check_conv(NCHW, &odd); }
Test(ops_conv, nchw_uneven_params) { check_conv(NCHW, &uneven); }
Test(ops_conv, nchw_resnet_scaled) {
  check_conv(NCHW, &stem);
  check_conv(NCHW, &body);
  check_conv(NCHW, &proj);
}
Test(ops_conv, nhwc_odd_stride_pad_dilation) { check_conv(NHWC, &odd); }
Test(ops_conv, nhwc_uneven_and_resnet_scaled) {
  check_conv(NHWC, &uneven);
  check_conv(NHWC, &body);
  check_conv(NHWC, &proj);
}
Test(ops_conv, depthwise) {
  check_conv(DEPTHWISE, &(conv_case){1, 5, 13, 11, 5, 3, 3, {2, 2, 1, 1, 1, 1}});
  check_conv(DEPTHWISE, &(conv_case){2, 4, 10, 9, 4, 3, 5, {1, 2, 2, 2, 2, 1}});
  /* MobileNet-like 3x3/1 without padding */
  check_conv(DEPTHWISE, &(conv_case){1, 6, 8, 8, 6, 3, 3, {1, 1, 0, 0, 1, 1}});
}

/* A NULL params pointer means stride 1, no padding, dilation 1 (no pad stage). */
Test(ops_conv, default_params_have_no_pad_stage) {
  te_tensor *D = tt_placeholder("data", TE_F32, 4, TT_SHAPE(1, 2, 5, 6));
  te_tensor *K = tt_placeholder("kernel", TE_F32, 4, TT_SHAPE(3, 2, 3, 3));
  te_tensor *out = TT_NN(te_op_conv2d_nchw(tt_ctx, D, K, NULL, NULL));
  cr_assert_str_eq(te_tensor_name(out), "conv2d");
  cr_assert_null(te_op_stage(out, "pad"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "conv2d_pad");
  te_clear_error(tt_ctx);
  check_conv(NCHW, &(conv_case){1, 2, 5, 6, 3, 3, 3, {1, 1, 0, 0, 1, 1}});
}

/* Symbolic H and W: one kernel serves two image sizes. */
Test(ops_conv, symbolic_image_size) {
  te_expr *H = te_var(tt_ctx, "H"), *W = te_var(tt_ctx, "W");
  te_tensor *D = TT_NN(te_placeholder(tt_ctx, "data", TE_F32, 4,
                                      TE_EXPRS(te_int(tt_ctx, 1), te_int(tt_ctx, 3), H, W)));
  te_tensor *K = tt_placeholder("kernel", TE_F32, 4, TT_SHAPE(4, 3, 3, 3));
  te_conv2d_params p = {2, 2, 1, 1, 1, 1};
  te_tensor *out = TT_NN(te_op_conv2d_nchw(tt_ctx, D, K, &p, "conv"));
  ops_plan plan = {.nreduce = 3, .inline_stages = {"pad"}};
  for (int kind = OPS_DEFAULT; kind <= OPS_INLINE; kind++) {
    te_schedule *s = tt_schedule1(out);
    ops_apply(s, out, &plan, kind);
    te_module *mod = tt_build(s, "conv", 3, TT_TENSORS(D, K, out), 0, NULL);
    const int64_t sizes[2][2] = {{9, 7}, {12, 15}};
    for (int c = 0; c < 2; c++) {
      conv_case cc = {1, 3, sizes[c][0], sizes[c][1], 4, 3, 3, p};
      int64_t oh = out_extent(cc.h, 1, 3, 2, 1), ow = out_extent(cc.w, 1, 3, 2, 1);
      tt_note("symbolic conv %lldx%lld, schedule %s", (long long)cc.h, (long long)cc.w,
              ops_sched_name(kind));
      tt_buf *d = TT_ALLOC(TE_F32, 1, 3, cc.h, cc.w), *k = TT_ALLOC(TE_F32, 4, 3, 3, 3);
      tt_buf *got = TT_ALLOC(TE_F32, 1, 4, oh, ow), *ref = TT_ALLOC(TE_F32, 1, 4, oh, ow);
      ops_fill(2, TT_BUFS(d, k), 61 + (uint64_t)c);
      ref_conv(d, k, ref, NCHW, &cc);
      tt_call(mod, "conv", 3, TT_BUFS(d, k, got), 0, NULL);
      tt_assert_close(got, ref, 27);
    }
  }
}
