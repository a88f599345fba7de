/* gen_attention.c — multi-head self-attention of a padded batch, one kernel (gen.h), with the
 * masked softmax fused into it: for each (sentence, head) and query token i,
 *
 *   S[j]  = sum_d Q[i, d] Kt[d, j]                 Kt: this head's keys, transposed once
 *   mx    = max_j (S[j] * scale + mask_bias[j])
 *   E[j]  = exp(S[j] * scale + mask_bias[j] - mx)  (padding: exp(-1e30) = 0)
 *   O[d]  = sum_j E[j] V[j, d],   out[i, d] = O[d] / sum_j E[j]
 *
 * Everything but Kt is computed at each block of IB query rows, in buffers of IB rows (IB x s
 * floats): the probabilities are never written to memory as a [s, s] matrix. The (sentence,
 * head) pairs run in parallel. Kt makes the scores' inner loop a vector over keys j
 * (contiguous in Kt) rather than a dot product over d = 32, a chain of dependent adds; O's is a
 * vector over d. Each reduction has the block's rows inside its reduction loop, so that IB
 * independent chains of adds (or maxes) hide the latency of one.
 */
#include "gen.h"

#include <math.h>

enum { IB = 4 }; /* query rows per block: each stage's inner reduction runs IB chains at once */

/* S * scale + mask_bias, read by the max and by the exponential. */
static te_expr *score(te_ctx *ctx, te_tensor *s0, te_tensor *mb, te_expr *b, te_expr *h, te_expr *i,
                      te_expr *j) {
  te_expr *scale = te_float(ctx, TE_F32, 1.0 / sqrt((double)MINILM_HEAD_DIM));
  te_expr *ib = te_int(ctx, IB);
  return te_add(te_mul(TE_AT(s0, b, h, i, j), scale),
                TE_AT(mb, b, te_floordiv(j, ib), te_floormod(j, ib)));
}

typedef struct {
  te_tensor *kt, *s0, *mx, *e, *sm, *o, *out;
} attn_stages;

static te_status schedule_attention(gen *g, te_schedule *s, const attn_stages *a) {
  te_stage *os = te_stage_of(s, a->out);
  te_iter *bh, *io, *ii, *jo, *jv;
  /* out is [b, s, heads, d]: iterate b, heads, query blocks, rows, d */
  te_status r = te_reorder(
      os, 4, (te_iter *const[]){te_axis(os, 0), te_axis(os, 2), te_axis(os, 1), te_axis(os, 3)});
  if (r == TE_OK)
    r = te_fuse(os, te_axis(os, 0), te_axis(os, 2), &bh);
  if (r == TE_OK)
    r = te_split(os, te_axis(os, 1), IB, &io, &ii);
  if (r == TE_OK)
    r = te_parallel(os, bh);
  if (r == TE_OK)
    r = te_vectorize(os, te_axis(os, 3));
  /* readers before what they read: O, sm, E, mx, S at the query block, then Kt */
  te_tensor *row[5] = {a->o, a->sm, a->e, a->mx, a->s0};
  for (int k = 0; k < 5 && r == TE_OK; k++)
    r = te_compute_at(te_stage_of(s, row[k]), os, io);
  if (r == TE_OK)
    r = te_compute_at(te_stage_of(s, a->kt), os, bh);
  /* S: keys j in vectors; for each vector of keys, d (the reduction) outside the block's rows,
     so that IB accumulators advance together */
  te_stage *ss = te_stage_of(s, a->s0);
  if (r == TE_OK)
    r = te_split(ss, te_axis(ss, 3), g->lanes, &jo, &jv);
  if (r == TE_OK)
    r = te_reorder(ss, 4, (te_iter *const[]){jo, te_reduce_iter(ss, 0), te_axis(ss, 2), jv});
  if (r == TE_OK)
    r = te_vectorize(ss, jv);
  if (r == TE_OK)
    r = te_unroll(ss, te_axis(ss, 2));
  te_stage *es = te_stage_of(s, a->e);
  if (r == TE_OK)
    r = te_split(es, te_axis(es, 3), g->lanes, &jo, &jv);
  if (r == TE_OK)
    r = te_vectorize(es, jv);
  /* the row max and sum: the block's rows inside the keys, IB independent chains */
  te_stage *ms = te_stage_of(s, a->mx), *sms = te_stage_of(s, a->sm);
  if (r == TE_OK)
    r = te_reorder(ms, 2, (te_iter *const[]){te_reduce_iter(ms, 0), te_axis(ms, 2)});
  if (r == TE_OK)
    r = te_reorder(sms, 2, (te_iter *const[]){te_reduce_iter(sms, 0), te_axis(sms, 2)});
  if (r == TE_OK)
    r = te_unroll(ms, te_axis(ms, 2));
  if (r == TE_OK)
    r = te_unroll(sms, te_axis(sms, 2));
  /* O: for each key, the block's rows x d (in a vector): 2 IB accumulators */
  te_stage *ost = te_stage_of(s, a->o);
  if (r == TE_OK)
    r = te_reorder(ost, 3,
                   (te_iter *const[]){te_reduce_iter(ost, 0), te_axis(ost, 2), te_axis(ost, 3)});
  if (r == TE_OK)
    r = te_vectorize(ost, te_axis(ost, 3));
  if (r == TE_OK)
    r = te_unroll(ost, te_axis(ost, 2));
  return r;
}

int gen_attention_block(void) { return IB; }

te_status gen_attention(gen *g, const char *name, te_module **out) {
  te_ctx *ctx = g->ctx;
  const int H = MINILM_HIDDEN, DH = MINILM_HEAD_DIM;
  /* s = IB x blocks: te-embed pads a batch to a whole number of query blocks (the padding is
     masked like any), so that each block has IB rows exactly: unrolled, register-resident */
  te_expr *blocks = gen_size(g, "blocks", g->seq / IB), *S = te_mul(blocks, te_int(ctx, IB));
  if (g->batch > 0) /* a constant, not 4*blocks: a tuned workload's extents are numbers */
    S = te_int(ctx, g->seq);
  te_expr *B = gen_size(g, "b", g->batch), *NH = te_int(ctx, MINILM_HEADS), *D = te_int(ctx, DH);
  te_tensor *qkv = te_placeholder(ctx, "QKV", TE_F32, 3, TE_EXPRS(B, S, te_int(ctx, 3 * H)));
  /* the mask as [b, blocks, IB]: the argument that gives te the size 'blocks' */
  te_tensor *mb = te_placeholder(ctx, "mask_bias", TE_F32, 3, TE_EXPRS(B, blocks, te_int(ctx, IB)));
  attn_stages a;
  te_expr *b = te_var(ctx, "b"), *h = te_var(ctx, "h"), *i = te_var(ctx, "i"),
          *j = te_var(ctx, "j"), *d = te_var(ctx, "d");
  /* Kt[b, h, d, j] = K[b, j, h, d] */
  a.kt = te_compute(ctx, "Kt", 4, TE_EXPRS(B, NH, D, S), TE_EXPRS(b, h, d, j),
                    TE_AT(qkv, b, j, te_add(te_int(ctx, H), te_add(te_mul(h, D), d))));
  te_expr *rd = te_reduce_axis(ctx, "rd", te_int(ctx, 0), D);
  a.s0 = te_compute(
      ctx, "S", 4, TE_EXPRS(B, NH, S, S), TE_EXPRS(b, h, i, j),
      TE_SUM(te_mul(TE_AT(qkv, b, i, te_add(te_mul(h, D), rd)), TE_AT(a.kt, b, h, rd, j)), rd));
  te_expr *rj = te_reduce_axis(ctx, "rj", te_int(ctx, 0), S);
  a.mx = te_compute(ctx, "mx", 3, TE_EXPRS(B, NH, S), TE_EXPRS(b, h, i),
                    te_max_r(score(ctx, a.s0, mb, b, h, i, rj), 1, TE_EXPRS(rj)));
  te_expr *ex = te_sub(score(ctx, a.s0, mb, b, h, i, j), TE_AT(a.mx, b, h, i));
  a.e = te_compute(ctx, "E", 4, TE_EXPRS(B, NH, S, S), TE_EXPRS(b, h, i, j),
                   te_call(ctx, "exp", 1, TE_EXPRS(ex)));
  te_expr *rj2 = te_reduce_axis(ctx, "rj", te_int(ctx, 0), S);
  a.sm = te_compute(ctx, "sm", 3, TE_EXPRS(B, NH, S), TE_EXPRS(b, h, i),
                    TE_SUM(TE_AT(a.e, b, h, i, rj2), rj2));
  te_expr *rj3 = te_reduce_axis(ctx, "rj", te_int(ctx, 0), S);
  te_expr *v = TE_AT(qkv, b, rj3, te_add(te_int(ctx, 2 * H), te_add(te_mul(h, D), d)));
  a.o = te_compute(ctx, "O", 4, TE_EXPRS(B, NH, S, D), TE_EXPRS(b, h, i, d),
                   TE_SUM(te_mul(TE_AT(a.e, b, h, i, rj3), v), rj3));
  a.out = te_compute(ctx, "out", 4, TE_EXPRS(B, S, NH, D), TE_EXPRS(b, i, h, d),
                     te_div(TE_AT(a.o, b, h, i, d), TE_AT(a.sm, b, h, i)));
  te_schedule *s = te_schedule_new(ctx, 1, &a.out);
  if (!s)
    return te_last_status(ctx);
  te_status r = schedule_attention(g, s, &a);
  if (r != TE_OK)
    return r;
  return gen_finish(g, s, name, 3, (te_tensor *const[]){qkv, mb, a.out}, out);
}
