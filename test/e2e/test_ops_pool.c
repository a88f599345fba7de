/* test_ops_pool.c — te_op_max_pool2d and te_op_avg_pool2d (NCHW) against plain C: odd shapes,
 * windows with and without padding, strides that do not divide, a scaled-down ResNet stem pool
 * (3x3/2, pad 1), integer max pooling (padding must never win), each under the schedules of
 * test_ops_util.h (the pad stage inlined and computed at a row of its consumer).
 */
#include "test_ops_util.h"

TestSuite(ops_pool, .init = tt_setup, .fini = tt_teardown);

typedef struct pool_case {
  int64_t n, c, h, w;
  te_pool2d_params p; /* stride >= 1 */
} pool_case;

static int64_t out_extent(int64_t in, int64_t pad, int64_t k, int64_t s) {
  return (in + 2 * pad - k) / s + 1;
}

static void ref_pool(const tt_buf *d, tt_buf *out, const pool_case *pc, bool is_max) {
  const te_pool2d_params *p = &pc->p;
  int64_t oh = out_extent(pc->h, p->pad_h, p->kernel_h, p->stride_h);
  int64_t ow = out_extent(pc->w, p->pad_w, p->kernel_w, p->stride_w);
  for (int64_t nc = 0; nc < pc->n * pc->c; nc++)
    for (int64_t y = 0; y < oh; y++)
      for (int64_t x = 0; x < ow; x++) {
        double acc = is_max ? -1e300 : 0;
        for (int64_t ry = 0; ry < p->kernel_h; ry++)
          for (int64_t rx = 0; rx < p->kernel_w; rx++) {
            int64_t iy = y * p->stride_h + ry - p->pad_h, ix = x * p->stride_w + rx - p->pad_w;
            bool in = iy >= 0 && iy < pc->h && ix >= 0 && ix < pc->w;
            double v = in ? tt_get(d, (nc * pc->h + iy) * pc->w + ix) : 0;
            if (is_max) {
              if (in && v > acc)
                acc = v;
            } else {
              acc += v;
            }
          }
        if (!is_max)
          acc /= (double)(p->kernel_h * p->kernel_w);
        tt_set(out, (nc * oh + y) * ow + x, acc);
      }
}

static void check_pool(te_dtype t, const pool_case *pc, bool is_max) {
  const te_pool2d_params *p = &pc->p;
  int64_t oh = out_extent(pc->h, p->pad_h, p->kernel_h, p->stride_h);
  int64_t ow = out_extent(pc->w, p->pad_w, p->kernel_w, p->stride_w);
  te_tensor *D = tt_placeholder("data", t, 4, TT_SHAPE(pc->n, pc->c, pc->h, pc->w));
  te_tensor *out = TT_NN(is_max ? te_op_max_pool2d(tt_ctx, D, p, "pool")
                                : te_op_avg_pool2d(tt_ctx, D, p, "pool"));
  tt_buf *d = TT_ALLOC(t, pc->n, pc->c, pc->h, pc->w);
  tt_buf *got = TT_ALLOC(t, pc->n, pc->c, oh, ow), *ref = TT_ALLOC(t, pc->n, pc->c, oh, ow);
  tt_fill(d, 71);
  ref_pool(d, ref, pc, is_max);
  bool padded = p->pad_h > 0 || p->pad_w > 0;
  /* max: the output is the window reduction; avg: the output divides "<name>_sum". */
  ops_plan plan = {.nreduce = is_max ? 2 : 0};
  int ni = 0;
  if (padded) {
    plan.inline_stages[ni++] = "pad";
    plan.at[0] = (ops_at){"pad", is_max ? NULL : "sum", 2};
  }
  if (!is_max)
    plan.at[padded ? 1 : 0] = (ops_at){"sum", NULL, 1};
  char what[128];
  snprintf(what, sizeof what, "%s_pool %lldx%lldx%lldx%lld, k %lldx%lld s %lldx%lld p %lldx%lld",
           is_max ? "max" : "avg", (long long)pc->n, (long long)pc->c, (long long)pc->h,
           (long long)pc->w, (long long)p->kernel_h, (long long)p->kernel_w, (long long)p->stride_h,
           (long long)p->stride_w, (long long)p->pad_h, (long long)p->pad_w);
  ops_check(what, out, &plan, 2, TT_TENSORS(D, out), TT_BUFS(d, got), got, ref,
            p->kernel_h * p->kernel_w);
}

static const pool_case odd = {1, 3, 13, 11, {3, 3, 2, 2, 1, 1}};
static const pool_case uneven = {2, 2, 9, 10, {2, 3, 2, 3, 1, 2}};
static const pool_case nopad = {1, 4, 7, 9, {2, 2, 2, 2, 0, 0}};
/* ResNet-50 stem pool 3x3/2 pad 1 on 112x112x64, scaled to 28x28x8. */
static const pool_case stem = {1, 8, 28, 28, {3, 3, 2, 2, 1, 1}};

Test(ops_pool, max_f32) {
  check_pool(TE_F32, &odd, true);
  check_pool(TE_F32, &uneven, true);
  check_pool(TE_F32, &nopad, true);
  check_pool(TE_F32, &stem, true);
}

Test(ops_pool, avg_count_include_pad) {
  check_pool(TE_F32, &odd, false);
  check_pool(TE_F64, &uneven, false);
  check_pool(TE_F32, &nopad, false);
  check_pool(TE_F32, &stem, false);
}

/* Integer max pooling: padding holds INT_MIN, so all-negative windows at the border stay
   negative; the reference skips padding. */
Test(ops_pool, max_i32_negative_border) {
  pool_case pc = {1, 2, 6, 7, {3, 2, 1, 2, 2, 1}};
  te_tensor *D = tt_placeholder("data", TE_I32, 4, TT_SHAPE(1, 2, 6, 7));
  te_tensor *out = TT_NN(te_op_max_pool2d(tt_ctx, D, &pc.p, "pool"));
  int64_t oh = out_extent(6, 2, 3, 1), ow = out_extent(7, 1, 2, 2);
  tt_buf *d = TT_ALLOC(TE_I32, 1, 2, 6, 7);
  tt_buf *got = TT_ALLOC(TE_I32, 1, 2, oh, ow), *ref = TT_ALLOC(TE_I32, 1, 2, oh, ow);
  tt_fill_range(d, 72, -9, -1);
  ref_pool(d, ref, &pc, true);
  ops_plan plan = {.nreduce = 2, .inline_stages = {"pad"}, .at = {{"pad", NULL, 2}}};
  int runs =
      ops_check("max_pool i32", out, &plan, 2, TT_TENSORS(D, out), TT_BUFS(d, got), got, ref, 1);
  cr_assert_eq(runs, 4);
}

/* A zero stride means 1, and the default names. */
Test(ops_pool, zero_stride_and_default_names) {
  te_tensor *D = tt_placeholder("data", TE_F32, 4, TT_SHAPE(1, 1, 5, 5));
  te_pool2d_params p = {2, 2, 0, 0, 0, 0};
  te_tensor *mx = TT_NN(te_op_max_pool2d(tt_ctx, D, &p, NULL));
  te_tensor *av = TT_NN(te_op_avg_pool2d(tt_ctx, D, &p, NULL));
  cr_assert_str_eq(te_tensor_name(mx), "max_pool2d");
  cr_assert_str_eq(te_tensor_name(av), "avg_pool2d");
  cr_assert_str_eq(te_tensor_name(TT_NN(te_op_stage(av, "sum"))), "avg_pool2d_sum");
  char *t = te_expr_text(te_tensor_dim(mx, 3));
  cr_assert_str_eq(t, "4");
  te_free(t);
  check_pool(TE_F32, &(pool_case){1, 1, 5, 5, {2, 2, 1, 1, 0, 0}}, true);
}
