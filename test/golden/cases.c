/* cases.c — the schedules of the golden IR tests, written with the public API only.
 *
 * One builder a case; a .golden file names its builder in `# case:`. Each builder checks once at
 * the end (te's errors are sticky: a failed call makes every later one fail too).
 */
#include "golden.h"

#include <te/ops.h>

#define E(...) TE_EXPRS(__VA_ARGS__)

static bool done(golden_kernel *k, const char *name, te_schedule *sch) {
  k->name = name;
  k->sch = sch;
  if (!sch)
    return false;
  for (int i = 0; i < k->ntensors; i++)
    if (!k->tensors[i])
      return false;
  for (int i = 0; i < k->nscalars; i++)
    if (!k->scalars[i])
      return false;
  return true;
}

static te_schedule *schedule1(te_ctx *ctx, te_tensor *out) {
  return out ? te_schedule_new(ctx, 1, (te_tensor *const[]){out}) : NULL;
}

static void args(golden_kernel *k, int n, te_tensor *const ts[]) {
  k->ntensors = n;
  for (int i = 0; i < n; i++)
    k->tensors[i] = ts[i];
}

/* C[i, j] = A[i, j] + B[i, j], 16 x 8, default schedule. */
static bool elementwise_add(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *m = te_int(ctx, 16), *n = te_int(ctx, 8);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(m, n));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(m, n));
  te_tensor *c = te_compute(ctx, "C", 2, E(m, n), E(i, j), te_add(TE_AT(a, i, j), TE_AT(b, i, j)));
  args(k, 3, (te_tensor *const[]){a, b, c});
  return done(k, "add", schedule1(ctx, c));
}

/* C[i, j] = sum_k A[i, k] * B[k, j] of m x l by l x n; the arguments are A, B, C. */
static te_tensor *matmul(te_ctx *ctx, golden_kernel *k, int64_t m, int64_t n, int64_t l) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *em = te_int(ctx, m), *en = te_int(ctx, n), *el = te_int(ctx, l);
  te_expr *r = te_reduce_axis(ctx, "k", te_int(ctx, 0), el);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(em, el));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(el, en));
  te_tensor *c = te_compute(ctx, "C", 2, E(em, en), E(i, j),
                            TE_SUM(te_mul(TE_AT(a, i, r), TE_AT(b, r, j)), r));
  args(k, 3, (te_tensor *const[]){a, b, c});
  return c;
}

/* 100 x 100 x 100 matmul, default schedule. */
static bool matmul_default(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 100, 100, 100);
  return done(k, "matmul", schedule1(ctx, c));
}

/* 100 x 100 x 100 matmul, i and j tiled by 32 (not dividing), k split by 4, loops ordered
   i.o, j.o, k.o, i.i, k.i, j.i: the steady-state body must have no condition. */
static bool matmul_tiled(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 100, 100, 100);
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  if (te_tile(st, te_axis(st, 0), te_axis(st, 1), 32, 32, &io, &jo, &ii, &ji) != TE_OK ||
      te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki) != TE_OK ||
      te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}) != TE_OK)
    return false;
  return done(k, "matmul_tiled", s);
}

/* B[i, j] = A[j, i], A 37 x 53. */
static bool transpose(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(te_int(ctx, 37), te_int(ctx, 53)));
  te_tensor *b =
      te_compute(ctx, "B", 2, E(te_int(ctx, 53), te_int(ctx, 37)), E(i, j), TE_AT(a, j, i));
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "transpose", schedule1(ctx, b));
}

/* B[i] = sum_{j, l} A[i, j, l], A 8 x 16 x 4. */
static bool sum_two_axes(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i");
  te_expr *j = te_reduce_axis(ctx, "j", te_int(ctx, 0), te_int(ctx, 16));
  te_expr *l = te_reduce_axis(ctx, "l", te_int(ctx, 0), te_int(ctx, 4));
  te_tensor *a =
      te_placeholder(ctx, "A", TE_F32, 3, E(te_int(ctx, 8), te_int(ctx, 16), te_int(ctx, 4)));
  te_tensor *b = te_compute(ctx, "B", 1, E(te_int(ctx, 8)), E(i), TE_SUM(TE_AT(a, i, j, l), j, l));
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "sum2", schedule1(ctx, b));
}

/* T[i] = A[i] * 2 inlined into C[i] = T[i] + 1, 64 elements. */
static bool inline_producer(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 64);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *t = te_compute(ctx, "T", 1, E(n), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(t, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  if (!s || te_compute_inline(te_stage_of(s, t)) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "inline", s);
}

/* C[i, j] = alpha * A[i, j] + B[i, j] over symbolic n x m, default schedule. */
static bool symbolic_axpy(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *n = te_var(ctx, "n"), *m = te_var(ctx, "m");
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(n, m));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(n, m));
  te_tensor *c = te_compute(ctx, "C", 2, E(n, m), E(i, j),
                            te_add(te_mul(alpha, TE_AT(a, i, j)), TE_AT(b, i, j)));
  args(k, 3, (te_tensor *const[]){a, b, c});
  k->nscalars = 1;
  k->scalars[0] = alpha;
  return done(k, "axpy", schedule1(ctx, c));
}

/* C[i] = A[i] + 1 over symbolic n, i split by 16: a guarded tail of symbolic length. */
static bool symbolic_split(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(a, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split(st, te_axis(st, 0), 16, &o, &in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "split_n", s);
}

/* C[i] = A[i] * 2 over 100 elements, split into 3 parts (34 each: the last one guarded). */
static bool split_nparts(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 100);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_mul(TE_AT(a, i), te_float(ctx, TE_F32, 2)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split_nparts(st, te_axis(st, 0), 3, &o, &in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "split_nparts", s);
}

/* B[i, j] = A[i, j] * 2 over 20 x 30 with i and j fused into one loop. */
static bool fuse(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *m = te_int(ctx, 20), *n = te_int(ctx, 30);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(m, n));
  te_tensor *b =
      te_compute(ctx, "B", 2, E(m, n), E(i, j), te_mul(TE_AT(a, i, j), te_float(ctx, TE_F32, 2)));
  te_schedule *s = schedule1(ctx, b);
  te_stage *st = s ? te_stage_of(s, b) : NULL;
  te_iter *f;
  if (te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "fuse", s);
}

/* 100-element C[i] = A[i] + 1, i split by 8 and the inner loop unrolled (tail: 4 copies). */
static bool unroll_split(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_int(ctx, 100);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_add(TE_AT(a, i), te_float(ctx, TE_F32, 1)));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split(st, te_axis(st, 0), 8, &o, &in) != TE_OK || te_unroll(st, in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "unroll", s);
}

/* 16 x 16 x 100 matmul, k split by 8 (not dividing): the reduction's tail is peeled. */
static bool matmul_k_tail(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 16, 16, 100);
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *ko, *ki;
  if (te_split(st, te_reduce_iter(st, 0), 8, &ko, &ki) != TE_OK)
    return false;
  return done(k, "matmul_k_tail", s);
}

/* ---------------------------------------------------------------- multi-stage schedules */


static te_expr *f32(te_ctx *ctx, double v) { return te_float(ctx, TE_F32, v); }

/* Halide's two-stage blur over In[26, 66] (rows y, columns x):
     blur_x[y, x] = (In[y, x] + In[y, x+1] + In[y, x+2]) / 3          [26, 64]
     blur_y[y, x] = (blur_x[y, x] + blur_x[y+1, x] + blur_x[y+2, x]) / 3   [24, 64]
   blur_y is tiled 8 x 32 and blur_x computed at blur_y's x.o: each tile computes the 10 x 32
   rows of blur_x it needs (a halo of 2 rows), into a 10 x 32 buffer. */
static bool blur_tiles(te_ctx *ctx, golden_kernel *k, bool parallel_vec) {
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x");
  te_expr *one = te_int(ctx, 1), *two = te_int(ctx, 2), *third = f32(ctx, 3);
  te_tensor *in = te_placeholder(ctx, "In", TE_F32, 2, E(te_int(ctx, 26), te_int(ctx, 66)));
  te_tensor *bx = te_compute(
      ctx, "blur_x", 2, E(te_int(ctx, 26), te_int(ctx, 64)), E(y, x),
      te_div(te_add(te_add(TE_AT(in, y, x), TE_AT(in, y, te_add(x, one))), TE_AT(in, y, te_add(x, two))),
             third));
  te_tensor *by = te_compute(
      ctx, "blur_y", 2, E(te_int(ctx, 24), te_int(ctx, 64)), E(y, x),
      te_div(te_add(te_add(TE_AT(bx, y, x), TE_AT(bx, te_add(y, one), x)), TE_AT(bx, te_add(y, two), x)),
             third));
  te_schedule *s = schedule1(ctx, by);
  te_stage *sy = s ? te_stage_of(s, by) : NULL, *sx = s ? te_stage_of(s, bx) : NULL;
  te_iter *yo, *xo, *yi, *xi;
  if (te_tile(sy, te_axis(sy, 0), te_axis(sy, 1), 8, 32, &yo, &xo, &yi, &xi) != TE_OK ||
      te_compute_at(sx, sy, xo) != TE_OK)
    return false;
  if (parallel_vec) {
    te_iter *xio, *xii, *bxo, *bxi;
    if (te_parallel(sy, yo) != TE_OK || te_split(sy, xi, 8, &xio, &xii) != TE_OK ||
        te_vectorize(sy, xii) != TE_OK ||
        te_split(sx, te_axis(sx, 1), 8, &bxo, &bxi) != TE_OK || te_vectorize(sx, bxi) != TE_OK)
      return false;
  }
  args(k, 2, (te_tensor *const[]){in, by});
  return done(k, parallel_vec ? "blur_parallel" : "blur", s);
}
static bool blur_compute_at(te_ctx *ctx, golden_kernel *k) { return blur_tiles(ctx, k, false); }
static bool blur_parallel_vec(te_ctx *ctx, golden_kernel *k) { return blur_tiles(ctx, k, true); }

/* conv2d NCHW, data [1, 3, 8, 8], kernel [4, 3, 3, 3], padding 1: out [1, 4, 8, 8], with the
   padding stage inlined into the convolution (its bounds test becomes a select). */
static bool conv2d_pad_inline(te_ctx *ctx, golden_kernel *k) {
  te_tensor *d = te_placeholder(ctx, "data", TE_F32, 4,
                                E(te_int(ctx, 1), te_int(ctx, 3), te_int(ctx, 8), te_int(ctx, 8)));
  te_tensor *w = te_placeholder(ctx, "w", TE_F32, 4,
                                E(te_int(ctx, 4), te_int(ctx, 3), te_int(ctx, 3), te_int(ctx, 3)));
  te_conv2d_params p = {.pad_h = 1, .pad_w = 1};
  te_tensor *c = te_op_conv2d_nchw(ctx, d, w, &p, "conv");
  te_schedule *s = schedule1(ctx, c);
  if (!s || te_compute_inline(te_stage_of(s, te_op_stage(c, "pad"))) != TE_OK)
    return false;
  args(k, 3, (te_tensor *const[]){d, w, c});
  return done(k, "conv2d", s);
}

/* TVM's "How to optimize GEMM on CPU", steps 1-5, on 1024^3 (bn = 32, kfactor = 4).
   C[m, n] = sum_k A[m, k] * B[k, n]; with packing (steps 3-5) B is first packed into
   B_packed[n / 32, k, n % 32] = B[k, (n / 32) * 32 + n % 32] and C reads
   B_packed[n / 32, k, n % 32]. */
enum { GEMM_BLOCKING = 1, GEMM_PERMUTATION, GEMM_PACKING, GEMM_WRITE_CACHE, GEMM_PARALLEL };

static bool gemm_step(te_ctx *ctx, golden_kernel *k, int step) {
  const int64_t M = 1024, N = 1024, K = 1024, bn = 32;
  te_expr *m = te_var(ctx, "m"), *n = te_var(ctx, "n");
  te_expr *ek = te_int(ctx, K), *ebn = te_int(ctx, bn);
  te_expr *r = te_reduce_axis(ctx, "k", te_int(ctx, 0), ek);
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(te_int(ctx, M), ek));
  te_tensor *b = te_placeholder(ctx, "B", TE_F32, 2, E(ek, te_int(ctx, N)));
  te_tensor *packed = NULL;
  te_expr *bval = TE_AT(b, r, n);
  if (step >= GEMM_PACKING) {
    te_expr *bign = te_var(ctx, "bigN"), *kk = te_var(ctx, "k"), *littlen = te_var(ctx, "littleN");
    packed = te_compute(ctx, "B_packed", 3, E(te_int(ctx, N / bn), ek, ebn), E(bign, kk, littlen),
                        TE_AT(b, kk, te_add(te_mul(bign, ebn), littlen)));
    bval = TE_AT(packed, te_floordiv(n, ebn), r, te_floormod(n, ebn));
  }
  te_tensor *c = te_compute(ctx, "C", 2, E(te_int(ctx, M), te_int(ctx, N)), E(m, n),
                            TE_SUM(te_mul(TE_AT(a, m, r), bval), r));
  te_schedule *s = schedule1(ctx, c);
  if (!s)
    return false;
  te_tensor *cc = NULL;
  if (step >= GEMM_WRITE_CACHE && te_cache_write(s, c, TE_SCOPE_LOCAL, &cc) != TE_OK)
    return false;
  te_stage *sc = te_stage_of(s, c);
  te_iter *mo, *no, *mi, *ni, *ko, *ki;
  if (te_tile(sc, te_axis(sc, 0), te_axis(sc, 1), bn, bn, &mo, &no, &mi, &ni) != TE_OK)
    return false;
  if (step < GEMM_WRITE_CACHE) {
    if (te_split(sc, te_reduce_iter(sc, 0), 4, &ko, &ki) != TE_OK)
      return false;
    te_iter *order1[] = {mo, no, ko, ki, mi, ni}; /* step 1: blocking */
    te_iter *order2[] = {mo, no, ko, mi, ki, ni}; /* steps 2, 3: ki inside, ni innermost */
    if (te_reorder(sc, 6, step == GEMM_BLOCKING ? order1 : order2) != TE_OK)
      return false;
    if (step >= GEMM_PERMUTATION && te_vectorize(sc, ni) != TE_OK)
      return false;
  } else {
    /* steps 4, 5: the tile accumulates in C_local, computed at the tile loop no */
    te_stage *scc = te_stage_of(s, cc);
    te_iter *mc, *nc;
    if (te_compute_at(scc, sc, no) != TE_OK)
      return false;
    mc = te_axis(scc, 0);
    nc = te_axis(scc, 1);
    if (te_split(scc, te_reduce_iter(scc, 0), 4, &ko, &ki) != TE_OK ||
        te_reorder(scc, 4, (te_iter *const[]){ko, mc, ki, nc}) != TE_OK ||
        te_vectorize(scc, nc) != TE_OK || te_unroll(scc, ki) != TE_OK)
      return false;
    if (step >= GEMM_PARALLEL && te_parallel(sc, mo) != TE_OK)
      return false;
  }
  if (packed) {
    te_stage *sp = te_stage_of(s, packed);
    if (te_vectorize(sp, te_axis(sp, 2)) != TE_OK || te_parallel(sp, te_axis(sp, 0)) != TE_OK)
      return false;
  }
  args(k, 3, (te_tensor *const[]){a, b, c});
  static const char *const names[] = {"", "gemm_blocking", "gemm_permutation", "gemm_packing",
                                      "gemm_write_cache", "gemm_parallel"};
  return done(k, names[step], s);
}
static bool gemm_1_blocking(te_ctx *ctx, golden_kernel *k) { return gemm_step(ctx, k, 1); }
static bool gemm_2_permutation(te_ctx *ctx, golden_kernel *k) { return gemm_step(ctx, k, 2); }
static bool gemm_3_packing(te_ctx *ctx, golden_kernel *k) { return gemm_step(ctx, k, 3); }
static bool gemm_4_write_cache(te_ctx *ctx, golden_kernel *k) { return gemm_step(ctx, k, 4); }
static bool gemm_5_parallel(te_ctx *ctx, golden_kernel *k) { return gemm_step(ctx, k, 5); }

/* te_op_softmax over x[4, 10]: stages softmax_max, softmax_exp, softmax_sum, softmax. */
static te_tensor *softmax_workload(te_ctx *ctx, golden_kernel *k, te_tensor **x) {
  *x = te_placeholder(ctx, "x", TE_F32, 2, E(te_int(ctx, 4), te_int(ctx, 10)));
  te_tensor *sm = te_op_softmax(ctx, *x, "softmax");
  args(k, 2, (te_tensor *const[]){*x, sm});
  return sm;
}

static bool softmax_default(te_ctx *ctx, golden_kernel *k) {
  te_tensor *x;
  te_tensor *sm = softmax_workload(ctx, k, &x);
  return done(k, "softmax", schedule1(ctx, sm));
}

/* Softmax scheduled as TVM's CPU softmax: softmax_max, softmax_exp and softmax_sum all computed
   at the output's row loop, so one row's max, exps and sum live in small buffers inside it
   (softmax_exp is read by softmax_sum and by the output, both inside that loop). */
static bool softmax_compute_at(te_ctx *ctx, golden_kernel *k) {
  te_tensor *x;
  te_tensor *sm = softmax_workload(ctx, k, &x);
  te_schedule *s = schedule1(ctx, sm);
  te_stage *so = s ? te_stage_of(s, sm) : NULL;
  static const char *const inner[] = {"sum", "exp", "max"}; /* readers first */
  for (int i = 0; i < 3 && so; i++)
    if (te_compute_at(te_stage_of(s, te_op_stage(sm, inner[i])), so, te_axis(so, 0)) != TE_OK)
      return false;
  return done(k, "softmax_at", s);
}

/* A long sum B[i] = sum_k A[i, k], A 4 x 1000: k split by 16 and its inner part k.i
   rfactored into B_rf[k.i, i] (16 partial sums a row), then B sums B_rf over k.i. */
static bool rfactor_sum(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i");
  te_expr *r = te_reduce_axis(ctx, "k", te_int(ctx, 0), te_int(ctx, 1000));
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 2, E(te_int(ctx, 4), te_int(ctx, 1000)));
  te_tensor *b = te_compute(ctx, "B", 1, E(te_int(ctx, 4)), E(i), TE_SUM(TE_AT(a, i, r), r));
  te_schedule *s = schedule1(ctx, b);
  te_stage *sb = s ? te_stage_of(s, b) : NULL;
  te_iter *ko, *ki;
  te_tensor *rf;
  if (te_split(sb, te_reduce_iter(sb, 0), 16, &ko, &ki) != TE_OK ||
      te_rfactor(s, b, ki, 0, &rf) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, b});
  return done(k, "rfactor_sum", s);
}

/* 32 x 32 x 32 matmul, i and j tiled 4 x 16, loops i.o, j.o, k, i.i, j.i, j.i vectorized: the
   inner loop is one vector statement (ramps for C and B, a broadcast of A[i, k]). */
static bool matmul_vectorized(te_ctx *ctx, golden_kernel *k) {
  te_tensor *c = matmul(ctx, k, 32, 32, 32);
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *io, *jo, *ii, *ji;
  if (te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 16, &io, &jo, &ii, &ji) != TE_OK ||
      te_reorder(st, 5, (te_iter *const[]){io, jo, te_reduce_iter(st, 0), ii, ji}) != TE_OK ||
      te_vectorize(st, ji) != TE_OK)
    return false;
  return done(k, "matmul_vec", s);
}

/* C[i] = exp(A[i]) over symbolic n, split by 16 and vectorized: full vectors in the steady
   state, a masked vector of at most 15 lanes for the tail. */
static bool vectorize_masked_tail(te_ctx *ctx, golden_kernel *k) {
  te_expr *i = te_var(ctx, "i"), *n = te_var(ctx, "n");
  te_tensor *a = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *c = te_compute(ctx, "C", 1, E(n), E(i), te_call(ctx, "exp", 1, E(TE_AT(a, i))));
  te_schedule *s = schedule1(ctx, c);
  te_stage *st = s ? te_stage_of(s, c) : NULL;
  te_iter *o, *in;
  if (te_split(st, te_axis(st, 0), 16, &o, &in) != TE_OK || te_vectorize(st, in) != TE_OK)
    return false;
  args(k, 2, (te_tensor *const[]){a, c});
  return done(k, "vexp", s);
}

const golden_case golden_cases[] = {
    {"matmul_k_tail", matmul_k_tail},
    {"elementwise_add", elementwise_add},
    {"matmul_default", matmul_default},
    {"matmul_tiled", matmul_tiled},
    {"transpose", transpose},
    {"sum_two_axes", sum_two_axes},
    {"inline_producer", inline_producer},
    {"symbolic_axpy", symbolic_axpy},
    {"symbolic_split", symbolic_split},
    {"split_nparts", split_nparts},
    {"fuse", fuse},
    {"unroll_split", unroll_split},
    {"blur_compute_at", blur_compute_at},
    {"blur_parallel_vec", blur_parallel_vec},
    {"conv2d_pad_inline", conv2d_pad_inline},
    {"gemm_1_blocking", gemm_1_blocking},
    {"gemm_2_permutation", gemm_2_permutation},
    {"gemm_3_packing", gemm_3_packing},
    {"gemm_4_write_cache", gemm_4_write_cache},
    {"gemm_5_parallel", gemm_5_parallel},
    {"softmax_default", softmax_default},
    {"softmax_compute_at", softmax_compute_at},
    {"rfactor_sum", rfactor_sum},
    {"matmul_vectorized", matmul_vectorized},
    {"vectorize_masked_tail", vectorize_masked_tail},
};
const int golden_ncases = (int)(sizeof golden_cases / sizeof golden_cases[0]);
