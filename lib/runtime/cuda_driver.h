/* cuda_driver.h — the CUDA driver API as te uses it, loaded at run time (cuda_driver.c).
 *
 * te has no link-time CUDA dependency and does not need CUDA's headers to build: the few types
 * and entry points it calls are declared here with the driver API's ABI (CUresult is an int,
 * handles are pointers, CUdeviceptr is 64 bits) and resolved with dlsym from libcuda.so.1.
 */
#ifndef TE_RT_CUDA_DRIVER_H
#define TE_RT_CUDA_DRIVER_H

#include <stddef.h>
#include <stdint.h>

typedef int rt_cu_result;
typedef int rt_cu_device;
typedef void *rt_cu_context;
typedef void *rt_cu_module;
typedef void *rt_cu_function;
typedef unsigned long long rt_cu_ptr;

enum {
  RT_CU_SUCCESS = 0,
  RT_CU_ERROR_STUB_LIBRARY = 34,
  RT_CU_ERROR_NO_DEVICE = 100,
  RT_CU_JIT_ERROR_LOG_BUFFER = 5,
  RT_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
};

typedef struct rt_cuda {
  rt_cu_result (*Init)(unsigned);
  rt_cu_result (*DeviceGet)(rt_cu_device *, int);
  rt_cu_result (*DevicePrimaryCtxRetain)(rt_cu_context *, rt_cu_device);
  rt_cu_result (*CtxSetCurrent)(rt_cu_context);
  rt_cu_result (*CtxSynchronize)(void);
  rt_cu_result (*MemAlloc)(rt_cu_ptr *, size_t);
  rt_cu_result (*MemFree)(rt_cu_ptr);
  rt_cu_result (*MemcpyHtoD)(rt_cu_ptr, const void *, size_t);
  rt_cu_result (*MemcpyDtoH)(void *, rt_cu_ptr, size_t);
  rt_cu_result (*MemcpyDtoD)(rt_cu_ptr, rt_cu_ptr, size_t);
  rt_cu_result (*ModuleLoadDataEx)(rt_cu_module *, const void *, unsigned, int *, void **);
  rt_cu_result (*ModuleUnload)(rt_cu_module);
  rt_cu_result (*ModuleGetFunction)(rt_cu_function *, rt_cu_module, const char *);
  rt_cu_result (*LaunchKernel)(rt_cu_function, unsigned, unsigned, unsigned, unsigned, unsigned,
                               unsigned, unsigned, void *, void **, void **);
  rt_cu_result (*GetErrorName)(rt_cu_result, const char **);
  rt_cu_result (*GetErrorString)(rt_cu_result, const char **);
  rt_cu_context ctx; /* device 0's primary context */
} rt_cuda;

/* The loaded driver with device 0's primary context current on this thread, or NULL with
   "<what>: no CUDA driver (...)" recorded (te_rt_last_error). Loads once per process. */
const rt_cuda *rt_cuda_get(const char *what);

/* Tests only: use *d (a fake driver that records what it is asked) as the loaded driver from
   now on, instead of libcuda (test/unit/test_cuda_launch.c). NULL restores "no driver". */
void rt_cuda_use_driver(const rt_cuda *d);

/* Records "<what>: <call> failed: CUDA_ERROR_... (description)" and returns TE_ERR_RUNTIME. */
int32_t rt_cuda_error(const rt_cuda *, rt_cu_result, const char *what, const char *call);

#endif
