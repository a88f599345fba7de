/* cuda.c — the CUDA launcher: modules of PTX text, kernel launches, device memory.
 *
 * A te_rt_cuda_module holds the PTX of one te module and its kernels' names; the first launch
 * loads it into the device (cuModuleLoadDataEx: the driver compiles the PTX for the GPU it has,
 * its error log goes into the message when that fails) and looks up the kernels, under a mutex,
 * so modules may be launched from several threads. Launches are asynchronous on the default
 * stream, so the kernels of one call run in order; te_device_sync (te/device.h) waits for them.
 * The host entry of a cuda module (ptx_host.c) calls te_rt_cuda_alloc / te_rt_cuda_launch /
 * te_rt_cuda_free; the te_device_* helpers sit on the same functions (device.c).
 */
#define _POSIX_C_SOURCE 200809L /* strdup */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "mem_hook.h"
#include "te/core.h"
#include "te/runtime.h"

struct te_rt_cuda_module {
  char *ptx;
  int nkernels;
  char **names;
  pthread_mutex_t lock;
  rt_cu_module mod; /* NULL until the first launch */
  rt_cu_function *fns;
};

/* Memory of a module belongs to no context: the process's counter of the allocation hook. */
#define RT_ALLOC(size) te_rt_mem_alloc(NULL, (size), true, __FILE__, __LINE__)

static char *rt_strdup(const char *s) {
  size_t n = strlen(s) + 1;
  char *c = RT_ALLOC(n);
  return c ? memcpy(c, s, n) : NULL;
}

te_rt_cuda_module *te_rt_cuda_module_new(const char *ptx, int nkernels, const char *const names[]) {
  if (nkernels < 0 || (nkernels > 0 && !names)) {
    te_rt_error(TE_ERR_INVALID_ARG, "te_rt_cuda_module_new: needs nkernels >= 0 and their names");
    return NULL;
  }
  for (int i = 0; i < nkernels; i++)
    if (!names[i]) {
      te_rt_error(TE_ERR_INVALID_ARG, "te_rt_cuda_module_new: a kernel name is NULL");
      return NULL;
    }
  te_rt_cuda_module *m = RT_ALLOC(sizeof *m);
  if (!m)
    return NULL;
  m->ptx = rt_strdup(ptx ? ptx : "");
  m->names = RT_ALLOC(sizeof *m->names * ((size_t)nkernels + 1));
  m->fns = RT_ALLOC(sizeof *m->fns * ((size_t)nkernels + 1));
  bool ok = m->ptx && m->names && m->fns;
  for (int i = 0; ok && i < nkernels; i++)
    ok = (m->names[i] = rt_strdup(names[i])) != NULL;
  m->nkernels = nkernels;
  pthread_mutex_init(&m->lock, NULL);
  if (!ok) {
    te_rt_cuda_module_free(m);
    return NULL;
  }
  return m;
}

void te_rt_cuda_module_free(te_rt_cuda_module *m) {
  if (!m)
    return;
  if (m->mod) {
    const rt_cuda *d = rt_cuda_get("te_rt_cuda_module_free");
    if (d)
      d->ModuleUnload(m->mod);
  }
  for (int i = 0; m->names && i < m->nkernels; i++)
    free(m->names[i]);
  free(m->names);
  free(m->fns);
  free(m->ptx);
  pthread_mutex_destroy(&m->lock);
  free(m);
}

/* Loads the module into the device (once). */
static int32_t rt_load_module(const rt_cuda *d, te_rt_cuda_module *m) {
  if (m->mod)
    return 0;
  char log[4096] = "";
  int opts[2] = {RT_CU_JIT_ERROR_LOG_BUFFER, RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *vals[2] = {log, (void *)(uintptr_t)sizeof log};
  rt_cu_module mod = NULL;
  rt_cu_result r = d->ModuleLoadDataEx(&mod, m->ptx, 2, opts, vals);
  if (r != RT_CU_SUCCESS) {
    rt_cuda_error(d, r, "te_rt_cuda_launch", "cuModuleLoadDataEx (the driver compiling te's PTX)");
    char msg[1600];
    snprintf(msg, sizeof msg, "%s; log: %.1000s", te_rt_last_error(), log[0] ? log : "(empty)");
    return te_rt_error(TE_ERR_RUNTIME, msg);
  }
  for (int i = 0; i < m->nkernels; i++) {
    r = d->ModuleGetFunction(&m->fns[i], mod, m->names[i]);
    if (r != RT_CU_SUCCESS) {
      d->ModuleUnload(mod);
      return rt_cuda_error(d, r, m->names[i], "cuModuleGetFunction");
    }
  }
  m->mod = mod;
  return 0;
}

int32_t te_rt_cuda_launch(te_rt_cuda_module *m, int32_t kernel, const int64_t dims[6],
                          void **args) {
  if (!m || kernel < 0 || kernel >= m->nkernels) {
    char msg[160];
    snprintf(msg, sizeof msg, "te_rt_cuda_launch: no kernel %d in %s", (int)kernel,
             m ? "the module" : "a NULL module");
    return te_rt_error(TE_ERR_INVALID_ARG, msg);
  }
  if (!dims)
    return te_rt_error(TE_ERR_INVALID_ARG, "te_rt_cuda_launch: dims is NULL");
  const rt_cuda *d = rt_cuda_get(m->names[kernel]);
  if (!d)
    return TE_ERR_RUNTIME;
  pthread_mutex_lock(&m->lock);
  int32_t st = rt_load_module(d, m);
  pthread_mutex_unlock(&m->lock);
  if (st != 0)
    return st;
  for (int i = 0; i < 6; i++) {
    if (dims[i] < 1 || dims[i] > UINT32_MAX) {
      char msg[300];
      snprintf(msg, sizeof msg, "kernel '%s': launch extent %s.%c is %lld (must be 1 .. 2^32-1)",
               m->names[kernel], i < 3 ? "grid" : "block", "xyz"[i % 3], (long long)dims[i]);
      return te_rt_error(TE_ERR_RUNTIME, msg);
    }
  }
  rt_cu_result r =
      d->LaunchKernel(m->fns[kernel], (unsigned)dims[0], (unsigned)dims[1], (unsigned)dims[2],
                      (unsigned)dims[3], (unsigned)dims[4], (unsigned)dims[5], 0, NULL, args, NULL);
  return r == RT_CU_SUCCESS ? 0 : rt_cuda_error(d, r, m->names[kernel], "cuLaunchKernel");
}

void *te_rt_cuda_alloc(int64_t bytes) {
  if (bytes < 0) {
    te_rt_error(TE_ERR_INVALID_ARG, "device allocation: a negative size");
    return NULL;
  }
  const rt_cuda *d = rt_cuda_get("device allocation");
  if (!d)
    return NULL;
  rt_cu_ptr p = 0;
  rt_cu_result r = d->MemAlloc(&p, bytes > 0 ? (size_t)bytes : 1);
  if (r != RT_CU_SUCCESS) {
    rt_cuda_error(d, r, "device allocation", "cuMemAlloc");
    return NULL;
  }
  return (void *)(uintptr_t)p;
}

void te_rt_cuda_free(void *p) {
  if (!p)
    return;
  const rt_cuda *d = rt_cuda_get("device free");
  if (d)
    d->MemFree((rt_cu_ptr)(uintptr_t)p);
}
