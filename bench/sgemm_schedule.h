/* sgemm_schedule.h — te's hand schedule for C = A * B (n x n f32, row-major): the one the
 * benchmark times against OpenBLAS (bench/sgemm.c) and the demo shows (apps/demo/), written once.
 *
 * GotoBLAS-like, for MC <= 342 rows, MR = 6, NR = 64, KC = 128 and NC = 64 or 512 columns
 * with 512-bit vectors (with 256-bit ones MC <= 96, NR = 16, KC = 256: sgemm_tiles); below,
 * the AVX-512 sizes:
 *   - B packed into panels Bp[j / 64][k][j % 64] (an extra compute stage at root, parallel,
 *     vectorized, read along B's rows), so the micro-kernel reads B contiguously (pack_b);
 *   - A packed per block of MC rows into Ap[i / 6][k][i % 6] (rows past n repeat the last),
 *     computed at C's row block, so the 6 broadcasts of a k step come from one 24-byte run
 *     (pack_a);
 *   - C tiled MC x NC (i.o parallel, j.o); each tile accumulates in a local MC x NC block CL
 *     (te_cache_write, computed at j.o) with loops
 *       k.o(128)  j.o(NC / 64)  i.m  k.i  i.i(6, unrolled)  j(64, vectorized)
 *     so the 6 x 64 register tile (24 zmm accumulators) stays in registers over k.i, a
 *     128 x 64 panel of B stays in L1 over the i.m loop and packed A in L2;
 *     then the block is copied to C. A short last row block or column tile rounds CL up to
 *     whole register tiles (te_set_tail), and only the copy to C is versioned for it, as a
 *     branch of the parallel loop (loop_partition), so both threads get equal work.
 * Only te's public C API is used, so any program can compile this file.
 */
#ifndef TE_BENCH_SGEMM_SCHEDULE_H
#define TE_BENCH_SGEMM_SCHEDULE_H

#include <stdbool.h>

#include <te/te.h>

typedef struct sgemm_params {
  int n;
  int mc, mr, nr, kc; /* rows per parallel block, register tile rows, columns, k block */
  int nc;             /* columns of C's tile (a multiple of nr): CL is MC x NC */
} sgemm_params;

/* The steps of the schedule to apply. Without tile, C keeps te's default schedule (the packing
   stages, when asked for, are still part of the computation). The others refine the tiling. */
typedef struct sgemm_steps {
  bool tile, vec, par, unroll, pack_b, pack_a;
} sgemm_steps;

/* Every step: the schedule at its best. */
#define SGEMM_ALL_STEPS ((sgemm_steps){true, true, true, true, true, true})

/* The tile sizes for n x n on a CPU whose L2 cache holds l2_bytes (<= 0: 2 MB) and whose
   vectors have vector_bits (te_target_vector_bits; <= 0: 512). */
sgemm_params sgemm_tiles(int n, long l2_bytes, int vector_bits);

/* te_target_vector_bits of "llvm -mcpu=native" (0 when te cannot tell). */
int sgemm_native_vector_bits(void);

/* Defines A, B (n x n f32 placeholders) and C = A * B in ctx with the steps asked for, stores
   the kernel's arguments in call order (A, B, C) in tensors, and returns C's schedule. Errors
   are sticky on ctx: check te_last_status(ctx) afterwards (a step te refuses leaves its
   message there); NULL when even the schedule could not be made. */
te_schedule *sgemm_define(te_ctx *ctx, const sgemm_params *p, sgemm_steps steps,
                          te_tensor *tensors[3]);

#endif
