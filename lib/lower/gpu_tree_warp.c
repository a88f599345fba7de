/* gpu_tree_warp.c — cuda: a cross-thread reduction as warp shuffles, then across the warps.
 *
 * gpu_tree.c matched the one-thread final reduction over N partials in the shared buffer SH
 * (`if (guard) for (k, 0, N) OUT[o] = f(OUT[o], SH[k])`, guard the single-thread guard, a
 * top-level statement of a kernel whose block of B >= N threads is one-dimensional and holds no
 * tensor-core tile). On cuda it becomes, with lane = threadIdx.x % 32 and W = ceil(N / 32):
 *
 *   let v0 = SH[min(threadIdx.x, N - 1)]                   every thread: a valid address
 *   let s1 = warp_shuffle_xor(v0, 16)                      v0 of lane ^ 16 (shfl.sync.bfly)
 *   let v1 = select(lane < 16 && threadIdx.x + 16 < N, f(v0, s1), v0)
 *   ...  offsets P/2 .. 1, P the power of two >= min(N, 32)
 *   (W == 1)  if (guard) OUT[o] = f(OUT[o], v_last)
 *   (W > 1)   if (lane == 0 && threadIdx.x < N) SH[threadIdx.x] = v_last
 *             barrier()
 *             if (threadIdx.x < 32) { the same steps over u0 = SH[32 * min(threadIdx.x, W - 1)],
 *                                     W values; if (guard) OUT[o] = f(OUT[o], u_last) }
 *
 * Why it is right: lane t < off combines its value with lane t + off (= t ^ off) when that lane
 * holds a partial, so lane 0 ends with f over its warp's partials, as in the shared-memory tree;
 * other lanes' values are never used. Warp w's lane 0 writes SH[32 w], which only warp w read
 * in the first round, so no barrier is needed before it; warp 0 reads the W results after one.
 * Every shuffle runs at the kernel's top level or under `threadIdx.x < 32`: all lanes of a warp
 * reach it together (the convergence shfl.sync needs); ptx_shuffle.c gives it the mask of the
 * warp's threads that exist (the last warp of a block of B threads, B not a multiple of 32,
 * is partial). f is applied in another order than the serial loop: it is associative and
 * commutative, as in gpu_tree.c. Custom reducers work as sums do: f is any expression.
 */
#include "gpu_lower.h"

/* The let-bound shuffle steps over n values, the first one `first`; returns the statement
   `let v0 = first; let s1 = ...; ...; last(v)` with last made by the caller's callback. */
typedef struct warp_steps {
  lw_pass_ctx *p;
  const lw_gpu_tree *t;
  te_expr *f, *tid, *lane;
} warp_steps;

static ir_stmt *steps_around(warp_steps *w, te_expr *first, int64_t n, te_expr *pos,
                             ir_stmt *(*last)(warp_steps *, te_expr *v, void *), void *data) {
  te_ctx *ctx = w->p->ctx;
  te_dtype et = first->dtype;
  te_expr *vars[2 * 6 + 1], *vals[2 * 6 + 1];
  int nv = 0;
  te_expr *v = ir_var_new(ctx, "warp_v", et, IR_VAR_INDEX);
  vars[nv] = v, vals[nv++] = first;
  int64_t width = n < 32 ? n : 32, pow2 = 1;
  while (pow2 < width)
    pow2 *= 2;
  for (int64_t off = pow2 / 2; off >= 1; off /= 2) {
    te_expr *s = ir_var_new(ctx, "warp_s", et, IR_VAR_INDEX);
    te_expr *offset = ir_int(ctx, TE_I32, off);
    te_expr *shfl =
        v && offset ? ir_call(ctx, IR_INTRIN_WARP_SHUFFLE_XOR, et, 2, (te_expr *const[]){v, offset})
                    : NULL;
    /* lane < off: the partner is pos + off, in this warp; it holds a value when < n */
    te_expr *ok =
        ir_binary(IR_AND, ir_binary(IR_LT, w->lane, ir_i64(ctx, off)),
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

/* The end of a round whose lane 0 holds the result: OUT[o] = f(OUT[o], v) under the guard. */
static ir_stmt *final_store(warp_steps *w, te_expr *v, void *guard) {
  const lw_gpu_tree *t = w->t;
  te_expr *outv = ir_load(t->out, t->out_load->dtype, t->out_index);
  te_expr *fin = outv ? lw_gpu_tree_apply(w->p, t, w->f, outv, v) : NULL;
  ir_stmt *st = fin ? ir_store(t->out, fin, t->out_index) : NULL;
  return st ? ir_if(guard, st, NULL) : NULL;
}

/* The end of the first round when several warps hold partials: lane 0 keeps its warp's result
   in SH[32 w] (threadIdx.x = 32 w in lane 0). */
static ir_stmt *warp_result_store(warp_steps *w, te_expr *v, void *n_ptr) {
  te_ctx *ctx = w->p->ctx;
  int64_t n = *(int64_t *)n_ptr;
  te_expr *cond = ir_binary(IR_AND, ir_binary(IR_EQ, w->lane, ir_i64(ctx, 0)),
                            ir_binary(IR_LT, w->tid, ir_i64(ctx, n)));
  ir_stmt *st = ir_store(w->t->sh, v, w->tid);
  return cond && st ? ir_if(cond, st, NULL) : NULL;
}

ir_stmt *lw_gpu_tree_warp(lw_pass_ctx *p, const lw_gpu_kernel *k, ir_stmt *s, const lw_gpu_tree *t,
                          te_expr *f, int64_t n) {
  te_ctx *ctx = p->ctx;
  te_expr *tid = k->idx[TE_THREAD_X];
  te_dtype et = t->sh_load->dtype;
  warp_steps w = {p, t, f, tid, ir_binary(IR_FLOORMOD, tid, ir_i64(ctx, 32))};
  te_expr *guard = s->exprs[0];
  te_expr *first = ir_load(t->sh, et, ir_binary(IR_MIN, tid, ir_i64(ctx, n - 1)));
  if (!first || !w.lane)
    return NULL;
  if (n <= 32)
    return steps_around(&w, first, n, tid, final_store, guard);
  int64_t nwarps = (n + 31) / 32;
  ir_stmt *round1 = steps_around(&w, first, n, tid, warp_result_store, &n);
  te_expr *upos = ir_binary(IR_MIN, tid, ir_i64(ctx, nwarps - 1));
  te_expr *ufirst = ir_load(t->sh, et, ir_binary(IR_MUL, upos, ir_i64(ctx, 32)));
  ir_stmt *round2 = ufirst ? steps_around(&w, ufirst, nwarps, tid, final_store, guard) : NULL;
  te_expr *warp0 = ir_binary(IR_LT, tid, ir_i64(ctx, 32));
  ir_stmt *r2 = round2 && warp0 ? ir_if(warp0, round2, NULL) : NULL;
  ir_stmt *bar = ir_barrier(ctx);
  if (!round1 || !r2 || !bar)
    return NULL;
  return ir_seq(ctx, 3, (ir_stmt *const[]){round1, bar, r2});
}
