/* test_annotate.c (errors) — misuses of loop annotations, placement and traces: parallel or
 * vectorized reduce axes, an annotation given twice, unrolling a loop without a constant bound,
 * unsupported tails and pragmas, compute_at with a foreign iterator, a malformed trace, and a
 * zero symbolic size at call time.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_annotate, .init = tt_setup, .fini = tt_teardown);

/* Ain: n x 6 (n symbolic) -> Pmid = Ain + 1 -> Rout[i] = sum_k Pmid[i, k]. */
static te_tensor *Ain, *Pmid, *Rout;
static te_schedule *S;
static te_stage *SR, *SP;

static void build(void) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *six = te_int(tt_ctx, 6);
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), six);
  Ain = TT_NN(te_placeholder(tt_ctx, "Ain", TE_F32, 2, TE_EXPRS(n, six)));
  Pmid = TT_NN(te_compute(tt_ctx, "Pmid", 2, TE_EXPRS(n, six), TE_EXPRS(i, j),
                          te_add(tt_at2(Ain, i, j), te_float(tt_ctx, TE_F32, 1))));
  Rout =
      TT_NN(te_compute(tt_ctx, "Rout", 1, TE_EXPRS(n), TE_EXPRS(i), TE_SUM(tt_at2(Pmid, i, k), k)));
  S = tt_schedule1(Rout);
  SR = tt_stage(S, Rout);
  SP = tt_stage(S, Pmid);
  TT_NO_ERR(tt_ctx);
}

Test(err_annotate, parallel_reduce_axis) {
  build();
  cr_assert_eq(te_parallel(SR, te_reduce_iter(SR, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_parallel", "Rout", "'k'");
}

Test(err_annotate, vectorize_reduce_axis) {
  build();
  cr_assert_eq(te_vectorize(SR, te_reduce_iter(SR, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize", "Rout", "'k'");
}

Test(err_annotate, annotation_given_twice) {
  build();
  te_iter *i = te_axis(SP, 0);
  TT_OK(te_parallel(SP, i));
  cr_assert_eq(te_vectorize(SP, i), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize", "Pmid", "'i'");
}

Test(err_annotate, annotate_non_leaf) {
  build();
  te_iter *j = te_axis(SP, 1), *o, *in;
  TT_OK(te_split(SP, j, 2, &o, &in));
  cr_assert_eq(te_unroll(SP, j), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_unroll", "Pmid", "'j'");
}

Test(err_annotate, bind_reduce_axis) {
  build();
  cr_assert_eq(te_bind(SR, te_reduce_iter(SR, 0), TE_THREAD_X), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_bind", "Rout");
}

/* The row loop has the symbolic extent n: it cannot be unrolled; te_build says so. */
Test(err_annotate, unroll_symbolic_extent_at_build) {
  build();
  TT_OK(te_unroll(SR, te_axis(SR, 0)));
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 2, TT_TENSORS(Ain, Rout), 0, NULL, tt_target(), &m),
               TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_unroll", "'i'");
}

/* Round-up tails write past the domain: refused on reduction axes (they would add terms that
   are not in the domain); outputs are refused in test_schedule_multistage.c. */
Test(err_annotate, set_tail_round_up_reduce_axis) {
  build();
  cr_assert_eq(te_set_tail(SR, te_reduce_iter(SR, 0), TE_TAIL_ROUND_UP), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_set_tail", "Rout", "reduction axis");
}

Test(err_annotate, pragma_unknown_key) {
  build();
  cr_assert_eq(te_pragma(SP, te_axis(SP, 0), "no_such_pragma", 1), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_pragma", "no_such_pragma");
}

Test(err_annotate, compute_at_foreign_iter) {
  build();
  cr_assert_eq(te_compute_at(SP, SR, te_axis(SP, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "belongs to stage");
}

Test(err_annotate, compute_at_null_iter) {
  build();
  cr_assert_eq(te_compute_at(SP, SR, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute_at");
}

Test(err_annotate, replay_malformed_trace) {
  build();
  cr_assert_eq(te_schedule_replay(S, "this is not a trace ((("), TE_ERR_PARSE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_PARSE, "te_schedule_replay");
}

/* A symbolic size of 0 at call time is refused (extents are >= 1). */
Test(err_annotate, zero_symbolic_size_at_call) {
  build();
  te_module *m = tt_build(S, "k", 2, TT_TENSORS(Ain, Rout), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, 0, 6), *r = TT_ALLOC(TE_F32, 0);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(a, r), dl);
  cr_assert_eq(te_module_call(m, "k", 2, dl, 0, NULL), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Ain", "'n'");
}
