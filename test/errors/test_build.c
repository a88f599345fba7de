/* test_build.c (errors) — target strings (unknown kind, option, triple or CPU; malformed text;
 * GPU targets not in this version) and te_build misuses (missing tensors or scalars, bad
 * kernel names, NULL target or output, a GPU binding on a CPU target), plus te_lower_text and
 * te_module_source refusals.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>

TestSuite(err_build, .init = tt_setup, .fini = tt_teardown);

Test(err_build, target_unknown_kind) {
  cr_assert_null(te_target_parse(tt_ctx, "foo"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "foo");
}

Test(err_build, target_unknown_option) {
  cr_assert_null(te_target_parse(tt_ctx, "llvm -mfoo=1"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "-mfoo");
}

Test(err_build, target_unknown_triple) {
  cr_assert_null(te_target_parse(tt_ctx, "llvm -mtriple=nonsense-unknown-nowhere"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "nonsense-unknown-nowhere");
}

Test(err_build, target_unknown_cpu) {
  cr_assert_null(te_target_parse(tt_ctx, "llvm -mcpu=notacpu9000"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "notacpu9000");
}

Test(err_build, target_cuda_unknown_arch) {
  cr_assert_null(te_target_parse(tt_ctx, "cuda -arch=sm_12"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "sm_12");
}

Test(err_build, target_vulkan_unknown_option) {
  cr_assert_null(te_target_parse(tt_ctx, "vulkan -foo=1"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_target_parse", "vulkan");
}

/* Choice: an option without "=value" is malformed text: TE_ERR_PARSE. */
Test(err_build, target_option_without_value) {
  cr_assert_null(te_target_parse(tt_ctx, "llvm -mcpu"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_PARSE, "te_target_parse", "-mcpu");
}

Test(err_build, target_null_string) {
  cr_assert_null(te_target_parse(tt_ctx, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_target_parse");
}

/* Cout[i] = Ain[i] * alpha + Bin[i], 16 elements. */
static te_tensor *Ain, *Bin, *Cout;
static te_expr *alpha;
static te_schedule *S;

static void build(void) {
  te_expr *i = te_var(tt_ctx, "i");
  alpha = TT_NN(te_param(tt_ctx, "alpha", TE_F32));
  Ain = tt_placeholder("Ain", TE_F32, 1, TT_SHAPE(16));
  Bin = tt_placeholder("Bin", TE_F32, 1, TT_SHAPE(16));
  Cout = TT_NN(te_compute(tt_ctx, "Cout", 1, TE_EXPRS(te_int(tt_ctx, 16)), TE_EXPRS(i),
                          te_add(te_mul(tt_at1(Ain, i), alpha), tt_at1(Bin, i))));
  S = tt_schedule1(Cout);
  TT_NO_ERR(tt_ctx);
}

/* Choice: a placeholder or output missing from the tensor list is TE_ERR_INVALID_ARG. */
Test(err_build, missing_input_tensor) {
  build();
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 2, TT_TENSORS(Ain, Cout), 1, TE_EXPRS(alpha), tt_target(), &m),
               TE_ERR_INVALID_ARG);
  cr_assert_null(m);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "Bin");
}

Test(err_build, missing_output_tensor) {
  build();
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 2, TT_TENSORS(Ain, Bin), 1, TE_EXPRS(alpha), tt_target(), &m),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "Cout");
}

Test(err_build, missing_scalar_param) {
  build();
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 0, NULL, tt_target(), &m),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "alpha");
}

Test(err_build, kernel_name_not_identifier) {
  build();
  te_module *m = NULL;
  cr_assert_eq(
      te_build(S, "my-kernel", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), tt_target(), &m),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "my-kernel");
}

Test(err_build, kernel_name_null) {
  build();
  te_module *m = NULL;
  cr_assert_eq(
      te_build(S, NULL, 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), tt_target(), &m),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build");
}

Test(err_build, null_target) {
  build();
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), NULL, &m),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "target");
}

Test(err_build, null_out_module) {
  build();
  cr_assert_eq(
      te_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), tt_target(), NULL),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build");
}

Test(err_build, same_tensor_twice) {
  build();
  te_module *m = NULL;
  cr_assert_eq(
      te_build(S, "k", 4, TT_TENSORS(Ain, Bin, Cout, Ain), 1, TE_EXPRS(alpha), tt_target(), &m),
      TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", "Ain");
}

/* te_bind is a valid primitive, but a CPU target cannot run thread-bound loops. */
Test(err_build, bind_on_cpu_target) {
  build();
  te_stage *st = tt_stage(S, Cout);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), 4, &o, &in));
  TT_OK(te_bind(st, o, TE_BLOCK_X));
  TT_OK(te_bind(st, in, TE_THREAD_X));
  te_module *m = NULL;
  cr_assert_eq(te_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), tt_target(), &m),
               TE_ERR_TARGET);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_build", "i.o");
}

Test(err_build, lower_text_missing_tensor) {
  build();
  cr_assert_null(te_lower_text(S, 2, TT_TENSORS(Ain, Cout), 1, TE_EXPRS(alpha)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "Bin");
}

Test(err_build, module_source_unknown_kind) {
  build();
  te_module *m = tt_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha));
  cr_assert_null(te_module_source(m, "pdf"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_module_source", "pdf");
}

Test(err_build, module_entry_unknown_name) {
  build();
  te_module *m = tt_build(S, "k", 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha));
  cr_assert_null(te_module_entry(m, "nokernel"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "nokernel");
}

/* A kernel named like a function generated code calls would clash in the JIT (and crashed it
   once): refused up front. */
Test(err_build, kernel_name_reserved_symbol) {
  build();
  const char *names[] = {"tanh", "expf", "memcpy", "te_rt_parallel_for"};
  for (int k = 0; k < 4; k++) {
    te_module *m = NULL;
    cr_assert_eq(
        te_build(S, names[k], 3, TT_TENSORS(Ain, Bin, Cout), 1, TE_EXPRS(alpha), tt_target(), &m),
        TE_ERR_INVALID_ARG);
    TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_build", names[k], "choose another name");
    te_clear_error(tt_ctx);
  }
}
