/* conv2d.c — the ResNet-50 3x3 layer (N=1, C=64, 56x56, K=64, pad 1, stride 1, f32, NCHW):
 * te vs oneDNN vs Halide 14 vs naive C, at 1 and 2 threads (naive C: 1).
 *
 * te, best schedule: the blocked form below (conv_define_blocked). The plain form, a fallback:
 * two stages. Pad[n,c,y,x] (58x58, zero border; the input index is clamped so that both
 * sides of the select are in bounds) is computed at root, parallel over channels. The
 * convolution Out[n,k,y,x] = sum_{rc,ry,rx} Pad[n,rc,y+ry,x+rx] * W[k,rc,ry,rx] is cut into
 * register tiles of 8 output channels x 2 rows x 16 columns (16 zmm accumulators: k.i and y.i
 * unrolled, x.i vectorized), with the reduction loops (rc, ry, rx) between the tile loops and the
 * register tile, and k.o in parallel:
 *     n  k.o(parallel)  y.o  x.o  rc  ry  rx  k.i(8)  y.i(2)  x.i(16, vectorized)
 * 56 is not a multiple of 16: the extra step "x16tail" keeps 16 lanes with a guarded last tile;
 * without it x is split by 8 (exact, half-width vectors).
 * Checks: every output against a double reference, error scaled by the sum of |terms|.
 * TE_BENCH_AB=R adds R call-by-call te/oneDNN pairs (run_ab).
 */
#include "bench.h"
#include "halide_bench.h"
#include "report.h"
#include "te_util.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct conv_shape {
  int n, c, h, w, k;
} conv_shape;

static te_expr *clamp(te_expr *v, int lo, int hi) {
  return te_max(te_min(v, te_int(te_expr_ctx(v), hi)), te_int(te_expr_ctx(v), lo));
}

/* The input [n, c, h, w] and the weights [k, c, 3, 3], named as asked. */
static void define_inputs(te_ctx *ctx, const conv_shape *s, const char *in_name, const char *w_name,
                          te_tensor **in, te_tensor **w) {
  *in = te_placeholder(
      ctx, in_name, TE_F32, 4,
      TE_EXPRS(te_int(ctx, s->n), te_int(ctx, s->c), te_int(ctx, s->h), te_int(ctx, s->w)));
  *w = te_placeholder(
      ctx, w_name, TE_F32, 4,
      TE_EXPRS(te_int(ctx, s->k), te_int(ctx, s->c), te_int(ctx, 3), te_int(ctx, 3)));
}

/* Pad[n, c, y, x] = In[n, c, y - 1, x - 1] inside, 0 on the border. */
static te_tensor *define_pad(te_ctx *ctx, const conv_shape *s, te_tensor *in) {
  te_expr *n = te_var(ctx, "n"), *c = te_var(ctx, "c"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *one = te_int(ctx, 1);
  te_expr *inside = te_and(te_and(te_ge(y, one), te_le(y, te_int(ctx, s->h))),
                           te_and(te_ge(x, one), te_le(x, te_int(ctx, s->w))));
  te_expr *val =
      TE_AT(in, n, c, clamp(te_sub(y, one), 0, s->h - 1), clamp(te_sub(x, one), 0, s->w - 1));
  return te_compute(
      ctx, "Pad", 4,
      TE_EXPRS(te_int(ctx, s->n), te_int(ctx, s->c), te_int(ctx, s->h + 2), te_int(ctx, s->w + 2)),
      TE_EXPRS(n, c, y, x), te_select(inside, val, te_float(ctx, TE_F32, 0.0)));
}

static void conv_schedule(te_stage *st, unsigned flags, const conv_shape *s) {
  int xv = s->w % 16 == 0 || (flags & TB_EXTRA) || s->w % 8 ? 16 : 8;
  te_iter *ko = NULL, *ki = NULL, *yo = NULL, *yi = NULL, *xo = NULL, *xi = NULL;
  te_split(st, te_axis(st, 1), 8, &ko, &ki);
  te_split(st, te_axis(st, 2), 2, &yo, &yi);
  te_split(st, te_axis(st, 3), xv, &xo, &xi);
  te_reorder(st, 10,
             (te_iter *const[]){te_axis(st, 0), ko, yo, xo, te_reduce_iter(st, 0),
                                te_reduce_iter(st, 1), te_reduce_iter(st, 2), ki, yi, xi});
  if (flags & TB_VEC)
    te_vectorize(st, xi);
  if (flags & TB_UNROLL) {
    te_unroll(st, ki);
    te_unroll(st, yi);
  }
  if (flags & TB_PAR)
    te_parallel(st, ko);
}

/* The blocked form (TB_EXTRA2, "kblock"): output channels in blocks of 16, the vector lanes, as
 * oneDNN's nChw16c kernels do, so no lane is wasted on 56 columns. Three extra stages:
 *   Wp[kb, rc, ry, rx, kk]   = W[kb*16 + kk, rc, ry, rx]          (packed weights, root)
 *   OB[n, kb, y, x, kk]      = sum Pad[n, rc, y+ry, x+rx] * Wp[kb, rc, ry, rx, kk]
 *   Out[n, k, y, x]          = OB[n, k / 16, y, x, k % 16]        (back to NCHW)
 * OB is computed per output row (compute_at Out's y, 14 KB in L1) with a register tile of
 * KT blocks x XT columns x 16 lanes (2 x 8 = 16 zmm accumulators, 8 broadcasts and 2 loads of
 * packed weights per step: larger tiles such as 2 x 14 or 4 x 7 run out of the 32 zmm registers
 * and spill), the reduction (rc, ry, rx) between the tile loops and the tile. With 256-bit
 * vectors (AVX2) a block of 16 lanes is two ymm registers and there are 16 of them: 1 x 6
 * (12 accumulators, 2 weight loads and a broadcast) instead, as 2 x 8 would need 32, with the 3 x 3
 * taps (ry, rx) unrolled around the tile: te/oneDNN 0.95-0.97 call by call at 1 thread on a Zen 3,
 * 0.83-0.86 with the taps as loops (TE_BENCH_AB=40; unrolling rx alone halves the speed: LLVM
 * keeps the overlapping broadcasts of 3 taps live and spills). Unmeasured on AVX-512, where the
 * taps stay loops. Out copies a row back 8 columns of a channel at a time: a stride-16 gather
 * from OB and a vector store, 2% faster than scalar copies side by side (a 16 x 16 transpose in
 * registers would take shuffles te does not emit; the copy costs about 5% of the kernel):
 *     Out: n  y(parallel)  [OB: kb.o  x.o  rc  ry  rx  kb.i(2)  x.i(8)  kk(16, vectorized)]
 *          (AVX2: ry(3, unrolled) rx(3, unrolled) kb.i(1) x.i(6))
 *          k.o  x.o  k.i(16, unrolled)  x.i(8, vectorized)
 * Out's rows are parallel. */
enum { KB = 16 };

/* The register tile for the target's vectors: kt blocks x xt columns, and whether the 3 x 3 taps
   (ry, rx) are unrolled around it. TE_BENCH_CONV="KT,XT[,U]" replaces it (tuning by hand). */
typedef struct conv_tile {
  int kt, xt, unroll_taps;
} conv_tile;

static conv_tile conv_register_tile(te_ctx *ctx) {
  te_target *native = te_target_parse(ctx, "llvm -mcpu=native");
  int wide = !native || te_target_vector_bits(native) >= 512;
  conv_tile t = wide ? (conv_tile){2, 8, 0} : (conv_tile){1, 6, 1};
  const char *env = getenv("TE_BENCH_CONV");
  if (env)
    sscanf(env, "%d,%d,%d", &t.kt, &t.xt, &t.unroll_taps);
  return t;
}

static void conv_define_blocked(te_ctx *ctx, unsigned flags, const conv_shape *s, tb_def *out) {
  conv_tile tile = conv_register_tile(ctx);
  te_tensor *in, *w;
  define_inputs(ctx, s, "In", "W", &in, &w);
  te_tensor *pad = define_pad(ctx, s, in);
  te_expr *kb16 = te_int(ctx, KB);
  te_expr *wb = te_var(ctx, "kb"), *wc = te_var(ctx, "c"), *wy = te_var(ctx, "ry"),
          *wx = te_var(ctx, "rx"), *wk = te_var(ctx, "kk");
  te_tensor *wp = te_compute(
      ctx, "Wp", 5,
      TE_EXPRS(te_int(ctx, s->k / KB), te_int(ctx, s->c), te_int(ctx, 3), te_int(ctx, 3), kb16),
      TE_EXPRS(wb, wc, wy, wx, wk), TE_AT(w, te_add(te_mul(wb, kb16), wk), wc, wy, wx));
  te_expr *n = te_var(ctx, "n"), *b = te_var(ctx, "kb"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x"), *kk = te_var(ctx, "kk");
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), te_int(ctx, s->c));
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *body =
      te_mul(TE_AT(pad, n, rc, te_add(y, ry), te_add(x, rx)), TE_AT(wp, b, rc, ry, rx, kk));
  te_tensor *ob = te_compute(ctx, "OB", 5,
                             TE_EXPRS(te_int(ctx, s->n), te_int(ctx, s->k / KB), te_int(ctx, s->h),
                                      te_int(ctx, s->w), kb16),
                             TE_EXPRS(n, b, y, x, kk), te_sum(body, 3, TE_EXPRS(rc, ry, rx)));
  te_expr *on = te_var(ctx, "n"), *ok = te_var(ctx, "k"), *oy = te_var(ctx, "y"),
          *ox = te_var(ctx, "x");
  te_tensor *o = te_compute(
      ctx, "Out", 4,
      TE_EXPRS(te_int(ctx, s->n), te_int(ctx, s->k), te_int(ctx, s->h), te_int(ctx, s->w)),
      TE_EXPRS(on, ok, oy, ox),
      TE_AT(ob, on, te_floordiv(ok, kb16), oy, ox, te_floormod(ok, kb16)));
  out->s = te_schedule_new(ctx, 1, &o);
  out->ntensors = 3;
  out->tensors[0] = in;
  out->tensors[1] = w;
  out->tensors[2] = o;
  if (!out->s)
    return;
  te_stage *os = te_stage_of(out->s, o), *bs = te_stage_of(out->s, ob);
  te_reorder(os, 4,
             (te_iter *const[]){te_axis(os, 0), te_axis(os, 2), te_axis(os, 1), te_axis(os, 3)});
  te_compute_at(bs, os, te_axis(os, 2));
  te_iter *bo = NULL, *bi = NULL, *xo = NULL, *xi = NULL;
  te_split(bs, te_axis(bs, 1), tile.kt, &bo, &bi);
  te_split(bs, te_axis(bs, 3), tile.xt, &xo, &xi);
  te_reorder(bs, 10,
             (te_iter *const[]){te_axis(bs, 0), te_axis(bs, 2), bo, xo, te_reduce_iter(bs, 0),
                                te_reduce_iter(bs, 1), te_reduce_iter(bs, 2), bi, xi,
                                te_axis(bs, 4)});
  if (flags & TB_VEC)
    te_vectorize(bs, te_axis(bs, 4));
  if (flags & TB_UNROLL) {
    te_unroll(bs, bi);
    te_unroll(bs, xi);
    if (tile.unroll_taps) {
      te_unroll(bs, te_reduce_iter(bs, 1));
      te_unroll(bs, te_reduce_iter(bs, 2));
    }
  }
  if (flags & TB_VEC) { /* the copy: 16 channels x 8 columns, a strided load (gather) each */
    te_iter *ko = NULL, *ki = NULL, *oxo = NULL, *oxi = NULL;
    te_split(os, te_axis(os, 1), KB, &ko, &ki);
    te_split(os, te_axis(os, 3), 8, &oxo, &oxi);
    te_reorder(os, 6, (te_iter *const[]){te_axis(os, 0), te_axis(os, 2), ko, oxo, ki, oxi});
    te_unroll(os, ki);
    te_vectorize(os, oxi);
  }
  if (flags & TB_PAR) {
    te_parallel(os, te_axis(os, 2));
    te_stage *ps = te_stage_of(out->s, pad);
    te_parallel(ps, te_axis(ps, 1));
  }
}

static void conv_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  if ((flags & TB_EXTRA2) && (flags & TB_TILE) && ((const conv_shape *)params)->k % KB == 0) {
    conv_define_blocked(ctx, flags, params, out);
    return;
  }
  const conv_shape *s = params;
  te_tensor *in, *w;
  define_inputs(ctx, s, "In", "W", &in, &w);
  te_tensor *pad = define_pad(ctx, s, in);
  te_expr *n = te_var(ctx, "n"), *k = te_var(ctx, "k"), *y = te_var(ctx, "y"),
          *x = te_var(ctx, "x");
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), te_int(ctx, s->c));
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *body = te_mul(TE_AT(pad, n, rc, te_add(y, ry), te_add(x, rx)), TE_AT(w, k, rc, ry, rx));
  te_tensor *o = te_compute(
      ctx, "Out", 4,
      TE_EXPRS(te_int(ctx, s->n), te_int(ctx, s->k), te_int(ctx, s->h), te_int(ctx, s->w)),
      TE_EXPRS(n, k, y, x), te_sum(body, 3, TE_EXPRS(rc, ry, rx)));
  out->s = te_schedule_new(ctx, 1, &o);
  out->ntensors = 3;
  out->tensors[0] = in;
  out->tensors[1] = w;
  out->tensors[2] = o;
  if (!out->s || !(flags & TB_TILE))
    return;
  conv_schedule(te_stage_of(out->s, o), flags, s);
  te_stage *ps = te_stage_of(out->s, pad);
  if (flags & TB_PAR)
    te_parallel(ps, te_axis(ps, 1));
}

/* The tuned kernel (--tuned LOG): the computation te-tune builds for "conv2d N C H W O pad=1"
   (ops.h, so the workload key matches the log's) with the log's best schedule. */
typedef struct tuned_params {
  conv_shape s;
  const char *log;
} tuned_params;

static void conv_define_tuned(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  const tuned_params *p = params;
  const conv_shape *s = &p->s;
  te_tensor *in, *w;
  define_inputs(ctx, s, "data", "kernel", &in, &w);
  te_conv2d_params cp = {1, 1, 1, 1, 1, 1};
  te_tensor *o = te_op_conv2d_nchw(ctx, in, w, &cp, NULL);
  out->s = o ? te_schedule_new(ctx, 1, &o) : NULL;
  out->ntensors = 3;
  out->tensors[0] = in;
  out->tensors[1] = w;
  out->tensors[2] = o;
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (out->s && target)
    te_apply_best(out->s, p->log, target);
}

typedef struct conv_data {
  conv_shape s;
  float *in, *w, *out;
} conv_data;

/* Direct convolution with the bounds test in the inner loop: what one writes first. */
static int run_naive(void *arg) {
  const conv_data *d = arg;
  const conv_shape *s = &d->s;
  for (int n = 0; n < s->n; n++)
    for (int k = 0; k < s->k; k++)
      for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++) {
          float acc = 0;
          for (int c = 0; c < s->c; c++)
            for (int ry = 0; ry < 3; ry++)
              for (int rx = 0; rx < 3; rx++) {
                int iy = y + ry - 1, ix = x + rx - 1;
                if (iy >= 0 && iy < s->h && ix >= 0 && ix < s->w)
                  acc += d->in[(((size_t)n * s->c + c) * s->h + iy) * s->w + ix] *
                         d->w[(((size_t)k * s->c + c) * 3 + ry) * 3 + rx];
              }
          d->out[(((size_t)n * s->k + k) * s->h + y) * s->w + x] = acc;
        }
  return 0;
}

static void reference(const conv_data *d, double *ref, double *scale) {
  const conv_shape *s = &d->s;
  size_t o = 0;
  for (int n = 0; n < s->n; n++)
    for (int k = 0; k < s->k; k++)
      for (int y = 0; y < s->h; y++)
        for (int x = 0; x < s->w; x++, o++) {
          double acc = 0, abs_acc = 0;
          for (int c = 0; c < s->c; c++)
            for (int ry = 0; ry < 3; ry++)
              for (int rx = 0; rx < 3; rx++) {
                int iy = y + ry - 1, ix = x + rx - 1;
                if (iy < 0 || iy >= s->h || ix < 0 || ix >= s->w)
                  continue;
                double p = (double)d->in[(((size_t)n * s->c + c) * s->h + iy) * s->w + ix] *
                           d->w[(((size_t)k * s->c + c) * 3 + ry) * 3 + rx];
                acc += p;
                abs_acc += fabs(p);
              }
          ref[o] = acc;
          scale[o] = abs_acc;
        }
}

typedef struct dnnl_run {
  dnnl_conv *c;
  float *out;
  int export_next; /* the checked call reorders its result to NCHW; timed calls do not */
} dnnl_run;

static int run_dnnl(void *arg) {
  dnnl_run *r = arg;
  if (dnnl_conv_run(r->c) != 0)
    return 1;
  if (r->export_next) {
    r->export_next = 0;
    return dnnl_conv_output(r->c, r->out);
  }
  return 0;
}

/* oneDNN plans its work split for the thread count it sees when the primitive is created, so
   each thread count gets its own primitive, created (and its reorders run) under that count. */
static void run_onednn(const bench_cfg *cfg, const char *wl, conv_data *d, int threads,
                       const bench_ref *chk) {
  const conv_shape *s = &d->s;
  size_t nout = (size_t)s->n * s->k * s->h * s->w;
  double flops = 2.0 * s->n * s->k * s->c * s->h * s->w * 9;
  char err[512];
  omp_set_num_threads(threads);
  dnnl_conv *dn = dnnl_conv_new(s->n, s->c, s->h, s->w, s->k, d->in, d->w, err, sizeof err);
  if (dn) {
    dnnl_run r = {dn, d->out, 1};
    bench_run_variant(cfg, wl, "onednn", threads, ROW_FLOPS, flops, run_dnnl, &r, d->out, nout, chk,
                      "format any, reorders outside the timed call");
    dnnl_conv_free(dn);
  } else {
    fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    bench_add_failed(wl, "onednn", threads, err);
  }
  omp_set_num_threads(cfg->max_threads);
}

/* The kernel arguments over a workload's buffers. */
typedef struct conv_tensors {
  DLTensor in, w, out;
  int64_t shape_in[8], shape_w[8], shape_out[8];
} conv_tensors;

static void conv_tensors_init(conv_tensors *t, conv_data *d) {
  const conv_shape *s = &d->s;
  tb_tensor(&t->in, t->shape_in, d->in, 4, (int64_t[]){s->n, s->c, s->h, s->w});
  tb_tensor(&t->w, t->shape_w, d->w, 4, (int64_t[]){s->k, s->c, 3, 3});
  tb_tensor(&t->out, t->shape_out, d->out, 4, (int64_t[]){s->n, s->k, s->h, s->w});
}

static void run_variants(const bench_cfg *cfg, const char *wl, conv_data *d, const tb_kernel *k,
                         int have_te, hl_pipe *const hl[2], const bench_ref *chk) {
  const conv_shape *s = &d->s;
  size_t nout = (size_t)s->n * s->k * s->h * s->w;
  double flops = 2.0 * s->n * s->k * s->c * s->h * s->w * 9;
  conv_tensors args;
  conv_tensors_init(&args, d);
  tb_args targs = {k, {&args.in, &args.w, &args.out}};
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti_ = 0; ti_ < nthreads; ti_++) {
    int t = threads[ti_];
    for (int round = 0; round < cfg->rounds; round++) { /* harness.h: rounds */
      tb_run_te(cfg, wl, t, ROW_FLOPS, flops, have_te, &targs, d->out, nout, chk);
      run_onednn(cfg, wl, d, t, chk);
      if (hl[t > 1])
        bench_run_variant(cfg, wl, "halide", t, ROW_FLOPS, flops, hl_run, hl[t > 1], d->out, nout,
                          chk, t > 1 ? "parallel schedule" : "schedule without parallel");
      else
        bench_add_failed(wl, "halide", t, "pipeline did not compile");
      if (t == 1)
        bench_run_variant(cfg, wl, "naive-c", 1, ROW_FLOPS, flops, run_naive, d, d->out, nout, chk,
                          "direct loops, gcc -O3 -march=native");
    }
  }
}

/* TE_BENCH_AB=R: te and oneDNN timed call by call, R pairs at each thread count, the median of
   the pairs' speed ratios printed (AB lines on stderr): both see the same moment of a machine
   whose speed drifts (on a shared 2-core Zen 3 the same kernel's median moved 1.45x between
   processes a few seconds apart). Calls are bench_settle apart, so each starts with idle thread
   pools: oneDNN's OpenMP workers spin after a call and would take te's second core. */
static void run_ab(const bench_cfg *cfg, const char *wl, conv_data *d, const tb_kernel *k,
                   int pairs) {
  const conv_shape *s = &d->s;
  conv_tensors args;
  conv_tensors_init(&args, d);
  tb_args targs = {k, {&args.in, &args.w, &args.out}};
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    char err[512];
    omp_set_num_threads(threads[ti]);
    dnnl_conv *dn = dnnl_conv_new(s->n, s->c, s->h, s->w, s->k, d->in, d->w, err, sizeof err);
    if (!dn) {
      fprintf(stderr, "AB %s: oneDNN failed: %s\n", wl, err);
      break;
    }
    dnnl_run r = {dn, d->out, 0};
    double med, q1, q3;
    tb_set_threads(threads[ti]);
    int n = bench_pair_ratio(tb_run, &targs, run_dnnl, &r, pairs, &med, &q1, &q3);
    if (n)
      fprintf(stderr,
              "AB %s %d thr: te/onednn speed ratio median %.3f (q1 %.3f q3 %.3f, %d pairs)\n", wl,
              threads[ti], med, q1, q3, n);
    dnnl_conv_free(dn);
  }
  omp_set_num_threads(cfg->max_threads);
}

/* "<wl> tuned": the tuned kernel as te, against oneDNN and te's hand schedule. */
static void run_tuned(const bench_cfg *cfg, const char *wl, conv_data *d, const tb_kernel *hand,
                      int have_hand, const bench_ref *chk) {
  const conv_shape *s = &d->s;
  char twl[64];
  snprintf(twl, sizeof twl, "%s tuned", wl);
  tuned_params tp = {*s, cfg->tuned_log};
  unsigned only = TB_TILE;
  tb_kernel tk;
  if (!tb_build(twl, "conv2d_tuned", conv_define_tuned, &tp, &only, 1, NULL, &tk))
    return;
  snprintf(tk.note, sizeof tk.note, "te_apply_best(%s)", cfg->tuned_log);
  size_t nout = (size_t)s->n * s->k * s->h * s->w;
  double flops = 2.0 * s->n * s->k * s->c * s->h * s->w * 9;
  conv_tensors args;
  conv_tensors_init(&args, d);
  tb_args targs = {&tk, {&args.in, &args.w, &args.out}},
          hargs = {hand, {&args.in, &args.w, &args.out}};
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int i = 0; i < nthreads; i++)
    for (int round = 0; round < cfg->rounds; round++) {
      tb_set_threads(threads[i]);
      bench_run_variant(cfg, twl, "te", threads[i], ROW_FLOPS, flops, tb_run, &targs, d->out, nout,
                        chk, tk.note);
      run_onednn(cfg, twl, d, threads[i], chk);
      if (have_hand)
        bench_run_variant(cfg, twl, "te-hand", threads[i], ROW_FLOPS, flops, tb_run, &hargs, d->out,
                          nout, chk, "te's hand schedule (the conv2d rows above)");
    }
  tb_free(&tk);
}

void wl_conv2d(const bench_cfg *cfg) {
  conv_data d = {{1, 64, 56, 56, 64}, NULL, NULL, NULL};
  if (cfg->quick)
    d.s = (conv_shape){1, 16, 28, 28, 16};
  const conv_shape *s = &d.s;
  char wl[48], err[512];
  snprintf(wl, sizeof wl, "conv2d %dx%dx%d k%d", s->c, s->h, s->w, s->k);
  fprintf(stderr, "%s\n", wl);
  size_t nin = (size_t)s->n * s->c * s->h * s->w, nw = (size_t)s->k * s->c * 9,
         nout = (size_t)s->n * s->k * s->h * s->w;
  d.in = bench_alloc_f32(nin);
  d.w = bench_alloc_f32(nw);
  d.out = bench_alloc_f32(nout);
  double *ref = malloc(sizeof *ref * nout), *scale = malloc(sizeof *scale * nout);
  if (!d.in || !d.w || !d.out || !ref || !scale) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  bench_fill_nonzero(d.in, nin, 3);
  bench_fill_nonzero(d.w, nw, 4);
  reference(&d, ref, scale);
  bench_ref chk = {NULL, ref, scale, 0, nout, 2e-4};

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA | TB_EXTRA2, ladder);
  tb_kernel k;
  int have_te = tb_build(wl, "conv2d", conv_define, s, ladder, nl,
                         (const char *const[2]){"x16tail", "kblock"}, &k);
  if (have_te) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("compile conv2d", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  hl_pipe *hl[2] = {NULL, NULL};
  for (int par = 1; par >= 0; par--)
    if (!(hl[par] =
              hl_conv2d_new(s->n, s->c, s->h, s->w, s->k, d.in, d.w, d.out, par, err, sizeof err)))
      fprintf(stderr, "  %s: Halide failed: %s\n", wl, err);
  if (hl[1])
    bench_add_compile("compile conv2d", "halide", hl_compile_s(hl[1]),
                      "compile_jit, parallel schedule");

  if (getenv("TE_BENCH_AB") && have_te)
    run_ab(cfg, wl, &d, &k, atoi(getenv("TE_BENCH_AB")));
  run_variants(cfg, wl, &d, &k, have_te, hl, &chk);
  if (cfg->tuned_log)
    run_tuned(cfg, wl, &d, &k, have_te, &chk);

  hl_free(hl[0]);
  hl_free(hl[1]);
  if (have_te)
    tb_free(&k);
done:
  bench_free(d.in);
  bench_free(d.w);
  bench_free(d.out);
  free(ref);
  free(scale);
}
