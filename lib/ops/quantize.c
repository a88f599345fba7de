/* quantize.c — te_op_requantize: an i32 accumulator back to i8/u8 by a scale and a zero point.
 *
 * The scale is a double given at build time; the kernel multiplies by it in integers only, as
 * gemmlowp and TFLite do, so results are exact and the same on every back end: scale = M * 2^-s
 * with M a 31-bit integer in [2^30, 2^31) (M / 2^31 is the frexp mantissa, rounded), and
 *   out = saturating_cast(dtype, rounding_shift_right(i64(x) * M, s) + zero_point).
 * i64(x) * M cannot overflow for x of at most 32 bits; rounding_shift_right rounds half up and
 * is defined for every s (a tiny scale gives s >= 64 and a 0 before the zero point).
 */
#include <math.h>

#include "ops_internal.h"

/* scale = m * 2^-s, m in [2^30, 2^31). */
static void split_scale(double scale, int64_t *m, int64_t *s) {
  int e = 0;
  double f = frexp(scale, &e); /* scale = f * 2^e, f in [0.5, 1) */
  int64_t q = (int64_t)llround(f * 2147483648.0);
  if (q == (int64_t)1 << 31) { /* f rounded up to 1 */
    q >>= 1;
    e++;
  }
  *m = q;
  *s = 31 - e;
}

te_tensor *te_op_requantize(te_ctx *ctx, te_tensor *x, double scale, int64_t zero_point,
                            te_dtype dtype, const char *name) {
  const char *fn = "te_op_requantize";
  if (!op_begin(ctx, fn, &name, "requantize", 1, (te_tensor *const[]){x},
                (const char *const[]){"x"}))
    return NULL;
  char a[24], b[24];
  if (!ir_is_intlike(x->dtype) || ir_is_bool(x->dtype) || x->dtype.bits > 32) {
    ir_error(ctx, TE_ERR_TYPE, "%s: '%s' has dtype %s; an integer of at most 32 bits is required",
             fn, x->name, te_dtype_str(x->dtype, a, sizeof a));
    return NULL;
  }
  if (!ir_is_intlike(dtype) || ir_is_bool(dtype) || dtype.lanes != 1 || dtype.bits > 32) {
    ir_error(ctx, TE_ERR_TYPE, "%s: output dtype %s is not an integer type of at most 32 bits", fn,
             te_dtype_str(dtype, b, sizeof b));
    return NULL;
  }
  if (!(scale > 0) || !isfinite(scale) || scale >= 2147483648.0) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: scale must be finite and in (0, 2^31) (got %g)", fn,
             scale);
    return NULL;
  }
  int64_t lo = ir_is_int(dtype) ? -((int64_t)1 << (dtype.bits - 1)) : 0;
  int64_t hi =
      ir_is_int(dtype) ? ((int64_t)1 << (dtype.bits - 1)) - 1 : ((int64_t)1 << dtype.bits) - 1;
  if (zero_point < lo || zero_point > hi) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: zero point %lld is outside the range of %s", fn,
             (long long)zero_point, te_dtype_str(dtype, b, sizeof b));
    return NULL;
  }
  int64_t m = 0, s = 0;
  split_scale(scale, &m, &s);
  int nd = x->ndim;
  te_expr *vars[TE_MAX_DIMS];
  static const char *const names[TE_MAX_DIMS] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7"};
  op_vars(ctx, nd, names, vars);
  te_expr *wide = te_mul(te_cast(TE_I64, te_at(x, nd, vars)), te_const(ctx, TE_I64, (double)m));
  te_expr *shifted = te_rounding_shift_right(wide, te_int(ctx, s));
  te_expr *body = te_saturating_cast(dtype, te_add(shifted, te_int(ctx, zero_point)));
  return te_compute(ctx, name, nd, x->shape, vars, body);
}
