/* demo.h — te-demo's parts: one matmul, C = A * B (n x n f32), taken through the journey a user
 * makes with te (main.c): the computation, the default schedule, the benchmark's hand schedule, a
 * schedule te-tune finds in a short budget, each checked against a plain reference and timed
 * beside OpenBLAS; then the fastest kernel saved as a static library and called from a small C
 * program linked only with libte_runtime.
 *
 * Files: matmul_data.c (buffers, reference, checks, timing), openblas.c (OpenBLAS, loaded at
 * run time when installed), tune.c (te_tune with a progress display), library.c (te_module_save
 * and the program that uses the library, use_kernel.c, compiled and run on the spot).
 */
#ifndef TE_APPS_DEMO_H
#define TE_APPS_DEMO_H

#include <stdbool.h>
#include <stddef.h>

#include <te/te.h>

/* ---------------------------------------------------------------- data (matmul_data.c) */

/* A, B and C with their DLTensor views, and the plain reference: C in double and, per element,
   sum_k |A[i,k] B[k,j]|, so the tolerance scales with the terms (cancellation does not make a
   relative error meaningless). */
typedef struct dm_data {
  int n;
  float *a, *b, *c; /* 64-byte aligned */
  double *ref, *ref_abs;
  int64_t shape[2];
  DLTensor ta, tb, tc;
} dm_data;

/* Allocates and fills A and B with random non-zero values in [-1, -0.1] u [0.1, 1] (a kernel
   that skips work shows) and computes the reference. false when out of memory (d is freed). */
bool dm_data_init(dm_data *d, int n);
void dm_data_free(dm_data *d);

/* C poisoned with NaN, so an element the kernel never writes fails the check. */
void dm_poison(dm_data *d);

/* The largest error of C relative to sum_k |A B| (NaN counts as infinite); *where gets the
   first element over tol (or -1). */
double dm_check(const dm_data *d, double tol, long *where);

/* The tolerance of dm_time's checks, relative to sum_k |A B|: f32 sums of n terms typically
   err by about sqrt(n) ulps of it (2.4e-7 seen at n = 512), so this leaves a margin of 10 to 40
   over that and still catches a term missing or counted twice (>= 1 / n of it). */
double dm_tolerance(int n);

/* A way to compute C = A * B: run(user) computes it from d's A and B, returns 0 or an error
   (its message in msg). */
typedef int (*dm_run_fn)(void *user, char *msg, size_t msg_size);

/* What timing one variant gave (zero it before the first round). */
typedef struct dm_timing {
  bool ok;          /* every run succeeded and every check passed */
  double err;       /* the largest error dm_check saw */
  double fastest_s; /* the fastest timed run of every round so far */
  int rounds, runs;
  char msg[512]; /* why not ok */
} dm_timing;

/* One round of timing: a first run on poisoned C, checked (dm_tolerance); then runs timed back
   to back until they add up to min_s (at least 3), and a last checked run. A first run longer
   than min_s is the round's only timed run. The fastest run counts: on a shared machine the
   runs other programs slowed down are noise (the median of a kernel timed while another
   program ran measures that program), and rounds alternating between variants give each its
   quiet moments. */
void dm_time(dm_data *d, dm_run_fn run, void *user, double min_s, dm_timing *t);

double dm_now_s(void);

/* ---------------------------------------------------------------- OpenBLAS (openblas.c) */

/* Loads libopenblas (dlopen: the demo builds and runs without it). false, with the reason in
   why, when it is not installed. */
bool dm_openblas_load(char *why, size_t why_size);
/* OpenBLAS's version and kernel ("OpenBLAS 0.3.21 ... Zen"), and its thread count. */
const char *dm_openblas_config(void);
void dm_openblas_set_threads(int n);
/* A dm_run_fn: cblas_sgemm on the dm_data given as user. */
int dm_openblas_run(void *dm_data, char *msg, size_t msg_size);

/* ---------------------------------------------------------------- tuning (tune.c) */

typedef struct dm_tune_result {
  te_status status;
  int trials, errors;
  double seconds;     /* the search and its confirm pass */
  double best_gflops; /* as te_tune measured it, in its child processes */
  char key[17];
} dm_tune_result;

/* Tunes out's computation for target with te_tune for about budget_s seconds (the confirm
   pass comes after), writing log_path (replaced) with desc in each record. The progress is a
   bar redrawn in place on a terminal, else a line a round. */
dm_tune_result dm_tune(te_ctx *ctx, te_tensor *out, te_target *target, double budget_s,
                       const char *log_path, const char *desc);

/* ---------------------------------------------------------------- the library (library.c) */

/* Saves the module's kernel `kernel` (arguments A, B, C: n x n f32) as dir/libKERNEL.a and
   dir/KERNEL.h, compiles use_kernel.c against them with the C compiler te was built with,
   linking only libte_runtime and libm, runs the program and prints what it says. Returns true
   when every step worked and the program's checks passed. Paths are printed as in shown (dir,
   maybe relative). */
bool dm_library(te_module *mod, const char *kernel, int n, const char *dir, const char *shown);

#endif
