/* test_vulkan_errors.c (errors) — misuse of the "vulkan" target: no Vulkan driver at call time
 * (simulated with VK_ICD_FILENAMES / VK_DRIVER_FILES pointing nowhere, set before this test
 * process first touches Vulkan: Criterion runs each test in its own process), thread extents
 * that are not constants (Vulkan's workgroup size must be), and wrong arguments (refused before
 * the device is touched, so these run on any machine), and source kinds a vulkan module lacks.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

TestSuite(err_vulkan, .init = tt_setup, .fini = tt_teardown);

/* C[i] = A[i] + 1 on n elements, 32 threads a workgroup. */
static te_module *build_add(te_tensor **a_out, te_tensor **c_out) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_add(tt_at1(A, i), te_float(tt_ctx, TE_F32, 1))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_target *t = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_module *m = NULL;
  TT_OK(te_build(s, "add1", 2, TT_TENSORS(A, C), 0, NULL, t, &m));
  if (a_out)
    *a_out = A;
  if (c_out)
    *c_out = C;
  return m;
}

Test(err_vulkan, no_driver_at_call_time) {
  setenv("VK_ICD_FILENAMES", "/nonexistent/te_no_icd.json", 1);
  setenv("VK_DRIVER_FILES", "/nonexistent/te_no_icd.json", 1);
  te_module *m = build_add(NULL, NULL); /* building needs no driver */
  tt_buf *a = TT_ALLOC(TE_F32, 10), *c = TT_ALLOC(TE_F32, 10);
  tt_fill(a, 1);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(a, c), dl);
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_RUNTIME);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_RUNTIME, "te_module_call", "kernel 'add1'", "no Vulkan driver");
  for (int i = 0; i < 10; i++) /* nothing was written */
    cr_assert(tt_get(c, i) != tt_get(c, i), "element %d was written", i);
  te_clear_error(tt_ctx);
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_RUNTIME); /* and again */
}

/* A thread axis of symbolic extent n: Vulkan's workgroup size (LocalSize) must be a constant. */
Test(err_vulkan, symbolic_thread_extent) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), tt_at1(A, i)));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  TT_OK(te_bind(st, te_axis(st, 0), TE_THREAD_X));
  te_target *t = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "copy", 2, TT_TENSORS(A, C), 0, NULL, t, &m), TE_ERR_TARGET, "%s",
               te_last_error(tt_ctx));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TARGET, "te_build", "copy", "constant");
  cr_assert_null(m);
}

/* Arguments are checked before the device is touched: these hold with or without a driver. */
Test(err_vulkan, wrong_arguments) {
  te_module *m = build_add(NULL, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, 10), *c = TT_ALLOC(TE_F32, 10), *c9 = TT_ALLOC(TE_F32, 9);
  tt_buf *ai = TT_ALLOC(TE_I32, 10), *a2 = TT_ALLOC(TE_F32, 2, 5);
  DLTensor *dl[2];

  tt_dl(2, TT_BUFS(ai, c), dl);
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_TYPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "kernel 'add1'", "argument 'A' (#0)", "f32");
  te_clear_error(tt_ctx);

  tt_dl(2, TT_BUFS(a, c9), dl);
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "argument 'C' (#1) dim 0 extent: expected 10, got 9");
  te_clear_error(tt_ctx);

  tt_dl(2, TT_BUFS(a2, c), dl);
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "argument 'A' (#0) ndim: expected 1, got 2");
  te_clear_error(tt_ctx);

  tt_dl(2, TT_BUFS(a, c), dl);
  dl[1]->device.device_type = kDLCUDA;
  cr_assert_eq(te_module_call(m, "add1", 2, dl, 0, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "argument 'C' (#1) device_type");
  dl[1]->device.device_type = kDLCPU;
  te_clear_error(tt_ctx);

  cr_assert_eq(te_module_call(m, "add1", 2, (DLTensor *const[]){dl[0], NULL}, 0, NULL),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "argument 'C' (#1) is NULL");
  te_clear_error(tt_ctx);

  cr_assert_eq(te_module_call(m, "add1", 1, dl, 0, NULL), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "takes 2 tensors (got 1)");
}

Test(err_vulkan, source_kinds) {
  te_module *m = build_add(NULL, NULL);
  cr_assert_null(te_module_source(m, "ll"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_module_source", "'ll'");
  te_clear_error(tt_ctx);
  cr_assert_not_null(te_module_source(m, "spirv-dis"), "%s", te_last_error(tt_ctx));
  cr_assert_null(te_module_entry(m, "add1")); /* a vulkan kernel has no host entry point */
}

/* bf16 has no SPIR-V type in Vulkan 1.1: a buffer, or a conversion inside an f32 kernel, is
   refused at te_build with the dtype and the back end named, never miscompiled. f16 builds (the
   Float16 capability and 16-bit storage) and is refused when called on a device without
   shaderFloat16. */
static te_status build_half(te_dtype buf_dtype, te_dtype mid_dtype, te_module **m) {
  te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 64);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", buf_dtype, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(
      tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
      te_cast(TE_F32, te_mul(te_cast(mid_dtype, tt_at1(A, i)), te_float(tt_ctx, mid_dtype, 3)))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  return te_build(s, "half", 2, TT_TENSORS(A, C), 0, NULL, TT_NN(te_target_parse(tt_ctx, "vulkan")),
                  m);
}

Test(err_vulkan, bf16_buffer_unsupported) {
  te_module *m = NULL;
  cr_assert_eq(build_half(TE_BF16, TE_BF16, &m), TE_ERR_UNSUPPORTED);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_build", "'A'", "bf16", "SPIR-V",
                "Vulkan has no bf16 type");
}

Test(err_vulkan, bf16_conversion_in_f32_kernel_unsupported) {
  te_module *m = NULL;
  te_status st = build_half(TE_F32, TE_BF16, &m);
  cr_assert_eq(st, TE_ERR_UNSUPPORTED, "%s: %s", te_status_str(st), te_last_error(tt_ctx));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_build", "bf16", "SPIR-V");
}

/* A device without shaderFloat16 (made so with TE_VULKAN_HIDE_FEATURES, set before te first
   opens the device: Criterion runs each test in a process of its own). */
Test(err_vulkan, f16_refused_on_a_device_without_shader_float16) {
  setenv("TE_VULKAN_HIDE_FEATURES", "float16", 1);
  te_module *m = NULL;
  TT_OK(build_half(TE_F16, TE_F16, &m));
  const char *dis = te_module_source(m, "spirv-dis");
  cr_expect(dis && strstr(dis, "OpCapability Float16"), "%s", dis ? dis : "(none)");
  tt_buf *a = TT_ALLOC(TE_F16, 64), *c = TT_ALLOC(TE_F32, 64);
  tt_fill(a, 5);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(a, c), dl);
  te_status st = te_module_call(m, "half", 2, dl, 0, NULL);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "%s", te_last_error(tt_ctx));
  cr_assert_eq(st, TE_ERR_UNSUPPORTED, "%s: %s", te_status_str(st), te_last_error(tt_ctx));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "half_kernel0", "shaderFloat16", "lacks");
}
