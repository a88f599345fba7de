/* dot_gemm.h — the hand schedule the low-precision GEMM rows share (int8gemm.c: u8 x s8 -> s32
 * with vpdpbusd; bf16gemm.c: bf16 x bf16 -> f32 with vdpbf16ps), and te's f32 SGEMM they are
 * compared with. The two differ only in their dtypes and in how many consecutive k one lane of
 * the instruction sums (its group: 4 bytes or 2 bf16 values).
 *
 * B is given as panels Bp[j / 64][k / g][j % 64][k % g] (dot_gemm_pack, outside the timed call,
 * as oneDNN's weights are reordered into its own format outside it): g consecutive k of one
 * column are one 32-bit lane and a panel is read contiguously. The schedule: C tiled (64 rows x
 * 64 columns, rows parallel) into a local block CL computed at the tile, with loops i.m, k.g,
 * i.i (6, unrolled), j.v (4, unrolled), k.i (g, te_tensorize) and j (16, vectorized): a 6 x 64
 * register tile of 24 zmm accumulators kept over the whole of k, each step 6 broadcasts of A and
 * 4 loads of Bp feeding 24 dot-product instructions. The flags of te_util.h's ladder drop the
 * steps in turn (TB_EXTRA is the te_tensorize step).
 *
 * What was tried (1024 on this 2-core machine under load: TE_BENCH_CPU of dot_time.h, te against
 * oneDNN call by call): 96-row tiles left 1024 as 11 row tiles, 6 against 5 on 2 threads (0.85x
 * oneDNN at 2 threads); 64 rows share them evenly. Splitting k into 256-long blocks outside the
 * register tile (the accumulators reloaded from CL at each block, B's 32 KB block kept in L1)
 * was 1-2% slower than keeping the accumulators over all of k and streaming B's 128 KB panel
 * from L2, as was 128 or 512. Packing B inside the kernel (an extra parallel stage) cost about
 * 1% on one thread and, on a loaded machine, one more barrier where a descheduled thread holds
 * the other up.
 */
#ifndef TE_BENCH_DOT_GEMM_H
#define TE_BENCH_DOT_GEMM_H

#include <stddef.h>

#include "te_util.h"

typedef struct dot_gemm {
  int n;                   /* C is n x n; n a multiple of 64 */
  te_dtype a, b, acc;      /* A's and B's dtypes, C's (the accumulator) */
  int group;               /* consecutive k one lane of the instruction sums */
  const char *instruction; /* te_tensorize's name for it */
} dot_gemm;

/* A tb_define_fn: params is a dot_gemm. Tensors A (n x n), Bp (B's panels, below), C (n x n). */
void dot_gemm_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

/* Packs row-major B (n x n, elem bytes each) into the panels Bp (same size). */
void dot_gemm_pack(const void *b, void *bp, size_t elem, int n, int group);

/* The tuned kernel (te-bench --tuned LOG): the computation te-tune tunes for this GEMM,
   te_op_matmul_acc(A, B, acc) with A, B named "A", "B" and C "C" (so the workload key is the
   log's: docs/tuning-space.md says how to tune it), scheduled by the log's best (te_apply_best). */
typedef struct dot_gemm_tuned {
  const dot_gemm *g;
  const char *log;
} dot_gemm_tuned;

/* A tb_define_fn: params is a dot_gemm_tuned. Tensors A, B, C. */
void dot_gemm_tuned_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

/* A tb_define_fn: te's f32 SGEMM of sgemm_schedule.c with every step; params is the int n. */
void dot_gemm_f32_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

#endif
