/* simplify_fold.c — constant folding with the semantics of the generated code.
 *
 * Integers wrap at their width (ir_int normalises the result), unsigned types divide and compare
 * unsigned, signed ones floor-divide. Floats are computed in their own precision (an f32 result
 * is rounded to float once) and only where the result is exactly what IEEE arithmetic gives at
 * run time: + - * / and comparisons, min/max unless a NaN or signed zeros make the choice
 * ambiguous, and the exact math calls (abs, floor, ceil, trunc, sqrt, fma). Anything with an
 * undefined result (division by zero, float-to-int out of range) is left alone.
 */
#include <math.h>

#include "arith_internal.h"

static bool is_unsigned(te_dtype t) { return t.code == kDLUInt; }

static te_expr *fold_cmp(te_ctx *ctx, ir_expr_kind k, int c /* sign of x - y */) {
  bool r;
  switch (k) {
  case IR_EQ:
    r = c == 0;
    break;
  case IR_NE:
    r = c != 0;
    break;
  case IR_LT:
    r = c < 0;
    break;
  case IR_LE:
    r = c <= 0;
    break;
  case IR_GT:
    r = c > 0;
    break;
  case IR_GE:
    r = c >= 0;
    break;
  default:
    return NULL;
  }
  return ir_bool(ctx, r);
}

static te_expr *fold_int(te_ctx *ctx, ir_expr_kind k, te_dtype t, int64_t x, int64_t y) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;
  bool u = is_unsigned(t);
  int c = u ? (ux < uy ? -1 : ux > uy) : (x < y ? -1 : x > y);
  switch (k) {
  case IR_ADD:
    return ir_int(ctx, t, (int64_t)(ux + uy));
  case IR_SUB:
    return ir_int(ctx, t, (int64_t)(ux - uy));
  case IR_MUL:
    return ir_int(ctx, t, (int64_t)(ux * uy));
  case IR_FLOORDIV:
  case IR_TRUNCDIV:
    if (y == 0)
      return NULL;
    if (u)
      return ir_int(ctx, t, (int64_t)(ux / uy));
    if (y == -1)
      return ir_int(ctx, t, (int64_t)(0 - ux));
    return ir_int(ctx, t, k == IR_FLOORDIV ? ir_floordiv64(x, y) : x / y);
  case IR_FLOORMOD:
  case IR_TRUNCMOD:
    if (y == 0)
      return NULL;
    if (u)
      return ir_int(ctx, t, (int64_t)(ux % uy));
    if (y == -1)
      return ir_int(ctx, t, 0);
    return ir_int(ctx, t, k == IR_FLOORMOD ? ir_floormod64(x, y) : x % y);
  case IR_MIN:
    return ir_int(ctx, t, c <= 0 ? x : y);
  case IR_MAX:
    return ir_int(ctx, t, c >= 0 ? x : y);
  case IR_AND:
    return ir_int(ctx, t, x && y);
  case IR_OR:
    return ir_int(ctx, t, x || y);
  default:
    return fold_cmp(ctx, k, c);
  }
}

static te_expr *fold_float(te_ctx *ctx, ir_expr_kind k, te_dtype t, double x, double y) {
  bool f32 = t.bits == 32;
  double r;
  switch (k) {
  case IR_ADD:
    r = f32 ? (double)((float)x + (float)y) : x + y;
    break;
  case IR_SUB:
    r = f32 ? (double)((float)x - (float)y) : x - y;
    break;
  case IR_MUL:
    r = f32 ? (double)((float)x * (float)y) : x * y;
    break;
  case IR_DIV:
    r = f32 ? (double)((float)x / (float)y) : x / y;
    break;
  case IR_MIN:
  case IR_MAX:
    if (isnan(x) || isnan(y) || (x == y && signbit(x) != signbit(y)))
      return NULL;
    r = (k == IR_MIN) == (x < y) ? x : y;
    break;
  default:
    if (k < IR_EQ || k > IR_GE)
      return NULL;
    if (isnan(x) || isnan(y))
      return ir_bool(ctx, k == IR_NE);
    return fold_cmp(ctx, k, x < y ? -1 : x > y);
  }
  return ir_float(ctx, t, r);
}

te_expr *ir_fold_binary(te_ctx *ctx, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  if (a->kind == IR_BROADCAST && b->kind == IR_BROADCAST) {
    te_expr *r = ir_fold_binary(ctx, k, a->args[0], b->args[0]);
    return r ? ir_broadcast(r, a->dtype.lanes) : NULL;
  }
  if (a->kind == IR_INT && b->kind == IR_INT)
    return fold_int(ctx, k, a->dtype, a->u.i, b->u.i);
  if (a->kind == IR_FLOAT && b->kind == IR_FLOAT)
    return fold_float(ctx, k, a->dtype, a->u.f, b->u.f);
  return NULL;
}

te_expr *ir_fold_not(te_ctx *ctx, te_expr *a) {
  if (!a)
    return NULL;
  if (a->kind == IR_BROADCAST) {
    te_expr *r = ir_fold_not(ctx, a->args[0]);
    return r ? ir_broadcast(r, a->dtype.lanes) : NULL;
  }
  return a->kind == IR_INT ? ir_bool(ctx, !a->u.i) : NULL;
}

/* float -> integer of dtype t: truncation, undefined outside the range. */
static te_expr *fold_f2i(te_ctx *ctx, te_dtype t, double x) {
  if (isnan(x) || ir_is_bool(t))
    return NULL;
  double tr = trunc(x);
  if (t.code == kDLUInt) {
    if (tr < 0 || tr >= ldexp(1.0, t.bits))
      return NULL;
    return ir_int(ctx, t, (int64_t)(uint64_t)tr);
  }
  if (tr < -ldexp(1.0, t.bits - 1) || tr >= ldexp(1.0, t.bits - 1))
    return NULL;
  return ir_int(ctx, t, (int64_t)tr);
}

static te_expr *fold_i2f(te_ctx *ctx, te_dtype from, te_dtype t, int64_t x) {
  bool u = from.code == kDLUInt;
  if (t.bits == 32)
    return ir_float(ctx, t, u ? (double)(float)(uint64_t)x : (double)(float)x);
  return ir_float(ctx, t, u ? (double)(uint64_t)x : (double)x);
}

te_expr *ir_fold_cast(te_ctx *ctx, te_dtype t, te_expr *a) {
  if (!a)
    return NULL;
  if (a->kind == IR_BROADCAST) {
    te_expr *r = ir_fold_cast(ctx, ir_elem(t), a->args[0]);
    return r ? ir_broadcast(r, t.lanes) : NULL;
  }
  if (t.lanes != 1 || a->dtype.lanes != 1)
    return NULL;
  if (a->kind == IR_INT) {
    if (ir_is_float(t))
      return fold_i2f(ctx, a->dtype, t, a->u.i);
    if (!ir_is_intlike(t))
      return NULL;
    /* to bool: only values whose meaning does not depend on truncation vs != 0 */
    if (ir_is_bool(t) && a->u.i != 0 && a->u.i != 1)
      return NULL;
    return ir_int(ctx, t, a->u.i);
  }
  if (a->kind == IR_FLOAT) {
    if (ir_is_float(t))
      return ir_float(ctx, t, a->u.f);
    if (ir_is_intlike(t))
      return fold_f2i(ctx, t, a->u.f);
  }
  return NULL;
}

static te_expr *fold_call_float(te_ctx *ctx, te_expr *e) {
  bool f32 = e->dtype.bits == 32;
  for (int i = 0; i < e->nargs; i++)
    if (e->args[i]->kind != IR_FLOAT)
      return NULL;
  double x = e->args[0]->u.f, r;
  switch (e->u.call) {
  case IR_INTRIN_ABS:
    r = fabs(x);
    break;
  case IR_INTRIN_FLOOR:
    r = floor(x);
    break;
  case IR_INTRIN_CEIL:
    r = ceil(x);
    break;
  case IR_INTRIN_TRUNC:
    r = trunc(x);
    break;
  case IR_INTRIN_SQRT:
    r = f32 ? (double)sqrtf((float)x) : sqrt(x);
    break;
  case IR_INTRIN_FMA:
    r = f32 ? (double)fmaf((float)x, (float)e->args[1]->u.f, (float)e->args[2]->u.f)
            : fma(x, e->args[1]->u.f, e->args[2]->u.f);
    break;
  default:
    return NULL;
  }
  return ir_float(ctx, e->dtype, r);
}

te_expr *ir_fold_call(te_ctx *ctx, te_expr *e) {
  if (!e)
    return NULL;
  if (e->nargs < 1 || e->dtype.lanes != 1)
    return NULL;
  te_expr *a = e->args[0];
  if (e->u.call == IR_INTRIN_LIKELY)
    return a->kind == IR_INT ? a : NULL;
  if (ir_is_float(e->dtype))
    return fold_call_float(ctx, e);
  if (e->u.call == IR_INTRIN_ABS && a->kind == IR_INT) {
    if (is_unsigned(a->dtype) || a->u.i >= 0)
      return a;
    return ir_int(ctx, a->dtype, (int64_t)(0 - (uint64_t)a->u.i));
  }
  return NULL;
}

bool ir_is_const_value(te_expr *e, double v) {
  if (!e)
    return false;
  if (e->kind == IR_BROADCAST)
    return ir_is_const_value(e->args[0], v);
  if (e->kind == IR_INT)
    return (double)e->u.i == v && e->u.i == (int64_t)v;
  if (e->kind == IR_FLOAT)
    return e->u.f == v;
  return false;
}

te_expr *ir_const_like(te_ctx *ctx, te_dtype t, int64_t v) {
  te_dtype s = ir_elem(t);
  te_expr *c = ir_is_float(s) ? ir_float(ctx, s, (double)v) : ir_int(ctx, s, v);
  return t.lanes > 1 ? ir_broadcast(c, t.lanes) : c;
}
