/* test_block_tails.c — a parallel row-block loop whose last block is short (the block size does
 * not divide the rows), with an input packed per block and zero-padded past the last row
 * (bench/sgemm.c's schedule at small sizes):
 *   - the results equal plain C at 1, 2 and 3 threads;
 *   - the short block runs inside the parallel loop (loop_partition peels it into a branch of
 *     the loop's body, not into a serial loop after it, where it would run alone), and only
 *     the statements with guards are versioned (the packing is not compiled twice);
 *   - the packed block's buffer has a full block's size, not the whole packed tensor's (bound
 *     inference takes the tail's clamp off the block's extent).
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(block_tails, .init = tt_setup, .fini = tt_teardown);

enum { M = 50, N = 24, K = 13, MR = 6, MC = 18, NR = 8 }; /* 3 blocks of 18 rows: 18, 18, 14 */
enum { GROUPS = (M + MR - 1) / MR };                      /* 9 groups of 6 rows, the last 2 */

typedef struct kernel {
  te_tensor *A, *B, *C, *Ap;
  te_schedule *s;
} kernel;

/* Ap[q, k, l] = A[q*6 + l, k] for rows < M, else 0 (the row clamped: te may evaluate both
   sides of a select). C = A x B reading Ap. C tiled MC x NR, rows parallel; Ap computed per
   row block; a local accumulator per tile, 6 rows unrolled, the tile's columns vectorized. */
static kernel define(void) {
  kernel k;
  te_ctx *c = tt_ctx;
  te_expr *i = te_var(c, "i"), *j = te_var(c, "j");
  te_expr *r = te_reduce_axis(c, "k", te_int(c, 0), te_int(c, K));
  k.A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  k.B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *q = te_var(c, "q"), *qk = te_var(c, "qk"), *l = te_var(c, "l");
  te_expr *row = te_add(te_mul(q, te_int(c, MR)), l);
  te_expr *packed =
      te_select(te_lt(row, te_int(c, M)), tt_at2(k.A, te_min(row, te_int(c, M - 1)), qk),
                te_float(c, TE_F32, 0.0));
  k.Ap = TT_NN(te_compute(c, "Ap", 3, TE_EXPRS(te_int(c, GROUPS), te_int(c, K), te_int(c, MR)),
                          TE_EXPRS(q, qk, l), packed));
  te_expr *a = tt_at3(k.Ap, te_floordiv(i, te_int(c, MR)), r, te_floormod(i, te_int(c, MR)));
  k.C = TT_NN(te_compute(c, "C", 2, TE_EXPRS(te_int(c, M), te_int(c, N)), TE_EXPRS(i, j),
                         TE_SUM(te_mul(a, tt_at2(k.B, r, j)), r)));
  k.s = tt_schedule1(k.C);
  te_tensor *cl = NULL;
  TT_OK(te_cache_write(k.s, k.C, TE_SCOPE_LOCAL, &cl));
  te_stage *cs = tt_stage(k.s, k.C), *ls = tt_stage(k.s, cl);
  te_iter *io, *jo, *ii, *ji, *lm, *li;
  TT_OK(te_tile(cs, te_axis(cs, 0), te_axis(cs, 1), MC, NR, &io, &jo, &ii, &ji));
  TT_OK(te_compute_at(ls, cs, jo));
  TT_OK(te_split(ls, te_axis(ls, 0), MR, &lm, &li));
  TT_OK(te_reorder(ls, 4, (te_iter *const[]){te_reduce_iter(ls, 0), lm, li, te_axis(ls, 1)}));
  TT_OK(te_unroll(ls, li));
  TT_OK(te_vectorize(ls, te_axis(ls, 1)));
  TT_OK(te_parallel(cs, io));
  TT_OK(te_compute_at(tt_stage(k.s, k.Ap), cs, io));
  return k;
}

static int count(const char *text, const char *what) {
  int n = 0;
  for (const char *p = strstr(text, what); p; p = strstr(p + 1, what))
    n++;
  return n;
}

Test(block_tails, short_block_runs_in_the_parallel_loop) {
  kernel k = define();
  te_tensor *const args[] = {k.A, k.B, k.C};
  char *ir = te_lower_text(k.s, 3, args, 0, NULL);
  cr_assert_not_null(ir, "%s", te_last_error(tt_ctx));
  /* one parallel loop over the 3 blocks, its body branching to the short block */
  cr_assert_eq(count(ir, "parallel"), 1, "%s", ir);
  cr_assert(strstr(ir, "for (i.o, 0, 3) parallel {\n"), "%s", ir);
  cr_assert(strstr(ir, "if (i.o < 2) {"), "%s", ir);
  /* a block of Ap is 3 groups of 6 rows: 3 * 13 * 6 floats; packed by one nest for both the
     full blocks and the short one (only the statements with guards are versioned) */
  cr_assert_eq(count(ir, "allocate Ap[f32 * 234]"), 1, "%s", ir);
  cr_assert_eq(count(ir, "produce Ap"), 1, "%s", ir);
  te_free(ir);
}

Test(block_tails, results_at_several_thread_counts) {
  kernel k = define();
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
  for (int threads = 1; threads <= 3; threads++) {
    te_set_num_threads(threads);
    tt_note("%d threads", threads);
    tt_check(k.s, 3, (te_tensor *const[]){k.A, k.B, k.C}, TT_BUFS(a, b, got), 0, NULL, NULL, got,
             ref, K);
  }
  te_set_num_threads(0);
}
