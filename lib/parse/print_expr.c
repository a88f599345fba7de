/* print_expr.c — expressions in the workload syntax (the inverse of build_expr.c).
 *
 * The text is the IR printer's (docs/ir-text.md) wherever the two languages share a construct:
 * precedence, operator spelling, parentheses and literals come from the same core
 * (lib/ir/print_core.c): the fewest parentheses that keep the tree, spaces around + - and the
 * comparisons but not around * / // %, literals with their dtype unless it is the default
 * (5, i32(5), 1.5, 1.5f, f32(inf), true). Differences: names come from print.c (unique in the
 * text), reductions read sum(body, k, l where cond) and R((v0, v1), k) for a declared reducer,
 * the outer i64 cast of a tensor index is left out (te_at puts it back), and an element-wise
 * min/max whose second operand is a reduce axis writes it as (k) (a bare axis name there means
 * a reduction). Every literal reads back to the same node (shortest text for its width).
 */
#include <stdio.h>

#include "ir/print_core.h"
#include "parse.h"

typedef struct pctx {
  ir_str *out;
  const ps_names *names;
  te_expr **bad;
} pctx;

static bool expr(pctx *c, te_expr *e);

static bool sub(pctx *c, te_expr *e, bool parens) {
  if (parens)
    ir_str_puts(c->out, "(");
  bool ok = expr(c, e);
  if (parens)
    ir_str_puts(c->out, ")");
  return ok;
}

static bool unsupported(pctx *c, te_expr *e) {
  if (!*c->bad)
    *c->bad = e;
  return false;
}

/* An index or range bound: te_at and te_reduce_axis cast integers to i64 themselves. */
static bool index_expr(pctx *c, te_expr *e) {
  if (e->kind == IR_CAST && ir_dtype_eq(e->dtype, TE_I64) && ir_is_intlike(e->args[0]->dtype) &&
      !ir_is_bool(e->args[0]->dtype))
    e = e->args[0];
  return expr(c, e);
}

static bool infix(pctx *c, te_expr *e) {
  if (!sub(c, e->args[0], ir_print_parens_left(e)))
    return false;
  ir_str_puts(c->out, ir_print_infix_op(e->kind));
  return sub(c, e->args[1], ir_print_parens_right(e));
}

static bool call(pctx *c, const char *name, int n, te_expr *const args[]) {
  ir_str_printf(c->out, "%s(", name);
  for (int i = 0; i < n; i++) {
    if (i)
      ir_str_puts(c->out, ", ");
    if (!expr(c, args[i]))
      return false;
  }
  ir_str_puts(c->out, ")");
  return true;
}

static bool minmax(pctx *c, te_expr *e) {
  te_expr *b = e->args[1];
  bool axis = b->kind == IR_VAR && ps_names_is_axis(c->names, b);
  ir_str_printf(c->out, "%s(", e->kind == IR_MIN ? "min" : "max");
  if (!expr(c, e->args[0]))
    return false;
  ir_str_puts(c->out, ", ");
  if (!sub(c, b, axis))
    return false;
  ir_str_puts(c->out, ")");
  return true;
}

static bool access(pctx *c, te_expr *e) {
  const char *name = ps_names_tensor(c->names, e->u.tensor);
  if (!name)
    return unsupported(c, e);
  ir_str_printf(c->out, "%s[", name);
  for (int i = 0; i < e->nargs; i++) {
    if (i)
      ir_str_puts(c->out, ", ");
    if (!index_expr(c, e->args[i]))
      return false;
  }
  ir_str_puts(c->out, "]");
  return true;
}

static bool reduce(pctx *c, te_expr *e) {
  static const char *const builtin[] = {"sum", "prod", "min", "max"};
  const ir_reduce *r = e->u.reduce;
  const char *name =
      r->kind == IR_REDUCER_CUSTOM ? ps_names_reducer(c->names, r->custom) : builtin[r->kind];
  if (!name)
    return unsupported(c, e);
  ir_str_printf(c->out, "%s(", name);
  if (e->nargs > 1)
    ir_str_puts(c->out, "(");
  for (int i = 0; i < e->nargs; i++) {
    if (i)
      ir_str_puts(c->out, ", ");
    if (!expr(c, e->args[i]))
      return false;
  }
  if (e->nargs > 1)
    ir_str_puts(c->out, ")");
  for (int i = 0; i < r->naxes; i++) {
    const char *a = ps_names_var(c->names, r->axes[i]);
    if (!a)
      return unsupported(c, r->axes[i]);
    ir_str_printf(c->out, ", %s", a);
  }
  if (r->cond) {
    ir_str_puts(c->out, " where ");
    if (!expr(c, r->cond))
      return false;
  }
  ir_str_puts(c->out, ")");
  return true;
}

static bool expr(pctx *c, te_expr *e) {
  char name[24];
  switch ((ir_expr_kind)e->kind) {
  case IR_INT:
    ir_print_int(c->out, e->dtype, e->u.i);
    return true;
  case IR_FLOAT:
    ir_print_float(c->out, e->dtype, e->u.f);
    return true;
  case IR_VAR: {
    const char *n = ps_names_var(c->names, e);
    if (!n)
      return unsupported(c, e);
    ir_str_puts(c->out, n);
    return true;
  }
  case IR_NOT:
    ir_str_puts(c->out, "!");
    return sub(c, e->args[0], ir_print_prec(e->args[0]) < IR_PREC_UNARY);
  case IR_MIN:
  case IR_MAX:
    return minmax(c, e);
  case IR_SELECT:
    return call(c, "select", 3, e->args);
  case IR_CAST:
    return call(c, te_dtype_str(e->dtype, name, sizeof name), 1, e->args);
  case IR_CALL:
    if (ir_intrin_table[e->u.call].flags & IR_INTRIN_INTERNAL)
      return unsupported(c, e);
    return call(c, ir_intrin_table[e->u.call].name, e->nargs, e->args);
  case IR_ACCESS:
    return access(c, e);
  case IR_REDUCE:
    return reduce(c, e);
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_DIV:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_AND:
  case IR_OR:
    return infix(c, e);
  default:
    return unsupported(c, e); /* let, loads, ramps, truncating division, ... */
  }
}

bool ps_print_expr(ir_str *out, const ps_names *names, te_expr *e, te_expr **bad) {
  pctx c = {out, names, bad};
  return expr(&c, e);
}

bool ps_print_index(ir_str *out, const ps_names *names, te_expr *e, te_expr **bad) {
  pctx c = {out, names, bad};
  return index_expr(&c, e);
}

bool ps_print_reduce(ir_str *out, const ps_names *names, te_expr *e, te_expr **bad) {
  pctx c = {out, names, bad};
  return reduce(&c, e);
}

/* lo + ext in a range, ext parenthesized as a right operand of + would be. */
bool ps_print_range_end(ir_str *out, const ps_names *names, te_expr *lo, te_expr *ext,
                        te_expr **bad) {
  pctx c = {out, names, bad};
  if (!index_expr(&c, lo))
    return false;
  ir_str_puts(out, " + ");
  te_expr *x = ext;
  if (x->kind == IR_CAST && ir_dtype_eq(x->dtype, TE_I64) && ir_is_intlike(x->args[0]->dtype) &&
      !ir_is_bool(x->args[0]->dtype))
    x = x->args[0];
  return sub(&c, x, ir_print_prec(x) <= IR_PREC_ADD);
}
