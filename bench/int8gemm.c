/* int8gemm.c — int8 GEMM, C = A x B with A u8, B s8, C s32 (n x n, row-major), te against oneDNN's
 * int8 matmul and against te's own f32 SGEMM (the hand schedule of sgemm_schedule.c on the same
 * values as floats), at 1 and 2 threads, in one run: the "te-f32" row's ratio is te's int8 speed
 * over its f32 speed (the instructions' throughput ratio is 4: vpdpbusd does 64 multiply-adds
 * where vfmadd231ps does 16). Rates are integer operations (2 n^3) per second, printed in the
 * GFLOP/s column; their fraction is of the machine's measured vpdpbusd peak (peak_dot.c).
 *
 * te's schedule (dot_gemm.c, groups of 4): B given as VNNI panels Bp[j / 64][k / 4][j % 64][k % 4]
 * (dot_gemm_pack, outside the timed call, as oneDNN's weights are reordered outside it), so 4
 * consecutive k of one column are one 32-bit lane and a panel is read contiguously; C tiled (64
 * rows x 64 columns, rows parallel) into a local block CL computed at the tile, with loops i.m,
 * k4, i.i (6, unrolled), j.v (4, unrolled), k.i (4, te_tensorize "vpdpbusd") and j (16,
 * vectorized): a 6 x 64 register tile of 24 zmm accumulators, each step 6 broadcasts of 4 bytes
 * of A and 4 loads of Bp feeding 24 vpdpbusd.
 * The ladder falls back to the same nest without te_tensorize (LLVM's own vector code), then
 * to te's default schedule.
 * Checks: every te and oneDNN result is compared exactly with an int64 reference over 9 full rows.
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

/* A variant's call that checks its result exactly on its first call (the output poisoned
   before it) and sets *flag to 0 (exact) or 1 for bench_run_variant's float check. */
typedef struct exact_run {
  bench_fn fn;
  void *arg;
  int32_t *c;
  size_t nc;
  const size_t *idx;  /* the checked points of C */
  const int64_t *ref; /* their values */
  size_t npts;
  float *flag;
  int checked;
} exact_run;

static int run_exact(void *p) {
  exact_run *r = p;
  if (!r->checked)
    memset(r->c, 0x5a, r->nc * sizeof *r->c);
  int st = r->fn(r->arg);
  if (!r->checked && st == 0) {
    size_t bad = 0;
    for (size_t i = 0; i < r->npts; i++)
      bad += r->c[r->idx[i]] != r->ref[i];
    *r->flag = bad ? 1.0f : 0.0f;
    if (bad)
      fprintf(stderr, "  int8gemm: %zu of %zu checked outputs differ\n", bad, r->npts);
    r->checked = 1;
  }
  return st;
}

static void int8gemm_size(const bench_cfg *cfg, int n) {
  char wl[48];
  const dot_gemm kind = {n, TE_U8, TE_I8, TE_I32, 4, "vpdpbusd"};
  snprintf(wl, sizeof wl, "int8 gemm %d", n);
  size_t nn = (size_t)n * n, npts = (size_t)CHECK_ROWS * n;
  uint8_t *a = malloc(nn);
  int8_t *b = malloc(nn), *bp = malloc(nn);
  int32_t *c = aligned_alloc(64, nn * sizeof *c);
  int64_t *ref = malloc(npts * sizeof *ref);
  float *fa = bench_alloc_f32(nn), *fb = bench_alloc_f32(nn), *fc = bench_alloc_f32(nn);
  double *fref = malloc(npts * sizeof *fref), *fscale = malloc(npts * sizeof *fscale);
  dnnl_i8mm *dn = NULL;
  tb_kernel k = {0}, kf = {0}, kt = {0};
  int have = 0, have_f = 0, have_t = 0;
  if (!a || !b || !bp || !c || !ref || !fa || !fb || !fc || !fref || !fscale) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  uint64_t x = 88172645463325252ull;
  const unsigned a_max = dnnl_i8_u8_max();
  for (size_t i = 0; i < nn; i++) { /* xorshift: the whole ranges (a's: see dnnl_i8_u8_max) */
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    a[i] = (uint8_t)((x >> 8) % (a_max + 1)), b[i] = (int8_t)(x >> 24);
    fa[i] = a[i], fb[i] = b[i];
  }
  dot_gemm_pack(b, bp, 1, n, kind.group);
  for (int i = 0; i < CHECK_ROWS; i++) { /* rows spread over the matrix */
    int row = (int)((long)i * (n - 1) / (CHECK_ROWS - 1));
    for (int j = 0; j < n; j++) {
      int64_t s = 0;
      double sc = 0;
      for (int q = 0; q < n; q++) {
        s += (int64_t)a[(size_t)row * n + q] * b[(size_t)q * n + j];
        sc += fabs((double)a[(size_t)row * n + q] * b[(size_t)q * n + j]);
      }
      ref[(size_t)i * n + j] = s, fref[(size_t)i * n + j] = (double)s;
      fscale[(size_t)i * n + j] = sc;
    }
  }
  /* the checked points: those rows of C */
  size_t *idx = malloc(npts * sizeof *idx);
  if (!idx)
    goto done;
  for (int i = 0; i < CHECK_ROWS; i++) {
    size_t row = (size_t)((long)i * (n - 1) / (CHECK_ROWS - 1));
    for (int j = 0; j < n; j++)
      idx[(size_t)i * n + j] = row * n + (size_t)j;
  }

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA, ladder);
  have = tb_build(wl, "int8gemm", dot_gemm_define, &kind, ladder, nl,
                  (const char *const[2]){"vpdpbusd", "-"}, &k);
  unsigned all = TB_TILE;
  have_f = tb_build(wl, "sgemm_f32", dot_gemm_f32_define, &n, &all, 1, NULL, &kf);
  dot_gemm_tuned tuned = {&kind, cfg->tuned_log};
  if (cfg->tuned_log &&
      (have_t = tb_build(wl, "int8gemm_tuned", dot_gemm_tuned_define, &tuned, &all, 1, NULL, &kt)))
    snprintf(kt.note, sizeof kt.note, "te_apply_best(%s)", cfg->tuned_log);
  if (have) {
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    char cwl[48];
    snprintf(cwl, sizeof cwl, "int8 gemm %d compile", n);
    bench_add_compile(cwl, "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s, note);
  }
  char err[200] = "";

  DLTensor ta = {0}, tb = {0}, tc = {0}, tbr, fta, ftb, ftc;
  int64_t shape[2] = {n, n}, sf[3][8], pshape[4] = {n / 64, n / 4, 64, 4};
  ta = (DLTensor){a, {kDLCPU, 0}, 2, {kDLUInt, 8, 1}, shape, NULL, 0};
  tb = (DLTensor){bp, {kDLCPU, 0}, 4, {kDLInt, 8, 1}, pshape, NULL, 0};
  tc = (DLTensor){c, {kDLCPU, 0}, 2, {kDLInt, 32, 1}, shape, NULL, 0};
  tb_tensor(&fta, sf[0], fa, 2, shape);
  tb_tensor(&ftb, sf[1], fb, 2, shape);
  tb_tensor(&ftc, sf[2], fc, 2, shape);
  tb_args targs = {&k, {&ta, &tb, &tc}}, fargs = {&kf, {&fta, &ftb, &ftc}};
  /* te-tune's kernel is of te_op_matmul_acc: B row-major, packed (if at all) by the kernel */
  tbr = (DLTensor){b, {kDLCPU, 0}, 2, {kDLInt, 8, 1}, shape, NULL, 0};
  tb_args tuned_args = {&kt, {&ta, &tbr, &tc}};
  float flag_te = 0, flag_dn = 0, flag_tuned = 0;
  double zero = 0, one = 1;
  bench_ref exact = {NULL, &zero, &one, 1, 1, 0.5};
  bench_ref fchk = {idx, fref, fscale, 0, npts, 2e-4};
  double ops = 2.0 * n * n * n;
  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    /* oneDNN plans its split for the thread count it sees at creation: one primitive a count */
    omp_set_num_threads(t);
    dnnl_i8mm_free(dn);
    if (!(dn = dnnl_i8mm_new(n, a, b, c, err, sizeof err)))
      fprintf(stderr, "  %s: oneDNN failed: %s\n", wl, err);
    if (have && dn) {
      char label[64];
      snprintf(label, sizeof label, "%s %d thr", wl, t);
      tb_set_threads(t);
      dot_cpu_versus(label, "te", tb_run, &targs, "onednn", dnnl_i8mm_run, dn);
    }
    exact_run rt = {tb_run, &targs, c, nn, idx, ref, npts, &flag_te, 0}; /* checked per count */
    exact_run rd = {dnnl_i8mm_run, dn, c, nn, idx, ref, npts, &flag_dn, 0};
    exact_run rtt = {tb_run, &tuned_args, c, nn, idx, ref, npts, &flag_tuned, 0};
    for (int round = 0; round < cfg->rounds; round++) {
      if (!have)
        bench_add_failed(wl, "te", t, k.note);
      else {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te", t, ROW_FLOPS, ops, run_exact, &rt, &flag_te, 1, &exact,
                          k.note);
      }
      if (dn) {
        omp_set_num_threads(t);
        bench_run_variant(cfg, wl, "onednn", t, ROW_FLOPS, ops, run_exact, &rd, &flag_dn, 1, &exact,
                          a_max == 255 ? "matmul u8 x s8 -> s32, weights in its own format"
                                       : "matmul u8 (7-bit: no VNNI) x s8 -> s32, weights in "
                                         "its own format");
      } else {
        bench_add_failed(wl, "onednn", t, err);
      }
      if (have_f) {
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te-f32", t, ROW_FLOPS, ops, tb_run, &fargs, fc, nn, &fchk,
                          "te's f32 SGEMM (sgemm_schedule.c) on the same values");
      } else {
        bench_add_failed(wl, "te-f32", t, kf.note);
      }
      if (have_t) { /* --tuned: te-tune's best kernel of te_op_matmul_acc */
        tb_set_threads(t);
        bench_run_variant(cfg, wl, "te-tuned", t, ROW_FLOPS, ops, run_exact, &rtt, &flag_tuned, 1,
                          &exact, kt.note);
      }
    }
  }
  omp_set_num_threads(cfg->max_threads);
  free(idx);
done:
  if (have)
    tb_free(&k);
  if (have_f)
    tb_free(&kf);
  if (have_t)
    tb_free(&kt);
  dnnl_i8mm_free(dn);
  free(a), free(b), free(bp), free(c), free(ref), free(fref), free(fscale);
  bench_free(fa), bench_free(fb), bench_free(fc);
}

void wl_int8gemm(const bench_cfg *cfg) {
  static const int full[] = {1024, 2048}, quick[] = {256};
  const int *sizes = cfg->quick ? quick : full;
  int count = cfg->quick ? 1 : 2;
  for (int s = 0; s < count; s++)
    int8gemm_size(cfg, sizes[s]);
}
