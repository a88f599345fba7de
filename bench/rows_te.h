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

#endif
