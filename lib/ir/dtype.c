/* dtype.c — names and support checks of data types.
 *
 * Names are short and stable (they appear in printed IR and in messages): f32, i64, u8, bool,
 * f32x16 for vectors.
 */
#include <math.h>
#include <stdio.h>

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
