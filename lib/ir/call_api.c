/* call_api.c — te_call: math calls by name (intrinsics.def), with arity and type checks.
 *
 * Float-only calls refuse integer arguments instead of converting them silently; arguments of a
 * call are promoted to one common type (immediates take the other arguments' type).
 */
#include "ir.h"

static bool is_imm(const te_expr *e) { return e->kind == IR_INT || e->kind == IR_FLOAT; }

/* The arguments' common type: the widest non-immediate float (or number) type, else the widest
   immediate. */
static te_dtype call_type(int n, te_expr *const args[]) {
  te_dtype best = args[0]->dtype;
  bool best_imm = is_imm(args[0]);
  for (int i = 1; i < n; i++) {
    te_dtype t = args[i]->dtype;
    bool imm = is_imm(args[i]);
    if (best_imm && !imm) {
      best = t;
      best_imm = false;
    } else if (imm == best_imm && (t.bits > best.bits || (ir_is_float(t) && !ir_is_float(best)))) {
      best = t;
    }
  }
  return best;
}

static te_expr *convert(te_expr *e, te_dtype t) {
  if (ir_dtype_eq(e->dtype, t))
    return e;
  if (e->kind == IR_FLOAT && ir_is_float(t))
    return ir_float(e->ctx, t, e->u.f);
  if (e->kind == IR_INT && ir_is_intlike(t))
    return ir_int(e->ctx, t, e->u.i);
  return ir_cast(t, e);
}

/* Checks one argument against the intrinsic's flags; records the error. */
static bool check_arg(te_ctx *ctx, const ir_intrin_info *in, te_expr *a) {
  char n[24];
  te_dtype_str(a->dtype, n, sizeof n);
  if (a->ctx != ctx) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_call: '%s': argument from another context", in->name);
    return false;
  }
  if ((in->flags & IR_INTRIN_FLOAT) && !ir_is_float(a->dtype)) {
    ir_error(ctx, TE_ERR_TYPE, "te_call: '%s' needs a float argument (got %s): cast it first",
             in->name, n);
    return false;
  }
  if ((in->flags & IR_INTRIN_INT) && (!ir_is_intlike(a->dtype) || ir_is_bool(a->dtype))) {
    ir_error(ctx, TE_ERR_TYPE, "te_call: '%s' needs an integer argument (got %s)%s", in->name, n,
             ir_is_bool(a->dtype) ? ": use te_and/te_or/te_not on bools" : "");
    return false;
  }
  if ((in->flags & IR_INTRIN_NUMBER) && ir_is_bool(a->dtype)) {
    ir_error(ctx, TE_ERR_TYPE, "te_call: '%s' needs a number argument (got %s)", in->name, n);
    return false;
  }
  return true;
}

te_expr *te_call(te_ctx *ctx, const char *fn, int n, te_expr *const args[]) {
  if (!ctx)
    return NULL;
  if (!fn) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_call: function name is NULL");
    return NULL;
  }
  int id = ir_intrin_lookup(fn);
  if (id < 0 || (ir_intrin_table[id].flags & IR_INTRIN_INTERNAL)) {
    ir_error(ctx, TE_ERR_NOT_FOUND, "te_call: unknown function '%s'", fn);
    return NULL;
  }
  const ir_intrin_info *in = &ir_intrin_table[id];
  if (n != in->nargs || (n > 0 && !args)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "te_call: '%s' takes %d argument%s (got %d)", in->name,
             in->nargs, in->nargs == 1 ? "" : "s", n);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!args[i]) {
      ir_error_null(ctx, "te_call: '%s': argument %d is NULL", in->name, i);
      return NULL;
    }
  if (in->flags & IR_INTRIN_GUARD)
    return te_if_then_else(args[0], args[1], args[2]);
  for (int i = 0; i < n; i++)
    if (!check_arg(ctx, in, args[i]))
      return NULL;
  if (in->flags & IR_INTRIN_SHIFT)
    return ir_shift_call(ctx, (ir_intrin)id, args[0], args[1]);
  te_dtype t = call_type(n, args);
  te_expr *conv[4];
  if (!ir_check(ctx, n <= 4, "te_call: too many arguments for the converter"))
    return NULL;
  for (int i = 0; i < n; i++) {
    if (args[i]->dtype.lanes != t.lanes) {
      ir_error(ctx, TE_ERR_TYPE, "te_call: '%s': arguments differ in lanes", in->name);
      return NULL;
    }
    conv[i] = convert(args[i], t);
  }
  return ir_call(ctx, (ir_intrin)id, t, n, conv);
}
