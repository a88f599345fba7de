/* test_entry_checks.c (errors) — the calling convention's checks, one misuse at a time, with the
 * whole message each target gives. Every target's entry runs the checks lowering's make_entry
 * writes, so "llvm" (the JIT), "vulkan" (the host runs them before it copies anything: no device
 * is needed for a refused call) and "cuda" (the host entry, JIT'd: refused before any launch, so
 * no driver is needed) print the same text, except where the calling convention differs by
 * target: the device rule, the 32-bit limits of vulkan, and the checks only kernels working in
 * the tensors' own memory need (alignment, overlap). Each refused call leaves the output
 * poisoned.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(err_entry, .init = tt_setup, .fini = tt_teardown);

/* C[i, j] = A[i, j] + 1 over n x 4; for GPU targets i and j fused and bound 4 threads a block. */
static te_module *build(const char *target) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *four = te_int(tt_ctx, 4);
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(n, four)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(n, four), TE_EXPRS(i, j),
                                  te_add(tt_at2(A, i, j), te_float(tt_ctx, TE_F32, 1))));
  te_schedule *s = tt_schedule1(C);
  if (strcmp(target, "llvm") != 0) {
    te_stage *st = tt_stage(s, C);
    te_iter *f = NULL, *bx = NULL, *tx = NULL;
    TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
    TT_OK(te_split(st, f, 4, &bx, &tx));
    TT_OK(te_bind(st, bx, TE_BLOCK_X));
    TT_OK(te_bind(st, tx, TE_THREAD_X));
  }
  te_target *t = TT_NN(te_target_parse(tt_ctx, target));
  te_module *m = NULL;
  TT_OK(te_build(s, "k", 2, TT_TENSORS(A, C), 0, NULL, t, &m));
  return m;
}

typedef struct args {
  tt_buf *a, *c;
  DLTensor A, C;
  int64_t strides[2];
} args;

/* Good arguments: A and C of 5 x 4 on device (the DLTensors are copies the test may spoil). */
static void fresh(args *x, int device) {
  x->A = x->a->dl;
  x->C = x->c->dl;
  x->A.device.device_type = x->C.device.device_type = device;
}

/* Calls with the spoiled arguments: the status, the whole message, and C still poisoned. */
static void refused(te_module *m, args *x, DLTensor *a, DLTensor *c, te_status want,
                    const char *msg) {
  te_clear_error(tt_ctx);
  tt_poison(x->c);
  te_status st = te_module_call(m, "k", 2, (DLTensor *const[]){a, c}, 0, NULL);
  cr_expect_eq(st, want, "%s: status %s, want %s (%s)", msg, te_status_str(st), te_status_str(want),
               te_last_error(tt_ctx));
  cr_expect_str_eq(te_last_error(tt_ctx), msg);
  for (int64_t p = 0; p < x->c->numel; p++)
    cr_assert(isnan(tt_get(x->c, p)), "%s: a refused call wrote element %lld", msg, (long long)p);
}

#define PRE "te_module_call: kernel 'k': "

/* The checks every target makes, with the same messages. */
static void common_checks(te_module *m, args *x, int device) {
  fresh(x, device);
  refused(m, x, NULL, &x->C, TE_ERR_INVALID_ARG, PRE "argument 'A' (#0) is NULL");
  x->A.ndim = 1;
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE, PRE "argument 'A' (#0) ndim: expected 2, got 1");
  fresh(x, device);
  x->C.dtype.code = kDLInt;
  refused(m, x, &x->A, &x->C, TE_ERR_TYPE,
          PRE "argument 'C' (#1) must be f32; dtype code: expected 2, got 0");
  fresh(x, device);
  x->A.dtype.bits = 64;
  refused(m, x, &x->A, &x->C, TE_ERR_TYPE,
          PRE "argument 'A' (#0) must be f32; dtype bits: expected 32, got 64");
  fresh(x, device);
  x->A.dtype.lanes = 4;
  refused(m, x, &x->A, &x->C, TE_ERR_TYPE,
          PRE "argument 'A' (#0) must be f32; dtype lanes: expected 1, got 4");
  fresh(x, device);
  x->A.data = NULL;
  refused(m, x, &x->A, &x->C, TE_ERR_INVALID_ARG, PRE "argument 'A' (#0) has a NULL data pointer");
  fresh(x, device);
  x->C.shape = NULL;
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE, PRE "argument 'C' (#1) has a NULL shape");
  fresh(x, device);
  int64_t c_shape[2] = {5, 5};
  x->C.shape = c_shape;
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE,
          PRE "argument 'C' (#1) dim 1 extent: expected 4, got 5");
  c_shape[0] = 6, c_shape[1] = 4; /* A says n = 5 */
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE,
          PRE "argument 'C' (#1) dim 0 extent: expected 5, got 6");
  fresh(x, device);
  x->strides[0] = 8, x->strides[1] = 1;
  x->A.strides = x->strides;
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) dim 0 stride (only compact row-major tensors are accepted): "
              "expected 4, got 8");
  x->strides[0] = 4, x->strides[1] = 2;
  refused(m, x, &x->A, &x->C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) dim 1 stride (only compact row-major tensors are accepted): "
              "expected 1, got 2");
}

static void setup_args(args *x) {
  x->a = TT_ALLOC(TE_F32, 5, 4);
  x->c = TT_ALLOC(TE_F32, 5, 4);
  tt_fill(x->a, 1);
}

Test(err_entry, llvm) {
  te_module *m = build("llvm");
  args x;
  setup_args(&x);
  common_checks(m, &x, kDLCPU);
  fresh(&x, kDLCPU);
  x.A.device.device_type = kDLCUDA;
  refused(m, &x, &x.A, &x.C, TE_ERR_INVALID_ARG,
          PRE "argument 'A' (#0) device_type (kDLCPU = 1; kDLCUDAHost = 3 is accepted too): "
              "expected 1, got 2");
  fresh(&x, kDLCPU);
  x.A.byte_offset = 2;
  refused(m, &x, &x.A, &x.C, TE_ERR_INVALID_ARG,
          PRE "argument 'A' (#0) data pointer (data + byte_offset) is not aligned to its element "
              "size (4 bytes)");
  fresh(&x, kDLCPU);
  int64_t zero[2] = {0, 4};
  x.A.shape = zero;
  refused(m, &x, &x.A, &x.C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) dim 0 extent (the symbolic size 'n') must be >= 1");
  fresh(&x, kDLCPU);
  refused(m, &x, &x.C, &x.C, TE_ERR_INVALID_ARG,
          PRE "arguments 'A' (#0) and 'C' (#1) overlap in memory; a tensor the kernel writes "
              "must not share memory with another argument");
  fresh(&x, kDLCUDAHost); /* pinned host memory is CPU memory */
  cr_assert_eq(te_module_call(m, "k", 2, (DLTensor *const[]){&x.A, &x.C}, 0, NULL), TE_OK, "%s",
               te_last_error(tt_ctx));
  cr_expect_float_eq(tt_get(x.c, 7), tt_get(x.a, 7) + 1, 1e-6);
}

Test(err_entry, vulkan) {
  te_module *m = build("vulkan");
  args x;
  setup_args(&x);
  common_checks(m, &x, kDLCPU);
  fresh(&x, kDLCPU);
  x.C.device.device_type = kDLCUDA;
  refused(m, &x, &x.A, &x.C, TE_ERR_INVALID_ARG,
          PRE "argument 'C' (#1) device_type (kDLCPU = 1; kDLCUDAHost = 3 is accepted too; te "
              "copies the tensors to the Vulkan device): expected 1, got 2");
  fresh(&x, kDLCPU);
  int64_t zero[2] = {0, 4}, big[2] = {(int64_t)1 << 31, 4};
  x.A.shape = zero;
  refused(m, &x, &x.A, &x.C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) dim 0 extent (the symbolic size 'n') must be in [1, 2^31) for "
              "a vulkan kernel (got 0)");
  x.A.shape = x.C.shape = big;
  refused(m, &x, &x.A, &x.C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) dim 0 extent (the symbolic size 'n') must be in [1, 2^31) for "
              "a vulkan kernel (got 2147483648)");
  int64_t many[2] = {(int64_t)1 << 30, 4}; /* 2^32 elements */
  x.A.shape = x.C.shape = many;
  refused(m, &x, &x.A, &x.C, TE_ERR_SHAPE,
          PRE "argument 'A' (#0) has 2^31 elements or more; vulkan kernels index with 32 bits");
}

/* The cuda host entry refuses before it launches anything, so this needs no driver. */
Test(err_entry, cuda) {
  te_module *m = build("cuda");
  args x;
  setup_args(&x);
  common_checks(m, &x, kDLCUDA);
  fresh(&x, kDLCUDA);
  x.A.device.device_type = kDLCPU;
  refused(m, &x, &x.A, &x.C, TE_ERR_INVALID_ARG,
          PRE "argument 'A' (#0) device_type (kDLCUDA = 2: device memory): expected 2, got 1");
  fresh(&x, kDLCUDA);
  refused(m, &x, &x.C, &x.C, TE_ERR_INVALID_ARG,
          PRE "arguments 'A' (#0) and 'C' (#1) overlap in memory; a tensor the kernel writes "
              "must not share memory with another argument");
}
