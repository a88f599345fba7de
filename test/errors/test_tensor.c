/* test_tensor.c (errors) — misuses of placeholders, computes, reduce axes, reductions and te_at:
 * bad ranks and extents, float extents and indices, wrong index counts, duplicate or non-var
 * compute variables, reductions inside arithmetic (now lifted), reduce axes used outside a
 * reduction, unsupported dtypes.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_tensor, .init = tt_setup, .fini = tt_teardown);

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

static te_tensor *A2(void) { return tt_placeholder("Ain", TE_F32, 2, TT_SHAPE(4, 5)); }

Test(err_tensor, placeholder_null_name) {
  cr_assert_null(te_placeholder(tt_ctx, NULL, TE_F32, 1, TE_EXPRS(I(4))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_placeholder");
}

/* Choice: a rank outside [0, TE_MAX_DIMS] is TE_ERR_SHAPE (a wrong rank of a tensor). */
Test(err_tensor, placeholder_negative_ndim) {
  cr_assert_null(te_placeholder(tt_ctx, "Aneg", TE_F32, -1, TE_EXPRS(I(4))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_placeholder", "Aneg");
}

Test(err_tensor, placeholder_ndim_above_max) {
  te_expr *sh[TE_MAX_DIMS + 1];
  for (int d = 0; d <= TE_MAX_DIMS; d++)
    sh[d] = I(2);
  cr_assert_null(te_placeholder(tt_ctx, "Abig", TE_F32, TE_MAX_DIMS + 1, sh));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_placeholder", "Abig");
}

/* Choice: a constant extent <= 0 is TE_ERR_SHAPE. */
Test(err_tensor, placeholder_zero_extent) {
  cr_assert_null(te_placeholder(tt_ctx, "Azero", TE_F32, 2, TE_EXPRS(I(3), I(0))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_placeholder", "Azero");
}

Test(err_tensor, placeholder_negative_extent) {
  cr_assert_null(te_placeholder(tt_ctx, "Aminus", TE_F32, 1, TE_EXPRS(I(-4))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_placeholder", "Aminus");
}

Test(err_tensor, placeholder_float_extent) {
  te_expr *f = te_float(tt_ctx, TE_F32, 4.0);
  cr_assert_null(te_placeholder(tt_ctx, "Afloat", TE_F32, 1, TE_EXPRS(f)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_placeholder", "Afloat");
}

Test(err_tensor, placeholder_null_extent) {
  cr_assert_null(te_placeholder(tt_ctx, "Anull", TE_F32, 2, TE_EXPRS(I(3), NULL)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_placeholder", "Anull");
}

Test(err_tensor, placeholder_f8_unsupported) {
  cr_assert_null(te_placeholder(tt_ctx, "Aeight", TE_DTYPE(kDLFloat, 8), 1, TE_EXPRS(I(4))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_placeholder", "Aeight", "f8");
}

/* Header: "The count must equal the rank"; choice: TE_ERR_SHAPE. */
Test(err_tensor, at_wrong_index_count) {
  te_tensor *A = A2();
  cr_assert_null(te_at(A, 1, TE_EXPRS(te_var(tt_ctx, "i"))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_at", "Ain");
}

Test(err_tensor, at_float_index) {
  te_tensor *A = A2();
  te_expr *f = te_float(tt_ctx, TE_F32, 1.0);
  cr_assert_null(te_at(A, 2, TE_EXPRS(te_var(tt_ctx, "i"), f)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_at", "Ain");
}

Test(err_tensor, compute_duplicate_vars) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  cr_assert_null(
      te_compute(tt_ctx, "Cdup", 2, TE_EXPRS(I(4), I(5)), TE_EXPRS(i, i), tt_at2(A, i, i)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute", "Cdup");
}

Test(err_tensor, compute_non_var_in_vars) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *ip1 = te_add(i, I(1));
  cr_assert_null(
      te_compute(tt_ctx, "Cnv", 2, TE_EXPRS(I(4), I(5)), TE_EXPRS(i, ip1), tt_at2(A, i, i)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute", "Cnv");
}

Test(err_tensor, compute_param_as_var) {
  te_expr *p = te_param(tt_ctx, "p", TE_I64);
  cr_assert_null(te_compute(tt_ctx, "Cparam", 1, TE_EXPRS(I(4)), TE_EXPRS(p), p));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute", "Cparam");
}

Test(err_tensor, compute_ndim_above_max) {
  te_expr *sh[TE_MAX_DIMS + 1], *vars[TE_MAX_DIMS + 1];
  for (int d = 0; d <= TE_MAX_DIMS; d++) {
    sh[d] = I(2);
    vars[d] = te_var(tt_ctx, "v");
  }
  cr_assert_null(te_compute(tt_ctx, "Cbig", TE_MAX_DIMS + 1, sh, vars, I(1)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_compute", "Cbig");
}

Test(err_tensor, compute_zero_extent) {
  te_expr *i = te_var(tt_ctx, "i");
  cr_assert_null(te_compute(tt_ctx, "Czero", 1, TE_EXPRS(I(0)), TE_EXPRS(i), te_cast(TE_F32, i)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_compute", "Czero");
}

/* A reduction inside arithmetic is no error any more: sum(...) + 1 is lifted into its own stage
   (te_lifted_reduction; its misuses are in test_lifted_reduce.c). */
Test(err_tensor, reduction_nested_in_arithmetic) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(5));
  te_expr *body = te_add(TE_SUM(tt_at2(A, i, k), k), te_float(tt_ctx, TE_F32, 1));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "Cnest", 1, TE_EXPRS(I(4)), TE_EXPRS(i), body));
  cr_assert_eq(te_lifted_reduction_count(C), 1);
  TT_NO_ERR(tt_ctx);
}

Test(err_tensor, reduce_axis_outside_reduction) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "kout", I(0), I(5));
  cr_assert_null(te_compute(tt_ctx, "Cfree", 1, TE_EXPRS(I(4)), TE_EXPRS(i), tt_at2(A, i, k)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_compute", "kout");
}

/* Choice: a reduce axis extent <= 0 is TE_ERR_SHAPE, like tensor extents. */
Test(err_tensor, reduce_axis_zero_extent) {
  cr_assert_null(te_reduce_axis(tt_ctx, "kz", I(0), I(0)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_reduce_axis", "kz");
}

Test(err_tensor, reduce_axis_negative_extent) {
  cr_assert_null(te_reduce_axis(tt_ctx, "kn", I(0), I(-2)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_reduce_axis", "kn");
}

Test(err_tensor, reduce_axis_float_min) {
  cr_assert_null(te_reduce_axis(tt_ctx, "kf", te_float(tt_ctx, TE_F64, 0.0), I(3)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_reduce_axis", "kf");
}

Test(err_tensor, sum_over_plain_var) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "jplain");
  cr_assert_null(te_sum(tt_at2(A, i, j), 1, TE_EXPRS(j)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_sum", "not a reduce axis");
}

Test(err_tensor, sum_without_axes) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  cr_assert_null(te_sum(tt_at2(A, i, i), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_sum");
}

Test(err_tensor, sum_of_bool) {
  te_tensor *A = A2();
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(5));
  te_expr *b = te_lt(tt_at2(A, i, k), te_float(tt_ctx, TE_F32, 0));
  cr_assert_null(te_sum(b, 1, TE_EXPRS(k)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_sum", "bool");
}
