/* parallel.c — the parallel-for that generated kernels call for parallel loops.
 *
 * Generated code never calls OpenMP's runtime directly (GOMP_parallel only works when libgomp
 * is really loaded, see TOOLCHAIN.md): a parallel loop is outlined into a task function
 * int32 body(int64 i, void *closure) and handed to te_rt_parallel_for, which runs it over
 * OpenMP's threads with a static schedule. The first nonzero value a body returns wins (an
 * atomic compare-and-swap), later iterations are skipped, and the winner's thread-local message
 * is copied to the calling thread so that te_rt_last_error() there explains the failure.
 * A call made from inside a parallel region (nested parallel loops) runs serially on the
 * calling thread: the outer loop already occupies the threads.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
  if (n == 1 || nt == 1 || omp_in_parallel())
    return rt_serial_for(body, closure, n);
  if (nt > n)
    nt = (int)n;

  int32_t result = 0;
  char msg[1024];
  msg[0] = '\0';
#pragma omp parallel for schedule(static) num_threads(nt)
  for (int64_t i = 0; i < n; i++) {
    if (__atomic_load_n(&result, __ATOMIC_RELAXED) != 0)
      continue;
    int32_t r = body(i, closure);
    int32_t zero = 0;
    if (r != 0 &&
        __atomic_compare_exchange_n(&result, &zero, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      strncpy(msg, te_rt_last_error(), sizeof msg - 1);
      msg[sizeof msg - 1] = '\0';
    }
  }
  if (result != 0)
    te_rt_error(result, msg);
  return result;
}
