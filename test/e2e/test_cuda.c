/* test_cuda.c — the "cuda" target end to end: every GPU kernel of the suite (gpu_cases.h) is
 * built to PTX, RUN on the machine's NVIDIA GPU through the CUDA driver and compared with a
 * plain C reference (gpu_ref.h). The output's device copy starts as the NaN poison, so a kernel
 * that leaves an element unwritten fails.
 *
 * Without a CUDA driver (no libcuda.so.1, or no GPU) each test prints a SKIP line with the
 * reason and is reported as skipped (ctest passes; TE_REQUIRE=cuda makes it fail). Building needs
 * no GPU; see test_ptx.c and errors/test_gpu_errors.c for what runs everywhere.
 */
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>
#include <te/device.h>

#include "../common/gpu_cases.h"
#include "../common/gpu_ref.h"
#include "../common/te_test.h"

TestSuite(cuda, .init = tt_setup, .fini = tt_teardown);

/* Skips the test (visibly; a failure when TE_REQUIRE lists "cuda") without a CUDA driver. */
static void need_cuda(void) {
  if (!te_device_available(kDLCUDA))
    tt_skip("cuda", "no CUDA driver: %s", te_device_last_error());
}

static const DLDevice dev0 = {kDLCUDA, 0};

/* Runs module m's kernel on copies of bufs in device memory and copies the last one, the
   output, back into it. The caller poisons the output first: its device copy starts as the
   poison, so an element the kernel never writes comes back as NaN. */
static void run_on_device(te_module *m, const char *name, int nt, tt_buf *const bufs[]) {
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
  tt_buf *out = bufs[nt - 1];
  size_t bytes = (size_t)out->numel * out->elem_bytes;
  cr_assert_eq(te_device_copy(out->dl.data, (DLDevice){kDLCPU, 0}, mem[nt - 1], dev0, bytes), TE_OK,
               "%s", te_device_last_error());
  for (int i = 0; i < nt; i++)
    te_device_free(dev0, mem[i]);
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
  run_on_device(m, c.name, c.ntensors, bufs);
  tt_assert_close(bufs[out], refs[out], reduce_len);
  printf("cuda.%s: matches the C reference\n", c.name);
}

Test(cuda, elementwise) {
  need_cuda();
  static const int64_t s[] = {1000}; /* not a multiple of 64: the guard */
  check_case(gpu_case_elementwise, (const int64_t *const[]){s, s, s}, (const int[]){1, 1, 1}, 1);
}

Test(cuda, reduce) {
  need_cuda();
  static const int64_t a[] = {64, 1024}, b[] = {64};
  check_case(gpu_case_reduce, (const int64_t *const[]){a, b}, (const int[]){2, 1}, 1024);
}

Test(cuda, matmul) {
  need_cuda();
  static const int64_t s[] = {128, 128};
  check_case(gpu_case_matmul, (const int64_t *const[]){s, s, s}, (const int[]){2, 2, 2}, 128);
}

Test(cuda, softmax) {
  need_cuda();
  static const int64_t s[] = {32, 256};
  check_case(gpu_case_softmax, (const int64_t *const[]){s, s}, (const int[]){2, 2}, 256);
}
