/* test_inline.c — multi-stage computations with element-wise producers computed at root (the
 * default: an intermediate buffer) or inlined into their consumers: into a matmul, into a
 * reduction, a chain of three stages, a producer read at shifted indices, and a schedule of two
 * outputs sharing a producer.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(inline_, .init = tt_setup, .fini = tt_teardown);

/* P = exp(A) * 0.5 + 1; C = P x W (matmul). Schedules: P at root; P inlined; P inlined and C
   tiled; P at root, split, and C tiled. */
Test(inline_, elementwise_into_matmul) {
  enum { M = 11, N = 9, K = 14 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *W = tt_placeholder("W", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *pb = te_add(
      te_mul(te_call(tt_ctx, "exp", 1, TE_EXPRS(tt_at2(A, i, j))), te_float(tt_ctx, TE_F32, 0.5)),
      te_float(tt_ctx, TE_F32, 1.0));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, K)),
                                  TE_EXPRS(i, j), pb));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                       TE_EXPRS(i, j), TE_SUM(te_mul(tt_at2(P, i, k), tt_at2(W, k, j)), k)));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *w = TT_ALLOC(TE_F32, K, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(w, 2);
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++) {
      double acc = 0;
      for (int r = 0; r < K; r++)
        acc += (exp(tt_get(a, p * K + r)) * 0.5 + 1.0) * tt_get(w, r * N + q);
      tt_set(ref, p * N + q, acc);
    }
  for (int kind = 0; kind < 4; kind++) {
    tt_note("P -> matmul, variant %d", kind);
    te_schedule *s = tt_schedule1(C);
    te_stage *sp = tt_stage(s, P), *sc = tt_stage(s, C);
    te_iter *io, *jo, *ii, *ji, *o, *in;
    if (kind == 1 || kind == 2)
      TT_OK(te_compute_inline(sp));
    if (kind == 3)
      TT_OK(te_split(sp, TT_NN(te_axis(sp, 1)), 4, &o, &in));
    if (kind >= 2)
      TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 4, &io, &jo, &ii, &ji));
    tt_check(s, 3, TT_TENSORS(A, W, C), TT_BUFS(a, w, got), 0, NULL, NULL, got, ref, K * 4);
  }
}

/* Q = A * B (element-wise, i64 index math in the body); R[i] = sum_k Q[i, k]. */
Test(inline_, elementwise_into_reduction) {
  enum { M = 8, K = 19 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A = tt_placeholder("A", TE_F64, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F64, 2, TT_SHAPE(M, K));
  te_tensor *Q = TT_NN(te_compute(tt_ctx, "Q", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, K)),
                                  TE_EXPRS(i, j), te_mul(tt_at2(A, i, j), tt_at2(B, i, j))));
  te_tensor *R = TT_NN(te_compute(tt_ctx, "R", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i),
                                  TE_SUM(tt_at2(Q, i, k), k)));
  tt_buf *a = TT_ALLOC(TE_F64, M, K), *b = TT_ALLOC(TE_F64, M, K);
  tt_buf *got = TT_ALLOC(TE_F64, M), *ref = TT_ALLOC(TE_F64, M);
  tt_fill(a, 3);
  tt_fill(b, 4);
  for (int p = 0; p < M; p++) {
    double acc = 0;
    for (int r = 0; r < K; r++)
      acc += tt_get(a, p * K + r) * tt_get(b, p * K + r);
    tt_set(ref, p, acc);
  }
  for (int kind = 0; kind < 3; kind++) {
    tt_note("Q -> sum, variant %d", kind);
    te_schedule *s = tt_schedule1(R);
    te_stage *sq = tt_stage(s, Q), *sr = tt_stage(s, R);
    te_iter *ko, *ki;
    if (kind >= 1)
      TT_OK(te_compute_inline(sq));
    if (kind == 2)
      TT_OK(te_split(sr, TT_NN(te_reduce_iter(sr, 0)), 4, &ko, &ki));
    tt_check(s, 3, TT_TENSORS(A, B, R), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
  }
}

/* B = A + 1; C = B * 2; D = C - A (i32). Every subset of {B, C} inlined. */
Test(inline_, chain_of_three) {
  enum { L = 23 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *sh[] = {te_int(tt_ctx, L)};
  te_tensor *A = tt_placeholder("A", TE_I32, 1, TT_SHAPE(L));
  te_tensor *B =
      TT_NN(te_compute(tt_ctx, "B", 1, sh, TE_EXPRS(i), te_add(tt_at1(A, i), te_int(tt_ctx, 1))));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 1, sh, TE_EXPRS(i), te_mul(tt_at1(B, i), te_int(tt_ctx, 2))));
  te_tensor *D =
      TT_NN(te_compute(tt_ctx, "D", 1, sh, TE_EXPRS(i), te_sub(tt_at1(C, i), tt_at1(A, i))));
  tt_buf *a = TT_ALLOC(TE_I32, L), *got = TT_ALLOC(TE_I32, L), *ref = TT_ALLOC(TE_I32, L);
  tt_fill_range(a, 5, -1000, 1000);
  for (int p = 0; p < L; p++)
    tt_seti(ref, p, (tt_geti(a, p) + 1) * 2 - tt_geti(a, p));
  for (int mask = 0; mask < 4; mask++) {
    tt_note("chain, inline mask %d", mask);
    te_schedule *s = tt_schedule1(D);
    if (mask & 1)
      TT_OK(te_compute_inline(tt_stage(s, B)));
    if (mask & 2)
      TT_OK(te_compute_inline(tt_stage(s, C)));
    tt_apply_sched(s, D, mask % TT_S_COUNT);
    tt_check(s, 2, TT_TENSORS(A, D), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
  }
}

/* P[i] = A[i] * A[i]; C[i] = P[i] + P[i + 1] (C has L - 1 elements; P needs all L). */
Test(inline_, producer_read_at_shifted_indices) {
  enum { L = 17 };
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(L));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 1, TE_EXPRS(te_int(tt_ctx, L)), TE_EXPRS(i),
                                  te_mul(tt_at1(A, i), tt_at1(A, i))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, L - 1)), TE_EXPRS(i),
                                  te_add(tt_at1(P, i), tt_at1(P, te_add(i, te_int(tt_ctx, 1))))));
  tt_buf *a = TT_ALLOC(TE_F32, L), *got = TT_ALLOC(TE_F32, L - 1), *ref = TT_ALLOC(TE_F32, L - 1);
  tt_fill(a, 6);
  for (int p = 0; p < L - 1; p++) {
    double x = tt_get(a, p), y = tt_get(a, p + 1);
    tt_set(ref, p, x * x + y * y);
  }
  for (int kind = 0; kind < 4; kind++) {
    tt_note("shifted producer, variant %d", kind);
    te_schedule *s = tt_schedule1(C);
    te_iter *o, *in;
    if (kind & 1)
      TT_OK(te_compute_inline(tt_stage(s, P)));
    if (kind & 2)
      TT_OK(te_split(tt_stage(s, P), te_axis(tt_stage(s, P), 0), 5, &o, &in));
    tt_apply_sched(s, C, kind);
    tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
  }
}

/* Two outputs sharing a producer: P = A * 3; X = P + 1; Y = P - A. */
Test(inline_, two_outputs_share_producer) {
  enum { M = 5, N = 6 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *sh[] = {te_int(tt_ctx, M), te_int(tt_ctx, N)};
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, sh, TE_EXPRS(i, j),
                                  te_mul(tt_at2(A, i, j), te_float(tt_ctx, TE_F32, 3))));
  te_tensor *X = TT_NN(te_compute(tt_ctx, "X", 2, sh, TE_EXPRS(i, j),
                                  te_add(tt_at2(P, i, j), te_float(tt_ctx, TE_F32, 1))));
  te_tensor *Y = TT_NN(
      te_compute(tt_ctx, "Y", 2, sh, TE_EXPRS(i, j), te_sub(tt_at2(P, i, j), tt_at2(A, i, j))));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *gx = TT_ALLOC(TE_F32, M, N), *gy = TT_ALLOC(TE_F32, M, N);
  tt_buf *rx = TT_ALLOC(TE_F32, M, N), *ry = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 7);
  for (int p = 0; p < M * N; p++) {
    tt_set(rx, p, tt_get(a, p) * 3 + 1);
    tt_set(ry, p, tt_get(a, p) * 3 - tt_get(a, p));
  }
  for (int inl = 0; inl < 2; inl++) {
    tt_note("two outputs, inline %d", inl);
    te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 2, TT_TENSORS(X, Y)));
    if (inl)
      TT_OK(te_compute_inline(tt_stage(s, P)));
    tt_apply_sched(s, Y, inl ? TT_S_FUSE : TT_S_SPLIT);
    te_module *m = tt_build(s, "two", 3, TT_TENSORS(A, X, Y), 0, NULL);
    tt_poison(gx);
    tt_poison(gy);
    tt_call(m, "two", 3, TT_BUFS(a, gx, gy), 0, NULL);
    tt_assert_close(gx, rx, 1);
    tt_assert_close(gy, ry, 1);
  }
}
