/* test_cuda_launch.c — the CUDA host path without a GPU: a fake driver (installed with
 * rt_cuda_use_driver) records what te asks of it — device allocations, the module's PTX, each
 * launch's grid, block and parameter values — so the host entry's argument checks, launch
 * dimensions (symbolic ones computed at call time), parameter order, device temporaries and
 * the cleanup after a failed launch are tested on CPU-only machines. Kernels do not run.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_cases.h"
#include "runtime/cuda_driver.h"
#include "te/device.h"
#include "te/te.h"

typedef struct launch {
  char name[64];
  unsigned dims[6];
  int nparams;
  uint64_t values[8]; /* each parameter's first 8 bytes */
} launch;

static struct {
  int nlaunch, nalloc, nfree, fail_launch; /* fail_launch: 1-based launch to fail, 0 none */
  launch l[8];
  size_t alloc_bytes[8];
  void *alloc_ptr[8];
  bool ptx_has_entry;
  char *fn_names[16]; /* the fake's CUfunction handles, freed when their module is unloaded */
  int nfn;
} fk;

static int fake_nparams; /* parameters of the next launch, set by the test */

static rt_cu_result f_init(unsigned f) { return (void)f, 0; }
static rt_cu_result f_devget(rt_cu_device *d, int i) { return *d = i, 0; }
static rt_cu_result f_retain(rt_cu_context *c, rt_cu_device d) { return (void)d, *c = &fk, 0; }
static rt_cu_result f_setcur(rt_cu_context c) { return (void)c, 0; }
static rt_cu_result f_sync(void) { return 0; }
static rt_cu_result f_alloc(rt_cu_ptr *p, size_t n) {
  void *m = malloc(n);
  if (fk.nalloc < 8)
    fk.alloc_bytes[fk.nalloc] = n, fk.alloc_ptr[fk.nalloc] = m;
  fk.nalloc++;
  *p = (rt_cu_ptr)(uintptr_t)m;
  return 0;
}
static rt_cu_result f_free(rt_cu_ptr p) {
  fk.nfree++;
  free((void *)(uintptr_t)p);
  return 0;
}
static rt_cu_result f_htod(rt_cu_ptr d, const void *s, size_t n) {
  memcpy((void *)(uintptr_t)d, s, n);
  return 0;
}
static rt_cu_result f_dtoh(void *d, rt_cu_ptr s, size_t n) {
  memcpy(d, (void *)(uintptr_t)s, n);
  return 0;
}
static rt_cu_result f_dtod(rt_cu_ptr d, rt_cu_ptr s, size_t n) {
  memcpy((void *)(uintptr_t)d, (void *)(uintptr_t)s, n);
  return 0;
}
static rt_cu_result f_load(rt_cu_module *m, const void *ptx, unsigned n, int *o, void **v) {
  (void)n, (void)o, (void)v;
  fk.ptx_has_entry = strstr(ptx, ".entry") != NULL;
  *m = &fk;
  return 0;
}
/* One module at a time: unloading it frees every function handle handed out. */
static void free_fn_names(void) {
  for (int i = 0; i < fk.nfn; i++)
    free(fk.fn_names[i]);
  fk.nfn = 0;
}
static rt_cu_result f_unload(rt_cu_module m) { return (void)m, free_fn_names(), 0; }
static rt_cu_result f_getfn(rt_cu_function *f, rt_cu_module m, const char *name) {
  (void)m;
  if (fk.nfn >= 16)
    return 1;
  *f = fk.fn_names[fk.nfn++] = strdup(name);
  return 0;
}
static rt_cu_result f_launch(rt_cu_function f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                             unsigned by, unsigned bz, unsigned shm, void *stream, void **args,
                             void **extra) {
  (void)shm, (void)stream, (void)extra;
  if (fk.nlaunch >= 8)
    return 1;
  launch *l = &fk.l[fk.nlaunch++];
  snprintf(l->name, sizeof l->name, "%s", (const char *)f);
  unsigned d[6] = {gx, gy, gz, bx, by, bz};
  memcpy(l->dims, d, sizeof d);
  l->nparams = fake_nparams;
  for (int i = 0; i < fake_nparams && i < 8; i++)
    memcpy(&l->values[i], args[i], 8);
  return fk.fail_launch == fk.nlaunch ? 700 : 0; /* 700: CUDA_ERROR_ILLEGAL_ADDRESS */
}
static rt_cu_result f_errname(rt_cu_result r, const char **s) {
  *s = r == 700 ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
  return 0;
}
static rt_cu_result f_errstr(rt_cu_result r, const char **s) {
  (void)r;
  *s = "fake driver";
  return 0;
}

static void install(void) {
  memset(&fk, 0, sizeof fk);
  static const rt_cuda d = {f_init,  f_devget, f_retain,  f_setcur, f_sync, f_alloc,
                            f_free,  f_htod,   f_dtoh,    f_dtod,   f_load, f_unload,
                            f_getfn, f_launch, f_errname, f_errstr, NULL};
  rt_cuda_use_driver(&d);
}

/* Handles left in fk.fn_names belong to a module te never unloaded: LeakSanitizer shows them. */
static void uninstall(void) { rt_cuda_use_driver(NULL); }

TestSuite(cuda_launch, .init = install, .fini = uninstall);

static DLTensor dev_tensor(int ndim, int64_t *shape) {
  void *p = NULL;
  int64_t n = 1;
  for (int i = 0; i < ndim; i++)
    n *= shape[i];
  cr_assert_eq(te_device_alloc((DLDevice){kDLCUDA, 0}, (size_t)n * 4, &p), TE_OK, "%s",
               te_device_last_error());
  return (DLTensor){p, {kDLCUDA, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
}

Test(cuda_launch, elementwise_symbolic_grid) {
  te_ctx *ctx = te_ctx_new();
  gpu_case c;
  cr_assert(gpu_case_elementwise(ctx, &c));
  te_module *m = NULL;
  cr_assert_eq(te_build(c.sch, c.name, 3, c.tensors, 0, NULL, te_target_parse(ctx, "cuda"), &m),
               TE_OK, "%s", te_last_error(ctx));
  cr_assert(te_device_available(kDLCUDA));
  int64_t shape[1] = {1000};
  DLTensor t[3] = {dev_tensor(1, shape), dev_tensor(1, shape), dev_tensor(1, shape)};
  DLTensor *ts[3] = {&t[0], &t[1], &t[2]};
  fake_nparams = 4; /* A, B, C, n */
  cr_assert_eq(te_module_call(m, c.name, 3, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  cr_assert_eq(fk.nlaunch, 1);
  cr_expect(fk.ptx_has_entry);
  launch *l = &fk.l[0];
  cr_expect_str_eq(l->name, "gpu_add_kernel0");
  unsigned want[6] = {16, 1, 1, 64, 1, 1}; /* ceil(1000 / 64) blocks of 64 */
  for (int d = 0; d < 6; d++)
    cr_expect_eq(l->dims[d], want[d], "dim %d: %u", d, l->dims[d]);
  for (int i = 0; i < 3; i++)
    cr_expect_eq(l->values[i], (uint64_t)(uintptr_t)t[i].data, "param %d", i);
  cr_expect_eq(l->values[3], 1000u, "n");
  cr_expect_eq(te_device_sync((DLDevice){kDLCUDA, 0}), TE_OK);
  for (int i = 0; i < 3; i++)
    te_device_free((DLDevice){kDLCUDA, 0}, t[i].data);
  te_ctx_free(ctx);
}

/* Two kernels with a device temporary between them; the second launch fails: the temporary
   is freed anyway and the driver's error reaches the context. */
Test(cuda_launch, temporary_and_failed_launch) {
  te_ctx *ctx = te_ctx_new();
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 1024);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, TE_EXPRS(n));
  te_tensor *b =
      te_compute(ctx, "B", 1, TE_EXPRS(n), TE_EXPRS(i), te_mul(TE_AT(a, i), TE_AT(a, i)));
  te_tensor *out = te_compute(ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                              te_add(TE_AT(b, i), te_float(ctx, TE_F32, 1.0)));
  te_schedule *s = te_schedule_new(ctx, 1, (te_tensor *const[]){out});
  te_tensor *st[2] = {b, out};
  for (int k = 0; k < 2; k++) {
    te_stage *g = te_stage_of(s, st[k]);
    te_iter *o, *in;
    cr_assert_eq(te_split(g, te_axis(g, 0), 256, &o, &in), TE_OK);
    te_bind(g, o, TE_BLOCK_X), te_bind(g, in, TE_THREAD_X);
  }
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "two", 2, (te_tensor *const[]){a, out}, 0, NULL,
                        te_target_parse(ctx, "cuda -arch=sm_90"), &m),
               TE_OK, "%s", te_last_error(ctx));
  int64_t shape[1] = {1024};
  DLTensor t[2] = {dev_tensor(1, shape), dev_tensor(1, shape)};
  DLTensor *ts[2] = {&t[0], &t[1]};
  int allocs = fk.nalloc, frees = fk.nfree;
  fake_nparams = 2;
  cr_assert_eq(te_module_call(m, "two", 2, ts, 0, NULL), TE_OK, "%s", te_last_error(ctx));
  cr_expect_eq(fk.nlaunch, 2);
  cr_expect_eq(fk.nalloc, allocs + 1, "one temporary");
  cr_expect_eq(fk.alloc_bytes[allocs], 4096u);
  cr_expect_eq(fk.nfree, frees + 1, "the temporary is freed");
  uint64_t temp = (uint64_t)(uintptr_t)fk.alloc_ptr[allocs];
  cr_expect_eq(fk.l[0].values[0], (uint64_t)(uintptr_t)t[0].data, "kernel0 reads A");
  cr_expect_eq(fk.l[0].values[1], temp, "kernel0 writes B");
  cr_expect_eq(fk.l[1].values[0], (uint64_t)(uintptr_t)t[1].data, "kernel1 writes C");
  cr_expect_eq(fk.l[1].values[1], temp, "kernel1 reads B");
  /* now the second launch fails */
  fk.nlaunch = 0;
  fk.fail_launch = 2;
  allocs = fk.nalloc, frees = fk.nfree;
  cr_expect_eq(te_module_call(m, "two", 2, ts, 0, NULL), TE_ERR_RUNTIME);
  cr_expect(strstr(te_last_error(ctx), "CUDA_ERROR_ILLEGAL_ADDRESS"), "%s", te_last_error(ctx));
  cr_expect(strstr(te_last_error(ctx), "two_kernel1"), "%s", te_last_error(ctx));
  cr_expect_eq(fk.nfree - frees, fk.nalloc - allocs, "every temporary freed after the failure");
  te_device_free((DLDevice){kDLCUDA, 0}, t[0].data);
  te_device_free((DLDevice){kDLCUDA, 0}, t[1].data);
  te_ctx_free(ctx);
}

Test(cuda_launch, copies) {
  float host[4] = {1, 2, 3, 4}, back[4] = {0};
  void *p = NULL;
  DLDevice d = {kDLCUDA, 0}, h = {kDLCPU, 0};
  cr_assert_eq(te_device_alloc(d, sizeof host, &p), TE_OK);
  cr_assert_eq(te_device_copy(p, d, host, h, sizeof host), TE_OK);
  cr_assert_eq(te_device_copy(back, h, p, d, sizeof host), TE_OK);
  cr_expect_arr_eq(back, host, sizeof host);
  cr_expect_eq(te_device_free(d, p), TE_OK);
  cr_expect_eq(te_device_alloc((DLDevice){kDLCUDA, 1}, 4, &p), TE_ERR_INVALID_ARG);
  cr_expect_eq(te_device_alloc((DLDevice){kDLVulkan, 0}, 4, &p), TE_ERR_UNSUPPORTED);
}
