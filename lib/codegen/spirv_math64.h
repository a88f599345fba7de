/* spirv_math64.h — the builder te's f64 math functions for SPIR-V are written with (internal;
 * spirv_math64.c, spirv_math64_trig.c).
 *
 * Each operation appends one or a few instructions to the code being written and returns the
 * result id. Every float addition, subtraction and multiplication carries NoContraction: the
 * algorithms rely on exact error terms (two_sum, two_prod) and on the rounding of each
 * operation as written, which a driver fusing a * b + c into an fma would change. Nothing here
 * uses GLSL.std.450's Fma (its fusing is not guaranteed either), Frexp or Ldexp: exponents are
 * read and written through OpBitcast to two 32-bit words, so only 32-bit integer arithmetic is
 * needed (no Int64).
 */
#ifndef TE_CODEGEN_SPIRV_MATH64_H
#define TE_CODEGEN_SPIRV_MATH64_H

#include "spirv.h"

typedef struct cg_m64 {
  cg_spv *s;
  uint32_t d, b, i32, v2i; /* types: f64, bool, i32, a vector of two i32 */
} cg_m64;

/* A value with twice double's precision: hi + lo, |lo| <= ulp(hi) / 2. */
typedef struct cg_dd {
  uint32_t hi, lo;
} cg_dd;

uint32_t cg_m64_c(cg_m64 *, double);
uint32_t cg_m64_ci(cg_m64 *, int32_t);
uint32_t cg_m64_add(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_sub(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_mul(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_div(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_neg(cg_m64 *, uint32_t);
uint32_t cg_m64_abs(cg_m64 *, uint32_t);
uint32_t cg_m64_floor(cg_m64 *, uint32_t);
uint32_t cg_m64_trunc(cg_m64 *, uint32_t);
/* x clamped to [lo, hi], a NaN x to 0 (so an integer conversion of it is defined) */
uint32_t cg_m64_clamp(cg_m64 *, uint32_t x, double lo, double hi);
/* c ? a : b (any type of a and b: ty) */
uint32_t cg_m64_sel(cg_m64 *, uint32_t c, uint32_t a, uint32_t b);
uint32_t cg_m64_seli(cg_m64 *, uint32_t c, uint32_t a, uint32_t b);
/* comparisons: ordered (false on NaN) */
uint32_t cg_m64_lt(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_gt(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_eq(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_isnan(cg_m64 *, uint32_t);
uint32_t cg_m64_isinf(cg_m64 *, uint32_t);
uint32_t cg_m64_and(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_or(cg_m64 *, uint32_t, uint32_t);
uint32_t cg_m64_not(cg_m64 *, uint32_t);
/* 32-bit integers: op is an SPIR-V integer opcode on two i32 operands */
uint32_t cg_m64_iop(cg_m64 *, SpvOp, uint32_t, uint32_t);
uint32_t cg_m64_ftoi(cg_m64 *, uint32_t); /* an integral f64 in i32 range to i32 */
uint32_t cg_m64_itof(cg_m64 *, uint32_t);
/* the high word of x (sign, exponent, the top 20 bits of the significand) */
uint32_t cg_m64_hiword(cg_m64 *, uint32_t x);
/* x with its high word replaced */
uint32_t cg_m64_with_hiword(cg_m64 *, uint32_t x, uint32_t hi);
/* p * 2^k for an i32 k in [-1100, 1100], rounded once (two exact power-of-two scalings) */
uint32_t cg_m64_scale(cg_m64 *, uint32_t p, uint32_t k);
/* c[0] + x * (c[1] + x * (... c[n - 1])) */
uint32_t cg_m64_horner(cg_m64 *, uint32_t x, const double *c, int n);

/* Error-free transformations and double-double arithmetic (Dekker, Knuth). */
cg_dd cg_dd_two_sum(cg_m64 *, uint32_t a, uint32_t b);
cg_dd cg_dd_fast_two_sum(cg_m64 *, uint32_t a, uint32_t b); /* |a| >= |b| or a == 0 */
cg_dd cg_dd_two_prod(cg_m64 *, uint32_t a, uint32_t b);     /* |a|, |b| < 2^995 */
cg_dd cg_dd_add(cg_m64 *, cg_dd, cg_dd);
cg_dd cg_dd_mul(cg_m64 *, cg_dd, cg_dd);
cg_dd cg_dd_const(cg_m64 *, double hi, double lo);

/* e^r - 1 for |r| <= 0.35 (ln 2 / 2), within an ulp: the Taylor series to r^13. */
uint32_t cg_m64_expm1_kernel(cg_m64 *, uint32_t r);
/* e^x for x in [-746, 710] (callers clamp): k = round(x / ln 2), 2^k e^(x - k ln 2). */
uint32_t cg_m64_exp_finite(cg_m64 *, uint32_t x);

/* The f64 functions of spirv_math64_trig.c: body of the function named by id on argument x. */
uint32_t cg_m64_sin_cos_tan(cg_m64 *, ir_intrin id, uint32_t x);
uint32_t cg_m64_erf(cg_m64 *, uint32_t x);
/* Declares sin/cos/tan's table of 2/pi (the first thing in their function's first block). */
uint32_t cg_m64_trig_table(cg_m64 *);

#endif
