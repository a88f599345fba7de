/* te_util.h — building te kernels for the benchmark, with a ladder of fallback schedules.
 *
 * Each workload writes the best schedule it can express with te's public API, switched by flags
 * (vectorize, parallel, unroll, and one workload-specific extra such as packing or compute_at).
 * te may not implement every primitive yet (TE_ERR_UNSUPPORTED), or may fail to build one: then
 * tb_build tries the next schedule of the ladder, in order of expected speed, and reports which
 * one it used and why the better ones were refused. The timed call goes straight to the kernel's
 * entry point (te_module_entry), not through libffi.
 */
#ifndef TE_BENCH_TE_UTIL_H
#define TE_BENCH_TE_UTIL_H

#include <te/te.h>

#include "harness.h"

enum {
  TB_TILE = 1u << 0,   /* the workload's tiling / loop order (else: te's default schedule) */
  TB_UNROLL = 1u << 1, /* te_unroll on the register-tile loops */
  TB_EXTRA = 1u << 2,  /* the workload's extra step (packing, compute_at, ...) */
  TB_PAR = 1u << 3,    /* te_parallel on an outer loop */
  TB_VEC = 1u << 4,    /* te_vectorize on the inner loop */
  TB_EXTRA2 = 1u << 5, /* a second workload-specific step */
};

/* TB_COMPILE_SAMPLES: builds of the kept schedule whose median build time is reported. */
enum { TB_MAX_TENSORS = 8, TB_MAX_LADDER = 40, TB_COMPILE_SAMPLES = 3 };

/* What a workload's define function fills in. */
typedef struct tb_def {
  te_schedule *s;
  int ntensors;
  te_tensor *tensors[TB_MAX_TENSORS]; /* kernel arguments, in call order */
} tb_def;

/* Defines the computation in ctx and applies the schedule that flags select. Errors may be left
   on the context (they are sticky); tb_build checks te_last_status afterwards. */
typedef void (*tb_define_fn)(te_ctx *, unsigned flags, const void *params, tb_def *out);

typedef struct tb_kernel {
  te_ctx *ctx;
  te_module *mod;
  void *entry;
  int ntensors;
  unsigned flags;
  char desc[96];        /* the flags used, as text */
  char note[240];       /* "schedule: ...; better ones refused: ..." */
  te_build_times times; /* the median of TB_COMPILE_SAMPLES builds */
} tb_kernel;

/* The ladder for a workload: every combination of TB_VEC, TB_PAR, the extras the workload has
   (extras: 0, TB_EXTRA or TB_EXTRA | TB_EXTRA2) and TB_UNROLL over TB_TILE, best first in that
   order of importance, then te's default schedule (0). Returns its length. */
int tb_ladder(unsigned extras, unsigned ladder[TB_MAX_LADDER]);

/* Builds the first schedule of the ladder that te accepts, as kernel `name` (a C identifier).
   Progress and refusals go to stderr, prefixed with label. Returns 1 on success.
   extra_names name TB_EXTRA and TB_EXTRA2 in messages ("packB", "compute_at"). */
int tb_build(const char *label, const char *name, tb_define_fn, const void *params,
             const unsigned *ladder, int nladder, const char *const extra_names[2], tb_kernel *out);
void tb_free(tb_kernel *);

/* Calls the kernel's entry with args[0 .. ntensors); returns its status (0 = ok). On failure
   the kernel's message is in te_rt_last_error(). */
int tb_call(const tb_kernel *, DLTensor *const args[]);

/* A compact row-major f32 DLTensor over data; shape is copied into storage (ndim <= 8). */
void tb_tensor(DLTensor *, int64_t storage[8], float *data, int ndim, const int64_t *shape);

/* The flags as text ("tiled+vec+par+packB+unroll", "default schedule"), into buf. */
const char *tb_flags_str(unsigned flags, const char *const extra_names[2], char *buf, int size);

/* When set (te-bench --ir), tb_build prints the lowered IR of every kernel it keeps to stderr.
   With TB_SAVE=DIR in the environment it also writes each kept kernel to DIR/<name>.o and .h
   (te_module_save), to link into a driver that perf can profile with the closures' symbols;
   with TB_SAVE_IR=1 also DIR/<name>.ll, the optimized LLVM IR. */
extern int tb_show_ir;

/* te_rt_set_num_threads, for the timed te variants. */
void tb_set_threads(int n);

/* A kernel and its arguments, called by tb_run (a bench_fn). */
typedef struct tb_args {
  const tb_kernel *k;
  DLTensor *args[TB_MAX_TENSORS];
} tb_args;
int tb_run(void *tb_args);

/* The "te" row of workload wl at t threads (kind and work as bench_run_variant takes them):
   args' kernel timed, or a failed row (its note says why) when have is 0, or a copy of the
   1-thread row when the kernel has no parallel loop (t > 1 would time the same thing). */
void tb_run_te(const bench_cfg *, const char *wl, int t, int kind, double work, int have,
               tb_args *args, float *out, size_t nout, const bench_ref *chk);

#endif
