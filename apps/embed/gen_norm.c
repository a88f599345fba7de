/* gen_norm.c — layer norms over the hidden axis, each fused with what feeds it: the residual
 * add of a sub-layer (embed_add_ln) or the embeddings' gathers (embed_ln).
 *
 *   x[r, c]   the row's input, an expression (never stored: recomputed in each pass, cheaper
 *             than a round trip through memory for an add or a gather)
 *   mean[r] = sum_c x / H,  var[r] = sum_c (x - mean)^2 / H      (two passes, as PyTorch)
 *   Y[r, c] = (x - mean) * rsqrt(var + eps) * gamma[c] + beta[c]
 *
 * Each sum is written in two levels, partial[r, l] = sum_kk x[r, kk * L + l] over vector lanes
 * l and then over l, so that its inner loop is a vector of L lanes instead of one scalar chain
 * of 384 dependent adds. Rows run in parallel; the reductions are computed at each row.
 */
#include "gen.h"

#include <stdio.h>

typedef te_expr *(*row_fn)(te_ctx *, te_expr *r, te_expr *c, void *user);

/* sum_c f(r, c) / H as two stages; f is called with c = kk * L + l. */
static te_tensor *row_mean(gen *g, const char *name, te_expr *m, row_fn f, void *user,
                           te_tensor **partial) {
  te_ctx *ctx = g->ctx;
  int L = g->lanes, H = MINILM_HIDDEN;
  te_expr *r = te_var(ctx, "r"), *l = te_var(ctx, "l");
  te_expr *kk = te_reduce_axis(ctx, "kk", te_int(ctx, 0), te_int(ctx, H / L));
  te_expr *v = f(ctx, r, te_add(te_mul(kk, te_int(ctx, L)), l), user);
  char pname[32];
  snprintf(pname, sizeof pname, "%s_p", name);
  *partial = te_compute(ctx, pname, 2, TE_EXPRS(m, te_int(ctx, L)), TE_EXPRS(r, l), TE_SUM(v, kk));
  /* the lanes' reduce axis is not called "l" like the partial's index: the workload text would
     rename one of them, and the hand schedule's trace (a task's hand_trace) names the index */
  te_expr *r2 = te_var(ctx, "r"), *l2 = te_reduce_axis(ctx, "lr", te_int(ctx, 0), te_int(ctx, L));
  te_tensor *sum =
      te_compute(ctx, name, 1, TE_EXPRS(m), TE_EXPRS(r2), TE_SUM(TE_AT(*partial, r2, l2), l2));
  return sum;
}

typedef struct {
  row_fn x;
  void *user;
  te_tensor *mean_sum;
} centered;

static te_expr *centered_sq(te_ctx *ctx, te_expr *r, te_expr *c, void *user) {
  centered *cv = user;
  te_expr *mean = te_mul(TE_AT(cv->mean_sum, r), te_float(ctx, TE_F32, 1.0 / MINILM_HIDDEN));
  te_expr *d = te_sub(cv->x(ctx, r, c, cv->user), mean);
  return te_mul(d, d);
}

static te_status schedule_norm(gen *g, te_schedule *s, te_tensor *y, te_tensor *const stages[4]) {
  te_stage *ys = te_stage_of(s, y);
  te_iter *co, *ci;
  te_status r = te_split(ys, te_axis(ys, 1), g->lanes, &co, &ci);
  if (r == TE_OK)
    r = te_vectorize(ys, ci);
  if (r == TE_OK)
    r = te_parallel(ys, te_axis(ys, 0));
  /* readers before what they read: var, var_p, mean, mean_p */
  for (int i = 3; i >= 0 && r == TE_OK; i--) {
    te_stage *st = te_stage_of(s, stages[i]);
    r = te_compute_at(st, ys, te_axis(ys, 0));
    if (r == TE_OK && i % 2 == 0) { /* a partial: lanes inside, as a vector */
      r = te_reorder(st, 2, (te_iter *const[]){te_reduce_iter(st, 0), te_axis(st, 1)});
      if (r == TE_OK)
        r = te_vectorize(st, te_axis(st, 1));
    }
  }
  return r;
}

/* The norm of x over the hidden axis; inputs[0 .. ninputs) are x's tensors. */
static te_status layer_norm(gen *g, const char *name, te_expr *m, row_fn x, void *user, int ninputs,
                            te_tensor *const inputs[], te_module **out) {
  te_ctx *ctx = g->ctx;
  te_expr *H = te_int(ctx, MINILM_HIDDEN);
  te_tensor *gamma = te_placeholder(ctx, "gamma", TE_F32, 1, TE_EXPRS(H));
  te_tensor *beta = te_placeholder(ctx, "beta", TE_F32, 1, TE_EXPRS(H));
  te_tensor *stages[4];
  te_tensor *mean_sum = row_mean(g, "mean", m, x, user, &stages[0]);
  stages[1] = mean_sum;
  centered cv = {x, user, mean_sum};
  te_tensor *var_sum = row_mean(g, "var", m, centered_sq, &cv, &stages[2]);
  stages[3] = var_sum;
  te_expr *r = te_var(ctx, "r"), *c = te_var(ctx, "c");
  te_expr *inv_h = te_float(ctx, TE_F32, 1.0 / MINILM_HIDDEN);
  te_expr *mean = te_mul(TE_AT(mean_sum, r), inv_h);
  te_expr *var = te_mul(TE_AT(var_sum, r), inv_h);
  te_expr *rstd =
      te_call(ctx, "rsqrt", 1, TE_EXPRS(te_add(var, te_float(ctx, TE_F32, MINILM_LN_EPS))));
  te_expr *body = te_add(te_mul(te_mul(te_sub(x(ctx, r, c, user), mean), rstd), TE_AT(gamma, c)),
                         TE_AT(beta, c));
  te_tensor *y = te_compute(ctx, "Y", 2, TE_EXPRS(m, H), TE_EXPRS(r, c), body);
  te_schedule *s = te_schedule_new(ctx, 1, &y);
  if (!s)
    return te_last_status(ctx);
  te_status st = schedule_norm(g, s, y, stages);
  if (st != TE_OK)
    return st;
  te_tensor *args[8];
  int n = 0;
  for (int i = 0; i < ninputs; i++)
    args[n++] = inputs[i];
  args[n++] = gamma;
  args[n++] = beta;
  args[n++] = y;
  return gen_finish(g, s, name, n, args, out);
}

static te_expr *residual_sum(te_ctx *ctx, te_expr *r, te_expr *c, void *user) {
  (void)ctx;
  te_tensor **xr = user;
  return te_add(TE_AT(xr[0], r, c), TE_AT(xr[1], r, c));
}

te_status gen_add_layer_norm(gen *g, const char *name, te_module **out) {
  te_ctx *ctx = g->ctx;
  te_expr *m = gen_size(g, "m", g->batch * g->seq), *H = te_int(ctx, MINILM_HIDDEN);
  te_tensor *xr[2] = {te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(m, H)),
                      te_placeholder(ctx, "R", TE_F32, 2, TE_EXPRS(m, H))};
  return layer_norm(g, name, m, residual_sum, xr, 2, xr, out);
}

/* word[ids[r], c] + pos[pos_ids[r], c] + type[0, c]: te-embed gives every token type 0, as
   sentence-transformers does for a single sentence. */
static te_expr *embedding_sum(te_ctx *ctx, te_expr *r, te_expr *c, void *user) {
  te_tensor **t = user; /* ids, pos_ids, word, pos, type */
  te_expr *id = te_cast(TE_I64, TE_AT(t[0], r)), *pid = te_cast(TE_I64, TE_AT(t[1], r));
  return te_add(te_add(TE_AT(t[2], id, c), TE_AT(t[3], pid, c)), TE_AT(t[4], te_int(ctx, 0), c));
}

te_status gen_embed_layer_norm(gen *g, const char *name, te_module **out) {
  te_ctx *ctx = g->ctx;
  te_expr *m = gen_size(g, "m", g->batch * g->seq), *H = te_int(ctx, MINILM_HIDDEN);
  te_tensor *t[5] = {
      te_placeholder(ctx, "ids", TE_I32, 1, TE_EXPRS(m)),
      te_placeholder(ctx, "pos_ids", TE_I32, 1, TE_EXPRS(m)),
      te_placeholder(ctx, "word", TE_F32, 2, TE_EXPRS(te_int(ctx, MINILM_VOCAB), H)),
      te_placeholder(ctx, "pos", TE_F32, 2, TE_EXPRS(te_int(ctx, MINILM_POSITIONS), H)),
      te_placeholder(ctx, "type", TE_F32, 2, TE_EXPRS(te_int(ctx, MINILM_TYPES), H))};
  return layer_norm(g, name, m, embedding_sum, t, 5, t, out);
}
