/* report.h — the result rows of te-bench: collected by the workloads, printed as one table and
 * written as JSON.
 *
 * A row is one (workload, variant, thread count) measurement. Its rate is GFLOP/s for compute
 * rows and GB/s for memory rows; its fraction is that rate over the measured FMA peak (of that
 * many threads) or the measured triad bandwidth. The ratio column compares te with the row:
 *   - on an anchor's row (same workload and threads as a te row): te speed / anchor speed
 *     (= anchor ms / te ms; above 1 means te is faster);
 *   - on a compile row of an anchor: te compile time / anchor compile time (below 1: te faster).
 */
#ifndef TE_BENCH_REPORT_H
#define TE_BENCH_REPORT_H

typedef enum {
  ROW_FLOPS,   /* work = floating-point operations per call */
  ROW_BYTES,   /* work = bytes moved per call (minimal traffic) */
  ROW_COMPILE, /* ms = compile time; no rate */
  ROW_PEAK     /* a machine measurement: rate only */
} row_kind;

typedef struct bench_row {
  char workload[48]; /* e.g. "sgemm 1024" */
  char variant[32];  /* te, openblas, onednn, halide, naive-c, c-vec, ... */
  int threads;
  row_kind kind;
  double ms;   /* median (or compile time) */
  double work; /* flops or bytes per call */
  double rate; /* GFLOP/s or GB/s (computed from ms and work unless a peak row) */
  double frac; /* of peak or bandwidth; < 0 when unknown */
  double ratio;
  int has_ratio;
  int samples;  /* of every round (harness.h) */
  double *pool; /* those samples, seconds (NULL on rows not timed) */
  int slow;     /* sampled in round 0 only */
  int checked;  /* 1 when compared with the reference */
  int ok;       /* check passed (or not checked) */
  int failed;   /* could not run at all */
  double max_err;
  char unit[16]; /* peak rows: "GFLOP/s" or "GB/s" */
  char note[240];
} bench_row;

/* Machine numbers the fractions are relative to (index: thread count, 1..2). */
typedef struct bench_machine {
  double fma_gflops[3];
  double triad_gbs[3];
  double copy_gbs[3];
  double vnni_gops[3];   /* vpdpbusd's peak: the fraction of rows whose workload starts "int8" */
  double bf16_gflops[3]; /* vdpbf16ps's peak: the fraction of rows whose workload starts "bf16" */
} bench_machine;

/* Adds a row (copied). Returns a pointer valid until the next bench_add. */
bench_row *bench_add(const bench_row *);
/* A timed run's samples (seconds): the first call makes the row, a later round's call adds
   its samples to it; ms is the median of all of them, rate follows from ms and work.
   checked, ok, max_err and note count from the first round. */
void bench_add_timed(const char *workload, const char *variant, int threads, row_kind kind,
                     double work, const double *samples, int nsamples, int slow, int checked,
                     int ok, double max_err, const char *note);
/* Whether the row of (workload, variant, threads) exists; whether it was timed and wants more
   rounds (not failed, not slow). */
int bench_row_exists(const char *workload, const char *variant, int threads);
int bench_row_wants_round(const char *workload, const char *variant, int threads);
/* A row that could not run (a later round's failure marks the existing row failed). */
void bench_add_failed(const char *workload, const char *variant, int threads, const char *why);
void bench_add_peak(const char *workload, const char *variant, int threads, double rate,
                    const char *unit, const char *note);
/* Repeats the row of (workload, variant, from_threads) for to_threads, with note appended: for a
   kernel without parallel loops whose multi-thread run would only measure the same thing again. */
void bench_add_copy(const char *workload, const char *variant, int from_threads, int to_threads,
                    const char *note);
void bench_add_compile(const char *workload, const char *variant, double seconds, const char *note);

/* Facts about the run (target, library versions), printed above the table and written into the
   JSON's "meta" object. Up to 16; key and value are copied. */
void bench_meta(const char *key, const char *value);

/* Computes fractions and ratios, prints the table to stdout and writes JSON to json_path
   (NULL: no file). Returns the number of rows whose check failed. */
int bench_report(const bench_machine *, const char *json_path, const char *cmdline, double total_s);

#endif
