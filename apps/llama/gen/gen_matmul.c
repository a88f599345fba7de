/* gen_matmul.c — te-llama's prompt products (T tokens at once): Y[t, i] = sum_k X[t, k] W[i, k]
 * with the fused epilogues of gen_dense.c ("add": Y = R + W X; "swiglu": silu(W1 X) * (W3 X)),
 * f32 and bf16 weights (f32 arithmetic: bf16 W widened by a stage Wf = f32(W), which the SGEMM
 * schedule computes once per block of rows and the blocked dots inline into their loads).
 *
 * Two schedules of the one computation, chosen per call by te_specialize on T:
 *   T % 32 == 0 (the SGEMM one, bench/sgemm_schedule.c's shape turned around): the tokens are
 *       the vector axis. X is packed once per call into panels Xp[t / 16][k][t % 16] (a
 *       te_cache_read laid out by te_reorder_storage), so 16 tokens' values of one k are one
 *       vector load; W stays in llama2.c's layout and each weight W[i, k] is one broadcast. The
 *       register tile is 32 tokens x 12 rows: 24 zmm accumulators, fed per k by 2 vector loads
 *       and 12 broadcasts (the 24 FMAs bound it, not the loads). It accumulates into a local
 *       block of 32 tokens x 48 rows (stored row by row of W, tokens contiguous), computed at
 *       the output's tile; k runs in blocks of 256 outside the row tiles, so the 32 KB slab of
 *       Xp stays in L1 while the block's 4 row tiles pass over it, and the 48 rows of W
 *       (48 x k floats: 147 KB at k = 768) stay in L2 while every token tile passes over them.
 *       Blocks of 48 rows run in parallel. Packing W instead (its rows the vector axis, as an
 *       SGEMM packs B) would copy the whole matrix per call; X is T x k, the small operand.
 *   otherwise (gen_dense.c's first schedule, kept for small T and odd T): 4 tokens x 4 rows of
 *       accumulators, each a vector of 16 partial sums along k (te_rfactor), inside blocks of
 *       16 rows of W. It wastes nothing on a partial tile of tokens, where a 32-token vector tile
 *       computes all 32: below 32 tokens it is the faster one.
 * model_te.c calls the kernel on the prompt's largest multiple of 32 tokens and then on the rest,
 * so every prompt takes the SGEMM schedule for all but at most 31 of its tokens. (A partial last
 * token tile inside the SGEMM schedule, X's panels padded and the accumulator's tokens rounded
 * up, lost to the blocked dots at every T: the rounded-up tile's extents still depend on T, and
 * the unrolled register tile then carries a guard on every FMA.)
 * k, n and T are symbolic; tails (of n by 12 and 48, of k by 256 and 16) are guarded or, for the
 * accumulator's rows, rounded up into its padded local block.
 */
#include "gen.h"

#include <stddef.h>

enum {
  DOT_LANES = 16, /* the blocked-dot schedule: f32 lanes of k's partial sums */
  DOT_ROWS = 4,
  DOT_TOKENS = 4,
  DOT_ROW_BLOCK = 16,
  MM_TOKENS = 32, /* the SGEMM schedule: a token tile, 2 vectors */
  MM_VEC = 16,    /* f32 lanes of tokens */
  MM_ROWS = 12,   /* rows of W in its register tile */
  MM_BLOCK = 48,  /* rows of W in a parallel block */
  MM_KC = 256     /* k block */
};
typedef enum { EPI_NONE, EPI_ADD, EPI_SWIGLU } epilogue;

typedef struct {
  te_ctx *ctx;
  te_expr *t, *i, *T, *n, *k;
  te_tensor *x, *w, *w3, *r;
  te_tensor *wf, *wf3;    /* bf16 weights widened to f32 (NULL for f32 weights) */
  te_tensor *p1, *p3, *y; /* the products (p1 is y when there is no epilogue) */
  te_dtype wtype;
} mm_def;

/* Wf[i, kk] = f32(W[i, kk]): a stage of its own, so that the SGEMM schedule widens a block of
   rows once for all its token tiles (a widened broadcast in the register tile is three
   instructions, two of them on the FMA ports) and the blocked-dot one inlines it. */
static te_tensor *widen(mm_def *d, const char *name, te_tensor *w) {
  te_expr *i = te_var(d->ctx, "wi"), *kk = te_var(d->ctx, "wk");
  return te_compute(d->ctx, name, 2, TE_EXPRS(d->n, d->k), TE_EXPRS(i, kk),
                    te_cast(TE_F32, TE_AT(w, i, kk)));
}

/* P[t, i] = sum_kk X[t, kk] * W[i, kk] (W f32 or widened) */
static te_tensor *product(mm_def *d, const char *name, te_tensor *w) {
  te_expr *kk = te_reduce_axis(d->ctx, "kk", te_int(d->ctx, 0), d->k);
  te_expr *body = TE_SUM(te_mul(TE_AT(d->x, d->t, kk), TE_AT(w, d->i, kk)), kk);
  return te_compute(d->ctx, name, 2, TE_EXPRS(d->T, d->n), TE_EXPRS(d->t, d->i), body);
}

static te_status define(mm_def *d, epilogue epi) {
  te_ctx *ctx = d->ctx;
  d->x = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(d->T, d->k));
  d->w = te_placeholder(ctx, "W", d->wtype, 2, TE_EXPRS(d->n, d->k));
  d->w3 = epi == EPI_SWIGLU ? te_placeholder(ctx, "W3", d->wtype, 2, TE_EXPRS(d->n, d->k)) : NULL;
  d->r = epi == EPI_ADD ? te_placeholder(ctx, "R", TE_F32, 2, TE_EXPRS(d->T, d->n)) : NULL;
  if (!te_dtype_eq(d->wtype, TE_F32)) {
    d->wf = widen(d, "Wf", d->w);
    d->wf3 = d->w3 ? widen(d, "Wf3", d->w3) : NULL;
  }
  d->p1 = product(d, epi == EPI_NONE ? "Y" : "P", d->wf ? d->wf : d->w);
  d->p3 = epi == EPI_SWIGLU ? product(d, "P3", d->wf3 ? d->wf3 : d->w3) : NULL;
  d->y = d->p1;
  te_expr *a = TE_AT(d->p1, d->t, d->i);
  if (epi == EPI_ADD) {
    d->y = te_compute(ctx, "Y", 2, TE_EXPRS(d->T, d->n), TE_EXPRS(d->t, d->i),
                      te_add(TE_AT(d->r, d->t, d->i), a));
  } else if (epi == EPI_SWIGLU) {
    te_expr *silu = te_mul(a, te_call(ctx, "sigmoid", 1, TE_EXPRS(a)));
    d->y = te_compute(ctx, "Y", 2, TE_EXPRS(d->T, d->n), TE_EXPRS(d->t, d->i),
                      te_mul(silu, TE_AT(d->p3, d->t, d->i)));
  }
  return d->y ? TE_OK : te_last_status(ctx);
}

/* Splits product p's reduction by 16 and factors it (te_rfactor): *rf gets the partial sums. */
static te_status dot_factor(te_schedule *s, te_tensor *p, te_tensor **rf) {
  te_stage *ps = te_stage_of(s, p);
  te_iter *ko, *ki;
  TRY(te_split(ps, te_reduce_iter(ps, 0), DOT_LANES, &ko, &ki));
  return te_rfactor(s, p, ki, 2, rf);
}

/* Places product p and its partial sums rf at the output's loop `at`: a 4 tokens x 4 rows
   register block of partial-sum vectors, ko outermost, the lanes vectorized. */
static te_status dot_place(te_schedule *s, te_stage *out, te_iter *at, te_tensor *p,
                           te_tensor *rf) {
  te_stage *ps = te_stage_of(s, p), *rs = te_stage_of(s, rf);
  if (ps != out)
    TRY(te_compute_at(ps, out, at));
  TRY(te_compute_at(rs, out, at));
  te_iter *ko = te_reduce_iter(rs, 0), *ro, *ri, *to, *ti;
  TRY(te_split(rs, te_axis(rs, 0), DOT_TOKENS, &to, &ti));
  TRY(te_split(rs, te_axis(rs, 1), DOT_ROWS, &ro, &ri));
  TRY(te_reorder(rs, 6, (te_iter *const[]){to, ro, ko, ti, ri, te_axis(rs, 2)}));
  TRY(te_unroll(rs, ti));
  TRY(te_unroll(rs, ri));
  return te_vectorize(rs, te_axis(rs, 2));
}

/* The blocked-dot schedule (small or odd T), gen_dense.c's batched one: rows of W in blocks of
   16, tokens by 4, rows by 4. */
static te_status schedule_dot(te_schedule *s, const mm_def *d) {
  if (d->wf) /* widened where it is read, in registers */
    TRY(te_compute_inline(te_stage_of(s, d->wf)));
  if (d->wf3)
    TRY(te_compute_inline(te_stage_of(s, d->wf3)));
  te_tensor *rf1, *rf3 = NULL;
  TRY(dot_factor(s, d->p1, &rf1));
  if (d->p3)
    TRY(dot_factor(s, d->p3, &rf3));
  te_stage *ys = te_stage_of(s, d->y);
  te_iter *io, *ii, *to, *ti, *iio, *iii;
  TRY(te_split(ys, te_axis(ys, 1), DOT_ROW_BLOCK, &io, &ii));
  TRY(te_split(ys, te_axis(ys, 0), DOT_TOKENS, &to, &ti));
  TRY(te_split(ys, ii, DOT_ROWS, &iio, &iii));
  TRY(te_reorder(ys, 5, (te_iter *const[]){io, to, iio, ti, iii}));
  TRY(te_parallel(ys, io));
  TRY(dot_place(s, ys, iio, d->p1, rf1));
  if (d->p3)
    TRY(dot_place(s, ys, iio, d->p3, rf3));
  return TE_OK;
}

/* The SGEMM schedule's register tile for accumulator stage acc (axes t, i; reduce kk), computed
   at the output's token tile `at`: stored rows of W outer, tokens contiguous; ko, row tiles,
   ki, then 12 rows x 2 vectors of 16 tokens (unrolled, vectorized). Rows past n round up into
   the padded block (W's reads clamped), so the tile has no guard. */
static te_status mm_place(te_schedule *s, te_stage *out, te_iter *at, te_tensor *acc) {
  te_stage *as = te_stage_of(s, acc);
  te_iter *t = te_axis(as, 0), *i = te_axis(as, 1);
  TRY(te_compute_at(as, out, at));
  TRY(te_reorder_storage(as, 2, (te_iter *const[]){i, t}));
  te_iter *tvo, *tvi, *ro, *ri, *ko, *ki;
  TRY(te_set_tail(as, i, TE_TAIL_ROUND_UP));
  TRY(te_split(as, t, MM_VEC, &tvo, &tvi));
  TRY(te_split(as, i, MM_ROWS, &ro, &ri));
  TRY(te_split(as, te_reduce_iter(as, 0), MM_KC, &ko, &ki));
  TRY(te_reorder(as, 6, (te_iter *const[]){ko, ro, ki, ri, tvo, tvi}));
  TRY(te_unroll(as, ri));
  TRY(te_unroll(as, tvo));
  return te_vectorize(as, tvi);
}

/* bf16 weights: the row block's rows of W widened to f32 once per block (at the output's row
   block loop `at`: 48 x k floats, in L2 while every token tile reads them), 16 at a time. */
static te_status mm_widen(te_schedule *s, te_stage *out, te_iter *at, te_tensor *wf) {
  te_stage *ws = te_stage_of(s, wf);
  te_iter *ko, *ki;
  TRY(te_compute_at(ws, out, at));
  TRY(te_split(ws, te_axis(ws, 1), MM_VEC, &ko, &ki));
  return te_vectorize(ws, ki);
}

/* The SGEMM schedule (T a multiple of 32): X packed into panels of 16 tokens at root (the
   panels in parallel, 16 rows gathered into each vector store), the output tiled 48 rows x 32
   tokens, its accumulators computed per tile. */
static te_status schedule_mm(te_schedule *s, const mm_def *d) {
  te_tensor *acc1 = d->p1, *acc3 = d->p3;
  if (d->p1 == d->y) /* the output is the product: accumulate in a local block */
    TRY(te_cache_write(s, d->y, TE_SCOPE_LOCAL, &acc1));
  te_stage *readers[2] = {te_stage_of(s, acc1), acc3 ? te_stage_of(s, acc3) : NULL};
  te_tensor *xp;
  TRY(te_cache_read(s, d->x, TE_SCOPE_GLOBAL, acc3 ? 2 : 1, readers, &xp));
  te_stage *xs = te_stage_of(s, xp);
  te_iter *xo, *xi;
  TRY(te_split(xs, te_axis(xs, 0), MM_VEC, &xo, &xi));
  TRY(te_reorder_storage(xs, 3, (te_iter *const[]){xo, te_axis(xs, 1), xi}));
  TRY(te_reorder(xs, 3, (te_iter *const[]){xo, te_axis(xs, 1), xi}));
  TRY(te_vectorize(xs, xi));
  TRY(te_parallel(xs, xo));

  te_stage *ys = te_stage_of(s, d->y);
  te_iter *io, *ii, *to, *ti, *iio, *iii;
  TRY(te_split(ys, te_axis(ys, 1), MM_BLOCK, &io, &ii));
  TRY(te_split(ys, te_axis(ys, 0), MM_TOKENS, &to, &ti));
  TRY(te_split(ys, ii, MM_VEC, &iio, &iii));
  TRY(te_reorder(ys, 5, (te_iter *const[]){io, to, ti, iio, iii}));
  TRY(te_vectorize(ys, iii));
  TRY(te_parallel(ys, io));
  TRY(mm_place(s, ys, to, acc1));
  if (acc3)
    TRY(mm_place(s, ys, to, acc3));
  if (d->wf)
    TRY(mm_widen(s, ys, io, d->wf));
  if (d->wf3)
    TRY(mm_widen(s, ys, io, d->wf3));
  return TE_OK;
}

static te_status matmul(te_ctx *ctx, te_target *tgt, const char *name, epilogue epi, te_dtype wtype,
                        te_module **out) {
  mm_def d = {.ctx = ctx,
              .t = te_var(ctx, "t"),
              .i = te_var(ctx, "i"),
              .T = tl_size(ctx, "T"),
              .n = tl_size(ctx, "n"),
              .k = tl_size(ctx, "k"),
              .wtype = wtype};
  TRY(define(&d, epi));
  te_schedule *s = te_schedule_new(ctx, 1, &d.y), *mm;
  if (!s)
    return te_last_status(ctx);
  te_expr *whole = te_eq(te_floormod(d.T, te_int(ctx, MM_TOKENS)), te_int(ctx, 0));
  TRY(te_specialize(s, whole, &mm));
  TRY(schedule_mm(mm, &d));
  TRY(schedule_dot(s, &d));
  te_tensor *args[5];
  int na = 0;
  args[na++] = d.x;
  args[na++] = d.w;
  if (d.w3)
    args[na++] = d.w3;
  if (d.r)
    args[na++] = d.r;
  args[na++] = d.y;
  return tl_finish(s, name, na, args, 0, NULL, tgt, out);
}

te_status tl_gen_matmul(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_matmul", EPI_NONE, TE_F32, o);
}
te_status tl_gen_matmul_add(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_matmul_add", EPI_ADD, TE_F32, o);
}
te_status tl_gen_matmul_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_matmul_swiglu", EPI_SWIGLU, TE_F32, o);
}
te_status tl_gen_bf16_matmul(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_bf16_matmul", EPI_NONE, TE_BF16, o);
}
te_status tl_gen_bf16_matmul_add(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_bf16_matmul_add", EPI_ADD, TE_BF16, o);
}
te_status tl_gen_bf16_matmul_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return matmul(c, t, "tl_bf16_matmul_swiglu", EPI_SWIGLU, TE_BF16, o);
}
