/* dot_time.c — te against an anchor call by call in CPU time (dot_time.h). */
#include "dot_time.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { CPU_MAX_CALLS = 400 };

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double seconds(clockid_t clock) {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One call timed by both clocks. */
static int timed(bench_fn fn, void *arg, double *cpu, double *wall) {
  double c0 = seconds(CLOCK_PROCESS_CPUTIME_ID), w0 = seconds(CLOCK_MONOTONIC);
  int st = fn(arg);
  *wall = seconds(CLOCK_MONOTONIC) - w0;
  *cpu = seconds(CLOCK_PROCESS_CPUTIME_ID) - c0;
  return st;
}

void dot_cpu_versus(const char *label, const char *a_name, bench_fn a, void *a_arg,
                    const char *b_name, bench_fn b, void *b_arg) {
  const char *env = getenv("TE_BENCH_CPU");
  int calls = env ? atoi(env) : 0;
  if (calls < 4)
    return;
  calls = calls > CPU_MAX_CALLS ? CPU_MAX_CALLS : calls;
  static double cpu[2][CPU_MAX_CALLS], wall[2][CPU_MAX_CALLS];
  for (int r = 0; r < calls; r++)
    if (timed(a, a_arg, &cpu[0][r], &wall[0][r]) || timed(b, b_arg, &cpu[1][r], &wall[1][r]))
      return;
  for (int v = 0; v < 2; v++) {
    qsort(cpu[v], (size_t)calls, sizeof(double), cmp_double);
    qsort(wall[v], (size_t)calls, sizeof(double), cmp_double);
  }
  for (int v = 0; v < 2; v++)
    fprintf(stderr,
            "CPU %s %-8s cpu ms q1 %.3f median %.3f q3 %.3f; wall best-quarter median %.3f\n",
            label, v ? b_name : a_name, cpu[v][calls / 4] * 1e3, cpu[v][calls / 2] * 1e3,
            cpu[v][3 * calls / 4] * 1e3, wall[v][calls / 8] * 1e3);
  fprintf(stderr, "CPU %s %s/%s speed: cpu median %.3f, wall best-quarter %.3f (%d calls each)\n",
          label, a_name, b_name, cpu[1][calls / 2] / cpu[0][calls / 2],
          wall[1][calls / 8] / wall[0][calls / 8], calls);
}
