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
 *
 * fork(): libgomp's thread pool does not survive it — a child forked after the parent ran a
 * parallel region hangs in its first one (the autotuner forks a child per measurement, and the
 * program calling it may well have run parallel kernels). So a child forked after OpenMP was used
 * runs parallel loops on plain pthreads instead, one thread per chunk, joined at the end.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- after fork(): pthreads instead of OpenMP ---- */

static int rt_omp_used;     /* OpenMP ran a parallel region in this process image */
static int rt_omp_unusable; /* this process was forked after that */
static pthread_once_t rt_fork_once = PTHREAD_ONCE_INIT;

static void rt_after_fork_child(void) {
  if (__atomic_load_n(&rt_omp_used, __ATOMIC_RELAXED))
    __atomic_store_n(&rt_omp_unusable, 1, __ATOMIC_RELAXED);
}
static void rt_fork_init(void) { pthread_atfork(NULL, NULL, rt_after_fork_child); }

typedef struct rt_chunk {
  te_rt_task body;
  void *closure;
  int64_t begin, end;
  int32_t *result;
  char *msg;
  pthread_mutex_t *lock;
} rt_chunk;

static void *rt_chunk_run(void *arg) {
  rt_chunk *c = arg;
  for (int64_t i = c->begin; i < c->end; i++) {
    if (__atomic_load_n(c->result, __ATOMIC_RELAXED) != 0)
      break;
    int32_t r = c->body(i, c->closure);
    int32_t zero = 0;
    if (r != 0 &&
        __atomic_compare_exchange_n(c->result, &zero, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
      pthread_mutex_lock(c->lock);
      strncpy(c->msg, te_rt_last_error(), 1023);
      c->msg[1023] = '\0';
      pthread_mutex_unlock(c->lock);
    }
  }
  return NULL;
}

static int32_t rt_pthread_for(te_rt_task body, void *closure, int64_t n, int nt) {
  enum { MAX_T = 256 };
  if (nt > MAX_T)
    nt = MAX_T;
  rt_chunk chunks[MAX_T];
  pthread_t tids[MAX_T];
  int32_t result = 0;
  char msg[1024] = "";
  pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  int started = 1; /* chunk 0 runs on the calling thread */
  for (int t = 0; t < nt; t++)
    chunks[t] = (rt_chunk){body, closure, n * t / nt, n * (t + 1) / nt, &result, msg, &lock};
  while (started < nt && pthread_create(&tids[started], NULL, rt_chunk_run, &chunks[started]) == 0)
    started++;
  /* this thread runs chunk 0 and any chunk no thread could be created for */
  rt_chunk_run(&chunks[0]);
  for (int t = started; t < nt; t++)
    rt_chunk_run(&chunks[t]);
  for (int t = 1; t < started; t++)
    pthread_join(tids[t], NULL);
  if (result != 0)
    te_rt_error(result, msg);
  return result;
}

int32_t te_rt_parallel_for(te_rt_task body, void *closure, int64_t n) {
  if (!body || n <= 0)
    return 0;
  int nt = te_rt_num_threads();
  if (n == 1 || nt == 1 || omp_in_parallel())
    return rt_serial_for(body, closure, n);
  if (nt > n)
    nt = (int)n;
  pthread_once(&rt_fork_once, rt_fork_init);
  if (__atomic_load_n(&rt_omp_unusable, __ATOMIC_RELAXED))
    return rt_pthread_for(body, closure, n, nt);
  __atomic_store_n(&rt_omp_used, 1, __ATOMIC_RELAXED);

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
