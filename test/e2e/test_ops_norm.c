/* test_ops_norm.c — te_op_softmax and te_op_layer_norm against plain C: ranks 1 to 3, odd
 * last extents, large inputs that overflow a naive softmax, a symbolic row length, f32 and f64,
 * each under the schedules of test_ops_util.h (the exp stage inlined; the row reductions
 * computed at a row of their consumers).
 */
#include <math.h>

#include "test_ops_util.h"

TestSuite(ops_norm, .init = tt_setup, .fini = tt_teardown);

static void ref_softmax(const tt_buf *x, tt_buf *out, int64_t rows, int64_t d) {
  for (int64_t r = 0; r < rows; r++) {
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < d; k++)
      m = fmax(m, tt_get(x, r * d + k));
    for (int64_t k = 0; k < d; k++)
      s += exp(tt_get(x, r * d + k) - m);
    for (int64_t k = 0; k < d; k++)
      tt_set(out, r * d + k, exp(tt_get(x, r * d + k) - m) / s);
  }
}

static void ref_layer_norm(const tt_buf *x, const tt_buf *g, const tt_buf *b, tt_buf *out,
                           int64_t rows, int64_t d, double eps) {
  for (int64_t r = 0; r < rows; r++) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < d; k++)
      mean += tt_get(x, r * d + k);
    mean /= (double)d;
    for (int64_t k = 0; k < d; k++)
      var += pow(tt_get(x, r * d + k) - mean, 2);
    var /= (double)d;
    for (int64_t k = 0; k < d; k++)
      tt_set(out, r * d + k,
             (tt_get(x, r * d + k) - mean) / sqrt(var + eps) * tt_get(g, k) + tt_get(b, k));
  }
}

static int64_t numel(int nd, const int64_t s[]) {
  int64_t n = 1;
  for (int i = 0; i < nd; i++)
    n *= s[i];
  return n;
}

static void check_softmax(te_dtype t, int nd, const int64_t shape[], double lo, double hi) {
  te_tensor *X = tt_placeholder("x", t, nd, shape);
  te_tensor *out = TT_NN(te_op_softmax(tt_ctx, X, "sm"));
  tt_buf *x = tt_alloc(t, nd, shape), *got = tt_alloc(t, nd, shape), *ref = tt_alloc(t, nd, shape);
  if (lo == hi)
    tt_fill(x, 81);
  else
    tt_fill_range(x, 81, lo, hi);
  int64_t d = shape[nd - 1];
  ref_softmax(x, ref, numel(nd, shape) / d, d);
  /* max at a row of exp (its only reader), sum at a row of the output (rank >= 2); exp stays
     at root: it has two readers (sum and the output) */
  ops_plan p = {.inline_stages = {"exp"}};
  if (nd >= 2) {
    p.at[0] = (ops_at){"max", "exp", nd - 2};
    p.at[1] = (ops_at){"sum", NULL, nd - 2};
  }
  char what[64];
  snprintf(what, sizeof what, "softmax rank %d, last extent %lld", nd, (long long)d);
  ops_check(what, out, &p, 2, TT_TENSORS(X, out), TT_BUFS(x, got), got, ref, d);
}

Test(ops_norm, softmax_shapes) {
  check_softmax(TE_F32, 2, TT_SHAPE(7, 13), 0, 0);
  check_softmax(TE_F32, 3, TT_SHAPE(2, 5, 9), 0, 0);
  check_softmax(TE_F64, 2, TT_SHAPE(3, 31), 0, 0);
  check_softmax(TE_F32, 1, TT_SHAPE(11), 0, 0);
}

/* exp(100) overflows f32's range only in a naive softmax (e^100 > FLT_MAX). */
Test(ops_norm, softmax_is_numerically_stable) {
  check_softmax(TE_F32, 2, TT_SHAPE(4, 10), 90, 100);
}

Test(ops_norm, softmax_stage_names) {
  te_tensor *X = tt_placeholder("x", TE_F32, 2, TT_SHAPE(3, 4));
  te_tensor *out = TT_NN(te_op_softmax(tt_ctx, X, NULL));
  cr_assert_str_eq(te_tensor_name(out), "softmax");
  const char *sfx[3] = {"max", "exp", "sum"};
  const int rank[3] = {1, 2, 1};
  for (int i = 0; i < 3; i++) {
    te_tensor *s = TT_NN(te_op_stage(out, sfx[i]));
    cr_assert_eq(te_tensor_ndim(s), rank[i], "stage %s", sfx[i]);
  }
}

static void check_layer_norm(te_dtype t, int nd, const int64_t shape[], double eps) {
  int64_t d = shape[nd - 1];
  te_tensor *X = tt_placeholder("x", t, nd, shape);
  te_tensor *G = tt_placeholder("gamma", t, 1, &d), *B = tt_placeholder("beta", t, 1, &d);
  te_tensor *out = TT_NN(te_op_layer_norm(tt_ctx, X, G, B, eps, "ln"));
  tt_buf *x = tt_alloc(t, nd, shape), *g = tt_alloc(t, 1, &d), *b = tt_alloc(t, 1, &d);
  tt_buf *got = tt_alloc(t, nd, shape), *ref = tt_alloc(t, nd, shape);
  ops_fill(3, TT_BUFS(x, g, b), 91);
  ref_layer_norm(x, g, b, ref, numel(nd, shape) / d, d, eps);
  /* layer norm has no injective intermediate: OPS_INLINE does not apply; var is computed at
     a row of the output (mean has two readers, var and the output, so it stays at root) */
  ops_plan p = {0};
  if (nd >= 2)
    p.at[0] = (ops_at){"var", NULL, nd - 2};
  char what[64];
  snprintf(what, sizeof what, "layer_norm rank %d, last extent %lld", nd, (long long)d);
  ops_check(what, out, &p, 4, TT_TENSORS(X, G, B, out), TT_BUFS(x, g, b, got), got, ref, d);
}

Test(ops_norm, layer_norm_shapes) {
  check_layer_norm(TE_F32, 2, TT_SHAPE(7, 13), 1e-5);
  check_layer_norm(TE_F32, 3, TT_SHAPE(2, 3, 17), 1e-3);
  check_layer_norm(TE_F64, 2, TT_SHAPE(5, 8), 0);
  check_layer_norm(TE_F32, 1, TT_SHAPE(9), 1e-5);
}

/* A symbolic row length D: the mean divides by D cast to the dtype. */
Test(ops_norm, symbolic_row_length) {
  te_expr *R = te_var(tt_ctx, "R"), *D = te_var(tt_ctx, "D");
  te_tensor *X = TT_NN(te_placeholder(tt_ctx, "x", TE_F32, 2, TE_EXPRS(R, D)));
  te_tensor *G = TT_NN(te_placeholder(tt_ctx, "gamma", TE_F32, 1, TE_EXPRS(D)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "beta", TE_F32, 1, TE_EXPRS(D)));
  te_tensor *ln = TT_NN(te_op_layer_norm(tt_ctx, X, G, B, 1e-5, "ln"));
  te_tensor *sm = TT_NN(te_op_softmax(tt_ctx, X, "sm"));
  te_module *mln = tt_build(tt_schedule1(ln), "ln", 4, TT_TENSORS(X, G, B, ln), 0, NULL);
  te_module *msm = tt_build(tt_schedule1(sm), "sm", 2, TT_TENSORS(X, sm), 0, NULL);
  const int64_t sizes[2][2] = {{3, 10}, {6, 21}};
  for (int c = 0; c < 2; c++) {
    int64_t r = sizes[c][0], d = sizes[c][1];
    tt_note("symbolic %lldx%lld", (long long)r, (long long)d);
    tt_buf *x = TT_ALLOC(TE_F32, r, d), *g = TT_ALLOC(TE_F32, d), *b = TT_ALLOC(TE_F32, d);
    tt_buf *got = TT_ALLOC(TE_F32, r, d), *ref = TT_ALLOC(TE_F32, r, d);
    ops_fill(3, TT_BUFS(x, g, b), 95 + (uint64_t)c);
    ref_layer_norm(x, g, b, ref, r, d, 1e-5);
    tt_call(mln, "ln", 4, TT_BUFS(x, g, b, got), 0, NULL);
    tt_assert_close(got, ref, d);
    ref_softmax(x, ref, r, d);
    tt_poison(got);
    tt_call(msm, "sm", 2, TT_BUFS(x, got), 0, NULL);
    tt_assert_close(got, ref, d);
  }
}
