/* print_expr.c — expressions as text (the golden-test format, see docs/ir-text.md).
 *
 * Infix with the fewest parentheses that keep the tree, literals with their dtype unless it is
 * the default: the rules and the literal forms are print_core.c's, shared with the workload
 * text's printer.
 */
#include <stdio.h>

#include "print_core.h"
#include "printer.h"

const char *ir_printer_tensor_name(const te_tensor *t) { return t && t->name ? t->name : "?"; }

static void print_sub(ir_printer *p, te_expr *e, bool parens) {
  if (parens)
    ir_str_puts(p->out, "(");
  ir_printer_expr(p, e);
  if (parens)
    ir_str_puts(p->out, ")");
}

static void print_infix(ir_printer *p, te_expr *e) {
  print_sub(p, e->args[0], ir_print_parens_left(e));
  ir_str_puts(p->out, ir_print_infix_op(e->kind));
  print_sub(p, e->args[1], ir_print_parens_right(e));
}

/* name(arg0, arg1, ...) */
static void print_fn(ir_printer *p, const char *name, int n, te_expr *const args[]) {
  ir_str_printf(p->out, "%s(", name);
  for (int i = 0; i < n; i++) {
    if (i)
      ir_str_puts(p->out, ", ");
    ir_printer_expr(p, args[i]);
  }
  ir_str_puts(p->out, ")");
}

static void print_indexed(ir_printer *p, const char *name, int n, te_expr *const idx[]) {
  ir_str_printf(p->out, "%s[", name);
  for (int i = 0; i < n; i++) {
    if (i)
      ir_str_puts(p->out, ", ");
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
    if (i)
      ir_str_puts(p->out, ", ");
    ir_printer_expr(p, r->axes[i]);
  }
  ir_str_puts(p->out, "]");
  if (r->cond) {
    ir_str_puts(p->out, ", where=");
    ir_printer_expr(p, r->cond);
  }
  if (e->nargs > 1)
    ir_str_printf(p->out, ", value=%d", r->value_index);
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
  case IR_INT:
    ir_print_int(out, e->dtype, e->u.i);
    return;
  case IR_FLOAT:
    ir_print_float(out, e->dtype, e->u.f);
    return;
  case IR_VAR:
    ir_str_puts(out, ir_printer_var_name(p, e));
    return;
  case IR_NOT:
    ir_str_puts(out, "!");
    print_sub(p, e->args[0], ir_print_prec(e->args[0]) < IR_PREC_UNARY);
    return;
  case IR_MIN:
  case IR_MAX:
  case IR_SELECT:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
    print_fn(p, ir_expr_kind_name[e->kind], e->nargs, e->args);
    return;
  case IR_CAST:
    print_fn(p, te_dtype_str(e->dtype, name, sizeof name), 1, e->args);
    return;
  case IR_CALL:
    print_fn(p, ir_intrin_table[e->u.call].name, e->nargs, e->args);
    return;
  case IR_ACCESS:
    print_indexed(p, ir_printer_tensor_name(e->u.tensor), e->nargs, e->args);
    return;
  case IR_LOAD:
    print_indexed(p, e->u.buffer->name, 1, e->args);
    return;
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
  case IR_REDUCE:
    print_reduce(p, e);
    return;
  default:
    print_infix(p, e);
    return;
  }
}
