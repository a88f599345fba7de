/* test_lowp_acc_errors.c — misuse of the 16-bit float paths: te_tensorize(.., "vdpbf16ps")
 * requests that do not match the loop nest (group size, factor dtypes, accumulator dtype, a body
 * that is not vectorized) or the target (no AVX512-BF16, by CPU or by -mattr) give the exact status
 * and a message naming the stage, the loop and what did not match; float accumulators of the
 * operator library that cannot hold the inputs' values are refused.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "../common/te_test.h"

TestSuite(lowp_acc_errors, .init = tt_setup, .fini = tt_teardown);

/* C = sum_k acc(A[i, k]) * acc(B[k, j]) (dtypes given), j split by lanes, k by kfactor. */
typedef struct bf_case {
  te_dtype ta, tb, acc;
  int lanes, kfactor;
  bool vectorize;
  te_schedule *s;
  te_tensor *A, *B, *C;
  te_stage *st;
  te_iter *ki, *ji;
} bf_case;

static void bf_define(bf_case *c) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 32));
  c->A = tt_placeholder("A", c->ta, 2, TT_SHAPE(8, 32));
  c->B = tt_placeholder("B", c->tb, 2, TT_SHAPE(32, 32));
  te_expr *body = te_mul(te_cast(c->acc, TE_AT(c->A, i, k)), te_cast(c->acc, TE_AT(c->B, k, j)));
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
  TT_OK(te_tensorize(c->st, c->ki, "vdpbf16ps"));
}

static te_status bf_build(bf_case *c, const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  return te_build(c->s, "k", 3, TT_TENSORS(c->A, c->B, c->C), 0, NULL, t, &m);
}

static const char *const spr = "llvm -mtriple=x86_64-linux-gnu -mcpu=sapphirerapids";

/* The nest that fits vdpbf16ps; each test changes one thing. */
static bf_case bf_fitting(void) {
  return (bf_case){
      .ta = TE_BF16, .tb = TE_BF16, .acc = TE_F32, .lanes = 16, .kfactor = 2, .vectorize = true};
}

Test(lowp_acc_errors, vdpbf16ps_wrong_extent) {
  bf_case c = bf_fitting();
  c.kfactor = 4;
  bf_define(&c);
  cr_assert_eq(bf_build(&c, spr), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'C'", "te_tensorize(k.i, 'vdpbf16ps')",
                "groups of 2", "constant extent 2", "its extent is 4");
}

Test(lowp_acc_errors, vdpbf16ps_f16_factors) {
  bf_case c = bf_fitting();
  c.ta = TE_F16;
  c.tb = TE_F16;
  bf_define(&c);
  cr_assert_eq(bf_build(&c, spr), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(k.i, 'vdpbf16ps')",
                "factors must be bf16 values widened to f32");
}

Test(lowp_acc_errors, vdpbf16ps_bf16_accumulator) {
  bf_case c = bf_fitting();
  c.acc = TE_BF16;
  bf_define(&c);
  cr_assert_eq(bf_build(&c, spr), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "the accumulator must be f32, it is bf16x16");
}

Test(lowp_acc_errors, vdpbf16ps_int8_nest) {
  bf_case c = bf_fitting();
  c.ta = TE_U8;
  c.tb = TE_I8;
  c.acc = TE_I32;
  bf_define(&c);
  cr_assert_eq(bf_build(&c, spr), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "the accumulator must be f32, it is i32x16");
}

Test(lowp_acc_errors, vdpbf16ps_not_vectorized) {
  bf_case c = bf_fitting();
  c.vectorize = false;
  bf_define(&c);
  cr_assert_eq(bf_build(&c, spr), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "k.i", "its body is a loop", "vectorize");
}

Test(lowp_acc_errors, vdpbf16ps_target_without_it_is_refused_not_dropped) {
  bf_case c = bf_fitting();
  bf_define(&c);
  cr_assert_eq(bf_build(&c, "llvm -mtriple=x86_64-linux-gnu -mcpu=icelake-server"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "need AVX512-BF16", "icelake-server");
  te_clear_error(tt_ctx);
  /* an explicit -avx512bf16 on a CPU that has it is honoured too */
  cr_assert_eq(bf_build(&c, "llvm -mtriple=x86_64-linux-gnu -mcpu=znver4 -mattr=-avx512bf16"),
               TE_ERR_TARGET);
  te_clear_error(tt_ctx);
  cr_assert_eq(bf_build(&c, "cuda -arch=sm_80"), TE_ERR_TARGET);
}

Test(lowp_acc_errors, vdpbf16ps_8_lanes_need_vl) {
  bf_case c = bf_fitting();
  c.lanes = 8;
  bf_define(&c);
  cr_assert_eq(
      bf_build(&c,
               "llvm -mtriple=x86_64-linux-gnu -mcpu=x86-64 -mattr=+avx512f,+avx512bf16,-avx512vl"),
      TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "8 or 4 lanes AVX512-BF16 with VL", "(8 lanes)");
}

Test(lowp_acc_errors, float_accumulator_must_hold_the_inputs) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(4, 8));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(8, 4));
  cr_assert_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_BF16, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_matmul_acc", "accumulator bf16", "'A' (f32)");
  te_clear_error(tt_ctx);
  te_tensor *H = tt_placeholder("H", TE_F16, 2, TT_SHAPE(8, 4));
  te_tensor *G = tt_placeholder("G", TE_BF16, 2, TT_SHAPE(4, 8));
  cr_assert_null(te_op_matmul_acc(tt_ctx, G, H, 0, 0, TE_F16, NULL)); /* f16 cannot hold bf16 */
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "accumulator f16", "'G' (bf16)");
  te_clear_error(tt_ctx);
  te_tensor *D = tt_placeholder("D", TE_F32, 4, TT_SHAPE(1, 8, 5, 5));
  te_tensor *W = tt_placeholder("W", TE_F32, 4, TT_SHAPE(2, 8, 3, 3));
  cr_assert_null(te_op_conv2d_nchw_acc(tt_ctx, D, W, NULL, TE_F16, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_conv2d_nchw_acc", "accumulator f16");
  te_clear_error(tt_ctx);
  /* the wide accumulators are accepted */
  cr_assert_not_null(te_op_matmul_acc(tt_ctx, G, G, 0, 1, TE_F32, NULL));
  cr_assert_not_null(te_op_matmul_acc(tt_ctx, G, H, 0, 0, TE_F32, NULL));
  cr_assert_not_null(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_F64, NULL));
}

/* f16 dot products are a documented limit (docs/low-precision.md): no CPU instruction for them is
   known, so asking for AVX10.2's vdpphps is refused by name rather than silently run as plain
   vector code. */
Test(lowp_acc_errors, f16_dot_product_instruction_is_unknown) {
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, 32));
  te_tensor *a = tt_placeholder("A", TE_F16, 2, TT_SHAPE(16, 32));
  te_expr *body = te_mul(te_cast(TE_F32, TE_AT(a, i, k)), te_cast(TE_F32, TE_AT(a, i, k)));
  te_tensor *c =
      TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(te_int(tt_ctx, 16)), TE_EXPRS(i), TE_SUM(body, k)));
  te_schedule *s = tt_schedule1(c);
  te_stage *st = tt_stage(s, c);
  te_iter *ko, *ki;
  TT_OK(te_split(st, TT_NN(te_reduce_iter(st, 0)), 2, &ko, &ki));
  cr_assert_eq(te_tensorize(st, ki, "vdpphps"), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "unknown instruction 'vdpphps'", "vdpbf16ps",
                "mma_m16n8k32");
}
