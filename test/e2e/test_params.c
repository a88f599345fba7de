/* test_params.c — scalar kernel parameters (te_param): an f32 alpha, an i64 offset and bound,
 * an f64 and an i32 together, passed in te_build order after the tensors; one kernel called
 * with several values.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(params, .init = tt_setup, .fini = tt_teardown);

/* C = alpha * A + B, called with alpha = 1.5, -0.25 and 0 (the last must give B exactly). */
Test(params, f32_alpha_axpy) {
  enum { M = 9, N = 12 };
  te_expr *alpha = TT_NN(te_param(tt_ctx, "alpha", TE_F32));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                       TE_EXPRS(i, j), te_add(te_mul(alpha, tt_at2(A, i, j)), tt_at2(B, i, j))));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *b = TT_ALLOC(TE_F32, M, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  static const float alphas[] = {1.5f, -0.25f, 0.0f};
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    tt_apply_sched(s, C, kind);
    te_module *m = tt_build(s, "axpy", 3, TT_TENSORS(A, B, C), 1, TE_EXPRS(alpha));
    for (int t = 0; t < 3; t++) {
      tt_note("alpha = %g, schedule %s", (double)alphas[t], tt_sched_name(kind));
      for (int p = 0; p < M * N; p++)
        tt_set(ref, p, (double)alphas[t] * tt_get(a, p) + tt_get(b, p));
      tt_poison(got);
      tt_call(m, "axpy", 3, TT_BUFS(a, b, got), 1, (const void *const[]){&alphas[t]});
      tt_assert_close(got, ref, 1);
    }
  }
}

/* C[i] = select(i < bound, A[i] + off, -A[i]) with off and bound i64 parameters. */
Test(params, i64_offset_and_bound) {
  enum { L = 31 };
  te_expr *off = TT_NN(te_param(tt_ctx, "off", TE_I64));
  te_expr *bound = TT_NN(te_param(tt_ctx, "bound", TE_I64));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_I64, 1, TT_SHAPE(L));
  te_expr *body = te_select(te_lt(i, bound), te_add(tt_at1(A, i), off), te_neg(tt_at1(A, i)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, L)), TE_EXPRS(i), body));
  tt_buf *a = TT_ALLOC(TE_I64, L), *got = TT_ALLOC(TE_I64, L), *ref = TT_ALLOC(TE_I64, L);
  tt_fill_range(a, 3, -1000000, 1000000);
  static const int64_t offs[] = {5, -123456789012ll, 0};
  static const int64_t bounds[] = {10, 0, 1000};
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    tt_apply_sched(s, C, kind);
    te_module *m = tt_build(s, "offs", 2, TT_TENSORS(A, C), 2, TE_EXPRS(off, bound));
    for (int t = 0; t < 3; t++) {
      tt_note("off = %lld, bound = %lld, schedule %s", (long long)offs[t], (long long)bounds[t],
              tt_sched_name(kind));
      for (int p = 0; p < L; p++)
        tt_seti(ref, p, p < bounds[t] ? tt_geti(a, p) + offs[t] : -tt_geti(a, p));
      tt_poison(got);
      tt_call(m, "offs", 2, TT_BUFS(a, got), 2, (const void *const[]){&offs[t], &bounds[t]});
      tt_assert_close(got, ref, 1);
    }
  }
}

/* D = A * beta + k with beta: f64 and k: i32, listed to te_build as (k, beta). */
Test(params, f64_and_i32_in_given_order) {
  enum { L = 14 };
  te_expr *beta = TT_NN(te_param(tt_ctx, "beta", TE_F64));
  te_expr *kp = TT_NN(te_param(tt_ctx, "k", TE_I32));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_F64, 1, TT_SHAPE(L));
  te_tensor *D = TT_NN(te_compute(tt_ctx, "D", 1, TE_EXPRS(te_int(tt_ctx, L)), TE_EXPRS(i),
                                  te_add(te_mul(tt_at1(A, i), beta), te_cast(TE_F64, kp))));
  tt_buf *a = TT_ALLOC(TE_F64, L), *got = TT_ALLOC(TE_F64, L), *ref = TT_ALLOC(TE_F64, L);
  tt_fill(a, 4);
  double bval = -3.75;
  int32_t kval = 42;
  for (int p = 0; p < L; p++)
    tt_set(ref, p, tt_get(a, p) * bval + kval);
  for (int kind = 0; kind < 2; kind++) {
    tt_note("f64/i32 params, schedule %s", tt_sched_name(kind));
    te_schedule *s = tt_schedule1(D);
    tt_apply_sched(s, D, kind ? TT_S_SPLIT : TT_S_DEFAULT);
    tt_check(s, 2, TT_TENSORS(A, D), TT_BUFS(a, got), 2, TE_EXPRS(kp, beta),
             (const void *const[]){&kval, &bval}, got, ref, 1);
  }
}

/* A parameter inside a reduction: S[i] = sum_k (A[i, k] * scale). */
Test(params, param_inside_reduction) {
  enum { M = 4, K = 21 };
  te_expr *scale = TT_NN(te_param(tt_ctx, "scale", TE_F32));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *S = TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i),
                                  TE_SUM(te_mul(tt_at2(A, i, k), scale), k)));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *got = TT_ALLOC(TE_F32, M), *ref = TT_ALLOC(TE_F32, M);
  tt_fill(a, 5);
  float sv = 0.5f;
  for (int p = 0; p < M; p++) {
    double acc = 0;
    for (int q = 0; q < K; q++)
      acc += tt_get(a, p * K + q) * sv;
    tt_set(ref, p, acc);
  }
  for (int kind = 0; kind < 2; kind++) {
    tt_note("param in reduction, variant %d", kind);
    te_schedule *s = tt_schedule1(S);
    te_iter *ko, *ki;
    if (kind)
      TT_OK(te_split(tt_stage(s, S), te_reduce_iter(tt_stage(s, S), 0), 8, &ko, &ki));
    tt_check(s, 2, TT_TENSORS(A, S), TT_BUFS(a, got), 1, TE_EXPRS(scale),
             (const void *const[]){&sv}, got, ref, K);
  }
}
