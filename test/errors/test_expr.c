/* test_expr.c (errors) — misuses of the expression constructors: NULL context and operands, bad
 * variable names, dtype mismatches, integer-only and float-only operations, unknown math calls
 * and wrong arity, non-bool conditions, unsupported dtypes, expressions of two contexts. Each
 * asserts the exact te_status and a message substring naming the function and the culprit.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_expr, .init = tt_setup, .fini = tt_teardown);

static te_expr *f32p(const char *name) { return TT_NN(te_param(tt_ctx, name, TE_F32)); }
static te_expr *i32p(const char *name) { return TT_NN(te_param(tt_ctx, name, TE_I32)); }

/* Every constructor that takes a context returns NULL for a NULL one, without crashing. */
Test(err_expr, null_context_everywhere) {
  te_expr *n = te_int(tt_ctx, 4);
  cr_assert_null(te_int(NULL, 1));
  cr_assert_null(te_float(NULL, TE_F32, 1.0));
  cr_assert_null(te_const(NULL, TE_I32, 1.0));
  cr_assert_null(te_var(NULL, "x"));
  cr_assert_null(te_param(NULL, "x", TE_F32));
  cr_assert_null(te_call(NULL, "exp", 1, TE_EXPRS(te_float(tt_ctx, TE_F32, 1))));
  cr_assert_null(te_placeholder(NULL, "A", TE_F32, 1, TE_EXPRS(n)));
  cr_assert_null(te_reduce_axis(NULL, "k", te_int(tt_ctx, 0), n));
  cr_assert_null(te_compute(NULL, "C", 1, TE_EXPRS(n), TE_EXPRS(te_var(tt_ctx, "i")), n));
  cr_assert_null(te_schedule_new(NULL, 0, NULL));
  cr_assert_null(te_target_parse(NULL, "llvm"));
  /* NULL-only operands: no context to report on, just NULL */
  cr_assert_null(te_add(NULL, NULL));
  cr_assert_null(te_neg(NULL));
  cr_assert_null(te_select(NULL, NULL, NULL));
  cr_assert_null(te_cast(TE_F32, NULL));
  cr_assert_null(te_at(NULL, 0, NULL));
  cr_assert_null(te_sum(NULL, 0, NULL));
  cr_assert_eq(te_expr_dtype(NULL).bits, 0);
  cr_assert_null(te_expr_ctx(NULL));
  cr_assert_null(te_expr_text(NULL));
  TT_NO_ERR(tt_ctx);
}

/* expr.h: a constructor "returns NULL without a new message when an operand is NULL". */
/* A NULL operand with nothing recorded is the caller's mistake: TE_ERR_INVALID_ARG naming the
   function and the operand (core.h). */
Test(err_expr, null_operand_is_invalid_arg) {
  te_expr *x = f32p("x");
  cr_assert_null(te_add(x, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_add: right operand is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_mul(NULL, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_mul: left operand is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_select(te_lt(x, x), NULL, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_select: true value is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_if_then_else(NULL, x, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_if_then_else: condition is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_call(tt_ctx, "pow", 2, TE_EXPRS(x, NULL)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_call: 'pow': argument 1 is NULL");
}

/* A NULL operand after a failure is that failure's result: no new message. */
Test(err_expr, null_operand_after_failure_keeps_the_first_message) {
  te_expr *x = f32p("x");
  te_expr *bad = te_call(tt_ctx, "nosuchfn", 1, TE_EXPRS(x));
  cr_assert_null(bad);
  cr_assert_null(te_add(x, bad));
  cr_assert_null(te_select(te_lt(x, x), bad, x));
  cr_assert_null(te_call(tt_ctx, "pow", 2, TE_EXPRS(x, bad)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_call: unknown function 'nosuchfn'");
}

/* No operand carries a context: nothing to record on. */
Test(err_expr, all_operands_null_records_nothing) {
  cr_assert_null(te_add(NULL, NULL));
  cr_assert_null(te_neg(NULL));
  cr_assert_null(te_cast(TE_F32, NULL));
  TT_NO_ERR(tt_ctx);
}

Test(err_expr, var_null_name) {
  cr_assert_null(te_var(tt_ctx, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_var");
}

Test(err_expr, var_name_not_identifier) {
  cr_assert_null(te_var(tt_ctx, "9lives"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_var", "9lives");
}

Test(err_expr, param_name_with_space) {
  cr_assert_null(te_param(tt_ctx, "al pha", TE_F32));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_param", "al pha");
}

/* f16 and bf16 are dtypes like the others; an 8-bit float is not one te has. */
Test(err_expr, param_f8_unsupported) {
  cr_assert_null(te_param(tt_ctx, "h", TE_DTYPE(kDLFloat, 8)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_param", "f8");
}

Test(err_expr, const_bf32_unsupported) {
  cr_assert_null(te_const(tt_ctx, TE_DTYPE(kDLBfloat, 32), 1.0));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_const");
}

Test(err_expr, cast_to_f8_unsupported) {
  cr_assert_null(te_cast(TE_DTYPE(kDLFloat, 8), f32p("x")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_cast", "f8");
}

Test(err_expr, half_params_consts_casts_accepted) {
  cr_assert_not_null(te_param(tt_ctx, "h", TE_F16));
  te_expr *c = te_const(tt_ctx, TE_BF16, 1.0);
  cr_assert_not_null(c);
  cr_assert(te_dtype_eq(te_expr_dtype(c), TE_BF16));
  cr_assert_not_null(te_cast(TE_F16, f32p("x")));
  TT_NO_ERR(tt_ctx);
}

/* Choice: te_float with an integer dtype is TE_ERR_TYPE. */
Test(err_expr, float_immediate_of_int_dtype) {
  cr_assert_null(te_float(tt_ctx, TE_I32, 1.5));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_float");
}

Test(err_expr, add_f32_and_bool) {
  te_expr *x = f32p("x");
  te_expr *cond = te_lt(x, te_float(tt_ctx, TE_F32, 0));
  TT_NN(cond);
  cr_assert_null(te_add(x, cond));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_add", "bool");
}

Test(err_expr, div_on_ints) {
  cr_assert_null(te_div(i32p("a"), i32p("b")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_div");
}

Test(err_expr, floordiv_on_floats) {
  cr_assert_null(te_floordiv(f32p("x"), f32p("y")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_floordiv");
}

Test(err_expr, floormod_on_float_and_int) {
  cr_assert_null(te_floormod(i32p("a"), f32p("y")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_floormod");
}

Test(err_expr, call_unknown_name) {
  cr_assert_null(te_call(tt_ctx, "expo", 1, TE_EXPRS(f32p("x"))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_call", "expo");
}

Test(err_expr, call_wrong_arity) {
  te_expr *x = f32p("x");
  cr_assert_null(te_call(tt_ctx, "exp", 2, TE_EXPRS(x, x)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_call", "exp");
}

Test(err_expr, call_pow_one_argument) {
  cr_assert_null(te_call(tt_ctx, "pow", 1, TE_EXPRS(f32p("x"))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_call", "pow");
}

Test(err_expr, call_fma_null_args_array) {
  cr_assert_null(te_call(tt_ctx, "fma", 3, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_call");
}

Test(err_expr, call_null_name) {
  cr_assert_null(te_call(tt_ctx, NULL, 1, TE_EXPRS(f32p("x"))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_call");
}

Test(err_expr, call_exp_on_int) {
  cr_assert_null(te_call(tt_ctx, "exp", 1, TE_EXPRS(i32p("a"))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_call", "exp");
}

Test(err_expr, call_sqrt_on_int_literal) {
  cr_assert_null(te_call(tt_ctx, "sqrt", 1, TE_EXPRS(te_int(tt_ctx, 4))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_call", "sqrt");
}

Test(err_expr, select_non_bool_condition) {
  te_expr *x = f32p("x");
  cr_assert_null(te_select(x, x, x));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_select");
}

Test(err_expr, and_on_non_bool) {
  te_expr *b = te_lt(f32p("x"), f32p("y"));
  cr_assert_null(te_and(b, i32p("a")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_and");
}

Test(err_expr, not_on_int) {
  cr_assert_null(te_not(i32p("a")));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_not");
}

/* Choice: combining objects of two contexts is INVALID_ARG, recorded on the first operand's
   context. */
Test(err_expr, operands_of_two_contexts) {
  te_ctx *other = te_ctx_new();
  te_expr *x = f32p("x");
  te_expr *y = te_param(other, "y", TE_F32);
  cr_assert_not_null(y);
  te_expr *r = te_add(x, y);
  te_ctx_free(other);
  cr_assert_null(r);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_add", "context");
}
