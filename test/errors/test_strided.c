/* test_strided.c (errors) — misuse of strided placeholders (te_placeholder_strided): at
 * definition (NULL, non-integer, negative constant strides), at build (a stride variable only
 * inside a larger expression, passed as a scalar, a GPU target) and at call time (a tensor whose
 * strides do not match the declaration, a negative stride, a view of the output's memory). Each
 * refused call leaves the output poisoned.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(err_strided, .init = tt_setup, .fini = tt_teardown);

Test(err_strided, definition) {
  te_expr *n = te_var(tt_ctx, "n"), *s = te_var(tt_ctx, "s");
  cr_expect_null(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(n, n),
                                        TE_EXPRS(te_int(tt_ctx, -1), te_int(tt_ctx, 1))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE,
                "te_placeholder_strided: tensor 'A': stride 0 must be >= 0 (got -1)");
  te_clear_error(tt_ctx);
  cr_expect_null(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(n, n),
                                        TE_EXPRS(s, te_float(tt_ctx, TE_F32, 1))));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE,
                "te_placeholder_strided: tensor 'A': stride 1 must be an "
                "integer (got f32)");
  te_clear_error(tt_ctx);
  cr_expect_null(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(n, n), TE_EXPRS(s, NULL)));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "tensor 'A': stride 1 is NULL");
  te_tensor *A = TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n), TE_EXPRS(s)));
  cr_expect_eq(te_tensor_stride(A, 0), s);
  cr_expect_null(te_tensor_stride(A, 1));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 1, TE_EXPRS(n)));
  cr_expect_null(te_tensor_stride(B, 0));
}

/* C[i] = A[i] + 1 with A's strides as given. */
static te_schedule *sched_of(te_expr *n, te_expr *stride, te_tensor **A, te_tensor **C) {
  te_expr *i = te_var(tt_ctx, "i");
  *A = TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n), TE_EXPRS(stride)));
  *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                        te_add(tt_at1(*A, i), te_float(tt_ctx, TE_F32, 1))));
  return tt_schedule1(*C);
}

Test(err_strided, build) {
  te_expr *n = te_var(tt_ctx, "n"), *s = te_var(tt_ctx, "s");
  te_tensor *A, *C;
  te_module *m = NULL;
  te_target *llvm = TT_NN(te_target_parse(tt_ctx, "llvm"));
  te_schedule *sch = sched_of(n, te_mul(s, te_int(tt_ctx, 2)), &A, &C);
  cr_expect_eq(te_build(sch, "k", 2, TT_TENSORS(A, C), 0, NULL, llvm, &m), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE,
                "te_build: stride variable 's' must be the whole stride of some dimension");
  sch = sched_of(n, s, &A, &C);
  cr_expect_eq(te_build(sch, "k", 2, TT_TENSORS(A, C), 1, TE_EXPRS(s), llvm, &m),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "scalar 's' is a symbolic size");
  sch = sched_of(n, te_param(tt_ctx, "p", TE_I64), &A, &C);
  cr_expect_eq(te_build(sch, "k", 2, TT_TENSORS(A, C), 0, NULL, llvm, &m), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "stride variable 'p' is not a te_var");
  te_clear_error(tt_ctx);
  sch = sched_of(n, s, &A, &C);
  te_stage *st = tt_stage(sch, C);
  te_iter *bx, *tx;
  TT_OK(te_split(st, te_axis(st, 0), 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  cr_expect_null(te_lower_text_for(sch, vk, 2, TT_TENSORS(A, C), 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED,
                "tensor 'A' is strided (te_placeholder_strided); strided tensors are supported "
                "by CPU targets only");
}

/* Calls k(a, c) and expects status and message, c still poisoned. */
static void refused(te_module *m, DLTensor *a, tt_buf *c, te_status want, const char *msg) {
  te_clear_error(tt_ctx);
  tt_poison(c);
  te_status st = te_module_call(m, "k", 2, (DLTensor *const[]){a, &c->dl}, 0, NULL);
  cr_expect_eq(st, want, "%s: status %s (%s)", msg, te_status_str(st), te_last_error(tt_ctx));
  const char *e = te_last_error(tt_ctx);
  cr_expect(e && strstr(e, msg), "message '%s' lacks '%s'", e ? e : "", msg);
  for (int64_t p = 0; p < c->numel; p++)
    cr_expect(isnan(tt_get(c, p)), "C[%lld] written by a refused call", (long long)p);
}

Test(err_strided, call) {
  te_expr *n = te_var(tt_ctx, "n"), *s = te_var(tt_ctx, "s");
  te_tensor *A, *C;
  /* A declared with stride 2 (every other element of its base) */
  te_schedule *sch = sched_of(n, te_int(tt_ctx, 2), &A, &C);
  te_module *m2 = tt_build(sch, "k", 2, TT_TENSORS(A, C), 0, NULL);
  tt_buf *base = TT_ALLOC(TE_F32, 12), *c = TT_ALLOC(TE_F32, 4);
  tt_fill(base, 1);
  DLTensor a = base->dl;
  int64_t shape[1] = {4}, strides[1] = {3};
  a.shape = shape;
  a.strides = strides;
  refused(m2, &a, c, TE_ERR_SHAPE,
          "kernel 'k': argument 'A' (#0) dim 0 stride (as the tensor declares it): expected 2, "
          "got 3");
  a.strides = NULL; /* compact: stride 1 */
  refused(m2, &a, c, TE_ERR_SHAPE,
          "argument 'A' (#0) dim 0 stride (as the tensor declares it): "
          "expected 2, got 1");
  strides[0] = 2;
  a.strides = strides;
  tt_poison(c);
  TT_OK(te_module_call(m2, "k", 2, (DLTensor *const[]){&a, &c->dl}, 0, NULL));
  for (int64_t p = 0; p < 4; p++)
    cr_expect_float_eq(tt_get(c, p), tt_get(base, 2 * p) + 1, 1e-6);

  /* A with a stride variable: negative strides are refused */
  sch = sched_of(n, s, &A, &C);
  te_module *ms = tt_build(sch, "k", 2, TT_TENSORS(A, C), 0, NULL);
  strides[0] = -1;
  a.byte_offset = 11 * sizeof(float);
  refused(ms, &a, c, TE_ERR_SHAPE,
          "argument 'A' (#0) dim 0 stride (the stride variable 's') must be >= 0 (got -1)");

  /* an input view that reaches into the output's memory */
  strides[0] = 3;
  a.byte_offset = 0;
  DLTensor out = base->dl;
  out.shape = shape;
  out.byte_offset = 8 * sizeof(float); /* base[8 .. 12) overlaps A's base[0], [3], [6], [9] */
  te_clear_error(tt_ctx);
  cr_expect_eq(te_module_call(ms, "k", 2, (DLTensor *const[]){&a, &out}, 0, NULL),
               TE_ERR_INVALID_ARG);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "arguments 'A' (#0) and 'C' (#1) overlap in memory");
  out.byte_offset = 10 * sizeof(float); /* past A's last element, base[9] */
  shape[0] = 2;
  int64_t strides_a[1] = {3};
  DLTensor a2 = a;
  int64_t shape_a[1] = {2};
  a2.shape = shape_a;
  a2.strides = strides_a; /* base[0], base[3] */
  TT_OK(te_module_call(ms, "k", 2, (DLTensor *const[]){&a2, &out}, 0, NULL));
  cr_expect_float_eq(tt_get(base, 11), tt_get(base, 3) + 1, 1e-6);
}
