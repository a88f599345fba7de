/* rows_te.h — te building blocks for row-wise workloads over a [rows, cols] f32 matrix.
 *
 * A per-row reduction red_k f(i, k) is written either in one level (a scalar loop over k) or in
 * two: 64 partial lanes p[i, l] = red_kk f(i, 64 kk + l) whose l loop is innermost and vectorized
 * (4 zmm of independent accumulators: what rfactor would give, written in the algorithm), then
 * red_l p[i, l].
 */
#ifndef TE_BENCH_ROWS_TE_H
#define TE_BENCH_ROWS_TE_H

#include "te_util.h"

enum { LANES = 64 };

typedef struct rows_shape {
  int rows, cols;
} rows_shape;

/* The element f(i, k) of a reduction. */
typedef te_expr *(*elem_fn)(te_ctx *, te_expr *i, te_expr *k, void *user);
/* elem_fn reading the [rows, cols] tensor given as user. */
te_expr *elem_x(te_ctx *, te_expr *i, te_expr *k, void *user);

/* The per-row reduction (kind 0: max, 1: sum) named name, in two levels when lanes64 and cols is
   a multiple of LANES (then *partial is the lane stage, else NULL). */
te_tensor *row_reduce(te_ctx *, const char *name, const rows_shape *, int lanes64, int kind,
                      elem_fn elem, void *user, te_tensor **partial);

/* A [rows, cols] element-wise stage: cols split LANES then 16, the 16 vectorized (TB_VEC), the 4
   vectors unrolled (TB_UNROLL), rows parallel when parallel_rows (TB_PAR). */
void sched_elementwise(te_stage *, unsigned flags, int parallel_rows);
/* A per-row stage: with TB_EXTRA2 computed at the row loop (axis 0) of consumer, a stage that
   reads it or contains its readers (place the readers first: te_compute_at's rule), else
   at root, rows in parallel. */
void place_row_stage(te_stage *, te_stage *consumer, unsigned flags);
/* A partial-lane stage: lanes innermost and vectorized, then placed as place_row_stage. */
void sched_partial(te_stage *partial, te_stage *consumer, unsigned flags);

/* The hand rows of a row-wise workload: te's kernel (targs; a failed row when have_te is 0)
   and the anchor (anchor_name, its note; *threads set before each of its runs) alternating in
   every round at 1 and cfg's threads, then with TE_BENCH_CPU by CPU time against each other
   (at t > 1 only when the kernel has a parallel loop). */
void rows_run_hand(const bench_cfg *cfg, const char *wl, tb_args *targs, int have_te,
                   const char *anchor_name, const char *anchor_note, bench_fn anchor,
                   void *anchor_arg, int *threads, float *out, size_t nout, double bytes,
                   const bench_ref *chk);

/* "<wl> tuned" rows (te-bench --tuned LOG): te_op_softmax or te_op_layer_norm of x [rows, cols]
   (gamma, beta [cols]), named as te-tune's operators name them (`te-tune tune "softmax
   N=4096 D=4096"`), so that te_apply_best finds the log's best schedule for them. */
typedef struct rows_tuned {
  rows_shape s;
  const char *log;
  int layer_norm; /* 0: softmax */
} rows_tuned;
/* A tb_define_fn: the workload with te_apply_best(log) applied; no schedule (refused, with te's
   message) when the log has no record of it. */
void rows_define_tuned(te_ctx *, unsigned flags, const void *rows_tuned, tb_def *out);
/* The "<wl> tuned" rows: the tuned kernel (args: the kernel's tensors in order) as variant
   "te-tuned" at 1 and cfg's threads, alternating with the anchor (anchor_name; *threads set
   before each of its runs) in every round; with TE_BENCH_CPU also by CPU time against the
   anchor and against hand (te's hand schedule, when have_hand). */
void rows_run_tuned(const bench_cfg *cfg, const char *wl, const rows_tuned *p,
                    DLTensor *const args[], int nargs, const tb_kernel *hand, int have_hand,
                    const char *anchor_name, bench_fn anchor, void *anchor_arg, int *threads,
                    float *out, size_t nout, double bytes, const bench_ref *chk);

#endif
