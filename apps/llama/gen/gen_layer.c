/* gen_layer.c — te-llama's kernels for the rest of a decoder layer: RMSNorm and RoPE (attention
 * is gen_attention.c). All sizes are symbolic. */
#include "gen.h"

#include <stddef.h>

static te_expr *f32(te_ctx *ctx, double v) { return te_float(ctx, TE_F32, v); }
static te_expr *to_f32(te_expr *e) { return te_cast(TE_F32, e); }

/* Y[t, j] = W[j] * (X[t, j] / sqrt(mean_j X[t, j]^2 + 1e-5)), as llama2.c's rmsnorm: the sum of
   squares divided by d, plus eps, one reciprocal square root, then weight * (scale * x). One row
   per parallel iteration; the row's sum of squares is computed at it, the row vectorized. */
te_status tl_gen_rmsnorm(te_ctx *ctx, te_target *tgt, te_module **out) {
  te_expr *T = te_var(ctx, "T"), *d = te_var(ctx, "d");
  te_expr *t = te_var(ctx, "t"), *j = te_var(ctx, "j");
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(T, d));
  te_tensor *w = te_placeholder(ctx, "W", TE_F32, 1, TE_EXPRS(d));
  te_expr *jj = te_reduce_axis(ctx, "jj", te_int(ctx, 0), d);
  te_tensor *ss = te_compute(ctx, "SS", 1, TE_EXPRS(T), TE_EXPRS(t),
                             TE_SUM(te_mul(TE_AT(x, t, jj), TE_AT(x, t, jj)), jj));
  te_expr *inv = te_div(
      f32(ctx, 1.0),
      te_call(ctx, "sqrt", 1, TE_EXPRS(te_add(te_div(TE_AT(ss, t), to_f32(d)), f32(ctx, 1e-5)))));
  te_tensor *y = te_compute(ctx, "Y", 2, TE_EXPRS(T, d), TE_EXPRS(t, j),
                            te_mul(TE_AT(w, j), te_mul(inv, TE_AT(x, t, j))));
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *ys = te_stage_of(s, y), *sss = te_stage_of(s, ss);
  te_iter *jo, *ji;
  TRY(te_split(ys, te_axis(ys, 1), 16, &jo, &ji));
  TRY(te_vectorize(ys, ji));
  TRY(te_parallel(ys, te_axis(ys, 0)));
  TRY(te_compute_at(sss, ys, te_axis(ys, 0)));
  return te_build(s, "tl_rmsnorm", 3, (te_tensor *const[]){x, w, y}, 0, NULL, tgt, out);
}

/* RoPE on X viewed as [T, H, hp, 2] (H heads of hp pairs): the pair (x0, x1) of head pair p at
   position pos + t turns by the angle (pos + t) / 10000^(2p / hs), hs = 2 hp, computed in f32
   as llama2.c does (1 / powf, then cosf and sinf of the product). The angle depends on the
   token and the pair, not on the head: the frequencies F[p] are computed once (at root), the
   cosines and sines C[t, p], Sn[t, p] once per token (at the token's parallel iteration) for
   all heads, so a generated token's RoPE of 24 heads takes 32 powf and 64 cosf and sinf calls
   instead of 2304. */
te_status tl_gen_rope(te_ctx *ctx, te_target *tgt, te_module **out) {
  te_expr *T = te_var(ctx, "T"), *H = te_var(ctx, "H"), *hp = te_var(ctx, "hp");
  te_expr *t = te_var(ctx, "t"), *h = te_var(ctx, "h"), *p = te_var(ctx, "p"),
          *e = te_var(ctx, "e");
  te_expr *pos = te_param(ctx, "pos", TE_I64);
  te_expr *two = te_int(ctx, 2);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 4, TE_EXPRS(T, H, hp, two));
  te_expr *hs = to_f32(te_mul(hp, two));
  te_tensor *freq =
      te_compute(ctx, "F", 1, TE_EXPRS(hp), TE_EXPRS(p),
                 te_div(f32(ctx, 1.0),
                        te_call(ctx, "pow", 2,
                                TE_EXPRS(f32(ctx, 10000.0), te_div(to_f32(te_mul(p, two)), hs)))));
  te_expr *ang = te_mul(to_f32(te_add(pos, t)), TE_AT(freq, p));
  te_tensor *cs = te_compute(ctx, "C", 2, TE_EXPRS(T, hp), TE_EXPRS(t, p),
                             te_call(ctx, "cos", 1, TE_EXPRS(ang)));
  te_tensor *sn = te_compute(ctx, "Sn", 2, TE_EXPRS(T, hp), TE_EXPRS(t, p),
                             te_call(ctx, "sin", 1, TE_EXPRS(ang)));
  te_expr *c = TE_AT(cs, t, p), *si = TE_AT(sn, t, p);
  te_expr *x0 = TE_AT(x, t, h, p, te_int(ctx, 0)), *x1 = TE_AT(x, t, h, p, te_int(ctx, 1));
  te_expr *body = te_select(te_eq(e, te_int(ctx, 0)), te_sub(te_mul(x0, c), te_mul(x1, si)),
                            te_add(te_mul(x0, si), te_mul(x1, c)));
  te_tensor *y = te_compute(ctx, "Y", 4, TE_EXPRS(T, H, hp, two), TE_EXPRS(t, h, p, e), body);
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *ys = te_stage_of(s, y);
  TRY(te_unroll(ys, te_axis(ys, 3)));
  TRY(te_parallel(ys, te_axis(ys, 0)));
  TRY(te_compute_at(te_stage_of(s, cs), ys, te_axis(ys, 0)));
  TRY(te_compute_at(te_stage_of(s, sn), ys, te_axis(ys, 0)));
  return te_build(s, "tl_rope", 2, (te_tensor *const[]){x, y}, 1, &pos, tgt, out);
}
