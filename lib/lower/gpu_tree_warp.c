/* gpu_tree_warp.c — cuda: a cross-thread reduction as warp shuffles, then across the warps.
 *
 * gpu_tree.c matched the one-thread final reduction of each group over N partials in the
 * shared buffer SH (`if (guard) for (k, 0, N) OUT[o] = f(OUT[o], SH[e(k)])`, a top-level
 * statement of a kernel with a constant block and no tensor-core tile), the group's threads
 * numbered pos, and found the warps lined up with the groups (gpu_tree_match.c): below the
 * participating thread indices lie `low` threads of grouping ones, low a power of two dividing
 * 32, so a warp holds WW = 32 / low consecutive pos values of each of its groups, and the
 * thread pos ^ d of the same group is lane ^ (d * low) for d < WW. With q = pos % WW and
 * W = ceil(N / WW) it becomes
 *
 *   let v0 = SH[e(min(pos, N - 1))]                      every thread: a valid address
 *   let s1 = warp_shuffle_xor(v0, (P/2) * low)           v0 of pos ^ P/2 (shfl.sync.bfly)
 *   let v1 = select(q < P/2 && pos + P/2 < N, f(v0, s1), v0)
 *   ...  d = P/2 .. 1, P the power of two >= min(N, WW)
 *   (W == 1)  if (guard) OUT[o] = f(OUT[o], v_last)
 *   (W > 1)   if (q == 0 && pos < N) SH[e(pos)] = v_last
 *             barrier()
 *             if (pos < WW) { the same steps over u0 = SH[e(WW * min(pos, W - 1))], W values;
 *                             if (guard) OUT[o] = f(OUT[o], u_last) }
 *
 * Why it is right: thread q < d combines its value with pos + d (= pos ^ d) when that one holds
 * a partial, so q = 0 ends with f over its warp's partials of its group, as in the
 * shared-memory tree; other values are never used. The first thread of each warp and group
 * writes SH[e(WW w)], which only its own warp read in the first round (threads past N read
 * e(N - 1), which is WW w only when that warp had one partial, whose value it writes back), so
 * no barrier is needed before it; the first warp of each group reads the W results after one.
 * Every shuffle runs at the kernel's top level or under `pos < WW`, which holds for whole warps:
 * all threads of a warp reach it together (the convergence shfl.sync needs); ptx_shuffle.c
 * gives it the mask of the warp's threads that exist (the last warp of a block whose threads
 * are not a multiple of 32 is partial). f is applied in another order than the serial loop:
 * it is associative and commutative, as in gpu_tree.c. Custom reducers work as sums do: f is
 * any expression. A one-dimensional block is the case low = 1, pos = threadIdx.x.
 */
#include "gpu_lower.h"

typedef struct warp_steps {
  lw_pass_ctx *p;
  const lw_gpu_tree *t;
  te_expr *f, *q; /* q: pos % WW, the thread's place among its group's values in its warp */
  int64_t per_warp;
} warp_steps;

/* The let-bound shuffle steps over n values, the first one `first`; returns the statement
   `let v0 = first; let s1 = ...; ...; last(v)` with last made by the caller's callback. */
static ir_stmt *steps_around(warp_steps *w, te_expr *first, int64_t n,
                             ir_stmt *(*last)(warp_steps *, te_expr *v, void *), void *data) {
  te_ctx *ctx = w->p->ctx;
  te_dtype et = first->dtype;
  te_expr *pos = w->t->pos;
  te_expr *vars[2 * 6 + 1], *vals[2 * 6 + 1];
  int nv = 0;
  te_expr *v = ir_var_new(ctx, "warp_v", et, IR_VAR_INDEX);
  vars[nv] = v, vals[nv++] = first;
  int64_t width = n < w->per_warp ? n : w->per_warp, pow2 = 1;
  while (pow2 < width)
    pow2 *= 2;
  for (int64_t off = pow2 / 2; off >= 1; off /= 2) {
    te_expr *s = ir_var_new(ctx, "warp_s", et, IR_VAR_INDEX);
    te_expr *offset = ir_int(ctx, TE_I32, off * w->t->low);
    te_expr *shfl =
        v && offset ? ir_call(ctx, IR_INTRIN_WARP_SHUFFLE_XOR, et, 2, (te_expr *const[]){v, offset})
                    : NULL;
    /* q < off: the partner is pos + off, in this warp; it holds a value when < n */
    te_expr *ok =
        ir_binary(IR_AND, ir_binary(IR_LT, w->q, ir_i64(ctx, off)),
                  ir_binary(IR_LT, ir_binary(IR_ADD, pos, ir_i64(ctx, off)), ir_i64(ctx, n)));
    te_expr *comb = s && v ? lw_gpu_tree_apply(w->p, w->t, w->f, v, s) : NULL;
    te_expr *next = ir_var_new(ctx, "warp_v", et, IR_VAR_INDEX);
    vars[nv] = s, vals[nv++] = shfl;
    vars[nv] = next, vals[nv++] = ok && comb && v ? ir_select(ok, comb, v) : NULL;
    v = next;
  }
  ir_stmt *body = v ? last(w, v, data) : NULL;
  for (int i = nv - 1; i >= 0 && body; i--)
    body = vars[i] && vals[i] ? ir_let_stmt(vars[i], vals[i], body) : NULL;
  return body;
}

/* The end of a round whose first thread holds the result: OUT[o] = f(OUT[o], v) under the
   guard. */
static ir_stmt *final_store(warp_steps *w, te_expr *v, void *unused) {
  (void)unused;
  const lw_gpu_tree *t = w->t;
  te_expr *outv = ir_load(t->out, t->out_load->dtype, t->out_index);
  te_expr *fin = outv ? lw_gpu_tree_apply(w->p, t, w->f, outv, v) : NULL;
  ir_stmt *st = fin ? ir_store(t->out, fin, t->out_index) : NULL;
  return st ? ir_if(t->guard, st, NULL) : NULL;
}

/* The end of the first round when several warps hold a group's partials: the first thread of
   each keeps its warp's result in SH[e(pos)] (pos = WW w there). */
static ir_stmt *warp_result_store(warp_steps *w, te_expr *v, void *n_ptr) {
  te_ctx *ctx = w->p->ctx;
  int64_t n = *(int64_t *)n_ptr;
  te_expr *cond = ir_binary(IR_AND, ir_binary(IR_EQ, w->q, ir_i64(ctx, 0)),
                            ir_binary(IR_LT, w->t->pos, ir_i64(ctx, n)));
  te_expr *at = lw_gpu_tree_sh_at(w->p, w->t, w->t->pos);
  ir_stmt *st = at ? ir_store(w->t->sh, v, at) : NULL;
  return cond && st ? ir_if(cond, st, NULL) : NULL;
}

ir_stmt *lw_gpu_tree_warp(lw_pass_ctx *p, const lw_gpu_tree *t, te_expr *f, int64_t n) {
  te_ctx *ctx = p->ctx;
  te_dtype et = t->sh_load->dtype;
  int64_t ww = 32 / t->low;
  warp_steps w = {p, t, f, ir_binary(IR_FLOORMOD, t->pos, ir_i64(ctx, ww)), ww};
  te_expr *first_at = lw_gpu_tree_sh_at(p, t, ir_binary(IR_MIN, t->pos, ir_i64(ctx, n - 1)));
  te_expr *first = first_at ? ir_load(t->sh, et, first_at) : NULL;
  if (!first || !w.q)
    return NULL;
  if (n <= ww)
    return steps_around(&w, first, n, final_store, NULL);
  int64_t nwarps = (n + ww - 1) / ww;
  ir_stmt *round1 = steps_around(&w, first, n, warp_result_store, &n);
  te_expr *upos = ir_binary(IR_MIN, t->pos, ir_i64(ctx, nwarps - 1));
  te_expr *ufirst_at = lw_gpu_tree_sh_at(p, t, ir_binary(IR_MUL, upos, ir_i64(ctx, ww)));
  te_expr *ufirst = ufirst_at ? ir_load(t->sh, et, ufirst_at) : NULL;
  ir_stmt *round2 = ufirst ? steps_around(&w, ufirst, nwarps, final_store, NULL) : NULL;
  te_expr *warp0 = ir_binary(IR_LT, t->pos, ir_i64(ctx, ww));
  ir_stmt *r2 = round2 && warp0 ? ir_if(warp0, round2, NULL) : NULL;
  ir_stmt *bar = ir_barrier(ctx);
  if (!round1 || !r2 || !bar)
    return NULL;
  return ir_seq(ctx, 3, (ir_stmt *const[]){round1, bar, r2});
}
