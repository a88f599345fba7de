/* dot_gemm.c — the low-precision GEMM hand schedule (dot_gemm.h). */
#include "dot_gemm.h"

#include "sgemm_schedule.h"

#include <string.h>
#include <unistd.h>

/* The register tile is DG_MR x DG_NR; a thread's tile of C DG_MC x DG_NR. DG_MC = 64 divides
   the sizes the rows use into an even number of row tiles (2 threads get equal work; 96 left
   1024 as 6 tiles against 5). */
enum { DG_MR = 6, DG_NR = 64, DG_MC = 64 };

void dot_gemm_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const dot_gemm *g = params;
  int n = g->n;
  te_expr *N = te_int(ctx, n), *nr = te_int(ctx, DG_NR), *grp = te_int(ctx, g->group);
  te_tensor *A = te_placeholder(ctx, "A", g->a, 2, TE_EXPRS(N, N));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_tensor *Bp =
      te_placeholder(/* B's panels: the caller packs them (dot_gemm_pack) */
                     ctx, "Bp", g->b, 4,
                     TE_EXPRS(te_int(ctx, n / DG_NR), te_int(ctx, n / g->group), nr, grp));
  te_expr *panel = te_floordiv(j, nr), *kpair = te_floordiv(k, grp), *col = te_floormod(j, nr),
          *kq = te_floormod(k, grp);
  te_expr *b = TE_AT(Bp, panel, kpair, col, kq);
  te_expr *prod = te_mul(te_cast(g->acc, TE_AT(A, i, k)), te_cast(g->acc, b));
  te_tensor *C = te_compute(ctx, "C", 2, TE_EXPRS(N, N), TE_EXPRS(i, j), TE_SUM(prod, k));
  out->ntensors = 3;
  out->tensors[0] = A, out->tensors[1] = Bp, out->tensors[2] = C;
  te_schedule *s = out->s = te_schedule_new(ctx, 1, &C);
  if (!s || !(flags & TB_TILE))
    return;
  te_tensor *CL = NULL;
  te_cache_write(s, C, TE_SCOPE_LOCAL, &CL);
  if (!CL)
    return;
  te_stage *cs = te_stage_of(s, C), *ls = te_stage_of(s, CL);
  te_iter *io, *jo, *ii, *ji, *lm, *li, *ljv, *lj, *kg, *ki;
  te_tile(cs, te_axis(cs, 0), te_axis(cs, 1), DG_MC, DG_NR, &io, &jo, &ii, &ji);
  te_compute_at(ls, cs, jo);
  te_split(ls, te_axis(ls, 0), DG_MR, &lm, &li);
  te_split(ls, te_axis(ls, 1), 16, &ljv, &lj);
  te_split(ls, te_reduce_iter(ls, 0), g->group, &kg, &ki);
  te_reorder(ls, 6, (te_iter *const[]){lm, kg, li, ljv, ki, lj});
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
  if (flags & TB_PAR)
    te_parallel(cs, io);
}

void dot_gemm_tuned_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  const dot_gemm_tuned *p = params;
  te_expr *N = te_int(ctx, p->g->n);
  te_tensor *A = te_placeholder(ctx, "A", p->g->a, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", p->g->b, 2, TE_EXPRS(N, N));
  te_tensor *C = te_op_matmul_acc(ctx, A, B, 0, 0, p->g->acc, "C");
  out->s = C ? te_schedule_new(ctx, 1, &C) : NULL;
  out->ntensors = 3;
  out->tensors[0] = A, out->tensors[1] = B, out->tensors[2] = C;
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (out->s && target) /* no record: its error fails the build, so no row */
    te_apply_best(out->s, p->log, target);
}

void dot_gemm_f32_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  int n = *(const int *)params;
  sgemm_params p = sgemm_tiles(n, sysconf(_SC_LEVEL2_CACHE_SIZE), sgemm_native_vector_bits());
  out->ntensors = 3;
  out->s = sgemm_define(ctx, &p, SGEMM_ALL_STEPS, out->tensors);
}

void dot_gemm_pack(const void *b, void *bp, size_t elem, int n, int group) {
  const unsigned char *src = b;
  unsigned char *dst = bp;
  for (int k = 0; k < n; k++) /* Bp[j / 64][k / G][j % 64][k % G] = B[k][j] */
    for (int j = 0; j < n; j++) {
      size_t to =
          (((size_t)(j / DG_NR) * (n / group) + k / group) * DG_NR + j % DG_NR) * group + k % group;
      memcpy(dst + to * elem, src + ((size_t)k * n + j) * elem, elem);
    }
}
