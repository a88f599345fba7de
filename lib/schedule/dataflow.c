/* dataflow.c — primitives that add stages: cache_read, cache_write, rfactor.
 *
 * They never modify the user's operations (one computation may have several schedules): a
 * stage whose reads or body change gets a new sch_op that keeps the user's output tensors, so
 * te_stage_of(s, C) still finds it and the kernel still writes C. The new stage is inserted in
 * the topological list just before its first reader.
 *
 *   cache_read(A, scope, readers):  A_scope[i..] = A[i..]; the readers read A_scope instead.
 *   cache_write(C, scope):          C_scope computes C's body; C's stage becomes a copy
 *                                   C[i..] = C_scope[i..]. Call it before scheduling C.
 *   rfactor(C, k, axis):            for a reduce leaf k of C (made by splits), C_rf has k as a
 *                                   data axis at position axis and reduces over the other reduce
 *                                   leaves; C becomes the reduction of C_rf over k.
 */
#include <stdio.h>
#include <string.h>

#include "trace.h"

/* Completes op as out[axes] = body, out either new (out == NULL) or the given tensor. */
static bool op_finish(sch_op *op, te_expr *body, te_tensor *out) {
  if (!body)
    return false;
  op->body[0] = body;
  op->outputs[0] = out ? out : sch_make_output(op, body->dtype, 0);
  return op->outputs[0] != NULL;
}

static const char **axis_names_of(const sch_op *op) {
  const char **n = ir_alloc(op->ctx, sizeof(char *) * (size_t)(op->ndim + 1));
  for (int i = 0; n && i < op->ndim; i++)
    n[i] = op->axes ? op->axes[i]->u.var.name : "ax";
  return n;
}

static const char **default_axis_names(te_ctx *ctx, int ndim) {
  static const char *const names[] = {"ax0", "ax1", "ax2", "ax3", "ax4", "ax5", "ax6", "ax7"};
  const char **n = ir_alloc(ctx, sizeof(char *) * (size_t)(ndim + 1));
  for (int i = 0; n && i < ndim; i++)
    n[i] = names[i];
  return n;
}

static bool scope_ok(te_ctx *ctx, const char *fn, te_scope scope) {
  if ((unsigned)scope <= TE_SCOPE_SHARED)
    return true;
  ir_error(ctx, TE_ERR_INVALID_ARG, "%s: unknown scope %d", fn, (int)scope);
  return false;
}

/* ---------------------------------------------------------------- cache_read */

typedef struct redirect {
  te_tensor *from, *to;
  int count;
} redirect;

static te_expr *redirect_access(ir_mutator *m, te_expr *e) {
  redirect *r = m->data;
  te_expr *x = ir_mutate_expr_children(m, e);
  if (!x || x->u.tensor != r->from)
    return x;
  r->count++;
  return ir_access(r->to, x->nargs, x->args);
}

/* e with reads of from redirected to to. */
static te_expr *redirect_expr(te_ctx *ctx, redirect *r, te_expr *e) {
  ir_mutator m = {0};
  m.ctx = ctx;
  m.expr[IR_ACCESS] = redirect_access;
  m.data = r;
  m.memo = true;
  return ir_mutate_expr(&m, e); /* the default recursion covers a reduction's condition */
}

/* A copy of extern stage r's operation reading to instead of from. */
static bool redirect_extern(te_ctx *ctx, te_stage *r, te_tensor *from, te_tensor *to) {
  sch_op *copy = ir_alloc_persistent(ctx, sizeof *copy);
  sch_extern *ext = ir_alloc_persistent(ctx, sizeof *ext);
  int n = r->op->ext->ninputs;
  te_tensor **in = ir_alloc_persistent(ctx, sizeof *in * (size_t)(n ? n : 1));
  if (!copy || !ext || !in)
    return false;
  *copy = *r->op;
  *ext = *r->op->ext;
  for (int k = 0; k < n; k++)
    in[k] = ext->inputs[k] == from ? to : ext->inputs[k];
  ext->inputs = in;
  copy->ext = ext;
  r->op = copy;
  return true;
}

static te_status cache_read_impl(te_schedule *s, te_tensor *t, te_scope scope, int nreaders,
                                 te_stage *const readers[], te_tensor **cache) {
  const char *fn = "te_cache_read";
  if (!s)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = s->ctx;
  if (!t)
    return ir_error_null(ctx, "%s: tensor is NULL", fn);
  if (!scope_ok(ctx, fn, scope))
    return TE_ERR_INVALID_ARG;
  if (nreaders < 1 || !readers)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "%s: tensor '%s': needs at least one reader (got %d)",
                    fn, t->name, nreaders);
  te_stage *producer = sch_stage_of_tensor(s, t);
  if (!producer && t->op->kind != SCH_OP_PLACEHOLDER)
    return ir_error(ctx, TE_ERR_NOT_FOUND, "%s: tensor '%s' is not part of this schedule", fn,
                    t->name);
  int first = s->nstage;
  for (int i = 0; i < nreaders; i++) {
    te_stage *r = readers[i];
    if (!r)
      return ir_error_null(ctx, "%s: reader %d is NULL", fn, i);
    if (r->sch != s)
      return ir_error(ctx, TE_ERR_SCHEDULE, "%s: reader '%s' belongs to another schedule", fn,
                      r->name);
    te_tensor **in;
    int n = sch_op_inputs(r->op, &in);
    bool reads = false;
    for (int k = 0; k < n; k++)
      reads |= in[k] == t;
    if (!reads)
      return ir_error(ctx, TE_ERR_SCHEDULE, "%s: stage '%s' does not read tensor '%s'", fn, r->name,
                      t->name);
    if (producer && producer->op->is_scan && sch_stage_depends_on(producer, r))
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "%s: stage '%s' reads earlier steps of scan '%s' inside it; a copy made "
                      "before the scan would hold none of them",
                      fn, r->name, t->name);
    int idx = sch_stage_index(s, r);
    if (idx < first)
      first = idx;
  }
  char name[160];
  snprintf(name, sizeof name, "%s_%s", t->name, te_scope_name(scope));
  sch_op *op =
      sch_op_new(ctx, SCH_OP_COMPUTE, name, t->ndim, t->shape, default_axis_names(ctx, t->ndim), 1);
  if (!op || !op_finish(op, ir_access(t, t->ndim, op->axes), NULL))
    return te_last_status(ctx);
  te_tensor *ct = op->outputs[0];
  for (int i = 0; i < nreaders; i++) {
    te_stage *r = readers[i];
    if (r->op->ext) { /* an extern stage reads the cache instead: its inputs redirected */
      if (!redirect_extern(ctx, r, t, ct))
        return te_last_status(ctx);
      continue;
    }
    sch_op *copy = ir_alloc_persistent(ctx, sizeof *copy);
    te_expr **body = ir_alloc_persistent(ctx, sizeof(te_expr *) * (size_t)r->op->nbody);
    if (!copy || !body)
      return te_last_status(ctx);
    *copy = *r->op; /* same axes, reduce axes and outputs: the stage's iterators stay valid */
    redirect rd = {t, ct, 0};
    for (int k = 0; k < copy->nbody; k++)
      if (!(body[k] = redirect_expr(ctx, &rd, r->op->body[k])))
        return te_last_status(ctx);
    copy->body = body;
    r->op = copy;
  }
  te_stage *st = sch_stage_insert(s, first, op);
  if (!st)
    return te_last_status(ctx);
  st->scope = scope;
  if (cache)
    *cache = ct;
  return sch_trace_step(
      s, SCH_STEP_cache_read,
      (sch_arg[]){{.tensor = t}, {.e = (int)scope}, {.stages = {nreaders, readers}}});
}

te_status te_cache_read(te_schedule *s, te_tensor *t, te_scope scope, int nreaders,
                        te_stage *const readers[], te_tensor **cache) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(s, "te_cache_read", cache_read_impl(s, t, scope, nreaders, readers, cache));
}

/* ---------------------------------------------------------------- cache_write */

/* A stage computed at one of st's loops (NULL when none): rewriting st would orphan it. */
te_stage *sch_attached_at(te_stage *st) {
  for (int i = 0; i < st->sch->nstage; i++) {
    te_stage *o = st->sch->stages[i];
    if (o->attach == SCH_ATTACH_AT && o->attach_stage == st)
      return o;
  }
  return NULL;
}

static bool scheduled(const te_stage *st) {
  if (st->nrel > 0 || st->attach != SCH_ATTACH_ROOT)
    return true;
  for (int i = 0; i < st->nleaf; i++)
    if (st->leaf[i] != st->root[i] || st->leaf[i]->kind != IR_FOR_SERIAL)
      return true;
  return false;
}

static te_status cache_write_impl(te_schedule *s, te_tensor *t, te_scope scope, te_tensor **cache) {
  const char *fn = "te_cache_write";
  if (!s)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = s->ctx;
  if (!t)
    return ir_error_null(ctx, "%s: tensor is NULL", fn);
  if (!scope_ok(ctx, fn, scope))
    return TE_ERR_INVALID_ARG;
  te_stage *st = sch_stage_of_tensor(s, t);
  if (!st)
    return ir_error(ctx, TE_ERR_NOT_FOUND, "%s: tensor '%s' is %s", fn, t->name,
                    t->op->kind == SCH_OP_PLACEHOLDER ? "a placeholder"
                                                      : "not part of this schedule");
  if (scheduled(st))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' was already scheduled; call te_cache_write before other "
                    "primitives on it",
                    fn, st->name);
  if (st->op->nout > 1)
    return ir_error(ctx, TE_ERR_UNSUPPORTED,
                    "%s: stage '%s' has %d outputs; caching a multi-output stage is not supported "
                    "by this version",
                    fn, st->name, st->op->nout);
  if (st->op->is_scan)
    return ir_error(ctx, TE_ERR_UNSUPPORTED,
                    "%s: stage '%s' is a scan; caching a scan is not supported by this version", fn,
                    st->name);
  te_status ext = sch_extern_refuse(st, fn, "its function writes the tensor itself, not a cache");
  if (ext != TE_OK)
    return ext;
  te_stage *inner = sch_attached_at(st);
  if (inner)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "%s: stage '%s' is computed at a loop of '%s'; cache '%s' before placing "
                    "other stages in it",
                    fn, inner->name, st->name, st->name);
  sch_op *orig = st->op;
  char name[160];
  snprintf(name, sizeof name, "%s_%s", t->name, te_scope_name(scope));
  const char **names = axis_names_of(orig);
  sch_op *cw = sch_op_new(ctx, SCH_OP_COMPUTE, name, orig->ndim, orig->shape, names, 1);
  if (!cw)
    return te_last_status(ctx);
  if (!op_finish(cw, sch_freshen_body(ctx, orig->body[0], orig->ndim, orig->axes, cw->axes, cw),
                 NULL))
    return te_last_status(ctx);
  sch_op *copy = sch_op_new(ctx, SCH_OP_COMPUTE, orig->name, orig->ndim, orig->shape, names, 1);
  if (!copy || !op_finish(copy, ir_access(cw->outputs[0], copy->ndim, copy->axes), t))
    return te_last_status(ctx);
  int pos = sch_stage_index(s, st);
  te_stage *cst = sch_stage_insert(s, pos, cw);
  if (!cst || !sch_stage_reset(st, copy))
    return te_last_status(ctx);
  cst->scope = scope;
  if (cache)
    *cache = cw->outputs[0];
  return sch_trace_step(s, SCH_STEP_cache_write, (sch_arg[]){{.tensor = t}, {.e = (int)scope}});
}

te_status te_cache_write(te_schedule *s, te_tensor *t, te_scope scope, te_tensor **cache) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  return SCH_CALL(s, "te_cache_write", cache_write_impl(s, t, scope, cache));
}
