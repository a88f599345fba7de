/* workload_text.c — the canonical text of a workload, its key, and its flop count.
 *
 * The text is what the tuning log stores as the workload and hashes into its key: the workload
 * parser's canonical printer (te_workload_text, docs/workload-text.md), which te_parse reads back,
 * so a log line rebuilds its computation without any registry. It is made from the computation
 * itself (not from how it was built), so a hand-written matmul and te_op_matmul's have the same
 * key when they are the same computation with the same names.
 *
 * Where te_workload_text cannot express a computation, a fallback form made here is used,
 * marked by its first line "# te-tune form" (not parseable, still a stable key):
 *
 *   # te-tune form
 *   placeholder A f32 [512, 512]
 *   placeholder B f32 [512, 512]
 *   compute matmul f32 [512, 512] (i, j) = sum(A[i, k]*B[k, j], axes=[k]) with k in range(0, extent
 * 512) outputs matmul
 *
 * The fallback's expressions are printed by te's IR printer (docs/ir-text.md) with one variable
 * namespace for the whole text, so it is deterministic.
 */
#include <string.h>

#include "at.h"
#include "ir/printer.h"
#include "te/parse.h"

static void print_shape(ir_printer *p, ir_str *s, const sch_op *op) {
  ir_str_puts(s, " [");
  for (int i = 0; i < op->ndim; i++) {
    if (i)
      ir_str_puts(s, ", ");
    ir_printer_expr(p, op->shape[i]);
  }
  ir_str_puts(s, "]");
}

static void print_custom(ir_printer *p, ir_str *s, const ir_custom_reducer *r) {
  ir_str_puts(s, " combine (");
  for (int i = 0; i < r->nvalues; i++) {
    ir_str_puts(s, i ? ", " : "");
    ir_printer_expr(p, r->lhs[i]);
    ir_str_puts(s, ", ");
    ir_printer_expr(p, r->rhs[i]);
  }
  ir_str_puts(s, ") -> (");
  for (int i = 0; i < r->nvalues; i++) {
    ir_str_puts(s, i ? ", " : "");
    ir_printer_expr(p, r->results[i]);
  }
  ir_str_puts(s, ") from (");
  for (int i = 0; i < r->nvalues; i++) {
    ir_str_puts(s, i ? ", " : "");
    ir_printer_expr(p, r->identity[i]);
  }
  ir_str_puts(s, ")");
}

static void print_compute(ir_printer *p, ir_str *s, const sch_op *op) {
  char dt[32];
  ir_str_printf(s, "compute %s %s", op->name, te_dtype_str(op->outputs[0]->dtype, dt, sizeof dt));
  print_shape(p, s, op);
  ir_str_puts(s, " (");
  for (int i = 0; i < op->ndim; i++) {
    ir_str_puts(s, i ? ", " : "");
    ir_printer_expr(p, op->axes[i]);
  }
  ir_str_puts(s, ") =");
  for (int k = 0; k < op->nbody; k++) {
    ir_str_puts(s, k ? " ; " : " ");
    ir_printer_expr(p, op->body[k]);
  }
  for (int i = 0; i < op->nreduce; i++) {
    te_expr *rv = op->reduce_axes[i];
    ir_str_puts(s, i ? ", " : " with ");
    ir_printer_expr(p, rv);
    ir_str_puts(s, " in range(");
    ir_printer_expr(p, rv->u.var.dom_min);
    ir_str_puts(s, ", extent ");
    ir_printer_expr(p, rv->u.var.dom_extent);
    ir_str_puts(s, ")");
  }
  te_expr *b = op->nbody ? op->body[0] : NULL;
  if (b && b->kind == IR_REDUCE && b->u.reduce->custom)
    print_custom(p, s, b->u.reduce->custom);
  ir_str_puts(s, "\n");
}

static char *fallback_text(const at_workload *wl) {
  ir_str s = {.ctx = wl->ctx};
  ir_str_puts(&s, "# te-tune form\n");
  ir_printer p;
  ir_printer_init(&p, &s);
  char dt[32];
  for (int i = 0; i < wl->nops; i++) {
    const sch_op *op = wl->ops[i];
    if (op->kind == SCH_OP_PLACEHOLDER) {
      ir_str_printf(&s, "placeholder %s %s", op->name,
                    te_dtype_str(op->outputs[0]->dtype, dt, sizeof dt));
      print_shape(&p, &s, op);
      ir_str_puts(&s, "\n");
    } else {
      print_compute(&p, &s, op);
    }
  }
  ir_str_puts(&s, "outputs");
  for (int i = 0; i < wl->nout; i++)
    ir_str_printf(&s, " %s", wl->outs[i]->name);
  ir_str_puts(&s, "\n");
  ir_printer_done(&p);
  if (s.oom) {
    ir_str_free(&s);
    return NULL;
  }
  return ir_str_take(&s);
}

char *at_workload_text(const at_workload *wl) {
  bool clean = te_last_status(wl->ctx) == TE_OK;
  char *t = te_workload_text(wl->nout, wl->outs);
  if (t)
    return t;
  if (clean) /* not the user's error: te_workload_text's, handled here */
    te_clear_error(wl->ctx);
  return fallback_text(wl);
}

void at_workload_key(const char *text, char out[17]) { at_hex64(ir_str_hash(text), out); }

/* ---------------------------------------------------------------- flops */

static int count_float(ir_visitor *v, te_expr *e) {
  if (ir_is_float(e->dtype))
    ++*(int64_t *)v->data;
  return IR_CONTINUE;
}

static int64_t float_ops(te_expr *e) {
  int64_t n = 0;
  ir_visitor v = {0};
  static const ir_expr_kind arith[] = {IR_ADD, IR_SUB, IR_MUL, IR_DIV, IR_MIN, IR_MAX, IR_CALL};
  for (size_t i = 0; i < sizeof arith / sizeof arith[0]; i++)
    v.expr[arith[i]] = count_float;
  v.data = &n;
  ir_visit_expr(&v, e);
  return n;
}

static double op_points(const sch_op *op, bool with_reduce) {
  double pts = 1;
  int64_t x;
  for (int i = 0; i < op->ndim; i++)
    pts *= ir_is_const_int(op->shape[i], &x) ? (double)x : 1.0;
  for (int i = 0; with_reduce && i < op->nreduce; i++)
    pts *= ir_is_const_int(op->reduce_axes[i]->u.var.dom_extent, &x) ? (double)x : 1.0;
  return pts;
}

/* Integer arithmetic of an expression where it computes values: not tensor indices (an access's
   arguments), not conditions (comparisons, a select's condition), which are addressing and
   control, so a float convolution's padding conditions count nothing. */
static int64_t int_ops(const te_expr *e) {
  switch (e->kind) {
  case IR_ACCESS:
  case IR_LOAD:
  case IR_EQ:
  case IR_NE:
  case IR_LT:
  case IR_LE:
  case IR_GT:
  case IR_GE:
  case IR_AND:
  case IR_OR:
  case IR_NOT:
    return 0;
  case IR_SELECT:
    return int_ops(e->args[1]) + int_ops(e->args[2]);
  default:
    break;
  }
  int64_t n = 0;
  switch (e->kind) {
  case IR_ADD:
  case IR_SUB:
  case IR_MUL:
  case IR_FLOORDIV:
  case IR_FLOORMOD:
  case IR_TRUNCDIV:
  case IR_TRUNCMOD:
  case IR_MIN:
  case IR_MAX:
  case IR_CALL:
    n = ir_is_intlike(e->dtype);
    break;
  default:
    break;
  }
  for (int a = 0; a < e->nargs; a++)
    n += int_ops(e->args[a]);
  return n;
}

/* One evaluation's operations of the kind count_of counts, reductions counted once per point of
   their domain (with their combination when is_op says its dtype is of the kind). */
static double workload_ops(const at_workload *wl, int64_t (*count_of)(const te_expr *),
                           bool (*is_kind)(te_dtype)) {
  double total = 0;
  for (int i = 0; i < wl->nops; i++) {
    const sch_op *op = wl->ops[i];
    if (op->kind != SCH_OP_COMPUTE)
      continue;
    for (int k = 0; k < op->nbody; k++) {
      te_expr *b = op->body[k];
      if (b->kind == IR_REDUCE) {
        if (b->u.reduce->value_index != k)
          continue;                            /* a tuple reduction: counted once */
        int64_t n = is_kind(b->dtype) ? 1 : 0; /* the combination */
        for (int a = 0; a < b->nargs; a++)
          n += count_of(b->args[a]);
        total += (double)n * op_points(op, true);
      } else {
        total += (double)count_of(b) * op_points(op, false);
      }
    }
  }
  return total;
}

static int64_t float_ops_of(const te_expr *e) { return float_ops((te_expr *)e); }
static bool is_float(te_dtype t) { return ir_is_float(t); }
static bool is_intlike(te_dtype t) { return ir_is_intlike(t); }

double at_workload_flops(const at_workload *wl) { return workload_ops(wl, float_ops_of, is_float); }

double at_workload_int_ops(const at_workload *wl) { return workload_ops(wl, int_ops, is_intlike); }
