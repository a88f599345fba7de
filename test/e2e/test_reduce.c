/* test_reduce.c — reductions (sum, max, min, prod) over one axis, over several axes (a 3-D
 * tensor reduced over two), to a 0-d tensor, over an axis that does not start at 0, and on
 * integer dtypes; each under a default schedule and under splits (with tails), reduce axis
 * outermost, and fused reduce axes. Max over negative and min over positive values check the
 * identities.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(reduce, .init = tt_setup, .fini = tt_teardown);

typedef te_expr *(*reducer)(te_expr *, int, te_expr *const[]);
enum { R_DEFAULT, R_SPLIT_K, R_K_OUTER, R_SPLIT_BOTH, R_COUNT };
static const char *rnames[] = {"default", "split k by 4", "k outermost", "split i, k + reorder"};

/* Reduction schedules for a stage with data axis 0 (if any) and reduce axis 0. */
static void rsched(te_schedule *s, te_tensor *out, int kind) {
  te_stage *st = tt_stage(s, out);
  te_iter *io, *ii, *ko, *ki;
  int nd = te_tensor_ndim(out);
  te_iter *k = TT_NN(te_reduce_iter(st, 0));
  switch (kind) {
  case R_SPLIT_K:
    TT_OK(te_split(st, k, 4, &ko, &ki));
    break;
  case R_K_OUTER:
    if (nd > 0)
      TT_OK(te_reorder(st, 2, (te_iter *const[]){k, TT_NN(te_axis(st, 0))}));
    break;
  case R_SPLIT_BOTH:
    TT_OK(te_split(st, k, 5, &ko, &ki));
    if (nd == 0)
      break;
    TT_OK(te_split(st, TT_NN(te_axis(st, 0)), 3, &io, &ii));
    TT_OK(te_reorder(st, 4, (te_iter *const[]){io, ko, ii, ki}));
    break;
  }
}

static void check_rsched(te_tensor *out, int nt, te_tensor *const ts[], tt_buf *const bufs[],
                         tt_buf *got, const tt_buf *ref, int64_t klen) {
  for (int kind = 0; kind < R_COUNT; kind++) {
    tt_note("reduction '%s' %lldx%lld, schedule %s", te_tensor_name(out), (long long)got->numel,
            (long long)klen, rnames[kind]);
    te_schedule *s = tt_schedule1(out);
    rsched(s, out, kind);
    tt_check(s, nt, ts, bufs, 0, NULL, NULL, got, ref, klen);
  }
}

/* B[i] = red_k A[i, k] for A of m x n, values in [lo, hi]. */
static void one_axis(reducer red, int which, te_dtype dt, int m, int n, double lo, double hi) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, n));
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(m, n));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, m)), TE_EXPRS(i),
                                  red(tt_at2(A, i, k), 1, TE_EXPRS(k))));
  tt_buf *a = TT_ALLOC(dt, m, n), *got = TT_ALLOC(dt, m), *ref = TT_ALLOC(dt, m);
  tt_fill_range(a, (uint64_t)(m * 31 + n), lo, hi);
  bool isf = dt.code == kDLFloat;
  for (int p = 0; p < m; p++) {
    double acc = which == 3 ? 1 : which == 0 ? 0 : tt_get(a, p * n);
    int64_t iacc = which == 3 ? 1 : which == 0 ? 0 : tt_geti(a, p * n);
    for (int q = 0; q < n; q++) {
      double v = tt_get(a, p * n + q);
      int64_t w = tt_geti(a, p * n + q);
      switch (which) {
      case 0:
        acc += v;
        iacc += w;
        break;
      case 1:
        acc = fmax(acc, v);
        iacc = w > iacc ? w : iacc;
        break;
      case 2:
        acc = fmin(acc, v);
        iacc = w < iacc ? w : iacc;
        break;
      case 3:
        acc *= v;
        iacc *= w;
        break;
      }
    }
    if (isf)
      tt_set(ref, p, acc);
    else
      tt_seti(ref, p, iacc);
  }
  check_rsched(B, 2, TT_TENSORS(A, B), TT_BUFS(a, got), got, ref, n);
}

Test(reduce, sum_one_axis) {
  one_axis(te_sum, 0, TE_F32, 7, 13, -2, 2);
  one_axis(te_sum, 0, TE_F32, 1, 1, -2, 2);
  one_axis(te_sum, 0, TE_F32, 5, 64, -2, 2);
  one_axis(te_sum, 0, TE_F64, 3, 101, -2, 2);
}

Test(reduce, max_one_axis_negative_values) {
  one_axis(te_max_r, 1, TE_F32, 7, 13, -2, -0.1);
  one_axis(te_max_r, 1, TE_F64, 4, 9, -2, 2);
  one_axis(te_max_r, 1, TE_I32, 6, 11, -1000, -1);
  one_axis(te_max_r, 1, TE_U8, 5, 17, 1, 255);
}

Test(reduce, min_one_axis_positive_values) {
  one_axis(te_min_r, 2, TE_F32, 7, 13, 0.1, 2);
  one_axis(te_min_r, 2, TE_I32, 6, 11, 1, 1000);
  one_axis(te_min_r, 2, TE_I8, 6, 7, -128, 127);
}

Test(reduce, prod_one_axis) {
  one_axis(te_prod, 3, TE_F32, 7, 9, 0.5, 1.5);
  one_axis(te_prod, 3, TE_F64, 3, 12, -2, 2);
  one_axis(te_prod, 3, TE_I64, 4, 10, -5, 5);
}

Test(reduce, integer_sum_exact) {
  one_axis(te_sum, 0, TE_I32, 7, 13, -100000, 100000);
  one_axis(te_sum, 0, TE_I64, 2, 50, -1e12, 1e12);
}

/* B[i] = sum over j, k of A[i, j, k]; C[j] = max over i, k of A[i, j, k]. A is 5x6x7. */
Test(reduce, three_d_over_two_axes) {
  enum { I = 5, J = 6, K = 7 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *rj = te_reduce_axis(tt_ctx, "rj", te_int(tt_ctx, 0), te_int(tt_ctx, J));
  te_expr *rk = te_reduce_axis(tt_ctx, "rk", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_expr *ri = te_reduce_axis(tt_ctx, "ri", te_int(tt_ctx, 0), te_int(tt_ctx, I));
  te_expr *rk2 = te_reduce_axis(tt_ctx, "rk2", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A = tt_placeholder("A", TE_F32, 3, TT_SHAPE(I, J, K));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, I)), TE_EXPRS(i),
                                  te_sum(tt_at3(A, i, rj, rk), 2, TE_EXPRS(rj, rk))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, J)), TE_EXPRS(j),
                                  te_max_r(tt_at3(A, ri, j, rk2), 2, TE_EXPRS(ri, rk2))));
  tt_buf *a = TT_ALLOC(TE_F32, I, J, K);
  tt_buf *gb = TT_ALLOC(TE_F32, I), *rb = TT_ALLOC(TE_F32, I);
  tt_buf *gc = TT_ALLOC(TE_F32, J), *rc = TT_ALLOC(TE_F32, J);
  tt_fill(a, 77);
  for (int p = 0; p < I; p++) {
    double acc = 0;
    for (int q = 0; q < J * K; q++)
      acc += tt_get(a, p * J * K + q);
    tt_set(rb, p, acc);
  }
  for (int q = 0; q < J; q++) {
    double acc = -INFINITY;
    for (int p = 0; p < I; p++)
      for (int r = 0; r < K; r++)
        acc = fmax(acc, tt_get(a, (p * J + q) * K + r));
    tt_set(rc, q, acc);
  }
  check_rsched(B, 2, TT_TENSORS(A, B), TT_BUFS(a, gb), gb, rb, J * K);
  check_rsched(C, 2, TT_TENSORS(A, C), TT_BUFS(a, gc), gc, rc, I * K);
  /* fused reduce axes (rj, rk adjacent), split; and the two reduce axes swapped */
  te_iter *f, *fo, *fi;
  te_schedule *s = tt_schedule1(B);
  te_stage *st = tt_stage(s, B);
  TT_OK(te_fuse(st, TT_NN(te_reduce_iter(st, 0)), TT_NN(te_reduce_iter(st, 1)), &f));
  TT_OK(te_split(st, f, 8, &fo, &fi));
  tt_note("B with fused reduce axes");
  tt_check(s, 2, TT_TENSORS(A, B), TT_BUFS(a, gb), 0, NULL, NULL, gb, rb, J * K);
  s = tt_schedule1(C);
  st = tt_stage(s, C);
  TT_OK(te_reorder(st, 2, (te_iter *const[]){te_reduce_iter(st, 1), te_reduce_iter(st, 0)}));
  tt_note("C with reduce axes swapped");
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, gc), 0, NULL, NULL, gc, rc, I * K);
}

/* S = sum over i, j of A[i, j]: a 0-d output. */
Test(reduce, full_reduction_to_scalar) {
  te_expr *ri = te_reduce_axis(tt_ctx, "ri", te_int(tt_ctx, 0), te_int(tt_ctx, 9));
  te_expr *rj = te_reduce_axis(tt_ctx, "rj", te_int(tt_ctx, 0), te_int(tt_ctx, 11));
  te_tensor *A = tt_placeholder("A", TE_F64, 2, TT_SHAPE(9, 11));
  te_tensor *S =
      TT_NN(te_compute(tt_ctx, "S", 0, NULL, NULL, te_sum(tt_at2(A, ri, rj), 2, TE_EXPRS(ri, rj))));
  tt_buf *a = TT_ALLOC(TE_F64, 9, 11), *got = tt_alloc(TE_F64, 0, NULL);
  tt_buf *ref = tt_alloc(TE_F64, 0, NULL);
  tt_fill(a, 5);
  double acc = 0;
  for (int p = 0; p < 99; p++)
    acc += tt_get(a, p);
  tt_set(ref, 0, acc);
  check_rsched(S, 2, TT_TENSORS(A, S), TT_BUFS(a, got), got, ref, 99);
}

/* B[i] = sum over r in [1, N - 1) of A[i, r] * w[r]; W[i] = sum over r < 3 of A[0, i + r]. */
Test(reduce, axis_with_offset_and_window) {
  enum { M = 6, N = 15 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *r = te_reduce_axis(tt_ctx, "r", te_int(tt_ctx, 1), te_int(tt_ctx, N - 2));
  te_expr *r3 = te_reduce_axis(tt_ctx, "r3", te_int(tt_ctx, 0), te_int(tt_ctx, 3));
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *w = tt_placeholder("w", TE_F32, 1, TT_SHAPE(N));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i),
                                  TE_SUM(te_mul(tt_at2(A, i, r), tt_at1(w, r)), r)));
  te_tensor *W = TT_NN(te_compute(tt_ctx, "W", 1, TE_EXPRS(te_int(tt_ctx, N - 2)), TE_EXPRS(i),
                                  TE_SUM(tt_at2(A, te_int(tt_ctx, 0), te_add(i, r3)), r3)));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *bw = TT_ALLOC(TE_F32, N);
  tt_buf *gb = TT_ALLOC(TE_F32, M), *rb = TT_ALLOC(TE_F32, M);
  tt_buf *gw = TT_ALLOC(TE_F32, N - 2), *rw = TT_ALLOC(TE_F32, N - 2);
  tt_fill(a, 12);
  tt_fill(bw, 13);
  for (int p = 0; p < M; p++) {
    double acc = 0;
    for (int q = 1; q < N - 1; q++)
      acc += tt_get(a, p * N + q) * tt_get(bw, q);
    tt_set(rb, p, acc);
  }
  for (int p = 0; p < N - 2; p++)
    tt_set(rw, p, tt_get(a, p) + tt_get(a, p + 1) + tt_get(a, p + 2));
  check_rsched(B, 3, TT_TENSORS(A, w, B), TT_BUFS(a, bw, gb), gb, rb, N);
  check_rsched(W, 2, TT_TENSORS(A, W), TT_BUFS(a, gw), gw, rw, 3);
}
