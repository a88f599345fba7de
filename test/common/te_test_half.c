/* te_test_half.c — reference f16/bf16 conversions (te_test_half.h). */
#include "te_test_half.h"

#include <math.h>
#include <stdbool.h>

typedef struct format {
  int mant_bits, exp_bits;
  double table[0x8000]; /* every finite non-negative value, by bit pattern */
  int nfinite;          /* patterns 0 .. nfinite-1 are finite */
  bool ready;
} format;

static format f16 = {10, 5, {0}, 0, false}, bf16 = {7, 8, {0}, 0, false};

int tt_is_half(te_dtype t) {
  return t.bits == 16 && t.lanes == 1 && (t.code == kDLFloat || t.code == kDLBfloat);
}

static format *format_of(te_dtype t) { return t.code == kDLBfloat ? &bf16 : &f16; }

static double decode(const format *f, uint16_t h) {
  int sign = h >> 15;
  int e = (h >> f->mant_bits) & ((1 << f->exp_bits) - 1);
  int m = h & ((1 << f->mant_bits) - 1);
  int bias = (1 << (f->exp_bits - 1)) - 1;
  double v;
  if (e == (1 << f->exp_bits) - 1)
    v = m ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp((double)m, 1 - bias - f->mant_bits);
  else
    v = ldexp((double)((1 << f->mant_bits) + m), e - bias - f->mant_bits);
  return sign ? -v : v;
}

static void prepare(format *f) {
  if (f->ready)
    return;
  f->nfinite = (((1 << f->exp_bits) - 1) << f->mant_bits); /* up to the all-ones exponent */
  for (int i = 0; i < f->nfinite; i++)
    f->table[i] = decode(f, (uint16_t)i);
  f->ready = true;
}

double tt_half_decode(te_dtype t, uint16_t h) { return decode(format_of(t), h); }

uint16_t tt_half_encode(te_dtype t, double v) {
  format *f = format_of(t);
  prepare(f);
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  uint16_t inf = (uint16_t)f->nfinite; /* the all-ones exponent, significand 0 */
  if (isnan(v)) {                      /* quiet NaN: the significand's top bit */
    return (uint16_t)(sign | inf | (1 << (f->mant_bits - 1)));
  }
  double a = fabs(v);
  double max = f->table[f->nfinite - 1], before = f->table[f->nfinite - 2];
  if (a >= max + (max - before) / 2)
    return (uint16_t)(sign | inf);
  int lo = 0, hi = f->nfinite - 1; /* table[lo] <= a < table[hi] once narrowed */
  if (a >= max)
    return (uint16_t)(sign | (f->nfinite - 1));
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (f->table[mid] <= a)
      lo = mid;
    else
      hi = mid;
  }
  double dlo = a - f->table[lo], dhi = f->table[hi] - a;
  int pick = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
  return (uint16_t)(sign | pick);
}
