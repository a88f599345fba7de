/* parallel_for.c — what one call of the runtime's parallel-for costs (te-parallel-bench):
 *
 *   te-parallel-bench [--threads LIST] [--iters N] [--work-us LIST] [--gap-us LIST]
 *                     [--calls N] [--rounds N] [--load K] [--te-only]
 *
 * Every generated parallel loop is a call of te_rt_parallel_for; te-llama's generation makes
 * ~85 of them a token on matrices whose product is ~20 us of work, so what a call costs beside
 * its bodies matters. For each thread count, body size and gap this times back-to-back calls of
 *   te      te_rt_parallel_for(body, closure, iters)
 *   omp     #pragma omp parallel for schedule(static) num_threads(t) over the same bodies
 *   serial  a plain loop over them on the calling thread
 * alternating the three in each round (the machine may be loaded), and prints per call the
 * median wall time and CPU time (the whole process's: spinning workers count) of the rounds,
 * te's ratios to omp and to serial, and what a te call costs beyond the serial loop's CPU time
 * (te cpu - serial cpu: the overhead a call adds, whatever the machine's load does to wall
 * time).
 *   --work-us: the bodies' total work a call, in microseconds of one thread (0: empty bodies);
 *              a body is a calibrated chain of integer operations (no memory traffic)
 *   --gap-us:  serial work the caller does between two calls (the code between kernels); past
 *              the pool's spin, its workers are asleep when the next call comes (the times
 *              printed include it, the same for all three)
 *   --load K:  K other processes spinning meanwhile (their CPU time is not counted)
 *   --te-only: no omp or serial rows (a ThreadSanitizer build: libgomp is not instrumented)
 * Links only libte_runtime (and OpenMP for the omp rows), as a kernel library's program does.
 */
#define _POSIX_C_SOURCE 200809L
#include <omp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "te/runtime.h"

enum { MAX_LIST = 8, MAX_LOAD = 64 };

static double clock_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- the work: a dependent chain of multiply-adds, `steps` long ---- */

static uint64_t spin_work(uint64_t steps, uint64_t seed) {
  uint64_t x = seed | 1;
  for (uint64_t k = 0; k < steps; k++)
    x = x * 6364136223846793005u + 1442695040888963407u;
  return x;
}

static double steps_per_us; /* calibrated */

static void calibrate(void) {
  double best = 1e30;
  uint64_t steps = 1u << 20;
  volatile uint64_t sink = 0;
  for (int r = 0; r < 7; r++) {
    double t0 = clock_of(CLOCK_THREAD_CPUTIME_ID);
    sink += spin_work(steps, (uint64_t)r);
    double t = clock_of(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (t < best)
      best = t;
  }
  (void)sink;
  steps_per_us = (double)steps / (best * 1e6);
}

typedef struct job {
  uint64_t steps_per_iter;
  uint64_t out[64][8]; /* one cache line per slot: results kept, no false sharing */
} job;

static int32_t body(int64_t i, void *p) {
  job *j = p;
  uint64_t *slot = j->out[i & 63];
  slot[0] += spin_work(j->steps_per_iter, (uint64_t)i);
  return 0;
}
static int32_t (*volatile body_ptr)(int64_t, void *) = body;

/* ---- the three ways of running a call ---- */

typedef enum { WAY_TE, WAY_OMP, WAY_SERIAL, NWAYS } way;

static void run_calls(way w, job *j, int64_t iters, int threads, int calls, uint64_t gap_steps) {
  int32_t (*f)(int64_t, void *) = body_ptr;
  for (int c = 0; c < calls; c++) {
    if (w == WAY_TE) {
      te_rt_parallel_for(f, j, iters);
    } else if (w == WAY_OMP) {
#pragma omp parallel for schedule(static) num_threads(threads)
      for (int64_t i = 0; i < iters; i++)
        f(i, j);
    } else {
      for (int64_t i = 0; i < iters; i++)
        f(i, j);
    }
    if (gap_steps)
      j->out[63][1] += spin_work(gap_steps, (uint64_t)c);
  }
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  double wall, cpu; /* microseconds a call, medians */
} cost;

static bool te_only;

static void measure(int threads, int64_t iters, double work_us, double gap_us, int calls,
                    int rounds, cost out[NWAYS]) {
  static job j;
  j.steps_per_iter = (uint64_t)(work_us * steps_per_us / (double)iters);
  uint64_t gap_steps = (uint64_t)(gap_us * steps_per_us);
  te_rt_set_num_threads(threads);
  double wall[NWAYS][64], cpu[NWAYS][64];
  if (rounds > 64)
    rounds = 64;
  int nways = te_only ? 1 : NWAYS;
  for (int w = 0; w < nways; w++) /* warm up: pools started, pages touched */
    run_calls((way)w, &j, iters, threads, calls / 4 + 1, gap_steps);
  for (int r = 0; r < rounds; r++)
    for (int w = 0; w < nways; w++) {
      double t0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
      run_calls((way)w, &j, iters, threads, calls, gap_steps);
      wall[w][r] = (clock_of(CLOCK_MONOTONIC) - t0) * 1e6 / calls;
      cpu[w][r] = (clock_of(CLOCK_PROCESS_CPUTIME_ID) - c0) * 1e6 / calls;
    }
  for (int w = 0; w < NWAYS; w++)
    out[w] = w >= nways ? (cost){1, 1} : (cost){median(wall[w], rounds), median(cpu[w], rounds)};
}

/* ---- other load: K spinning processes ---- */

static pid_t load_pids[MAX_LOAD];
static int nload;

static void start_load(int k) {
  for (; nload < k && nload < MAX_LOAD; nload++) {
    pid_t p = fork();
    if (p == 0) {
      volatile uint64_t x = 0;
      for (;;)
        x += spin_work(1000, x);
    }
    if (p < 0)
      break;
    load_pids[nload] = p;
  }
}
static void stop_load(void) {
  for (int k = 0; k < nload; k++) {
    kill(load_pids[k], SIGKILL);
    waitpid(load_pids[k], NULL, 0);
  }
  nload = 0;
}

static double loadavg(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1)
      l = -1;
    fclose(f);
  }
  return l;
}

static int parse_list(const char *s, double *v) {
  int n = 0;
  char *end;
  while (*s && n < MAX_LIST) {
    v[n++] = strtod(s, &end);
    if (end == s)
      return -1;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',')
      return -1;
  }
  return n;
}

static void usage(void) {
  fprintf(stderr, "usage: te-parallel-bench [--threads 1,2] [--iters 48] [--work-us 0,3,30] "
                  "[--gap-us 0,200] [--calls 2000] [--rounds 9] [--load K] [--te-only]\n");
  exit(2);
}

int main(int argc, char **argv) {
  double threads[MAX_LIST] = {1, 2}, work[MAX_LIST] = {0, 3, 30}, gap[MAX_LIST] = {0, 200};
  int nthreads = 2, nwork = 3, ngap = 2, calls = 2000, rounds = 9, load = 0;
  int64_t iters = 48;
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--te-only")) {
      te_only = true;
      continue;
    }
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!v)
      usage();
    if (!strcmp(argv[a], "--threads"))
      nthreads = parse_list(v, threads);
    else if (!strcmp(argv[a], "--work-us"))
      nwork = parse_list(v, work);
    else if (!strcmp(argv[a], "--gap-us"))
      ngap = parse_list(v, gap);
    else if (!strcmp(argv[a], "--iters"))
      iters = atoll(v);
    else if (!strcmp(argv[a], "--calls"))
      calls = atoi(v);
    else if (!strcmp(argv[a], "--rounds"))
      rounds = atoi(v);
    else if (!strcmp(argv[a], "--load"))
      load = atoi(v);
    else
      usage();
    a++;
  }
  if (nthreads <= 0 || nwork <= 0 || ngap <= 0 || iters <= 0 || calls <= 0 || rounds <= 0)
    usage();
  calibrate();
  const char *policy = getenv("OMP_WAIT_POLICY");
  printf("te-parallel-bench: %lld iterations a call, %d calls x %d rounds, medians; "
         "OMP_WAIT_POLICY=%s; %d load processes; load average %.1f\n",
         (long long)iters, calls, rounds, policy ? policy : "(unset)", load, loadavg());
  printf("%3s %7s %6s | %17s | %17s | %17s | %11s | %11s | %s\n", "thr", "work_us", "gap_us",
         "te wall/cpu us", "omp wall/cpu us", "serial wall/cpu us", "te/omp w/c", "te/ser w/c",
         "te-ser cpu us");
  start_load(load);
  for (int t = 0; t < nthreads; t++)
    for (int w = 0; w < nwork; w++)
      for (int g = 0; g < ngap; g++) {
        cost c[NWAYS];
        measure((int)threads[t], iters, work[w], gap[g], calls, rounds, c);
        printf("%3d %7.1f %6.1f | %8.2f %8.2f | %8.2f %8.2f | %8.2f %8.2f | %5.2f %5.2f | %5.2f "
               "%5.2f | %7.2f\n",
               (int)threads[t], work[w], gap[g], c[WAY_TE].wall, c[WAY_TE].cpu, c[WAY_OMP].wall,
               c[WAY_OMP].cpu, c[WAY_SERIAL].wall, c[WAY_SERIAL].cpu,
               c[WAY_TE].wall / c[WAY_OMP].wall, c[WAY_TE].cpu / c[WAY_OMP].cpu,
               c[WAY_TE].wall / c[WAY_SERIAL].wall, c[WAY_TE].cpu / c[WAY_SERIAL].cpu,
               c[WAY_TE].cpu - c[WAY_SERIAL].cpu);
        fflush(stdout);
      }
  stop_load();
  printf("load average at the end %.1f\n", loadavg());
  return 0;
}
