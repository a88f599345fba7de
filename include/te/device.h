/* te/device.h — device memory for GPU kernels (libte_runtime; also in libte).
 *
 * A kernel built for a GPU target ("cuda") takes DLTensors whose memory lives on the device:
 * device = {kDLCUDA, 0} and data = a CUdeviceptr (cast to void *). These helpers allocate, copy
 * and free such memory through the CUDA driver, which te loads at run time (dlopen of
 * libcuda.so.1: te has no link-time GPU dependency). The environment variable TE_CUDA_DRIVER
 * names another library file to load instead (tests use the toolkit's stub).
 *
 * Every function returns TE_OK or a status with a message for the calling thread in
 * te_device_last_error() (these functions have no context). Without a usable driver (the
 * library cannot be loaded, or cuInit fails: no GPU, a stub library) every call returns
 * TE_ERR_RUNTIME with a message starting "no CUDA driver". Device 0 is used (its primary
 * context); device_id must be 0. Thread-safe.
 *
 * A Vulkan target's buffers come from its own launcher; kDLVulkan here is TE_ERR_UNSUPPORTED
 * unless the Vulkan runtime provides it.
 */
#ifndef TE_DEVICE_H
#define TE_DEVICE_H

#include <stddef.h>

#include "core.h"
#include "runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when a device of that type can be used in this process, else 0 (te_device_last_error says
   why). Loads and initializes the driver on first use. */
TE_RT_API int te_device_available(DLDeviceType type);

/* bytes (> 0) of device memory, 256-byte aligned, uninitialized, in *out. */
TE_RT_API te_status te_device_alloc(DLDevice dev, size_t bytes, void **out);
/* Frees memory from te_device_alloc; NULL is accepted. */
TE_RT_API te_status te_device_free(DLDevice dev, void *ptr);
/* Copies bytes between host memory (kDLCPU) and device memory, or within a device. Returns when
   the copy is complete. */
TE_RT_API te_status te_device_copy(void *dst, DLDevice dst_dev, const void *src, DLDevice src_dev,
                                   size_t bytes);
/* Waits until every kernel launched on the device has finished; an error of an earlier
   (asynchronous) launch is reported here. */
TE_RT_API te_status te_device_sync(DLDevice dev);
/* The message of the last failed te_device_* call (or kernel launch) on this thread. */
TE_RT_API const char *te_device_last_error(void);

#ifdef __cplusplus
}
#endif
#endif
