/* int8conv.c — int8 conv2d, the ResNet-50 3x3 layer (N = 1, C = K = 64, 56 x 56, stride 1, pad 1):
 * u8 NHWC data x s8 weights -> s32 NHWC, te against oneDNN's int8 convolution, at 1 and 2
 * threads. Rates are integer operations (2 N K C H W 9) per second; their fraction is of the
 * measured vpdpbusd peak.
 *
 * The weights are packed for each side outside the timed call, as inference engines store them:
 * oneDNN reorders HWIO into its own format, te takes them as Kp[ry][rx][c / 4][o][c % 4] (4
 * consecutive input channels of one output channel in a 32-bit lane: the VNNI layout). te's
 * kernel pads the data into a stage (parallel) and computes each 8 x 32 tile of (x, o) of a row
 * in a local block: loops ry, rx, c / 4, x (8, unrolled), o.v (2, unrolled), c % 4 (te_tensorize
 * "vpdpbusd"), o (16, vectorized): 16 zmm accumulators, each step 8 broadcasts of 4 data bytes
 * and 2 loads of weights feeding 16 vpdpbusd. Rows are parallel.
 * Checks: every result compared exactly with an int64 reference over 3 output rows.
 */
#include "bench.h"
#include "report.h"
#include "te_util.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { IC_N = 1, IC_C = 64, IC_K = 64, IC_H = 56, IC_W = 56, IC_XR = 8, IC_OB = 32 };

static void ic_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)params;
  te_expr *one = te_int(ctx, 1), *four = te_int(ctx, 4);
  te_tensor *D = te_placeholder(
      ctx, "D", TE_U8, 4,
      TE_EXPRS(te_int(ctx, IC_N), te_int(ctx, IC_H), te_int(ctx, IC_W), te_int(ctx, IC_C)));
  te_tensor *Kp = te_placeholder(
      ctx, "Kp", TE_I8, 5,
      TE_EXPRS(te_int(ctx, 3), te_int(ctx, 3), te_int(ctx, IC_C / 4), te_int(ctx, IC_K), four));
  te_expr *n = te_var(ctx, "n"), *h = te_var(ctx, "h"), *w = te_var(ctx, "w"),
          *c = te_var(ctx, "c");
  te_expr *inside = te_and(te_and(te_ge(h, one), te_le(h, te_int(ctx, IC_H))),
                           te_and(te_ge(w, one), te_le(w, te_int(ctx, IC_W))));
  te_tensor *Dp = te_compute(
      ctx, "Dp", 4,
      TE_EXPRS(te_int(ctx, IC_N), te_int(ctx, IC_H + 2), te_int(ctx, IC_W + 2), te_int(ctx, IC_C)),
      TE_EXPRS(n, h, w, c),
      te_if_then_else(inside, TE_AT(D, n, te_sub(h, one), te_sub(w, one), c),
                      te_const(ctx, TE_U8, 0)));
  te_expr *y = te_var(ctx, "y"), *x = te_var(ctx, "x"), *o = te_var(ctx, "o"),
          *n2 = te_var(ctx, "n");
  te_expr *ry = te_reduce_axis(ctx, "ry", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rx = te_reduce_axis(ctx, "rx", te_int(ctx, 0), te_int(ctx, 3));
  te_expr *rc = te_reduce_axis(ctx, "rc", te_int(ctx, 0), te_int(ctx, IC_C));
  te_expr *d = TE_AT(Dp, n2, te_add(y, ry), te_add(x, rx), rc);
  te_expr *k = TE_AT(Kp, ry, rx, te_floordiv(rc, four), o, te_floormod(rc, four));
  te_expr *body = te_mul(te_cast(TE_I32, d), te_cast(TE_I32, k));
  te_tensor *O = te_compute(
      ctx, "O", 4,
      TE_EXPRS(te_int(ctx, IC_N), te_int(ctx, IC_H), te_int(ctx, IC_W), te_int(ctx, IC_K)),
      TE_EXPRS(n2, y, x, o), TE_SUM(body, ry, rx, rc));
  out->ntensors = 3;
  out->tensors[0] = D, out->tensors[1] = Kp, out->tensors[2] = O;
  te_schedule *s = out->s = te_schedule_new(ctx, 1, &O);
  if (!s || !(flags & TB_TILE))
    return;
  te_tensor *OL = NULL;
  te_cache_write(s, O, TE_SCOPE_LOCAL, &OL);
  if (!OL)
    return;
  te_stage *os = te_stage_of(s, O), *ls = te_stage_of(s, OL), *ps = te_stage_of(s, Dp);
  te_iter *xo, *xi, *oo, *oi, *ov, *ol, *c4, *q, *oio, *oii;
  te_split(os, te_axis(os, 2), IC_XR, &xo, &xi);
  te_split(os, te_axis(os, 3), IC_OB, &oo, &oi);
  te_reorder(os, 6, (te_iter *const[]){te_axis(os, 0), te_axis(os, 1), xo, oo, xi, oi});
  te_compute_at(ls, os, oo);
  te_split(ls, te_axis(ls, 3), 16, &ov, &ol);
  te_split(ls, te_reduce_iter(ls, 2), 4, &c4, &q);
  te_reorder(ls, 9,
             (te_iter *const[]){te_axis(ls, 0), te_axis(ls, 1), te_reduce_iter(ls, 0),
                                te_reduce_iter(ls, 1), c4, te_axis(ls, 2), ov, q, ol});
  te_split(os, oi, 16, &oio, &oii);
  if (flags & TB_VEC) {
    te_vectorize(ls, ol);
    te_vectorize(os, oii);
    te_vectorize(ps, te_axis(ps, 3));
  }
  if (flags & TB_UNROLL) {
    te_unroll(ls, te_axis(ls, 2));
    te_unroll(ls, ov);
  }
  if (flags & TB_EXTRA)
    te_tensorize(ls, q, "vpdpbusd");
  if (flags & TB_PAR) {
    te_parallel(os, te_axis(os, 1));
    te_parallel(ps, te_axis(ps, 1));
  }
}

typedef struct ic_check {
  bench_fn fn;
  void *arg;
  int32_t *out;
  size_t nout;
  const int64_t *ref; /* rows kRows[] of the output, each W * K values */
  float *flag;
  int checked;
} ic_check;

static const int kRows[3] = {0, 27, IC_H - 1};

static int run_checked(void *p) {
  ic_check *r = p;
  if (!r->checked)
    memset(r->out, 0x5a, r->nout * sizeof *r->out);
  int st = r->fn(r->arg);
  if (!r->checked && st == 0) {
    size_t bad = 0, per = (size_t)IC_W * IC_K;
    for (int q = 0; q < 3; q++)
      for (size_t i = 0; i < per; i++)
        bad += r->out[(size_t)kRows[q] * per + i] != r->ref[q * per + i];
    *r->flag = bad ? 1.0f : 0.0f;
    if (bad)
      fprintf(stderr, "  int8conv: %zu checked outputs differ\n", bad);
    r->checked = 1;
  }
  return st;
}

void wl_int8conv(const bench_cfg *cfg) {
  const char *wl = "int8 conv2d resnet50-3x3";
  size_t nin = (size_t)IC_N * IC_H * IC_W * IC_C, nw = (size_t)9 * IC_C * IC_K;
  size_t nout = (size_t)IC_N * IC_H * IC_W * IC_K, per = (size_t)IC_W * IC_K;
  uint8_t *in = malloc(nin);
  int8_t *w = malloc(nw), *kp = malloc(nw);
  int32_t *out = aligned_alloc(64, nout * sizeof *out);
  int64_t *ref = malloc(3 * per * sizeof *ref);
  tb_kernel k = {0};
  int have = 0;
  dnnl_i8conv *dn = NULL;
  if (!in || !w || !kp || !out || !ref) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  uint64_t s = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < nin; i++)
    s ^= s << 13, s ^= s >> 7, s ^= s << 17, in[i] = (uint8_t)(s >> 16);
  for (size_t i = 0; i < nw; i++) /* HWIO */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17, w[i] = (int8_t)(s >> 24);
  for (int ry = 0; ry < 3; ry++) /* Kp[ry][rx][c / 4][o][c % 4] */
    for (int rx = 0; rx < 3; rx++)
      for (int c = 0; c < IC_C; c++)
        for (int o = 0; o < IC_K; o++)
          kp[((((size_t)ry * 3 + rx) * (IC_C / 4) + c / 4) * IC_K + o) * 4 + c % 4] =
              w[(((size_t)ry * 3 + rx) * IC_C + c) * IC_K + o];
  for (int q = 0; q < 3; q++) {
    int y = kRows[q];
    for (int x = 0; x < IC_W; x++)
      for (int o = 0; o < IC_K; o++) {
        int64_t acc = 0;
        for (int ry = 0; ry < 3; ry++)
          for (int rx = 0; rx < 3; rx++) {
            int iy = y + ry - 1, ix = x + rx - 1;
            if (iy < 0 || iy >= IC_H || ix < 0 || ix >= IC_W)
              continue;
            for (int c = 0; c < IC_C; c++)
              acc += (int64_t)in[((size_t)iy * IC_W + ix) * IC_C + c] *
                     w[(((size_t)ry * 3 + rx) * IC_C + c) * IC_K + o];
          }
        ref[q * per + (size_t)x * IC_K + o] = acc;
      }
  }
  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA, ladder);
  have = tb_build(wl, "int8conv", ic_define, NULL, ladder, nl,
                  (const char *const[2]){"vpdpbusd", "-"}, &k);
  if (have) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("int8 conv2d compile", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  DLTensor td = {0}, tk = {0}, to = {0};
  int64_t sd[4] = {IC_N, IC_H, IC_W, IC_C}, sk[5] = {3, 3, IC_C / 4, IC_K, 4},
          so[4] = {IC_N, IC_H, IC_W, IC_K};
  td = (DLTensor){in, {kDLCPU, 0}, 4, {kDLUInt, 8, 1}, sd, NULL, 0};
  tk = (DLTensor){kp, {kDLCPU, 0}, 5, {kDLInt, 8, 1}, sk, NULL, 0};
  to = (DLTensor){out, {kDLCPU, 0}, 4, {kDLInt, 32, 1}, so, NULL, 0};
  tb_args targs = {&k, {&td, &tk, &to}};
  float flag_te = 0, flag_dn = 0;
  double zero = 0, one = 1;
  bench_ref exact = {NULL, &zero, &one, 1, 1, 0.5};
  double ops = 2.0 * IC_N * IC_K * IC_C * IC_H * IC_W * 9;
  char err[200] = "";
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    omp_set_num_threads(t); /* oneDNN plans for the count it sees at creation */
    dnnl_i8conv_free(dn);
    if (!(dn = dnnl_i8conv_new(IC_N, IC_C, IC_H, IC_W, IC_K, in, w, out, err, sizeof err)))
      fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    ic_check rt = {tb_run, &targs, out, nout, ref, &flag_te, 0};
    ic_check rd = {dnnl_i8conv_run, dn, out, nout, ref, &flag_dn, 0};
    for (int round = 0; round < cfg->rounds; round++) {
      if (!have)
        bench_add_failed(wl, "te", t, k.note);
      else {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te", t, ROW_FLOPS, ops, run_checked, &rt, &flag_te, 1, &exact,
                          k.note);
      }
      if (dn)
        bench_run_variant(cfg, wl, "onednn", t, ROW_FLOPS, ops, run_checked, &rd, &flag_dn, 1,
                          &exact, "direct conv u8 x s8 -> s32, NHWC, weights in its own format");
      else
        bench_add_failed(wl, "onednn", t, err);
    }
  }
  omp_set_num_threads(cfg->max_threads);
done:
  if (have)
    tb_free(&k);
  dnnl_i8conv_free(dn);
  free(in), free(w), free(kp), free(out), free(ref);
}
