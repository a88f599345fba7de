/* gen_layer.c — te-llama's kernels for the rest of a decoder layer: RMSNorm, RoPE and causal
 * grouped-query attention over the KV cache. All sizes are symbolic. */
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
   as llama2.c does (1 / powf, then cosf and sinf of the product). */
te_status tl_gen_rope(te_ctx *ctx, te_target *tgt, te_module **out) {
  te_expr *T = te_var(ctx, "T"), *H = te_var(ctx, "H"), *hp = te_var(ctx, "hp");
  te_expr *t = te_var(ctx, "t"), *h = te_var(ctx, "h"), *p = te_var(ctx, "p"),
          *e = te_var(ctx, "e");
  te_expr *pos = te_param(ctx, "pos", TE_I64);
  te_expr *two = te_int(ctx, 2);
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 4, TE_EXPRS(T, H, hp, two));
  te_expr *hs = to_f32(te_mul(hp, two));
  te_expr *freq = te_div(
      f32(ctx, 1.0),
      te_call(ctx, "pow", 2, TE_EXPRS(f32(ctx, 10000.0), te_div(to_f32(te_mul(p, two)), hs))));
  te_expr *ang = te_mul(to_f32(te_add(pos, t)), freq);
  te_expr *c = te_call(ctx, "cos", 1, TE_EXPRS(ang)), *sn = te_call(ctx, "sin", 1, TE_EXPRS(ang));
  te_expr *x0 = TE_AT(x, t, h, p, te_int(ctx, 0)), *x1 = TE_AT(x, t, h, p, te_int(ctx, 1));
  te_expr *body = te_select(te_eq(e, te_int(ctx, 0)), te_sub(te_mul(x0, c), te_mul(x1, sn)),
                            te_add(te_mul(x0, sn), te_mul(x1, c)));
  te_tensor *y = te_compute(ctx, "Y", 4, TE_EXPRS(T, H, hp, two), TE_EXPRS(t, h, p, e), body);
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *ys = te_stage_of(s, y);
  TRY(te_unroll(ys, te_axis(ys, 3)));
  TRY(te_parallel(ys, te_axis(ys, 0)));
  return te_build(s, "tl_rope", 2, (te_tensor *const[]){x, y}, 1, &pos, tgt, out);
}

/* Causal grouped-query attention. Q is [T, G, M, hs]: T tokens, G key/value heads, M query
   heads per key/value head (query head g * M + m reads key/value head g, llama2.c's h / kv_mul);
   K and V are the cache's first P positions, [P, G, hs]; the T tokens are positions P - T ..
   P - 1, and token t sees positions p <= P - T + t.
     S[t, g, m, p] = sum_c Q[t, g, m, c] K[p, g, c]
     A = masked softmax_p (S / sqrt(hs)),   O[t, g, m, c] = sum_p A V[p, g, c]
   computed as max, exp, sum and one division by the sum at the end. Each (t, g) is one
   parallel iteration that computes its scores, softmax and output in small buffers. */
te_status tl_gen_attention(te_ctx *ctx, te_target *tgt, te_module **out) {
  te_expr *T = te_var(ctx, "T"), *G = te_var(ctx, "G"), *M = te_var(ctx, "M");
  te_expr *hs = te_var(ctx, "hs"), *P = te_var(ctx, "P");
  te_expr *t = te_var(ctx, "t"), *g = te_var(ctx, "g"), *m = te_var(ctx, "m");
  te_expr *p = te_var(ctx, "p"), *c = te_var(ctx, "c");
  te_tensor *q = te_placeholder(ctx, "Q", TE_F32, 4, TE_EXPRS(T, G, M, hs));
  te_tensor *k = te_placeholder(ctx, "K", TE_F32, 3, TE_EXPRS(P, G, hs));
  te_tensor *v = te_placeholder(ctx, "V", TE_F32, 3, TE_EXPRS(P, G, hs));

  te_expr *cc = te_reduce_axis(ctx, "cc", te_int(ctx, 0), hs);
  te_tensor *sc = te_compute(ctx, "S", 4, TE_EXPRS(T, G, M, P), TE_EXPRS(t, g, m, p),
                             TE_SUM(te_mul(TE_AT(q, t, g, m, cc), TE_AT(k, p, g, cc)), cc));
  te_expr *scale = te_call(ctx, "sqrt", 1, TE_EXPRS(to_f32(hs)));
  te_expr *pp = te_reduce_axis(ctx, "pp", te_int(ctx, 0), P);
  te_expr *seen = te_le(pp, te_add(te_sub(P, T), t));
  te_tensor *mx =
      te_compute(ctx, "Mx", 3, TE_EXPRS(T, G, M), TE_EXPRS(t, g, m),
                 te_max_r(te_select(seen, te_div(TE_AT(sc, t, g, m, pp), scale), f32(ctx, -3.0e38)),
                          1, TE_EXPRS(pp)));
  te_expr *seen_p = te_le(p, te_add(te_sub(P, T), t));
  te_expr *ex = te_call(ctx, "exp", 1,
                        TE_EXPRS(te_sub(te_div(TE_AT(sc, t, g, m, p), scale), TE_AT(mx, t, g, m))));
  te_tensor *e = te_compute(ctx, "E", 4, TE_EXPRS(T, G, M, P), TE_EXPRS(t, g, m, p),
                            te_select(seen_p, ex, f32(ctx, 0.0)));
  te_expr *pz = te_reduce_axis(ctx, "pz", te_int(ctx, 0), P);
  te_tensor *z = te_compute(ctx, "Z", 3, TE_EXPRS(T, G, M), TE_EXPRS(t, g, m),
                            TE_SUM(TE_AT(e, t, g, m, pz), pz));
  te_expr *pv = te_reduce_axis(ctx, "pv", te_int(ctx, 0), P);
  te_tensor *ov = te_compute(ctx, "OV", 4, TE_EXPRS(T, G, M, hs), TE_EXPRS(t, g, m, c),
                             TE_SUM(te_mul(TE_AT(e, t, g, m, pv), TE_AT(v, pv, g, c)), pv));
  te_tensor *o = te_compute(ctx, "O", 4, TE_EXPRS(T, G, M, hs), TE_EXPRS(t, g, m, c),
                            te_div(TE_AT(ov, t, g, m, c), TE_AT(z, t, g, m)));
  if (!o)
    return te_last_status(ctx);

  te_schedule *s = te_schedule_new(ctx, 1, &o);
  te_stage *os = te_stage_of(s, o);
  te_iter *tg;
  TRY(te_fuse(os, te_axis(os, 0), te_axis(os, 1), &tg));
  TRY(te_parallel(os, tg));
  /* scores: each a dot product along the head's dimension, split by 16 and factored
     (te_rfactor), so K is read a row at a time in vectors and 16 partial sums accumulate with
     vector FMAs, added up once per position */
  te_stage *ss = te_stage_of(s, sc);
  te_iter *cco, *cci;
  te_tensor *srf;
  TRY(te_split(ss, te_reduce_iter(ss, 0), 16, &cco, &cci));
  TRY(te_rfactor(s, sc, cci, 4, &srf));
  te_tensor *inner[] = {ov, z, e, mx, sc, srf}; /* readers before what they read */
  for (int i = 0; i < 6; i++)
    TRY(te_compute_at(te_stage_of(s, inner[i]), os, tg));
  te_stage *rs = te_stage_of(s, srf);
  TRY(te_reorder(rs, 2, (te_iter *const[]){te_reduce_iter(rs, 0), te_axis(rs, 4)}));
  TRY(te_vectorize(rs, te_axis(rs, 4)));
  /* the exponentials, 16 positions at a time */
  te_stage *es = te_stage_of(s, e);
  te_iter *po, *pi;
  TRY(te_split(es, te_axis(es, 3), 16, &po, &pi));
  TRY(te_vectorize(es, pi));
  /* the weighted sum of values: positions outside, the head's values inside, vectorized, so V
     is read a row at a time (c inside p would walk V's columns) */
  te_stage *ovs = te_stage_of(s, ov);
  te_iter *co, *ci;
  TRY(te_split(ovs, te_axis(ovs, 3), 16, &co, &ci));
  TRY(te_reorder(ovs, 3, (te_iter *const[]){te_reduce_iter(ovs, 0), co, ci}));
  TRY(te_vectorize(ovs, ci));
  return te_build(s, "tl_attention", 4, (te_tensor *const[]){q, k, v, o}, 0, NULL, tgt, out);
}
