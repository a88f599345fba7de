/* gen_attention.c — multi-head self-attention of a padded batch, one kernel (gen.h), with the
 * masked softmax fused into it: for each (sentence, head) and query token i,
 *
 *   S[j]  = sum_d Q[i, d] Kt[d, j]                 Kt: this head's keys, transposed once
 *   mx    = max_j (S[j] * scale + MB[j])           MB: the mask bias, padded keys -1e30
 *   E[j]  = exp(S[j] * scale + MB[j] - mx)         (padding: exp(-1e30) = 0)
 *   O[d]  = sum_j E[j] V[j, d],   out[i, d] = O[d] / sum_j E[j]
 *
 * The keys j run over sp, the sequence s rounded up to a whole number of vectors (LANES): Kt
 * holds the last key again in the padding (a clamped read, finite), MB gives it -1e30, so that
 * every loop over keys is whole vectors, with no masked tail. Everything but Kt and MB is
 * computed at each block of IB query rows, in buffers of IB rows: the probabilities are never
 * written to memory as an [s, s] matrix. The (sentence, head) pairs run in parallel.
 *
 * The scores are accumulated in a register block: S_local, IB rows x one vector of keys,
 * computed at each vector of S (te_cache_write), a buffer of constant size that LLVM keeps in
 * registers across the reduction over d (S itself has the sequence's symbolic size: a heap
 * buffer, which the accumulators went through, a load and a store per FMA, before). The row
 * max and the row sum are two-level (te_rfactor): LANES partial results a vector, the IB rows
 * unrolled inside the keys (IB independent vector chains), then the lanes reduced once per row.
 * O's inner loop is a vector over d with the block's rows unrolled: 2 IB accumulators.
 */
#include "gen.h"

#include <math.h>

enum { IB = 4 }; /* query rows per block: each stage's inner reduction runs IB chains at once */

#define TRY(x)                                                                                     \
  do {                                                                                             \
    te_status st_ = (x);                                                                           \
    if (st_ != TE_OK)                                                                              \
      return st_;                                                                                  \
  } while (0)

/* S * scale + MB, read by the max and by the exponential. */
static te_expr *score(te_ctx *ctx, te_tensor *s0, te_tensor *mb, te_expr *b, te_expr *h, te_expr *i,
                      te_expr *j) {
  te_expr *scale = te_float(ctx, TE_F32, 1.0 / sqrt((double)MINILM_HEAD_DIM));
  return te_add(te_mul(TE_AT(s0, b, h, i, j), scale), TE_AT(mb, b, h, j));
}

typedef struct {
  te_tensor *kt, *mb, *s0, *mx, *e, *sm, *o, *out;
} attn_stages;

/* A row reduction over the keys (the max, the sum), factored by lanes and computed at the query
   block: rf[b, h, i, l] over the key vectors, the block's rows unrolled inside them, then the
   lanes of each row. */
static te_status factor_keys(gen *g, te_schedule *s, te_tensor *t, te_stage *os, te_iter *at) {
  te_stage *st = te_stage_of(s, t);
  te_iter *o, *l;
  te_tensor *rf;
  TRY(te_split(st, te_reduce_iter(st, 0), g->lanes, &o, &l));
  TRY(te_rfactor(s, t, l, 3, &rf));
  TRY(te_compute_at(te_stage_of(s, t), os, at));
  te_stage *rs = te_stage_of(s, rf);
  TRY(te_compute_at(rs, os, at));
  TRY(te_reorder(rs, 3, (te_iter *const[]){te_reduce_iter(rs, 0), te_axis(rs, 2), te_axis(rs, 3)}));
  TRY(te_unroll(rs, te_axis(rs, 2)));
  return te_vectorize(rs, te_axis(rs, 3));
}

static te_status schedule_attention(gen *g, te_schedule *s, const attn_stages *a) {
  te_stage *os = te_stage_of(s, a->out);
  te_iter *bh, *io, *ii, *jo, *jv;
  te_tensor *sl;
  /* the scores' register block first (te_cache_write precedes every other primitive on S) */
  TRY(te_cache_write(s, a->s0, TE_SCOPE_LOCAL, &sl));
  /* out is [b, s, heads, d]: iterate b, heads, query blocks, rows, d */
  TRY(te_reorder(
      os, 4, (te_iter *const[]){te_axis(os, 0), te_axis(os, 2), te_axis(os, 1), te_axis(os, 3)}));
  TRY(te_fuse(os, te_axis(os, 0), te_axis(os, 2), &bh));
  TRY(te_split(os, te_axis(os, 1), IB, &io, &ii));
  TRY(te_parallel(os, bh));
  TRY(te_vectorize(os, te_axis(os, 3)));
  /* readers before what they read: O, sm, E, mx, S at the query block, then Kt and MB */
  TRY(te_compute_at(te_stage_of(s, a->o), os, io));
  TRY(factor_keys(g, s, a->sm, os, io));
  TRY(te_compute_at(te_stage_of(s, a->e), os, io));
  TRY(factor_keys(g, s, a->mx, os, io));
  te_stage *ss = te_stage_of(s, a->s0);
  TRY(te_compute_at(ss, os, io));
  /* S (the copy out of the register block): a vector of keys at a time, the block's rows */
  TRY(te_split(ss, te_axis(ss, 3), g->lanes, &jo, &jv));
  TRY(te_reorder(ss, 3, (te_iter *const[]){jo, te_axis(ss, 2), jv}));
  TRY(te_vectorize(ss, jv));
  TRY(te_unroll(ss, te_axis(ss, 2)));
  /* S_local: IB rows x a vector of keys, d outside, the rows unrolled: IB accumulators */
  te_stage *ls = te_stage_of(s, sl);
  TRY(te_compute_at(ls, ss, jo));
  TRY(te_reorder(ls, 3, (te_iter *const[]){te_reduce_iter(ls, 0), te_axis(ls, 2), te_axis(ls, 3)}));
  TRY(te_unroll(ls, te_axis(ls, 2)));
  TRY(te_vectorize(ls, te_axis(ls, 3)));
  TRY(te_compute_at(te_stage_of(s, a->kt), os, bh));
  TRY(te_compute_at(te_stage_of(s, a->mb), os, bh));
  /* E: a vector of keys at a time, the block's rows unrolled inside it: IB independent
     exponentials in flight (one row at a time, each exp's chain of ~25 dependent vector
     operations left the loop latency-bound) */
  te_stage *es = te_stage_of(s, a->e);
  TRY(te_split(es, te_axis(es, 3), g->lanes, &jo, &jv));
  TRY(te_reorder(es, 3, (te_iter *const[]){jo, te_axis(es, 2), jv}));
  TRY(te_unroll(es, te_axis(es, 2)));
  TRY(te_vectorize(es, jv));
  /* Kt: the keys (the rows of QKV) inside, by vectors */
  te_stage *ks = te_stage_of(s, a->kt);
  TRY(te_split(ks, te_axis(ks, 3), g->lanes, &jo, &jv));
  TRY(te_vectorize(ks, jv));
  te_stage *ms = te_stage_of(s, a->mb);
  TRY(te_split(ms, te_axis(ms, 2), g->lanes, &jo, &jv));
  TRY(te_vectorize(ms, jv));
  /* O: for each key, the block's rows x d (in a vector): 2 IB accumulators */
  te_stage *ost = te_stage_of(s, a->o);
  TRY(te_reorder(ost, 3,
                 (te_iter *const[]){te_reduce_iter(ost, 0), te_axis(ost, 2), te_axis(ost, 3)}));
  TRY(te_vectorize(ost, te_axis(ost, 3)));
  return te_unroll(ost, te_axis(ost, 2));
}

int gen_attention_block(void) { return IB; }

te_status gen_attention(gen *g, const char *name, te_module **out) {
  te_ctx *ctx = g->ctx;
  const int H = MINILM_HIDDEN, DH = MINILM_HEAD_DIM;
  /* s = IB x blocks: te-embed pads a batch to a whole number of query blocks (the padding is
     masked like any), so that each block has IB rows exactly: unrolled, register-resident */
  te_expr *blocks = gen_size(g, "blocks", g->seq / IB), *S = te_mul(blocks, te_int(ctx, IB));
  /* the keys rounded up to whole vectors: sp = lanes x ceil(s / lanes) */
  int kv = g->lanes / IB; /* query blocks per vector of keys */
  te_expr *SP = te_mul(te_floordiv(te_add(blocks, te_int(ctx, kv - 1)), te_int(ctx, kv)),
                       te_int(ctx, g->lanes));
  if (g->batch > 0) { /* constants, not 4*blocks: a tuned workload's extents are numbers */
    S = te_int(ctx, g->seq);
    SP = te_int(ctx, (g->seq + g->lanes - 1) / g->lanes * g->lanes);
  }
  te_expr *B = gen_size(g, "b", g->batch), *NH = te_int(ctx, MINILM_HEADS), *D = te_int(ctx, DH);
  te_tensor *qkv = te_placeholder(ctx, "QKV", TE_F32, 3, TE_EXPRS(B, S, te_int(ctx, 3 * H)));
  /* the mask as [b, blocks, IB]: the argument that gives te the size 'blocks' */
  te_tensor *mbias =
      te_placeholder(ctx, "mask_bias", TE_F32, 3, TE_EXPRS(B, blocks, te_int(ctx, IB)));
  attn_stages a;
  te_expr *b = te_var(ctx, "b"), *h = te_var(ctx, "h"), *i = te_var(ctx, "i"),
          *j = te_var(ctx, "j"), *d = te_var(ctx, "d");
  te_expr *last = te_sub(S, te_int(ctx, 1)), *jc = te_min(j, last); /* padding: the last key */
  /* Kt[b, h, d, j] = K[b, min(j, s - 1), h, d] */
  a.kt = te_compute(ctx, "Kt", 4, TE_EXPRS(B, NH, D, SP), TE_EXPRS(b, h, d, j),
                    TE_AT(qkv, b, jc, te_add(te_int(ctx, H), te_add(te_mul(h, D), d))));
  /* MB[b, h, j]: the mask bias, -1e30 past the sequence (per head: computed with Kt) */
  te_expr *ib = te_int(ctx, IB);
  a.mb =
      te_compute(ctx, "MB", 3, TE_EXPRS(B, NH, SP), TE_EXPRS(b, h, j),
                 te_select(te_lt(j, S), TE_AT(mbias, b, te_floordiv(jc, ib), te_floormod(jc, ib)),
                           te_float(ctx, TE_F32, -1e30)));
  te_expr *rd = te_reduce_axis(ctx, "rd", te_int(ctx, 0), D);
  a.s0 = te_compute(
      ctx, "S", 4, TE_EXPRS(B, NH, S, SP), TE_EXPRS(b, h, i, j),
      TE_SUM(te_mul(TE_AT(qkv, b, i, te_add(te_mul(h, D), rd)), TE_AT(a.kt, b, h, rd, j)), rd));
  te_expr *rj = te_reduce_axis(ctx, "rj", te_int(ctx, 0), SP);
  a.mx = te_compute(ctx, "mx", 3, TE_EXPRS(B, NH, S), TE_EXPRS(b, h, i),
                    te_max_r(score(ctx, a.s0, a.mb, b, h, i, rj), 1, TE_EXPRS(rj)));
  /* exp(x) for x >= -80, else 0: te's exp scales its result by 2^n in two steps that make
     denormals for x below -87 (the masked keys: x = -1e30, clamped to -104), and a vector
     multiply with a denormal result costs a microcode assist on Intel cores, about a hundred
     cycles (a third of the kernel's time on Emerald Rapids). exp(-80) = 1.8e-35 is a normal
     number, and anything below it is 0 next to the row's largest term, exp(0) = 1. */
  te_expr *ex = te_sub(score(ctx, a.s0, a.mb, b, h, i, j), TE_AT(a.mx, b, h, i));
  te_expr *floor_ = te_float(ctx, TE_F32, -80.0);
  te_expr *ef = te_call(ctx, "exp", 1, TE_EXPRS(te_max(ex, floor_)));
  a.e = te_compute(ctx, "E", 4, TE_EXPRS(B, NH, S, SP), TE_EXPRS(b, h, i, j),
                   te_select(te_lt(ex, floor_), te_float(ctx, TE_F32, 0.0), ef));
  te_expr *rj2 = te_reduce_axis(ctx, "rj", te_int(ctx, 0), SP);
  a.sm = te_compute(ctx, "sm", 3, TE_EXPRS(B, NH, S), TE_EXPRS(b, h, i),
                    TE_SUM(TE_AT(a.e, b, h, i, rj2), rj2));
  /* the values of the real keys only (E is 0 past them) */
  te_expr *rj3 = te_reduce_axis(ctx, "rj", te_int(ctx, 0), S);
  te_expr *v = TE_AT(qkv, b, rj3, te_add(te_int(ctx, 2 * H), te_add(te_mul(h, D), d)));
  a.o = te_compute(ctx, "O", 4, TE_EXPRS(B, NH, S, D), TE_EXPRS(b, h, i, d),
                   TE_SUM(te_mul(TE_AT(a.e, b, h, i, rj3), v), rj3));
  a.out = te_compute(ctx, "out", 4, TE_EXPRS(B, S, NH, D), TE_EXPRS(b, i, h, d),
                     te_div(TE_AT(a.o, b, h, i, d), TE_AT(a.sm, b, h, i)));
  te_schedule *s = te_schedule_new(ctx, 1, &a.out);
  if (!s)
    return te_last_status(ctx);
  TRY(schedule_attention(g, s, &a));
  return gen_finish(g, s, name, 3, (te_tensor *const[]){qkv, mbias, a.out}, out);
}
