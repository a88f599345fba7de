/* gen_q8.c — te-llama's Q8_0 kernels: runq.c's math, where weights and activations are int8
 * in groups of GS values with one f32 scale per group.
 *
 *   tl_quantize_gGS   X[T, ng, GS] f32 -> S[T, ng] = max |X| / 127, Q = (int8) round(X / S)
 *   tl_q8_matmul_gGS  Y[t, i] = sum_g sum_l f32(P[t, i, g, l]) * Ws[i, g] * Xs[t, g],
 *                     P[t, i, g, l] = sum_o i32(Wq[i, g, 16 o + l]) * i32(Xq[t, g, 16 o + l])
 *                     (the group's int32 dot product, exact, kept in 16 lanes)
 *   tl_q8_matvec_gGS  the same for one token (no token loop: generation)
 * T > 1 is the prompt, one token generation. GS is a constant of each kernel (64, the
 * export default, and the 32, 16 and 8 its back-off gives for narrower models); the rest is
 * symbolic. The int32 dot product of a group is vectorized across 16 lanes, unrolled over the
 * group; each lane's exact partial sum is converted, scaled and accumulated in f32, so no
 * group needs a horizontal sum (runq.c adds the 16 lanes in int32 before scaling: the results
 * differ in the last bits of f32). Rows of W in blocks of 16 run in parallel.
 *   tl_add     Y = A + B            (the residuals, which runq.c adds in C loops)
 *   tl_swiglu  Y = silu(A) * B
 */
#include "gen.h"

#include <stddef.h>

#define TRY(x)                                                                                     \
  do {                                                                                             \
    te_status try_r_ = (x);                                                                        \
    if (try_r_ != TE_OK)                                                                           \
      return try_r_;                                                                               \
  } while (0)

enum { LANES = 16, TOKENS = 4, ROW_BLOCK = 16 };

/* the int32 lanes of a group's dot product: 16, or the whole group when it is smaller */
static int lanes_of(int gs) { return gs < LANES ? gs : LANES; }

static te_status quantize(te_ctx *ctx, te_target *tgt, int gs, const char *name, te_module **out) {
  te_expr *T = te_var(ctx, "T"), *ng = te_var(ctx, "ng"), *G = te_int(ctx, gs);
  te_expr *t = te_var(ctx, "t"), *g = te_var(ctx, "g"), *r = te_var(ctx, "r");
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 3, TE_EXPRS(T, ng, G));
  te_expr *rr = te_reduce_axis(ctx, "rr", te_int(ctx, 0), G);
  te_tensor *mx =
      te_compute(ctx, "Mx", 2, TE_EXPRS(T, ng), TE_EXPRS(t, g),
                 te_max_r(te_call(ctx, "abs", 1, TE_EXPRS(TE_AT(x, t, g, rr))), 1, TE_EXPRS(rr)));
  te_tensor *s = te_compute(ctx, "S", 2, TE_EXPRS(T, ng), TE_EXPRS(t, g),
                            te_div(TE_AT(mx, t, g), te_float(ctx, TE_F32, 127.0)));
  te_expr *scaled = te_div(TE_AT(x, t, g, r), TE_AT(s, t, g));
  te_tensor *q = te_compute(ctx, "Q", 3, TE_EXPRS(T, ng, G), TE_EXPRS(t, g, r),
                            te_cast(TE_I8, te_call(ctx, "round", 1, TE_EXPRS(scaled))));
  if (!q)
    return te_last_status(ctx);
  te_schedule *sch = te_schedule_new(ctx, 2, (te_tensor *const[]){s, q});
  te_stage *qs = te_stage_of(sch, q), *ss = te_stage_of(sch, s), *ms = te_stage_of(sch, mx);
  TRY(te_compute_at(ms, ss, te_axis(ss, 1)));
  TRY(te_parallel(ss, te_axis(ss, 0)));
  TRY(te_parallel(qs, te_axis(qs, 0)));
  TRY(te_vectorize(qs, te_axis(qs, 2))); /* the group: GS lanes */
  return te_build(sch, name, 3, (te_tensor *const[]){x, s, q}, 0, NULL, tgt, out);
}

/* T tokens (the prompt): q8_matvec's formulation with a token axis; 4 tokens share each
   load of W, each with its own 16 f32 lanes per row. */
static te_status q8_matmul(te_ctx *ctx, te_target *tgt, int gs, const char *name, te_module **out) {
  int lanes = lanes_of(gs);
  te_expr *T = te_var(ctx, "T"), *n = te_var(ctx, "n"), *ng = te_var(ctx, "ng");
  te_expr *G = te_int(ctx, gs), *L = te_int(ctx, lanes), *O = te_int(ctx, gs / lanes);
  te_expr *t = te_var(ctx, "t"), *i = te_var(ctx, "i"), *g = te_var(ctx, "g"),
          *l = te_var(ctx, "l");
  te_tensor *wq = te_placeholder(ctx, "Wq", TE_I8, 3, TE_EXPRS(n, ng, G));
  te_tensor *ws = te_placeholder(ctx, "Ws", TE_F32, 2, TE_EXPRS(n, ng));
  te_tensor *xq = te_placeholder(ctx, "Xq", TE_I8, 3, TE_EXPRS(T, ng, G));
  te_tensor *xs = te_placeholder(ctx, "Xs", TE_F32, 2, TE_EXPRS(T, ng));
  te_expr *o = te_reduce_axis(ctx, "o", te_int(ctx, 0), O);
  te_expr *r = te_add(te_mul(o, L), l);
  te_expr *prod = te_mul(te_cast(TE_I32, TE_AT(wq, i, g, r)), te_cast(TE_I32, TE_AT(xq, t, g, r)));
  te_tensor *p =
      te_compute(ctx, "P", 4, TE_EXPRS(T, n, ng, L), TE_EXPRS(t, i, g, l), TE_SUM(prod, o));
  te_expr *gg = te_reduce_axis(ctx, "gg", te_int(ctx, 0), ng);
  te_expr *ll = te_reduce_axis(ctx, "ll", te_int(ctx, 0), L);
  te_expr *term =
      te_mul(te_mul(te_cast(TE_F32, TE_AT(p, t, i, gg, ll)), TE_AT(ws, i, gg)), TE_AT(xs, t, gg));
  te_tensor *y =
      te_compute(ctx, "Y", 2, TE_EXPRS(T, n), TE_EXPRS(t, i), te_sum(term, 2, TE_EXPRS(gg, ll)));
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_tensor *rf;
  te_stage *ys = te_stage_of(s, y);
  TRY(te_rfactor(s, y, te_reduce_iter(ys, 1), 2, &rf)); /* rf[t, i, l] */
  ys = te_stage_of(s, y);
  te_stage *rs = te_stage_of(s, rf), *ps = te_stage_of(s, p);
  te_iter *io, *ii, *to, *ti;
  TRY(te_split(ys, te_axis(ys, 1), ROW_BLOCK, &io, &ii));
  TRY(te_split(ys, te_axis(ys, 0), TOKENS, &to, &ti));
  TRY(te_reorder(ys, 4, (te_iter *const[]){io, to, ii, ti}));
  TRY(te_parallel(ys, io));
  TRY(te_compute_at(rs, ys, ii));
  /* rf's loops: t, i, l, g -> i, g, t, l; t (4 at most here) split to unroll it */
  te_iter *rto, *rti;
  TRY(te_split(rs, te_axis(rs, 0), TOKENS, &rto, &rti));
  TRY(te_reorder(
      rs, 5, (te_iter *const[]){rto, te_axis(rs, 1), te_reduce_iter(rs, 0), rti, te_axis(rs, 2)}));
  TRY(te_unroll(rs, rti));
  TRY(te_vectorize(rs, te_axis(rs, 2)));
  TRY(te_compute_at(ps, rs, te_reduce_iter(rs, 0)));
  /* P's loops: t, i, g, l, o -> i, g, o, t, l */
  te_iter *pto, *pti;
  TRY(te_split(ps, te_axis(ps, 0), TOKENS, &pto, &pti));
  TRY(te_reorder(ps, 6,
                 (te_iter *const[]){pto, te_axis(ps, 1), te_axis(ps, 2), te_reduce_iter(ps, 0), pti,
                                    te_axis(ps, 3)}));
  TRY(te_unroll(ps, te_reduce_iter(ps, 0)));
  TRY(te_unroll(ps, pti));
  TRY(te_vectorize(ps, te_axis(ps, 3)));
  return te_build(s, name, 5, (te_tensor *const[]){wq, ws, xq, xs, y}, 0, NULL, tgt, out);
}

/* One token (generation). The group's int32 dot product is kept per lane, and each lane's
   exact partial sum is scaled and added in f32:
     P[i, g, l] = sum_o i32(Wq[i, g, 16 o + l]) * i32(Xq[g, 16 o + l])      (int32, exact)
     Y[i] = sum_g sum_l f32(P[i, g, l]) * Ws[i, g] * Xs[g]
   so no group needs a horizontal sum (runq.c adds the lanes in int32 first: the results differ
   in the last bits of f32 only). Y's lanes are a data axis (te_rfactor), P is computed for
   each group inside that loop, in one vector register. */
static te_status q8_matvec(te_ctx *ctx, te_target *tgt, int gs, const char *name, te_module **out) {
  int lanes = lanes_of(gs);
  te_expr *n = te_var(ctx, "n"), *ng = te_var(ctx, "ng"), *G = te_int(ctx, gs);
  te_expr *L = te_int(ctx, lanes), *O = te_int(ctx, gs / lanes);
  te_expr *i = te_var(ctx, "i"), *g = te_var(ctx, "g"), *l = te_var(ctx, "l");
  te_tensor *wq = te_placeholder(ctx, "Wq", TE_I8, 3, TE_EXPRS(n, ng, G));
  te_tensor *ws = te_placeholder(ctx, "Ws", TE_F32, 2, TE_EXPRS(n, ng));
  te_tensor *xq = te_placeholder(ctx, "Xq", TE_I8, 2, TE_EXPRS(ng, G));
  te_tensor *xs = te_placeholder(ctx, "Xs", TE_F32, 1, TE_EXPRS(ng));
  te_expr *o = te_reduce_axis(ctx, "o", te_int(ctx, 0), O);
  te_expr *r = te_add(te_mul(o, L), l);
  te_expr *prod = te_mul(te_cast(TE_I32, TE_AT(wq, i, g, r)), te_cast(TE_I32, TE_AT(xq, g, r)));
  te_tensor *p = te_compute(ctx, "P", 3, TE_EXPRS(n, ng, L), TE_EXPRS(i, g, l), TE_SUM(prod, o));
  te_expr *gg = te_reduce_axis(ctx, "gg", te_int(ctx, 0), ng);
  te_expr *ll = te_reduce_axis(ctx, "ll", te_int(ctx, 0), L);
  te_expr *term =
      te_mul(te_mul(te_cast(TE_F32, TE_AT(p, i, gg, ll)), TE_AT(ws, i, gg)), TE_AT(xs, gg));
  te_tensor *y =
      te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i), te_sum(term, 2, TE_EXPRS(gg, ll)));
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_tensor *rf;
  te_stage *ys = te_stage_of(s, y);
  TRY(te_rfactor(s, y, te_reduce_iter(ys, 1), 1, &rf)); /* rf[i, l] = sum_g ... */
  ys = te_stage_of(s, y);
  te_stage *rs = te_stage_of(s, rf), *ps = te_stage_of(s, p);
  te_iter *io, *ii;
  TRY(te_split(ys, te_axis(ys, 0), ROW_BLOCK, &io, &ii));
  TRY(te_parallel(ys, io));
  TRY(te_compute_at(rs, ys, ii));
  /* rf's loops: i, l, g -> i, g, l (the lanes vectorized) */
  TRY(te_reorder(rs, 2, (te_iter *const[]){te_reduce_iter(rs, 0), te_axis(rs, 1)}));
  TRY(te_vectorize(rs, te_axis(rs, 1)));
  TRY(te_compute_at(ps, rs, te_reduce_iter(rs, 0)));
  /* P's loops: i, g, l, o -> i, g, o, l */
  TRY(te_reorder(ps, 2, (te_iter *const[]){te_reduce_iter(ps, 0), te_axis(ps, 2)}));
  TRY(te_unroll(ps, te_reduce_iter(ps, 0)));
  TRY(te_vectorize(ps, te_axis(ps, 2)));
  return te_build(s, name, 5, (te_tensor *const[]){wq, ws, xq, xs, y}, 0, NULL, tgt, out);
}

#define GROUP_SIZE(GS)                                                                             \
  te_status tl_gen_quantize_g##GS(te_ctx *c, te_target *t, te_module **o) {                        \
    return quantize(c, t, GS, "tl_quantize_g" #GS, o);                                             \
  }                                                                                                \
  te_status tl_gen_q8_matmul_g##GS(te_ctx *c, te_target *t, te_module **o) {                       \
    return q8_matmul(c, t, GS, "tl_q8_matmul_g" #GS, o);                                           \
  }                                                                                                \
  te_status tl_gen_q8_matvec_g##GS(te_ctx *c, te_target *t, te_module **o) {                       \
    return q8_matvec(c, t, GS, "tl_q8_matvec_g" #GS, o);                                           \
  }
GROUP_SIZE(64)
GROUP_SIZE(32)
GROUP_SIZE(16)
GROUP_SIZE(8)

static te_status binary(te_ctx *ctx, te_target *tgt, int swiglu, const char *name,
                        te_module **out) {
  te_expr *n = te_var(ctx, "n"), *i = te_var(ctx, "i");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, TE_EXPRS(n));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 1, TE_EXPRS(n));
  te_expr *av = TE_AT(a, i), *bv = TE_AT(b, i);
  te_expr *body =
      swiglu ? te_mul(te_mul(av, te_call(ctx, "sigmoid", 1, TE_EXPRS(av))), bv) : te_add(av, bv);
  te_tensor *y = te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i), body);
  if (!y)
    return te_last_status(ctx);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *st = te_stage_of(s, y);
  te_iter *o, *in, *oo, *oi;
  TRY(te_split(st, te_axis(st, 0), LANES, &o, &in));
  TRY(te_split(st, o, 256, &oo, &oi));
  TRY(te_parallel(st, oo));
  TRY(te_vectorize(st, in));
  return te_build(s, name, 3, (te_tensor *const[]){a, b, y}, 0, NULL, tgt, out);
}

te_status tl_gen_add(te_ctx *c, te_target *t, te_module **o) {
  return binary(c, t, 0, "tl_add", o);
}
te_status tl_gen_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return binary(c, t, 1, "tl_swiglu", o);
}
