/* mem_hook.c — the allocation hook (mem_hook.h): the failing countdown, the process's counter
 * and the record of call sites.
 */
#define _POSIX_C_SOURCE 200809L
#include "mem_hook.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- counters */

static atomic_long process_left = -1, process_count;
static pthread_once_t process_once = PTHREAD_ONCE_INIT;

long te_rt_mem_env_fail_after(void) {
  const char *env = getenv("TE_DEBUG_FAIL_ALLOC_AFTER");
  return env && *env ? strtol(env, NULL, 10) : -1;
}

static void process_from_env(void) { atomic_store(&process_left, te_rt_mem_env_fail_after()); }

void te_rt_mem_process_fail_after(long n) {
  pthread_once(&process_once, process_from_env);
  atomic_store(&process_left, n);
}

/* One step of a countdown: n >= 1 allocations left means this one succeeds unless n == 1; 0
   means every one fails from now on. */
static bool step_fails(long *left) {
  if (*left < 0)
    return false;
  if (*left <= 1) {
    *left = 0;
    return true;
  }
  --*left;
  return false;
}

long te_rt_mem_process_count(void) { return atomic_load(&process_count); }

static bool process_fails(void) {
  pthread_once(&process_once, process_from_env);
  atomic_fetch_add(&process_count, 1);
  long left = atomic_load(&process_left);
  for (;;) {
    long next = left;
    bool fails = step_fails(&next);
    if (next == left || atomic_compare_exchange_weak(&process_left, &left, next))
      return fails;
  }
}

/* ---------------------------------------------------------------- call sites */

enum { MAX_SITES = 4096 };
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_bool recording;
static te_rt_mem_site sites[MAX_SITES];
static int nsites;

static size_t site_hash(const char *file, int line) {
  size_t h = (size_t)line * 0x9e3779b97f4a7c15ull;
  for (const char *p = file; *p; p++)
    h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
  return h;
}

static void note_site(const char *file, int line, bool failed, long count) {
  if (!file || !atomic_load_explicit(&recording, memory_order_relaxed))
    return;
  pthread_mutex_lock(&sites_lock);
  for (size_t i = site_hash(file, line) % MAX_SITES, probes = 0; probes < MAX_SITES;
       i = (i + 1) % MAX_SITES, probes++) {
    te_rt_mem_site *s = &sites[i];
    if (!s->file) {
      if (nsites >= MAX_SITES / 2) /* keep probing short; more sites than this are not counted */
        break;
      *s = (te_rt_mem_site){file, line, 0, 0, count};
      nsites++;
    } else if (s->line != line || (s->file != file && strcmp(s->file, file) != 0)) {
      continue;
    }
    s->allocations++;
    s->failures += failed;
    break;
  }
  pthread_mutex_unlock(&sites_lock);
}

void te_rt_mem_record_sites(bool on) {
  pthread_mutex_lock(&sites_lock);
  if (on) {
    memset(sites, 0, sizeof sites);
    nsites = 0;
  }
  atomic_store(&recording, on);
  pthread_mutex_unlock(&sites_lock);
}

static int site_order(const void *a, const void *b) {
  const te_rt_mem_site *x = a, *y = b;
  int c = strcmp(x->file, y->file);
  return c ? c : (x->line > y->line) - (x->line < y->line);
}

int te_rt_mem_sites(te_rt_mem_site *out, int max) {
  pthread_mutex_lock(&sites_lock);
  int n = 0;
  for (int i = 0; i < MAX_SITES; i++)
    if (sites[i].file) {
      if (n < max)
        out[n] = sites[i];
      n++;
    }
  pthread_mutex_unlock(&sites_lock);
  if (out && max > 0)
    qsort(out, (size_t)(n < max ? n : max), sizeof *out, site_order);
  return n;
}

/* ---------------------------------------------------------------- the hook */

bool te_rt_mem_fails(te_rt_mem_counter *c, const char *file, int line) {
  bool fails;
  if (c) {
    c->count++;
    fails = step_fails(&c->fail_after);
  } else {
    fails = process_fails();
  }
  note_site(file, line, fails, c ? c->count : -te_rt_mem_process_count());
  return fails;
}

void *te_rt_mem_alloc(te_rt_mem_counter *c, size_t size, bool zero, const char *file, int line) {
  if (te_rt_mem_fails(c, file, line))
    return NULL;
  if (size == 0)
    size = 1;
  return zero ? calloc(1, size) : malloc(size);
}

void *te_rt_mem_realloc(te_rt_mem_counter *c, void *p, size_t size, const char *file, int line) {
  if (te_rt_mem_fails(c, file, line))
    return NULL;
  return realloc(p, size ? size : 1);
}

void *te_rt_mem_aligned(te_rt_mem_counter *c, size_t align, size_t size, const char *file,
                        int line) {
  if (te_rt_mem_fails(c, file, line))
    return NULL;
  void *p = NULL;
  return posix_memalign(&p, align, size ? size : align) == 0 ? p : NULL;
}
