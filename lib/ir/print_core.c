/* print_core.c — precedence, infix spelling, parentheses and literals shared by the IR printer
 * (print_expr.c) and the workload-text printer (lib/parse/print_expr.c). See print_core.h.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print_core.h"

int ir_print_prec(const te_expr *e) {
  switch (e->kind) {
  case IR_OR:
    return IR_PREC_OR;
  case IR_AND:
    return IR_PREC_AND;
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
    return IR_PREC_CMP;
  case IR_ADD:
  case IR_SUB:
    return IR_PREC_ADD;
  case IR_MUL:
  case IR_DIV:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
    return IR_PREC_MUL;
  case IR_NOT:
    return IR_PREC_UNARY;
  case IR_INT: /* -5 reads as a minus and a number; i32(-5) and u64(...) are calls */
    return e->u.i < 0 && e->dtype.code == kDLInt && e->dtype.bits == 64 ? IR_PREC_UNARY
                                                                        : IR_PREC_ATOM;
  case IR_FLOAT: /* -1.5, -1.5f and -inf read as a minus and a number; f32(-inf), nan do not */
    if (isnan(e->u.f) || (isinf(e->u.f) && !(e->dtype.code == kDLFloat && e->dtype.bits == 64)))
      return IR_PREC_ATOM;
    return signbit(e->u.f) ? IR_PREC_UNARY : IR_PREC_ATOM;
  default:
    return IR_PREC_ATOM;
  }
}

const char *ir_print_infix_op(int kind) {
  switch (kind) {
  case IR_ADD:
    return " + ";
  case IR_SUB:
    return " - ";
  case IR_MUL:
    return "*";
  case IR_DIV:
    return "/";
  case IR_FLOORDIV:
    return "//";
  case IR_FLOORMOD:
    return "%";
  case IR_EQ:
    return " == ";
  case IR_NE:
    return " != ";
  case IR_LT:
    return " < ";
  case IR_LE:
    return " <= ";
  case IR_GT:
    return " > ";
  case IR_GE:
    return " >= ";
  case IR_AND:
    return " && ";
  case IR_OR:
    return " || ";
  default:
    return NULL;
  }
}

bool ir_print_parens_left(const te_expr *e) {
  int pe = ir_print_prec(e), pl = ir_print_prec(e->args[0]);
  return pl < pe || (pe == IR_PREC_CMP && pl == IR_PREC_CMP);
}

bool ir_print_parens_right(const te_expr *e) {
  return ir_print_prec(e->args[1]) <= ir_print_prec(e);
}

void ir_print_int(ir_str *out, te_dtype t, int64_t v) {
  char name[24];
  if (ir_is_bool(t) && t.lanes == 1)
    ir_str_puts(out, v ? "true" : "false");
  else if (t.code == kDLInt && t.bits == 64 && t.lanes == 1)
    ir_str_printf(out, "%lld", (long long)v);
  else if (t.code == kDLUInt && t.bits == 64)
    ir_str_printf(out, "%s(%llu)", te_dtype_str(t, name, sizeof name), (unsigned long long)v);
  else
    ir_str_printf(out, "%s(%lld)", te_dtype_str(t, name, sizeof name), (long long)v);
}

void ir_print_float(ir_str *out, te_dtype t, double v) {
  bool f64 = t.code == kDLFloat && t.bits == 64;
  char name[24];
  te_dtype_str(ir_elem(t), name, sizeof name);
  if (!isfinite(v)) {
    const char *s = isnan(v) ? "nan" : v < 0 ? "-inf" : "inf";
    if (!f64)
      ir_str_printf(out, "%s(%s)", name, s);
    else
      ir_str_puts(out, s);
    return;
  }
  char buf[48];
  for (int p = 1; p <= 17; p++) { /* the shortest that reads back to the same value */
    snprintf(buf, sizeof buf - 3, "%.*g", p, v);
    if (ir_float_round(t, strtod(buf, NULL)) == ir_float_round(t, v))
      break;
  }
  if (!strpbrk(buf, ".e"))
    strcat(buf, ".0"); /* 3.0, not 3: the text keeps it a float */
  /* f32 keeps its one-letter suffix; f16 and bf16 are spelled out (1.5f16, 1.5bf16) */
  ir_str_printf(out, "%s%s", buf, f64 ? "" : t.bits == 32 && t.code == kDLFloat ? "f" : name);
}
