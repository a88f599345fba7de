/* test_cuda.c — the "cuda" target end to end: every GPU kernel of the suite (gpu_cases.h) is
 * built to PTX, RUN on the machine's NVIDIA GPU through the CUDA driver and compared with the
 * same computation built for the CPU with its default schedule.
 *
 * Without a CUDA driver (no libcuda.so.1, or no GPU) each test prints a SKIP line with the
 * reason and is reported as skipped (ctest passes). Building needs no GPU; see test_ptx.c and
 * errors/test_gpu_errors.c for what runs everywhere.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <te/device.h>

#include "../common/gpu_cases.h"
#include "../common/te_test.h"

TestSuite(cuda, .init = tt_setup, .fini = tt_teardown);

static bool have_cuda(const char *test) {
  if (te_device_available(kDLCUDA))
    return true;
  printf("SKIP cuda.%s: %s\n", test, te_device_last_error());
  fflush(stdout);
  return false;
}

static const DLDevice dev0 = {kDLCUDA, 0};

/* Runs module m's kernel on copies of bufs in device memory; the last buffer is the output,
   copied back into out. */
static void run_on_device(te_module *m, const char *name, int nt, tt_buf *const bufs[],
                          tt_buf *out) {
  DLTensor dl[8];
  DLTensor *dlp[8];
  void *mem[8] = {0};
  for (int i = 0; i < nt; i++) {
    size_t bytes = (size_t)bufs[i]->numel * bufs[i]->elem_bytes;
    cr_assert_eq(te_device_alloc(dev0, bytes, &mem[i]), TE_OK, "%s", te_device_last_error());
    cr_assert_eq(te_device_copy(mem[i], dev0, bufs[i]->dl.data, (DLDevice){kDLCPU, 0}, bytes),
                 TE_OK, "%s", te_device_last_error());
    dl[i] = bufs[i]->dl;
    dl[i].data = mem[i];
    dl[i].device = dev0;
    dlp[i] = &dl[i];
  }
  te_status st = te_module_call(m, name, nt, dlp, 0, NULL);
  cr_assert_eq(st, TE_OK, "%s", te_last_error(tt_ctx));
  cr_assert_eq(te_device_sync(dev0), TE_OK, "%s", te_device_last_error());
  size_t bytes = (size_t)out->numel * out->elem_bytes;
  cr_assert_eq(te_device_copy(out->dl.data, (DLDevice){kDLCPU, 0}, mem[nt - 1], dev0, bytes), TE_OK,
               "%s", te_device_last_error());
  for (int i = 0; i < nt; i++)
    te_device_free(dev0, mem[i]);
}

static void check_case(gpu_case_builder b, const int64_t *const shapes[], const int ndims[],
                       int64_t reduce_len) {
  gpu_case c;
  cr_assert(b(tt_ctx, &c), "%s", te_last_error(tt_ctx));
  te_module *m = NULL;
  TT_OK(te_build(c.sch, c.name, c.ntensors, c.tensors, 0, NULL,
                 TT_NN(te_target_parse(tt_ctx, "cuda")), &m));
  te_tensor *outt = c.tensors[c.ntensors - 1];
  te_module *ref = tt_build(tt_schedule1(outt), "ref", c.ntensors, c.tensors, 0, NULL);
  tt_buf *bufs[8], *got = tt_alloc(TE_F32, ndims[c.ntensors - 1], shapes[c.ntensors - 1]);
  for (int i = 0; i < c.ntensors; i++) {
    bufs[i] = tt_alloc(TE_F32, ndims[i], shapes[i]);
    if (i < c.ntensors - 1)
      tt_fill(bufs[i], 17 + (uint64_t)i);
  }
  tt_call(ref, "ref", c.ntensors, bufs, 0, NULL);
  run_on_device(m, c.name, c.ntensors, bufs, got);
  tt_assert_close(got, bufs[c.ntensors - 1], reduce_len);
  printf("cuda.%s: matches the CPU\n", c.name);
}

Test(cuda, elementwise) {
  if (!have_cuda("elementwise"))
    cr_skip_test("no CUDA driver");
  static const int64_t s[] = {1000}; /* not a multiple of 64: the guard */
  check_case(gpu_case_elementwise, (const int64_t *const[]){s, s, s}, (const int[]){1, 1, 1}, 1);
}

Test(cuda, reduce) {
  if (!have_cuda("reduce"))
    cr_skip_test("no CUDA driver");
  static const int64_t a[] = {64, 1024}, b[] = {64};
  check_case(gpu_case_reduce, (const int64_t *const[]){a, b}, (const int[]){2, 1}, 1024);
}

Test(cuda, matmul) {
  if (!have_cuda("matmul"))
    cr_skip_test("no CUDA driver");
  static const int64_t s[] = {128, 128};
  check_case(gpu_case_matmul, (const int64_t *const[]){s, s, s}, (const int[]){2, 2, 2}, 128);
}

Test(cuda, softmax) {
  if (!have_cuda("softmax"))
    cr_skip_test("no CUDA driver");
  static const int64_t s[] = {32, 256};
  check_case(gpu_case_softmax, (const int64_t *const[]){s, s}, (const int[]){2, 2}, 256);
}
