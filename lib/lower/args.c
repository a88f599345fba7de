/* args.c — checking a kernel's arguments and making its signature.
 *
 * te_build and te_lower_text take the schedule, the kernel's tensors (inputs and outputs in the
 * caller's order) and its scalar parameters. Everything a user can get wrong here is reported
 * with a message naming the public function and the culprit (never an assert):
 *   - a NULL schedule, a name that is not a C identifier, a negative count or a NULL array;
 *   - a NULL tensor or scalar, one of another context, one listed twice;
 *   - a tensor that is neither a placeholder nor an output of the schedule (an intermediate);
 *   - an output of the schedule, or a placeholder the computation reads, missing from tensors;
 *   - a scalar that is not a te_param / te_var variable, or that is a symbolic size (sizes are
 *     bound from the buffers, never passed);
 *   - a symbolic size that is not the bare extent of some dimension of some tensor argument
 *     (TE_ERR_SHAPE: the kernel could not bind it from its buffers);
 *   - a stride variable of a strided placeholder (te_placeholder_strided) that is not a te_var
 *     or not the whole stride of some dimension of some tensor argument (TE_ERR_SHAPE).
 * Placeholders that the computation does not read are allowed: they are unused arguments.
 * Scalars that the computation uses but that are missing are found after schedule_to_loops
 * (schedule_to_loops.c), where the whole loop nest is known.
 */
#include <string.h>

#include "lower.h"
#include "schedule/sch.h"

static bool is_c_identifier(const char *s) {
  if (!s || !*s)
    return false;
  if (!(s[0] == '_' || (s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z')))
    return false;
  for (const char *p = s + 1; *p; p++)
    if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
          (*p >= '0' && *p <= '9')))
      return false;
  return true;
}

static bool is_output(te_schedule *sch, te_tensor *t) {
  for (int i = 0; i < sch->nout; i++)
    if (sch->outs[i] == t)
      return true;
  return false;
}

static int find_tensor(int n, te_tensor *const ts[], te_tensor *t) {
  for (int i = 0; i < n; i++)
    if (ts[i] == t)
      return i;
  return -1;
}

/* Each tensor: not NULL, of this context, listed once, a placeholder or an output. */
static te_status check_tensors(te_schedule *sch, const char *api, int n, te_tensor *const ts[]) {
  te_ctx *ctx = sch->ctx;
  if (n < 0)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: ntensors must be >= 0 (got %d)", api, n);
  if (n > 0 && !ts)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensors is NULL but ntensors is %d", api, n);
  for (int i = 0; i < n; i++) {
    te_tensor *t = ts[i];
    if (!t)
      return ir_error_null(ctx, "%s: tensors[%d] is NULL", api, i);
    if (t->ctx != ctx)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: tensor '%s' (tensors[%d]) belongs to another context", api, t->name, i);
    int j = find_tensor(i, ts, t);
    if (j >= 0)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: tensor '%s' is listed twice (tensors[%d] and tensors[%d])", api, t->name,
                      j, i);
    if (t->op->kind != SCH_OP_PLACEHOLDER && !is_output(sch, t))
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: tensor '%s' (tensors[%d]) is neither a placeholder nor an output of the "
                      "schedule; intermediate tensors are not kernel arguments",
                      api, t->name, i);
  }
  for (int i = 0; i < sch->nout; i++)
    if (find_tensor(n, ts, sch->outs[i]) < 0)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: output '%s' of the schedule is not among the kernel's tensors", api,
                      sch->outs[i]->name);
  te_tensor **inputs = NULL;
  int nin = sch_schedule_inputs(sch, &inputs);
  if (nin < 0 || ir_failed(ctx))
    return ir_failed(ctx) ? te_last_status(ctx) : TE_ERR_INTERNAL;
  for (int i = 0; i < nin; i++)
    if (find_tensor(n, ts, inputs[i]) < 0)
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: tensor '%s' is read by the computation but is not among the kernel's "
                      "tensors",
                      api, inputs[i]->name);
  return TE_OK;
}

/* Collects the distinct variables of an expression, in first-use order. */
typedef struct var_list {
  te_ctx *ctx;
  int n, cap;
  te_expr **vars;
} var_list;

static int collect_var(ir_visitor *v, te_expr *e) {
  var_list *l = v->data;
  for (int i = 0; i < l->n; i++)
    if (l->vars[i] == e)
      return IR_CONTINUE;
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 8;
    te_expr **nv = ir_alloc(l->ctx, (size_t)cap * sizeof *nv);
    if (!nv)
      return IR_ABORT;
    if (l->n)
      memcpy(nv, l->vars, (size_t)l->n * sizeof *nv);
    l->vars = nv;
    l->cap = cap;
  }
  l->vars[l->n++] = e;
  return IR_CONTINUE;
}

/* Where var is first a bare extent (strides false) or a bare declared stride (true) of a
   tensor: *arg, *dim; false when it is nowhere. */
static bool find_bare(int nt, te_tensor *const ts[], te_expr *var, bool strides, int *arg,
                      int *dim) {
  for (int i = 0; i < nt; i++) {
    te_expr **list = strides ? ts[i]->strides : ts[i]->shape;
    for (int d = 0; list && d < ts[i]->ndim; d++)
      if (list[d] == var) {
        *arg = i, *dim = d;
        return true;
      }
  }
  return false;
}

/* The size variables of the tensors' shapes, each bound from its first bare occurrence, then the
   stride variables of strided placeholders (those of their strides that are not sizes). */
static te_status find_sizes(te_schedule *sch, const char *api, lw_func *f, int nt,
                            te_tensor *const ts[]) {
  te_ctx *ctx = sch->ctx;
  var_list l = {.ctx = ctx};
  ir_visitor v = {0};
  v.expr[IR_VAR] = collect_var;
  v.data = &l;
  for (int i = 0; i < nt; i++)
    for (int d = 0; d < ts[i]->ndim; d++)
      if (ir_visit_expr(&v, ts[i]->shape[d]) == IR_ABORT)
        return te_last_status(ctx);
  int nextent = l.n;
  for (int i = 0; i < nt; i++)
    for (int d = 0; ts[i]->strides && d < ts[i]->ndim; d++)
      if (ir_visit_expr(&v, ts[i]->strides[d]) == IR_ABORT)
        return te_last_status(ctx);
  f->nsizes = l.n;
  f->size_vars = l.vars;
  f->size_arg = ir_alloc(ctx, (size_t)(l.n + 1) * sizeof(int));
  f->size_dim = ir_alloc(ctx, (size_t)(l.n + 1) * sizeof(int));
  f->size_is_stride = ir_alloc(ctx, (size_t)(l.n + 1) * sizeof(bool));
  if (!f->size_arg || !f->size_dim || !f->size_is_stride)
    return te_last_status(ctx);
  for (int k = 0; k < l.n; k++) {
    te_expr *var = l.vars[k];
    bool stride = k >= nextent;
    if (var->u.var.kind != IR_VAR_INDEX)
      return ir_error(ctx, TE_ERR_SHAPE,
                      stride ? "%s: stride variable '%s' is not a te_var (make stride variables "
                               "with te_var)"
                             : "%s: extent variable '%s' is not a symbolic size (make sizes with "
                               "te_var)",
                      api, var->u.var.name);
    f->size_is_stride[k] = stride;
    if (!find_bare(nt, ts, var, stride, &f->size_arg[k], &f->size_dim[k]))
      return ir_error(ctx, TE_ERR_SHAPE,
                      stride ? "%s: stride variable '%s' must be the whole stride of some "
                               "dimension of a kernel argument (it appears only inside larger "
                               "stride expressions)"
                             : "%s: symbolic size '%s' must be the extent of some dimension of "
                               "a kernel argument (it appears only inside larger extent "
                               "expressions)",
                      api, var->u.var.name);
  }
  return TE_OK;
}

static bool is_size_var(const lw_func *f, te_expr *e) {
  for (int k = 0; k < f->nsizes; k++)
    if (f->size_vars[k] == e)
      return true;
  return false;
}

static te_status check_scalars(te_schedule *sch, const char *api, const lw_func *f, int ns,
                               te_expr *const ss[]) {
  te_ctx *ctx = sch->ctx;
  if (ns < 0)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: nscalars must be >= 0 (got %d)", api, ns);
  if (ns > 0 && !ss)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: scalars is NULL but nscalars is %d", api, ns);
  for (int i = 0; i < ns; i++) {
    te_expr *e = ss[i];
    if (!e)
      return ir_error_null(ctx, "%s: scalars[%d] is NULL", api, i);
    if (e->ctx != ctx)
      return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: scalars[%d] belongs to another context", api,
                      i);
    if (e->kind != IR_VAR || (e->u.var.kind != IR_VAR_PARAM && e->u.var.kind != IR_VAR_INDEX))
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: scalars[%d] is not a parameter variable (make it with te_param or "
                      "te_var)",
                      api, i);
    for (int j = 0; j < i; j++)
      if (ss[j] == e)
        return ir_error(ctx, TE_ERR_INVALID_ARG,
                        "%s: scalar '%s' is listed twice (scalars[%d] and scalars[%d])", api,
                        e->u.var.name, j, i);
    if (is_size_var(f, e))
      return ir_error(ctx, TE_ERR_INVALID_ARG,
                      "%s: scalar '%s' is a symbolic size of a tensor argument; sizes are bound "
                      "from the buffers and are not passed as scalars",
                      api, e->u.var.name);
  }
  return TE_OK;
}

/* One flat buffer per tensor, then the scalars. */
static te_status make_args(te_ctx *ctx, lw_func *f, int nt, te_tensor *const ts[], int ns,
                           te_expr *const ss[], ir_map *tb) {
  f->nargs = nt + ns;
  f->args = ir_alloc(ctx, (size_t)(f->nargs + 1) * sizeof *f->args);
  if (!f->args)
    return te_last_status(ctx);
  for (int i = 0; i < nt; i++) {
    te_tensor *t = ts[i];
    ir_buffer *b = ir_buffer_new(ctx, t->name, t->dtype, t->ndim, t->shape, TE_SCOPE_GLOBAL, t, i);
    if (!b || !ir_map_put(tb, t, b))
      return te_last_status(ctx);
    f->args[i].is_buffer = true;
    f->args[i].is_output = t->op->kind == SCH_OP_COMPUTE;
    f->args[i].buffer = b;
    b->strides = t->strides;
  }
  for (int i = 0; i < ns; i++)
    f->args[nt + i].var = ss[i];
  return TE_OK;
}

te_status lw_make_signature(te_schedule *sch, const char *api, const char *name, int nt,
                            te_tensor *const ts[], int ns, te_expr *const ss[], lw_func **out,
                            ir_map **tensor_buffers) {
  if (!sch)
    return TE_ERR_INVALID_ARG; /* no context to hold a message */
  te_ctx *ctx = sch->ctx;
  if (!is_c_identifier(name))
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: kernel name '%s' is not a C identifier", api,
                    name ? name : "(null)");
  te_status st = check_tensors(sch, api, nt, ts);
  if (st != TE_OK)
    return st;
  lw_func *f = ir_alloc(ctx, sizeof *f);
  ir_map *tb = ir_map_new(ctx);
  if (!f || !tb)
    return te_last_status(ctx);
  f->name = ir_strdup(ctx, name);
  if ((st = find_sizes(sch, api, f, nt, ts)) != TE_OK)
    return st;
  if ((st = check_scalars(sch, api, f, ns, ss)) != TE_OK)
    return st;
  if ((st = make_args(ctx, f, nt, ts, ns, ss, tb)) != TE_OK)
    return st;
  char *trace = te_schedule_trace(sch);
  f->trace = trace ? ir_strdup(ctx, trace) : "";
  te_free(trace);
  *out = f;
  *tensor_buffers = tb;
  return TE_OK;
}
