/* te/runtime.h — the small runtime that generated kernels call (libte_runtime).
 *
 * It has no dependency on LLVM or libte: an application that links ahead-of-time kernels needs
 * only this library (and OpenMP's runtime, for the default thread count). All functions are
 * thread-safe.
 */
#ifndef TE_RUNTIME_H
#define TE_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TE_BUILDING_RUNTIME) && defined(__GNUC__)
#define TE_RT_API __attribute__((visibility("default")))
#else
#define TE_RT_API
#endif

/* The message of the last kernel error on this thread ("" when none). Valid until the next
   kernel call on this thread. */
TE_RT_API const char *te_rt_last_error(void);
/* Records a message for the calling thread and returns code (used by generated code). */
TE_RT_API int32_t te_rt_error(int32_t code, const char *msg);
/* Records "what: expected E, got G" and returns code (used by argument checks). */
TE_RT_API int32_t te_rt_arg_error(int32_t code, const char *what, int64_t expected, int64_t got);
/* Records "what (got G)" and returns code (argument checks against a range). */
TE_RT_API int32_t te_rt_value_error(int32_t code, const char *what, int64_t got);

/* Runs body(i, closure) for i in [0, n) on the calling thread and the runtime's worker threads
   (te_rt_num_threads in all; started on first use, kept, asleep when idle). Returns 0, or the
   first nonzero value a body returned, whose message te_rt_last_error() then gives on the
   calling thread; iterations not yet started when a body fails are skipped. Which thread runs
   which iteration is unspecified. Runs serially on the calling thread for one thread or one
   iteration, inside a body (nested loops), inside an OpenMP parallel region, and while
   another thread's call has the workers. Between calls a worker spins for TE_SPIN_US
   microseconds (default 0: it sleeps at once; see docs/design.md) before sleeping. Usable in a
   child forked after calls: the child starts workers of its own. */
typedef int32_t (*te_rt_task)(int64_t i, void *closure);
TE_RT_API int32_t te_rt_parallel_for(te_rt_task body, void *closure, int64_t n);
/* The number of threads parallel loops use (default: TE_NUM_THREADS, else OpenMP's default,
   omp_get_max_threads(), read once). */
TE_RT_API void te_rt_set_num_threads(int n);
TE_RT_API int te_rt_num_threads(void);

/* 64-byte aligned allocation for intermediate buffers; NULL when out of memory. */
TE_RT_API void *te_rt_alloc(int64_t bytes);
TE_RT_API void te_rt_free(void *);

/* CUDA launches (lib/runtime/cuda.c), called by the host entry of a module built for a "cuda"
   target; the driver is loaded with dlopen on first use (te/device.h). A module holds PTX text
   and its kernels' names; it is loaded into the device on the first launch. */
typedef struct te_rt_cuda_module te_rt_cuda_module;
/* A module of nkernels kernels from PTX text (both copied); NULL when out of memory. */
TE_RT_API te_rt_cuda_module *te_rt_cuda_module_new(const char *ptx, int nkernels,
                                                   const char *const names[]);
TE_RT_API void te_rt_cuda_module_free(te_rt_cuda_module *);
/* Launches kernel number `kernel` with dims = {grid x, y, z, block x, y, z} and args as
   cuLaunchKernel takes them (an array of pointers to the argument values). Asynchronous: returns
   0 once queued, or a te_status code with the message recorded (te_rt_last_error). */
TE_RT_API int32_t te_rt_cuda_launch(te_rt_cuda_module *, int32_t kernel, const int64_t dims[6],
                                    void **args);
/* bytes of device memory (a CUdeviceptr as a pointer), or NULL with the message recorded
   (negative bytes, no driver, the device out of memory). A NULL module, a kernel index out of
   range or NULL dims make te_rt_cuda_launch TE_ERR_INVALID_ARG whether or not a driver is
   there; te_rt_cuda_module_new refuses nkernels < 0 and NULL names the same way (NULL). */
TE_RT_API void *te_rt_cuda_alloc(int64_t bytes);
TE_RT_API void te_rt_cuda_free(void *);
/* 1 once this process has loaded (or tried to load) the CUDA driver: any te_device_* call,
   launch or allocation above; 0 before. Loads nothing. CUDA state does not survive fork, so a
   process past this point cannot run CUDA kernels in forked children (te_tune checks it). */
TE_RT_API int te_rt_cuda_started(void);

#ifdef __cplusplus
}
#endif
#endif
