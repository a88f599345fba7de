/* print_expr.c — expressions as text (the golden-test format, see docs/ir-text.md).
 *
 * Infix with the fewest parentheses that keep the tree: || < && < comparisons < + - < * / // %.
 * A right operand of equal precedence is parenthesized (a - (b - c)), so the text reads back
 * to the same tree. Immediates carry their dtype unless it is the default (i64 ints, f64 floats
 * print bare; f32 gets an f suffix; other ints print as i32(5)).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "printer.h"

enum { P_OR = 1, P_AND, P_CMP, P_ADD, P_MUL, P_UNARY, P_ATOM };

static int prec(const te_expr *e) {
  switch (e->kind) {
    case IR_OR: return P_OR;
    case IR_AND: return P_AND;
    case IR_EQ: case IR_NE: case IR_LT: case IR_LE: case IR_GT: case IR_GE: return P_CMP;
    case IR_ADD: case IR_SUB: return P_ADD;
    case IR_MUL: case IR_DIV: case IR_FLOORDIV: case IR_FLOORMOD: return P_MUL;
    case IR_NOT: return P_UNARY;
    case IR_INT: return e->u.i < 0 && e->dtype.bits == 64 ? P_UNARY : P_ATOM;
    case IR_FLOAT: return signbit(e->u.f) ? P_UNARY : P_ATOM;
    default: return P_ATOM;
  }
}

const char *ir_printer_tensor_name(const te_tensor *t) { return t && t->name ? t->name : "?"; }

/* The shortest decimal that reads back to the same value of its width. */
static void print_float(ir_str *out, te_dtype t, double v) {
  bool f32 = t.bits == 32;
  char buf[40];
  if (!isfinite(v)) {
    snprintf(buf, sizeof buf, "%s%s", isnan(v) ? "nan" : v < 0 ? "-inf" : "inf", "");
    if (f32)
      ir_str_printf(out, "f32(%s)", buf);
    else
      ir_str_puts(out, buf);
    return;
  }
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*g", p, v);
    double back = strtod(buf, NULL);
    if (f32 ? (float)back == (float)v : back == v) break;
  }
  if (!strpbrk(buf, ".e")) strcat(buf, ".0");
  ir_str_printf(out, "%s%s", buf, f32 ? "f" : "");
}

static void print_int(ir_str *out, te_dtype t, int64_t v) {
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

static void print_sub(ir_printer *p, te_expr *e, bool parens) {
  if (parens) ir_str_puts(p->out, "(");
  ir_printer_expr(p, e);
  if (parens) ir_str_puts(p->out, ")");
}

static void print_infix(ir_printer *p, te_expr *e) {
  static const char *const spaced[] = {[IR_ADD] = " + ", [IR_SUB] = " - ", [IR_EQ] = " == ",
                                       [IR_NE] = " != ", [IR_LT] = " < ", [IR_LE] = " <= ",
                                       [IR_GT] = " > ", [IR_GE] = " >= ", [IR_AND] = " && ",
                                       [IR_OR] = " || ", [IR_MUL] = "*", [IR_DIV] = "/",
                                       [IR_FLOORDIV] = "//", [IR_FLOORMOD] = "%"};
  int pe = prec(e);
  int pl = prec(e->args[0]), pr = prec(e->args[1]);
  print_sub(p, e->args[0], pl < pe || (pe == P_CMP && pl == P_CMP));
  ir_str_puts(p->out, spaced[e->kind]);
  print_sub(p, e->args[1], pr <= pe);
}

/* name(arg0, arg1, ...) */
static void print_fn(ir_printer *p, const char *name, int n, te_expr *const args[]) {
  ir_str_printf(p->out, "%s(", name);
  for (int i = 0; i < n; i++) {
    if (i) ir_str_puts(p->out, ", ");
    ir_printer_expr(p, args[i]);
  }
  ir_str_puts(p->out, ")");
}

static void print_indexed(ir_printer *p, const char *name, int n, te_expr *const idx[]) {
  ir_str_printf(p->out, "%s[", name);
  for (int i = 0; i < n; i++) {
    if (i) ir_str_puts(p->out, ", ");
    ir_printer_expr(p, idx[i]);
  }
  ir_str_puts(p->out, "]");
}

static void print_reduce(ir_printer *p, te_expr *e) {
  static const char *const names[] = {"sum", "prod", "min", "max", "reduce"};
  const ir_reduce *r = e->u.reduce;
  ir_str_printf(p->out, "%s(", names[r->kind <= IR_REDUCER_CUSTOM ? r->kind : IR_REDUCER_CUSTOM]);
  for (int i = 0; i < e->nargs; i++) {
    ir_printer_expr(p, e->args[i]);
    ir_str_puts(p->out, ", ");
  }
  ir_str_puts(p->out, "axes=[");
  for (int i = 0; i < r->naxes; i++) {
    if (i) ir_str_puts(p->out, ", ");
    ir_printer_expr(p, r->axes[i]);
  }
  ir_str_puts(p->out, "]");
  if (r->cond) {
    ir_str_puts(p->out, ", where=");
    ir_printer_expr(p, r->cond);
  }
  if (e->nargs > 1) ir_str_printf(p->out, ", value=%d", r->value_index);
  ir_str_puts(p->out, ")");
}

void ir_printer_expr(ir_printer *p, te_expr *e) {
  ir_str *out = p->out;
  char name[24];
  if (!e) {
    ir_str_puts(out, "<null>");
    return;
  }
  switch ((ir_expr_kind)e->kind) {
    case IR_INT: print_int(out, e->dtype, e->u.i); return;
    case IR_FLOAT: print_float(out, e->dtype, e->u.f); return;
    case IR_VAR: ir_str_puts(out, ir_printer_var_name(p, e)); return;
    case IR_NOT:
      ir_str_puts(out, "!");
      print_sub(p, e->args[0], prec(e->args[0]) < P_UNARY);
      return;
    case IR_MIN: case IR_MAX: case IR_SELECT: case IR_TRUNCDIV: case IR_TRUNCMOD:
      print_fn(p, ir_expr_kind_name[e->kind], e->nargs, e->args);
      return;
    case IR_CAST: print_fn(p, te_dtype_str(e->dtype, name, sizeof name), 1, e->args); return;
    case IR_CALL: print_fn(p, ir_intrin_table[e->u.call].name, e->nargs, e->args); return;
    case IR_ACCESS: print_indexed(p, ir_printer_tensor_name(e->u.tensor), e->nargs, e->args); return;
    case IR_LOAD: print_indexed(p, e->u.buffer->name, 1, e->args); return;
    case IR_RAMP:
      ir_str_puts(out, "ramp(");
      ir_printer_expr(p, e->args[0]);
      ir_str_puts(out, ", ");
      ir_printer_expr(p, e->args[1]);
      ir_str_printf(out, ", %d)", e->dtype.lanes);
      return;
    case IR_BROADCAST:
      snprintf(name, sizeof name, "x%d", e->dtype.lanes);
      print_fn(p, name, 1, e->args);
      return;
    case IR_LET:
      ir_str_printf(out, "(let %s = ", ir_printer_var_name(p, e->args[0]));
      ir_printer_expr(p, e->args[1]);
      ir_str_puts(out, " in ");
      ir_printer_expr(p, e->args[2]);
      ir_str_puts(out, ")");
      return;
    case IR_REDUCE: print_reduce(p, e); return;
    default: print_infix(p, e); return;
  }
}
