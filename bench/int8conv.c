/* int8conv.c — int8 conv2d, the ResNet-50 3x3 layer (N = 1, C = K = 64, 56 x 56, stride 1, pad 1):
 * u8 NHWC data x s8 weights -> s32 NHWC, te against oneDNN's int8 convolution, at 1 and 2
 * threads. Rates are integer operations (2 N K C H W 9) per second; their fraction is of the
 * measured vpdpbusd peak.
 *
 * The definition, te's schedule (te_tensorize "vpdpbusd" on groups of 4 input channels) and the
 * weights' VNNI packing are dot_conv.c's, shared with bf16conv.c.
 * Checks: every result compared exactly with an f64 (exact: |sums| < 2^25) reference over 3
 * output rows. TE_BENCH_CPU=R also times te and oneDNN by CPU time (dot_time.h).
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

typedef struct ic_check {
  bench_fn fn;
  void *arg;
  int32_t *out;
  size_t nout;
  const double *ref; /* rows dot_conv_rows of the output, each W * K values */
  float *flag;
  int checked;
} ic_check;

static int run_checked(void *p) {
  ic_check *r = p;
  if (!r->checked)
    memset(r->out, 0x5a, r->nout * sizeof *r->out);
  int st = r->fn(r->arg);
  if (!r->checked && st == 0) {
    size_t bad = 0, per = (size_t)DC_W * DC_K;
    for (int q = 0; q < DC_CHECK_ROWS; q++)
      for (size_t i = 0; i < per; i++)
        bad += r->out[(size_t)dot_conv_rows[q] * per + i] != r->ref[q * per + i];
    *r->flag = bad ? 1.0f : 0.0f;
    if (bad)
      fprintf(stderr, "  int8conv: %zu checked outputs differ\n", bad);
    r->checked = 1;
  }
  return st;
}

void wl_int8conv(const bench_cfg *cfg) {
  const char *wl = "int8 conv2d resnet50-3x3";
  const dot_conv kind = {TE_U8, TE_I8, TE_I32, 4, "vpdpbusd"};
  size_t nin = (size_t)DC_N * DC_H * DC_W * DC_C, nw = (size_t)9 * DC_C * DC_K;
  size_t nout = (size_t)DC_N * DC_H * DC_W * DC_K, per = (size_t)DC_W * DC_K;
  uint8_t *in = malloc(nin);
  int8_t *w = malloc(nw), *kp = malloc(nw);
  int32_t *out = aligned_alloc(64, nout * sizeof *out);
  double *ref = malloc(DC_CHECK_ROWS * per * sizeof *ref);
  double *din = malloc(nin * sizeof *din), *dw = malloc(nw * sizeof *dw);
  tb_kernel k = {0};
  int have = 0;
  dnnl_i8conv *dn = NULL;
  if (!in || !w || !kp || !out || !ref || !din || !dw) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  uint64_t s = 0x9e3779b97f4a7c15ull;
  const unsigned in_max = dnnl_i8_u8_max();
  for (size_t i = 0; i < nin; i++) { /* the whole ranges (in's: see dnnl_i8_u8_max) */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    in[i] = (uint8_t)((s >> 16) % (in_max + 1)), din[i] = in[i];
  }
  for (size_t i = 0; i < nw; i++) /* HWIO */
    s ^= s << 13, s ^= s >> 7, s ^= s << 17, w[i] = (int8_t)(s >> 24), dw[i] = w[i];
  dot_conv_pack(w, kp, 1, kind.group);
  dot_conv_reference(din, dw, ref, NULL);
  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA, ladder);
  have = tb_build(wl, "int8conv", dot_conv_define, &kind, ladder, nl,
                  (const char *const[2]){"vpdpbusd", "-"}, &k);
  if (have) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile("int8 conv2d compile", "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s,
                      note);
  }
  DLTensor td = {0}, tk = {0}, to = {0};
  int64_t sd[4] = {DC_N, DC_H, DC_W, DC_C}, sk[5] = {3, 3, DC_C / 4, DC_K, 4},
          so[4] = {DC_N, DC_H, DC_W, DC_K};
  td = (DLTensor){in, {kDLCPU, 0}, 4, {kDLUInt, 8, 1}, sd, NULL, 0};
  tk = (DLTensor){kp, {kDLCPU, 0}, 5, {kDLInt, 8, 1}, sk, NULL, 0};
  to = (DLTensor){out, {kDLCPU, 0}, 4, {kDLInt, 32, 1}, so, NULL, 0};
  tb_args targs = {&k, {&td, &tk, &to}};
  float flag_te = 0, flag_dn = 0;
  double zero = 0, one = 1;
  bench_ref exact = {NULL, &zero, &one, 1, 1, 0.5};
  double ops = 2.0 * DC_N * DC_K * DC_C * DC_H * DC_W * 9;
  char err[200] = "";
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    omp_set_num_threads(t); /* oneDNN plans for the count it sees at creation */
    dnnl_i8conv_free(dn);
    if (!(dn = dnnl_i8conv_new(DC_N, DC_C, DC_H, DC_W, DC_K, in, w, out, err, sizeof err)))
      fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    if (have && dn) {
      char label[64];
      snprintf(label, sizeof label, "%s %d thr", wl, t);
      tb_set_threads(t);
      dot_cpu_versus(label, "te", tb_run, &targs, "onednn", dnnl_i8conv_run, dn);
    }
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
        bench_run_variant(
            cfg, wl, "onednn", t, ROW_FLOPS, ops, run_checked, &rd, &flag_dn, 1, &exact,
            in_max == 255 ? "direct conv u8 x s8 -> s32, NHWC, weights in its own format"
                          : "direct conv u8 (7-bit: no VNNI) x s8 -> s32, NHWC, weights in "
                            "its own format");
      else
        bench_add_failed(wl, "onednn", t, err);
    }
  }
  omp_set_num_threads(cfg->max_threads);
done:
  if (have)
    tb_free(&k);
  dnnl_i8conv_free(dn);
  free(in), free(w), free(kp), free(out), free(ref), free(din), free(dw);
}
