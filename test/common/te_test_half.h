/* te_test_half.h — the tests' own reference conversions for f16 and bf16.
 *
 * Written plainly, independent of te's (lib/ir/dtype.c, lib/codegen/llvm_half.c): decoding is
 * the format's definition (sign, exponent, significand, ldexp); encoding finds the nearest of
 * all the format's finite values by binary search in a table of them, ties to the even bit
 * pattern, values at or past max + ulp(max)/2 to inf (IEEE 754's rule), NaN to the quiet NaN of
 * the same sign with the payload's top bits (what F16C and AVX512-BF16 do).
 */
#ifndef TE_TEST_HALF_H
#define TE_TEST_HALF_H

#include <stdint.h>

#include <te/te.h>

/* The value of 16-bit pattern h of dtype t (TE_F16 or TE_BF16). */
double tt_half_decode(te_dtype t, uint16_t h);
/* v rounded to the nearest value of t (ties to even): its 16-bit pattern. v is taken as a
   double, so an f32 input is exact. */
uint16_t tt_half_encode(te_dtype t, double v);
/* 1 for TE_F16 / TE_BF16. */
int tt_is_half(te_dtype t);

#endif
