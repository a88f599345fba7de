/* bf16gemm.c — bf16 GEMM accumulating in f32, C = A x B with A and B bf16, C f32 (n x n,
 * row-major), te against oneDNN's bf16 matmul and against te's own f32 SGEMM (the hand schedule
 * of sgemm_schedule.c on the same values as floats), at 1 and 2 threads, in one run: the
 * "te-f32" row's ratio is te's bf16 speed over its f32 speed (the instructions' throughput
 * ratio is 2: vdpbf16ps does 32 multiply-adds where vfmadd231ps does 16). Rates are 2 n^3
 * flops a second; their fraction is of the machine's measured vdpbf16ps peak (peak_dot.c).
 *
 * te's schedule is dot_gemm.c's (int8gemm.c's) with pairs instead of quads: B given as panels
 * Bp[j / 64][k / 2][j % 64][k % 2] (dot_gemm_pack, outside the timed call, as oneDNN's weights
 * are reordered outside it), so 2 consecutive k of one column are one 32-bit lane and a panel is
 * read contiguously; C tiled (64 rows x 64 columns, rows parallel) into a local block CL
 * computed at the tile, with loops i.m, k2, i.i (6, unrolled), j.v (4, unrolled), k.i (2,
 * te_tensorize "vdpbf16ps") and j (16, vectorized): a 6 x 64 register tile of 24 zmm
 * accumulators, each step 6 broadcasts of a bf16 pair of A and 4 loads of Bp feeding 24
 * vdpbf16ps. The ladder falls back to the same nest without te_tensorize (LLVM's own vector
 * code), then to te's default schedule. TE_BENCH_CPU=R also times te and oneDNN by CPU time
 * (dot_time.h).
 * Checks: every result against an f64 reference over 9 full rows, relative to the sum of the
 * products' magnitudes (f32 accumulation of n terms; all three variants sum in f32).
 */
#include "bench.h"
#include "dot_gemm.h"
#include "dot_time.h"
#include "report.h"
#include "te_util.h"

#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHECK_ROWS = 9 };

static float bf16_value(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void bf16gemm_size(const bench_cfg *cfg, int n) {
  char wl[48];
  const dot_gemm kind = {n, TE_BF16, TE_BF16, TE_F32, 2, "vdpbf16ps"};
  snprintf(wl, sizeof wl, "bf16 gemm %d", n);
  size_t nn = (size_t)n * n, npts = (size_t)CHECK_ROWS * n;
  uint16_t *a = malloc(nn * sizeof *a), *b = malloc(nn * sizeof *b), *bp = malloc(nn * sizeof *bp);
  float *c = bench_alloc_f32(nn);
  float *fa = bench_alloc_f32(nn), *fb = bench_alloc_f32(nn), *fc = bench_alloc_f32(nn);
  double *ref = malloc(npts * sizeof *ref), *scale = malloc(npts * sizeof *scale);
  size_t *idx = malloc(npts * sizeof *idx);
  dnnl_bf16mm *dn = NULL;
  tb_kernel k = {0}, kf = {0}, kt = {0};
  int have = 0, have_f = 0, have_t = 0;
  if (!a || !b || !bp || !c || !fa || !fb || !fc || !ref || !scale || !idx) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  uint64_t x = 88172645463325252ull;
  for (size_t i = 0; i < nn; i++) { /* xorshift: values in +-[0.5, 2), all 8 significant bits */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    uint16_t sign = (uint16_t)((x >> 40) & 0x8000), sig = (uint16_t)((x >> 8) & 0x7f);
    a[i] = (uint16_t)(sign | (0x3f00 + ((x >> 20) & 0x80)) | sig);
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    sign = (uint16_t)((x >> 40) & 0x8000), sig = (uint16_t)((x >> 8) & 0x7f);
    b[i] = (uint16_t)(sign | (0x3f00 + ((x >> 20) & 0x80)) | sig);
    fa[i] = bf16_value(a[i]), fb[i] = bf16_value(b[i]);
  }
  dot_gemm_pack(b, bp, 2, n, kind.group);
  for (int i = 0; i < CHECK_ROWS; i++) { /* rows spread over the matrix */
    size_t row = (size_t)((long)i * (n - 1) / (CHECK_ROWS - 1));
    for (int j = 0; j < n; j++) {
      double s = 0, sc = 0;
      for (int q = 0; q < n; q++) {
        double p = (double)fa[row * n + q] * fb[(size_t)q * n + j];
        s += p, sc += fabs(p);
      }
      ref[(size_t)i * n + j] = s, scale[(size_t)i * n + j] = sc;
      idx[(size_t)i * n + j] = row * n + (size_t)j;
    }
  }

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA, ladder);
  have = tb_build(wl, "bf16gemm", dot_gemm_define, &kind, ladder, nl,
                  (const char *const[2]){"vdpbf16ps", "-"}, &k);
  unsigned all = TB_TILE;
  have_f = tb_build(wl, "sgemm_f32", dot_gemm_f32_define, &n, &all, 1, NULL, &kf);
  dot_gemm_tuned tuned = {&kind, cfg->tuned_log};
  if (cfg->tuned_log &&
      (have_t = tb_build(wl, "bf16gemm_tuned", dot_gemm_tuned_define, &tuned, &all, 1, NULL, &kt)))
    snprintf(kt.note, sizeof kt.note, "te_apply_best(%s)", cfg->tuned_log);
  if (have) {
    char note[160], cwl[48];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    snprintf(cwl, sizeof cwl, "bf16 gemm %d compile", n);
    bench_add_compile(cwl, "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s, note);
  }
  char err[200] = "";
  DLTensor ta = {0}, tbt = {0}, tc, tbr, fta, ftb, ftc;
  int64_t shape[2] = {n, n}, sf[4][8], pshape[4] = {n / 64, n / 2, 64, 2};
  ta = (DLTensor){a, {kDLCPU, 0}, 2, {kDLBfloat, 16, 1}, shape, NULL, 0};
  tbt = (DLTensor){bp, {kDLCPU, 0}, 4, {kDLBfloat, 16, 1}, pshape, NULL, 0};
  tb_tensor(&tc, sf[3], c, 2, shape);
  tb_tensor(&fta, sf[0], fa, 2, shape);
  tb_tensor(&ftb, sf[1], fb, 2, shape);
  tb_tensor(&ftc, sf[2], fc, 2, shape);
  tb_args targs = {&k, {&ta, &tbt, &tc}}, fargs = {&kf, {&fta, &ftb, &ftc}};
  /* te-tune's kernel is of te_op_matmul_acc: B row-major, packed (if at all) by the kernel */
  tbr = (DLTensor){b, {kDLCPU, 0}, 2, {kDLBfloat, 16, 1}, shape, NULL, 0};
  tb_args tuned_args = {&kt, {&ta, &tbr, &tc}};
  bench_ref chk = {idx, ref, scale, 0, npts, 1e-4};
  double flops = 2.0 * n * n * n;
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    /* oneDNN plans its split for the thread count it sees at creation: one primitive a count */
    omp_set_num_threads(t);
    dnnl_bf16mm_free(dn);
    if (!(dn = dnnl_bf16mm_new(n, a, b, c, err, sizeof err)))
      fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    if (have && dn) {
      char label[64];
      snprintf(label, sizeof label, "%s %d thr", wl, t);
      tb_set_threads(t);
      dot_cpu_versus(label, "te", tb_run, &targs, "onednn", dnnl_bf16mm_run, dn);
    }
    for (int round = 0; round < cfg->rounds; round++) {
      if (!have)
        bench_add_failed(wl, "te", t, k.note);
      else {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te", t, ROW_FLOPS, flops, tb_run, &targs, c, nn, &chk, k.note);
      }
      if (dn) {
        omp_set_num_threads(t);
        bench_run_variant(cfg, wl, "onednn", t, ROW_FLOPS, flops, dnnl_bf16mm_run, dn, c, nn, &chk,
                          "matmul bf16 x bf16 -> f32, weights in its own format");
      } else {
        bench_add_failed(wl, "onednn", t, err);
      }
      if (have_f) {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te-f32", t, ROW_FLOPS, flops, tb_run, &fargs, fc, nn, &chk,
                          "te's f32 SGEMM (sgemm_schedule.c) on the same values");
      } else {
        bench_add_failed(wl, "te-f32", t, kf.note);
      }
      if (have_t) { /* --tuned: te-tune's best kernel of te_op_matmul_acc */
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te-tuned", t, ROW_FLOPS, flops, tb_run, &tuned_args, c, nn,
                          &chk, kt.note);
      }
    }
  }
  omp_set_num_threads(cfg->max_threads);
done:
  if (have)
    tb_free(&k);
  if (have_f)
    tb_free(&kf);
  if (have_t)
    tb_free(&kt);
  dnnl_bf16mm_free(dn);
  free(a), free(b), free(bp), free(ref), free(scale), free(idx);
  bench_free(c), bench_free(fa), bench_free(fb), bench_free(fc);
}

void wl_bf16gemm(const bench_cfg *cfg) {
  static const int full[] = {1024, 2048}, quick[] = {256};
  const int *sizes = cfg->quick ? quick : full;
  int count = cfg->quick ? 1 : 2;
  for (int s = 0; s < count; s++)
    bf16gemm_size(cfg, sizes[s]);
}
