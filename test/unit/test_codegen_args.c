/* test_codegen_args.c — a generated kernel's checks of its DLTensor arguments, and
 * te_module_call's own checks. Every misuse must return the documented status with a message
 * naming the kernel, the argument and the rule, and must not touch the buffers.
 */
#include "test_codegen_util.h"

TestSuite(codegen_args, .init = cg_setup, .fini = cg_teardown);

/* k(A: f32[4, n], B: f32[4, n], s: f32): B = A + s */
static te_module *kernel(void) {
  te_expr *n = ir_var_new(ctx, "n", TE_I64, IR_VAR_INDEX);
  te_expr *shape[2] = {I64(4), n};
  ir_buffer *A = arg_buf("A", TE_F32, 2, shape, 0), *B = arg_buf("B", TE_F32, 2, shape, 1);
  te_expr *s = ir_var_new(ctx, "s", TE_F32, IR_VAR_PARAM);
  te_expr *i = ir_var_new(ctx, "i", TE_I64, IR_VAR_INDEX);
  ir_stmt *body = ir_for(i, I64(0), ir_mul(I64(4), n), IR_FOR_SERIAL, TE_THREAD_X,
                         ir_store(B, ir_add(ir_load(A, TE_F32, i), s), i));
  lw_arg args[3] = {buf_arg(A), buf_arg(B), scalar_arg(s)};
  lw_func *f = make_func("k", 3, args, body);
  add_size(f, n, 0, 1);
  return compile(f);
}

typedef struct fixture {
  float a[64], b[64], s;
  tens ta, tb;
  DLTensor *ts[2];
  const void *ss[1];
} fixture;

static void fixture_init(fixture *x, int64_t n) {
  int64_t shape[2] = {4, n};
  for (int i = 0; i < 64; i++)
    x->a[i] = (float)i, x->b[i] = -7;
  x->s = 1;
  tens_init(&x->ta, x->a, TE_F32, 2, shape);
  tens_init(&x->tb, x->b, TE_F32, 2, shape);
  x->ts[0] = &x->ta.t, x->ts[1] = &x->tb.t;
  x->ss[0] = &x->s;
}

static void expect_untouched(const fixture *x) {
  for (int i = 0; i < 64; i++)
    cr_expect_eq(x->b[i], -7, "B[%d] was written", i);
}

#define EXPECT(st, sub)                                                                            \
  do {                                                                                             \
    expect_call_error(m, "k", 2, x.ts, 1, x.ss, (st), (sub));                                      \
    expect_untouched(&x);                                                                          \
  } while (0)

Test(codegen_args, good_call_and_byte_offset) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  cr_assert_eq(te_module_call(m, "k", 2, x.ts, 1, x.ss), TE_OK, "%s", te_last_error(ctx));
  for (int i = 0; i < 20; i++)
    cr_expect_eq(x.b[i], x.a[i] + 1);
  /* the same data through byte_offset, and explicit compact strides */
  fixture_init(&x, 5);
  int64_t strides[2] = {5, 1};
  x.ta.t.data = x.a - 4;
  x.ta.t.byte_offset = 4 * sizeof(float);
  x.tb.t.strides = strides;
  cr_assert_eq(te_module_call(m, "k", 2, x.ts, 1, x.ss), TE_OK, "%s", te_last_error(ctx));
  for (int i = 0; i < 20; i++)
    cr_expect_eq(x.b[i], x.a[i] + 1);
}

Test(codegen_args, null_tensor) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.ts[1] = NULL;
  EXPECT(TE_ERR_INVALID_ARG, "te_module_call: kernel 'k': argument 'B' (#1) is NULL");
}

Test(codegen_args, null_data) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.ta.t.data = NULL;
  EXPECT(TE_ERR_INVALID_ARG, "argument 'A' (#0) has a NULL data pointer");
}

Test(codegen_args, misaligned_data) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.ta.t.byte_offset = 2;
  EXPECT(TE_ERR_INVALID_ARG, "argument 'A' (#0) data pointer (data + byte_offset) is not aligned "
                             "to its element size (4 bytes)");
}

Test(codegen_args, wrong_device) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.tb.t.device.device_type = kDLCUDA;
  EXPECT(TE_ERR_INVALID_ARG, "argument 'B' (#1) device_type");
}

Test(codegen_args, wrong_ndim) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.ta.t.ndim = 1;
  EXPECT(TE_ERR_SHAPE, "argument 'A' (#0) ndim: expected 2, got 1");
}

Test(codegen_args, wrong_dtype) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.tb.t.dtype = TE_F64;
  EXPECT(TE_ERR_TYPE, "argument 'B' (#1) must be f32; dtype bits: expected 32, got 64");
  x.tb.t.dtype = TE_I32;
  EXPECT(TE_ERR_TYPE, "argument 'B' (#1) must be f32; dtype code: expected 2, got 0");
  x.tb.t.dtype = (DLDataType){kDLFloat, 32, 4};
  EXPECT(TE_ERR_TYPE, "dtype lanes: expected 1, got 4");
}

Test(codegen_args, wrong_extent) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.tb.shape[1] = 6; /* n is bound from A's dim 1 */
  EXPECT(TE_ERR_SHAPE, "argument 'B' (#1) dim 1 extent: expected 5, got 6");
  x.tb.shape[1] = 5;
  x.ta.shape[0] = 3;
  EXPECT(TE_ERR_SHAPE, "argument 'A' (#0) dim 0 extent: expected 4, got 3");
}

Test(codegen_args, symbolic_size_at_least_one) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 0);
  EXPECT(TE_ERR_SHAPE, "argument 'A' (#0) dim 1 extent (the symbolic size 'n') must be >= 1");
}

Test(codegen_args, non_compact_strides) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  int64_t strides[2] = {1, 4}; /* column-major */
  x.ta.t.strides = strides;
  EXPECT(TE_ERR_SHAPE, "argument 'A' (#0) dim 1 stride (only compact row-major tensors are "
                       "accepted): expected 1, got 4");
  int64_t padded[2] = {8, 1};
  x.ta.t.strides = padded;
  EXPECT(TE_ERR_SHAPE, "argument 'A' (#0) dim 0 stride");
}

Test(codegen_args, extent_one_any_stride) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 1);
  int64_t strides[2] = {1, 99};
  x.ta.t.strides = strides;
  cr_expect_eq(te_module_call(m, "k", 2, x.ts, 1, x.ss), TE_OK, "%s", te_last_error(ctx));
}

Test(codegen_args, output_overlaps_input) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  x.ts[1] = &x.ta.t;
  expect_call_error(m, "k", 2, x.ts, 1, x.ss, TE_ERR_INVALID_ARG,
                    "arguments 'A' (#0) and 'B' (#1) overlap in memory");
  fixture_init(&x, 5);
  x.tb.t.data = x.a + 19; /* shares A's last element */
  EXPECT(TE_ERR_INVALID_ARG, "overlap");
}

Test(codegen_args, call_counts_and_names) {
  te_module *m = kernel();
  fixture x;
  fixture_init(&x, 5);
  expect_call_error(m, "k", 1, x.ts, 1, x.ss, TE_ERR_INVALID_ARG,
                    "te_module_call: kernel 'k' takes 2 tensors (got 1)");
  expect_call_error(m, "k", 2, x.ts, 0, NULL, TE_ERR_INVALID_ARG,
                    "te_module_call: kernel 'k' takes 1 scalar (got 0)");
  expect_call_error(m, "k", 2, NULL, 1, x.ss, TE_ERR_INVALID_ARG, "tensors is NULL");
  expect_call_error(m, "k", 2, x.ts, 1, NULL, TE_ERR_INVALID_ARG, "scalars is NULL");
  const void *nulls[1] = {NULL};
  expect_call_error(m, "k", 2, x.ts, 1, nulls, TE_ERR_INVALID_ARG, "scalar #0 is NULL");
  expect_call_error(m, "nope", 2, x.ts, 1, x.ss, TE_ERR_NOT_FOUND, "no kernel 'nope'");
  expect_call_error(m, NULL, 2, x.ts, 1, x.ss, TE_ERR_INVALID_ARG, "kernel name is NULL");
  cr_expect_eq(te_module_call(NULL, "k", 2, x.ts, 1, x.ss), TE_ERR_INVALID_ARG);
  expect_untouched(&x);
}
