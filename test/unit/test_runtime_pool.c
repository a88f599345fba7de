/* test_runtime_pool.c — te_rt_parallel_for on the runtime's worker pool (lib/runtime/pool.c):
 * every iteration once for trip counts that do not divide the chunks (and fewer iterations
 * than threads), a failure in the last iteration or the first reaching the caller with its
 * own message (and the next call starting clean), workers really helping, never more threads
 * than asked for as the count changes between calls, nested calls on the outer body's thread,
 * two application threads at once, and a child forked after the pool ran (it must not hang:
 * an alarm kills it; and its loops must use threads of its own).
 */
#include <criterion/criterion.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "te/runtime.h"

enum { MAX_N = 4096, MAX_SEEN = 64 };

TestSuite(runtime_pool, .timeout = 60); /* a deadlock fails instead of hanging */

typedef struct record {
  atomic_int hits[MAX_N];
  pthread_t who[MAX_N]; /* the thread that ran iteration i */
  int64_t fail_at;      /* -1: none */
  int spin_us;          /* work an iteration, so that every thread gets some */
} record;

static void busy_us(int us) {
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  do
    clock_gettime(CLOCK_MONOTONIC, &t);
  while ((t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

static int32_t record_body(int64_t i, void *p) {
  record *r = p;
  atomic_fetch_add(&r->hits[i], 1);
  r->who[i] = pthread_self();
  if (r->spin_us)
    busy_us(r->spin_us);
  if (i == r->fail_at) {
    char msg[64];
    snprintf(msg, sizeof msg, "iteration %lld failed", (long long)i);
    return te_rt_error((int32_t)(i + 1), msg);
  }
  return 0;
}

static record *record_new(int spin_us) {
  static record r;
  memset(&r, 0, sizeof r);
  r.fail_at = -1;
  r.spin_us = spin_us;
  return &r;
}

/* How many different threads ran iterations [0, n). */
static int threads_used(const record *r, int64_t n) {
  pthread_t seen[MAX_SEEN];
  int nseen = 0;
  for (int64_t i = 0; i < n; i++) {
    int k = 0;
    while (k < nseen && !pthread_equal(seen[k], r->who[i]))
      k++;
    if (k == nseen && nseen < MAX_SEEN)
      seen[nseen++] = r->who[i];
  }
  return nseen;
}

static void expect_each_once(const record *r, int64_t n, int threads) {
  for (int64_t i = 0; i < n; i++)
    cr_assert_eq(atomic_load(&r->hits[i]), 1, "threads %d, n %lld: iteration %lld ran %d times",
                 threads, (long long)n, (long long)i, atomic_load(&r->hits[i]));
}

Test(runtime_pool, every_iteration_once_for_awkward_trip_counts) {
  static const int64_t ns[] = {2, 3, 5, 7, 8, 9, 17, 33, 97, 1000, 4093};
  for (int t = 2; t <= 5; t++) {
    te_rt_set_num_threads(t);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      record *r = record_new(0);
      cr_assert_eq(te_rt_parallel_for(record_body, r, ns[k]), 0);
      expect_each_once(r, ns[k], t);
    }
  }
  te_rt_set_num_threads(0);
}

Test(runtime_pool, zero_and_negative_trip_counts_run_nothing) {
  te_rt_set_num_threads(3);
  record *r = record_new(0);
  r->fail_at = 0;
  cr_expect_eq(te_rt_parallel_for(record_body, r, 0), 0);
  cr_expect_eq(te_rt_parallel_for(record_body, r, -1), 0);
  cr_expect_eq(atomic_load(&r->hits[0]), 0);
  cr_expect_eq(te_rt_parallel_for(NULL, r, 10), 0);
  te_rt_set_num_threads(0);
}

Test(runtime_pool, fewer_iterations_than_threads) {
  te_rt_set_num_threads(4);
  for (int64_t n = 1; n <= 3; n++) {
    record *r = record_new(2000);
    cr_assert_eq(te_rt_parallel_for(record_body, r, n), 0);
    expect_each_once(r, n, 4);
    cr_expect_leq(threads_used(r, n), n);
  }
  te_rt_set_num_threads(0);
}

/* The failing iteration's code and message reach the caller, wherever it ran; the caller's
   message before the call does not survive a failure. */
Test(runtime_pool, failure_in_last_first_or_middle_iteration) {
  static const int64_t ns[] = {2, 9, 100, 1001};
  for (int t = 2; t <= 3; t++) {
    te_rt_set_num_threads(t);
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      int64_t n = ns[k], at[3] = {n - 1, 0, n / 2};
      for (int a = 0; a < 3; a++) {
        record *r = record_new(n <= 9 ? 1000 : 0);
        r->fail_at = at[a];
        te_rt_error(0, "stale message");
        int32_t rc = te_rt_parallel_for(record_body, r, n);
        char want[64];
        snprintf(want, sizeof want, "iteration %lld failed", (long long)at[a]);
        cr_assert_eq(rc, (int32_t)(at[a] + 1), "threads %d n %lld fail at %lld: got %d", t,
                     (long long)n, (long long)at[a], rc);
        cr_assert_str_eq(te_rt_last_error(), want);
        cr_assert_eq(atomic_load(&r->hits[at[a]]), 1);
        /* the next call starts clean */
        r = record_new(0);
        cr_assert_eq(te_rt_parallel_for(record_body, r, n), 0);
        expect_each_once(r, n, t);
      }
    }
  }
  te_rt_set_num_threads(0);
}

/* Every iteration fails with its own code: the caller gets one of them, with its message. */
static int32_t all_fail_body(int64_t i, void *p) {
  (void)p;
  char msg[64];
  snprintf(msg, sizeof msg, "code %lld", (long long)(i + 1));
  return te_rt_error((int32_t)(i + 1), msg);
}

Test(runtime_pool, first_failure_wins_with_its_own_message) {
  te_rt_set_num_threads(3);
  for (int rep = 0; rep < 200; rep++) {
    int32_t rc = te_rt_parallel_for(all_fail_body, NULL, 64);
    char want[64];
    snprintf(want, sizeof want, "code %d", rc);
    cr_assert(rc >= 1 && rc <= 64, "rc %d", rc);
    cr_assert_str_eq(te_rt_last_error(), want);
  }
  te_rt_set_num_threads(0);
}

/* 64 iterations of 2 ms: however loaded the machine, a worker wakes and helps. */
Test(runtime_pool, workers_help) {
  te_rt_set_num_threads(2);
  record *r = record_new(2000);
  cr_assert_eq(te_rt_parallel_for(record_body, r, 64), 0);
  expect_each_once(r, 64, 2);
  cr_expect_eq(threads_used(r, 64), 2);
  te_rt_set_num_threads(0);
}

Test(runtime_pool, thread_count_changes_between_calls) {
  static const int counts[] = {4, 2, 3, 1, 4, 2, 0};
  for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++) {
    te_rt_set_num_threads(counts[k]);
    int t = te_rt_num_threads();
    record *r = record_new(200);
    cr_assert_eq(te_rt_parallel_for(record_body, r, 64), 0);
    expect_each_once(r, 64, t);
    cr_expect_leq(threads_used(r, 64), t, "asked for %d threads, %d ran", t, threads_used(r, 64));
    if (t == 1)
      cr_expect(pthread_equal(r->who[0], pthread_self()), "one thread: the caller's");
  }
  te_rt_set_num_threads(0);
}

/* A loop inside a body runs serially on that body's thread. */
static int32_t nested_inner(int64_t i, void *p) {
  (void)i;
  return pthread_equal(pthread_self(), *(pthread_t *)p) ? 0 : 9;
}
static int32_t nested_outer(int64_t i, void *p) {
  (void)i, (void)p;
  pthread_t self = pthread_self();
  return te_rt_parallel_for(nested_inner, &self, 50);
}

Test(runtime_pool, nested_calls_run_on_the_outer_bodys_thread) {
  te_rt_set_num_threads(3);
  for (int rep = 0; rep < 20; rep++)
    cr_assert_eq(te_rt_parallel_for(nested_outer, NULL, 12), 0);
  te_rt_set_num_threads(0);
}

/* Two application threads calling at once both get every iteration once. */
static void *other_caller(void *p) {
  record *r = p;
  for (int rep = 0; rep < 50; rep++)
    if (te_rt_parallel_for(record_body, r, 256) != 0)
      return p;
  return NULL;
}

Test(runtime_pool, two_callers_at_once) {
  static record a, b;
  memset(&a, 0, sizeof a);
  memset(&b, 0, sizeof b);
  a.fail_at = b.fail_at = -1;
  te_rt_set_num_threads(2);
  pthread_t t1, t2;
  cr_assert_eq(pthread_create(&t1, NULL, other_caller, &a), 0);
  cr_assert_eq(pthread_create(&t2, NULL, other_caller, &b), 0);
  void *r1, *r2;
  pthread_join(t1, &r1);
  pthread_join(t2, &r2);
  cr_assert_null(r1);
  cr_assert_null(r2);
  for (int i = 0; i < 256; i++) {
    cr_assert_eq(atomic_load(&a.hits[i]), 50);
    cr_assert_eq(atomic_load(&b.hits[i]), 50);
  }
  te_rt_set_num_threads(0);
}

/* A child forked after the pool ran (its workers asleep or spinning) runs loops on threads of
   its own (a pool still counting the parent's workers would run everything on the caller);
   the alarm turns a hang into a failure. */
Test(runtime_pool, child_forked_after_use_runs_loops) {
  te_rt_set_num_threads(3);
  record *r = record_new(100);
  cr_assert_eq(te_rt_parallel_for(record_body, r, 64), 0);
  for (int pause_ms = 0; pause_ms <= 20; pause_ms += 20) {
    struct timespec pause = {0, pause_ms * 1000000L}; /* 0: workers still spinning; 20: asleep */
    nanosleep(&pause, NULL);
    pid_t pid = fork();
    cr_assert_neq(pid, -1);
    if (pid == 0) {
      alarm(20);
      int bad = 0;
      for (int rep = 0; rep < 20 && !bad; rep++) {
        record *c = record_new(rep == 0 ? 5000 : 0);
        c->fail_at = rep % 2 ? 63 : -1;
        int32_t rc = te_rt_parallel_for(record_body, c, 64);
        bad = rc != (rep % 2 ? 64 : 0); /* a failure may skip later iterations */
        for (int i = 0; i < 64 && !bad && rc == 0; i++)
          bad = atomic_load(&c->hits[i]) != 1;
        if (rep == 0 && !bad)
          bad = threads_used(c, 64) < 2 ? 2 : 0; /* 320 ms of work: the child's workers help */
      }
      _exit(bad);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (status %d)",
              status);
  }
  te_rt_set_num_threads(0);
}
