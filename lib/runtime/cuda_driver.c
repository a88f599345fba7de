/* cuda_driver.c — loading the CUDA driver (libcuda.so.1) with dlopen, once per process.
 *
 * The first call loads the library (or the file named by TE_CUDA_DRIVER), resolves the entry
 * points te uses, calls cuInit(0) and retains device 0's primary context. Any failure is
 * remembered: every later call reports the same "no CUDA driver (...)" reason without trying
 * again, so a machine without a GPU pays for one failed dlopen. cuInit returning
 * CUDA_ERROR_STUB_LIBRARY (34: the toolkit's stub) or CUDA_ERROR_NO_DEVICE (100) counts as no
 * driver too.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_driver.h"
#include "te/core.h"
#include "te/runtime.h"

static pthread_once_t rt_once = PTHREAD_ONCE_INIT;
static rt_cuda rt_driver;
static bool rt_ok;
static char rt_why[512];

static bool rt_sym(void *lib, const char *name, void *slot) {
  void *p = dlsym(lib, name);
  if (!p) {
    snprintf(rt_why, sizeof rt_why, "the driver library has no '%s'", name);
    return false;
  }
  memcpy(slot, &p, sizeof p); /* object pointer -> function pointer, as POSIX allows */
  return true;
}

static bool rt_resolve(void *lib, rt_cuda *d) {
  return rt_sym(lib, "cuInit", &d->Init) && rt_sym(lib, "cuDeviceGet", &d->DeviceGet) &&
         rt_sym(lib, "cuDevicePrimaryCtxRetain", &d->DevicePrimaryCtxRetain) &&
         rt_sym(lib, "cuCtxSetCurrent", &d->CtxSetCurrent) &&
         rt_sym(lib, "cuCtxSynchronize", &d->CtxSynchronize) &&
         rt_sym(lib, "cuMemAlloc_v2", &d->MemAlloc) && rt_sym(lib, "cuMemFree_v2", &d->MemFree) &&
         rt_sym(lib, "cuMemcpyHtoD_v2", &d->MemcpyHtoD) &&
         rt_sym(lib, "cuMemcpyDtoH_v2", &d->MemcpyDtoH) &&
         rt_sym(lib, "cuMemcpyDtoD_v2", &d->MemcpyDtoD) &&
         rt_sym(lib, "cuModuleLoadDataEx", &d->ModuleLoadDataEx) &&
         rt_sym(lib, "cuModuleUnload", &d->ModuleUnload) &&
         rt_sym(lib, "cuModuleGetFunction", &d->ModuleGetFunction) &&
         rt_sym(lib, "cuLaunchKernel", &d->LaunchKernel) &&
         rt_sym(lib, "cuGetErrorName", &d->GetErrorName) &&
         rt_sym(lib, "cuGetErrorString", &d->GetErrorString);
}

static _Atomic int rt_started; /* te_rt_cuda_started */

int te_rt_cuda_started(void) { return rt_started; }

static void rt_load(void) {
  rt_started = 1;
  const char *path = getenv("TE_CUDA_DRIVER");
  if (!path || !*path)
    path = "libcuda.so.1";
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    snprintf(rt_why, sizeof rt_why, "cannot load %s: %s", path, e ? e : "?");
    return;
  }
  rt_cuda d = {0};
  if (!rt_resolve(lib, &d))
    return;
  rt_cu_result r = d.Init(0);
  rt_cu_device dev = 0;
  if (r == RT_CU_SUCCESS)
    r = d.DeviceGet(&dev, 0);
  if (r == RT_CU_SUCCESS)
    r = d.DevicePrimaryCtxRetain(&d.ctx, dev);
  if (r != RT_CU_SUCCESS) {
    const char *name = NULL;
    if (d.GetErrorName(r, &name) != RT_CU_SUCCESS || !name)
      name = "?";
    snprintf(rt_why, sizeof rt_why, "%s: cuInit/cuDeviceGet returned %d (%s)%s", path, r, name,
             r == RT_CU_ERROR_STUB_LIBRARY ? ": the toolkit's stub, not a driver"
             : r == RT_CU_ERROR_NO_DEVICE  ? ": no GPU"
                                           : "");
    return;
  }
  rt_driver = d;
  rt_ok = true;
}

const rt_cuda *rt_cuda_get(const char *what) {
  pthread_once(&rt_once, rt_load);
  char msg[700];
  if (!rt_ok) {
    snprintf(msg, sizeof msg, "%s: no CUDA driver (%s)", what, rt_why);
    te_rt_error(TE_ERR_RUNTIME, msg);
    return NULL;
  }
  rt_cu_result r = rt_driver.CtxSetCurrent(rt_driver.ctx);
  if (r != RT_CU_SUCCESS) {
    rt_cuda_error(&rt_driver, r, what, "cuCtxSetCurrent");
    return NULL;
  }
  return &rt_driver;
}

void rt_cuda_use_driver(const rt_cuda *d) {
  pthread_once(&rt_once, rt_load);
  if (d)
    rt_driver = *d;
  else
    snprintf(rt_why, sizeof rt_why, "the test driver was removed");
  rt_ok = d != NULL;
}

int32_t rt_cuda_error(const rt_cuda *d, rt_cu_result r, const char *what, const char *call) {
  const char *name = NULL, *desc = NULL;
  if (d->GetErrorName(r, &name) != RT_CU_SUCCESS || !name)
    name = "CUDA_ERROR_?";
  if (d->GetErrorString(r, &desc) != RT_CU_SUCCESS || !desc)
    desc = "";
  char msg[700];
  snprintf(msg, sizeof msg, "%s: %s failed: %s (%d: %s)", what, call, name, r, desc);
  return te_rt_error(TE_ERR_RUNTIME, msg);
}
