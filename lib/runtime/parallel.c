/* parallel.c — the parallel-for that generated kernels call for parallel loops.
 *
 * Generated code never calls OpenMP's runtime directly (GOMP_parallel only works when libgomp
 * is really loaded, see TOOLCHAIN.md): a parallel loop is outlined into a task function
 * int32 body(int64 i, void *closure) and handed to te_rt_parallel_for, which runs it on the
 * runtime's own worker threads (pool.c: persistent, the caller working too, chunks claimed
 * from a counter). The first nonzero value a body returns wins (an atomic compare-and-swap),
 * later iterations are skipped, and the winner's thread-local message is copied to the
 * calling thread so that te_rt_last_error() there explains the failure.
 *
 * Serially, on the calling thread: one thread, one iteration, and a call made where the
 * threads are already busy — inside a body (nested parallel loops), inside an OpenMP parallel
 * region of the application's, or while another thread's loop has the pool.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>

#include "pool.h"
#include "te/runtime.h"

static int rt_threads; /* 0: the default; read/written atomically */
static int rt_default_threads;
static pthread_once_t rt_once = PTHREAD_ONCE_INIT;

static void rt_threads_init(void) {
  const char *env = getenv("TE_NUM_THREADS");
  long n = 0;
  if (env && *env) {
    char *end = NULL;
    n = strtol(env, &end, 10);
    if (*end != '\0' || n <= 0 || n > 4096)
      n = 0; /* malformed: ignored */
  }
  rt_default_threads = n > 0 ? (int)n : omp_get_max_threads();
  if (rt_default_threads < 1)
    rt_default_threads = 1;
}

void te_rt_set_num_threads(int n) {
  __atomic_store_n(&rt_threads, n > 0 ? n : 0, __ATOMIC_RELAXED);
}

int te_rt_num_threads(void) {
  int n = __atomic_load_n(&rt_threads, __ATOMIC_RELAXED);
  if (n > 0)
    return n;
  pthread_once(&rt_once, rt_threads_init);
  return rt_default_threads;
}

static int32_t rt_serial_for(te_rt_task body, void *closure, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    int32_t r = body(i, closure);
    if (r != 0)
      return r;
  }
  return 0;
}

int32_t te_rt_parallel_for(te_rt_task body, void *closure, int64_t n) {
  if (!body || n <= 0)
    return 0;
  int nt = te_rt_num_threads();
  int32_t result = 0;
  if (n == 1 || nt == 1 || rt_pool_inside() || omp_in_parallel() ||
      !rt_pool_run(body, closure, n, nt, &result))
    return rt_serial_for(body, closure, n);
  return result;
}
