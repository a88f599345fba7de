/* gen_q8.c — te-llama's Q8_0 kernels: runq.c's math, where weights and activations are int8
 * in groups of GS values with one f32 scale per group, on the CPU's int8 dot-product
 * instruction (AVX512-VNNI vpdpbusd: 16 int32 lanes, each += 4 products of u8 by s8).
 *
 *   tl_quantize_gGS   X[T, ng, GS] f32 -> S[T, ng] = max |X| / 127, Q = (int8) round(X / S),
 *                     C[T, ng] = 128 * sum Q (the correction below)
 *   tl_q8_matmul_gGS  Y[t, i] = sum_g (f32(P[t, i, g] - C[t, g]) * Ws[i, g]) * Xs[t, g]
 *                     P[t, i, g] = sum_r U[i, g, r] * Xq[t, g, r]      (int32, exact)
 *   tl_q8_matvec_gGS  the same for one token (no token axis: generation)
 *   tl_q8_matmul_add_gGS, tl_q8_matvec_add_gGS   Y = R + the product (the residuals)
 * T > 1 is the prompt, one token generation. GS is a constant of each kernel (64, the export
 * default, and the 32, 16 and 8 its back-off gives for narrower models); the rest is symbolic.
 *
 * The weights are the checkpoint's, laid out once at load (model_te.c, tl_q8_pack) as the
 * instruction reads them:
 *   Wp[b, g, r / 4, l, r % 4] = Wq[16 b + l, g GS + r] + 128    (u8; rows past n: 128)
 *   Ws[b, g, l] = the scale of row 16 b + l, group g            (f32; rows past n: 0)
 * so one 64-byte load holds 4 consecutive weights of 16 rows, and the activations' 4 bytes are
 * broadcast to the 16 lanes: each lane is a row, and no group needs a horizontal sum.
 * The signed x signed product: vpdpbusd multiplies u8 by s8, so the weights are offset by 128
 * (U = Wq + 128, in 1 .. 255 as runq's values are in -127 .. 127) and
 *   sum_r U Xq = sum_r Wq Xq + 128 sum_r Xq,
 * whose second term depends on the token's group only: C, made by the quantize kernel with the
 * quantized values, is subtracted once per group and row vector. Every term is an exact int32
 * (|P| <= 64 * 255 * 127), so P - C is runq's int32 dot product, bit for bit, and the f32 part
 * is runq's expression in runq's order (group by group); only LLVM's fused multiply-add of the
 * last step may round differently.
 * On a target without AVX512-VNNI the same schedule is built without te_tensorize: plain
 * vector code of the same exact sums.
 *   tl_quantize_swiglu_gGS   the same of X = silu(A) * B (runq.c quantizes the SwiGLU's
 *                     result for the down product): one kernel for both
 */
#include "gen.h"

#include <stddef.h>

/* LANES rows a vector; a generated token's product runs GEN_BLOCKS row vectors at once (four
   independent chains of vpdpbusd, one broadcast of the activations each), a prompt's
   PROMPT_BLOCKS row vectors for TOKENS tokens (each weight vector loaded once for the four). */
enum { LANES = 16, TOKENS = 4, GEN_BLOCKS = 4, PROMPT_BLOCKS = 2 };

/* silu(a) * b, as the dense SwiGLU kernels compute it */
static te_expr *silu_times(te_ctx *ctx, te_expr *a, te_expr *b) {
  return te_mul(te_mul(a, te_call(ctx, "sigmoid", 1, TE_EXPRS(a))), b);
}

/* The quantization of X (swiglu: of X = silu(A) * B, A and B its arguments instead, X a stage
   of its own computed first: runq.c quantizes the SwiGLU's result for the down product). */
static te_status quantize(te_ctx *ctx, te_target *tgt, int gs, bool swiglu, const char *name,
                          te_module **out) {
  te_expr *T = te_var(ctx, "T"), *ng = te_var(ctx, "ng"), *G = te_int(ctx, gs);
  te_expr *t = te_var(ctx, "t"), *g = te_var(ctx, "g"), *r = te_var(ctx, "r");
  te_tensor *a = NULL, *b = NULL, *x;
  if (swiglu) {
    a = te_placeholder(ctx, "A", TE_F32, 3, TE_EXPRS(T, ng, G));
    b = te_placeholder(ctx, "B", TE_F32, 3, TE_EXPRS(T, ng, G));
    x = te_compute(ctx, "X", 3, TE_EXPRS(T, ng, G), TE_EXPRS(t, g, r),
                   silu_times(ctx, TE_AT(a, t, g, r), TE_AT(b, t, g, r)));
  } else {
    x = te_placeholder(ctx, "X", TE_F32, 3, TE_EXPRS(T, ng, G));
  }
  te_expr *rr = te_reduce_axis(ctx, "rr", te_int(ctx, 0), G);
  te_tensor *mx =
      te_compute(ctx, "Mx", 2, TE_EXPRS(T, ng), TE_EXPRS(t, g),
                 te_max_r(te_call(ctx, "abs", 1, TE_EXPRS(TE_AT(x, t, g, rr))), 1, TE_EXPRS(rr)));
  te_tensor *s = te_compute(ctx, "S", 2, TE_EXPRS(T, ng), TE_EXPRS(t, g),
                            te_div(TE_AT(mx, t, g), te_float(ctx, TE_F32, 127.0)));
  te_expr *scaled = te_div(TE_AT(x, t, g, r), TE_AT(s, t, g));
  te_tensor *q = te_compute(ctx, "Q", 3, TE_EXPRS(T, ng, G), TE_EXPRS(t, g, r),
                            te_cast(TE_I8, te_call(ctx, "round", 1, TE_EXPRS(scaled))));
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), G);
  te_tensor *c =
      te_compute(ctx, "C", 2, TE_EXPRS(T, ng), TE_EXPRS(t, g),
                 te_mul(te_int(ctx, 128), TE_SUM(te_cast(TE_I32, TE_AT(q, t, g, rc)), rc)));
  if (!c)
    return te_last_status(ctx);
  te_schedule *sch = te_schedule_new(ctx, 3, (te_tensor *const[]){s, q, c});
  te_stage *qs = te_stage_of(sch, q), *ss = te_stage_of(sch, s), *ms = te_stage_of(sch, mx);
  te_stage *cs = te_stage_of(sch, c);
  TRY(te_compute_at(ms, ss, te_axis(ss, 1)));
  TRY(te_parallel(ss, te_axis(ss, 0)));
  TRY(te_parallel(qs, te_axis(qs, 0)));
  TRY(te_vectorize(qs, te_axis(qs, 2))); /* the group: GS lanes */
  TRY(te_parallel(cs, te_axis(cs, 0)));
  if (swiglu) { /* X: the tokens in parallel, the group vectorized */
    te_stage *xs = te_stage_of(sch, x);
    TRY(te_parallel(xs, te_axis(xs, 0)));
    TRY(te_vectorize(xs, te_axis(xs, 2)));
    return te_build(sch, name, 5, (te_tensor *const[]){a, b, s, q, c}, 0, NULL, tgt, out);
  }
  return te_build(sch, name, 4, (te_tensor *const[]){x, s, q, c}, 0, NULL, tgt, out);
}

/* te_at(x, [t,] rest...): the token index first when the kernel has one. */
static te_expr *at_tok(te_tensor *x, te_expr *t, int n, te_expr *const rest[]) {
  te_expr *idx[6];
  int k = 0;
  if (t)
    idx[k++] = t;
  for (int i = 0; i < n; i++)
    idx[k++] = rest[i];
  return te_at(x, k, idx);
}
static int with_tok(te_expr *t, int n, te_expr *const rest[], te_expr *out[6]) {
  int k = 0;
  if (t)
    out[k++] = t;
  for (int i = 0; i < n; i++)
    out[k++] = rest[i];
  return k;
}
#define AT(x, t, ...) at_tok((x), (t), TE_NARGS_(__VA_ARGS__), TE_EXPRS(__VA_ARGS__))

/* A product's computation: its arguments (R when it has a residual) and its stages. */
typedef struct {
  te_tensor *args[7];
  int nargs;
  te_tensor *p, *yp, *y;
} q8_def;

/* The product for T tokens (batched) or one (the matrix-vector kernel: no token axis);
   residual: Y = R + the product (runq.c's x += ..., one f32 addition as there). */
static te_status q8_define(te_ctx *ctx, int gs, int batched, int residual, q8_def *out) {
  int blocks = batched ? PROMPT_BLOCKS : GEN_BLOCKS;
  te_expr *T = batched ? te_var(ctx, "T") : NULL, *t = batched ? te_var(ctx, "t") : NULL;
  /* the quantized activations' rows: T rounded up to TOKENS or more (see Yp's shape) */
  te_expr *Tq = batched ? te_var(ctx, "Tq") : NULL;
  te_expr *n = te_var(ctx, "n"), *nb = te_var(ctx, "nb"), *ng = te_var(ctx, "ng");
  te_expr *L = te_int(ctx, LANES), *four = te_int(ctx, 4), *G = te_int(ctx, gs);
  te_expr *b = te_var(ctx, "b"), *g = te_var(ctx, "g"), *l = te_var(ctx, "l"),
          *i = te_var(ctx, "i");
  te_expr *sh[6];
  int k;
  te_tensor *wp =
      te_placeholder(ctx, "Wp", TE_U8, 5, TE_EXPRS(nb, ng, te_int(ctx, gs / 4), L, four));
  te_tensor *ws = te_placeholder(ctx, "Ws", TE_F32, 3, TE_EXPRS(nb, ng, L));
  k = with_tok(Tq, 2, TE_EXPRS(ng, G), sh);
  te_tensor *xq = te_placeholder(ctx, "Xq", TE_I8, k, sh);
  k = with_tok(Tq, 1, TE_EXPRS(ng), sh);
  te_tensor *xc = te_placeholder(ctx, "Xc", TE_I32, k, sh);
  te_tensor *xs = te_placeholder(ctx, "Xs", TE_F32, k, sh);
  /* P[t, b, g, l]: the int32 dot products of a group, 16 rows a vector */
  te_expr *r = te_reduce_axis(ctx, "r", te_int(ctx, 0), G);
  te_expr *prod =
      te_mul(te_cast(TE_I32, TE_AT(wp, b, g, te_floordiv(r, four), l, te_floormod(r, four))),
             te_cast(TE_I32, AT(xq, t, g, r)));
  te_expr *pv[6];
  /* P and Yp have the row vectors of whole blocks (the rows rounded up to LANES * blocks) and
     whole groups of TOKENS tokens, so te knows every block a kernel runs is whole (no guard in
     the unrolled code); the packed weights have as many rows or more, the activations as many
     tokens or more (the rows past T are computed and dropped). */
  te_expr *whole =
      te_mul(te_int(ctx, blocks),
             te_floordiv(te_add(n, te_int(ctx, LANES * blocks - 1)), te_int(ctx, LANES * blocks)));
  te_expr *Tw = batched
                    ? te_mul(te_int(ctx, TOKENS),
                             te_floordiv(te_add(T, te_int(ctx, TOKENS - 1)), te_int(ctx, TOKENS)))
                    : NULL;
  k = with_tok(Tw, 3, TE_EXPRS(whole, ng, L), sh);
  with_tok(t, 3, TE_EXPRS(b, g, l), pv);
  te_tensor *p = te_compute(ctx, "P", k, sh, pv, TE_SUM(prod, r));
  /* Yp[t, b, l]: runq's f32 sum over the groups */
  te_expr *gg = te_reduce_axis(ctx, "gg", te_int(ctx, 0), ng);
  te_expr *exact = te_sub(AT(p, t, b, gg, l), AT(xc, t, gg));
  te_expr *term = te_mul(te_mul(te_cast(TE_F32, exact), TE_AT(ws, b, gg, l)), AT(xs, t, gg));
  k = with_tok(Tw, 2, TE_EXPRS(whole, L), sh);
  with_tok(t, 2, TE_EXPRS(b, l), pv);
  te_tensor *yp = te_compute(ctx, "Yp", k, sh, pv, TE_SUM(term, gg));
  /* Y[t, i]: the n rows of Yp [+ R[t, i]] */
  k = with_tok(T, 1, TE_EXPRS(n), sh);
  with_tok(t, 1, TE_EXPRS(i), pv);
  te_tensor *res = residual ? te_placeholder(ctx, "R", TE_F32, k, sh) : NULL;
  te_expr *row = AT(yp, t, te_floordiv(i, L), te_floormod(i, L));
  te_tensor *y = te_compute(ctx, "Y", k, sh, pv, residual ? te_add(AT(res, t, i), row) : row);
  if (!y)
    return te_last_status(ctx);
  *out = (q8_def){{wp, ws, xq, xc, xs, residual ? res : y, y}, residual ? 7 : 6, p, yp, y};
  return TE_OK;
}

/* The product's schedule and build (dot: tensorize onto vpdpbusd). */
static te_status q8_product(te_ctx *ctx, te_target *tgt, int gs, int batched, int residual, int dot,
                            const char *name, te_module **out) {
  int blocks = batched ? PROMPT_BLOCKS : GEN_BLOCKS;
  q8_def def;
  TRY(q8_define(ctx, gs, batched, residual, &def));
  te_schedule *s = te_schedule_new(ctx, 1, &def.y);
  te_stage *ys = te_stage_of(s, def.y), *yps = te_stage_of(s, def.yp), *ps = te_stage_of(s, def.p);
  int d = batched; /* the first data axis after the token's */
  te_iter *io, *ii, *at;
  TRY(te_split(ys, te_axis(ys, d), (int64_t)LANES * blocks, &io, &ii));
  if (batched) {
    te_iter *to, *ti;
    TRY(te_split(ys, te_axis(ys, 0), TOKENS, &to, &ti));
    TRY(te_reorder(ys, 4, (te_iter *const[]){io, to, ti, ii}));
    at = to;
  } else {
    at = io;
  }
  TRY(te_parallel(ys, io));
  TRY(te_compute_at(yps, ys, at));
  /* Yp: [t,] b, l, gg -> gg, [t,] b, l: a register of f32 sums per row vector and token */
  te_iter *ypt = batched ? te_axis(yps, 0) : NULL, *ypb = te_axis(yps, d),
          *ypl = te_axis(yps, d + 1), *ypg = te_reduce_iter(yps, 0);
  if (batched)
    TRY(te_reorder(yps, 4, (te_iter *const[]){ypg, ypt, ypb, ypl}));
  else
    TRY(te_reorder(yps, 3, (te_iter *const[]){ypg, ypb, ypl}));
  if (batched)
    TRY(te_unroll(yps, ypt));
  TRY(te_unroll(yps, ypb));
  TRY(te_vectorize(yps, ypl));
  TRY(te_compute_at(ps, yps, ypg));
  /* P: [t,] b, g, l, r -> g, r.o, b, [t,] r.i, l: each weight vector loaded once for the
     tokens, r.i the instruction's 4 products, l its 16 lanes */
  te_iter *ro, *ri;
  TRY(te_split(ps, te_reduce_iter(ps, 0), 4, &ro, &ri));
  te_iter *pt = batched ? te_axis(ps, 0) : NULL, *pb = te_axis(ps, d), *pg = te_axis(ps, d + 1),
          *pl = te_axis(ps, d + 2);
  if (batched)
    TRY(te_reorder(ps, 6, (te_iter *const[]){pg, ro, pb, pt, ri, pl}));
  else
    TRY(te_reorder(ps, 5, (te_iter *const[]){pg, ro, pb, ri, pl}));
  TRY(te_vectorize(ps, pl));
  TRY(te_unroll(ps, ro));
  TRY(te_unroll(ps, pb));
  if (batched)
    TRY(te_unroll(ps, pt));
  if (dot)
    TRY(te_tensorize(ps, ri, "vpdpbusd"));
  return te_build(s, name, def.nargs, def.args, 0, NULL, tgt, out);
}

/* The product on vpdpbusd where the target has it, else the same schedule in plain vector
   code (te_build refuses the instruction with TE_ERR_TARGET on CPUs without AVX512-VNNI). */
static te_status q8_product_best(te_ctx *ctx, te_target *tgt, int gs, int batched, int residual,
                                 const char *name, te_module **out) {
  te_status st = q8_product(ctx, tgt, gs, batched, residual, 1, name, out);
  return st == TE_ERR_TARGET ? q8_product(ctx, tgt, gs, batched, residual, 0, name, out) : st;
}

#define GROUP_SIZE(GS)                                                                             \
  te_status tl_gen_quantize_g##GS(te_ctx *c, te_target *t, te_module **o) {                        \
    return quantize(c, t, GS, false, "tl_quantize_g" #GS, o);                                      \
  }                                                                                                \
  te_status tl_gen_quantize_swiglu_g##GS(te_ctx *c, te_target *t, te_module **o) {                 \
    return quantize(c, t, GS, true, "tl_quantize_swiglu_g" #GS, o);                                \
  }                                                                                                \
  te_status tl_gen_q8_matmul_g##GS(te_ctx *c, te_target *t, te_module **o) {                       \
    return q8_product_best(c, t, GS, 1, 0, "tl_q8_matmul_g" #GS, o);                               \
  }                                                                                                \
  te_status tl_gen_q8_matvec_g##GS(te_ctx *c, te_target *t, te_module **o) {                       \
    return q8_product_best(c, t, GS, 0, 0, "tl_q8_matvec_g" #GS, o);                               \
  }                                                                                                \
  te_status tl_gen_q8_matmul_add_g##GS(te_ctx *c, te_target *t, te_module **o) {                   \
    return q8_product_best(c, t, GS, 1, 1, "tl_q8_matmul_add_g" #GS, o);                           \
  }                                                                                                \
  te_status tl_gen_q8_matvec_add_g##GS(te_ctx *c, te_target *t, te_module **o) {                   \
    return q8_product_best(c, t, GS, 0, 1, "tl_q8_matvec_add_g" #GS, o);                           \
  }
GROUP_SIZE(64)
GROUP_SIZE(32)
GROUP_SIZE(16)
GROUP_SIZE(8)
