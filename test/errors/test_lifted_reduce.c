/* test_lifted_reduce.c (errors) — misuses of reductions inside expressions: a reduce axis used
 * outside every reduction over it, a tuple reduction (te_reduce of two values) inside an
 * expression, a nested reduction whose domain depends on a variable bound around it, asking for
 * a lifted reduction that does not exist, inlining or vectorizing the reduce axis of a lifted
 * stage, and placing it at a loop of a stage that does not read it. Messages name the call, the
 * tensor or stage and the rule.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_lifted_reduce, .init = tt_setup, .fini = tt_teardown);

static te_expr *I, *K, *L;
static te_tensor *X;

static void vars(void) {
  I = te_var(tt_ctx, "i");
  K = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 6));
  L = te_reduce_axis(tt_ctx, "l", te_int(tt_ctx, 0), te_int(tt_ctx, 6));
  X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(6, 6));
}

static te_tensor *compute1(const char *name, te_expr *body) {
  return te_compute(tt_ctx, name, 1, TE_EXPRS(te_int(tt_ctx, 6)), TE_EXPRS(I), body);
}

Test(err_lifted_reduce, axis_outside_its_reduction) {
  vars();
  te_expr *body = te_add(tt_at2(X, I, K), TE_SUM(tt_at2(X, I, K), K));
  cr_assert_null(compute1("bad", body));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute", "'bad'", "reduce axis 'k'",
                "outside a reduction over it");
  te_clear_error(tt_ctx);
  /* nested: l is reduced by the inner sum only; the outer sum uses it outside */
  te_expr *inner = TE_SUM(tt_at2(X, K, L), L);
  body = TE_SUM(te_mul(tt_at2(X, I, L), inner), K);
  cr_assert_null(compute1("bad2", body));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "'bad2'", "reduce axis 'l'");
}

Test(err_lifted_reduce, tuple_reduction_inside_expression) {
  vars();
  te_expr *li = te_param(tt_ctx, "li", TE_I64), *lv = te_param(tt_ctx, "lv", TE_F32);
  te_expr *ri = te_param(tt_ctx, "ri", TE_I64), *rv = te_param(tt_ctx, "rv", TE_F32);
  te_expr *res[2] = {te_select(te_gt(rv, lv), ri, li), te_max(lv, rv)};
  te_expr *id[2] = {te_int(tt_ctx, -1), te_const(tt_ctx, TE_F32, -1e30)};
  te_reducer *r = TT_NN(te_reducer_new(tt_ctx, 2, TE_EXPRS(li, lv), TE_EXPRS(ri, rv), res, id));
  te_expr *out[2];
  TT_OK(te_reduce(r, 2, TE_EXPRS(K, tt_at2(X, I, K)), 1, &K, NULL, out));
  cr_assert_null(compute1("bad", te_add(out[0], te_int(tt_ctx, 1))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "'bad'", "reduction of 2 values",
                "must be the whole body");
}

Test(err_lifted_reduce, nested_domain_depends_on_outer_axis) {
  vars();
  te_expr *tri = te_reduce_axis(tt_ctx, "t", te_int(tt_ctx, 0), te_add(K, te_int(tt_ctx, 1)));
  te_expr *body = TE_SUM(te_mul(tt_at2(X, I, K), TE_SUM(tt_at2(X, K, tri), tri)), K);
  cr_assert_null(compute1("tri", body));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "'tri'", "reduce axis 't'", "depends on a variable");
}

Test(err_lifted_reduce, lookup) {
  vars();
  te_tensor *P = TT_NN(compute1("P", te_mul(tt_at2(X, I, te_int(tt_ctx, 0)), te_int(tt_ctx, 2))));
  cr_assert_eq(te_lifted_reduction_count(P), 0);
  cr_assert_eq(te_lifted_reduction_count(X), 0);
  cr_assert_eq(te_lifted_reduction_count(NULL), -1);
  cr_assert_null(te_lifted_reduction(P, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_lifted_reduction", "'P'", "0 reductions");
  te_clear_error(tt_ctx);
  te_tensor *C = TT_NN(compute1("C", te_add(tt_at2(X, I, I), TE_SUM(tt_at2(X, I, K), K))));
  cr_assert_null(te_lifted_reduction(C, 1));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_lifted_reduction", "'C'", "asked for 1");
  te_clear_error(tt_ctx);
  cr_assert_null(te_lifted_reduction(C, -1));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "asked for -1");
  te_clear_error(tt_ctx);
  /* a schedule that does not hold C */
  te_schedule *sp = tt_schedule1(P);
  cr_assert_null(te_lifted_reduction_stage(sp, C, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_stage_of", "C_red0", "not part of this schedule");
  te_clear_error(tt_ctx);
  cr_assert_null(te_lifted_reduction_stage(sp, NULL, 0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_lifted_reduction_stage");
}

Test(err_lifted_reduce, scheduling_the_lifted_stage) {
  vars();
  te_tensor *C = TT_NN(compute1("C", te_add(tt_at2(X, I, I), TE_SUM(tt_at2(X, I, K), K))));
  te_tensor *Q = TT_NN(compute1("Q", te_mul(tt_at2(X, I, I), te_int(tt_ctx, 3))));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 2, TT_TENSORS(C, Q)));
  te_stage *r = TT_NN(te_lifted_reduction_stage(s, C, 0));
  cr_assert_eq(te_compute_inline(r), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_inline", "'C_red0'", "is a reduction");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_vectorize(r, te_reduce_iter(r, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "C_red0", "k");
  te_clear_error(tt_ctx);
  te_stage *q = tt_stage(s, Q);
  cr_assert_eq(te_compute_at(r, q, te_axis(q, 0)), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_compute_at", "'Q' does not read stage 'C_red0'");
}
