/* harness.h — timing, buffers and result checks shared by every workload of te-bench.
 *
 * Timing: one warm-up call, then samples of one call each (CLOCK_MONOTONIC) until at least
 * cfg->min_time_s has passed and at least cfg->min_samples were taken (at most max_samples);
 * the median is the result. A variant whose single call takes longer than cfg->slow_call_s is
 * sampled only cfg->slow_samples times (and not warmed up twice), so a slow fallback cannot blow
 * the 10-minute budget; the row says so.
 *
 * Rounds: a workload times the variants of one thread count (te and its anchors) in
 * cfg->rounds rounds, each variant in turn with a round's share of the samples, and a row's
 * median is over the samples of every round: a slow phase of this shared machine (memory
 * bandwidth halves for seconds at a time) then falls on te and its anchors alike instead of on
 * whichever ran during it. The first round of a row checks its result; a slow variant is
 * timed in the first round only.
 *
 * Checks: every variant runs once on an output poisoned with NaN, and is compared with a plain C
 * reference computed in double: max |got - ref| / max(scale, 1e-30) over the checked points, plus
 * a scan of the whole output for non-finite values (an element never written stays NaN).
 */
#ifndef TE_BENCH_HARNESS_H
#define TE_BENCH_HARNESS_H

#include <stddef.h>
#include <stdint.h>

typedef struct bench_cfg {
  double min_time_s;  /* sample until this much time was spent (0.3 s; --quick: 0.05 s) */
  int min_samples;    /* at least this many samples (5) */
  int max_samples;    /* at most this many (50) */
  double slow_call_s; /* a call slower than this is sampled slow_samples times only */
  int slow_samples;
  int quick;             /* --quick: small sizes */
  const char *only;      /* --only WORKLOAD, or NULL */
  int max_threads;       /* 2: thread counts measured are 1 and max_threads */
  const char *tuned_log; /* --tuned LOG: also time te_apply_best's kernels from a tuning log */
  int rounds;            /* rounds of every row's samples (3; --quick: 1), see above */
} bench_cfg;

/* One call of the variant under test; returns 0 on success. */
typedef int (*bench_fn)(void *arg);

typedef struct bench_timing {
  double median_s;
  int samples;
  int failed; /* a call returned nonzero: the numbers are meaningless */
  int slow;   /* sampled slow_samples times only (see above) */
} bench_timing;

double bench_now(void);
/* Times fn for one round's share of cfg's samples into samples[] (room for cfg->max_samples). */
bench_timing bench_time(const bench_cfg *, bench_fn, void *arg, double *samples);

/* The median of samples[0 .. n), which it sorts; 0 when n is 0. */
double bench_median(double *samples, int n);

/* The pause before a variant's calls, so that the previous variant's thread pool has gone idle
   (OpenBLAS's workers spin for about 2^28 cycles after a call). */
void bench_settle(void);

/* a's speed over b's, call by call: `pairs` pairs of one call of each, settled before each
   call, so that both see the same moment of a noisy machine; the median and the quartiles of
   the pairs' ratios (b's time / a's time). Returns the pairs timed (0: a call failed). */
int bench_pair_ratio(bench_fn a, void *a_arg, bench_fn b, void *b_arg, int pairs, double *median,
                     double *q1, double *q3);

/* 64-byte aligned float buffers (free with bench_free); NULL when out of memory. */
float *bench_alloc_f32(size_t n);
void bench_free(void *);
/* Deterministic pseudo-random fills. */
void bench_fill_uniform(float *, size_t n, float lo, float hi, uint64_t seed);
void bench_fill_nonzero(float *, size_t n, uint64_t seed); /* values in +-[0.1, 1] */
void bench_poison(float *, size_t n);                      /* NaN everywhere */

typedef struct bench_check {
  double max_rel_err; /* over the compared points */
  size_t worst;       /* index (into the compared points) of the worst error */
  size_t nonfinite;   /* non-finite values in the whole output */
  int ok;             /* max_rel_err <= tol and nonfinite == 0 */
} bench_check;

/* Compare got[idx[i]] (idx NULL: got[i]) with ref[i] for i < npoints, the error of point i
   scaled by scale[i] (scale NULL: |ref[i]|, at least floor_scale). The non-finite scan covers
   got[0 .. nout). */
bench_check bench_compare(const float *got, size_t nout, const size_t *idx, const double *ref,
                          const double *scale, double floor_scale, size_t npoints, double tol);

/* 1 when the workload called name should run under cfg->only. */
int bench_selected(const bench_cfg *, const char *name);

/* The reference a variant's output is checked against (see bench_compare). */
typedef struct bench_ref {
  const size_t *idx; /* NULL: the points are the first npoints outputs */
  const double *ref;
  const double *scale; /* NULL: |ref| */
  double floor_scale;
  size_t npoints;
  double tol;
} bench_ref;

/* Runs one variant the standard way and records its row (report.h): wait 150 ms for other
   thread pools to go idle; the first time (no row yet) poison out[0 .. nout) with NaN, call fn
   once and check against ref; then time it with bench_time and add the samples to the row (a
   later round skips a row that failed or was slow). kind is ROW_FLOPS or ROW_BYTES and work the
   flops or bytes of one call. Progress goes to stderr. Returns this round's median in seconds (0
   when it failed or was skipped). */
double bench_run_variant(const bench_cfg *, const char *workload, const char *variant, int threads,
                         int kind, double work, bench_fn fn, void *arg, float *out, size_t nout,
                         const bench_ref *ref, const char *note);

#endif
