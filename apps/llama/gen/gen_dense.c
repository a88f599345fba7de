/* gen_dense.c — te-llama's matrix-vector weight products (generation, one token), with the fused
 * epilogues a decoder layer needs. The prompt's matrix-matrix products are gen_matmul.c's.
 *
 * W is n x k, row-major (llama2.c's layout: one output per row), so a product is a dot product
 * of each row with the activations. The dot product is vectorized along k: k is split by 16
 * (the f32 lanes of a 512-bit register) and te_rfactor makes the 16 partial sums a data axis,
 * accumulated with vector FMAs and summed once at the end.
 *   One row at a time (one stream of W), its reduction split
 *       by 32 (f32) or 64 (bf16) instead of 16: 2 or 4 vectors of partial sums, independent
 *       FMA chains, so that the row is read as fast as memory delivers it (one chain of 4-cycle
 *       FMAs is slower than memory for bf16); the kernel streams W once: memory-bound. The
 *       row's 32 or 64 partial sums are then added as a tree (tree(): one te_rfactor per level,
 *       each a vector add of two halves), not as one chain of scalar adds, which at bf16 and
 *       k = 768 took longer than reading the row. Row blocks (2 or 4 rows at once) measured
 *       slower: four interleaved streams instead of one. When k is a whole number of 32-lane
 *       vectors (every model's widths), a te_specialize branch has no masked tail, 32 lanes at
 *       both precisions, and prefetches W 2 KiB ahead (te_pragma "prefetch": one prefetcht0 an
 *       iteration, 128 bytes of f32 or 64 of bf16). On Intel Emerald Rapids the hardware
 *       prefetchers alone left the bf16 kernels at 0.64-0.73 of one core's memory read
 *       bandwidth (f32: 0.95-1.0); prefetching every other line (64 lanes) 0.80-0.94, every
 *       line (32 lanes: two FMA chains are enough for a core's 10 GB/s here) 0.90-1.07
 *       (kernel_bench.c, 1 thread, CPU time, load 15). In the general schedule the prefetches
 *       kept the loop from being split into its full and masked parts.
 * Blocks of rows run in parallel. k and n are symbolic; tails are guarded.
 * Epilogues fused into the same loop nest: "add" (Y = R + W X, the residual of the attention
 * output and of the feed-forward output) and "swiglu" (Y = silu(W1 X) * (W3 X), both products
 * in one pass over X).
 * The same kernels exist with bf16 weights (tl_bf16_*): W is read as bf16 (half the bytes of the
 * memory-bound matrix-vector products) and widened to f32 in registers (te_cast: a shift of
 * each 16-bit value into the upper half of an f32 lane), so the arithmetic and its order are the
 * f32 kernels'. Not vdpbf16ps (te_tensorize): it needs the activations in bf16 too, which moves
 * the logits by about bf16's rounding (the tests hold the bf16 kernels to 1e-4 of the reference
 * on the same weights), and a hand-written probe streamed a 768 x 768 bf16 matrix only 5-10%
 * faster with it than with the widening (35 against 33 GB/s per CPU second, one thread).
 */
#include "gen.h"

#include <stddef.h>

enum {
  BF16_MV_LANES = 64,
  F32_MV_LANES = 32,
  MV_ROWS = 1,
  ROW_BLOCK = 16,
  WHOLE_MV_LANES = 32,     /* the lanes of the matvec branch for k % 32 == 0 */
  MV_PREFETCH_BYTES = 2048 /* how far ahead that branch prefetches W */
};
typedef enum { EPI_NONE, EPI_ADD, EPI_SWIGLU } epilogue;

typedef struct {
  te_ctx *ctx;
  te_expr *i; /* the output's index variable */
  te_expr *n, *k;
  te_tensor *x;
  te_dtype wtype; /* TE_F32 or TE_BF16 */
} dense_def;

/* P[i] = sum_kk X[kk] * W[i, kk]. */
static te_tensor *product(dense_def *d, const char *name, te_tensor *w) {
  te_expr *kk = te_reduce_axis(d->ctx, "kk", te_int(d->ctx, 0), d->k);
  te_expr *xv = TE_AT(d->x, kk);
  te_expr *wv = TE_AT(w, d->i, kk);
  if (!te_dtype_eq(d->wtype, TE_F32))
    wv = te_cast(TE_F32, wv);
  te_expr *body = TE_SUM(te_mul(xv, wv), kk);
  return te_compute(d->ctx, name, 1, TE_EXPRS(d->n), TE_EXPRS(d->i), body);
}

/* Splits the product's reduction by `lanes` and factors it: returns the partial sums' stage. */
static te_status factor(te_schedule *s, te_tensor *p, int64_t lanes, te_tensor **rf) {
  te_stage *st = te_stage_of(s, p);
  te_iter *ko, *ki;
  TRY(te_split(st, te_reduce_iter(st, 0), lanes, &ko, &ki));
  return te_rfactor(s, p, ki, te_tensor_ndim(p), rf);
}

enum { MAX_TREE = 8 };
/* The lanes of a matrix-vector product's partial sums added as a tree: each level is one more
   te_rfactor, which halves the lanes (2 x L/2 -> L/2, one vector add), down to one. Left to the
   product's own reduction, the lanes are a chain of 64 dependent scalar adds a row, which at
   bf16 took longer than streaming the row (0.88 of the bandwidth at k = 768; the tree brings
   the adds a row to 6 levels). tree[] gets the levels' stages, widest first. */
static te_status tree(te_schedule *s, te_tensor *p, int64_t lanes, te_tensor **levels, int *n) {
  *n = 0;
  for (; lanes > 2 && *n < MAX_TREE; lanes /= 2) {
    te_stage *st = te_stage_of(s, p);
    te_iter *o, *i;
    TRY(te_split(st, te_reduce_iter(st, 0), lanes / 2, &o, &i));
    TRY(te_rfactor(s, p, i, te_tensor_ndim(p), &levels[(*n)++]));
  }
  return TE_OK;
}

/* Places a product and its partial sums at the output's loop `at`, and blocks the partial sums
   into registers: ko outermost, then the rows, the lanes vectorized; the tree's
   levels after them, vectorized. */
static te_status place(te_schedule *s, te_stage *out, te_iter *at, te_tensor *p, te_tensor *rf,
                       te_tensor *const *levels, int nlevels, int64_t prefetch) {
  te_stage *ps = te_stage_of(s, p), *rs = te_stage_of(s, rf);
  if (ps != out)
    TRY(te_compute_at(ps, out, at));
  for (int l = nlevels - 1; l >= 0; l--) { /* readers first: the narrowest level */
    te_stage *ls = te_stage_of(s, levels[l]);
    TRY(te_compute_at(ls, out, at));
    TRY(te_vectorize(ls, te_axis(ls, 1))); /* the row, then the lanes */
  }
  TRY(te_compute_at(rs, out, at));
  te_iter *ko = te_reduce_iter(rs, 0);
  te_iter *ro, *ri;
  TRY(te_split(rs, te_axis(rs, 0), MV_ROWS, &ro, &ri));
  TRY(te_reorder(rs, 4, (te_iter *const[]){ro, ko, ri, te_axis(rs, 1)}));
  TRY(te_unroll(rs, ri));
  if (prefetch > 0)
    TRY(te_pragma(rs, ko, "prefetch", prefetch));
  return te_vectorize(rs, te_axis(rs, 1));
}

typedef struct {
  te_tensor *y, *p1, *p3; /* the output; its product(s) (p3: SwiGLU's second, else NULL) */
} dense_graph;

/* Schedules one product kernel on s (the general schedule or a te_specialize branch): the
   products' reductions split by `lanes` and factored into partial sums (added as a tree), the
   output's rows in parallel blocks, the products placed in them. prefetch > 0:
   the partial sums' loop over W prefetches that many of its iterations ahead. */
static te_status schedule_dense(te_schedule *s, const dense_graph *g, int64_t lanes,
                                int64_t prefetch) {
  te_tensor *rf1, *rf3 = NULL, *t1[MAX_TREE], *t3[MAX_TREE];
  int n1 = 0, n3 = 0;
  TRY(factor(s, g->p1, lanes, &rf1));
  if (g->p3)
    TRY(factor(s, g->p3, lanes, &rf3));
  TRY(tree(s, g->p1, lanes, t1, &n1));
  if (g->p3)
    TRY(tree(s, g->p3, lanes, t3, &n3));
  te_stage *ys = te_stage_of(s, g->y);
  te_iter *io, *ii, *iio, *iii;
  TRY(te_split(ys, te_axis(ys, 0), ROW_BLOCK, &io, &ii));
  TRY(te_split(ys, ii, MV_ROWS, &iio, &iii));
  TRY(te_parallel(ys, io));
  TRY(place(s, ys, iio, g->p1, rf1, t1, n1, prefetch));
  if (g->p3)
    TRY(place(s, ys, iio, g->p3, rf3, t3, n3, prefetch));
  return TE_OK;
}

static te_status dense(te_ctx *ctx, te_target *tgt, const char *name, epilogue epi, te_dtype wtype,
                       te_module **out) {
  dense_def d = {ctx, te_var(ctx, "i"), tl_size(ctx, "n"), tl_size(ctx, "k"), NULL, wtype};
  d.x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(d.k));
  te_tensor *w = te_placeholder(ctx, "W", wtype, 2, TE_EXPRS(d.n, d.k));
  te_tensor *w3 =
      epi == EPI_SWIGLU ? te_placeholder(ctx, "W3", wtype, 2, TE_EXPRS(d.n, d.k)) : NULL;
  te_tensor *r = NULL;
  if (epi == EPI_ADD)
    r = te_placeholder(ctx, "R", TE_F32, 1, TE_EXPRS(d.n));
  te_tensor *p1 = product(&d, epi == EPI_NONE ? "Y" : "P", w);
  te_tensor *p3 = epi == EPI_SWIGLU ? product(&d, "P3", w3) : NULL;
  te_tensor *y = p1;
  te_expr *a = TE_AT(p1, d.i);
  if (epi == EPI_ADD) {
    y = te_compute(ctx, "Y", 1, TE_EXPRS(d.n), TE_EXPRS(d.i), te_add(TE_AT(r, d.i), a));
  } else if (epi == EPI_SWIGLU) {
    te_expr *silu = te_mul(a, te_call(ctx, "sigmoid", 1, TE_EXPRS(a)));
    y = te_compute(ctx, "Y", 1, TE_EXPRS(d.n), TE_EXPRS(d.i), te_mul(silu, TE_AT(p3, d.i)));
  }
  if (!y)
    return te_last_status(ctx);

  te_schedule *s = te_schedule_new(ctx, 1, &y);
  /* bf16 matrix-vector products: 4 vectors of partial sums (four independent FMA chains); with
     one, a 4-cycle FMA per 32 bytes of bf16 weights is slower than memory */
  int64_t lanes = !te_dtype_eq(wtype, TE_F32) ? BF16_MV_LANES : F32_MV_LANES;
  dense_graph g = {y, p1, p3};
  /* k a whole number of 32-lane vectors: no masked tail, W prefetched MV_PREFETCH_BYTES ahead,
     32 lanes at bf16 too (64 bytes of W an iteration: one prefetch a cache line) */
  te_schedule *whole;
  int64_t width = te_dtype_eq(wtype, TE_F32) ? 4 : 2;
  te_expr *k_whole = te_eq(te_floormod(d.k, te_int(ctx, WHOLE_MV_LANES)), te_int(ctx, 0));
  TRY(te_specialize(s, k_whole, &whole));
  TRY(schedule_dense(whole, &g, WHOLE_MV_LANES, MV_PREFETCH_BYTES / (WHOLE_MV_LANES * width)));
  TRY(schedule_dense(s, &g, lanes, 0));

  te_tensor *args[5];
  int na = 0;
  args[na++] = d.x;
  args[na++] = w;
  if (w3)
    args[na++] = w3;
  if (r)
    args[na++] = r;
  args[na++] = y;
  return tl_finish(s, name, na, args, 0, NULL, tgt, out);
}

te_status tl_gen_matvec(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_matvec", EPI_NONE, TE_F32, o);
}
te_status tl_gen_matvec_add(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_matvec_add", EPI_ADD, TE_F32, o);
}
te_status tl_gen_matvec_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_matvec_swiglu", EPI_SWIGLU, TE_F32, o);
}
te_status tl_gen_bf16_matvec(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_bf16_matvec", EPI_NONE, TE_BF16, o);
}
te_status tl_gen_bf16_matvec_add(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_bf16_matvec_add", EPI_ADD, TE_BF16, o);
}
te_status tl_gen_bf16_matvec_swiglu(te_ctx *c, te_target *t, te_module **o) {
  return dense(c, t, "tl_bf16_matvec_swiglu", EPI_SWIGLU, TE_BF16, o);
}
