/* test_quant_errors.c — misuse of the low-precision integer API: the exact status and a message
 * substring for integer operators on bools and floats, shifts whose lanes differ, saturating casts
 * of bool, narrow-integer matmul without an accumulator, accumulators that can overflow or are
 * unsigned for signed products, requantize's arguments, and te_tensorize requests that do not
 * match the loop nest or the target.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../common/te_test.h"

TestSuite(quant_errors, .init = tt_setup, .fini = tt_teardown);

Test(quant_errors, bitwise_needs_integers) {
  te_expr *f = te_param(tt_ctx, "f", TE_F32), *b = te_lt(te_int(tt_ctx, 1), te_int(tt_ctx, 2));
  cr_assert_null(te_bitwise_and(f, te_int(tt_ctx, 1)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "'bitwise_and' needs an integer argument (got f32)");
  te_clear_error(tt_ctx);
  cr_assert_null(te_bitwise_not(b));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "'bitwise_not' needs an integer argument (got bool)",
                "te_and/te_or/te_not");
  te_clear_error(tt_ctx);
  cr_assert_null(te_shift_left(te_param(tt_ctx, "x", TE_I32), f));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "'shift_left' needs an integer argument (got f32)");
}

Test(quant_errors, saturating_cast_of_bool) {
  te_expr *b = te_lt(te_int(tt_ctx, 1), te_int(tt_ctx, 2));
  cr_assert_null(te_saturating_cast(TE_I8, b));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_saturating_cast: bool has no range");
}

Test(quant_errors, narrow_int_matmul_needs_an_accumulator) {
  te_tensor *A = tt_placeholder("A", TE_I8, 2, TT_SHAPE(4, 8));
  te_tensor *B = tt_placeholder("B", TE_I8, 2, TT_SHAPE(8, 4));
  cr_assert_null(te_op_matmul(tt_ctx, A, B, 0, 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_matmul: 'A' has dtype i8", "te_op_matmul_acc");
  te_clear_error(tt_ctx);
  te_tensor *D = tt_placeholder("D", TE_U8, 4, TT_SHAPE(1, 3, 8, 8));
  te_tensor *K = tt_placeholder("K", TE_U8, 4, TT_SHAPE(4, 3, 3, 3));
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_conv2d_nchw_acc");
}

Test(quant_errors, accumulator_that_can_overflow) {
  te_tensor *A = tt_placeholder("A", TE_U8, 2, TT_SHAPE(4, 64));
  te_tensor *B = tt_placeholder("B", TE_I8, 2, TT_SHAPE(64, 4));
  cr_assert_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_I16, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "accumulator i16 can overflow", "64 products");
  te_clear_error(tt_ctx);
  /* i32 holds 64 products, but not 70000 of them */
  te_tensor *A2 = tt_placeholder("A2", TE_U8, 2, TT_SHAPE(2, 70000));
  te_tensor *B2 = tt_placeholder("B2", TE_I8, 2, TT_SHAPE(70000, 2));
  cr_assert_null(te_op_matmul_acc(tt_ctx, A2, B2, 0, 0, TE_I32, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "accumulator i32 can overflow", "70000 products");
  te_clear_error(tt_ctx);
  cr_assert_not_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_I32, NULL));
  /* signed products cannot sum into an unsigned accumulator; conv's terms are C*KH*KW */
  cr_assert_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_U32, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "can be negative", "unsigned");
  te_clear_error(tt_ctx);
  te_tensor *D = tt_placeholder("D", TE_U8, 4, TT_SHAPE(1, 64, 8, 8));
  te_tensor *K = tt_placeholder("K", TE_U8, 4, TT_SHAPE(4, 64, 3, 3));
  cr_assert_null(te_op_conv2d_nchw_acc(tt_ctx, D, K, NULL, TE_U16, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "accumulator u16 can overflow", "576 products");
}

Test(quant_errors, float_input_integer_accumulator) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(4, 8));
  te_tensor *B = tt_placeholder("B", TE_I8, 2, TT_SHAPE(8, 4));
  cr_assert_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_I32, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "'A' has float dtype f32 but the accumulator i32");
}

Test(quant_errors, requantize_arguments) {
  te_tensor *X = tt_placeholder("X", TE_I32, 1, TT_SHAPE(8));
  cr_assert_null(te_op_requantize(tt_ctx, X, 0.0, 0, TE_I8, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_requantize: scale must be finite");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_requantize(tt_ctx, X, 0.5, 300, TE_U8, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "zero point 300 is outside the range of u8");
  te_clear_error(tt_ctx);
  te_tensor *F = tt_placeholder("F", TE_F32, 1, TT_SHAPE(8));
  cr_assert_null(te_op_requantize(tt_ctx, F, 0.5, 0, TE_I8, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "'F' has dtype f32");
}

/* ---------------------------------------------------------------- te_tensorize */

/* C = sum_k i32(A[i, k]) * i32(B[k, j]) (dtypes given), j split by lanes, k by kfactor. */
typedef struct tz_case {
  te_dtype ta, tb;
  int lanes, kfactor;
  bool vectorize;
  te_schedule *s;
  te_tensor *A, *B, *C;
  te_stage *st;
  te_iter *ki, *ji;
} tz_case;

static void tz_define(tz_case *c) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 32));
  c->A = tt_placeholder("A", c->ta, 2, TT_SHAPE(8, 32));
  c->B = tt_placeholder("B", c->tb, 2, TT_SHAPE(32, 32));
  te_expr *body = te_mul(te_cast(TE_I32, TE_AT(c->A, i, k)), te_cast(TE_I32, TE_AT(c->B, k, j)));
  c->C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, 8), te_int(tt_ctx, 32)),
                          TE_EXPRS(i, j), TE_SUM(body, k)));
  c->s = tt_schedule1(c->C);
  c->st = tt_stage(c->s, c->C);
  te_iter *jo, *ko;
  TT_OK(te_split(c->st, TT_NN(te_axis(c->st, 1)), c->lanes, &jo, &c->ji));
  TT_OK(te_split(c->st, TT_NN(te_reduce_iter(c->st, 0)), c->kfactor, &ko, &c->ki));
  TT_OK(te_reorder(c->st, 5, (te_iter *const[]){TT_NN(te_axis(c->st, 0)), jo, ko, c->ki, c->ji}));
  if (c->vectorize)
    TT_OK(te_vectorize(c->st, c->ji));
}

static te_status tz_build(tz_case *c, const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  return te_build(c->s, "k", 3, TT_TENSORS(c->A, c->B, c->C), 0, NULL, t, &m);
}

static const char *const vnni = "llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server";

Test(quant_errors, tensorize_wrong_extent) {
  tz_case c = {.ta = TE_U8, .tb = TE_I8, .lanes = 16, .kfactor = 8, .vectorize = true};
  tz_define(&c);
  TT_OK(te_tensorize(c.st, c.ki, "vpdpbusd"));
  cr_assert_eq(tz_build(&c, vnni), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'C'", "te_tensorize(k.i, 'vpdpbusd')",
                "constant extent 4", "its extent is 8");
}

Test(quant_errors, tensorize_not_vectorized) {
  tz_case c = {.ta = TE_U8, .tb = TE_I8, .lanes = 16, .kfactor = 4, .vectorize = false};
  tz_define(&c);
  TT_OK(te_tensorize(c.st, c.ki, "vpdpbusd"));
  cr_assert_eq(tz_build(&c, vnni), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "k.i", "its body is a loop", "vectorize");
}

Test(quant_errors, tensorize_wrong_dtypes) {
  tz_case c = {.ta = TE_I8, .tb = TE_I8, .lanes = 16, .kfactor = 4, .vectorize = true};
  tz_define(&c);
  TT_OK(te_tensorize(c.st, c.ki, "vpdpbusd"));
  cr_assert_eq(tz_build(&c, vnni), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "multiplies u8 by i8", "i8 and i8");
}

Test(quant_errors, tensorize_wrong_lanes) {
  tz_case c = {.ta = TE_U8, .tb = TE_I8, .lanes = 32, .kfactor = 4, .vectorize = true};
  tz_define(&c);
  TT_OK(te_tensorize(c.st, c.ki, "vpdpbusd"));
  cr_assert_eq(tz_build(&c, vnni), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "16, 8 or 4 i32 lanes", "i32x32");
}

Test(quant_errors, tensorize_target_without_vnni_is_refused_not_dropped) {
  tz_case c = {.ta = TE_U8, .tb = TE_I8, .lanes = 16, .kfactor = 4, .vectorize = true};
  tz_define(&c);
  TT_OK(te_tensorize(c.st, c.ki, "vpdpbusd"));
  cr_assert_eq(tz_build(&c, "llvm -mtriple=x86_64-linux-gnu -mcpu=skylake-avx512"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "need AVX512-VNNI", "skylake-avx512");
  te_clear_error(tt_ctx);
  /* an explicit -avx512vnni on a CPU that has it is honoured too */
  cr_assert_eq(
      tz_build(&c, "llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server -mattr=-avx512vnni"),
      TE_ERR_TARGET);
}

Test(quant_errors, tensorize_schedule_time_checks) {
  tz_case c = {.ta = TE_U8, .tb = TE_I8, .lanes = 16, .kfactor = 4, .vectorize = true};
  tz_define(&c);
  cr_assert_eq(te_tensorize(c.st, c.ki, "vdpxyz"), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "unknown instruction 'vdpxyz'", "vpdpbusd");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_tensorize(c.st, c.ji, "vpdpbusd"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "is a data-parallel loop");
  te_clear_error(tt_ctx);
  cr_assert_eq(te_tensorize(c.st, NULL, "vpdpbusd"), TE_ERR_INVALID_ARG);
}
