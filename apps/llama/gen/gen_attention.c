/* gen_attention.c — te-llama's causal grouped-query attention over the KV cache.
 *
 * The cache is te-llama's own layout (model_te.c writes it; llama2.c's is [position][kv_dim]),
 * chosen for this kernel's loops, one layer's:
 *   keys    K[g][p / 16][c][p % 16]   blocks of 16 positions; in a block the head's 16 keys
 *                                     transposed, so 16 positions' element c are one vector and
 *                                     a block is hs vectors in a row (4 KB at hs = 64)
 *   values  V[g][p][c]                each head's values one after the other
 * Each head's keys and values are contiguous over the positions (llama2.c's layout walks a
 * head's 256 bytes of every position with a stride of kv_dim floats).
 *
 * Q is [T, G, M, hs]: T tokens, G key/value heads, M query heads per key/value head (query head
 * g * M + m reads key/value head g, llama2.c's h / kv_mul). K is the layer's whole key cache,
 * [G, NB, hs, 16] (NB blocks of 16 positions, at least P / 16 rounded up); V is the first P
 * positions of the layer's value cache, [G, P, hs] with the cache's stride between heads. The T
 * tokens are positions P - T .. P - 1, and token t sees positions p <= P - T + t:
 *     S[t, g, m, p] = sum_c Q[t, g, m, c] K[g, p / 16, c, p % 16]
 *     A = masked softmax_p (S / sqrt(hs)),   O[t, g, m, c] = sum_p A V[g, p, c]
 * computed as max, exp, sum and one division by the sum at the end, as llama2.c's softmax (the
 * division moved after the weighted sum). Each (t, g) is one parallel iteration computing its
 * scores, softmax and output in buffers of M x P values:
 *   scores: 4 vectors of 16 positions at a time, the head dimension c the reduction around
 *       them: each step a broadcast of Q[c] and 4 FMAs on 4 contiguous 64-byte loads of the
 *       key blocks, 4 independent accumulator chains, no horizontal sum (with the reduction
 *       along c vectorized instead, each position ended in a 16-lane horizontal sum). The
 *       positions are rounded up to 64 (te_set_tail round_up): the scores of the last block's
 *       positions past P go to the buffer's padding, computed from key blocks clamped into the
 *       cache, and are never read, so the loop has no masked tail;
 *   max and sum: factored by 16 (te_rfactor), 16 positions a vector, 16 lanes added at the end;
 *   exponentials: 16 positions a vector;
 *   weighted values: positions outside, the head dimension inside by vectors of 16.
 * The head size is symbolic; te_specialize gives hs = 64 (every llama2.c and TinyLlama
 * checkpoint) its own code: the weighted sum's 4 vectors of a value row unrolled into 4
 * accumulators held in registers across the positions, the scores' reduction of constant
 * length. hs = 64 with one query head a key/value head (multi-head attention, llama2.c's
 * models) has a branch of its own too, where the buffers of M values (max, sum, weighted sum)
 * have constant sizes: on the stack instead of 5 heap allocations a head (whose frees made
 * glibc consolidate its free lists before each next large allocation: 3% of a 110M token at
 * 2 threads). Other head sizes take the general code (tails masked). Grouped-query heads read
 * their key/value head's cache once per query head (from L2: M x 4 FMAs per 64 bytes of keys
 * at 1.1B's M = 8, where attention is under 2% of a token).
 */
#include "gen.h"

#include <stddef.h>

enum { BLOCK = 16, LANES = 16, SCORE_VECTORS = 4, COMMON_HEAD = 64 };

static te_expr *f32(te_ctx *ctx, double v) { return te_float(ctx, TE_F32, v); }

typedef struct {
  te_tensor *q, *k, *v, *o;        /* the kernel's arguments */
  te_tensor *sc, *mx, *e, *z, *ov; /* scores, max, exponentials, sum, weighted values */
  te_expr *hs, *m;                 /* the head size, the query heads a key/value head */
} attention_def;

static te_status define(te_ctx *ctx, attention_def *a) {
  te_expr *T = te_var(ctx, "T"), *G = te_var(ctx, "G"), *M = te_var(ctx, "M");
  te_expr *hs = te_var(ctx, "hs"), *P = te_var(ctx, "P"), *NB = te_var(ctx, "NB");
  te_expr *t = te_var(ctx, "t"), *g = te_var(ctx, "g"), *m = te_var(ctx, "m");
  te_expr *p = te_var(ctx, "p"), *c = te_var(ctx, "c");
  te_expr *blk = te_int(ctx, BLOCK);
  a->hs = hs, a->m = M;
  a->q = te_placeholder(ctx, "Q", TE_F32, 4, TE_EXPRS(T, G, M, hs));
  a->k = te_placeholder(ctx, "K", TE_F32, 4, TE_EXPRS(G, NB, hs, blk));
  a->v = te_placeholder_strided(ctx, "V", TE_F32, 3, TE_EXPRS(G, P, hs),
                                TE_EXPRS(te_var(ctx, "v_head_stride"), hs, te_int(ctx, 1)));

  te_expr *cc = te_reduce_axis(ctx, "cc", te_int(ctx, 0), hs);
  te_expr *key = TE_AT(a->k, g, te_floordiv(p, blk), cc, te_floormod(p, blk));
  a->sc = te_compute(ctx, "S", 4, TE_EXPRS(T, G, M, P), TE_EXPRS(t, g, m, p),
                     TE_SUM(te_mul(TE_AT(a->q, t, g, m, cc), key), cc));
  te_expr *scale = te_call(ctx, "sqrt", 1, TE_EXPRS(te_cast(TE_F32, hs)));
  te_expr *pp = te_reduce_axis(ctx, "pp", te_int(ctx, 0), P);
  te_expr *seen = te_le(pp, te_add(te_sub(P, T), t));
  a->mx = te_compute(
      ctx, "Mx", 3, TE_EXPRS(T, G, M), TE_EXPRS(t, g, m),
      te_max_r(te_select(seen, te_div(TE_AT(a->sc, t, g, m, pp), scale), f32(ctx, -3.0e38)), 1,
               TE_EXPRS(pp)));
  te_expr *seen_p = te_le(p, te_add(te_sub(P, T), t));
  te_expr *ex =
      te_call(ctx, "exp", 1,
              TE_EXPRS(te_sub(te_div(TE_AT(a->sc, t, g, m, p), scale), TE_AT(a->mx, t, g, m))));
  a->e = te_compute(ctx, "E", 4, TE_EXPRS(T, G, M, P), TE_EXPRS(t, g, m, p),
                    te_select(seen_p, ex, f32(ctx, 0.0)));
  te_expr *pz = te_reduce_axis(ctx, "pz", te_int(ctx, 0), P);
  a->z = te_compute(ctx, "Z", 3, TE_EXPRS(T, G, M), TE_EXPRS(t, g, m),
                    TE_SUM(TE_AT(a->e, t, g, m, pz), pz));
  te_expr *pv = te_reduce_axis(ctx, "pv", te_int(ctx, 0), P);
  a->ov = te_compute(ctx, "OV", 4, TE_EXPRS(T, G, M, hs), TE_EXPRS(t, g, m, c),
                     TE_SUM(te_mul(TE_AT(a->e, t, g, m, pv), TE_AT(a->v, g, pv, c)), pv));
  a->o = te_compute(ctx, "O", 4, TE_EXPRS(T, G, M, hs), TE_EXPRS(t, g, m, c),
                    te_div(TE_AT(a->ov, t, g, m, c), TE_AT(a->z, t, g, m)));
  return a->o ? TE_OK : te_last_status(ctx);
}

/* A reduction over positions (the max, the sum) factored by LANES: the partial results of 16
   positions a vector, their 16 lanes reduced at the end. */
static te_status factor_positions(te_schedule *s, te_tensor *t, te_stage *os, te_iter *at) {
  te_stage *st = te_stage_of(s, t);
  te_iter *o, *i;
  te_tensor *rf;
  TRY(te_split(st, te_reduce_iter(st, 0), LANES, &o, &i));
  TRY(te_rfactor(s, t, i, 3, &rf));
  TRY(te_compute_at(te_stage_of(s, t), os, at));
  te_stage *rs = te_stage_of(s, rf);
  TRY(te_compute_at(rs, os, at));
  /* rf[t, g, m, l] reduced over the blocks: the blocks outside, the lanes inside */
  TRY(te_reorder(rs, 2, (te_iter *const[]){te_reduce_iter(rs, 0), te_axis(rs, 3)}));
  return te_vectorize(rs, te_axis(rs, 3));
}

/* The weighted sum of values OV[t, g, m, c] at the (t, g) iteration: positions outside, the
   head dimension inside by vectors of LANES, `unrolled` vectors at a time (unrolled: their
   accumulators stay in registers across the positions). The head dimension is split by
   LANES * unrolled first, then the inner part by LANES, so the unrolled loop has a constant
   extent whatever hs is (hs = 64 and 4 vectors: the outer part has extent 1). */
static te_status weighted_values(te_schedule *s, te_tensor *ov, int unrolled) {
  te_stage *st = te_stage_of(s, ov);
  te_iter *cw, *cr, *co, *ci;
  TRY(te_split(st, te_axis(st, 3), (int64_t)LANES * unrolled, &cw, &cr));
  TRY(te_split(st, cr, LANES, &co, &ci));
  TRY(te_reorder(st, 4, (te_iter *const[]){cw, te_reduce_iter(st, 0), co, ci}));
  if (unrolled > 1)
    TRY(te_unroll(st, co));
  return te_vectorize(st, ci);
}

static te_status schedule(te_ctx *ctx, te_schedule *s, const attention_def *a) {
  te_stage *os = te_stage_of(s, a->o);
  te_iter *tg;
  TRY(te_fuse(os, te_axis(os, 0), te_axis(os, 1), &tg));
  TRY(te_parallel(os, tg));
  /* placed at the (t, g) iteration, readers before what they read */
  TRY(te_compute_at(te_stage_of(s, a->ov), os, tg));
  TRY(factor_positions(s, a->z, os, tg));
  TRY(te_compute_at(te_stage_of(s, a->e), os, tg));
  TRY(factor_positions(s, a->mx, os, tg));
  TRY(te_compute_at(te_stage_of(s, a->sc), os, tg));
  /* scores: p -> p.o (64 positions), c, p.i.o (4 vectors, unrolled), p.i.i (16 lanes) */
  te_stage *ss = te_stage_of(s, a->sc);
  te_iter *po, *pr, *pm, *pi;
  TRY(te_set_tail(ss, te_axis(ss, 3), TE_TAIL_ROUND_UP));
  TRY(te_split(ss, te_axis(ss, 3), (int64_t)BLOCK * SCORE_VECTORS, &po, &pr));
  TRY(te_split(ss, pr, BLOCK, &pm, &pi));
  TRY(te_reorder(ss, 5, (te_iter *const[]){te_axis(ss, 2), po, te_reduce_iter(ss, 0), pm, pi}));
  TRY(te_unroll(ss, pm));
  TRY(te_vectorize(ss, pi));
  /* the exponentials, 16 positions at a time */
  te_stage *es = te_stage_of(s, a->e);
  te_iter *eo, *ei;
  TRY(te_split(es, te_axis(es, 3), LANES, &eo, &ei));
  TRY(te_vectorize(es, ei));
  /* the output: the division by the sum, by vectors */
  te_iter *oco, *oci;
  TRY(te_split(os, te_axis(os, 3), LANES, &oco, &oci));
  TRY(te_vectorize(os, oci));
  /* the weighted sum of values: positions outside, the head's values inside, vectorized, so V
     is read a row at a time; hs = 64 has its own branch */
  te_schedule *b64m1, *b64;
  te_expr *hs64 = te_eq(a->hs, te_int(ctx, COMMON_HEAD));
  TRY(te_specialize(s, te_and(hs64, te_eq(a->m, te_int(ctx, 1))), &b64m1));
  TRY(te_specialize(s, hs64, &b64));
  TRY(weighted_values(s, a->ov, 1));
  TRY(weighted_values(b64m1, a->ov, COMMON_HEAD / LANES));
  return weighted_values(b64, a->ov, COMMON_HEAD / LANES);
}

te_status tl_gen_attention(te_ctx *ctx, te_target *tgt, te_module **out) {
  attention_def a;
  TRY(define(ctx, &a));
  te_schedule *s = te_schedule_new(ctx, 1, &a.o);
  TRY(schedule(ctx, s, &a));
  return te_build(s, "tl_attention", 4, (te_tensor *const[]){a.q, a.k, a.v, a.o}, 0, NULL, tgt,
                  out);
}
