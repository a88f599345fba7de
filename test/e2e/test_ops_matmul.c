/* test_ops_matmul.c — te_op_matmul and te_op_batch_matmul against plain C, with every
 * combination of transposes, odd shapes, f32/f64/i32, symbolic sizes, and a dense layer
 * (matmul -> bias_add -> relu) whose bias stage is inlined and whose matmul is computed at a row
 * of the relu. Each kernel runs under the schedules of test_ops_util.h.
 */
#include "test_ops_util.h"

TestSuite(ops_matmul, .init = tt_setup, .fini = tt_teardown);

/* ref[b, i, j] = sum_k op(A)[b, i, k] * op(B)[b, k, j] (batch 1 for plain matmul). */
static void ref_matmul(const tt_buf *a, const tt_buf *b, tt_buf *c, int64_t nb, int64_t m,
                       int64_t n, int64_t k, int ta, int tb) {
  for (int64_t q = 0; q < nb; q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t r = 0; r < k; r++) {
          int64_t ia = ta ? r * m + i : i * k + r, ib = tb ? j * k + r : r * n + j;
          s += tt_get(a, q * m * k + ia) * tt_get(b, q * k * n + ib);
        }
        tt_set(c, (q * m + i) * n + j, s);
      }
}

static void check_matmul(te_dtype t, int64_t m, int64_t n, int64_t k, int ta, int tb) {
  int64_t sa[2] = {ta ? k : m, ta ? m : k}, sb[2] = {tb ? n : k, tb ? k : n};
  te_tensor *A = tt_placeholder("A", t, 2, sa), *B = tt_placeholder("B", t, 2, sb);
  te_tensor *C = TT_NN(te_op_matmul(tt_ctx, A, B, ta, tb, "C"));
  cr_assert(te_tensor_ndim(C) == 2 && te_dtype_eq(te_tensor_dtype(C), t));
  tt_buf *a = tt_alloc(t, 2, sa), *b = tt_alloc(t, 2, sb);
  tt_buf *got = TT_ALLOC(t, m, n), *ref = TT_ALLOC(t, m, n);
  ops_fill(2, TT_BUFS(a, b), 11);
  ref_matmul(a, b, ref, 1, m, n, k, ta, tb);
  char what[96];
  snprintf(what, sizeof what, "matmul %lldx%lldx%lld ta=%d tb=%d", (long long)m, (long long)n,
           (long long)k, ta, tb);
  ops_plan p = {.nreduce = 1};
  int runs = ops_check(what, C, &p, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), got, ref, k);
  cr_assert(runs >= 2);
}

Test(ops_matmul, f32_all_transposes_odd_shapes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      check_matmul(TE_F32, 13, 11, 17, ta, tb);
}

Test(ops_matmul, f64_and_i32) {
  check_matmul(TE_F64, 7, 9, 23, 0, 1);
  check_matmul(TE_I32, 5, 8, 6, 1, 0);
}

/* A ResNet-50 classifier scaled down: [1, 64] x [64, 10]. */
Test(ops_matmul, classifier_shape) { check_matmul(TE_F32, 1, 10, 64, 0, 0); }

static void check_batch(int64_t nb, int64_t m, int64_t n, int64_t k, int ta, int tb) {
  int64_t sa[3] = {nb, ta ? k : m, ta ? m : k}, sb[3] = {nb, tb ? n : k, tb ? k : n};
  te_tensor *A = tt_placeholder("A", TE_F32, 3, sa), *B = tt_placeholder("B", TE_F32, 3, sb);
  te_tensor *C = TT_NN(te_op_batch_matmul(tt_ctx, A, B, ta, tb, NULL));
  cr_assert_str_eq(te_tensor_name(C), "batch_matmul");
  tt_buf *a = tt_alloc(TE_F32, 3, sa), *b = tt_alloc(TE_F32, 3, sb);
  tt_buf *got = TT_ALLOC(TE_F32, nb, m, n), *ref = TT_ALLOC(TE_F32, nb, m, n);
  ops_fill(2, TT_BUFS(a, b), 21);
  ref_matmul(a, b, ref, nb, m, n, k, ta, tb);
  char what[96];
  snprintf(what, sizeof what, "batch_matmul ta=%d tb=%d", ta, tb);
  ops_plan p = {.nreduce = 1};
  ops_check(what, C, &p, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), got, ref, k);
}

Test(ops_matmul, batch_all_transposes) {
  for (int ta = 0; ta < 2; ta++)
    for (int tb = 0; tb < 2; tb++)
      check_batch(3, 7, 5, 9, ta, tb);
}

/* One kernel over symbolic M, N, K, called at two sizes. */
Test(ops_matmul, symbolic_sizes) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N"), *K = te_var(tt_ctx, "K");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(K, M)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(K, N)));
  te_tensor *C = TT_NN(te_op_matmul(tt_ctx, A, B, 1, 0, "C"));
  cr_assert(te_tensor_dim(C, 0) == M && te_tensor_dim(C, 1) == N);
  for (int kind = OPS_DEFAULT; kind <= OPS_TILE; kind++) {
    te_schedule *s = tt_schedule1(C);
    ops_apply(s, C, &(ops_plan){.nreduce = 1}, kind);
    te_module *mod = tt_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL);
    const int64_t sizes[2][3] = {{6, 9, 4}, {17, 3, 11}};
    for (int c = 0; c < 2; c++) {
      int64_t m = sizes[c][0], n = sizes[c][1], k = sizes[c][2];
      tt_note("symbolic matmul %lldx%lldx%lld, schedule %s", (long long)m, (long long)n,
              (long long)k, ops_sched_name(kind));
      tt_buf *a = TT_ALLOC(TE_F32, k, m), *b = TT_ALLOC(TE_F32, k, n);
      tt_buf *got = TT_ALLOC(TE_F32, m, n), *ref = TT_ALLOC(TE_F32, m, n);
      ops_fill(2, TT_BUFS(a, b), 31 + (uint64_t)c);
      ref_matmul(a, b, ref, 1, m, n, k, 1, 0);
      tt_call(mod, "mm", 3, TT_BUFS(a, b, got), 0, NULL);
      tt_assert_close(got, ref, k);
    }
  }
}

/* dense = relu(bias_add(matmul(X, W), bias)): stages dense_mm, dense_bias, dense. */
Test(ops_matmul, dense_layer_pipeline) {
  const int64_t m = 9, n = 14, k = 19;
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(m, k));
  te_tensor *W = tt_placeholder("W", TE_F32, 2, TT_SHAPE(n, k));
  te_tensor *bias = tt_placeholder("bias", TE_F32, 1, TT_SHAPE(n));
  te_tensor *mm = TT_NN(te_op_matmul(tt_ctx, X, W, 0, 1, "dense_mm"));
  te_tensor *ba = TT_NN(te_op_bias_add(tt_ctx, mm, bias, -1, "dense_bias"));
  te_tensor *out = TT_NN(te_op_relu(tt_ctx, ba, "dense"));
  tt_buf *x = TT_ALLOC(TE_F32, m, k), *w = TT_ALLOC(TE_F32, n, k), *b = TT_ALLOC(TE_F32, n);
  tt_buf *got = TT_ALLOC(TE_F32, m, n), *ref = TT_ALLOC(TE_F32, m, n);
  ops_fill(3, TT_BUFS(x, w, b), 41);
  ref_matmul(x, w, ref, 1, m, n, k, 0, 1);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      double v = tt_get(ref, i * n + j) + tt_get(b, j);
      tt_set(ref, i * n + j, v > 0 ? v : 0);
    }
  ops_plan p = {.inline_stages = {"bias"}, .at = {{"mm", "bias", 0}}};
  int runs = ops_check("dense layer", out, &p, 4, TT_TENSORS(X, W, bias, out),
                       TT_BUFS(x, w, b, got), got, ref, k);
  cr_assert_eq(runs, 4);
}
