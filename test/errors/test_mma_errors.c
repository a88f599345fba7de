/* test_mma_errors.c — te_tensorize(..., "mma_m16n8k16" / "mma_m16n8k32") requests that cannot be
 * met: each is refused with the exact status and a message naming the stage, the loop and what did
 * not match (the GEMM of test/common/gpu_cases.c, gpu_case_mma_gemm, with one thing changed). */
#include <criterion/criterion.h>
#include <string.h>

#include "../common/gpu_cases.h"
#include "../common/te_test.h"

TestSuite(mma_errors, .init = tt_setup, .fini = tt_teardown);

static te_status build_for(gpu_case *c, const char *target) {
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  return te_build(c->sch, c->name, c->ntensors, c->tensors, 0, NULL, t, &m);
}

Test(mma_errors, k_tile_of_8_is_not_k16) {
  gpu_case c;
  cr_assert(gpu_case_mma_gemm(tt_ctx, &c, TE_F16, 64, 64, 64, 8, 1), "%s", te_last_error(tt_ctx));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'C'", "te_tensorize(i.i, 'mma_m16n8k16')",
                "m16 n8 k16", "loop 'k.i' (k) has 8");
}

Test(mma_errors, sizes_that_leave_tails_are_refused) {
  gpu_case c; /* M = 40: the 16-row tile has a guarded tail */
  cr_assert(gpu_case_mma_gemm(tt_ctx, &c, TE_F16, 40, 64, 64, 16, 1), "%s", te_last_error(tt_ctx));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(i.i, 'mma_m16n8k16')");
}

Test(mma_errors, below_sm80_is_a_target_error) {
  gpu_case c;
  cr_assert(gpu_case_mma_f16(tt_ctx, &c));
  cr_assert_eq(build_for(&c, "cuda -arch=sm_75"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_tensorize(i.i, 'mma_m16n8k16')", "sm_80 or newer",
                "below sm_80");
}

Test(mma_errors, vulkan_and_cpu_have_no_mma) {
  gpu_case c;
  cr_assert(gpu_case_mma_f16(tt_ctx, &c));
  cr_assert_eq(build_for(&c, "vulkan"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "needs an NVIDIA GPU", "vulkan");
  gpu_case d;
  cr_assert(gpu_case_mma_bf16(tt_ctx, &d));
  cr_assert_eq(build_for(&d, "llvm"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "needs an NVIDIA GPU", "llvm");
}

Test(mma_errors, f32_inputs_do_not_match) {
  gpu_case c;
  cr_assert(gpu_case_mma_gemm(tt_ctx, &c, TE_F32, 64, 64, 64, 16, 1));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(i.i, 'mma_m16n8k16')",
                "f16 or bf16 elements widened to f32");
}

Test(mma_errors, unknown_instruction_lists_mma) {
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *a = te_placeholder(tt_ctx, "A", TE_F16, 1, TE_EXPRS(te_int(tt_ctx, 16)));
  te_tensor *b = te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, 16)), TE_EXPRS(i),
                            te_cast(TE_F32, TE_AT(a, i)));
  te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){b});
  te_stage *st = te_stage_of(s, b);
  cr_assert_eq(te_tensorize(st, te_axis(st, 0), "mma_m16n8k8"), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "unknown instruction 'mma_m16n8k8'", "mma_m16n8k16");
}

/* ---- mma_m16n8k32: s8/u8 into s32 ---- */

Test(mma_errors, int8_k_tile_of_16_is_not_k32) {
  gpu_case c;
  cr_assert(gpu_case_mma_int8(tt_ctx, &c, TE_I8, TE_I8, 64, 64, 64, 16, 1), "%s",
            te_last_error(tt_ctx));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "stage 'C'", "te_tensorize(i.i, 'mma_m16n8k32')",
                "m16 n8 k32", "loop 'k.i' (k) has 16");
}

Test(mma_errors, int8_tile_on_16_bit_inputs_does_not_match) {
  gpu_case c; /* f16 x f16 widened to i32: not the integer tile's factors */
  cr_assert(gpu_case_mma_int8(tt_ctx, &c, TE_F16, TE_F16, 64, 64, 64, 32, 1));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(i.i, 'mma_m16n8k32')",
                "s8 or u8 elements widened to i32");
  gpu_case d; /* 16-bit integers */
  cr_assert(gpu_case_mma_int8(tt_ctx, &d, TE_I16, TE_I8, 64, 64, 64, 32, 1));
  cr_assert_eq(build_for(&d, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "s8 or u8 elements widened to i32");
}

Test(mma_errors, float_tile_on_int8_inputs_does_not_match) {
  gpu_case d; /* i8 x i8 widened to f32, asked of the f16/bf16 tile */
  cr_assert(gpu_case_mma_gemm(tt_ctx, &d, TE_I8, 64, 64, 64, 16, 1));
  cr_assert_eq(build_for(&d, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(i.i, 'mma_m16n8k16')",
                "f16 or bf16 elements widened to f32");
}

Test(mma_errors, int8_below_sm80_and_off_cuda_is_a_target_error) {
  gpu_case c;
  cr_assert(gpu_case_mma_int8(tt_ctx, &c, TE_U8, TE_I8, 64, 64, 64, 32, 1));
  cr_assert_eq(build_for(&c, "cuda -arch=sm_75"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_tensorize(i.i, 'mma_m16n8k32')",
                "mma.sync m16n8k32 needs an NVIDIA GPU of sm_80 or newer", "below sm_80");
  gpu_case d;
  cr_assert(gpu_case_mma_int8(tt_ctx, &d, TE_U8, TE_U8, 64, 64, 64, 32, 1));
  cr_assert_eq(build_for(&d, "vulkan"), TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "needs an NVIDIA GPU", "vulkan");
}

Test(mma_errors, int8_sizes_that_leave_tails_are_refused) {
  gpu_case c; /* K = 48: the 32-long k tile has a guarded tail */
  cr_assert(gpu_case_mma_int8(tt_ctx, &c, TE_I8, TE_I8, 64, 64, 48, 32, 1));
  cr_assert_eq(build_for(&c, "cuda"), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_tensorize(i.i, 'mma_m16n8k32')");
}
