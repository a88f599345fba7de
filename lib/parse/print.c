/* print.c — te_workload_text and te_workload_inputs: what a computation's canonical text holds.
 *
 * What is printed, in which order (docs/workload-text.md, "Canonical form"):
 *   1. the statements: every compute reachable from the outputs, producers first (depth-first
 *      from the outputs in order, a compute's inputs in the order its body first reads them),
 *      one a line, `;` between them;
 *   2. `where` and the declarations: placeholders in first-use order (reading the statements
 *      top to bottom), scalar parameters, symbolic sizes used only in bodies (`N: size`), every
 *      statement's shape (`C: [M, N]`), reduce axes in first-use order (one declaration for the
 *      axes of several statements that share name and domain), reducers;
 *   3. `outputs ...` only when the outputs are not exactly the statements nothing reads.
 * This file collects all of it (operations, placeholders, variables, reduce-axis declarations,
 * reducers); print_text.c names it (with names.c) and writes the text. Nothing is allocated in
 * the context but te_workload_inputs' result arrays: the text is malloc'd.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "print.h"

/* Appends x to a growable array of pointers. */
static bool push(ps_wp *w, void *arr, int *n, int *cap, void *x) {
  void ***a = arr;
  if (*n == *cap) {
    int c = *cap ? 2 * *cap : 16;
    void **v = ir_realloc(w->ctx, *a, sizeof *v * (size_t)c);
    if (!v)
      return w->oom = true, false;
    *a = v;
    *cap = c;
  }
  (*a)[(*n)++] = x;
  return true;
}

bool ps_wp_mark(ps_wp *w, ps_ptrmap *m, const void *k, intptr_t v) {
  if (!ps_ptrmap_put(m, k, (void *)v))
    return w->oom = true, false;
  return true;
}

/* ---------------------------------------------------------------- statements */

typedef struct inputs {
  ps_wp *w;
  ps_ptrmap seen;
  te_tensor **list;
  int n, cap;
} inputs;

static int on_access(ir_visitor *v, te_expr *e) {
  inputs *in = v->data;
  if (ps_ptrmap_get(&in->seen, e->u.tensor))
    return IR_CONTINUE;
  if (!ps_wp_mark(in->w, &in->seen, e->u.tensor, 1) ||
      !push(in->w, &in->list, &in->n, &in->cap, e->u.tensor))
    return IR_ABORT;
  return IR_CONTINUE;
}

/* The tensors op reads, in first-use order (malloc'd in in->list). */
static void op_inputs(ps_wp *w, const sch_op *op, inputs *in) {
  memset(in, 0, sizeof *in);
  in->w = w;
  ir_visitor v = {0};
  v.expr[IR_ACCESS] = on_access;
  v.data = in;
  for (int k = 0; op->ext && k < op->ext->ninputs; k++) { /* an extern's whole inputs */
    te_tensor *t = op->ext->inputs[k];
    if (!ps_ptrmap_get(&in->seen, t) &&
        (!ps_wp_mark(w, &in->seen, t, 1) || !push(w, &in->list, &in->n, &in->cap, t)))
      return;
  }
  for (int k = 0; k < op->nbody; k++)
    ir_visit_expr(&v, sch_op_source_body(op, k)); /* lifted reductions printed in place */
}

/* Depth-first: the producers of op, then op. */
static bool visit_op(ps_wp *w, sch_op *op) {
  if (ps_ptrmap_get(&w->seen, op))
    return true;
  if (!ps_wp_mark(w, &w->seen, op, 1))
    return false;
  if (op->kind != SCH_OP_COMPUTE)
    return true;
  /* a scan's state is the scan itself in the text: no placeholder of its own */
  if (op->is_scan && !ps_wp_mark(w, &w->seen, op->scan_state, 1))
    return false;
  inputs in;
  op_inputs(w, op, &in);
  bool ok = !w->oom;
  for (int i = 0; ok && i < in.n; i++)
    ok = ps_wp_mark(w, &w->read, in.list[i]->op, 1) && visit_op(w, in.list[i]->op);
  free(in.list);
  ps_ptrmap_free(&in.seen);
  return ok && push(w, &w->stmts, &w->nstmt, &w->capstmt, op);
}

/* Placeholders in the order the statements first read them. */
static bool collect_placeholders(ps_wp *w, int nout, te_tensor *const outs[]) {
  for (int s = 0; s <= w->nstmt; s++) {
    inputs in = {0};
    if (s < w->nstmt)
      op_inputs(w, w->stmts[s], &in);
    else
      in.list = (te_tensor **)outs, in.n = nout; /* placeholders given as outputs */
    for (int i = 0; i < in.n && !w->oom; i++) {
      te_tensor *t = in.list[i];
      if (t->op->kind == SCH_OP_PLACEHOLDER && !ps_ptrmap_get(&w->seen, t) &&
          ps_wp_mark(w, &w->seen, t, 1))
        push(w, &w->phs, &w->nph, &w->capph, t);
    }
    if (s < w->nstmt) {
      free(in.list);
      ps_ptrmap_free(&in.seen);
    }
  }
  return !w->oom;
}

/* ---------------------------------------------------------------- variables */

static bool is_reducer_var(const ir_custom_reducer *r, const te_expr *v) {
  for (int i = 0; r && i < r->nvalues; i++)
    if (r->lhs[i] == v || r->rhs[i] == v)
      return true;
  return false;
}

static int on_var(ir_visitor *v, te_expr *e) {
  ps_wp *w = v->data;
  ir_var_kind k = e->u.var.kind;
  for (int i = 0; k == IR_VAR_INDEX && w->cur && i < w->cur->ndim; i++)
    if (w->cur->axes[i] == e)
      return IR_CONTINUE; /* an index variable of the statement */
  if (k == IR_VAR_REDUCE && ps_ptrmap_get(&w->axis_of, e))
    return IR_CONTINUE;
  if (k == IR_VAR_PARAM && is_reducer_var(w->cur_red, e))
    return IR_CONTINUE;
  if (k != IR_VAR_INDEX && k != IR_VAR_PARAM) {
    w->bad = e;
    return IR_ABORT;
  }
  if (ps_ptrmap_get(&w->seen, e))
    return IR_CONTINUE;
  if (w->nvar == w->capvar) {
    bool *d =
        ir_realloc(w->ctx, w->size_decl, sizeof *d * (size_t)(w->capvar ? 2 * w->capvar : 16));
    if (!d)
      return w->oom = true, IR_ABORT;
    w->size_decl = d;
  }
  w->size_decl[w->nvar] = k == IR_VAR_INDEX && !w->in_shape;
  if (!ps_wp_mark(w, &w->seen, e, 1) || !push(w, &w->vars, &w->nvar, &w->capvar, e))
    return IR_ABORT;
  return IR_CONTINUE;
}

static int on_reduce(ir_visitor *v, te_expr *e) {
  ps_wp *w = v->data;
  const ir_custom_reducer *r = e->u.reduce->custom;
  if (r && !ps_ptrmap_get(&w->seen, r) &&
      (!ps_wp_mark(w, &w->seen, r, 1) || !push(w, &w->reds, &w->nred, &w->capred, (void *)r)))
    return IR_ABORT;
  return IR_CONTINUE;
}

static bool walk(ps_wp *w, te_expr *e) {
  ir_visitor v = {0};
  v.expr[IR_VAR] = on_var;
  v.expr[IR_REDUCE] = on_reduce;
  v.data = w;
  if (e)
    ir_visit_expr(&v, e);
  return !w->oom && !w->bad;
}

/* The declaration of reduce axis r of op: one with the same name and domain that op does not
   use yet, else a new one. */
static bool declare_axis(ps_wp *w, const sch_op *op, int ri) {
  te_expr *const *raxes;
  sch_op_source_reduce_axes(op, &raxes);
  te_expr *r = raxes[ri];
  for (int a = 0; a < w->naxis; a++) {
    te_expr *d = w->axes[a];
    bool used = false;
    for (int j = 0; j < ri; j++)
      used |= (intptr_t)ps_ptrmap_get(&w->axis_of, raxes[j]) == a + 1;
    if (!used && !strcmp(d->u.var.name, r->u.var.name) && d->u.var.dom_min == r->u.var.dom_min &&
        d->u.var.dom_extent == r->u.var.dom_extent)
      return ps_wp_mark(w, &w->axis_of, r, a + 1);
  }
  return push(w, &w->axes, &w->naxis, &w->capaxis, r) && ps_wp_mark(w, &w->axis_of, r, w->naxis);
}

/* True when e uses two distinct variables (first: one seen already, or NULL). */
static bool two_vars(const te_expr *e, const te_expr **first) {
  if (e->kind == IR_VAR) {
    if (*first && *first != e)
      return true;
    *first = e;
  }
  for (int i = 0; i < e->nargs; i++)
    if (two_vars(e->args[i], first))
      return true;
  return false;
}

/* Walks a shape or range expression. The simplifier orders the sizes of one expression by
   creation (simplify_order.c: N*M for M made first), and te_parse makes an undeclared size where
   the text first names it, which need not be the same order: reading M*N back would give M*N's
   mirror. So when an expression combines two sizes, every size of the shapes is declared
   (`M: size, N: size`), in creation order, which te_parse follows (sizes_by_id). */
static bool walk_shape(ps_wp *w, te_expr *e) {
  const te_expr *first = NULL;
  if (e && two_vars(e, &first))
    w->sizes_by_id = true;
  return walk(w, e);
}

/* Sizes and parameters in first-appearance order: shapes and ranges first, then bodies, then
   reducers; reduce-axis declarations and reducers along the way. */
static bool collect_vars(ps_wp *w) {
  w->in_shape = true;
  for (int i = 0; i < w->nph; i++)
    for (int d = 0; d < w->phs[i]->ndim; d++)
      if (!walk_shape(w, w->phs[i]->shape[d]))
        return false;
  for (int s = 0; s < w->nstmt; s++) {
    const sch_op *op = w->stmts[s];
    for (int d = 0; d < op->ndim; d++)
      if (!walk_shape(w, op->shape[d]))
        return false;
    te_expr *const *raxes;
    int nr = sch_op_source_reduce_axes(op, &raxes);
    for (int r = 0; r < nr; r++)
      if (!declare_axis(w, op, r) || !walk_shape(w, raxes[r]->u.var.dom_min) ||
          !walk_shape(w, raxes[r]->u.var.dom_extent))
        return false;
  }
  w->in_shape = false;
  w->nshape_vars = w->nvar;
  for (int s = 0; s < w->nstmt; s++) {
    w->cur = w->stmts[s];
    w->bad_in = w->cur->name;
    for (int k = 0; k < w->cur->nbody; k++)
      if (!walk(w, sch_op_source_body(w->cur, k)))
        return false;
  }
  w->cur = NULL;
  for (int i = 0; i < w->nred; i++) { /* w->nred may grow: identities are plain values */
    w->cur_red = w->reds[i];
    for (int k = 0; k < w->cur_red->nvalues; k++)
      if (!walk(w, w->cur_red->results[k]) || !walk(w, w->cur_red->identity[k]))
        return false;
  }
  w->cur_red = NULL;
  return true;
}

/* ---------------------------------------------------------------- entry */

static void wp_free(ps_wp *w) {
  ps_names_free(&w->n);
  ps_ptrmap_free(&w->seen);
  ps_ptrmap_free(&w->read);
  ps_ptrmap_free(&w->axis_of);
  free(w->stmts);
  free(w->phs);
  free(w->vars);
  free(w->axes);
  free(w->reds);
  free(w->size_decl);
}

/* nout >= 1 tensors of one context. NULL outs[0]: TE_ERR_INVALID_ARG without a message (no
   context to hold one; a NULL from an earlier failed call keeps that call's message). */
static te_status check_outs(const char *fn, int nout, te_tensor *const outs[]) {
  if (nout < 1 || !outs || !outs[0])
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = outs[0]->ctx;
  for (int i = 1; i < nout; i++) {
    if (!outs[i])
      return ir_error_null(ctx, "%s: outs[%d] is NULL", fn, i);
    if (outs[i]->ctx != ctx)
      return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s' belongs to another context", fn,
                      outs[i]->name);
  }
  return TE_OK;
}

/* Collects what the text holds; with s, prints it. fn names the API function for messages. */
static bool run(ps_wp *w, const char *fn, int nout, te_tensor *const outs[], ir_str *s) {
  bool ok = true;
  for (int i = 0; ok && i < nout; i++)
    ok = visit_op(w, outs[i]->op);
  if (ok && w->nstmt == 0) {
    ir_error(w->ctx, TE_ERR_INVALID_ARG,
             "%s: the outputs compute nothing (only placeholders, "
             "e.g. '%s')",
             fn, outs[0]->name);
    return false;
  }
  for (int i = 0; ok && i < w->nstmt; i++)
    if (w->stmts[i]->ext && !w->stmts[i]->ext->symbol) {
      ir_error(w->ctx, TE_ERR_UNSUPPORTED,
               "%s: extern stage '%s' has no symbol: the workload text names an extern's "
               "function by its symbol (give te_extern one)",
               fn, w->stmts[i]->name);
      return false;
    }
  ok = ok && collect_placeholders(w, nout, outs) && collect_vars(w);
  if (ok && s)
    ok = ps_wp_give_names(w) && ps_wp_layout(w, s, nout, outs);
  if (!ok && (w->oom || w->n.oom)) {
    ir_error(w->ctx, TE_ERR_NOMEM, "%s: out of memory", fn);
  } else if (!ok && w->bad) {
    bool var = w->bad->kind == IR_VAR;
    ir_error(w->ctx, TE_ERR_UNSUPPORTED,
             "%s: %s%s%s: the workload text cannot express a '%s' node%s%s%s", fn,
             w->bad_in ? "tensor '" : "", w->bad_in ? w->bad_in : "declarations",
             w->bad_in ? "'" : "", var ? "variable" : ir_expr_kind_name[w->bad->kind],
             var ? " ('" : "", var ? w->bad->u.var.name : "", var ? "')" : "");
  }
  return ok;
}

static char *workload_text_impl(int nout, te_tensor *const outs[]) {
  if (check_outs("te_workload_text", nout, outs) != TE_OK)
    return NULL;
  ps_wp w = {0};
  w.ctx = outs[0]->ctx;
  ir_str s = {.ctx = w.ctx};
  bool ok = run(&w, "te_workload_text", nout, outs, &s);
  wp_free(&w);
  if (!ok) {
    ir_str_free(&s);
    return NULL;
  }
  return ir_str_take(&s);
}

char *te_workload_text(int nout, te_tensor *const outs[]) {
  if (nout < 1 || !outs || !outs[0])
    return NULL;
  return IR_PUBLIC_CALL_PTR(outs[0]->ctx, workload_text_impl(nout, outs));
}

static te_status workload_inputs_impl(int nout, te_tensor *const outs[], int *nin, te_tensor ***ins,
                                      int *nparams, te_expr ***params) {
  if (nin)
    *nin = 0;
  if (ins)
    *ins = NULL;
  if (nparams)
    *nparams = 0;
  if (params)
    *params = NULL;
  te_status st = check_outs("te_workload_inputs", nout, outs);
  if (st != TE_OK)
    return st;
  te_ctx *ctx = outs[0]->ctx;
  if (!nin || !ins)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_workload_inputs: nin or ins is NULL");
  ps_wp w = {0};
  w.ctx = ctx;
  bool ok = run(&w, "te_workload_inputs", nout, outs, NULL);
  int np = 0;
  for (int i = 0; ok && i < w.nvar; i++)
    np += w.vars[i]->u.var.kind == IR_VAR_PARAM;
  te_tensor **in = ok ? ir_alloc_persistent(ctx, sizeof *in * (size_t)(w.nph + 1)) : NULL;
  te_expr **pa = ok ? ir_alloc_persistent(ctx, sizeof *pa * (size_t)(np + 1)) : NULL;
  ok = in && pa;
  if (ok) {
    memcpy(in, w.phs, sizeof *in * (size_t)w.nph);
    for (int i = 0, k = 0; i < w.nvar; i++)
      if (w.vars[i]->u.var.kind == IR_VAR_PARAM)
        pa[k++] = w.vars[i];
    *nin = w.nph;
    *ins = in;
    if (nparams)
      *nparams = np;
    if (params)
      *params = pa;
  }
  wp_free(&w);
  return ok ? TE_OK : te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_NOMEM;
}

te_status te_workload_inputs(int nout, te_tensor *const outs[], int *nin, te_tensor ***ins,
                             int *nparams, te_expr ***params) {
  if (nout < 1 || !outs || !outs[0])
    return workload_inputs_impl(nout, outs, nin, ins, nparams, params);
  return IR_PUBLIC_CALL(outs[0]->ctx, workload_inputs_impl(nout, outs, nin, ins, nparams, params));
}
