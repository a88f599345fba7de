/* print_text.c — te_workload_text's second half: the names (names.c gives them) and the text
 * itself, from what print.c collected (see print.c for the order of everything).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"
#include "schedule/sch.h"

/* ---------------------------------------------------------------- names */

static bool add_orig(ps_wp *w, const char *s) {
  if (!ps_strset_add(&w->n.orig, s))
    return w->oom = true, false;
  return true;
}

static bool name_locals(ps_wp *w, int n, te_expr *const vars[]) {
  ps_strset local = {0}, orig = {0};
  bool ok = true;
  for (int i = 0; ok && i < n; i++)
    ok = ps_strset_add(&orig, vars[i]->u.var.name);
  w->n.local_orig = &orig;
  for (int i = 0; ok && i < n; i++)
    ok = ps_names_give(&w->n, vars[i], vars[i]->u.var.name, 0, &local);
  w->n.local_orig = NULL;
  ps_strset_free(&local);
  ps_strset_free(&orig);
  return ok || (w->oom = true, false);
}

bool ps_wp_give_names(ps_wp *w) {
  ps_names *n = &w->n;
  char d[300];
  for (int i = 0; i < w->nph; i++)
    add_orig(w, w->phs[i]->name);
  for (int s = 0; s < w->nstmt; s++) {
    add_orig(w, w->stmts[s]->name);
    for (int k = 0; w->stmts[s]->nout > 1 && k < w->stmts[s]->nout; k++)
      snprintf(d, sizeof d, "%s_v%d", w->stmts[s]->name, k), add_orig(w, d);
  }
  for (int i = 0; i < w->nvar; i++)
    add_orig(w, w->vars[i]->u.var.name);
  for (int i = 0; i < w->naxis; i++)
    add_orig(w, w->axes[i]->u.var.name);
  if (w->nred)
    add_orig(w, "reducer");
  for (int i = 0; i < w->nph; i++)
    if (!ps_names_give(n, w->phs[i], w->phs[i]->name, 0, NULL))
      return false;
  for (int s = 0; s < w->nstmt; s++) {
    const sch_op *op = w->stmts[s];
    const char *name = ps_names_give(n, op, op->name, op->nout > 1 ? op->nout : 0, NULL);
    if (!name)
      return false;
    for (int k = 0; k < op->nout; k++) {
      snprintf(d, sizeof d, "%s_v%d", name, k);
      const char *tn = op->nout > 1 ? ps_names_keep(n, d) : name;
      if (!tn || !ps_names_set(n, op->outputs[k], tn))
        return false;
    }
    if (op->is_scan && !ps_names_set(n, op->scan_state, name))
      return false;
  }
  for (int i = 0; i < w->nvar + w->naxis; i++) {
    te_expr *v = i < w->nvar ? w->vars[i] : w->axes[i - w->nvar];
    const char *name = ps_names_give(n, v, v->u.var.name, 0, NULL);
    if (!name || !ps_names_var_taken(n, name))
      return false;
  }
  for (int s = 0; s < w->nstmt; s++) {
    te_expr *const *raxes;
    int nr = sch_op_source_reduce_axes(w->stmts[s], &raxes);
    for (int r = 0; r < nr; r++) {
      te_expr *v = raxes[r];
      te_expr *decl = w->axes[(intptr_t)ps_ptrmap_get(&w->axis_of, v) - 1];
      if (!ps_names_set(n, v, ps_names_var(n, decl)) || !ps_wp_mark(w, &n->axes, v, 1))
        return false;
    }
  }
  for (int i = 0; i < w->nred; i++)
    if (!ps_names_give(n, w->reds[i], "reducer", 0, NULL))
      return false;
  for (int s = 0; s < w->nstmt; s++)
    if (!name_locals(w, w->stmts[s]->ndim, w->stmts[s]->axes))
      return false;
  for (int i = 0; i < w->nred; i++) {
    const ir_custom_reducer *r = w->reds[i];
    te_expr *v[32];
    for (int k = 0; k < r->nvalues; k++)
      v[k] = r->lhs[k], v[r->nvalues + k] = r->rhs[k];
    if (!name_locals(w, 2 * r->nvalues, v))
      return false;
  }
  return !w->oom && !n->oom;
}

/* ---------------------------------------------------------------- layout */

static bool print_list(ps_wp *w, ir_str *s, int n, te_expr *const e[], bool index) {
  for (int i = 0; i < n; i++) {
    if (i)
      ir_str_puts(s, ", ");
    if (!(index ? ps_print_index : ps_print_expr)(s, &w->n, e[i], &w->bad))
      return false;
  }
  return true;
}

static bool print_stmt(ps_wp *w, ir_str *s, const sch_op *op) {
  w->bad_in = op->name;
  ir_str_printf(s, "%s[", (const char *)ps_ptrmap_get(&w->n.names, op));
  for (int d = 0; d < op->ndim; d++)
    ir_str_printf(s, "%s%s", d ? ", " : "", ps_names_var(&w->n, op->axes[d]));
  ir_str_puts(s, "] = ");
  if (op->ext) { /* extern(SYMBOL, inputs...) */
    ir_str_printf(s, "extern(%s", op->ext->symbol);
    for (int k = 0; k < op->ext->ninputs; k++)
      ir_str_printf(s, ", %s", ps_names_tensor(&w->n, op->ext->inputs[k]));
    ir_str_puts(s, ")");
    return true;
  }
  if (op->is_scan) { /* scan(t, init, update[, initial steps]) */
    te_expr *src = op->scan_source;
    ir_str_printf(s, "scan(%s, ", ps_names_var(&w->n, op->axes[op->scan_axis]));
    if (!ps_print_expr(s, &w->n, src->args[1], &w->bad))
      return false;
    ir_str_puts(s, ", ");
    if (!ps_print_expr(s, &w->n, src->args[2], &w->bad))
      return false;
    if (op->scan_ninit > 1)
      ir_str_printf(s, ", %d", op->scan_ninit);
    ir_str_puts(s, ")");
    return true;
  }
  /* the bodies as written: reductions te lifted out of an expression are printed in place */
  te_expr *const *body = op->source_body ? op->source_body : op->body;
  if (op->nbody == 1)
    return ps_print_expr(s, &w->n, body[0], &w->bad);
  if (body[0]->kind == IR_REDUCE)
    return ps_print_reduce(s, &w->n, body[0], &w->bad);
  ir_str_puts(s, "(");
  if (!print_list(w, s, op->nbody, body, false))
    return false;
  ir_str_puts(s, ")");
  return true;
}

static bool print_axis(ps_wp *w, ir_str *s, te_expr *a) {
  te_expr *lo = a->u.var.dom_min, *ext = a->u.var.dom_extent;
  ir_str_printf(s, "%s: [", ps_names_var(&w->n, a));
  if (ir_is_const_int(lo, NULL) && lo->u.i == 0 && ir_dtype_eq(lo->dtype, TE_I64)) {
    ir_str_puts(s, "0, ");
    if (!ps_print_index(s, &w->n, ext, &w->bad))
      return false;
  } else if (!ps_print_index(s, &w->n, lo, &w->bad) || (ir_str_puts(s, ", "), false) ||
             !ps_print_range_end(s, &w->n, lo, ext, &w->bad)) {
    return false;
  }
  ir_str_puts(s, ")");
  return true;
}

static bool print_reducer(ps_wp *w, ir_str *s, const ir_custom_reducer *r) {
  char dt[32];
  ir_str_printf(s, "%s: reducer", ps_names_reducer(&w->n, r));
  for (int side = 0; side < 2; side++) {
    ir_str_puts(s, " (");
    for (int k = 0; k < r->nvalues; k++) {
      te_expr *v = side ? r->rhs[k] : r->lhs[k];
      ir_str_printf(s, "%s%s: %s", k ? ", " : "", ps_names_var(&w->n, v),
                    te_dtype_str(v->dtype, dt, sizeof dt));
    }
    ir_str_puts(s, ")");
  }
  ir_str_puts(s, " = (");
  if (!print_list(w, s, r->nvalues, r->results, false))
    return false;
  ir_str_puts(s, ") identity (");
  if (!print_list(w, s, r->nvalues, r->identity, false))
    return false;
  ir_str_puts(s, ")");
  return true;
}

static bool print_decls(ps_wp *w, ir_str *s) {
  char dt[32];
  const char *sep = "where ";
  for (int i = 0; i < w->nph; i++, sep = ", ") {
    te_tensor *t = w->phs[i];
    ir_str_printf(s, "%s%s: %s[", sep, ps_names_tensor(&w->n, t),
                  te_dtype_str(t->dtype, dt, sizeof dt));
    if (!print_list(w, s, t->ndim, t->shape, false))
      return false;
    ir_str_puts(s, "]");
  }
  for (uint32_t last = 0, k = 0; w->sizes_by_id && k < (uint32_t)w->nshape_vars; k++) {
    te_expr *next = NULL; /* the shapes' sizes in creation order (collect_vars) */
    for (int i = 0; i < w->nshape_vars; i++) {
      uint32_t id = w->vars[i]->u.var.id;
      if ((k == 0 || id > last) && (!next || id < next->u.var.id))
        next = w->vars[i];
    }
    if (!next)
      break;
    last = next->u.var.id;
    ir_str_printf(s, "%s%s: size", sep, ps_names_var(&w->n, next)), sep = ", ";
  }
  for (int i = w->sizes_by_id ? w->nshape_vars : 0; i < w->nvar; i++) {
    te_expr *v = w->vars[i];
    if (v->u.var.kind == IR_VAR_PARAM)
      ir_str_printf(s, "%s%s: %s", sep, ps_names_var(&w->n, v),
                    te_dtype_str(v->dtype, dt, sizeof dt)),
          sep = ", ";
    else if (w->size_decl[i])
      ir_str_printf(s, "%s%s: size", sep, ps_names_var(&w->n, v)), sep = ", ";
  }
  for (int i = 0; i < w->nstmt; i++, sep = ", ") {
    const sch_op *op = w->stmts[i];
    ir_str_printf(s, "%s%s: ", sep, (const char *)ps_ptrmap_get(&w->n.names, op));
    if (op->ext) /* an extern's dtype is declared, not inferred */
      ir_str_printf(s, "%s", te_dtype_str(op->outputs[0]->dtype, dt, sizeof dt));
    ir_str_puts(s, "[");
    if (!print_list(w, s, op->ndim, op->shape, false))
      return false;
    ir_str_puts(s, "]");
  }
  for (int i = 0; i < w->naxis; i++, sep = ", ") {
    ir_str_puts(s, sep);
    if (!print_axis(w, s, w->axes[i]))
      return false;
  }
  for (int i = 0; i < w->nred; i++, sep = ", ") {
    ir_str_puts(s, sep);
    if (!print_reducer(w, s, w->reds[i]))
      return false;
  }
  ir_str_puts(s, "\n");
  return true;
}

/* True when outs are exactly the outputs of the statements nothing reads, in order. */
static bool default_outputs(ps_wp *w, int nout, te_tensor *const outs[]) {
  int k = 0;
  for (int i = 0; i < w->nstmt; i++) {
    const sch_op *op = w->stmts[i];
    if (ps_ptrmap_get(&w->read, op))
      continue;
    for (int j = 0; j < op->nout; j++, k++)
      if (k >= nout || outs[k] != op->outputs[j])
        return false;
  }
  return k == nout;
}

bool ps_wp_layout(ps_wp *w, ir_str *s, int nout, te_tensor *const outs[]) {
  for (int i = 0; i < w->nstmt; i++) {
    if (!print_stmt(w, s, w->stmts[i]))
      return false;
    ir_str_puts(s, i + 1 < w->nstmt ? ";\n" : "\n");
  }
  w->bad_in = NULL;
  if (!print_decls(w, s))
    return false;
  if (!default_outputs(w, nout, outs)) {
    ir_str_puts(s, "outputs ");
    for (int i = 0; i < nout; i++)
      ir_str_printf(s, "%s%s", i ? ", " : "", ps_names_tensor(&w->n, outs[i]));
    ir_str_puts(s, "\n");
  }
  return !s->oom || (w->oom = true, false);
}
