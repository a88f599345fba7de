/* pool.h — the runtime's persistent worker threads (pool.c), which te_rt_parallel_for runs its
 * loops on. Internal to libte_runtime. */
#ifndef TE_RT_POOL_H
#define TE_RT_POOL_H

#include <stdbool.h>

#include "te/runtime.h"

/* Runs body(i, closure) for i in [0, n) (n >= 2) on the calling thread and up to threads - 1
   workers, and stores 0 or the first nonzero value a body returned in *result (its message then
   recorded on the calling thread, te_rt_error). Returns false, running nothing, when the pool is
   taken by another thread's loop: the caller then runs its loop serially. */
bool rt_pool_run(te_rt_task body, void *closure, int64_t n, int threads, int32_t *result);

/* Whether the calling thread is running a pool loop's bodies (a worker, or a caller inside
   rt_pool_run): a parallel loop started there runs serially. */
bool rt_pool_inside(void);

#endif
