/* test_storage_order.c — te_reorder_storage: a buffer laid out in another order than its axes
 * computes the same values, its elements are where the order says (the lowered IR's flat
 * indices), and a vector along a non-last axis becomes contiguous.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(storage_order, .init = tt_setup, .fini = tt_teardown);

enum { M = 12, N = 20, K = 9 };

static te_tensor *A, *B, *C;
static tt_buf *a, *b, *got, *ref;

static void matmul(void) {
  A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  C = tt_matmul(A, B, M, N, K);
  a = TT_ALLOC(TE_F32, M, K);
  b = TT_ALLOC(TE_F32, K, N);
  got = TT_ALLOC(TE_F32, M, N);
  ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
}

/* The local accumulator of a 4 x 8 tile stored column-major (j outermost): the vector along i
   (4 rows) is contiguous in it, so its loads and stores are ramps of stride 1. */
Test(storage_order, local_block_vectorized_along_rows) {
  matmul();
  te_schedule *s = tt_schedule1(C);
  te_tensor *cl = NULL;
  TT_OK(te_cache_write(s, C, TE_SCOPE_LOCAL, &cl));
  te_stage *sc = tt_stage(s, C), *sl = tt_stage(s, cl);
  te_iter *io, *jo, *ii, *ji;
  TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 8, &io, &jo, &ii, &ji));
  TT_OK(te_compute_at(sl, sc, jo));
  TT_OK(te_reorder_storage(sl, 2, (te_iter *const[]){te_axis(sl, 1), te_axis(sl, 0)}));
  TT_OK(
      te_reorder(sl, 3, (te_iter *const[]){te_reduce_iter(sl, 0), te_axis(sl, 1), te_axis(sl, 0)}));
  TT_OK(te_vectorize(sl, te_axis(sl, 0)));
  char *trace = te_schedule_trace(s);
  cr_assert(strstr(trace, "reorder_storage C_local j i\n"), "%s", trace);
  te_free(trace);
  char *ir = te_lower_text(s, 3, TT_TENSORS(A, B, C), 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  /* C_local is 8 columns of 4: element (i, j) at j * 4 + i, so every vector access to it is a
     ramp of stride 1 (ramp(j*4 ..., 1, 4)) and the copy out reads C_local[j.i*4 + i.i] */
  int vectors = 0;
  for (const char *p = strstr(ir, "C_local[ramp("); p; p = strstr(p + 1, "C_local[ramp(")) {
    const char *end = strchr(p, ']');
    cr_assert(end && end - p > 8 && !strncmp(end - 7, ", 1, 4)", 7), "stride: %.40s\n%s", p, ir);
    cr_assert(!strncmp(p, "C_local[ramp(j*4", 16), "%.40s\n%s", p, ir);
    vectors++;
  }
  cr_assert_geq(vectors, 3, "%s", ir);
  cr_assert(strstr(ir, "= C_local[j.i*4 + i.i]"), "%s", ir);
  te_free(ir);
  tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
}

/* An intermediate stage at root stored transposed, and the order replayed from the trace. */
Test(storage_order, intermediate_transposed_and_replayed) {
  enum { R = 7, S = 10 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(R, S));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, S)),
                                  TE_EXPRS(i, j), te_mul(tt_at2(X, i, j), tt_at2(X, i, j))));
  te_tensor *Q =
      TT_NN(te_compute(tt_ctx, "Q", 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, S)),
                       TE_EXPRS(i, j), te_add(tt_at2(P, i, j), te_float(tt_ctx, TE_F32, 1.0))));
  tt_buf *x = TT_ALLOC(TE_F32, R, S), *q = TT_ALLOC(TE_F32, R, S), *r = TT_ALLOC(TE_F32, R, S);
  tt_fill(x, 3);
  for (int n = 0; n < R * S; n++)
    tt_set(r, n, tt_get(x, n) * tt_get(x, n) + 1.0);
  te_schedule *s = tt_schedule1(Q);
  te_stage *sp = tt_stage(s, P);
  TT_OK(te_reorder_storage(sp, 2, (te_iter *const[]){te_axis(sp, 1), te_axis(sp, 0)}));
  char *ir = te_lower_text(s, 2, TT_TENSORS(X, Q), 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  cr_assert(strstr(ir, "P[j*7 + i] = "), "P is stored column-major:\n%s", ir);
  tt_check(s, 2, TT_TENSORS(X, Q), TT_BUFS(x, q), 0, NULL, NULL, q, r, 1);

  char *trace = te_schedule_trace(s);
  te_schedule *again = tt_schedule1(Q);
  TT_OK(te_schedule_replay(again, trace));
  char *ir2 = te_lower_text(again, 2, TT_TENSORS(X, Q), 0, NULL);
  cr_assert_str_eq(ir2, ir);
  te_free(ir2);
  te_free(ir);
  te_free(trace);
}

/* B copied whole (te_cache_read) into panels of 8 columns, Bp[j / 8][k][j % 8], as a BLAS packs
   it: N = 20 columns make 3 panels, the last padded (the copy writes the 4 columns that exist).
   The copy's loops are split the same way; the matmul reads the panels, and the trace replays
   to the same IR. */
Test(storage_order, blocked_panels_of_a_copied_input) {
  matmul();
  te_schedule *s = tt_schedule1(C);
  te_tensor *bc = NULL;
  te_stage *sc = tt_stage(s, C);
  TT_OK(te_cache_read(s, B, TE_SCOPE_GLOBAL, 1, &sc, &bc));
  te_stage *sb = tt_stage(s, bc);
  te_iter *jo, *ji;
  TT_OK(te_split(sb, te_axis(sb, 1), 8, &jo, &ji));
  TT_OK(te_reorder_storage(sb, 3, (te_iter *const[]){jo, te_axis(sb, 0), ji}));
  char *trace = te_schedule_trace(s);
  cr_assert(strstr(trace, "reorder_storage B_global ax1.o ax0 ax1.i\n"), "%s", trace);
  char *ir = te_lower_text(s, 3, TT_TENSORS(A, B, C), 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  cr_assert(strstr(ir, "allocate B_global[f32 * 216]"), "3 panels of 9 x 8:\n%s", ir);
  cr_assert(strstr(ir, "B_global[ax1.o*72 + ax0*8 + ax1.i] = B[ax0*20 + ax1.o*8 + ax1.i]"), "%s",
            ir);
  cr_assert(strstr(ir, "B_global[j//8*72 + k*8 + j%8]"), "%s", ir);
  tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);

  te_schedule *again = tt_schedule1(C);
  TT_OK(te_schedule_replay(again, trace));
  char *ir2 = te_lower_text(again, 3, TT_TENSORS(A, B, C), 0, NULL);
  cr_assert_str_eq(ir2, ir);
  te_free(ir2);
  te_free(ir);
  te_free(trace);
}

/* The vpdpbusd layout [k / 4][j][k % 4] of a block of B copied at an outer reduce loop of a
   tiled local accumulator, with K = 9 (the last group of k padded) and a vector along j: the
   copy's split is kept in its loops, the reader's index is the layout's. */
Test(storage_order, blocked_groups_of_k_in_a_local_block) {
  matmul();
  te_schedule *s = tt_schedule1(C);
  te_tensor *cl = NULL, *bl = NULL;
  TT_OK(te_cache_write(s, C, TE_SCOPE_LOCAL, &cl));
  te_stage *sc = tt_stage(s, C), *sl = tt_stage(s, cl);
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  TT_OK(te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), 4, 8, &io, &jo, &ii, &ji));
  TT_OK(te_compute_at(sl, sc, jo));
  TT_OK(te_split(sl, te_reduce_iter(sl, 0), 6, &ko, &ki));
  TT_OK(te_reorder(sl, 4, (te_iter *const[]){ko, te_axis(sl, 0), ki, te_axis(sl, 1)}));
  TT_OK(te_vectorize(sl, te_axis(sl, 1)));
  TT_OK(te_cache_read(s, B, TE_SCOPE_LOCAL, 1, &sl, &bl));
  te_stage *sb = tt_stage(s, bl);
  TT_OK(te_compute_at(sb, sl, ko));
  te_iter *go, *gi;
  TT_OK(te_split(sb, te_axis(sb, 0), 4, &go, &gi));
  TT_OK(te_reorder_storage(sb, 3, (te_iter *const[]){go, te_axis(sb, 1), gi}));
  char *ir = te_lower_text(s, 3, TT_TENSORS(A, B, C), 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  /* element (k, j) of the block at k.o, j.o: ((k - 6 k.o) / 4 * 8 + j - 8 j.o) * 4 + k % 4, read
     along j with stride 4 */
  cr_assert(strstr(ir, "B_local[ax1*4 + ax0.i - j.o*32] = B[ax0.i*20 + ax1]"), "%s", ir);
  cr_assert(strstr(ir, "B_local[ramp(k.i//4*32 + k.i%4, 4, 8)]"), "%s", ir);
  tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
  te_free(ir);
}
