/* test_matmul.c — C[i, j] = sum_k A[i, k] * B[k, j] at several shapes (primes, 1x1x1,
 * 100x100x100) under hand schedules: tile 32x32 + split k by 8 + reorder, non-dividing tiles,
 * split_nparts, fuse, k outermost; also f64, i32, a batched matmul and a matmul followed by a
 * bias + relu stage.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(matmul, .init = tt_setup, .fini = tt_teardown);

enum { S_DEFAULT, S_TILE32_K8, S_TILE_ODD, S_NPARTS_FUSE, S_K_OUTER, S_COUNT };
static const char *snames[] = {"default", "tile 32x32 + split k 8 + reorder",
                               "tile 8x5 + split k 3 + reorder", "split_nparts + fuse",
                               "k outermost"};

static void msched(te_schedule *s, te_tensor *C, int kind) {
  te_stage *st = tt_stage(s, C);
  te_iter *i = TT_NN(te_axis(st, 0)), *j = TT_NN(te_axis(st, 1));
  te_iter *k = TT_NN(te_reduce_iter(st, 0));
  te_iter *io, *jo, *ii, *ji, *ko, *ki, *f, *fo, *fi;
  switch (kind) {
  case S_TILE32_K8:
  case S_TILE_ODD: {
    int big = kind == S_TILE32_K8;
    TT_OK(te_tile(st, i, j, big ? 32 : 8, big ? 32 : 5, &io, &jo, &ii, &ji));
    TT_OK(te_split(st, k, big ? 8 : 3, &ko, &ki));
    TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}));
    break;
  }
  case S_NPARTS_FUSE:
    TT_OK(te_split_nparts(st, i, 3, &io, &ii));
    TT_OK(te_fuse(st, ii, j, &f));
    TT_OK(te_split(st, f, 16, &fo, &fi));
    break;
  case S_K_OUTER:
    TT_OK(te_reorder(st, 3, (te_iter *const[]){k, i, j}));
    break;
  }
}

/* A plain C matmul in double (rounded to dt when stored). */
static void ref_matmul(const tt_buf *a, const tt_buf *b, tt_buf *c, int m, int n, int kk) {
  bool isf = c->dl.dtype.code == kDLFloat;
  for (int p = 0; p < m; p++)
    for (int q = 0; q < n; q++) {
      double acc = 0;
      int64_t iacc = 0;
      for (int r = 0; r < kk; r++) {
        acc += tt_get(a, p * kk + r) * tt_get(b, r * n + q);
        iacc += tt_geti(a, p * kk + r) * tt_geti(b, r * n + q);
      }
      if (isf)
        tt_set(c, p * n + q, acc);
      else
        tt_seti(c, p * n + q, iacc);
    }
}

static void run_matmul(te_dtype dt, int m, int n, int kk, int kinds_mask) {
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(m, kk));
  te_tensor *B = tt_placeholder("B", dt, 2, TT_SHAPE(kk, n));
  te_tensor *C = tt_matmul(A, B, m, n, kk);
  tt_buf *a = TT_ALLOC(dt, m, kk), *b = TT_ALLOC(dt, kk, n);
  tt_buf *got = TT_ALLOC(dt, m, n), *ref = TT_ALLOC(dt, m, n);
  tt_fill(a, (uint64_t)m);
  tt_fill(b, (uint64_t)n + 1000);
  ref_matmul(a, b, ref, m, n, kk);
  for (int kind = 0; kind < S_COUNT; kind++) {
    if (!(kinds_mask & (1 << kind)))
      continue;
    tt_note("matmul %dx%dx%d, schedule %s", m, n, kk, snames[kind]);
    te_schedule *s = tt_schedule1(C);
    msched(s, C, kind);
    tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, kk);
  }
}

#define ALL ((1 << S_COUNT) - 1)

Test(matmul, primes_37x53x29) { run_matmul(TE_F32, 37, 53, 29, ALL); }
Test(matmul, one_by_one) { run_matmul(TE_F32, 1, 1, 1, ALL); }
Test(matmul, hundred_cubed) {
  run_matmul(TE_F32, 100, 100, 100, 1 << S_DEFAULT | 1 << S_TILE32_K8 | 1 << S_TILE_ODD);
}
Test(matmul, tile_divides_exactly) { run_matmul(TE_F32, 64, 96, 32, ALL); }
Test(matmul, skinny_shapes) {
  run_matmul(TE_F32, 3, 70, 5, ALL);
  run_matmul(TE_F32, 70, 2, 41, ALL);
}
Test(matmul, f64) { run_matmul(TE_F64, 19, 23, 31, ALL); }
Test(matmul, i32_exact) { run_matmul(TE_I32, 17, 13, 11, ALL); }

/* D[b, i, j] = sum_k X[b, i, k] * Y[b, k, j], batch 3, split and fuse over b and i. */
Test(matmul, batched) {
  enum { NB = 3, M = 9, N = 7, K = 11 };
  te_expr *b = te_var(tt_ctx, "b"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *X = tt_placeholder("X", TE_F32, 3, TT_SHAPE(NB, M, K));
  te_tensor *Y = tt_placeholder("Y", TE_F32, 3, TT_SHAPE(NB, K, N));
  te_tensor *D = TT_NN(
      te_compute(tt_ctx, "D", 3, TE_EXPRS(te_int(tt_ctx, NB), te_int(tt_ctx, M), te_int(tt_ctx, N)),
                 TE_EXPRS(b, i, j), TE_SUM(te_mul(tt_at3(X, b, i, k), tt_at3(Y, b, k, j)), k)));
  tt_buf *x = TT_ALLOC(TE_F32, NB, M, K), *y = TT_ALLOC(TE_F32, NB, K, N);
  tt_buf *got = TT_ALLOC(TE_F32, NB, M, N), *ref = TT_ALLOC(TE_F32, NB, M, N);
  tt_fill(x, 21);
  tt_fill(y, 22);
  for (int q = 0; q < NB; q++)
    for (int p = 0; p < M; p++)
      for (int r = 0; r < N; r++) {
        double acc = 0;
        for (int t = 0; t < K; t++)
          acc += tt_get(x, (q * M + p) * K + t) * tt_get(y, (q * K + t) * N + r);
        tt_set(ref, (q * M + p) * N + r, acc);
      }
  tt_check_all(D, 3, TT_TENSORS(X, Y, D), TT_BUFS(x, y, got), got, ref, K);
}

/* E[i, j] = max(C[i, j] + bias[j], 0) with C a matmul computed at root. */
Test(matmul, bias_relu_second_stage) {
  enum { M = 13, N = 10, K = 17 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *bias = tt_placeholder("bias", TE_F32, 1, TT_SHAPE(N));
  te_tensor *C = tt_matmul(A, B, M, N, K);
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *zero = te_float(tt_ctx, TE_F32, 0.0);
  te_tensor *E =
      TT_NN(te_compute(tt_ctx, "E", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                       TE_EXPRS(i, j), te_max(te_add(tt_at2(C, i, j), tt_at1(bias, j)), zero)));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *bb = TT_ALLOC(TE_F32, N);
  tt_buf *c = TT_ALLOC(TE_F32, M, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 31);
  tt_fill(b, 32);
  tt_fill(bb, 33);
  ref_matmul(a, b, c, M, N, K);
  for (int p = 0; p < M * N; p++) {
    double v = tt_get(c, p) + tt_get(bb, p % N);
    tt_set(ref, p, v > 0 ? v : 0);
  }
  for (int kind = 0; kind < S_COUNT; kind++) {
    tt_note("bias+relu after matmul schedule %s", snames[kind]);
    te_schedule *s = tt_schedule1(E);
    msched(s, C, kind);
    tt_apply_sched(s, E, kind % TT_S_COUNT);
    tt_check(s, 4, TT_TENSORS(A, B, bias, E), TT_BUFS(a, b, bb, got), 0, NULL, NULL, got, ref, K);
  }
}
