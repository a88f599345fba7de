/* gen_q8.c — te-llama's Q8_0 kernels: runq.c's math, where weights and activations are int8
 * in groups of GS values with one f32 scale per group.
 *
 *   tl_quantize_gGS   X[T, ng, GS] f32 -> S[T, ng] = max |X| / 127, Q = (int8) round(X / S)
 *   tl_q8_matmul_gGS  Y[t, i] = sum_g f32(D[t, i, g]) * Ws[i, g] * Xs[t, g],
 *                     D[t, i, g] = sum_r i32(Wq[i, g, r]) * i32(Xq[t, g, r])   (int32, exact)
 * T = 1 is generation (one token), T > 1 the prompt. GS is a constant of each kernel (64, the
 * export default, and the 32, 16 and 8 its back-off gives for narrower models); the rest is
 * symbolic. The int32 dot product of a group is vectorized
 * across 16 lanes (te_rfactor of r split by 16: 16 int32 partial sums, unrolled over the
 * group), summed to D once per group; 4 tokens share each load of W. Rows of W in blocks of 16
 * run in parallel.
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

static te_status q8_matmul(te_ctx *ctx, te_target *tgt, int gs, const char *name,
                           te_module **out) {
  te_expr *T = te_var(ctx, "T"), *n = te_var(ctx, "n"), *ng = te_var(ctx, "ng");
  te_expr *G = te_int(ctx, gs);
  te_expr *t = te_var(ctx, "t"), *i = te_var(ctx, "i"), *g = te_var(ctx, "g");
  te_tensor *wq = te_placeholder(ctx, "Wq", TE_I8, 3, TE_EXPRS(n, ng, G));
  te_tensor *ws = te_placeholder(ctx, "Ws", TE_F32, 2, TE_EXPRS(n, ng));
  te_tensor *xq = te_placeholder(ctx, "Xq", TE_I8, 3, TE_EXPRS(T, ng, G));
  te_tensor *xs = te_placeholder(ctx, "Xs", TE_F32, 2, TE_EXPRS(T, ng));
  te_expr *r = te_reduce_axis(ctx, "r", te_int(ctx, 0), G);
  te_expr *prod = te_mul(te_cast(TE_I32, TE_AT(wq, i, g, r)), te_cast(TE_I32, TE_AT(xq, t, g, r)));
  te_tensor *d =
      te_compute(ctx, "D", 3, TE_EXPRS(T, n, ng), TE_EXPRS(t, i, g), TE_SUM(prod, r));
  te_expr *gg = te_reduce_axis(ctx, "gg", te_int(ctx, 0), ng);
  te_expr *term = te_mul(te_mul(te_cast(TE_F32, TE_AT(d, t, i, gg)), TE_AT(ws, i, gg)),
                         TE_AT(xs, t, gg));
  te_tensor *y = te_compute(ctx, "Y", 2, TE_EXPRS(T, n), TE_EXPRS(t, i), TE_SUM(term, gg));
  if (!y)
    return te_last_status(ctx);

  te_schedule *s = te_schedule_new(ctx, 1, &y);
  te_stage *ds = te_stage_of(s, d);
  te_iter *ro, *ri;
  TRY(te_split(ds, te_reduce_iter(ds, 0), lanes_of(gs), &ro, &ri));
  te_tensor *rf;
  TRY(te_rfactor(s, d, ri, 3, &rf)); /* rf[t, i, g, lane] */
  te_stage *ys = te_stage_of(s, y), *rs = te_stage_of(s, rf);
  ds = te_stage_of(s, d);
  te_iter *io, *ii, *to, *ti;
  TRY(te_split(ys, te_axis(ys, 1), ROW_BLOCK, &io, &ii));
  TRY(te_split(ys, te_axis(ys, 0), TOKENS, &to, &ti));
  TRY(te_reorder(ys, 5, (te_iter *const[]){io, to, ii, ti, te_reduce_iter(ys, 0)}));
  TRY(te_parallel(ys, io));
  /* per row of W and block of tokens: the partial sums of every group, then D */
  TRY(te_compute_at(ds, ys, ii));
  TRY(te_compute_at(rs, ys, ii));
  te_iter *rto, *rti;
  TRY(te_split(rs, te_axis(rs, 0), TOKENS, &rto, &rti));
  /* rf's loops: t.o, t.i, i, g, lane, ro -> t.o, i, g, ro, t.i, lane */
  TRY(te_reorder(rs, 6, (te_iter *const[]){rto, te_axis(rs, 1), te_axis(rs, 2),
                                           te_reduce_iter(rs, 0), rti, te_axis(rs, 3)}));
  TRY(te_unroll(rs, te_reduce_iter(rs, 0)));
  TRY(te_unroll(rs, rti));
  TRY(te_vectorize(rs, te_axis(rs, 3)));
  return te_build(s, name, 5, (te_tensor *const[]){wq, ws, xq, xs, y}, 0, NULL, tgt, out);
}

#define GROUP_SIZE(GS)                                                                             \
  te_status tl_gen_quantize_g##GS(te_ctx *c, te_target *t, te_module **o) {                        \
    return quantize(c, t, GS, "tl_quantize_g" #GS, o);                                             \
  }                                                                                                \
  te_status tl_gen_q8_matmul_g##GS(te_ctx *c, te_target *t, te_module **o) {                       \
    return q8_matmul(c, t, GS, "tl_q8_matmul_g" #GS, o);                                           \
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

te_status tl_gen_add(te_ctx *c, te_target *t, te_module **o) { return binary(c, t, 0, "tl_add", o); }
te_status tl_gen_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return binary(c, t, 1, "tl_swiglu", o);
}
