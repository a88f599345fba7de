/* test_cuda.c — the "cuda" target end to end: every GPU kernel of the suite (gpu_cases.h) and
 * every math function (libdevice) is built to PTX, RUN on the machine's NVIDIA GPU through the
 * CUDA driver and compared with a plain C reference (gpu_ref.h, libm). The output's device copy
 * starts as the NaN poison, so a kernel that leaves an element unwritten fails.
 *
 * Without a GPU (no libcuda.so.1, or cuInit / cuDeviceGetCount find no device) the same calls go
 * to the fake driver (test/fake_cuda, through TE_CUDA_DRIVER): the PTX is loaded, every launch's
 * grid, block and parameters are checked against the .entry signature and the live allocations,
 * each of the test's buffers must reach a launch and the output must come back as uploaded (the
 * fake runs nothing); then the numeric part prints a SKIP line (a failure when TE_REQUIRE lists
 * "cuda"). See test_ptx.c for the PTX checks (ptxas) that run everywhere.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <te/device.h>

#include "../common/gpu_cases.h"
#include "../common/gpu_ref.h"
#include "../common/te_test.h"
#include "../fake_cuda/fake_libcuda.h"

TestSuite(cuda, .init = tt_setup, .fini = tt_teardown);

static bool real_gpu;        /* a CUDA driver with a device: kernels run */
static char why_no_gpu[300]; /* else why not */
/* The tensors' byte_offset into their device allocations (run_on_device): 0, or one element to
   hand kernels pointers that are not 16-byte aligned. */
static size_t dev_offset;

/* Whether the machine's CUDA driver (TE_CUDA_DRIVER or libcuda.so.1) finds a device. */
static bool probe_gpu(void) {
  const char *path = getenv("TE_CUDA_DRIVER");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(why_no_gpu, sizeof why_no_gpu, "no CUDA driver (%s)", dlerror());
    return false;
  }
  int (*init)(unsigned) = (int (*)(unsigned))dlsym(lib, "cuInit");
  int (*count)(int *) = (int (*)(int *))dlsym(lib, "cuDeviceGetCount");
  int n = 0, r = init ? init(0) : -1;
  if (r == 0 && count)
    r = count(&n);
  if (r != 0 || n < 1) {
    snprintf(why_no_gpu, sizeof why_no_gpu, "the CUDA driver finds no GPU (cuInit: %d)", r);
    return false;
  }
  return true;
}

/* Chooses the driver before te first loads one (once per test: Criterion runs each test in a
   process of its own): the machine's when it has a GPU, else the fake. */
static void use_cuda(void) {
  real_gpu = probe_gpu();
  if (!real_gpu)
    setenv("TE_CUDA_DRIVER", TE_FAKE_LIBCUDA, 1);
  cr_assert(te_device_available(kDLCUDA), "%s", te_device_last_error());
}

/* The fake's records (the library te loaded: dlopen of the same path returns it). */
static void *fake_sym(const char *name) {
  void *lib = dlopen(TE_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  cr_assert_not_null(lib, "the fake CUDA driver is not loaded: %s", dlerror());
  void *f = dlsym(lib, name);
  cr_assert_not_null(f, "%s", dlerror());
  dlclose(lib);
  return f;
}

/* Without a GPU: each of the test's device buffers reached a launch as a pointer parameter
   (the fake checked every launch's grid, block and pointers), the output came back as the
   poison it was uploaded as, and the numeric part is skipped, visibly. */
static int fake_nlaunches(void) {
  fake_cuda_nlaunches_fn f;
  *(void **)&f = fake_sym("fake_cuda_nlaunches");
  return f();
}

static void check_fake_launches(const char *name, int first, int nt, void *const mem[],
                                const tt_buf *out) {
  fake_cuda_launch_fn launch_at;
  *(void **)&launch_at = fake_sym("fake_cuda_launch_at");
  int nl = fake_nlaunches();
  cr_assert_gt(nl, first, "%s: no kernel launched", name);
  for (int i = 0; i < nt; i++) {
    bool passed = false;
    for (int k = first; k < nl && !passed; k++) {
      const fake_cuda_launch *l = launch_at(k);
      for (int p = 0; p < l->nparams; p++)
        passed |= l->pointer[p] && l->value[p] == (uint64_t)(uintptr_t)mem[i] + dev_offset;
    }
    cr_expect(passed, "%s: buffer %d never reached a kernel", name, i);
  }
  const unsigned char *got = out->dl.data;
  size_t bytes = (size_t)out->numel * out->elem_bytes;
  tt_buf *poison = tt_alloc(out->dl.dtype.bits == 64 ? TE_F64 : TE_F32, out->dl.ndim, out->shape);
  tt_poison(poison);
  cr_expect(memcmp(got, poison->dl.data, bytes) == 0,
            "%s: the output changed without a GPU: the fake driver runs nothing", name);
  printf("cuda.%s: %d launch(es) checked by the fake driver\n", name, nl - first);
  tt_skip_part("cuda", "cuda.%s: the numeric check needs an NVIDIA GPU: %s", name, why_no_gpu);
}

static const DLDevice dev0 = {kDLCUDA, 0};

/* Runs module m's kernel on copies of bufs in device memory and copies the last one, the
   output, back into it. The caller poisons the output first: its device copy starts as the
   poison, so an element the kernel never writes comes back as NaN. */
static void run_on_device(te_module *m, const char *name, int nt, tt_buf *const bufs[],
                          void *mem[]) {
  DLTensor dl[8];
  DLTensor *dlp[8];
  for (int i = 0; i < nt; i++) {
    size_t bytes = (size_t)bufs[i]->numel * bufs[i]->elem_bytes;
    cr_assert_eq(te_device_alloc(dev0, bytes + dev_offset, &mem[i]), TE_OK, "%s",
                 te_device_last_error());
    cr_assert_eq(te_device_copy((char *)mem[i] + dev_offset, dev0, bufs[i]->dl.data,
                                (DLDevice){kDLCPU, 0}, bytes),
                 TE_OK, "%s", te_device_last_error());
    dl[i] = bufs[i]->dl;
    dl[i].data = mem[i];
    dl[i].byte_offset = dev_offset;
    dl[i].device = dev0;
    dlp[i] = &dl[i];
  }
  te_status st = te_module_call(m, name, nt, dlp, 0, NULL);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_eq(te_device_sync(dev0), TE_OK, "%s", te_device_last_error());
  tt_buf *out = bufs[nt - 1];
  size_t bytes = (size_t)out->numel * out->elem_bytes;
  cr_assert_eq(te_device_copy(out->dl.data, (DLDevice){kDLCPU, 0}, (char *)mem[nt - 1] + dev_offset,
                              dev0, bytes),
               TE_OK, "%s", te_device_last_error());
  for (int i = 0; i < nt; i++)
    te_device_free(dev0, mem[i]);
}

/* Runs m's kernel `name` on bufs (inputs, then the poisoned output) and, with a GPU, compares
   the output with ref; without one checks the launches (check_fake_launches). */
static void run_and_check(te_module *m, const char *name, int nt, tt_buf *const bufs[],
                          const tt_buf *ref, int64_t reduce_len) {
  void *mem[8] = {0};
  int first = real_gpu ? 0 : fake_nlaunches();
  run_on_device(m, name, nt, bufs, mem);
  if (!real_gpu) {
    check_fake_launches(name, first, nt, mem, bufs[nt - 1]);
    return;
  }
  tt_assert_close(bufs[nt - 1], ref, reduce_len);
  printf("cuda.%s: matches the C reference\n", name);
}

/* Builds the case for "cuda", runs it on random inputs and a poisoned output, and compares the
   output with the case's plain C reference (gpu_ref.h), computed into a buffer of its own. */
static void check_case(gpu_case_builder b, const int64_t *const shapes[], const int ndims[],
                       int64_t reduce_len) {
  gpu_case c;
  cr_assert(b(tt_ctx, &c), "%s", te_last_error(tt_ctx));
  te_module *m = NULL;
  TT_OK(te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL,
                 TT_NN(te_target_parse(tt_ctx, "cuda")), &m));
  int out = c.ntensors - 1;
  tt_buf *bufs[8], *refs[8];
  for (int i = 0; i < c.ntensors; i++) {
    bufs[i] = tt_alloc(TE_F32, ndims[i], shapes[i]);
    if (i < out)
      tt_fill(bufs[i], 17 + (uint64_t)i);
    refs[i] = bufs[i];
  }
  refs[out] = tt_alloc(TE_F32, ndims[out], shapes[out]);
  cr_assert(gpu_ref_case(c.name, c.ntensors, refs), "no C reference for %s", c.name);
  tt_poison(bufs[out]);
  run_and_check(m, c.name, c.ntensors, bufs, refs[out], reduce_len);
}

Test(cuda, elementwise) {
  use_cuda();
  static const int64_t s[] = {1000}; /* not a multiple of 64: the guard */
  check_case(gpu_case_elementwise, (const int64_t *const[]){s, s, s}, (const int[]){1, 1, 1}, 1);
}

Test(cuda, reduce) {
  use_cuda();
  static const int64_t a[] = {64, 1024}, b[] = {64};
  check_case(gpu_case_reduce, (const int64_t *const[]){a, b}, (const int[]){2, 1}, 1024);
}

Test(cuda, matmul) {
  use_cuda();
  static const int64_t s[] = {128, 128};
  check_case(gpu_case_matmul, (const int64_t *const[]){s, s, s}, (const int[]){2, 2, 2}, 128);
}

Test(cuda, softmax) {
  use_cuda();
  static const int64_t s[] = {32, 256};
  check_case(gpu_case_softmax, (const int64_t *const[]){s, s}, (const int[]){2, 2}, 256);
}

/* A tensor-core GEMM (te_tensorize "mma_m16n8k16", a warp per thread: 128 hardware threads a
   block, which the fake driver checks against the launch): f16 or bf16 inputs, f32 output,
   against a plain sum of the same rounded inputs. */
static void check_mma(gpu_case_builder b, te_dtype in) {
  use_cuda();
  gpu_case c;
  cr_assert(b(tt_ctx, &c), "%s", te_last_error(tt_ctx));
  te_module *m = NULL;
  TT_OK(te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL,
                 TT_NN(te_target_parse(tt_ctx, "cuda")), &m));
  static const int64_t s[] = {64, 64};
  tt_buf *a = tt_alloc(in, 2, s), *bb = tt_alloc(in, 2, s), *out = tt_alloc(TE_F32, 2, s),
         *ref = tt_alloc(TE_F32, 2, s);
  tt_fill(a, 31);
  tt_fill(bb, 32);
  for (int64_t i = 0; i < 64; i++)
    for (int64_t j = 0; j < 64; j++) {
      double sum = 0;
      for (int64_t k = 0; k < 64; k++)
        sum += tt_get(a, i * 64 + k) * tt_get(bb, k * 64 + j);
      tt_set(ref, i * 64 + j, sum);
    }
  tt_poison(out);
  run_and_check(m, c.name, 3, (tt_buf *const[]){a, bb, out}, ref, 64);
  if (!real_gpu) {
    fake_cuda_launch_fn launch_at;
    *(void **)&launch_at = fake_sym("fake_cuda_launch_at");
    const fake_cuda_launch *l = launch_at(fake_nlaunches() - 1);
    cr_expect_eq(l->block[0], 128, "a block of 4 warps: %u threads", l->block[0]);
  }
}

Test(cuda, mma_f16) { check_mma(gpu_case_mma_f16, TE_F16); }
Test(cuda, mma_bf16) { check_mma(gpu_case_mma_bf16, TE_BF16); }

/* ---------------------------------------------------------------- math through libdevice */

typedef double (*math_ref)(double);
static double ref_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double ref_rsqrt(double x) { return 1 / sqrt(x); }

/* y = f(x) (pow: x^x, with twice) over 1000 elements (not a multiple of the 128 threads a
   block), f32 and f64, on inputs in [lo, hi], against libm in double. */
static void check_math(const char *fn, math_ref ref, double lo, double hi, bool twice) {
  for (int d = 0; d < 2; d++) {
    te_dtype dt = d ? TE_F64 : TE_F32;
    te_expr *i = te_var(tt_ctx, "i"), *n = te_int(tt_ctx, 1000);
    te_tensor *x = te_placeholder(tt_ctx, "x", dt, 1, TE_EXPRS(n));
    te_expr *v = TE_AT(x, i);
    te_expr *body =
        twice ? te_call(tt_ctx, fn, 2, TE_EXPRS(v, v)) : te_call(tt_ctx, fn, 1, TE_EXPRS(v));
    te_tensor *y = te_compute(tt_ctx, "y", 1, TE_EXPRS(n), TE_EXPRS(i), body);
    te_schedule *s = te_schedule_new(tt_ctx, 1, (te_tensor *const[]){y});
    te_stage *st = te_stage_of(s, y);
    te_iter *o, *in;
    TT_OK(te_split(st, te_axis(st, 0), 128, &o, &in));
    te_bind(st, o, TE_BLOCK_X);
    te_bind(st, in, TE_THREAD_X);
    char name[40];
    snprintf(name, sizeof name, "math_%s_f%d", fn, d ? 64 : 32);
    te_module *m = NULL;
    te_status built = te_build(s, name, 2, (te_tensor *const[]){x, y}, 0, NULL,
                               TT_NN(te_target_parse(tt_ctx, "cuda")), &m);
    if (built == TE_ERR_UNSUPPORTED && strstr(te_last_error(tt_ctx), "libdevice"))
      tt_skip("libdevice", "%s: %s", name, te_last_error(tt_ctx));
    TT_OK(built);
    tt_buf *bx = TT_ALLOC(dt, 1000), *by = TT_ALLOC(dt, 1000), *ry = TT_ALLOC(dt, 1000);
    tt_fill_range(bx, 91 + (uint64_t)d, lo, hi);
    for (int64_t k = 0; k < 1000; k++) {
      double a = tt_get(bx, k);
      tt_set(ry, k, twice ? pow(a, a) : ref(a));
    }
    tt_poison(by);
    run_and_check(m, name, 2, (tt_buf *const[]){bx, by}, ry, 1);
  }
}

Test(cuda, math_sin) { use_cuda(), check_math("sin", sin, -20, 20, false); }
Test(cuda, math_cos) { use_cuda(), check_math("cos", cos, -20, 20, false); }
Test(cuda, math_tan) { use_cuda(), check_math("tan", tan, -1.4, 1.4, false); }
Test(cuda, math_pow) { use_cuda(), check_math("pow", NULL, 0.3, 3, true); }
Test(cuda, math_erf) { use_cuda(), check_math("erf", erf, -3, 3, false); }
Test(cuda, math_exp) { use_cuda(), check_math("exp", exp, -20, 20, false); }
Test(cuda, math_exp2) { use_cuda(), check_math("exp2", exp2, -20, 20, false); }
Test(cuda, math_log) { use_cuda(), check_math("log", log, 0.01, 100, false); }
Test(cuda, math_log2) { use_cuda(), check_math("log2", log2, 0.01, 100, false); }
Test(cuda, math_log10) { use_cuda(), check_math("log10", log10, 0.01, 100, false); }
Test(cuda, math_tanh) { use_cuda(), check_math("tanh", tanh, -5, 5, false); }
Test(cuda, math_sigmoid) { use_cuda(), check_math("sigmoid", ref_sigmoid, -8, 8, false); }
Test(cuda, math_sqrt) { use_cuda(), check_math("sqrt", sqrt, 0.01, 100, false); }
Test(cuda, math_rsqrt) { use_cuda(), check_math("rsqrt", ref_rsqrt, 0.01, 100, false); }

/* Cross-thread reductions as warp shuffles (gpu_tree_warp.c, shfl.sync.bfly): B[i] = R_k A[i, k]
   with k split by T threads and rfactored, a row a block; T = 48 (two warps, the second half
   empty), 100 (a partial last warp: its shuffles' mask names 4 threads) and 256 (8 warps);
   K = 1000 divides by none. Max of negative values and min of positive ones: a value read past
   the partials (a zero, a poisoned one) would show. The shuffle steps are in the PTX. */
typedef te_expr *(*reduce_fn)(te_expr *, int, te_expr *const[]);

static void warp_tree_case(const char *name, reduce_fn red, int op, int64_t T) {
  use_cuda();
  enum { R = 20, K = 1000 };
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", te_int(tt_ctx, 0), te_int(tt_ctx, K));
  te_tensor *A =
      TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, K))));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(te_int(tt_ctx, R)), TE_EXPRS(i),
                                  red(TE_AT(A, i, k), 1, TE_EXPRS(k))));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 1, TT_TENSORS(B)));
  te_stage *sb = TT_NN(te_stage_of(s, B));
  te_iter *ko = NULL, *ki = NULL;
  te_tensor *rf = NULL;
  TT_OK(te_split(sb, te_reduce_iter(sb, 0), T, &ko, &ki));
  TT_OK(te_rfactor(s, B, ki, 0, &rf));
  te_stage *srf = TT_NN(te_stage_of(s, rf));
  TT_OK(te_bind(sb, te_axis(sb, 0), TE_BLOCK_X));
  TT_OK(te_compute_at(srf, sb, te_axis(sb, 0)));
  TT_OK(te_bind(srf, te_axis(srf, 0), TE_THREAD_X));
  te_module *m = NULL;
  TT_OK(
      te_build(s, name, 2, TT_TENSORS(A, B), 0, NULL, TT_NN(te_target_parse(tt_ctx, "cuda")), &m));
  const char *ptx = TT_NN((void *)te_module_source(m, "ptx"));
  cr_expect(strstr(ptx, "shfl.sync.bfly.b32"), "%s: no warp shuffle in the PTX:\n%s", name, ptx);
  tt_buf *a = TT_ALLOC(TE_F32, R, K), *got = TT_ALLOC(TE_F32, R), *ref = TT_ALLOC(TE_F32, R);
  if (op == 0)
    tt_fill(a, 43);
  else
    tt_fill_range(a, 43, op == 1 ? -2 : 0.1, op == 1 ? -0.1 : 2);
  for (int r = 0; r < R; r++) {
    double acc = op == 0 ? 0 : tt_get(a, (int64_t)r * K);
    for (int c = op == 0 ? 0 : 1; c < K; c++) {
      double x = tt_get(a, (int64_t)r * K + c);
      acc = op == 0 ? acc + x : op == 1 ? fmax(acc, x) : fmin(acc, x);
    }
    tt_set(ref, r, acc);
  }
  tt_poison(got);
  run_and_check(m, name, 2, (tt_buf *const[]){a, got}, ref, op == 0 ? K : 1);
}

Test(cuda, warp_tree_sum_48) { warp_tree_case("wtree_sum48", te_sum, 0, 48); }
Test(cuda, warp_tree_max_100) { warp_tree_case("wtree_max100", te_max_r, 1, 100); }
Test(cuda, warp_tree_min_256) { warp_tree_case("wtree_min256", te_min_r, 2, 256); }

/* Vectorized loops inside kernels (gpu_case_vector, lib/codegen/ptx_vector.c): B[r, j] =
   select(a > 0, a, a / 2) + f32(i32(a * 4)) of a = A[r, j * stride + offset], against plain C.
   With misaligned, every tensor starts one element past its allocation (byte_offset 4): the
   kernels' entry check sends them down the element-wise copy of the body (a 128-bit access
   there would fault). The fake driver checks the launches; a GPU runs them. */
static void vector_case(const gpu_vec_spec *v, bool misaligned) {
  use_cuda();
  gpu_case c;
  cr_assert(gpu_case_vector(tt_ctx, &c, v), "%s", te_last_error(tt_ctx));
  te_module *m = NULL;
  TT_OK(te_build(c.sch, c.name, 2, c.tensors, 0, NULL, TT_NN(te_target_parse(tt_ctx, "cuda")), &m));
  const char *ptx = TT_NN((void *)te_module_source(m, "ptx"));
  cr_expect(strstr(ptx, "st.global.v4.b32"), "%s: no 128-bit store in the PTX:\n%s", v->name, ptx);
  int64_t acols = v->cols * v->stride + v->offset;
  tt_buf *a = TT_ALLOC(TE_F32, v->rows, acols), *got = TT_ALLOC(TE_F32, v->rows, v->cols);
  tt_buf *ref = TT_ALLOC(TE_F32, v->rows, v->cols);
  tt_fill(a, 61);
  for (int64_t r = 0; r < v->rows; r++)
    for (int64_t j = 0; j < v->cols; j++) {
      float x = (float)tt_get(a, r * acols + j * v->stride + v->offset);
      float pos = x > 0 ? x : x * 0.5f;
      tt_set(ref, r * v->cols + j, (double)(pos + (float)(int32_t)(x * 4.0f)));
    }
  tt_poison(got);
  dev_offset = misaligned ? sizeof(float) : 0;
  run_and_check(m, c.name, 2, (tt_buf *const[]){a, got}, ref, 1);
  dev_offset = 0;
}

#define VSPEC(...) (&(gpu_vec_spec){__VA_ARGS__})

Test(cuda, vector_dense) {
  vector_case(VSPEC("vec_dense", TE_F32, 3, 1024, 4, 64, 0, 1, false, NULL), false);
}
Test(cuda, vector_misaligned_arguments) {
  vector_case(VSPEC("vec_misaligned", TE_F32, 3, 1024, 4, 64, 0, 1, false, NULL), true);
}
Test(cuda, vector_masked_tail) {
  vector_case(VSPEC("vec_tail", TE_F32, 3, 1004, 8, 32, 0, 1, false, NULL), false);
}
Test(cuda, vector_offset_and_gather) {
  vector_case(VSPEC("vec_off", TE_F32, 2, 512, 4, 32, 1, 1, false, NULL), false);
  vector_case(VSPEC("vec_gather", TE_F32, 2, 512, 4, 32, 0, 2, false, NULL), false);
}
Test(cuda, vector_shared_copy) {
  vector_case(VSPEC("vec_shared", TE_F32, 3, 1024, 4, 64, 0, 1, true, NULL), false);
  vector_case(VSPEC("vec_shared_mis", TE_F32, 3, 1024, 4, 64, 0, 1, true, NULL), true);
}
