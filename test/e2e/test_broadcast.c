/* test_broadcast.c — kernels whose reads are not the identity of the output index: broadcast of
 * row and column vectors and of a 0-d tensor, outer product, 2-D transpose, 3-D permutation,
 * reversal, upsampling by floordiv and a 3-point stencil. Each runs under every generic schedule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(broadcast, .init = tt_setup, .fini = tt_teardown);

#define M 7
#define N 13

Test(broadcast, row_and_column_vectors) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *r = tt_placeholder("r", TE_F32, 1, TT_SHAPE(N));
  te_tensor *c = tt_placeholder("c", TE_F32, 1, TT_SHAPE(M));
  te_expr *body = te_mul(te_add(tt_at2(A, i, j), tt_at1(r, j)), tt_at1(c, i));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                                  TE_EXPRS(i, j), body));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *br = TT_ALLOC(TE_F32, N), *bc = TT_ALLOC(TE_F32, M);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(br, 2);
  tt_fill(bc, 3);
  for (int y = 0; y < M; y++)
    for (int x = 0; x < N; x++)
      tt_set(ref, y * N + x, (tt_get(a, y * N + x) + tt_get(br, x)) * tt_get(bc, y));
  tt_check_all(C, 4, TT_TENSORS(A, r, c, C), TT_BUFS(a, br, bc, got), got, ref, 1);
}

Test(broadcast, outer_product_and_scalar_tensor) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *x = tt_placeholder("x", TE_F64, 1, TT_SHAPE(M));
  te_tensor *y = tt_placeholder("y", TE_F64, 1, TT_SHAPE(N));
  te_tensor *s = TT_NN(te_placeholder(tt_ctx, "s", TE_F64, 0, NULL));
  te_expr *body = te_add(te_mul(tt_at1(x, i), tt_at1(y, j)), te_at(s, 0, NULL));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                                  TE_EXPRS(i, j), body));
  tt_buf *bx = TT_ALLOC(TE_F64, M), *by = TT_ALLOC(TE_F64, N), *bs = tt_alloc(TE_F64, 0, NULL);
  tt_buf *got = TT_ALLOC(TE_F64, M, N), *ref = TT_ALLOC(TE_F64, M, N);
  tt_fill(bx, 4);
  tt_fill(by, 5);
  tt_fill(bs, 6);
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++)
      tt_set(ref, p * N + q, tt_get(bx, p) * tt_get(by, q) + tt_get(bs, 0));
  tt_check_all(C, 4, TT_TENSORS(x, y, s, C), TT_BUFS(bx, by, bs, got), got, ref, 1);
}

Test(broadcast, transpose_2d) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *T = TT_NN(te_compute(tt_ctx, "T", 2, TE_EXPRS(te_int(tt_ctx, N), te_int(tt_ctx, M)),
                                  TE_EXPRS(i, j), tt_at2(A, j, i)));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, N, M), *ref = TT_ALLOC(TE_F32, N, M);
  tt_fill(a, 7);
  for (int p = 0; p < N; p++)
    for (int q = 0; q < M; q++)
      tt_set(ref, p * M + q, tt_get(a, q * N + p));
  tt_check_all(T, 2, TT_TENSORS(A, T), TT_BUFS(a, got), got, ref, 1);
}

/* P[k, i, j] = A[i, j, k] with A of shape 3x5x4. */
Test(broadcast, permute_3d) {
  te_expr *k = te_var(tt_ctx, "k"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_I32, 3, TT_SHAPE(3, 5, 4));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 3,
                                  TE_EXPRS(te_int(tt_ctx, 4), te_int(tt_ctx, 3), te_int(tt_ctx, 5)),
                                  TE_EXPRS(k, i, j), tt_at3(A, i, j, k)));
  tt_buf *a = TT_ALLOC(TE_I32, 3, 5, 4), *got = TT_ALLOC(TE_I32, 4, 3, 5);
  tt_buf *ref = TT_ALLOC(TE_I32, 4, 3, 5);
  tt_fill_range(a, 8, -1000, 1000);
  for (int p = 0; p < 4; p++)
    for (int q = 0; q < 3; q++)
      for (int r = 0; r < 5; r++)
        tt_seti(ref, (p * 3 + q) * 5 + r, tt_geti(a, (q * 5 + r) * 4 + p));
  tt_check_all(P, 2, TT_TENSORS(A, P), TT_BUFS(a, got), got, ref, 1);
}

/* R[i] = A[n - 1 - i] + A[i // 2] (reversal and upsampling). */
Test(broadcast, reverse_and_upsample) {
  enum { L = 29 };
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(L));
  te_expr *rev = tt_at1(A, te_sub(te_int(tt_ctx, L - 1), i));
  te_expr *up = tt_at1(A, te_floordiv(i, te_int(tt_ctx, 2)));
  te_tensor *R =
      TT_NN(te_compute(tt_ctx, "R", 1, TE_EXPRS(te_int(tt_ctx, L)), TE_EXPRS(i), te_add(rev, up)));
  tt_buf *a = TT_ALLOC(TE_F32, L), *got = TT_ALLOC(TE_F32, L), *ref = TT_ALLOC(TE_F32, L);
  tt_fill(a, 9);
  for (int p = 0; p < L; p++)
    tt_set(ref, p, tt_get(a, L - 1 - p) + tt_get(a, p / 2));
  tt_check_all(R, 2, TT_TENSORS(A, R), TT_BUFS(a, got), got, ref, 1);
}

/* S[i, j] = A[i, j] + A[i, j + 1] + A[i + 1, j + 2]: the output is smaller than the input. */
Test(broadcast, stencil_shifted_reads) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *one = te_int(tt_ctx, 1), *two = te_int(tt_ctx, 2);
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *body = te_add(te_add(tt_at2(A, i, j), tt_at2(A, i, te_add(j, one))),
                         tt_at2(A, te_add(i, one), te_add(j, two)));
  te_tensor *S =
      TT_NN(te_compute(tt_ctx, "S", 2, TE_EXPRS(te_int(tt_ctx, M - 1), te_int(tt_ctx, N - 2)),
                       TE_EXPRS(i, j), body));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, M - 1, N - 2);
  tt_buf *ref = TT_ALLOC(TE_F32, M - 1, N - 2);
  tt_fill(a, 10);
  for (int p = 0; p < M - 1; p++)
    for (int q = 0; q < N - 2; q++)
      tt_set(ref, p * (N - 2) + q,
             tt_get(a, p * N + q) + tt_get(a, p * N + q + 1) + tt_get(a, (p + 1) * N + q + 2));
  tt_check_all(S, 2, TT_TENSORS(A, S), TT_BUFS(a, got), got, ref, 1);
}
