/* softmax.c — row softmax over a 4096 x 4096 f32 matrix:
 *     Y[i, j] = exp(X[i, j] - max_k X[i, k]) / sum_k exp(X[i, k] - max_k X[i, k])
 * te vs a hand-vectorized C version, at 1 and 2 threads (the C version splits rows with OpenMP).
 *
 * te's algorithm: mx (row max), e = exp(X - mx), s (row sum of e), Y = e / s. Schedule:
 *   - extra "lanes64": each reduction is written in two levels, 64 partial lanes first
 *     (p[i, l] = red_kk X[i, 64 kk + l], the l loop innermost and vectorized: 4 zmm of
 *     independent accumulators), then the 64 lanes; without it the reductions are one scalar loop;
 *   - extra2 "rowlocal": every per-row stage computed inside the row loop of its reader (the row,
 *     16 KB, stays in L1/L2). te_compute_at wants a stage with one reader, so this form computes
 *     the max twice and inlines exp(X - max) into the sum and into Y (softmax_rowlocal); without
 *     it every stage is computed at root, each parallel over rows (softmax_shared);
 *   - element-wise loops split 64 / 16: 16 lanes vectorized, the 4 vectors unrolled;
 *   - rows in parallel.
 * The C version makes three passes over each row: max (64 partial lanes), y = exp(x - max) with
 * a vectorizable Cephes-style polynomial exp and the sum (64 lanes), then y *= 1/sum. gcc -O3
 * -march=native vectorizes every loop (restrict pointers, fixed-width partial arrays).
 * Rate: GB/s of minimal traffic (X read once, Y written once).
 */
#include "bench.h"
#include "report.h"
#include "rows_te.h"
#include "te_util.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct exp_user {
  te_tensor *x, *mx;
} exp_user;

/* exp(X[i,k] - mx[i]) */
static te_expr *elem_exp(te_ctx *ctx, te_expr *i, te_expr *k, void *user) {
  exp_user *u = user;
  te_expr *arg = te_sub(TE_AT(u->x, i, k), TE_AT(u->mx, i));
  return te_call(ctx, "exp", 1, TE_EXPRS(arg));
}

/* Row-local form (TB_EXTRA2): every per-row stage has exactly one reader, as te_compute_at
   requires, so the row max is computed twice (once for the sum, once for Y) and exp(X - max) is
   inlined into both the sum and Y:  mx -> s(_p) -> s -> Y,  mx2 -> Y. */
static void softmax_rowlocal(te_ctx *ctx, unsigned flags, const rows_shape *s, te_tensor *X,
                             tb_def *out) {
  int lanes64 = (flags & TB_EXTRA) != 0;
  te_tensor *mxp, *sp, *mx2p;
  te_tensor *mx = row_reduce(ctx, "mx", s, lanes64, 0, elem_x, X, &mxp);
  exp_user u = {X, mx};
  te_tensor *sum = row_reduce(ctx, "s", s, lanes64, 1, elem_exp, &u, &sp);
  te_tensor *mx2 = row_reduce(ctx, "mx2", s, lanes64, 0, elem_x, X, &mx2p);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  u.mx = mx2;
  te_tensor *Y = te_compute(ctx, "Y", 2, TE_EXPRS(te_int(ctx, s->rows), te_int(ctx, s->cols)),
                            TE_EXPRS(i, j), te_div(elem_exp(ctx, i, j, &u), TE_AT(sum, i)));
  out->s = te_schedule_new(ctx, 1, &Y);
  out->tensors[1] = Y;
  if (!out->s)
    return;
  te_stage *ys = te_stage_of(out->s, Y), *ss = te_stage_of(out->s, sum);
  te_stage *ms = te_stage_of(out->s, mx), *m2s = te_stage_of(out->s, mx2);
  sched_elementwise(ys, flags, 1);
  place_row_stage(ss, ys, flags);
  place_row_stage(m2s, ys, flags);
  if (sp)
    sched_partial(te_stage_of(out->s, sp), ss, flags);
  place_row_stage(ms, sp ? te_stage_of(out->s, sp) : ss, flags);
  if (mxp)
    sched_partial(te_stage_of(out->s, mxp), ms, flags);
  if (mx2p)
    sched_partial(te_stage_of(out->s, mx2p), m2s, flags);
}

/* Shared form: mx, e = exp(X - mx), s = sum e, Y = e / s, every stage at root (in parallel). */
static void softmax_shared(te_ctx *ctx, unsigned flags, const rows_shape *s, te_tensor *X,
                           tb_def *out) {
  int lanes64 = (flags & TB_TILE) && (flags & TB_EXTRA);
  te_expr *R = te_int(ctx, s->rows), *C = te_int(ctx, s->cols);
  te_tensor *mxp, *sp;
  te_tensor *mx = row_reduce(ctx, "mx", s, lanes64, 0, elem_x, X, &mxp);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  exp_user u = {X, mx};
  te_tensor *e = te_compute(ctx, "e", 2, TE_EXPRS(R, C), TE_EXPRS(i, j), elem_exp(ctx, i, j, &u));
  te_tensor *sum = row_reduce(ctx, "s", s, lanes64, 1, elem_x, e, &sp);
  te_expr *i2 = te_var(ctx, "i"), *j2 = te_var(ctx, "j");
  te_tensor *Y = te_compute(ctx, "Y", 2, TE_EXPRS(R, C), TE_EXPRS(i2, j2),
                            te_div(TE_AT(e, i2, j2), TE_AT(sum, i2)));
  out->s = te_schedule_new(ctx, 1, &Y);
  out->tensors[1] = Y;
  if (!out->s || !(flags & TB_TILE))
    return;
  te_stage *ys = te_stage_of(out->s, Y), *es = te_stage_of(out->s, e);
  sched_elementwise(ys, flags, 1);
  sched_elementwise(es, flags, 1);
  place_row_stage(te_stage_of(out->s, mx), ys, flags);
  place_row_stage(te_stage_of(out->s, sum), ys, flags);
  if (mxp)
    sched_partial(te_stage_of(out->s, mxp), ys, flags);
  if (sp)
    sched_partial(te_stage_of(out->s, sp), ys, flags);
}

static void softmax_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const rows_shape *s = params;
  te_tensor *X =
      te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(te_int(ctx, s->rows), te_int(ctx, s->cols)));
  out->ntensors = 2;
  out->tensors[0] = X;
  if ((flags & TB_TILE) && (flags & TB_EXTRA2))
    softmax_rowlocal(ctx, flags, s, X, out);
  else
    softmax_shared(ctx, flags, s, X, out);
}

/* exp(x) for x <= 0 (softmax's arguments), Cephes' expf: x = n ln2 + r, |r| <= ln2 / 2,
   e^r by a degree-6 polynomial, 2^n by building the exponent bits. Plain float operations only,
   so gcc vectorizes a loop that calls it. */
static inline float exp_nonpositive(float x) {
  x = x < -87.0f ? -87.0f : x;
  float n = floorf(x * 1.44269504088896341f + 0.5f);
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  float er = p * r * r + r + 1.0f;
  int32_t bits = ((int32_t)n + 127) << 23;
  float scale;
  memcpy(&scale, &bits, sizeof scale);
  return er * scale;
}

static void softmax_row(const float *restrict x, float *restrict y, int n) {
  float part[LANES];
  for (int l = 0; l < LANES; l++)
    part[l] = x[l];
  for (int j = LANES; j < n; j += LANES)
    for (int l = 0; l < LANES; l++)
      part[l] = x[j + l] > part[l] ? x[j + l] : part[l];
  float m = part[0];
  for (int l = 1; l < LANES; l++)
    m = part[l] > m ? part[l] : m;
  for (int l = 0; l < LANES; l++)
    part[l] = 0;
  for (int j = 0; j < n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      float v = exp_nonpositive(x[j + l] - m);
      y[j + l] = v;
      part[l] += v;
    }
  float s = 0;
  for (int l = 0; l < LANES; l++)
    s += part[l];
  float inv = 1.0f / s;
  for (int j = 0; j < n; j++)
    y[j] *= inv;
}

typedef struct softmax_data {
  rows_shape s;
  int threads;
  float *x, *y;
} softmax_data;

static int run_c(void *arg) {
  softmax_data *d = arg;
  int rows = d->s.rows, cols = d->s.cols;
#pragma omp parallel for num_threads(d->threads) schedule(static)
  for (int i = 0; i < rows; i++)
    softmax_row(d->x + (size_t)i * cols, d->y + (size_t)i * cols, cols);
  return 0;
}

static void reference(const softmax_data *d, double *ref) {
  int cols = d->s.cols;
  for (int i = 0; i < d->s.rows; i++) {
    const float *x = d->x + (size_t)i * cols;
    double m = x[0], s = 0;
    for (int j = 1; j < cols; j++)
      m = x[j] > m ? x[j] : m;
    for (int j = 0; j < cols; j++)
      s += exp((double)x[j] - m);
    for (int j = 0; j < cols; j++)
      ref[(size_t)i * cols + j] = exp((double)x[j] - m) / s;
  }
}

void wl_softmax(const bench_cfg *cfg) {
  softmax_data d = {{4096, 4096}, 1, NULL, NULL};
  if (cfg->quick)
    d.s = (rows_shape){512, 1024};
  char wl[48];
  snprintf(wl, sizeof wl, "softmax %dx%d", d.s.rows, d.s.cols);
  fprintf(stderr, "%s\n", wl);
  size_t n = (size_t)d.s.rows * d.s.cols;
  d.x = bench_alloc_f32(n);
  d.y = bench_alloc_f32(n);
  double *ref = malloc(sizeof *ref * n);
  if (!d.x || !d.y || !ref) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  bench_fill_uniform(d.x, n, -5.0f, 5.0f, 6);
  reference(&d, ref);
  bench_ref chk = {NULL, ref, NULL, 0, n, 1e-4};
  double bytes = 8.0 * (double)n;

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA | TB_EXTRA2, ladder);
  tb_kernel k;
  int have_te = tb_build(wl, "softmax", softmax_define, &d.s, ladder, nl,
                         (const char *const[2]){"lanes64", "rowlocal"}, &k);
  if (have_te) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("compile softmax", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  DLTensor tx, ty;
  int64_t sx[8], sy[8], shape[2] = {d.s.rows, d.s.cols};
  tb_tensor(&tx, sx, d.x, 2, shape);
  tb_tensor(&ty, sy, d.y, 2, shape);
  tb_args targs = {&k, {&tx, &ty}};
  rows_run_hand(cfg, wl, &targs, have_te, "c-vec",
                "3 passes, polynomial exp, gcc -O3 -march=native, OpenMP rows", run_c, &d,
                &d.threads, d.y, n, bytes, &chk);
  if (cfg->tuned_log) {
    rows_tuned tp = {d.s, cfg->tuned_log, 0};
    rows_run_tuned(cfg, wl, &tp, (DLTensor *const[]){&tx, &ty}, 2, &k, have_te, "c-vec", run_c, &d,
                   &d.threads, d.y, n, bytes, &chk);
  }
  if (have_te)
    tb_free(&k);
done:
  bench_free(d.x);
  bench_free(d.y);
  free(ref);
}
