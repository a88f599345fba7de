/* dtype.c — names and support checks of data types.
 *
 * Names are short and stable (they appear in printed IR and in messages): f32, i64, u8, bool,
 * f32x16 for vectors.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ir.h"

const char *te_dtype_str(te_dtype t, char *buf, size_t size) {
  if (!buf || size == 0)
    return buf;
  const char *base = NULL;
  char tmp[24];
  if (t.code == kDLUInt && t.bits == 1) {
    base = "bool";
  } else if (t.code == kDLBfloat && t.bits == 16) {
    base = "bf16";
  } else if (t.code == kDLOpaqueHandle) {
    base = "handle"; /* the calling convention's pointers (ir.h), never data */
  } else {
    const char *p = t.code == kDLInt     ? "i"
                    : t.code == kDLUInt  ? "u"
                    : t.code == kDLFloat ? "f"
                                         : NULL;
    if (p)
      snprintf(tmp, sizeof tmp, "%s%u", p, (unsigned)t.bits);
    else
      snprintf(tmp, sizeof tmp, "dtype(%u,%u)", (unsigned)t.code, (unsigned)t.bits);
    base = tmp;
  }
  if (t.lanes > 1)
    snprintf(buf, size, "%sx%u", base, (unsigned)t.lanes);
  else
    snprintf(buf, size, "%s", base);
  return buf;
}

const char *ir_dtype_name(te_dtype t, char *buf, size_t size) { return te_dtype_str(t, buf, size); }

int te_dtype_eq(te_dtype a, te_dtype b) { return ir_dtype_eq(a, b); }

bool ir_dtype_supported(te_dtype t) {
  if (t.lanes < 1)
    return false;
  switch (t.code) {
  case kDLInt:
    return t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case kDLUInt:
    return t.bits == 1 || t.bits == 8 || t.bits == 16 || t.bits == 32 || t.bits == 64;
  case kDLFloat:
    return t.bits == 16 || t.bits == 32 || t.bits == 64;
  case kDLBfloat:
    return t.bits == 16;
  default:
    return false;
  }
}

/* Rounding to a 16-bit float straight from the double: rounding to f32 first would round twice
   (a double just above an f16 tie, rounded to f32, can land on the tie and then go to even). */
static double round_half(double v, int precision, int emin, double max_finite) {
  if (isnan(v) || isinf(v) || v == 0)
    return v;
  double a = fabs(v);
  int e = ilogb(a);
  if (e < emin)
    e = emin; /* subnormals share the smallest normal binade's quantum */
  double quantum = ldexp(1.0, e - (precision - 1));
  double r = nearbyint(a / quantum) * quantum; /* the default rounding mode: ties to even */
  if (r > max_finite)
    r = INFINITY;
  return copysign(r, v);
}

double ir_float_round(te_dtype t, double v) {
  if (t.code == kDLFloat && t.bits == 32)
    return (double)(float)v;
  if (t.code == kDLFloat && t.bits == 16)
    return round_half(v, 11, -14, 65504.0);
  if (t.code == kDLBfloat && t.bits == 16)
    return round_half(v, 8, -126, ldexp(255.0, 120)); /* (2 - 2^-7) * 2^127 */
  return v;
}

uint16_t ir_half_bits(te_dtype t, double v) {
  double r = ir_float_round(t, v);
  uint16_t sign = signbit(r) ? 0x8000 : 0;
  if (t.code == kDLBfloat) { /* r is an f32 whose low 16 bits are zero (NaN: quieted) */
    float f = (float)r;
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return isnan(r) ? (uint16_t)(sign | 0x7fc0) : (uint16_t)(u >> 16);
  }
  double a = fabs(r);
  if (isnan(r))
    return (uint16_t)(sign | 0x7e00);
  if (isinf(r))
    return (uint16_t)(sign | 0x7c00);
  if (a < 0x1p-14) /* subnormal (or zero): a multiple of 2^-24 */
    return (uint16_t)(sign | (uint16_t)(a * 0x1p24));
  int e = ilogb(a);
  return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(a, 10 - e) - 1024));
}

double ir_half_value(te_dtype t, uint16_t h) {
  if (t.code == kDLBfloat) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
  }
  int e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double v = e == 0x1f ? (m ? NAN : INFINITY) : e == 0 ? ldexp(m, -24) : ldexp(1024 + m, e - 25);
  return h & 0x8000 ? -v : v;
}
