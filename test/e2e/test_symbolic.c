/* test_symbolic.c — symbolic shapes: one kernel built once and run at several sizes, the sizes
 * bound from the DLTensors. 1-D (n = 1, 7, 64, 100), 2-D (M x N), a reduction over a symbolic
 * extent, a size used in the body, a tensor of extent 2n, a symbolic matmul with tiles, and a
 * producer computed at a tile of a symbolic extent with its rows unrolled, and vectorized copies
 * (cache_read) at the tail of a split symbolic reduction.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(symbolic, .init = tt_setup, .fini = tt_teardown);

static const int64_t sizes1[] = {1, 7, 64, 100};

/* C[i] = A[i] + B[i] * 2, default and split-by-8 (tails at every n but 64). */
Test(symbolic, one_dim_several_sizes) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                       te_add(tt_at1(A, i), te_mul(tt_at1(B, i), te_float(tt_ctx, TE_F32, 2)))));
  for (int kind = 0; kind < 2; kind++) {
    te_schedule *s = tt_schedule1(C);
    te_iter *o, *in;
    if (kind)
      TT_OK(te_split(tt_stage(s, C), te_axis(tt_stage(s, C), 0), 8, &o, &in));
    te_module *m = tt_build(s, "vadd", 3, TT_TENSORS(A, B, C), 0, NULL);
    for (size_t t = 0; t < 4; t++) {
      int64_t len = sizes1[t];
      tt_note("n = %lld, %s", (long long)len, kind ? "split 8" : "default");
      tt_buf *a = TT_ALLOC(TE_F32, len), *b = TT_ALLOC(TE_F32, len);
      tt_buf *got = TT_ALLOC(TE_F32, len), *ref = TT_ALLOC(TE_F32, len);
      tt_fill(a, (uint64_t)len);
      tt_fill(b, (uint64_t)len + 1);
      for (int64_t p = 0; p < len; p++)
        tt_set(ref, p, tt_get(a, p) + tt_get(b, p) * 2);
      tt_call(m, "vadd", 3, TT_BUFS(a, b, got), 0, NULL);
      tt_assert_close(got, ref, 1);
    }
  }
}

/* C[i, j] = A[i, j] * r[j] + i (M x N symbolic), under every generic schedule. */
Test(symbolic, two_dim_m_by_n) {
  static const int64_t shapes[][2] = {{1, 1}, {3, 17}, {64, 5}, {10, 10}};
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N");
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F64, 2, TE_EXPRS(M, N)));
  te_tensor *r = TT_NN(te_placeholder(tt_ctx, "r", TE_F64, 1, TE_EXPRS(N)));
  te_expr *body = te_add(te_mul(tt_at2(A, i, j), tt_at1(r, j)), te_cast(TE_F64, i));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(M, N), TE_EXPRS(i, j), body));
  for (int kind = 0; kind < TT_S_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    tt_apply_sched(s, C, kind);
    te_module *m = tt_build(s, "mn", 3, TT_TENSORS(A, r, C), 0, NULL);
    for (int t = 0; t < 4; t++) {
      int64_t h = shapes[t][0], w = shapes[t][1];
      tt_note("M x N = %lld x %lld, schedule %s", (long long)h, (long long)w, tt_sched_name(kind));
      tt_buf *a = TT_ALLOC(TE_F64, h, w), *br = TT_ALLOC(TE_F64, w);
      tt_buf *got = TT_ALLOC(TE_F64, h, w), *ref = TT_ALLOC(TE_F64, h, w);
      tt_fill(a, 1);
      tt_fill(br, 2);
      for (int64_t p = 0; p < h; p++)
        for (int64_t q = 0; q < w; q++)
          tt_set(ref, p * w + q, tt_get(a, p * w + q) * tt_get(br, q) + (double)p);
      tt_call(m, "mn", 3, TT_BUFS(a, br, got), 0, NULL);
      tt_assert_close(got, ref, 1);
    }
  }
}

/* mean[i] = sum_k A[i, k] / n for A of m x n, with the size n used in the body. */
Test(symbolic, reduction_over_symbolic_extent) {
  te_expr *m = te_var(tt_ctx, "m"), *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), n);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(m, n)));
  te_tensor *S =
      TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(m), TE_EXPRS(i), TE_SUM(tt_at2(A, i, k), k)));
  te_tensor *Mn = TT_NN(te_compute(tt_ctx, "Mean", 1, TE_EXPRS(m), TE_EXPRS(i),
                                   te_div(tt_at1(S, i), te_cast(TE_F32, n))));
  for (int kind = 0; kind < 2; kind++) {
    te_schedule *s = tt_schedule1(Mn);
    te_iter *ko, *ki;
    if (kind) {
      te_stage *ss = tt_stage(s, S);
      TT_OK(te_split(ss, TT_NN(te_reduce_iter(ss, 0)), 4, &ko, &ki));
      tt_apply_sched(s, Mn, TT_S_SPLIT);
    }
    te_module *mod = tt_build(s, "mean", 2, TT_TENSORS(A, Mn), 0, NULL);
    static const int64_t shapes[][2] = {{1, 1}, {5, 7}, {3, 64}, {9, 100}};
    for (int t = 0; t < 4; t++) {
      int64_t h = shapes[t][0], w = shapes[t][1];
      tt_note("mean of %lld x %lld, variant %d", (long long)h, (long long)w, kind);
      tt_buf *a = TT_ALLOC(TE_F32, h, w), *got = TT_ALLOC(TE_F32, h), *ref = TT_ALLOC(TE_F32, h);
      tt_fill(a, 3);
      for (int64_t p = 0; p < h; p++) {
        double acc = 0;
        for (int64_t q = 0; q < w; q++)
          acc += tt_get(a, p * w + q);
        tt_set(ref, p, acc / (double)w);
      }
      tt_call(mod, "mean", 2, TT_BUFS(a, got), 0, NULL);
      tt_assert_close(got, ref, w);
    }
  }
}

/* U[i] = A[i // 2] with U of extent 2 * n: a shape expression, checked against A's n. */
Test(symbolic, derived_extent_two_n) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_expr *two_n = te_mul(te_int(tt_ctx, 2), n);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_I32, 1, TE_EXPRS(n)));
  te_tensor *U = TT_NN(te_compute(tt_ctx, "U", 1, TE_EXPRS(two_n), TE_EXPRS(i),
                                  tt_at1(A, te_floordiv(i, te_int(tt_ctx, 2)))));
  te_schedule *s = tt_schedule1(U);
  tt_apply_sched(s, U, TT_S_SPLIT);
  te_module *m = tt_build(s, "up", 2, TT_TENSORS(A, U), 0, NULL);
  for (int t = 0; t < 4; t++) {
    int64_t len = sizes1[t];
    tt_note("upsample n = %lld", (long long)len);
    tt_buf *a = TT_ALLOC(TE_I32, len), *got = TT_ALLOC(TE_I32, 2 * len);
    tt_buf *ref = TT_ALLOC(TE_I32, 2 * len);
    tt_fill_range(a, 4, -100000, 100000);
    for (int64_t p = 0; p < 2 * len; p++)
      tt_seti(ref, p, tt_geti(a, p / 2));
    tt_call(m, "up", 2, TT_BUFS(a, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}

/* A symbolic matmul (M, N, K all te_var) tiled 8x8 with k split by 4, run at three shapes. */
Test(symbolic, matmul_all_symbolic) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N"), *K = te_var(tt_ctx, "K");
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), K);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, K)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(K, N)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(M, N), TE_EXPRS(i, j),
                                  TE_SUM(te_mul(tt_at2(A, i, k), tt_at2(B, k, j)), k)));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 8, 8, &io, &jo, &ii, &ji));
  TT_OK(te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki));
  TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}));
  te_module *m = tt_build(s, "smm", 3, TT_TENSORS(A, B, C), 0, NULL);
  static const int64_t shapes[][3] = {{1, 1, 1}, {37, 53, 29}, {16, 8, 4}};
  for (int t = 0; t < 3; t++) {
    int64_t h = shapes[t][0], w = shapes[t][1], d = shapes[t][2];
    tt_note("symbolic matmul %lldx%lldx%lld", (long long)h, (long long)w, (long long)d);
    tt_buf *a = TT_ALLOC(TE_F32, h, d), *b = TT_ALLOC(TE_F32, d, w);
    tt_buf *got = TT_ALLOC(TE_F32, h, w), *ref = TT_ALLOC(TE_F32, h, w);
    tt_fill(a, 5);
    tt_fill(b, 6);
    for (int64_t p = 0; p < h; p++)
      for (int64_t q = 0; q < w; q++) {
        double acc = 0;
        for (int64_t r = 0; r < d; r++)
          acc += tt_get(a, p * d + r) * tt_get(b, r * w + q);
        tt_set(ref, p * w + q, acc);
      }
    tt_call(m, "smm", 3, TT_BUFS(a, b, got), 0, NULL);
    tt_assert_close(got, ref, d);
  }
}

/* P = A * 2 + 1 computed at each 4-row tile of C = P * 3 (n x 16, n symbolic), P's rows
   unrolled: the last tile's rows, min(n - 1, i.o*4 + 3) - i.o*4 + 1, have no constant extent
   but are at most 4, so te_unroll accepts them (the matmul register tiles of te.torch's
   symbolic plans) and the short tile computes only its rows. */
Test(symbolic, unrolled_rows_of_a_symbolic_tile) {
  te_ctx *c = tt_ctx;
  te_expr *n = te_var(c, "n"), *i = te_var(c, "i"), *j = te_var(c, "j");
  te_tensor *A = TT_NN(te_placeholder(c, "A", TE_F32, 2, TE_EXPRS(n, te_int(c, 16))));
  te_tensor *P = TT_NN(
      te_compute(c, "P", 2, TE_EXPRS(n, te_int(c, 16)), TE_EXPRS(i, j),
                 te_add(te_mul(tt_at2(A, i, j), te_float(c, TE_F32, 2)), te_float(c, TE_F32, 1))));
  te_tensor *C = TT_NN(te_compute(c, "C", 2, TE_EXPRS(n, te_int(c, 16)), TE_EXPRS(i, j),
                                  te_mul(tt_at2(P, i, j), te_float(c, TE_F32, 3))));
  te_schedule *s = tt_schedule1(C);
  te_stage *cs = tt_stage(s, C), *ps = tt_stage(s, P);
  te_iter *io, *ii;
  TT_OK(te_split(cs, te_axis(cs, 0), 4, &io, &ii));
  TT_OK(te_compute_at(ps, cs, io));
  TT_OK(te_unroll(ps, te_axis(ps, 0)));
  te_module *m = tt_build(s, "tile", 2, TT_TENSORS(A, C), 0, NULL);
  for (size_t t = 0; t < 4; t++) {
    int64_t len = sizes1[t];
    tt_note("n = %lld", (long long)len);
    tt_buf *a = TT_ALLOC(TE_F32, len, 16), *got = TT_ALLOC(TE_F32, len, 16);
    tt_buf *ref = TT_ALLOC(TE_F32, len, 16);
    tt_fill(a, (uint64_t)len);
    for (int64_t p = 0; p < len * 16; p++)
      tt_set(ref, p, (tt_get(a, p) * 2 + 1) * 3);
    tt_call(m, "tile", 2, TT_BUFS(a, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}

/* Y[i] = sum_kk X[kk] W[i, kk] (n x k symbolic; te-llama's tl_matvec), kk split by 4 and X and
   W copied at kk.o (cache_read), each copy split by 16 and vectorized: the schedule te-tune
   found for the constant-size kernel. At the last kk.o (k % 4 != 0) the copies cover
   k - kk.o*4 < 4 elements, and the tail of their split by 16 has the extent
   max(k - ax0.o*16 - kk.o*4, 0), whose bound 16 only loop partitioning can prove: it keeps it as
   min(..., 16) so the vectorizer has its lanes (it refused the schedule, "no constant upper
   bound", before). */
Test(symbolic, vectorized_copy_at_a_split_reduction_tail) {
  te_ctx *c = tt_ctx;
  te_expr *n = te_var(c, "n"), *k = te_var(c, "k"), *i = te_var(c, "i");
  te_tensor *X = TT_NN(te_placeholder(c, "X", TE_F32, 1, TE_EXPRS(k)));
  te_tensor *W = TT_NN(te_placeholder(c, "W", TE_F32, 2, TE_EXPRS(n, k)));
  te_expr *kk = te_reduce_axis(c, "kk", te_int(c, 0), k);
  te_tensor *Y = TT_NN(te_compute(c, "Y", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  TE_SUM(te_mul(tt_at1(X, kk), tt_at2(W, i, kk)), kk)));
  te_schedule *s = tt_schedule1(Y);
  TT_OK(te_schedule_replay(s, "cache_write Y local\n"
                              "split Y i 40\n"
                              "parallel Y i.o\n"
                              "compute_at Y_local Y i.o\n"
                              "split Y_local kk 4\n"
                              "reorder Y_local kk.o i kk.i\n"
                              "cache_read X local Y_local\n"
                              "compute_at X_local Y_local kk.o\n"
                              "split X_local ax0 16\n"
                              "vectorize X_local ax0.i\n"
                              "cache_read W local Y_local\n"
                              "compute_at W_local Y_local kk.o\n"
                              "split W_local ax1 16\n"
                              "vectorize W_local ax1.i\n"));
  te_module *m = tt_build(s, "mv", 3, TT_TENSORS(X, W, Y), 0, NULL);
  static const int64_t shapes[][2] = {{1, 1}, {37, 203}, {40, 64}, {70, 1001}};
  for (int t = 0; t < 4; t++) {
    int64_t h = shapes[t][0], w = shapes[t][1];
    tt_note("matvec %lld x %lld", (long long)h, (long long)w);
    tt_buf *x = TT_ALLOC(TE_F32, w), *wt = TT_ALLOC(TE_F32, h, w);
    tt_buf *got = TT_ALLOC(TE_F32, h), *ref = TT_ALLOC(TE_F32, h);
    tt_fill(x, 7);
    tt_fill(wt, 8);
    for (int64_t p = 0; p < h; p++) {
      double acc = 0;
      for (int64_t q = 0; q < w; q++)
        acc += tt_get(x, q) * tt_get(wt, p * w + q);
      tt_set(ref, p, acc);
    }
    tt_call(m, "mv", 3, TT_BUFS(x, wt, got), 0, NULL);
    tt_assert_close(got, ref, w);
  }
}
