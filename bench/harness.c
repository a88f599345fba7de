/* harness.c — timing loop, aligned buffers, deterministic fills and result checks (harness.h).
 *
 * Kept free of any te or anchor dependency so that every variant (te, OpenBLAS, oneDNN, Halide,
 * plain C) is timed by exactly the same code.
 */
#define _POSIX_C_SOURCE 200809L

#include "harness.h"
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bench_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

enum { MAX_SAMPLES_CAP = 1000 };

bench_timing bench_time(const bench_cfg *cfg, bench_fn fn, void *arg, double *samples) {
  bench_timing t = {0};
  int rounds = cfg->rounds > 1 ? cfg->rounds : 1;
  int max_samples = cfg->max_samples < MAX_SAMPLES_CAP ? cfg->max_samples : MAX_SAMPLES_CAP;
  int min_samples = cfg->min_samples < max_samples ? cfg->min_samples : max_samples;
  /* one round's share: every round at least two samples */
  max_samples = (max_samples + rounds - 1) / rounds;
  min_samples = (min_samples + rounds - 1) / rounds;
  min_samples = min_samples < 2 ? 2 : min_samples;
  max_samples = max_samples < min_samples ? min_samples : max_samples;
  double min_time_s = cfg->min_time_s / rounds;

  /* Warm-up (page faults, caches, thread pools, lazy JIT). Its time decides slow mode. */
  double t0 = bench_now();
  if (fn(arg) != 0) {
    t.failed = 1;
    return t;
  }
  double warm = bench_now() - t0;
  if (warm > cfg->slow_call_s) {
    t.slow = 1;
    min_samples = max_samples =
        cfg->slow_samples < cfg->max_samples ? cfg->slow_samples : cfg->max_samples;
  }

  int n = 0;
  double spent = 0;
  while (n < max_samples && (n < min_samples || spent < min_time_s)) {
    double s0 = bench_now();
    if (fn(arg) != 0) {
      t.failed = 1;
      return t;
    }
    double dt = bench_now() - s0;
    samples[n++] = dt;
    spent += dt;
  }
  t.samples = n;
  t.median_s = bench_median(samples, n);
  return t;
}

double bench_median(double *samples, int n) {
  if (n <= 0)
    return 0;
  qsort(samples, (size_t)n, sizeof samples[0], cmp_double);
  return (n % 2) ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
}

/* OpenBLAS's workers spin for about 2^28 cycles after a call, OpenMP's and Halide's for less,
   and on two cores a spinning worker steals half the machine from whatever runs next. */
void bench_settle(void) {
  struct timespec settle = {0, 150 * 1000 * 1000};
  nanosleep(&settle, NULL);
}

int bench_pair_ratio(bench_fn a, void *a_arg, bench_fn b, void *b_arg, int pairs, double *median,
                     double *q1, double *q3) {
  double r[MAX_SAMPLES_CAP];
  int n = 0;
  for (; n < pairs && n < MAX_SAMPLES_CAP; n++) {
    bench_settle();
    double t0 = bench_now();
    if (a(a_arg) != 0)
      return 0;
    double ta = bench_now() - t0;
    bench_settle();
    t0 = bench_now();
    if (b(b_arg) != 0)
      return 0;
    r[n] = (bench_now() - t0) / ta;
  }
  if (n == 0)
    return 0;
  qsort(r, (size_t)n, sizeof r[0], cmp_double);
  *median = r[n / 2];
  *q1 = r[n / 4];
  *q3 = r[3 * n / 4];
  return n;
}

float *bench_alloc_f32(size_t n) {
  size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
  float *p = aligned_alloc(64, bytes ? bytes : 64);
  if (p)
    memset(p, 0, bytes);
  return p;
}

void bench_free(void *p) { free(p); }

static uint64_t xorshift(uint64_t *s) {
  uint64_t x = *s;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return *s = x;
}

static double unit(uint64_t *s) { return (double)(xorshift(s) >> 11) / 9007199254740992.0; }

void bench_fill_uniform(float *p, size_t n, float lo, float hi, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++)
    p[i] = (float)(lo + (hi - lo) * unit(&s));
}

void bench_fill_nonzero(float *p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    double mag = 0.1 + 0.9 * unit(&s);
    p[i] = (float)((xorshift(&s) & 1) ? mag : -mag);
  }
}

void bench_poison(float *p, size_t n) {
  for (size_t i = 0; i < n; i++)
    p[i] = NAN;
}

bench_check bench_compare(const float *got, size_t nout, const size_t *idx, const double *ref,
                          const double *scale, double floor_scale, size_t npoints, double tol) {
  bench_check c = {0};
  for (size_t i = 0; i < nout; i++)
    if (!isfinite(got[i]))
      c.nonfinite++;
  for (size_t i = 0; i < npoints; i++) {
    double g = got[idx ? idx[i] : i];
    double sc = scale ? scale[i] : fabs(ref[i]);
    if (sc < floor_scale)
      sc = floor_scale;
    if (sc < 1e-30)
      sc = 1e-30;
    double err = fabs(g - ref[i]) / sc;
    if (!(err <= c.max_rel_err)) { /* NaN counts as the worst */
      c.max_rel_err = isnan(err) ? INFINITY : err;
      c.worst = i;
    }
  }
  c.ok = c.nonfinite == 0 && c.max_rel_err <= tol;
  return c;
}

int bench_selected(const bench_cfg *cfg, const char *name) {
  return !cfg->only || strcmp(cfg->only, name) == 0;
}

double bench_run_variant(const bench_cfg *cfg, const char *workload, const char *variant,
                         int threads, int kind, double work, bench_fn fn, void *arg, float *out,
                         size_t nout, const bench_ref *ref, const char *note) {
  int first = !bench_row_exists(workload, variant, threads);
  if (!first && !bench_row_wants_round(workload, variant, threads))
    return 0;
  bench_settle();
  bench_check c = {0, 0, 0, 1};
  if (first) {
    bench_poison(out, nout);
    if (fn(arg) != 0) {
      fprintf(stderr, "  %-18s %-10s %d thr: FAILED (%s)\n", workload, variant, threads,
              note ? note : "call returned an error");
      bench_add_failed(workload, variant, threads, note ? note : "call returned an error");
      return 0;
    }
    c = bench_compare(out, nout, ref->idx, ref->ref, ref->scale, ref->floor_scale, ref->npoints,
                      ref->tol);
  }
  double samples[MAX_SAMPLES_CAP];
  bench_timing t = bench_time(cfg, fn, arg, samples);
  if (t.failed) {
    bench_add_failed(workload, variant, threads, "a timed call returned an error");
    return 0;
  }
  char full[300];
  snprintf(full, sizeof full, "%s%s%s", note ? note : "", note && t.slow ? "; " : "",
           t.slow ? "slow: fewer samples" : "");
  if (c.nonfinite)
    snprintf(full + strlen(full), sizeof full - strlen(full), "%s%zu non-finite outputs",
             full[0] ? "; " : "", c.nonfinite);
  bench_add_timed(workload, variant, threads, (row_kind)kind, work, samples, t.samples, t.slow,
                  first, c.ok, c.max_rel_err, full);
  double rate = work / t.median_s * 1e-9;
  const char *unit = kind == ROW_FLOPS ? "GFLOP/s" : "GB/s";
  if (first)
    fprintf(stderr, "  %-18s %-10s %d thr: %9.3f ms  %8.2f %s  %s (err %.1e)\n", workload, variant,
            threads, t.median_s * 1e3, rate, unit, c.ok ? "ok" : "MISMATCH", c.max_rel_err);
  else
    fprintf(stderr, "  %-18s %-10s %d thr: %9.3f ms  %8.2f %s  (another round)\n", workload,
            variant, threads, t.median_s * 1e3, rate, unit);
  return t.median_s;
}
