/* device.c — te/device.h: device memory helpers on the CUDA launcher (cuda.c).
 *
 * Only CUDA devices are served here; kDLCPU is accepted as the host side of a copy. Messages go
 * to the calling thread's te_rt_last_error, which te_device_last_error returns.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cuda_driver.h"
#include "te/device.h"

static te_status rt_bad_device(const char *fn, DLDevice dev) {
  char msg[200];
  snprintf(msg, sizeof msg,
           "%s: device type %d id %d is not served (te/device.h serves kDLCUDA = 2, device 0)", fn,
           (int)dev.device_type, dev.device_id);
  return (te_status)te_rt_error(
      dev.device_type == kDLCUDA ? TE_ERR_INVALID_ARG : TE_ERR_UNSUPPORTED, msg);
}

int te_device_available(DLDeviceType type) {
  if (type != kDLCUDA) {
    rt_bad_device("te_device_available", (DLDevice){type, 0});
    return 0;
  }
  return rt_cuda_get("te_device_available") != NULL;
}

te_status te_device_alloc(DLDevice dev, size_t bytes, void **out) {
  if (out)
    *out = NULL;
  if (dev.device_type != kDLCUDA || dev.device_id != 0)
    return rt_bad_device("te_device_alloc", dev);
  if (!out || bytes == 0)
    return (te_status)te_rt_error(TE_ERR_INVALID_ARG, "te_device_alloc: out is NULL or bytes is 0");
  const rt_cuda *d = rt_cuda_get("te_device_alloc");
  if (!d)
    return TE_ERR_RUNTIME;
  rt_cu_ptr p = 0;
  rt_cu_result r = d->MemAlloc(&p, bytes);
  if (r != RT_CU_SUCCESS)
    return (te_status)rt_cuda_error(d, r, "te_device_alloc", "cuMemAlloc");
  *out = (void *)(uintptr_t)p;
  return TE_OK;
}

te_status te_device_free(DLDevice dev, void *ptr) {
  if (dev.device_type != kDLCUDA || dev.device_id != 0)
    return rt_bad_device("te_device_free", dev);
  if (!ptr)
    return TE_OK;
  const rt_cuda *d = rt_cuda_get("te_device_free");
  if (!d)
    return TE_ERR_RUNTIME;
  rt_cu_result r = d->MemFree((rt_cu_ptr)(uintptr_t)ptr);
  return r == RT_CU_SUCCESS ? TE_OK : (te_status)rt_cuda_error(d, r, "te_device_free", "cuMemFree");
}

te_status te_device_copy(void *dst, DLDevice dst_dev, const void *src, DLDevice src_dev,
                         size_t bytes) {
  const char *fn = "te_device_copy";
  bool dcuda = dst_dev.device_type == kDLCUDA, scuda = src_dev.device_type == kDLCUDA;
  if ((!dcuda && dst_dev.device_type != kDLCPU) || (dcuda && dst_dev.device_id != 0))
    return rt_bad_device(fn, dst_dev);
  if ((!scuda && src_dev.device_type != kDLCPU) || (scuda && src_dev.device_id != 0))
    return rt_bad_device(fn, src_dev);
  if (bytes == 0)
    return TE_OK;
  if (!dst || !src)
    return (te_status)te_rt_error(TE_ERR_INVALID_ARG, "te_device_copy: dst or src is NULL");
  if (!dcuda && !scuda) {
    memmove(dst, src, bytes);
    return TE_OK;
  }
  const rt_cuda *d = rt_cuda_get(fn);
  if (!d)
    return TE_ERR_RUNTIME;
  rt_cu_ptr dp = (rt_cu_ptr)(uintptr_t)dst, sp = (rt_cu_ptr)(uintptr_t)src;
  rt_cu_result r = dcuda && scuda ? d->MemcpyDtoD(dp, sp, bytes)
                   : dcuda        ? d->MemcpyHtoD(dp, src, bytes)
                                  : d->MemcpyDtoH(dst, sp, bytes);
  return r == RT_CU_SUCCESS ? TE_OK : (te_status)rt_cuda_error(d, r, fn, "cuMemcpy");
}

te_status te_device_sync(DLDevice dev) {
  if (dev.device_type != kDLCUDA || dev.device_id != 0)
    return rt_bad_device("te_device_sync", dev);
  const rt_cuda *d = rt_cuda_get("te_device_sync");
  if (!d)
    return TE_ERR_RUNTIME;
  rt_cu_result r = d->CtxSynchronize();
  return r == RT_CU_SUCCESS ? TE_OK
                            : (te_status)rt_cuda_error(d, r, "te_device_sync", "cuCtxSynchronize");
}

const char *te_device_last_error(void) { return te_rt_last_error(); }
