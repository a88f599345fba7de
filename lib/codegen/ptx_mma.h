/* ptx_mma.h — where mma.sync.m16n8k16 keeps each element of its tiles (f16/bf16 inputs, f32
 * accumulators), per the PTX ISA's "Matrix Fragments for mma.m16n8k16 with floating point type",
 * and where mma.sync.m16n8k32 keeps them (s8/u8 inputs, s32 accumulators: "Matrix Fragments for
 * mma.m16n8k32" with .s8/.u8 types).
 *
 * A warp computes D (16x8) = A (16x16) * B (16x8) + C. Lane l (0..31) holds, with g = l / 4 and
 * t = l % 4:
 *   A: 8 elements a0..a7 in four 32-bit registers (a0,a1), (a2,a3), (a4,a5), (a6,a7), the lower
 *      index in the low half: row g (a0, a1, a4, a5) or g + 8 (a2, a3, a6, a7), column
 *      2t + (i & 1), plus 8 for a4..a7;
 *   B: 4 elements b0..b3 in two registers (b0,b1), (b2,b3): row (k) 2t + (i & 1), plus 8 for
 *      b2, b3; column (n) g;
 *   C and D: 4 f32 c0..c3: row g (c0, c1) or g + 8 (c2, c3), column 2t + (i & 1).
 * and for m16n8k32 (D 16x8 = A 16x32 * B 32x8 + C), 8-bit elements four to a 32-bit register,
 * the lowest index in the lowest byte:
 *   A: 16 elements a0..a15 in four registers: row g (a0..a3, a8..a11) or g + 8 (a4..a7,
 *      a12..a15), column 4t + (i & 3), plus 16 for a8..a15;
 *   B: 8 elements b0..b7 in two registers: row (k) 4t + (i & 3), plus 16 for b4..b7; column g;
 *   C and D: 4 s32, placed as m16n8k16's f32 C.
 * The back end (ptx_mma.c) and the layout test (test/unit/test_mma_layout.c) both use these
 * functions, so that the test's emulation of the warp checks what the code does.
 */
#ifndef TE_PTX_MMA_H
#define TE_PTX_MMA_H

enum { PTX_MMA_A_ELEMS = 8, PTX_MMA_B_ELEMS = 4, PTX_MMA_C_ELEMS = 4, PTX_MMA_LANES = 32 };

/* Row (m) and column (k) of element i of lane's A fragment. */
static inline void ptx_mma_a_pos(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = g + ((i & 2) ? 8 : 0);
  *col = 2 * t + (i & 1) + ((i & 4) ? 8 : 0);
}

/* Row (k) and column (n) of element i of lane's B fragment. */
static inline void ptx_mma_b_pos(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = 2 * t + (i & 1) + ((i & 2) ? 8 : 0);
  *col = g;
}

/* Row (m) and column (n) of element i of lane's C (and D) fragment. */
static inline void ptx_mma_c_pos(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = g + ((i & 2) ? 8 : 0);
  *col = 2 * t + (i & 1);
}

enum { PTX_MMA8_A_ELEMS = 16, PTX_MMA8_B_ELEMS = 8 };

/* Row (m) and column (k) of element i of lane's A fragment of m16n8k32. */
static inline void ptx_mma8_a_pos(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = g + ((i & 4) ? 8 : 0);
  *col = 4 * t + (i & 3) + ((i & 8) ? 16 : 0);
}

/* Row (k) and column (n) of element i of lane's B fragment of m16n8k32. */
static inline void ptx_mma8_b_pos(int lane, int i, int *row, int *col) {
  int g = lane >> 2, t = lane & 3;
  *row = 4 * t + (i & 3) + ((i & 4) ? 16 : 0);
  *col = g;
}

#endif
