/* dot_gemm.c — the low-precision GEMM hand schedule (dot_gemm.h). */
#include "dot_gemm.h"

#include "sgemm_schedule.h"

#include <unistd.h>

enum { DG_MR = 6, DG_NR = 64, DG_KC = 256, DG_MC = 96 };

void dot_gemm_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const dot_gemm *g = params;
  int n = g->n;
  te_expr *N = te_int(ctx, n), *nr = te_int(ctx, DG_NR), *grp = te_int(ctx, g->group);
  te_tensor *A = te_placeholder(ctx, "A", g->a, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", g->b, 2, TE_EXPRS(N, N));
  te_expr *pj = te_var(ctx, "pj"), *pk = te_var(ctx, "pk"), *pl = te_var(ctx, "pl"),
          *pq = te_var(ctx, "pq");
  te_tensor *Bp = te_compute(
      ctx, "Bp", 4, TE_EXPRS(te_int(ctx, n / DG_NR), te_int(ctx, n / g->group), nr, grp),
      TE_EXPRS(pj, pk, pl, pq), TE_AT(B, te_add(te_mul(pk, grp), pq), te_add(te_mul(pj, nr), pl)));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_expr *b =
      TE_AT(Bp, te_floordiv(j, nr), te_floordiv(k, grp), te_floormod(j, nr), te_floormod(k, grp));
  te_expr *prod = te_mul(te_cast(g->acc, TE_AT(A, i, k)), te_cast(g->acc, b));
  te_tensor *C = te_compute(ctx, "C", 2, TE_EXPRS(N, N), TE_EXPRS(i, j), TE_SUM(prod, k));
  out->ntensors = 3;
  out->tensors[0] = A, out->tensors[1] = B, out->tensors[2] = C;
  te_schedule *s = out->s = te_schedule_new(ctx, 1, &C);
  if (!s || !(flags & TB_TILE))
    return;
  te_tensor *CL = NULL;
  te_cache_write(s, C, TE_SCOPE_LOCAL, &CL);
  if (!CL)
    return;
  te_stage *cs = te_stage_of(s, C), *ls = te_stage_of(s, CL), *ps = te_stage_of(s, Bp);
  te_iter *io, *jo, *ii, *ji, *lm, *li, *ljv, *lj, *kc, *kr, *kg, *ki;
  te_tile(cs, te_axis(cs, 0), te_axis(cs, 1), DG_MC, DG_NR, &io, &jo, &ii, &ji);
  te_compute_at(ls, cs, jo);
  te_split(ls, te_axis(ls, 0), DG_MR, &lm, &li);
  te_split(ls, te_axis(ls, 1), 16, &ljv, &lj);
  te_split(ls, te_reduce_iter(ls, 0), DG_KC, &kc, &kr);
  te_split(ls, kr, g->group, &kg, &ki);
  te_reorder(ls, 7, (te_iter *const[]){kc, lm, kg, li, ljv, ki, lj});
  if (flags & TB_VEC) {
    te_vectorize(ls, lj);
    te_vectorize(cs, ji);
  }
  if (flags & TB_UNROLL) {
    te_unroll(ls, li);
    te_unroll(ls, ljv);
  }
  if (flags & TB_EXTRA)
    te_tensorize(ls, ki, g->instruction);
  if (flags & TB_PAR) {
    te_parallel(cs, io);
    te_parallel(ps, te_axis(ps, 0));
  }
}

void dot_gemm_f32_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  int n = *(const int *)params;
  sgemm_params p = sgemm_tiles(n, sysconf(_SC_LEVEL2_CACHE_SIZE));
  out->ntensors = 3;
  out->s = sgemm_define(ctx, &p, SGEMM_ALL_STEPS, out->tensors);
}
