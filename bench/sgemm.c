/* sgemm.c — SGEMM f32, row-major, C = A * B with M = N = K = n: te vs OpenBLAS vs Halide 14 vs
 * naive C, at 1 and 2 threads (naive C: 1).
 *
 * te's schedule (the best this bench can express with te's primitives; GotoBLAS-like) is in
 * sgemm_schedule.c, shared with the demo (apps/demo/): B packed into 64-column panels (TB_EXTRA,
 * "packB"), A packed per block of rows (TB_EXTRA2, "packA"), C tiled MC x NC with a local block
 * holding a 6 x 64 register tile, parallel over row blocks.
 * TE_BENCH_SGEMM="MC,MR,NR,KC[,NC]" in the environment replaces the tile sizes (tuning by hand);
 * TE_BENCH_SGEMM_N=n times that size alone; TE_BENCH_AB=R adds R call-by-call te/OpenBLAS pairs.
 * The fallbacks (te_util.h) drop packing, threads, vectorizing or unrolling as te refuses them.
 * Checks: 9 full rows of C against a double reference, error scaled by sum_k |A[i,k] B[k,j]|.
 */
#include "bench.h"
#include "halide_bench.h"
#include "report.h"
#include "sgemm_schedule.h"
#include "te_util.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHECK_ROWS = 9 };

/* The tile sizes for this CPU's L2 (sysconf; 2 MB when unknown) and vectors, or TE_BENCH_SGEMM's.
 */
static sgemm_params sgemm_tiles_here(int n) {
  sgemm_params p = sgemm_tiles(n, sysconf(_SC_LEVEL2_CACHE_SIZE), sgemm_native_vector_bits());
  /* TE_BENCH_SGEMM="MC,MR,NR,KC[,NC]" replaces them (tuning by hand) */
  const char *env = getenv("TE_BENCH_SGEMM");
  sgemm_params q = p;
  int got = env ? sscanf(env, "%d,%d,%d,%d,%d", &q.mc, &q.mr, &q.nr, &q.kc, &q.nc) : 0;
  if (got == 4)
    q.nc = q.nr;
  if (got >= 4 && q.mc > 0 && q.mr > 0 && q.nr > 0 && q.kc > 0 && q.nc >= q.nr && q.nc % q.nr == 0)
    p = q;
  if (p.kc > n)
    p.kc = n;
  return p;
}

/* The ladder's flags as the schedule's steps (TB_EXTRA packs B, TB_EXTRA2 packs A). */
static void sgemm_define_flags(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  sgemm_steps steps = {(flags & TB_TILE) != 0,   (flags & TB_VEC) != 0,   (flags & TB_PAR) != 0,
                       (flags & TB_UNROLL) != 0, (flags & TB_EXTRA) != 0, (flags & TB_EXTRA2) != 0};
  out->ntensors = 3;
  out->s = sgemm_define(ctx, params, steps, out->tensors);
}

/* The tuned kernel (--tuned LOG): the computation te-tune builds for "matmul M=N=K=n" (ops.h,
   so the workload key matches the log's) with the log's best schedule (te_apply_best). */
typedef struct tuned_params {
  int n;
  const char *log;
} tuned_params;

static void sgemm_define_tuned(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  (void)flags;
  const tuned_params *p = params;
  te_expr *N = te_int(ctx, p->n);
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *C = te_op_matmul(ctx, A, B, 0, 0, NULL);
  out->s = C ? te_schedule_new(ctx, 1, &C) : NULL;
  out->ntensors = 3;
  out->tensors[0] = A;
  out->tensors[1] = B;
  out->tensors[2] = C;
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (out->s && target)
    te_apply_best(out->s, p->log, target);
}

/* i-k-j order, so the inner loop streams rows of B and C (gcc vectorizes it at -O3). */
static void naive_sgemm(int n, const float *restrict a, const float *restrict b,
                        float *restrict c) {
  for (int i = 0; i < n; i++) {
    float *restrict crow = c + (size_t)i * n;
    for (int j = 0; j < n; j++)
      crow[j] = 0;
    for (int k = 0; k < n; k++) {
      float aik = a[(size_t)i * n + k];
      const float *restrict brow = b + (size_t)k * n;
      for (int j = 0; j < n; j++)
        crow[j] += aik * brow[j];
    }
  }
}

typedef struct sgemm_data {
  int n, threads;
  float *a, *b, *c;
} sgemm_data;

static int run_naive(void *arg) {
  sgemm_data *d = arg;
  naive_sgemm(d->n, d->a, d->b, d->c);
  return 0;
}

static int run_openblas(void *arg) {
  sgemm_data *d = arg;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d->n, d->n, d->n, 1.0f, d->a, d->n, d->b,
              d->n, 0.0f, d->c, d->n);
  return 0;
}

/* The reference: CHECK_ROWS rows of C spread over [0, n), in double (k outer, so B streams). */
static void make_reference(const sgemm_data *d, size_t *idx, double *ref, double *scale) {
  int n = d->n;
  for (int r = 0; r < CHECK_ROWS; r++) {
    int i = (int)((long)r * (n - 1) / (CHECK_ROWS - 1));
    double *s = ref + (size_t)r * n, *sa = scale + (size_t)r * n;
    for (int j = 0; j < n; j++) {
      s[j] = sa[j] = 0;
      idx[(size_t)r * n + j] = (size_t)i * n + j;
    }
    for (int k = 0; k < n; k++) {
      double aik = d->a[(size_t)i * n + k];
      const float *brow = d->b + (size_t)k * n;
      for (int j = 0; j < n; j++) {
        double p = aik * brow[j];
        s[j] += p;
        sa[j] += fabs(p);
      }
    }
  }
}

static void sgemm_size(const bench_cfg *cfg, int n) {
  char wl[48], cwl[48], err[512];
  snprintf(wl, sizeof wl, "sgemm %d", n);
  snprintf(cwl, sizeof cwl, "compile sgemm %d", n);
  fprintf(stderr, "%s\n", wl);
  size_t nn = (size_t)n * n, npts = (size_t)CHECK_ROWS * n;
  sgemm_data d = {n, 1, bench_alloc_f32(nn), bench_alloc_f32(nn), bench_alloc_f32(nn)};
  size_t *idx = malloc(sizeof *idx * npts);
  double *ref = malloc(sizeof *ref * npts), *scale = malloc(sizeof *scale * npts);
  if (!d.a || !d.b || !d.c || !idx || !ref || !scale) {
    bench_add_failed(wl, "all", 1, "out of memory");
    goto done;
  }
  bench_fill_nonzero(d.a, nn, 1);
  bench_fill_nonzero(d.b, nn, 2);
  make_reference(&d, idx, ref, scale);
  bench_ref check = {idx, ref, scale, 0, npts, 2e-4};
  double flops = 2.0 * n * n * n;

  unsigned ladder[TB_MAX_LADDER];
  int nl = tb_ladder(TB_EXTRA | TB_EXTRA2, ladder);
  tb_kernel k;
  sgemm_params p = sgemm_tiles_here(n);
  int have_te = tb_build(wl, "sgemm", sgemm_define_flags, &p, ladder, nl,
                         (const char *const[2]){"packB", "packA"}, &k);
  if (have_te) {
    size_t len = strlen(k.note);
    snprintf(k.note + len, sizeof k.note - len, " [tiles %d,%d,%d,%d,%d]", p.mc, p.mr, p.nr, p.kc,
             p.nc);
    char note[160];
    snprintf(note, sizeof note, "lower %.1f + llvm %.1f + jit %.1f ms", k.times.lower_s * 1e3,
             k.times.llvm_s * 1e3, k.times.jit_s * 1e3);
    bench_add_compile(cwl, "te", k.times.lower_s + k.times.llvm_s + k.times.jit_s, note);
  }
  hl_pipe *hl[3] = {NULL, NULL, NULL};
  for (int par = 1; par >= 0; par--)
    if (!(hl[par] = hl_sgemm_new(n, d.a, d.b, d.c, par, err, sizeof err)))
      fprintf(stderr, "  %s: Halide failed: %s\n", wl, err);
  if (hl[1])
    bench_add_compile(cwl, "halide", hl_compile_s(hl[1]), "compile_jit, parallel schedule");

  DLTensor ta, tb, tc;
  int64_t sa[8], sb[8], sc[8], shape[2] = {n, n};
  tb_tensor(&ta, sa, d.a, 2, shape);
  tb_tensor(&tb, sb, d.b, 2, shape);
  tb_tensor(&tc, sc, d.c, 2, shape);
  tb_args targs = {&k, {&ta, &tb, &tc}};

  int threads[2] = {1, cfg->max_threads}, nthreads = cfg->max_threads > 1 ? 2 : 1;
  /* TE_BENCH_AB=R: te and OpenBLAS timed call by call, R pairs, the median of the pairs'
     speed ratios printed (AB lines on stderr): both see the same moment of a noisy machine.
     Calls are 150 ms apart (OpenBLAS's workers spin after a call), so each starts with idle
     thread pools; the table's rows time calls back to back. */
  if (getenv("TE_BENCH_AB") && have_te) {
    for (int ti = 0; ti < nthreads; ti++) {
      double med, q1, q3;
      tb_set_threads(threads[ti]);
      openblas_set_num_threads(threads[ti]);
      int pairs = bench_pair_ratio(tb_run, &targs, run_openblas, &d, atoi(getenv("TE_BENCH_AB")),
                                   &med, &q1, &q3);
      if (pairs)
        fprintf(stderr,
                "AB %s %d thr: te/openblas speed ratio median %.3f (q1 %.3f q3 %.3f, %d pairs)\n",
                wl, threads[ti], med, q1, q3, pairs);
    }
  }
  for (int ti = 0; ti < nthreads; ti++) {
    int t = threads[ti];
    for (int round = 0; round < cfg->rounds; round++) { /* harness.h: rounds */
      tb_run_te(cfg, wl, t, ROW_FLOPS, flops, have_te, &targs, d.c, nn, &check);
      openblas_set_num_threads(t);
      bench_run_variant(cfg, wl, "openblas", t, ROW_FLOPS, flops, run_openblas, &d, d.c, nn, &check,
                        openblas_get_corename());
      hl_pipe *h = hl[t > 1 ? 1 : 0];
      if (h)
        bench_run_variant(cfg, wl, "halide", t, ROW_FLOPS, flops, hl_run, h, d.c, nn, &check,
                          t > 1 ? "parallel schedule" : "schedule without parallel");
      else
        bench_add_failed(wl, "halide", t, "pipeline did not compile");
      if (t == 1)
        bench_run_variant(cfg, wl, "naive-c", 1, ROW_FLOPS, flops, run_naive, &d, d.c, nn, &check,
                          "i-k-j, gcc -O3 -march=native");
    }
  }
  if (cfg->tuned_log) {
    /* "sgemm n tuned": the tuned kernel as te, against OpenBLAS and te's hand schedule. */
    char twl[48];
    snprintf(twl, sizeof twl, "sgemm %d tuned", n);
    tuned_params tp = {n, cfg->tuned_log};
    unsigned only = TB_TILE;
    tb_kernel tk;
    if (tb_build(twl, "sgemm_tuned", sgemm_define_tuned, &tp, &only, 1, NULL, &tk)) {
      snprintf(tk.note, sizeof tk.note, "te_apply_best(%s)", cfg->tuned_log);
      tb_args tuned_args = {&tk, {&ta, &tb, &tc}};
      for (int ti = 0; ti < nthreads; ti++) {
        int t = threads[ti];
        for (int round = 0; round < cfg->rounds; round++) {
          tb_set_threads(t);
          bench_run_variant(cfg, twl, "te", t, ROW_FLOPS, flops, tb_run, &tuned_args, d.c, nn,
                            &check, tk.note);
          openblas_set_num_threads(t);
          bench_run_variant(cfg, twl, "openblas", t, ROW_FLOPS, flops, run_openblas, &d, d.c, nn,
                            &check, openblas_get_corename());
          if (have_te)
            bench_run_variant(cfg, twl, "te-hand", t, ROW_FLOPS, flops, tb_run, &targs, d.c, nn,
                              &check, "te's hand schedule (the sgemm rows above)");
        }
      }
      tb_free(&tk);
    }
  }
  if (have_te)
    tb_free(&k);
  hl_free(hl[0]);
  hl_free(hl[1]);
done:
  bench_free(d.a);
  bench_free(d.b);
  bench_free(d.c);
  free(idx);
  free(ref);
  free(scale);
}

void wl_sgemm(const bench_cfg *cfg) {
  static const int full[] = {256, 512, 1024, 2048}, quick[] = {128, 256};
  const int *sizes = cfg->quick ? quick : full;
  int count = cfg->quick ? 2 : 4;
  /* TE_BENCH_SGEMM_N=2048 times that size alone (for trying schedules by hand). */
  const char *only = getenv("TE_BENCH_SGEMM_N");
  if (only && atoi(only) > 0) {
    sgemm_size(cfg, atoi(only));
    return;
  }
  for (int s = 0; s < count; s++)
    sgemm_size(cfg, sizes[s]);
}
