/* sgemm.c — SGEMM f32, row-major, C = A * B with M = N = K = n: te vs OpenBLAS vs Halide 14 vs
 * naive C, at 1 and 2 threads (naive C: 1).
 *
 * te's schedule (the best this bench can express with te's primitives; GotoBLAS-like), for
 * MC <= 342 rows, MR = 6, NR = 64, KC = 128 and NC = 64 or 512 columns (sgemm_tiles):
 *   - B packed into panels Bp[j / 64][k][j % 64] (an extra compute stage at root, parallel,
 *     vectorized, read along B's rows), so the micro-kernel reads B contiguously (TB_EXTRA,
 *     "packB");
 *   - A packed per block of MC rows into Ap[i / 6][k][i % 6] (rows past n repeat the last),
 *     computed at C's row block, so the 6 broadcasts of a k step come from one 24-byte run
 *     (TB_EXTRA2, "packA");
 *   - C tiled MC x NC (i.o parallel, j.o); each tile accumulates in a local MC x NC block CL
 *     (te_cache_write, computed at j.o) with loops
 *       k.o(128)  j.o(NC / 64)  i.m  k.i  i.i(6, unrolled)  j(64, vectorized)
 *     so the 6 x 64 register tile (24 zmm accumulators) stays in registers over k.i, a
 *     128 x 64 panel of B stays in L1 over the i.m loop and packed A in L2;
 *     then the block is copied to C. A short last row block or column tile rounds CL up to
 *     whole register tiles (te_set_tail), and only the copy to C is versioned for it, as a
 *     branch of the parallel loop (loop_partition), so both threads get equal work.
 * TE_BENCH_SGEMM="MC,MR,NR,KC[,NC]" in the environment replaces the tile sizes (tuning by hand);
 * TE_BENCH_SGEMM_N=n times that size alone; TE_BENCH_AB=R adds R call-by-call te/OpenBLAS pairs.
 * The fallbacks (te_util.h) drop packing, threads, vectorizing or unrolling as te refuses them.
 * Checks: 9 full rows of C against a double reference, error scaled by sum_k |A[i,k] B[k,j]|.
 */
#include "bench.h"
#include "halide_bench.h"
#include "report.h"
#include "te_util.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { CHECK_ROWS = 9 };

typedef struct sgemm_params {
  int n;
  int mc, mr, nr, kc; /* rows per parallel block, register tile rows, columns, k block */
  int nc;             /* columns of C's tile (a multiple of nr): CL is MC x NC */
} sgemm_params;

/* Row blocks of at most max_mc rows (a multiple of mr) in an even count, as equal as multiples
   of mr allow, so that two threads get the same work: the fewest blocks whose two halves differ
   by at most 3% of the rows, else the most even split. */
static int sgemm_block_rows(int n, int mr, long max_mc) {
  if (max_mc < mr)
    max_mc = mr;
  int best = 0, best_diff = n + 1;
  for (int blocks = 2; blocks <= 64; blocks += 2) {
    int per = (n + blocks - 1) / blocks, mc = mr * ((per + mr - 1) / mr);
    int last = n - (blocks - 1) * mc;
    if (mc > max_mc || last <= 0)
      continue;
    int diff = mc - last; /* the two threads' rows differ by this */
    if (diff * 100 <= 3 * n)
      return mc;
    if (diff < best_diff)
      best = mc, best_diff = diff;
  }
  return best ? best : mr;
}

/* The tile sizes: a 6 x 64 register tile (24 zmm accumulators; 6 broadcasts and 4 loads feed
   24 FMAs), k blocks of 128 (a 32 KB panel of B in L1), row blocks of at most 342 rows.
   CL, C's tile, is MC x 64 when row blocks of 40 register tiles or more have their packed A
   (MC x n, read once per tile) fit in 55% of L2 (sysconf; 2 MB when unknown): then k runs
   inside each 64 columns. Otherwise (n = 2048)
   CL is MC x 512 with k blocks outside its 64-column panels, as GotoBLAS orders them: packed A
   is read a 342 x 128 slab at a time (in L2), CL (700 KB) stays in L2, and each 32 KB panel of
   B serves 57 register tiles instead of 19 with 114-row blocks (te / OpenBLAS call by call,
   medians of 15 pairs over three runs: 0.924 / 0.966 at 1 / 2 threads, against 0.903 / 0.947).
   On a 2 MB L2: 2048 = 5 x 342 + 338 rows by 512 columns, 1024 = 3 x 258 + 250 rows by 64,
   512 = 258 + 254 by 64. */
static sgemm_params sgemm_tiles(int n) {
  enum { MR = 6, NR = 64, KC = 128, MAX_MC = 342, WIDE_NC = 512 };
  long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
  if (l2 <= 0)
    l2 = 2L << 20;
  long fits = (long)(0.55 * (double)l2) / (4L * n); /* rows of packed A that fit */
  sgemm_params p = {n, 0, MR, NR, KC, NR};
  if (fits >= 40 * MR || n <= WIDE_NC) { /* blocks of 40+ register tiles fit */
    p.mc = sgemm_block_rows(n, MR, fits < MAX_MC ? fits : MAX_MC);
  } else {
    p.mc = sgemm_block_rows(n, MR, MAX_MC);
    p.nc = WIDE_NC;
  }
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

static void sgemm_define(te_ctx *ctx, unsigned flags, const void *params, tb_def *out) {
  const sgemm_params *p = params;
  int n = p->n;
  te_expr *N = te_int(ctx, n), *nr = te_int(ctx, p->nr);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *Bp = NULL;
  te_expr *b_kj = TE_AT(B, k, j);
  if (flags & TB_EXTRA) {
    /* Columns past n (when NR does not divide n) repeat column n - 1, as A's rows do. */
    te_expr *pj = te_var(ctx, "pj"), *pk = te_var(ctx, "pk"), *pl = te_var(ctx, "pl");
    te_expr *col = te_add(te_mul(pj, nr), pl);
    Bp = te_compute(ctx, "Bp", 3, TE_EXPRS(te_int(ctx, (n + p->nr - 1) / p->nr), N, nr),
                    TE_EXPRS(pj, pk, pl),
                    TE_AT(B, pk, n % p->nr == 0 ? col : te_min(col, te_int(ctx, n - 1))));
    b_kj = TE_AT(Bp, te_floordiv(j, nr), k, te_floormod(j, nr));
  }
  te_tensor *Ap = NULL;
  te_expr *a_ik = TE_AT(A, i, k);
  if (flags & TB_EXTRA2) {
    /* Rows past n (when MR does not divide n) repeat row n - 1: they only feed rows of the
       rounded-up local block that are never copied to C (a select for zeros instead costs
       a third more compile time, in LLVM's vectorizer). */
    te_expr *mr = te_int(ctx, p->mr);
    te_expr *qi = te_var(ctx, "qi"), *qk = te_var(ctx, "qk"), *ql = te_var(ctx, "ql");
    te_expr *row = te_add(te_mul(qi, mr), ql);
    te_expr *val = TE_AT(A, n % p->mr == 0 ? row : te_min(row, te_int(ctx, n - 1)), qk);
    Ap = te_compute(ctx, "Ap", 3, TE_EXPRS(te_int(ctx, (n + p->mr - 1) / p->mr), N, mr),
                    TE_EXPRS(qi, qk, ql), val);
    a_ik = TE_AT(Ap, te_floordiv(i, mr), k, te_floormod(i, mr));
  }
  te_tensor *C =
      te_compute(ctx, "C", 2, TE_EXPRS(N, N), TE_EXPRS(i, j), TE_SUM(te_mul(a_ik, b_kj), k));
  out->s = te_schedule_new(ctx, 1, &C);
  out->ntensors = 3;
  out->tensors[0] = A;
  out->tensors[1] = B;
  out->tensors[2] = C;
  if (!out->s || !(flags & TB_TILE))
    return;

  /* C accumulates in a local block CL (te_cache_write) computed at C's j.o tile: the 6 x 64
     register tile then lives in a contiguous buffer, not in rows of C 4 n bytes apart,
     whose addresses alias in L1 sets (and 4K-alias between the tile's stores and the next
     tile's loads) once n reaches 1024. */
  te_tensor *CL = NULL;
  te_cache_write(out->s, C, TE_SCOPE_LOCAL, &CL);
  if (!CL)
    return;
  te_stage *cs = te_stage_of(out->s, C), *ls = te_stage_of(out->s, CL);
  te_iter *io = NULL, *ii = NULL, *jo = NULL, *ji = NULL;
  int nc = p->nc;
  te_tile(cs, te_axis(cs, 0), te_axis(cs, 1), p->mc, nc, &io, &jo, &ii, &ji);
  te_compute_at(ls, cs, jo);
  te_iter *lm = NULL, *li = NULL, *ko = NULL, *ki = NULL, *lj = NULL, *ljo = NULL;
  /* A short last block's rows, and a short last tile's columns, are rounded up to whole
     register tiles (packed A and B are padded): CL's loops then have no guard and its vectors
     no mask, so only C's copy-out is versioned for them. */
  te_set_tail(ls, te_axis(ls, 0), TE_TAIL_ROUND_UP);
  te_split(ls, te_axis(ls, 0), p->mr, &lm, &li);
  te_set_tail(ls, te_axis(ls, 1), TE_TAIL_ROUND_UP);
  te_split(ls, te_axis(ls, 1), p->nr, &ljo, &lj);
  te_split(ls, te_reduce_iter(ls, 0), p->kc, &ko, &ki);
  te_reorder(ls, 6, (te_iter *const[]){ko, ljo, lm, ki, li, lj});
  te_iter *jio = NULL, *jii = ji;
  if (nc > p->nr)
    te_split(cs, ji, p->nr, &jio, &jii);
  if (flags & TB_VEC) {
    te_vectorize(ls, lj);
    te_vectorize(cs, jii);
  }
  if (flags & TB_UNROLL)
    te_unroll(ls, li);
  if (flags & TB_PAR)
    te_parallel(cs, io);
  if (Ap) {
    /* Packed once per block of MC rows (which then stays in L2), in Ap's own order: reading
       MR rows of A at once costs no more than reading each row along k and scattering it
       (measured: within noise, and LLVM turns the latter into scatters). */
    te_stage *as = te_stage_of(out->s, Ap);
    te_compute_at(as, cs, io);
    /* te's 6-lane vector (a gather of 6 rows, one store) rather than LLVM's vectorizer, whose
       6-way interleaved stores cost 8 ms of compile time and run no faster (1.61 vs 1.53 ms
       for a 2048 x 2048 A). */
    if (flags & TB_VEC)
      te_vectorize(as, te_axis(as, 2));
  }
  if (Bp) {
    /* B is read along its rows (k outer): twice as fast as panel by panel, whose reads jump a
       row of B (4n bytes) at every step and defeat the prefetcher. */
    te_stage *ps = te_stage_of(out->s, Bp);
    te_reorder(ps, 3, (te_iter *const[]){te_axis(ps, 1), te_axis(ps, 0), te_axis(ps, 2)});
    if (flags & TB_VEC)
      te_vectorize(ps, te_axis(ps, 2));
    if (flags & TB_PAR)
      te_parallel(ps, te_axis(ps, 1));
  }
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
  sgemm_params p = sgemm_tiles(n);
  int have_te = tb_build(wl, "sgemm", sgemm_define, &p, ladder, nl,
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
