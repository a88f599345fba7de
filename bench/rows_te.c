/* rows_te.c — te building blocks shared by the row-wise workloads (softmax.c, layernorm.c):
 * per-row reductions written in one or two levels, and the schedules of element-wise, per-row
 * and partial-lane stages (rows_te.h).
 */
#include "rows_te.h"

#include <stdio.h>

te_tensor *row_reduce(te_ctx *ctx, const char *name, const rows_shape *s, int lanes64, int kind,
                      elem_fn elem, void *user, te_tensor **partial) {
  te_expr *R = te_int(ctx, s->rows), *i = te_var(ctx, "i");
  *partial = NULL;
  if (lanes64 && s->cols % LANES == 0) {
    char pname[32];
    snprintf(pname, sizeof pname, "%s_p", name);
    te_expr *l = te_var(ctx, "l");
    te_expr *kk = te_reduce_axis(ctx, "kk", te_int(ctx, 0), te_int(ctx, s->cols / LANES));
    te_expr *v = elem(ctx, i, te_add(te_mul(kk, te_int(ctx, LANES)), l), user);
    *partial = te_compute(ctx, pname, 2, TE_EXPRS(R, te_int(ctx, LANES)), TE_EXPRS(i, l),
                          kind ? TE_SUM(v, kk) : te_max_r(v, 1, TE_EXPRS(kk)));
    te_expr *i2 = te_var(ctx, "i");
    te_expr *l2 = te_reduce_axis(ctx, "l", te_int(ctx, 0), te_int(ctx, LANES));
    te_expr *pv = TE_AT(*partial, i2, l2);
    return te_compute(ctx, name, 1, TE_EXPRS(R), TE_EXPRS(i2),
                      kind ? TE_SUM(pv, l2) : te_max_r(pv, 1, TE_EXPRS(l2)));
  }
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, s->cols));
  te_expr *v = elem(ctx, i, k, user);
  return te_compute(ctx, name, 1, TE_EXPRS(R), TE_EXPRS(i),
                    kind ? TE_SUM(v, k) : te_max_r(v, 1, TE_EXPRS(k)));
}

te_expr *elem_x(te_ctx *ctx, te_expr *i, te_expr *k, void *user) {
  (void)ctx;
  return TE_AT((te_tensor *)user, i, k);
}

void sched_elementwise(te_stage *st, unsigned flags, int parallel_rows) {
  te_iter *jo = NULL, *j1 = NULL, *ju = NULL, *jv = NULL;
  te_split(st, te_axis(st, 1), LANES, &jo, &j1);
  te_split(st, j1, 16, &ju, &jv);
  if (flags & TB_VEC)
    te_vectorize(st, jv);
  if (flags & TB_UNROLL)
    te_unroll(st, ju);
  if (parallel_rows && (flags & TB_PAR))
    te_parallel(st, te_axis(st, 0));
}

void place_row_stage(te_stage *st, te_stage *consumer, unsigned flags) {
  if (flags & TB_EXTRA2)
    te_compute_at(st, consumer, te_axis(consumer, 0));
  else if (flags & TB_PAR)
    te_parallel(st, te_axis(st, 0));
}

void sched_partial(te_stage *p, te_stage *consumer, unsigned flags) {
  te_reorder(p, 2, (te_iter *const[]){te_reduce_iter(p, 0), te_axis(p, 1)});
  if (flags & TB_VEC)
    te_vectorize(p, te_axis(p, 1));
  place_row_stage(p, consumer, flags);
}
