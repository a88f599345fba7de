/* test_annotations.c — loop annotations must not change results: parallel outer loops,
 * vectorized inner loops (with tails and with symbolic extents), unrolled loops (constant and
 * tail extents), on element-wise kernels, a row reduction and a tiled matmul.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(annotations, .init = tt_setup, .fini = tt_teardown);

/* C[i, j] = sum_k A[i, k] * B[k, j], 37x53x29: tile 8x16, split k by 4, reorder, then
   parallel i.o, unroll k.i, vectorize j.i. */
Test(annotations, matmul_parallel_unroll_vectorize) {
  enum { M = 37, N = 53, K = 29 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *C = tt_matmul(A, B, M, N, K);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++) {
      double acc = 0;
      for (int r = 0; r < K; r++)
        acc += tt_get(a, p * K + r) * tt_get(b, r * N + q);
      tt_set(ref, p * N + q, acc);
    }
  for (int variant = 0; variant < 4; variant++) {
    tt_note("matmul annotations, variant %d", variant);
    te_schedule *s = tt_schedule1(C);
    te_stage *st = tt_stage(s, C);
    te_iter *io, *jo, *ii, *ji, *ko, *ki;
    TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 8, 16, &io, &jo, &ii, &ji));
    TT_OK(te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki));
    TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}));
    if (variant & 1)
      TT_OK(te_parallel(st, io));
    if (variant & 2)
      TT_OK(te_unroll(st, ki));
    if (variant >= 1)
      TT_OK(te_vectorize(st, ji));
    tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
  }
}

/* C[i] = A[i] * B[i] + A[i] with n symbolic (n = 1, 7, 100, 1000): split 8, vectorize the inner
   loop, parallel the outer one; and split 4 + unroll (guarded copies in the tail). */
Test(annotations, symbolic_vectorize_parallel_unroll) {
  static const int64_t sizes[] = {1, 7, 100, 1000};
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F64, 1, TE_EXPRS(n)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F64, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_add(te_mul(tt_at1(A, i), tt_at1(B, i)), tt_at1(A, i))));
  for (int variant = 0; variant < 2; variant++) {
    te_schedule *s = tt_schedule1(C);
    te_stage *st = tt_stage(s, C);
    te_iter *o, *in;
    TT_OK(te_split(st, te_axis(st, 0), variant ? 4 : 8, &o, &in));
    if (variant) {
      TT_OK(te_unroll(st, in));
    } else {
      TT_OK(te_vectorize(st, in));
      TT_OK(te_parallel(st, o));
    }
    tt_note("%s: build", variant ? "split 4 + unroll" : "split 8 + vectorize + parallel");
    te_module *m = tt_build(s, "vk", 3, TT_TENSORS(A, B, C), 0, NULL);
    for (int t = 0; t < 4; t++) {
      int64_t len = sizes[t];
      tt_note("%s, n = %lld", variant ? "split 4 + unroll" : "split 8 + vectorize + parallel",
              (long long)len);
      tt_buf *a = TT_ALLOC(TE_F64, len), *b = TT_ALLOC(TE_F64, len);
      tt_buf *got = TT_ALLOC(TE_F64, len), *ref = TT_ALLOC(TE_F64, len);
      tt_fill(a, 3);
      tt_fill(b, 4);
      for (int64_t p = 0; p < len; p++)
        tt_set(ref, p, tt_get(a, p) * tt_get(b, p) + tt_get(a, p));
      tt_call(m, "vk", 3, TT_BUFS(a, b, got), 0, NULL);
      tt_assert_close(got, ref, 1);
    }
  }
}

/* R[i] = max_k A[i, k] (i32), 100 x 33: parallel rows, unroll a split of k. */
Test(annotations, reduction_parallel_rows) {
  enum { M = 100, K = 33 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A = tt_placeholder("A", TE_I32, 2, TT_SHAPE(M, K));
  te_tensor *R = TT_NN(te_compute(tt_ctx, "R", 1, TE_EXPRS(te_int(tt_ctx, M)), TE_EXPRS(i),
                                  te_max_r(tt_at2(A, i, k), 1, TE_EXPRS(k))));
  tt_buf *a = TT_ALLOC(TE_I32, M, K), *got = TT_ALLOC(TE_I32, M), *ref = TT_ALLOC(TE_I32, M);
  tt_fill_range(a, 5, -100000, -1);
  for (int p = 0; p < M; p++) {
    int64_t best = tt_geti(a, p * K);
    for (int q = 1; q < K; q++)
      if (tt_geti(a, p * K + q) > best)
        best = tt_geti(a, p * K + q);
    tt_seti(ref, p, best);
  }
  te_schedule *s = tt_schedule1(R);
  te_stage *st = tt_stage(s, R);
  te_iter *ko, *ki;
  TT_OK(te_parallel(st, te_axis(st, 0)));
  TT_OK(te_split(st, te_reduce_iter(st, 0), 8, &ko, &ki));
  TT_OK(te_unroll(st, ki));
  tt_note("parallel rows");
  tt_check(s, 2, TT_TENSORS(A, R), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* Element-wise with a parallel fused loop: C[i, j] = exp(A[i, j]) on 64 x 30. */
Test(annotations, parallel_fused_loop) {
  enum { M = 64, N = 30 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, M), te_int(tt_ctx, N)),
                       TE_EXPRS(i, j), te_call(tt_ctx, "exp", 1, TE_EXPRS(tt_at2(A, i, j)))));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, M, N);
  tt_buf *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 6);
  for (int p = 0; p < M * N; p++)
    tt_set(ref, p, exp(tt_get(a, p)));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *f, *o, *in;
  TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
  TT_OK(te_split(st, f, 16, &o, &in));
  TT_OK(te_parallel(st, o));
  TT_OK(te_vectorize(st, in));
  tt_note("parallel fused");
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* te_pragma prefetch: the loop's reads d iterations ahead are prefetched (visible in the IR and
   as prefetch instructions), and the numbers do not change: a matmul with a tile tail. */
Test(annotations, prefetch_pragma) {
  enum { M = 21, N = 19, K = 37 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *C = tt_matmul(A, B, M, N, K);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *got = TT_ALLOC(TE_F32, M, N);
  tt_buf *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 7);
  tt_fill(b, 8);
  for (int x = 0; x < M; x++)
    for (int y = 0; y < N; y++) {
      double acc = 0;
      for (int z = 0; z < K; z++)
        acc += tt_get(a, x * K + z) * tt_get(b, z * N + y);
      tt_set(ref, x * N + y, acc);
    }
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *ko, *ki;
  TT_OK(te_split(st, te_reduce_iter(st, 0), 8, &ko, &ki));
  TT_OK(te_pragma(st, ko, "prefetch", 2));
  char *ir = TT_NN(te_lower_text(s, 3, TT_TENSORS(A, B, C), 0, NULL));
  cr_assert(strstr(ir, "prefetch(A["), "%s", ir);
  te_free(ir);
  te_module *m = tt_build(s, "pf", 3, TT_TENSORS(A, B, C), 0, NULL);
  const char *as = TT_NN((void *)te_module_source(m, "asm"));
  cr_assert(strstr(as, "prefetch"), "no prefetch instruction in the asm");
  tt_note("prefetch");
  tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
}
