/* sgemm_schedule.c — te's hand schedule for SGEMM (sgemm_schedule.h): the tile sizes and the
 * schedule, through te's public C API only.
 */
#include "sgemm_schedule.h"

#include <stddef.h>

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

/* The tile sizes with 512-bit vectors: a 6 x 64 register tile (24 zmm accumulators; 6
   broadcasts and 4 loads feed 24 FMAs), k blocks of 128 (a 32 KB panel of B in L1), row blocks
   of at most 342 rows.
   CL, C's tile, is MC x 64 when row blocks of 40 register tiles or more have their packed A
   (MC x n, read once per tile) fit in 55% of L2: then k runs inside each 64 columns.
   Otherwise (n = 2048)
   CL is MC x 512 with k blocks outside its 64-column panels, as GotoBLAS orders them: packed A
   is read a 342 x 128 slab at a time (in L2), CL (700 KB) stays in L2, and each 32 KB panel of
   B serves 57 register tiles instead of 19 with 114-row blocks (te / OpenBLAS call by call,
   medians of 15 pairs over three runs: 0.924 / 0.966 at 1 / 2 threads, against 0.903 / 0.947).
   On a 2 MB L2: 2048 = 5 x 342 + 338 rows by 512 columns, 1024 = 3 x 258 + 250 rows by 64,
   512 = 258 + 254 by 64. */
static sgemm_params sgemm_tiles_512(int n, long l2) {
  enum { MR = 6, NR = 64, KC = 128, MAX_MC = 342, WIDE_NC = 512 };
  long fits = (long)(0.55 * (double)l2) / (4L * n); /* rows of packed A that fit */
  sgemm_params p = {n, 0, MR, NR, KC, NR};
  if (fits >= 40 * MR || n <= WIDE_NC) { /* blocks of 40+ register tiles fit */
    p.mc = sgemm_block_rows(n, MR, fits < MAX_MC ? fits : MAX_MC);
  } else {
    p.mc = sgemm_block_rows(n, MR, MAX_MC);
    p.nc = WIDE_NC;
  }
  return p;
}

/* The tile sizes with narrower vectors (AVX2's 256 bits): the 6 x 64 tile would need 48 ymm
   registers and spills, so the register tile is 6 x 2 vectors (12 of the 16 ymm registers
   accumulate; 6 broadcasts and 2 loads feed 12 FMAs), k blocks of 256 (a 16 KB panel of B in
   L1) and row blocks of at most 96 rows (packed A, 96 x 256 x 4 = 96 KB, in a 512 KB L2).
   Measured on Zen 3 (te / OpenBLAS, 1 / 2 threads, 5 rounds): n = 1024 0.91 / 0.89 (6 x 64
   tiles there: 0.40 / 0.28), n = 2048 0.81 / 0.88; NC = 512 and MC of 66 to 192 rows were no
   better. */
static sgemm_params sgemm_tiles_narrow(int n, int vector_bits) {
  enum { MR = 6, KC = 256, MAX_MC = 96 };
  int nr = 2 * (vector_bits / 32);
  if (nr < 4)
    nr = 4;
  sgemm_params p = {n, sgemm_block_rows(n, MR, MAX_MC), MR, nr, KC, nr};
  return p;
}

sgemm_params sgemm_tiles(int n, long l2, int vector_bits) {
  if (l2 <= 0)
    l2 = 2L << 20;
  sgemm_params p = vector_bits > 0 && vector_bits < 512 ? sgemm_tiles_narrow(n, vector_bits)
                                                        : sgemm_tiles_512(n, l2);
  if (p.kc > n)
    p.kc = n;
  return p;
}

int sgemm_native_vector_bits(void) {
  te_ctx *ctx = te_ctx_new();
  te_target *target = ctx ? te_target_parse(ctx, "llvm -mcpu=native") : NULL;
  int bits = target ? te_target_vector_bits(target) : 0;
  te_ctx_free(ctx);
  return bits;
}

/* Bp[j / NR][k][j % NR] = B[k, j]. Columns past n (when NR does not divide n) repeat column
   n - 1, as A's rows do. */
static te_tensor *sgemm_pack_b(te_ctx *ctx, const sgemm_params *p, te_tensor *B) {
  int n = p->n;
  te_expr *nr = te_int(ctx, p->nr);
  te_expr *pj = te_var(ctx, "pj"), *pk = te_var(ctx, "pk"), *pl = te_var(ctx, "pl");
  te_expr *col = te_add(te_mul(pj, nr), pl);
  return te_compute(
      ctx, "Bp", 3, TE_EXPRS(te_int(ctx, (n + p->nr - 1) / p->nr), te_int(ctx, n), nr),
      TE_EXPRS(pj, pk, pl), TE_AT(B, pk, n % p->nr == 0 ? col : te_min(col, te_int(ctx, n - 1))));
}

/* Ap[i / MR][k][i % MR] = A[i, k]. Rows past n (when MR does not divide n) repeat row n - 1:
   they only feed rows of the rounded-up local block that are never copied to C (a select for
   zeros instead costs a third more compile time, in LLVM's vectorizer). */
static te_tensor *sgemm_pack_a(te_ctx *ctx, const sgemm_params *p, te_tensor *A) {
  int n = p->n;
  te_expr *mr = te_int(ctx, p->mr);
  te_expr *qi = te_var(ctx, "qi"), *qk = te_var(ctx, "qk"), *ql = te_var(ctx, "ql");
  te_expr *row = te_add(te_mul(qi, mr), ql);
  te_expr *val = TE_AT(A, n % p->mr == 0 ? row : te_min(row, te_int(ctx, n - 1)), qk);
  return te_compute(ctx, "Ap", 3,
                    TE_EXPRS(te_int(ctx, (n + p->mr - 1) / p->mr), te_int(ctx, n), mr),
                    TE_EXPRS(qi, qk, ql), val);
}

/* The schedule of C (and of the packing stages Ap, Bp when they exist). */
static void sgemm_schedule(te_schedule *s, const sgemm_params *p, sgemm_steps steps, te_tensor *C,
                           te_tensor *Ap, te_tensor *Bp) {
  /* C accumulates in a local block CL (te_cache_write) computed at C's j.o tile: the 6 x 64
     register tile then lives in a contiguous buffer, not in rows of C 4 n bytes apart,
     whose addresses alias in L1 sets (and 4K-alias between the tile's stores and the next
     tile's loads) once n reaches 1024. */
  te_tensor *CL = NULL;
  te_cache_write(s, C, TE_SCOPE_LOCAL, &CL);
  if (!CL)
    return;
  te_stage *cs = te_stage_of(s, C), *ls = te_stage_of(s, CL);
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
  if (steps.vec) {
    te_vectorize(ls, lj);
    te_vectorize(cs, jii);
  }
  if (steps.unroll)
    te_unroll(ls, li);
  if (steps.par)
    te_parallel(cs, io);
  if (Ap) {
    /* Packed once per block of MC rows (which then stays in L2), in Ap's own order: reading
       MR rows of A at once costs no more than reading each row along k and scattering it
       (measured: within noise, and LLVM turns the latter into scatters). */
    te_stage *as = te_stage_of(s, Ap);
    te_compute_at(as, cs, io);
    /* te's 6-lane vector (a gather of 6 rows, one store) rather than LLVM's vectorizer, whose
       6-way interleaved stores cost 8 ms of compile time and run no faster (1.61 vs 1.53 ms
       for a 2048 x 2048 A). */
    if (steps.vec)
      te_vectorize(as, te_axis(as, 2));
  }
  if (Bp) {
    /* B is read along its rows (k outer): twice as fast as panel by panel, whose reads jump a
       row of B (4n bytes) at every step and defeat the prefetcher. */
    te_stage *ps = te_stage_of(s, Bp);
    te_reorder(ps, 3, (te_iter *const[]){te_axis(ps, 1), te_axis(ps, 0), te_axis(ps, 2)});
    if (steps.vec)
      te_vectorize(ps, te_axis(ps, 2));
    if (steps.par)
      te_parallel(ps, te_axis(ps, 1));
  }
}

te_schedule *sgemm_define(te_ctx *ctx, const sgemm_params *p, sgemm_steps steps,
                          te_tensor *tensors[3]) {
  int n = p->n;
  te_expr *N = te_int(ctx, n), *nr = te_int(ctx, p->nr), *mr = te_int(ctx, p->mr);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), N);
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(N, N));
  te_tensor *Bp = steps.pack_b ? sgemm_pack_b(ctx, p, B) : NULL;
  te_tensor *Ap = steps.pack_a ? sgemm_pack_a(ctx, p, A) : NULL;
  te_expr *b_kj = Bp ? TE_AT(Bp, te_floordiv(j, nr), k, te_floormod(j, nr)) : TE_AT(B, k, j);
  te_expr *a_ik = Ap ? TE_AT(Ap, te_floordiv(i, mr), k, te_floormod(i, mr)) : TE_AT(A, i, k);
  te_tensor *C =
      te_compute(ctx, "C", 2, TE_EXPRS(N, N), TE_EXPRS(i, j), TE_SUM(te_mul(a_ik, b_kj), k));
  tensors[0] = A;
  tensors[1] = B;
  tensors[2] = C;
  te_schedule *s = te_schedule_new(ctx, 1, &C);
  if (s && steps.tile)
    sgemm_schedule(s, p, steps, C, Ap, Bp);
  return s;
}
