/* accum.c — the dtypes of products and their sums in matmul and convolution.
 *
 * Without an accumulator dtype an operator multiplies and sums in its inputs' (common) dtype, which
 * is right for floats and 32/64-bit integers; for 8- and 16-bit integers it would wrap after a
 * handful of products, so those are refused and pointed at the _acc form. With one (the _acc
 * operators), each product is cast(acc, a) * cast(acc, b), the sum and the output have dtype acc,
 * and the inputs may differ (u8 x i8, as quantized kernels have). An integer accumulator must hold
 * every product and, when the number of summed terms is a constant, every sum: otherwise it could
 * overflow, and the request is refused rather than wrapped. A float accumulator must hold every
 * value of the float inputs (bf16 or f16 into f32, the mixed-precision GEMM; an f32 matmul
 * summed in bf16 is refused: it would round each input and each partial sum to 8 bits).
 */
#include <math.h>

#include "ops_internal.h"

static const char *dt(te_dtype t, char *buf) { return te_dtype_str(t, buf, 24); }

/* Whether the float dtype acc holds every value of the float dtype in exactly: itself, or a
   wider IEEE format (f32 holds f16 and bf16; f16 and bf16 hold neither the other nor f32). */
static bool float_holds(te_dtype acc, te_dtype in) {
  if (acc.code == in.code && acc.bits == in.bits)
    return true;
  return acc.code == kDLFloat && acc.bits > in.bits && acc.bits >= 32;
}

bool op_check_inputs(te_ctx *ctx, const char *fn, const te_tensor *a, const te_tensor *b,
                     const te_dtype *acc) {
  if (!op_check_number(ctx, fn, a) || !op_check_number(ctx, fn, b))
    return false;
  char x[24], y[24];
  if (!acc) {
    if (!op_check_same_dtype(ctx, fn, a, b))
      return false;
    if (ir_is_intlike(a->dtype) && a->dtype.bits < 32) {
      ir_error(ctx, TE_ERR_TYPE,
               "%s: '%s' has dtype %s: sums of its products would overflow %s; use %s_acc with "
               "an i32 accumulator",
               fn, a->name, dt(a->dtype, x), dt(a->dtype, y), fn);
      return false;
    }
    return true;
  }
  if (acc->lanes != 1 || ir_is_bool(*acc) || !ir_dtype_supported(*acc)) {
    ir_error(ctx, TE_ERR_TYPE, "%s: accumulator dtype %s is not a scalar number type", fn,
             dt(*acc, x));
    return false;
  }
  const te_tensor *f = ir_is_float(a->dtype) ? a : ir_is_float(b->dtype) ? b : NULL;
  if (f && !ir_is_float(*acc)) {
    ir_error(ctx, TE_ERR_TYPE, "%s: '%s' has float dtype %s but the accumulator %s is an integer",
             fn, f->name, dt(f->dtype, x), dt(*acc, y));
    return false;
  }
  const te_tensor *in[2] = {a, b};
  for (int s = 0; s < 2; s++)
    if (ir_is_float(in[s]->dtype) && !float_holds(*acc, in[s]->dtype)) {
      ir_error(ctx, TE_ERR_TYPE,
               "%s: accumulator %s cannot hold the values of '%s' (%s): a float accumulator must "
               "be the inputs' dtype or wider (f32 for f16 and bf16 inputs, f64 for any)",
               fn, dt(*acc, x), in[s]->name, dt(in[s]->dtype, y));
      return false;
    }
  return true;
}

/* The largest magnitude of an integer type's values, as a double (exact below 2^53). */
static double int_mag(te_dtype t) {
  return ir_is_int(t) ? ldexp(1.0, t.bits - 1) : ldexp(1.0, t.bits) - 1;
}

bool op_check_acc_range(te_ctx *ctx, const char *fn, const te_tensor *a, const te_tensor *b,
                        te_dtype acc, te_expr *terms) {
  if (ir_is_float(acc))
    return true;
  double top = ir_is_int(acc) ? ldexp(1.0, acc.bits - 1) - 1 : ldexp(1.0, acc.bits) - 1;
  bool signs = ir_is_int(a->dtype) || ir_is_int(b->dtype);
  double prod = int_mag(a->dtype) * int_mag(b->dtype);
  char x[24], y[24], z[24];
  if (signs && !ir_is_int(acc)) {
    ir_error(ctx, TE_ERR_TYPE,
             "%s: products of '%s' (%s) and '%s' (%s) can be negative; the accumulator %s is "
             "unsigned",
             fn, a->name, dt(a->dtype, x), b->name, dt(b->dtype, y), dt(acc, z));
    return false;
  }
  int64_t k = 0;
  bool known = ir_is_const_int(terms, &k);
  double worst = known ? prod * (double)k : prod;
  if (worst > top) {
    ir_error(ctx, TE_ERR_TYPE,
             "%s: accumulator %s can overflow: %s%.0f product%s of '%s' (%s) and '%s' (%s) reach "
             "%.0f, above %.0f",
             fn, dt(acc, z), known ? "" : "one of the ", known ? (double)k : 1.0,
             known && k == 1 ? "" : "s", a->name, dt(a->dtype, x), b->name, dt(b->dtype, y), worst,
             top);
    return false;
  }
  return true;
}

te_expr *op_product(te_expr *x, te_expr *y, const te_dtype *acc) {
  if (!acc)
    return te_mul(x, y);
  return te_mul(te_cast(*acc, x), te_cast(*acc, y));
}
