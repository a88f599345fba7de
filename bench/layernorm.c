/* layernorm.c — layer normalization over the rows of a 4096 x 4096 f32 matrix:
 *     mean[i] = sum_k X[i,k] / C;   var[i] = sum_k (X[i,k] - mean[i])^2 / C
 *     Y[i,j]  = (X[i,j] - mean[i]) * rsqrt(var[i] + 1e-5) * gamma[j] + beta[j]
 * te vs a hand-vectorized C version, at 1 and 2 threads.
 *
 * te's hand schedule ("layernorm RxC"), the C version's algorithm: the two row sums (mean, then
 * the squared deviations) each in two levels of 64 partial lanes (extra "lanes64", rows_te.h);
 * the per-row stages computed inside Y's row loop (extra2 "rowlocal") or at root in parallel;
 * Y's columns split 64 / 16, vectorized and unrolled; rows in parallel.
 * "layernorm RxC 1-pass" reads each row twice: one pass for both statistics, one to normalize.
 * The statistics are one tuple reduction (te_reducer_new) of the shifted values
 * d = X[i,k] - X[i,0] and d^2, summed together (sum, sum of squares): split by 64 and
 * te_rfactor'ed (extra "rfactor64") into 64 vector lanes of each sum, 8 zmm accumulators; then
 *     mean = X[i,0] + s / C,   var = q / C - (s / C)^2
 * (the shift keeps the difference of the two terms small). It is no faster here: a 16 KiB row
 * stays in L1 between the passes, so both forms read DRAM once and write it once, and the extra
 * pass costs as many vector operations as the shift and the second accumulator save
 * (docs/tuning-space.md has the numbers). With TE_BENCH_CPU the two te schedules are also timed
 * against each other.
 * The C version makes three passes over each row (sum, squared deviations, normalize), the sums
 * in 64 partial lanes so gcc -O3 -march=native vectorizes them without reassociating.
 * Rate: GB/s of minimal traffic (X read once, Y written once).
 */
#include "bench.h"
#include "dot_time.h"
#include "report.h"
#include "rows_te.h"
#include "te_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define EPS 1e-5

typedef struct dev_user {
  te_tensor *x, *mean;
  te_expr *inv_c;
} dev_user;

/* (X[i,k] - mean[i])^2 / C */
static te_expr *elem_dev2(te_ctx *ctx, te_expr *i, te_expr *k, void *user) {
  (void)ctx;
  dev_user *u = user;
  te_expr *d = te_sub(TE_AT(u->x, i, k), TE_AT(u->mean, i));
  return te_mul(te_mul(d, d), u->inv_c);
}

/* X[i,k] / C */
static te_expr *elem_scaled(te_ctx *ctx, te_expr *i, te_expr *k, void *user) {
  (void)ctx;
  dev_user *u = user;
  return te_mul(TE_AT(u->x, i, k), u->inv_c);
}

/* Y[i, j] = (X[i, j] - mean[i]) * rstd[i] * gamma[j] + beta[j], the schedule of Y and the
   kernel's arguments (X, gamma, beta, Y) in out; both forms end so. */
static te_tensor *normalized(te_ctx *ctx, te_expr *R, te_expr *C, te_tensor *const in[3],
                             te_tensor *mean, te_tensor *rstd, tb_def *out) {
  te_tensor *X = in[0], *gamma = in[1], *beta = in[2];
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *norm = te_mul(te_sub(TE_AT(X, i, j), TE_AT(mean, i)), TE_AT(rstd, i));
  te_tensor *Y = te_compute(ctx, "Y", 2, TE_EXPRS(R, C), TE_EXPRS(i, j),
                            te_add(te_mul(norm, TE_AT(gamma, j)), TE_AT(beta, j)));
  out->s = te_schedule_new(ctx, 1, &Y);
  out->ntensors = 4;
  out->tensors[0] = X;
  out->tensors[1] = gamma;
  out->tensors[2] = beta;
  out->tensors[3] = Y;
  return Y;
}

/* Row-local form (TB_EXTRA2): every per-row stage computed at Y's row loop, its readers placed
   first (te_compute_at lets a stage be read by several stages inside the loop: the mean by var
   and Y), so a row is read three times from L1 after the first read from memory, as the C
   version does: mean, var, Y. Shared form: the same stages, every one at root (in parallel). */
static void layernorm_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const rows_shape *s = params;
  int lanes64 = (flags & TB_TILE) && (flags & TB_EXTRA);
  te_expr *R = te_int(ctx, s->rows), *C = te_int(ctx, s->cols);
  te_tensor *X = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(R, C));
  te_tensor *gamma = te_placeholder(ctx, "gamma", TE_F32, 1, TE_EXPRS(C));
  te_tensor *beta = te_placeholder(ctx, "beta", TE_F32, 1, TE_EXPRS(C));
  dev_user u = {X, NULL, te_float(ctx, TE_F32, 1.0 / s->cols)};
  te_tensor *mp, *vp;
  te_tensor *mean = row_reduce(ctx, "mean", s, lanes64, 1, elem_scaled, &u, &mp);
  u.mean = mean;
  te_tensor *var = row_reduce(ctx, "var", s, lanes64, 1, elem_dev2, &u, &vp);
  te_expr *r = te_var(ctx, "i");
  te_expr *veps = te_add(TE_AT(var, r), te_float(ctx, TE_F32, EPS));
  te_tensor *rstd = te_compute(ctx, "rstd", 1, TE_EXPRS(R), TE_EXPRS(r),
                               te_call(ctx, "rsqrt", 1, TE_EXPRS(veps)));
  te_tensor *Y = normalized(ctx, R, C, (te_tensor *const[]){X, gamma, beta}, mean, rstd, out);
  if (!out->s || !(flags & TB_TILE))
    return;
  te_stage *ys = te_stage_of(out->s, Y), *ms = te_stage_of(out->s, mean);
  te_stage *vs = te_stage_of(out->s, var), *rs = te_stage_of(out->s, rstd);
  sched_elementwise(ys, flags, 1);
  place_row_stage(rs, ys, flags); /* readers first: rstd, var(_p), mean(_p) */
  place_row_stage(vs, ys, flags);
  if (vp)
    sched_partial(te_stage_of(out->s, vp), ys, flags);
  place_row_stage(ms, ys, flags);
  if (mp)
    sched_partial(te_stage_of(out->s, mp), ys, flags);
}

/* The sum and sum-of-squares pair reducer: (ls + rs, lq + rq) from (0, 0). */
static te_reducer *sum_pair(te_ctx *ctx) {
  te_expr *ls = te_param(ctx, "ls", TE_F32), *lq = te_param(ctx, "lq", TE_F32);
  te_expr *rs = te_param(ctx, "rs", TE_F32), *rq = te_param(ctx, "rq", TE_F32);
  te_expr *zero = te_float(ctx, TE_F32, 0);
  return te_reducer_new(ctx, 2, TE_EXPRS(ls, lq), TE_EXPRS(rs, rq),
                        TE_EXPRS(te_add(ls, rs), te_add(lq, rq)), TE_EXPRS(zero, zero));
}

/* The one-pass form (header comment). With TB_EXTRA the statistics' k is split by LANES and
   k.i rfactored, the lanes innermost and vectorized. */
static void layernorm1_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const rows_shape *s = params;
  te_expr *R = te_int(ctx, s->rows), *C = te_int(ctx, s->cols);
  te_tensor *X = te_placeholder(ctx, "X", TE_F32, 2, TE_EXPRS(R, C));
  te_tensor *gamma = te_placeholder(ctx, "gamma", TE_F32, 1, TE_EXPRS(C));
  te_tensor *beta = te_placeholder(ctx, "beta", TE_F32, 1, TE_EXPRS(C));
  te_expr *i = te_var(ctx, "i"), *zero = te_int(ctx, 0);
  te_expr *k = te_reduce_axis(ctx, "k", zero, C);
  te_expr *d = te_sub(TE_AT(X, i, k), TE_AT(X, i, zero)), *red[2];
  te_tensor *sq[2] = {NULL, NULL};
  te_reducer *pair = sum_pair(ctx);
  if (!pair || te_reduce(pair, 2, TE_EXPRS(d, te_mul(d, d)), 1, &k, NULL, red) != TE_OK ||
      te_compute_multi(ctx, "stats", 1, TE_EXPRS(R), &i, 2, red, sq) != TE_OK)
    return; /* the error is on the context */
  te_expr *inv_c = te_float(ctx, TE_F32, 1.0 / s->cols);
  te_expr *r = te_var(ctx, "i");
  te_expr *m = te_mul(TE_AT(sq[0], r), inv_c);
  te_tensor *mean =
      te_compute(ctx, "mean", 1, TE_EXPRS(R), TE_EXPRS(r), te_add(TE_AT(X, r, zero), m));
  te_expr *var = te_sub(te_mul(TE_AT(sq[1], r), inv_c), te_mul(m, m));
  te_tensor *rstd =
      te_compute(ctx, "rstd", 1, TE_EXPRS(R), TE_EXPRS(r),
                 te_call(ctx, "rsqrt", 1, TE_EXPRS(te_add(var, te_float(ctx, TE_F32, EPS)))));
  te_tensor *Y = normalized(ctx, R, C, (te_tensor *const[]){X, gamma, beta}, mean, rstd, out);
  if (!out->s || !(flags & TB_TILE))
    return;
  te_stage *ys = te_stage_of(out->s, Y), *ss = te_stage_of(out->s, sq[0]);
  sched_elementwise(ys, flags, 1);
  place_row_stage(te_stage_of(out->s, rstd), ys, flags); /* readers first */
  place_row_stage(te_stage_of(out->s, mean), ys, flags);
  te_tensor *rf = NULL;
  if (flags & TB_EXTRA) {
    te_iter *ko, *ki;
    te_split(ss, te_reduce_iter(ss, 0), LANES, &ko, &ki);
    te_rfactor(out->s, sq[0], ki, 1, &rf); /* rf[i, ki] = sums over ko: (s, q) lanes */
  }
  place_row_stage(te_stage_of(out->s, sq[0]), ys, flags);
  if (rf)
    sched_partial(te_stage_of(out->s, rf), ys, flags);
}

static void layernorm_row(const float *restrict x, const float *restrict g, const float *restrict b,
                          float *restrict y, int n) {
  float part[LANES] = {0};
  float inv_n = 1.0f / (float)n;
  for (int j = 0; j < n; j += LANES)
    for (int l = 0; l < LANES; l++)
      part[l] += x[j + l] * inv_n;
  float mean = 0;
  for (int l = 0; l < LANES; l++)
    mean += part[l];
  for (int l = 0; l < LANES; l++)
    part[l] = 0;
  for (int j = 0; j < n; j += LANES)
    for (int l = 0; l < LANES; l++) {
      float d = x[j + l] - mean;
      part[l] += d * d * inv_n;
    }
  float var = 0;
  for (int l = 0; l < LANES; l++)
    var += part[l];
  float rstd = 1.0f / sqrtf(var + (float)EPS);
  for (int j = 0; j < n; j++)
    y[j] = (x[j] - mean) * rstd * g[j] + b[j];
}

typedef struct ln_data {
  rows_shape s;
  int threads;
  float *x, *g, *b, *y;
} ln_data;

static int run_c(void *arg) {
  ln_data *d = arg;
  int rows = d->s.rows, cols = d->s.cols;
#pragma omp parallel for num_threads(d->threads) schedule(static)
  for (int i = 0; i < rows; i++)
    layernorm_row(d->x + (size_t)i * cols, d->g, d->b, d->y + (size_t)i * cols, cols);
  return 0;
}

static void reference(const ln_data *d, double *ref) {
  int cols = d->s.cols;
  for (int i = 0; i < d->s.rows; i++) {
    const float *x = d->x + (size_t)i * cols;
    double m = 0, v = 0;
    for (int j = 0; j < cols; j++)
      m += x[j];
    m /= cols;
    for (int j = 0; j < cols; j++)
      v += (x[j] - m) * (x[j] - m);
    v /= cols;
    double rstd = 1.0 / sqrt(v + EPS);
    for (int j = 0; j < cols; j++)
      ref[(size_t)i * cols + j] = (x[j] - m) * rstd * d->g[j] + d->b[j];
  }
}

void wl_layernorm(const bench_cfg *cfg) {
  ln_data d = {{4096, 4096}, 1, NULL, NULL, NULL, NULL};
  if (cfg->quick)
    d.s = (rows_shape){512, 1024};
  char wl[48];
  snprintf(wl, sizeof wl, "layernorm %dx%d", d.s.rows, d.s.cols);
  fprintf(stderr, "%s\n", wl);
  size_t n = (size_t)d.s.rows * d.s.cols;
  d.x = bench_alloc_f32(n);
  d.y = bench_alloc_f32(n);
  d.g = bench_alloc_f32((size_t)d.s.cols);
  d.b = bench_alloc_f32((size_t)d.s.cols);
  double *ref = malloc(sizeof *ref * n);
  if (!d.x || !d.y || !d.g || !d.b || !ref) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  bench_fill_uniform(d.x, n, -2.0f, 3.0f, 7);
  bench_fill_uniform(d.g, (size_t)d.s.cols, 0.5f, 1.5f, 8);
  bench_fill_uniform(d.b, (size_t)d.s.cols, -0.5f, 0.5f, 9);
  reference(&d, ref);
  bench_ref chk = {NULL, ref, NULL, 1.0, n, 1e-4};
  double bytes = 8.0 * (double)n;

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA | TB_EXTRA2, ladder);
  tb_kernel k, k1;
  int have_te = tb_build(wl, "layernorm", layernorm_define, &d.s, ladder, nl,
                         (const char *const[2]){"lanes64", "rowlocal"}, &k);
  char wl1[64];
  snprintf(wl1, sizeof wl1, "%s 1-pass", wl);
  int have_te1 = tb_build(wl1, "layernorm1", layernorm1_define, &d.s, ladder, nl,
                          (const char *const[2]){"rfactor64", "rowlocal"}, &k1);
  if (have_te) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("compile layernorm", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  DLTensor tx, tg, tbeta, ty;
  int64_t sx[8], sg[8], sb[8], sy[8], shape[2] = {d.s.rows, d.s.cols};
  tb_tensor(&tx, sx, d.x, 2, shape);
  tb_tensor(&tg, sg, d.g, 1, shape + 1);
  tb_tensor(&tbeta, sb, d.b, 1, shape + 1);
  tb_tensor(&ty, sy, d.y, 2, shape);
  tb_args targs = {&k, {&tx, &tg, &tbeta, &ty}};
  rows_run_hand(cfg, wl, &targs, have_te, "c-vec", "3 passes, gcc -O3 -march=native, OpenMP rows",
                run_c, &d, &d.threads, d.y, n, bytes, &chk);
  tb_args targs1 = {&k1, {&tx, &tg, &tbeta, &ty}};
  rows_run_hand(cfg, wl1, &targs1, have_te1, "c-vec", "the anchor, beside te's 1-pass schedule",
                run_c, &d, &d.threads, d.y, n, bytes, &chk);
  for (int t = 1; have_te && have_te1 && t <= (cfg->max_threads > 1 ? 2 : 1); t++) {
    char label[80]; /* TE_BENCH_CPU: te's two schedules against each other, by CPU time */
    snprintf(label, sizeof label, "%s %dT", wl1, t == 1 ? 1 : cfg->max_threads);
    tb_set_threads(t == 1 ? 1 : cfg->max_threads);
    dot_cpu_versus(label, "te-1pass", tb_run, &targs1, "te-3pass", tb_run, &targs);
  }
  if (cfg->tuned_log) {
    rows_tuned tp = {d.s, cfg->tuned_log, 1};
    rows_run_tuned(cfg, wl, &tp, (DLTensor *const[]){&tx, &tg, &tbeta, &ty}, 4, &k, have_te,
                   "c-vec", run_c, &d, &d.threads, d.y, n, bytes, &chk);
  }
  if (have_te)
    tb_free(&k);
  if (have_te1)
    tb_free(&k1);
done:
  bench_free(d.x);
  bench_free(d.y);
  bench_free(d.g);
  bench_free(d.b);
  free(ref);
}
