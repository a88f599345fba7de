/* expr_api.c — the public expression API (include/te/expr.h): type checks, promotion, messages.
 *
 * Every function checks the user's operands, promotes them to a common type and calls the
 * internal ir_* constructor. Promotion (as in Halide and TVM):
 *   - an immediate (IR_INT / IR_FLOAT node) takes the other operand's type, unless it is a float
 *     immediate meeting an integer expression (then the integer becomes that float);
 *   - an int meets a float: the float; two ints or two floats: the wider; same width: signed.
 * A message always starts with the function's name: "te_add: operand types f32 and bool ...".
 */
#include <ctype.h>
#include <math.h>

#include "ir.h"

typedef struct dnames {
  char a[24], b[24];
} dnames;

static dnames names2(te_dtype a, te_dtype b) {
  dnames n;
  te_dtype_str(a, n.a, sizeof n.a);
  te_dtype_str(b, n.b, sizeof n.b);
  return n;
}

static bool is_imm(const te_expr *e) { return e->kind == IR_INT || e->kind == IR_FLOAT; }

static te_dtype wider(te_dtype a, te_dtype b) {
  if (ir_is_float(a) != ir_is_float(b))
    return ir_is_float(a) ? a : b;
  if (a.bits != b.bits)
    return a.bits > b.bits ? a : b;
  if (ir_is_float(a) && a.code != b.code) /* f16 meets bf16: neither holds the other */
    return ir_with_lanes(TE_F32, a.lanes);
  return a.code == kDLInt ? a : b;
}

static te_dtype common_type(const te_expr *a, const te_expr *b) {
  te_dtype ta = a->dtype, tb = b->dtype;
  if (is_imm(a) && !is_imm(b) && !(ir_is_float(ta) && !ir_is_float(tb)))
    return tb;
  if (is_imm(b) && !is_imm(a) && !(ir_is_float(tb) && !ir_is_float(ta)))
    return ta;
  return wider(ta, tb);
}

/* e converted to t: immediates are remade, other expressions cast. */
static te_expr *convert(te_expr *e, te_dtype t) {
  if (ir_dtype_eq(e->dtype, t))
    return e;
  if (e->kind == IR_INT && ir_is_float(t))
    return ir_float(e->ctx, t, (double)e->u.i);
  if (e->kind == IR_INT && ir_is_intlike(t))
    return ir_int(e->ctx, t, e->u.i);
  if (e->kind == IR_FLOAT && ir_is_float(t))
    return ir_float(e->ctx, t, e->u.f);
  return ir_cast(t, e);
}

static bool same_ctx(const char *fn, te_expr *a, te_expr *b) {
  if (a->ctx == b->ctx)
    return true;
  ir_error(a->ctx, TE_ERR_INVALID_ARG, "%s: operands belong to different contexts", fn);
  return false;
}

/* Checks that a and b can meet in an operation of class k and brings them to one type. */
static bool unify(const char *fn, ir_expr_kind k, te_expr **a, te_expr **b) {
  te_dtype ta = (*a)->dtype, tb = (*b)->dtype;
  dnames n = names2(ta, tb);
  te_ctx *ctx = (*a)->ctx;
  bool logic = k == IR_AND || k == IR_OR;
  bool bools_ok = logic || k == IR_EQ || k == IR_NE || k == IR_SELECT;
  if (logic && (!ir_is_bool(ta) || !ir_is_bool(tb))) {
    ir_error(ctx, TE_ERR_TYPE, "%s: operands must be bool (got %s and %s)", fn, n.a, n.b);
    return false;
  }
  if (ir_is_bool(ta) != ir_is_bool(tb) || (ir_is_bool(ta) && !bools_ok)) {
    ir_error(ctx, TE_ERR_TYPE, "%s: operand types %s and %s cannot be combined%s", fn, n.a, n.b,
             ir_is_bool(ta) && ir_is_bool(tb) ? " (bool is not a number)" : "");
    return false;
  }
  if (ta.lanes != tb.lanes) {
    ir_error(ctx, TE_ERR_TYPE, "%s: operand types %s and %s cannot be combined (lanes differ)", fn,
             n.a, n.b);
    return false;
  }
  te_dtype t = common_type(*a, *b);
  *a = convert(*a, t);
  *b = convert(*b, t);
  return *a && *b;
}

/* A NULL operand (core.h): recorded on the context of another operand, if one has any. */
static bool have_operands(const char *fn, int n, te_expr *const ops[], const char *const names[]) {
  te_ctx *ctx = NULL;
  int missing = -1;
  for (int i = 0; i < n; i++) {
    if (ops[i] && !ctx)
      ctx = ops[i]->ctx;
    if (!ops[i] && missing < 0)
      missing = i;
  }
  if (missing < 0)
    return true;
  ir_error_null(ctx, "%s: %s is NULL", fn, names[missing]);
  return false;
}

static const char *const two_names[] = {"left operand", "right operand"};

static te_expr *binop(const char *fn, ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!have_operands(fn, 2, (te_expr *const[]){a, b}, two_names))
    return NULL;
  if (!same_ctx(fn, a, b))
    return NULL;
  te_dtype ta = a->dtype, tb = b->dtype;
  if (!unify(fn, k, &a, &b))
    return NULL;
  dnames n = names2(ta, tb);
  if (k == IR_DIV && !ir_is_float(a->dtype)) {
    ir_error(a->ctx, TE_ERR_TYPE,
             "%s: integer operands (%s and %s): te_div is float division, use te_floordiv", fn, n.a,
             n.b);
    return NULL;
  }
  if ((k == IR_FLOORDIV || k == IR_FLOORMOD) && ir_is_float(a->dtype)) {
    ir_error(a->ctx, TE_ERR_TYPE, "%s: needs integer operands (got %s and %s)", fn, n.a, n.b);
    return NULL;
  }
  return ir_binary(k, a, b);
}

te_expr *te_add(te_expr *a, te_expr *b) { return binop("te_add", IR_ADD, a, b); }
te_expr *te_sub(te_expr *a, te_expr *b) { return binop("te_sub", IR_SUB, a, b); }
te_expr *te_mul(te_expr *a, te_expr *b) { return binop("te_mul", IR_MUL, a, b); }
te_expr *te_div(te_expr *a, te_expr *b) { return binop("te_div", IR_DIV, a, b); }
te_expr *te_floordiv(te_expr *a, te_expr *b) { return binop("te_floordiv", IR_FLOORDIV, a, b); }
te_expr *te_floormod(te_expr *a, te_expr *b) { return binop("te_floormod", IR_FLOORMOD, a, b); }
te_expr *te_min(te_expr *a, te_expr *b) { return binop("te_min", IR_MIN, a, b); }
te_expr *te_max(te_expr *a, te_expr *b) { return binop("te_max", IR_MAX, a, b); }
te_expr *te_lt(te_expr *a, te_expr *b) { return binop("te_lt", IR_LT, a, b); }
te_expr *te_le(te_expr *a, te_expr *b) { return binop("te_le", IR_LE, a, b); }
te_expr *te_gt(te_expr *a, te_expr *b) { return binop("te_gt", IR_GT, a, b); }
te_expr *te_ge(te_expr *a, te_expr *b) { return binop("te_ge", IR_GE, a, b); }
te_expr *te_eq(te_expr *a, te_expr *b) { return binop("te_eq", IR_EQ, a, b); }
te_expr *te_ne(te_expr *a, te_expr *b) { return binop("te_ne", IR_NE, a, b); }
te_expr *te_and(te_expr *a, te_expr *b) { return binop("te_and", IR_AND, a, b); }
te_expr *te_or(te_expr *a, te_expr *b) { return binop("te_or", IR_OR, a, b); }

static bool need_number(const char *fn, te_expr *a) {
  if (!ir_is_bool(a->dtype))
    return true;
  ir_error(a->ctx, TE_ERR_TYPE, "%s: operand type bool is not a number", fn);
  return false;
}

/* Integers: 0 - a. Floats: -1 * a (an exact sign flip, also for 0 and NaN). */
te_expr *te_neg(te_expr *a) {
  if (!a || !need_number("te_neg", a))
    return NULL; /* NULL alone: no context to record on */
  if (ir_is_float(a->dtype))
    return ir_mul(ir_float(a->ctx, a->dtype, -1.0), a);
  return ir_sub(ir_int(a->ctx, a->dtype, 0), a);
}

te_expr *te_not(te_expr *a) {
  if (!a)
    return NULL; /* no context to record on */
  if (!ir_is_bool(a->dtype)) {
    char n[24];
    ir_error(a->ctx, TE_ERR_TYPE, "te_not: operand must be bool (got %s)",
             te_dtype_str(a->dtype, n, sizeof n));
    return NULL;
  }
  return ir_not(a);
}

/* The checks of te_select and te_if_then_else (fn names the caller): a bool condition (one
   lane or t's), t and f unified. */
static bool check_choice(const char *fn, te_expr *c, te_expr **t, te_expr **f) {
  static const char *const names[] = {"condition", "true value", "false value"};
  if (!have_operands(fn, 3, (te_expr *const[]){c, *t, *f}, names))
    return false;
  if (!same_ctx(fn, c, *t) || !same_ctx(fn, c, *f))
    return false;
  if (!ir_is_bool(c->dtype) || (c->dtype.lanes != 1 && c->dtype.lanes != (*t)->dtype.lanes)) {
    char n[24];
    ir_error(c->ctx, TE_ERR_TYPE, "%s: condition must be bool (got %s)", fn,
             te_dtype_str(c->dtype, n, sizeof n));
    return false;
  }
  return unify(fn, IR_SELECT, t, f);
}

te_expr *te_select(te_expr *c, te_expr *t, te_expr *f) {
  return check_choice("te_select", c, &t, &f) ? ir_select(c, t, f) : NULL;
}

te_expr *te_if_then_else(te_expr *c, te_expr *t, te_expr *f) {
  if (!check_choice("te_if_then_else", c, &t, &f))
    return NULL;
  te_expr *args[3] = {c, t, f};
  return ir_call(c->ctx, IR_INTRIN_IF_THEN_ELSE, t->dtype, 3, args);
}

/* TE_OK when t is a dtype te computes with; else records why (fn names the caller). */
static te_status check_dtype(te_ctx *ctx, const char *fn, te_dtype t) {
  if (ir_dtype_supported(t))
    return TE_OK;
  char n[24];
  te_dtype_str(t, n, sizeof n);
  return ir_error(ctx, TE_ERR_UNSUPPORTED, "%s: dtype %s is not supported", fn, n);
}

te_expr *te_cast(te_dtype t, te_expr *e) {
  if (!e)
    return NULL; /* no context to record on */
  if (check_dtype(e->ctx, "te_cast", t) != TE_OK)
    return NULL;
  if (t.lanes == 1)
    t.lanes = e->dtype.lanes;
  if (t.lanes != e->dtype.lanes) {
    dnames n = names2(e->dtype, t);
    ir_error(e->ctx, TE_ERR_TYPE, "te_cast: cannot cast %s to %s (lanes differ)", n.a, n.b);
    return NULL;
  }
  return convert(e, t);
}

/* ---------------------------------------------------------------- leaves */

te_expr *te_int(te_ctx *ctx, int64_t v) { return ir_i64(ctx, v); }

te_expr *te_float(te_ctx *ctx, te_dtype t, double v) {
  if (!ctx)
    return NULL;
  if (check_dtype(ctx, "te_float", t) != TE_OK)
    return NULL;
  if (!ir_is_float(t) || t.lanes != 1) {
    char n[24];
    ir_error(ctx, TE_ERR_TYPE, "te_float: dtype %s is not a scalar float type (use te_const)",
             te_dtype_str(t, n, sizeof n));
    return NULL;
  }
  return ir_float(ctx, t, v);
}

te_expr *te_const(te_ctx *ctx, te_dtype t, double v) {
  if (!ctx)
    return NULL;
  if (check_dtype(ctx, "te_const", t) != TE_OK)
    return NULL;
  char n[24];
  te_dtype_str(t, n, sizeof n);
  if (t.lanes != 1) {
    ir_error(ctx, TE_ERR_TYPE, "te_const: dtype %s is not a scalar type", n);
    return NULL;
  }
  if (ir_is_float(t))
    return ir_float(ctx, t, v);
  if (ir_is_bool(t))
    return ir_bool(ctx, v != 0);
  if (!isfinite(v) || v < -9223372036854775808.0 || v >= 9223372036854775808.0 || v != trunc(v)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_const: value %g is not an integer of type %s", v, n);
    return NULL;
  }
  return ir_int(ctx, t, (int64_t)v);
}

static bool check_ident(te_ctx *ctx, const char *fn, const char *name) {
  bool ok = name && (isalpha((unsigned char)name[0]) || name[0] == '_');
  for (const char *p = name; ok && *p; p++)
    ok = isalnum((unsigned char)*p) || *p == '_';
  if (!ok)
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: name '%s' is not a C identifier", fn,
             name ? name : "(null)");
  return ok;
}

te_expr *te_var(te_ctx *ctx, const char *name) {
  if (!ctx || !check_ident(ctx, "te_var", name))
    return NULL;
  return ir_var_new(ctx, name, TE_I64, IR_VAR_INDEX);
}

te_expr *te_param(te_ctx *ctx, const char *name, te_dtype t) {
  if (!ctx || !check_ident(ctx, "te_param", name))
    return NULL;
  if (check_dtype(ctx, "te_param", t) != TE_OK)
    return NULL;
  if (t.lanes != 1) {
    char n[24];
    ir_error(ctx, TE_ERR_TYPE, "te_param: parameter '%s': dtype %s is not a scalar type", name,
             te_dtype_str(t, n, sizeof n));
    return NULL;
  }
  return ir_var_new(ctx, name, t, IR_VAR_PARAM);
}

/* ---------------------------------------------------------------- accessors */

te_dtype te_expr_dtype(const te_expr *e) {
  if (!e)
    return (te_dtype){0, 0, 0};
  return e->dtype;
}

te_ctx *te_expr_ctx(const te_expr *e) { return e ? e->ctx : NULL; }

char *te_expr_text(const te_expr *e) { return e ? ir_expr_to_string((te_expr *)e) : NULL; }
