/* pool.c — persistent worker threads for te_rt_parallel_for.
 *
 * A generated kernel calls the parallel-for once per parallel loop, and a model's step calls
 * kernels of ~20 us of work each, back to back: what a call costs beside its bodies is what
 * this file keeps small (bench/parallel_for.c measures it; docs/design.md has the numbers).
 *
 * One loop (a "job") at a time runs on the pool. Its iterations are cut into contiguous chunks,
 * RT_CHUNKS_PER_THREAD per thread, which the calling thread and the workers claim from one
 * atomic counter: the caller works from the start of the call, and a worker that wakes late
 * (a loaded machine) finds less to do instead of making everyone wait for its static share.
 * Only chunks claimed delay the end of a call.
 *
 * Between jobs a worker spins on its own cache line for up to the spin time (TE_SPIN_US,
 * default 0: on a machine with more runnable threads than cores the spinning cost more CPU
 * time than the wake-ups it saved, docs/design.md) and then sleeps on a futex; the caller pays
 * a wake-up system call only for a worker that sleeps, and only for a loop worth it
 * (rt_lazy_wake). The caller waits for the chunks still running the same way.
 *
 * The claim word packs the job's generation with the chunks left (gen << 32 | left): a claim is
 * one compare-and-swap that succeeds only while that job has chunks left, so a worker that
 * wakes after its job ended cannot take part in a later one by mistake, and the job's fields
 * (written before the claim word is published) are read only after a successful claim, while
 * the caller cannot yet have moved on.
 *
 * fork(): a child has no workers (only the forking thread survives), so the child's pool is
 * reset to none and starts new workers on its first loop (the autotuner forks a child per
 * measurement, often in a process that ran parallel kernels).
 */
#define _GNU_SOURCE
#include "pool.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum {
  RT_MAX_WORKERS = 255,     /* threads beyond 256 a loop are not used */
  RT_CHUNKS_PER_THREAD = 4, /* a late thread costs at most a quarter of a share */
  RT_SPIN_US_DEFAULT = 0,
  RT_WAKE_WORTH_NS = 10000, /* see rt_lazy_wake */
  RT_MSG_MAX = 1024,
};

/* One worker's mailbox, on a cache line of its own: the generation of the last job posted to
   it (the futex word it sleeps on) and whether it sleeps there. */
typedef struct rt_slot {
  _Alignas(64) uint32_t gen;
  uint32_t sleeping;
  uint32_t start_gen; /* gen when the thread was started (set before pthread_create) */
} rt_slot;

static struct {
  pthread_mutex_t lock; /* held by a caller for its whole job */
  int nworkers;         /* started so far (under lock) */
  uint32_t gen;         /* the last job's generation (under lock) */
  /* The job: written under lock before the claim word, read after a successful claim. */
  te_rt_task body;
  void *closure;
  int64_t n;
  uint32_t nchunks;
  /* Each on a line of its own: every claim writes the first, every thread leaving a job the
     second, while the bodies read the third before each iteration (sharing a line with a
     counter made every iteration a cache miss). */
  _Alignas(64) uint64_t claim; /* gen << 32 | chunks not yet claimed */
  _Alignas(64) uint32_t done;  /* chunks finished (the caller's futex word) */
  uint32_t caller_sleeping;
  _Alignas(64) int32_t result; /* the first nonzero value a body returned */
  char msg[RT_MSG_MAX];        /* its message (written by the thread that set result) */
  rt_slot slots[RT_MAX_WORKERS];
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local bool rt_inside; /* this thread runs a job's bodies */
static uint64_t rt_spin_ns;
static pthread_once_t rt_pool_once = PTHREAD_ONCE_INIT;

bool rt_pool_inside(void) { return rt_inside; }

/* ---- waiting: a bounded spin, then a futex ---- */

static uint64_t rt_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void rt_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/* Whether the wait on *word is over: until it differs from value (a worker waiting for a job),
   or until it equals value (the caller waiting for the last chunk). */
static bool rt_wait_over(uint32_t *word, uint32_t value, bool until_equal) {
  return (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value) == until_equal;
}

/* Waits as rt_wait_over says: spins for up to rt_spin_ns, then sleeps on the futex with
   *sleeping set, so that rt_wake knows a system call is needed. Set-then-check here and
   store-then-check in rt_wake (both sequentially consistent) mean one of the two sees the
   other: no wake-up is lost. */
static void rt_wait(uint32_t *word, uint32_t value, bool until_equal, uint32_t *sleeping) {
  if (rt_wait_over(word, value, until_equal))
    return;
  if (rt_spin_ns) {
    uint64_t start = rt_now_ns();
    for (unsigned k = 1;; k++) {
      rt_cpu_relax();
      if (rt_wait_over(word, value, until_equal))
        return;
      if (k % 32 == 0 && rt_now_ns() - start > rt_spin_ns)
        break;
    }
  }
  for (;;) {
    __atomic_store_n(sleeping, 1, __ATOMIC_SEQ_CST);
    uint32_t v = __atomic_load_n(word, __ATOMIC_SEQ_CST);
    if ((v == value) == until_equal)
      break;
    /* sleeps only while *word still holds v (checked by the kernel) */
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
  }
  __atomic_store_n(sleeping, 0, __ATOMIC_RELAXED);
}

/* After a sequentially consistent store to *word: wakes its sleeper, if any. */
static void rt_wake(uint32_t *word, uint32_t *sleeping) {
  if (__atomic_load_n(sleeping, __ATOMIC_SEQ_CST))
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---- running a job's chunks (the caller and the workers alike) ---- */

static void rt_run_range(te_rt_task body, void *closure, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; i++) {
    if (__atomic_load_n(&pool.result, __ATOMIC_RELAXED) != 0)
      return; /* an iteration failed: the rest is skipped */
    int32_t r = body(i, closure);
    int32_t zero = 0;
    if (r != 0 && __atomic_compare_exchange_n(&pool.result, &zero, r, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_RELAXED)) {
      /* the winner alone writes msg; the caller reads it after every chunk is done */
      strncpy(pool.msg, te_rt_last_error(), RT_MSG_MAX - 1);
      pool.msg[RT_MSG_MAX - 1] = '\0';
    }
    if (r != 0)
      return;
  }
}

/* Sleeping workers are woken only for a loop worth it. A wake-up costs the caller a system call
   and the worker a few microseconds of CPU, and the worker starts helping only after its wake-up
   latency (tens of microseconds on a loaded machine): for a loop with less than
   RT_WAKE_WORTH_NS of work left, it would come to find nothing left. So the caller times the
   first iteration and wakes them when that times the trip count says more is left, or later,
   at a chunk's start, once it has worked that long (a first iteration cheaper than the rest). */
typedef struct rt_lazy_wake {
  int helpers; /* slots 0..helpers-1 were posted the job */
  bool woken;
  uint64_t start;
} rt_lazy_wake;

static void rt_wake_helpers(rt_lazy_wake *lw) {
  for (int w = 0; w < lw->helpers; w++)
    rt_wake(&pool.slots[w].gen, &pool.slots[w].sleeping);
  lw->woken = true;
}

/* Claims and runs chunks of job gen until none is left (or the job is another one), then adds
   how many it ran to done: once, to keep that line from bouncing between threads. lw: the
   caller's lazy wake-up (NULL on workers, or when none sleeps). */
static void rt_run_chunks(uint32_t gen, rt_lazy_wake *lw) {
  uint32_t ran = 0, nchunks = 0;
  for (;;) {
    uint64_t c = __atomic_load_n(&pool.claim, __ATOMIC_ACQUIRE);
    do {
      if ((uint32_t)(c >> 32) != gen || (uint32_t)c == 0)
        goto out;
    } while (!__atomic_compare_exchange_n(&pool.claim, &c, c - 1, 1, __ATOMIC_ACQ_REL,
                                          __ATOMIC_ACQUIRE));
    /* chunk k of nchunks, claimed in order (the caller starts with the first); the bounds
       split n as evenly as possible */
    nchunks = pool.nchunks;
    uint32_t k = nchunks - (uint32_t)c;
    int64_t n = pool.n, base = n / nchunks, extra = n % nchunks;
    int64_t begin = (int64_t)k * base + (k < extra ? k : extra);
    int64_t end = begin + base + (k < extra ? 1 : 0);
    if (lw && !lw->woken) {
      if (ran == 0) {
        uint64_t t0 = rt_now_ns();
        rt_run_range(pool.body, pool.closure, begin, begin + 1);
        if ((double)(rt_now_ns() - t0) * (double)(n - 1) > RT_WAKE_WORTH_NS)
          rt_wake_helpers(lw);
        begin++;
      } else if (rt_now_ns() - lw->start > RT_WAKE_WORTH_NS) {
        rt_wake_helpers(lw);
      }
    }
    rt_run_range(pool.body, pool.closure, begin, end);
    ran++;
  }
out:
  /* the job's fields are not read past this point: the caller may reuse them once done */
  if (ran && __atomic_add_fetch(&pool.done, ran, __ATOMIC_SEQ_CST) == nchunks)
    rt_wake(&pool.done, &pool.caller_sleeping);
}

static void *rt_worker(void *arg) {
  rt_slot *slot = arg;
  rt_inside = true;
  uint32_t seen = slot->start_gen;
  for (;;) {
    rt_wait(&slot->gen, seen, false, &slot->sleeping);
    seen = __atomic_load_n(&slot->gen, __ATOMIC_ACQUIRE);
    rt_run_chunks(seen, NULL);
  }
  return NULL;
}

/* Starts workers until there are `want` (under lock); fewer when threads cannot be created. */
static void rt_pool_grow(int want) {
  if (want > RT_MAX_WORKERS)
    want = RT_MAX_WORKERS;
  while (pool.nworkers < want) {
    rt_slot *slot = &pool.slots[pool.nworkers];
    slot->start_gen = __atomic_load_n(&slot->gen, __ATOMIC_RELAXED);
    pthread_attr_t attr;
    pthread_t tid;
    if (pthread_attr_init(&attr) != 0)
      return;
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&tid, &attr, rt_worker, slot);
    pthread_attr_destroy(&attr);
    if (err != 0)
      return;
    pool.nworkers++;
  }
}

/* ---- set-up, fork ---- */

/* In a child after fork(): only the forking thread exists, so the pool has no workers. */
static void rt_pool_after_fork_child(void) {
  pool.lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
  pool.nworkers = 0;
  for (int w = 0; w < RT_MAX_WORKERS; w++)
    pool.slots[w].gen = pool.slots[w].sleeping = 0;
  pool.claim = 0;
  pool.caller_sleeping = 0;
}

static void rt_pool_init(void) {
  const char *env = getenv("TE_SPIN_US");
  long us = RT_SPIN_US_DEFAULT;
  if (env && *env) {
    char *end = NULL;
    long v = strtol(env, &end, 10);
    if (*end == '\0' && v >= 0 && v <= 1000000)
      us = v; /* malformed: the default */
  }
  rt_spin_ns = (uint64_t)us * 1000u;
  pthread_atfork(NULL, NULL, rt_pool_after_fork_child);
}

bool rt_pool_run(te_rt_task body, void *closure, int64_t n, int threads, int32_t *result) {
  pthread_once(&rt_pool_once, rt_pool_init);
  if (pthread_mutex_trylock(&pool.lock) != 0)
    return false;
  rt_pool_grow(threads - 1);
  int64_t nchunks = (int64_t)threads * RT_CHUNKS_PER_THREAD;
  if (nchunks > n)
    nchunks = n;
  int helpers = pool.nworkers < threads - 1 ? pool.nworkers : threads - 1;
  if (helpers > nchunks - 1)
    helpers = (int)nchunks - 1;

  uint32_t gen = ++pool.gen;
  pool.body = body;
  pool.closure = closure;
  pool.n = n;
  pool.nchunks = (uint32_t)nchunks;
  pool.msg[0] = '\0';
  __atomic_store_n(&pool.result, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&pool.done, 0, __ATOMIC_RELAXED);
  __atomic_store_n(&pool.claim, (uint64_t)gen << 32 | (uint64_t)nchunks, __ATOMIC_RELEASE);
  /* spinning workers see the job at once; sleeping ones are woken when it is worth it */
  rt_lazy_wake lw = {helpers, true, 0};
  for (int w = 0; w < helpers; w++) {
    __atomic_store_n(&pool.slots[w].gen, gen, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pool.slots[w].sleeping, __ATOMIC_SEQ_CST))
      lw.woken = false;
  }
  if (!lw.woken)
    lw.start = rt_now_ns();

  rt_inside = true;
  rt_run_chunks(gen, lw.woken ? NULL : &lw);
  rt_inside = false;
  rt_wait(&pool.done, (uint32_t)nchunks, true, &pool.caller_sleeping);

  *result = __atomic_load_n(&pool.result, __ATOMIC_ACQUIRE);
  if (*result != 0)
    te_rt_error(*result, pool.msg);
  pthread_mutex_unlock(&pool.lock);
  return true;
}
