/* bf16conv.c — bf16 conv2d accumulating in f32, the ResNet-50 3x3 layer of int8conv.c (N = 1,
 * C = K = 64, 56 x 56, stride 1, pad 1): bf16 NHWC data x bf16 weights -> f32 NHWC, te against
 * oneDNN's bf16 convolution, at 1 and 2 threads. Rates are flops (2 N K C H W 9) per second;
 * their fraction is of the measured vdpbf16ps peak.
 *
 * The definition, te's schedule (te_tensorize "vdpbf16ps" on pairs of input channels) and the
 * weights' pair packing Kp[ry][rx][c / 2][o][c % 2] are dot_conv.c's, shared with int8conv.c.
 * Checks: every result of 3 output rows against an f64 reference, relative to the sum of the
 * products' magnitudes (1e-4: f32 accumulation of 576 exact products; both sides sum in f32).
 * TE_BENCH_CPU=R also times te and oneDNN by CPU time (dot_time.h).
 */
#include "bench.h"
#include "dot_conv.h"
#include "dot_time.h"
#include "report.h"
#include "te_util.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static float bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* xorshift: a bf16 in +-[0.5, 2) with all 8 significant bits random. */
static uint16_t random_bf16(uint64_t *x) {
  *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
  uint16_t sign = (uint16_t)((*x >> 40) & 0x8000), sig = (uint16_t)((*x >> 8) & 0x7f);
  return (uint16_t)(sign | (0x3f00 + ((*x >> 20) & 0x80)) | sig);
}

void wl_bf16conv(const bench_cfg *cfg) {
  const char *wl = "bf16 conv2d resnet50-3x3";
  const dot_conv kind = {TE_BF16, TE_BF16, TE_F32, 2, "vdpbf16ps"};
  size_t nin = (size_t)DC_N * DC_H * DC_W * DC_C, nw = (size_t)9 * DC_C * DC_K;
  size_t nout = (size_t)DC_N * DC_H * DC_W * DC_K, per = (size_t)DC_W * DC_K;
  size_t npts = DC_CHECK_ROWS * per;
  uint16_t *in = malloc(nin * 2), *w = malloc(nw * 2), *kp = malloc(nw * 2);
  float *out = bench_alloc_f32(nout);
  double *ref = malloc(npts * sizeof *ref), *scale = malloc(npts * sizeof *scale);
  double *din = malloc(nin * sizeof *din), *dw = malloc(nw * sizeof *dw);
  size_t *idx = malloc(npts * sizeof *idx);
  tb_kernel k = {0};
  int have = 0;
  dnnl_bf16conv *dn = NULL;
  if (!in || !w || !kp || !out || !ref || !scale || !din || !dw || !idx) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  uint64_t s = 0x2545f4914f6cdd1dull;
  for (size_t i = 0; i < nin; i++)
    in[i] = random_bf16(&s), din[i] = bf16_value(in[i]);
  for (size_t i = 0; i < nw; i++) /* HWIO */
    w[i] = random_bf16(&s), dw[i] = bf16_value(w[i]);
  dot_conv_pack(w, kp, 2, kind.group);
  dot_conv_reference(din, dw, ref, scale);
  for (int q = 0; q < DC_CHECK_ROWS; q++)
    for (size_t i = 0; i < per; i++)
      idx[q * per + i] = (size_t)dot_conv_rows[q] * per + i;
  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA, ladder);
  have = tb_build(wl, "bf16conv", dot_conv_define, &kind, ladder, nl,
                  (const char *const[2]){"vdpbf16ps", "-"}, &k);
  if (have) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("bf16 conv2d compile", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  DLTensor td, tk, to;
  int64_t sd[4] = {DC_N, DC_H, DC_W, DC_C}, sk[5] = {3, 3, DC_C / 2, DC_K, 2},
          so[4] = {DC_N, DC_H, DC_W, DC_K};
  td = (DLTensor){in, {kDLCPU, 0}, 4, {kDLBfloat, 16, 1}, sd, NULL, 0};
  tk = (DLTensor){kp, {kDLCPU, 0}, 5, {kDLBfloat, 16, 1}, sk, NULL, 0};
  to = (DLTensor){out, {kDLCPU, 0}, 4, {kDLFloat, 32, 1}, so, NULL, 0};
  tb_args targs = {&k, {&td, &tk, &to}};
  bench_ref chk = {idx, ref, scale, 0, npts, 1e-4};
  double flops = 2.0 * DC_N * DC_K * DC_C * DC_H * DC_W * 9;
  char err[200] = "";
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    omp_set_num_threads(t); /* oneDNN plans for the count it sees at creation */
    dnnl_bf16conv_free(dn);
    if (!(dn = dnnl_bf16conv_new(DC_N, DC_C, DC_H, DC_W, DC_K, in, w, out, err, sizeof err)))
      fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    if (have && dn) {
      char label[64];
      snprintf(label, sizeof label, "%s %d thr", wl, t);
      tb_set_threads(t);
      dot_cpu_versus(label, "te", tb_run, &targs, "onednn", dnnl_bf16conv_run, dn);
    }
    for (int round = 0; round < cfg->rounds; round++) {
      if (!have)
        bench_add_failed(wl, "te", t, k.note);
      else {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te", t, ROW_FLOPS, flops, tb_run, &targs, out, nout, &chk,
                          k.note);
      }
      if (dn)
        bench_run_variant(cfg, wl, "onednn", t, ROW_FLOPS, flops, dnnl_bf16conv_run, dn, out, nout,
                          &chk, "direct conv bf16 x bf16 -> f32, NHWC, weights in its own format");
      else
        bench_add_failed(wl, "onednn", t, err);
    }
  }
  omp_set_num_threads(cfg->max_threads);
done:
  if (have)
    tb_free(&k);
  dnnl_bf16conv_free(dn);
  free(in), free(w), free(kp), free(ref), free(scale), free(din), free(dw), free(idx);
  bench_free(out);
}
