/* expr_bits.c — the integer operators of quantized kernels (include/te/expr.h): bitwise
 * operations, shifts, rounding shifts and saturating casts.
 *
 * The bitwise operations and shifts are calls (intrinsics.def), so the printer, the parsers and
 * te_call know them by name with no more code. A shift's result has x's type; its amount is
 * brought to that type here without changing what it means: an amount is read as unsigned, so
 * one past the width (or negative) is clamped to width + 1, where every shift, the rounding one
 * included, has its "shifted out completely" value. A saturating cast is built from min, max,
 * select and cast, as Halide does, and so needs nothing from the back ends.
 */
#include <math.h>

#include "ir.h"

/* The amount a (any integer type, lanes 1 or x's) as x's type t, clamped to t's width + 1. */
static te_expr *shift_amount(te_expr *a, te_dtype t) {
  te_ctx *ctx = a->ctx;
  int64_t width = t.bits + 1; /* fits every type: 9 in i8 */
  te_dtype et = ir_elem(t);
  te_expr *r;
  if (a->kind == IR_INT) {
    uint64_t v = (uint64_t)a->u.i;
    if (ir_is_int(a->dtype) && a->dtype.bits < 64) /* the immediate's own bits, read unsigned */
      v &= ((uint64_t)1 << a->dtype.bits) - 1;
    r = ir_int(ctx, et, v > (uint64_t)width ? width : (int64_t)v);
  } else if (ir_dtype_eq(ir_elem(a->dtype), et)) {
    r = a;
  } else {
    te_dtype at = a->dtype, ut = {kDLUInt, at.bits, at.lanes};
    te_expr *u = ir_cast(ut, a);
    te_expr *w = ir_int(ctx, ir_elem(ut), width);
    if (u && w && at.lanes > 1)
      w = ir_broadcast(w, at.lanes);
    r = ir_cast((te_dtype){et.code, et.bits, at.lanes}, ir_min(u, w));
  }
  if (r && r->dtype.lanes != t.lanes)
    r = ir_broadcast(r, t.lanes);
  return r;
}

te_expr *ir_shift_call(te_ctx *ctx, ir_intrin id, te_expr *x, te_expr *amount) {
  if (amount->dtype.lanes != 1 && amount->dtype.lanes != x->dtype.lanes) {
    ir_error(ctx, TE_ERR_TYPE, "te_call: '%s': the amount's lanes differ from the value's",
             ir_intrin_table[id].name);
    return NULL;
  }
  te_expr *a = shift_amount(amount, x->dtype);
  if (!a)
    return NULL;
  te_expr *args[2] = {x, a};
  return ir_call(ctx, id, x->dtype, 2, args);
}

static te_expr *call_by_id(ir_intrin id, int n, te_expr *a, te_expr *b) {
  te_ctx *ctx = a ? a->ctx : b ? b->ctx : NULL;
  if (!ctx)
    return NULL; /* no context to record on */
  return te_call(ctx, ir_intrin_table[id].name, n, (te_expr *const[]){a, b});
}

te_expr *te_bitwise_and(te_expr *a, te_expr *b) {
  return call_by_id(IR_INTRIN_BITWISE_AND, 2, a, b);
}
te_expr *te_bitwise_or(te_expr *a, te_expr *b) { return call_by_id(IR_INTRIN_BITWISE_OR, 2, a, b); }
te_expr *te_bitwise_xor(te_expr *a, te_expr *b) {
  return call_by_id(IR_INTRIN_BITWISE_XOR, 2, a, b);
}
te_expr *te_bitwise_not(te_expr *a) { return call_by_id(IR_INTRIN_BITWISE_NOT, 1, a, NULL); }
te_expr *te_shift_left(te_expr *x, te_expr *s) { return call_by_id(IR_INTRIN_SHIFT_LEFT, 2, x, s); }
te_expr *te_shift_right(te_expr *x, te_expr *s) {
  return call_by_id(IR_INTRIN_SHIFT_RIGHT, 2, x, s);
}
te_expr *te_shift_right_logical(te_expr *x, te_expr *s) {
  return call_by_id(IR_INTRIN_SHIFT_RIGHT_LOGICAL, 2, x, s);
}
te_expr *te_rounding_shift_right(te_expr *x, te_expr *s) {
  return call_by_id(IR_INTRIN_ROUNDING_SHIFT_RIGHT, 2, x, s);
}

/* The range of an integer type. */
static int64_t int_lo(te_dtype t) {
  return ir_is_int(t) ? (t.bits == 64 ? INT64_MIN : -((int64_t)1 << (t.bits - 1))) : 0;
}
static uint64_t int_hi(te_dtype t) {
  if (ir_is_int(t))
    return ((uint64_t)1 << (t.bits - 1)) - 1;
  return t.bits == 64 ? UINT64_MAX : ((uint64_t)1 << t.bits) - 1;
}

/* The largest float of type f (f32 or f64) that is <= the top of the integer type t. The top is
   2^k - 1, so a float above it is >= 2^k. */
static double float_top(te_dtype f, te_dtype t) {
  double limit = ldexp(1.0, ir_is_int(t) ? t.bits - 1 : t.bits);
  if (f.bits == 32) {
    float x = (float)int_hi(t);
    while ((double)x >= limit)
      x = nextafterf(x, 0.0f);
    return x;
  }
  double x = (double)int_hi(t);
  while (x >= limit)
    x = nextafter(x, 0.0);
  return x;
}

/* e (an integer) clamped into t's range, in e's own type: only the ends that can be crossed. */
static te_expr *clamp_int(te_expr *e, te_dtype t) {
  te_ctx *ctx = e->ctx;
  te_dtype s = ir_elem(e->dtype);
  int lanes = e->dtype.lanes;
  bool below = int_lo(t) > int_lo(s);
  bool above = int_hi(t) < int_hi(s);
  te_expr *r = e;
  if (above) {
    te_expr *h = ir_int(ctx, s, (int64_t)int_hi(t));
    r = ir_min(r, lanes > 1 ? ir_broadcast(h, lanes) : h);
  }
  if (below && r) {
    /* t's minimum is in s's range: s is signed here, or t is unsigned (minimum 0) */
    te_expr *l = ir_int(ctx, s, int_lo(t));
    r = ir_max(r, lanes > 1 ? ir_broadcast(l, lanes) : l);
  }
  return r;
}

/* A float e converted to the integer type t: NaN gives 0, values past the ends the ends. */
static te_expr *saturate_float(te_expr *e, te_dtype t) {
  te_ctx *ctx = e->ctx;
  te_dtype f = ir_elem(e->dtype);
  int lanes = e->dtype.lanes;
  double hi = float_top(f, t);
  double lo = (double)int_lo(t); /* a power of two or 0: exact */
  te_expr *fh = ir_float(ctx, f, hi), *fl = ir_float(ctx, f, lo);
  te_expr *ih = ir_int(ctx, ir_elem(t), (int64_t)int_hi(t));
  te_expr *zero = ir_int(ctx, ir_elem(t), 0);
  if (lanes > 1) {
    fh = ir_broadcast(fh, lanes), fl = ir_broadcast(fl, lanes);
    ih = ir_broadcast(ih, lanes), zero = ir_broadcast(zero, lanes);
  }
  te_dtype tv = {t.code, t.bits, (uint16_t)lanes};
  /* min(x, hi) of a value above the top is hi, whose conversion is <= the top; above the top we
     want the top itself, which hi may miss by rounding (f32 and i32): select it */
  te_expr *body = ir_cast(tv, ir_max(ir_min(e, fh), fl));
  te_expr *r = ir_select(ir_binary(IR_GT, e, fh), ih, body);
  return ir_select(ir_binary(IR_EQ, e, e), r, zero); /* NaN != NaN */
}

te_expr *te_saturating_cast(te_dtype t, te_expr *e) {
  if (!e)
    return NULL; /* no context to record on */
  char n[24], m[24];
  if (!ir_dtype_supported(t) || (t.lanes != 1 && t.lanes != e->dtype.lanes)) {
    ir_error(e->ctx, TE_ERR_TYPE, "te_saturating_cast: cannot convert %s to %s",
             te_dtype_str(e->dtype, m, sizeof m), te_dtype_str(t, n, sizeof n));
    return NULL;
  }
  t.lanes = e->dtype.lanes;
  if (ir_is_bool(e->dtype) || ir_is_bool(t)) {
    ir_error(e->ctx, TE_ERR_TYPE, "te_saturating_cast: bool has no range to saturate to (%s to %s)",
             te_dtype_str(e->dtype, m, sizeof m), te_dtype_str(t, n, sizeof n));
    return NULL;
  }
  if (ir_is_float(t))
    return te_cast(t, e); /* every integer and float fits, up to rounding or infinity */
  if (ir_is_float(e->dtype))
    return saturate_float(e, t);
  te_expr *c = clamp_int(e, t);
  return c ? ir_cast(t, c) : NULL;
}
