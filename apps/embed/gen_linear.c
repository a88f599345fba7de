/* gen_linear.c — the encoder's dense layers: Y = act(X W^T + bias) with m (batch x tokens)
 * symbolic, as one kernel whose matmul tile is followed by the bias and activation while the
 * tile is still in cache (the fusion of matmul + bias + GELU).
 *
 * The schedule is bench/sgemm_schedule.c's for a tall, thin product: 6 x nr register tiles
 * (nr = 4 vectors: 24 accumulators in AVX-512's 32 registers; with fewer than 32 registers, as
 * AVX2's 16, nr = 2 vectors: 12) accumulated in a local block Mm,
 * computed at each MC x nr tile of Y, k blocked by KC so that a KC x nr slice of the weight
 * panel (32 KB at nr = 64) stays in L1 while the tile's rows stream through it. The weights are
 * packed once at load time (model.c) into panels Wp[j / nr][k][j % nr], contiguous along the
 * register tile's row; the tiles (row blocks x column panels, fused) run in parallel, so that a
 * batch of one short sentence (16 rows) still gives both threads column panels to share.
 */
#include "gen.h"

enum {
  MR = 6,  /* rows of a register tile */
  MC = 48, /* rows of Y's tile: 8 register tiles; its X rows (48 x K) stay in L2 */
  KC = 128 /* k block */
};

void gen_set_target(gen *g, te_target *target) {
  int bits = te_target_vector_bits(target);
  g->target = target;
  g->lanes = bits / 32;
  g->nr = (bits >= 512 ? 4 : 2) * g->lanes; /* 512-bit vectors come with 32 registers */
}

static te_expr *f32(te_ctx *ctx, double v) { return te_float(ctx, TE_F32, v); }

/* erf(u) by Abramowitz and Stegun's 7.1.26 (absolute error below 1.5e-7, under f32's rounding
   of the GELU that uses it): 1 - t (a1 + t (a2 + ... a5 t)) exp(-u^2), t = 1 / (1 + p |u|),
   odd in u. Written with te's exp, which vectorizes (llvm_vmath.c), where te_call("erf") is a
   scalar libm call per element: a fifth of the encoder's time with it. */
static te_expr *erf_approx(te_ctx *ctx, te_expr *u) {
  static const double a[5] = {0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429};
  te_expr *z = te_call(ctx, "abs", 1, TE_EXPRS(u));
  te_expr *t = te_div(f32(ctx, 1.0), te_add(f32(ctx, 1.0), te_mul(f32(ctx, 0.3275911), z)));
  te_expr *poly = f32(ctx, a[4]);
  for (int i = 3; i >= 0; i--)
    poly = te_add(f32(ctx, a[i]), te_mul(t, poly));
  te_expr *e = te_call(ctx, "exp", 1, TE_EXPRS(te_neg(te_mul(z, z))));
  te_expr *y = te_sub(f32(ctx, 1.0), te_mul(te_mul(t, poly), e));
  return te_select(te_lt(u, f32(ctx, 0.0)), te_neg(y), y);
}

static te_expr *gelu(te_ctx *ctx, te_expr *x) {
  /* 0.5 x (1 + erf(x / sqrt 2)): BERT's exact GELU, as PyTorch's default computes it */
  te_expr *e = erf_approx(ctx, te_mul(x, f32(ctx, 0.70710678118654752)));
  return te_mul(te_mul(x, f32(ctx, 0.5)), te_add(e, f32(ctx, 1.0)));
}

static te_status schedule_linear(te_schedule *s, te_tensor *mm, te_tensor *y, int nr, int k) {
  te_stage *ys = te_stage_of(s, y), *ms = te_stage_of(s, mm);
  te_iter *io, *jo, *ii, *ji, *tile, *lm, *li, *ljo, *lj, *ko, *ki;
  te_status r = te_tile(ys, te_axis(ys, 0), te_axis(ys, 1), MC, nr, &io, &jo, &ii, &ji);
  if (r == TE_OK)
    r = te_fuse(ys, io, jo, &tile);
  if (r == TE_OK)
    r = te_compute_at(ms, ys, tile);
  /* A short last row block is rounded up to whole register tiles (rows of X clamped), so the
     tile's loops have no guard; only Y's copy-out is guarded. */
  if (r == TE_OK)
    r = te_set_tail(ms, te_axis(ms, 0), TE_TAIL_ROUND_UP);
  if (r == TE_OK)
    r = te_split(ms, te_axis(ms, 0), MR, &lm, &li);
  if (r == TE_OK)
    r = te_split(ms, te_axis(ms, 1), nr, &ljo, &lj);
  if (r == TE_OK)
    r = te_split(ms, te_reduce_iter(ms, 0), k < KC ? k : KC, &ko, &ki);
  if (r == TE_OK)
    r = te_reorder(ms, 6, (te_iter *const[]){ko, ljo, lm, ki, li, lj});
  if (r == TE_OK)
    r = te_vectorize(ms, lj);
  if (r == TE_OK)
    r = te_unroll(ms, li);
  if (r == TE_OK)
    r = te_vectorize(ys, ji);
  if (r == TE_OK)
    r = te_parallel(ys, tile);
  return r;
}

te_status gen_linear(gen *g, const char *name, int n, int k, int act_gelu, te_module **out) {
  te_ctx *ctx = g->ctx;
  te_expr *m = gen_size(g, "m", g->batch * g->seq), *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *N = te_int(ctx, n), *K = te_int(ctx, k), *NR = te_int(ctx, g->nr);
  te_expr *kk = te_reduce_axis(ctx, "k", te_int(ctx, 0), K);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(m, K));
  te_tensor *w = te_placeholder(ctx, "Wp", TE_F32, 3, TE_EXPRS(te_int(ctx, n / g->nr), K, NR));
  te_tensor *bias = te_placeholder(ctx, "bias", TE_F32, 1, TE_EXPRS(N));
  te_expr *wkj = TE_AT(w, te_floordiv(j, NR), kk, te_floormod(j, NR));
  te_tensor *mm = te_compute(ctx, "Mm", 2, TE_EXPRS(m, N), TE_EXPRS(i, j),
                             TE_SUM(te_mul(TE_AT(x, i, kk), wkj), kk));
  te_expr *i2 = te_var(ctx, "i"), *j2 = te_var(ctx, "j");
  te_expr *v = te_add(TE_AT(mm, i2, j2), TE_AT(bias, j2));
  te_tensor *y =
      te_compute(ctx, "Y", 2, TE_EXPRS(m, N), TE_EXPRS(i2, j2), act_gelu ? gelu(ctx, v) : v);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  if (!s)
    return te_last_status(ctx);
  te_status r = schedule_linear(s, mm, y, g->nr, k);
  if (r != TE_OK)
    return r;
  return gen_finish(g, s, name, 4, (te_tensor *const[]){x, w, bias, y}, out);
}
