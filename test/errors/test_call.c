/* test_call.c (errors) — calling a kernel with wrong arguments: counts, NULL tensors or data,
 * a non-CPU device, wrong rank, dtype or extent, inconsistent symbolic sizes, non-compact
 * strides, unknown kernel names. The kernel must refuse before touching memory (the outputs
 * stay poisoned), return the status, and leave its message on the context. Compact explicit
 * strides and a call after a refused one still work.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>

TestSuite(err_call, .init = tt_setup, .fini = tt_teardown);

/* Cout[i, j] = Ain[i, j] + Vin[j] * s (Ain: n x 8, Vin: 8, s: i64 param); n symbolic. */
static te_module *M;
static tt_buf *a, *v, *c;
static int64_t sval = 3;

static void build(void) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *s = TT_NN(te_param(tt_ctx, "s", TE_I64));
  te_expr *eight = te_int(tt_ctx, 8);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "Ain", TE_F32, 2, TE_EXPRS(n, eight)));
  te_tensor *V = TT_NN(te_placeholder(tt_ctx, "Vin", TE_F32, 1, TE_EXPRS(eight)));
  te_expr *body = te_add(tt_at2(A, i, j), te_mul(tt_at1(V, j), te_cast(TE_F32, s)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "Cout", 2, TE_EXPRS(n, eight), TE_EXPRS(i, j), body));
  M = tt_build(tt_schedule1(C), "kern", 3, TT_TENSORS(A, V, C), 1, TE_EXPRS(s));
  a = TT_ALLOC(TE_F32, 5, 8);
  v = TT_ALLOC(TE_F32, 8);
  c = TT_ALLOC(TE_F32, 5, 8);
  tt_fill(a, 1);
  tt_fill(v, 2);
  TT_NO_ERR(tt_ctx);
}

static te_status call(DLTensor *t0, DLTensor *t1, DLTensor *t2) {
  return te_module_call(M, "kern", 3, (DLTensor *const[]){t0, t1, t2}, 1,
                        (const void *const[]){&sval});
}

/* The output buffer c must not have been written. */
static void untouched(void) {
  for (int64_t p = 0; p < c->numel; p++)
    cr_assert(isnan(tt_get(c, p)), "a refused call wrote output element %lld", (long long)p);
}

Test(err_call, good_call_works) {
  build();
  cr_assert_eq(call(&a->dl, &v->dl, &c->dl), TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_float_eq(tt_get(c, 9), tt_get(a, 9) + tt_get(v, 1) * 3, 1e-5);
}

Test(err_call, wrong_tensor_count) {
  build();
  cr_assert_eq(te_module_call(M, "kern", 2, (DLTensor *const[]){&a->dl, &v->dl}, 1,
                              (const void *const[]){&sval}),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_module_call", "kern");
}

Test(err_call, wrong_scalar_count) {
  build();
  cr_assert_eq(te_module_call(M, "kern", 3, (DLTensor *const[]){&a->dl, &v->dl, &c->dl}, 0, NULL),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_module_call", "kern");
  untouched();
}

Test(err_call, null_scalar_pointer) {
  build();
  cr_assert_eq(te_module_call(M, "kern", 3, (DLTensor *const[]){&a->dl, &v->dl, &c->dl}, 1,
                              (const void *const[]){NULL}),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_module_call");
  untouched();
}

Test(err_call, unknown_kernel_name) {
  build();
  cr_assert_eq(te_module_call(M, "nokern", 3, (DLTensor *const[]){&a->dl, &v->dl, &c->dl}, 1,
                              (const void *const[]){&sval}),
               TE_ERR_NOT_FOUND);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_module_call", "nokern");
}

/* Kernel-side checks: NULL tensor, NULL data and a non-CPU device are TE_ERR_INVALID_ARG; rank,
   extents and non-compact strides TE_ERR_SHAPE; dtype TE_ERR_TYPE. The message names the
   tensor. */
Test(err_call, null_tensor) {
  build();
  cr_assert_eq(call(&a->dl, NULL, &c->dl), TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "Vin");
  untouched();
}

Test(err_call, null_data_pointer) {
  build();
  void *keep = v->dl.data;
  v->dl.data = NULL;
  te_status st = call(&a->dl, &v->dl, &c->dl);
  v->dl.data = keep;
  cr_assert_eq(st, TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "Vin");
  untouched();
}

Test(err_call, device_not_cpu) {
  build();
  a->dl.device = (DLDevice){kDLCUDA, 0};
  te_status st = call(&a->dl, &v->dl, &c->dl);
  a->dl.device = (DLDevice){kDLCPU, 0};
  cr_assert_eq(st, TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "Ain");
  untouched();
}

Test(err_call, wrong_rank) {
  build();
  tt_buf *v2 = TT_ALLOC(TE_F32, 1, 8);
  cr_assert_eq(call(&a->dl, &v2->dl, &c->dl), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Vin", "1", "2");
  untouched();
}

Test(err_call, wrong_dtype) {
  build();
  tt_buf *v64 = TT_ALLOC(TE_F64, 8);
  cr_assert_eq(call(&a->dl, &v64->dl, &c->dl), TE_ERR_TYPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "Vin");
  untouched();
}

Test(err_call, wrong_constant_extent) {
  build();
  tt_buf *v9 = TT_ALLOC(TE_F32, 9);
  cr_assert_eq(call(&a->dl, &v9->dl, &c->dl), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Vin", "expected 8", "got 9");
  untouched();
}

/* Ain binds n = 5; Cout says n = 6. */
Test(err_call, inconsistent_symbolic_size) {
  build();
  tt_buf *c6 = TT_ALLOC(TE_F32, 6, 8);
  cr_assert_eq(call(&a->dl, &v->dl, &c6->dl), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Cout", "expected 5", "got 6");
  for (int64_t p = 0; p < c6->numel; p++)
    cr_assert(isnan(tt_get(c6, p)), "a refused call wrote output element %lld", (long long)p);
}

Test(err_call, non_compact_strides) {
  build();
  tt_buf *big = TT_ALLOC(TE_F32, 5, 16);
  int64_t strides[2] = {16, 1};
  big->shape[1] = 8; /* a 5x8 view of a 5x16 buffer */
  big->dl.strides = strides;
  te_status st = call(&big->dl, &v->dl, &c->dl);
  big->dl.strides = NULL;
  cr_assert_eq(st, TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "Ain", "stride");
  untouched();
}

Test(err_call, compact_explicit_strides_accepted) {
  build();
  int64_t strides[2] = {8, 1};
  a->dl.strides = strides;
  te_status st = call(&a->dl, &v->dl, &c->dl);
  a->dl.strides = NULL;
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_float_eq(tt_get(c, 17), tt_get(a, 17) + tt_get(v, 1) * 3, 1e-5);
}

/* After a refused call and te_clear_error, a good call works and computes everything. */
Test(err_call, good_call_after_refused_one) {
  build();
  tt_buf *v9 = TT_ALLOC(TE_F32, 9);
  cr_assert_eq(call(&a->dl, &v9->dl, &c->dl), TE_ERR_SHAPE);
  te_clear_error(tt_ctx);
  cr_assert_eq(call(&a->dl, &v->dl, &c->dl), TE_OK, "%s", te_last_error(tt_ctx));
  for (int64_t p = 0; p < c->numel; p++)
    cr_assert_float_eq(tt_get(c, p), tt_get(a, p) + tt_get(v, p % 8) * 3, 1e-5);
}
