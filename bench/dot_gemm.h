/* dot_gemm.h — the hand schedule the low-precision GEMM rows share (int8gemm.c: u8 x s8 -> s32
 * with vpdpbusd; bf16gemm.c: bf16 x bf16 -> f32 with vdpbf16ps), and te's f32 SGEMM they are
 * compared with. The two differ only in their dtypes and in how many consecutive k one lane of
 * the instruction sums (its group: 4 bytes or 2 bf16 values).
 *
 * The schedule: B packed inside the kernel into panels Bp[j / 64][k / g][j % 64][k % g] (an
 * extra stage, parallel), so g consecutive k of one column are one 32-bit lane and a panel is
 * read contiguously; C tiled (96 rows x 64 columns, rows parallel) into a local block CL computed
 * at the tile, with loops k.c (KC = 256), i.m, k.g, i.i (6, unrolled), j.v (4, unrolled), k.i
 * (g, te_tensorize) and j (16, vectorized): a 6 x 64 register tile of 24 zmm accumulators, each
 * step 6 broadcasts of A and 4 loads of Bp feeding 24 dot-product instructions. The flags of
 * te_util.h's ladder drop the steps in turn (TB_EXTRA is the te_tensorize step).
 */
#ifndef TE_BENCH_DOT_GEMM_H
#define TE_BENCH_DOT_GEMM_H

#include "te_util.h"

typedef struct dot_gemm {
  int n;                   /* C is n x n; n a multiple of 64 */
  te_dtype a, b, acc;      /* A's and B's dtypes, C's (the accumulator) */
  int group;               /* consecutive k one lane of the instruction sums */
  const char *instruction; /* te_tensorize's name for it */
} dot_gemm;

/* A tb_define_fn: params is a dot_gemm. Tensors A, B, C. */
void dot_gemm_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

/* A tb_define_fn: te's f32 SGEMM of sgemm_schedule.c with every step; params is the int n. */
void dot_gemm_f32_define(te_ctx *, unsigned flags, const void *params, tb_def *out);

#endif
