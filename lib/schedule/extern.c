/* extern.c — extern stages (te_extern): a stage a user's C function computes.
 *
 * An extern operation is a COMPUTE with no body (nbody 0) and an sch_extern: the function, its
 * symbol and the tensors it reads, whole. Its stage has root axes (bound inference gives them
 * the whole shape, so storage is compact) but no loops of its own: ops_to_loops emits
 *     produce E { call_extern E = SYMBOL(A[extents; strides], ...) -> E[extents; strides] }
 * where another stage would emit its loop nest. The rules (tensor.h, te_extern):
 *   - loop primitives on it, te_compute_at of another stage at it, inlining it or a stage it
 *     reads, caching its output by te_cache_write, storage reordering and rfactor are refused
 *     by the primitives (sch_extern_refuse, sch_extern_reader);
 *   - when the schedule is lowered (sch_check_externs): every te-computed tensor it passes (its
 *     inputs, itself) is stored compact, row-major and unpadded, and it is not computed inside a
 *     vectorized loop.
 */
#include <stdio.h>
#include <string.h>

#include "trace.h"

static const char *const axis_names[TE_MAX_DIMS] = {"ax0", "ax1", "ax2", "ax3",
                                                    "ax4", "ax5", "ax6", "ax7"};

static bool check_inputs(te_ctx *ctx, const char *name, int ninputs, te_tensor *const inputs[]) {
  const char *fn = "te_extern";
  if (ninputs < 0 || ninputs > TE_EXTERN_MAX_INPUTS) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: extern stage '%s': ninputs must be in [0, %d] (got %d)",
             fn, name, TE_EXTERN_MAX_INPUTS, ninputs);
    return false;
  }
  if (ninputs > 0 && !inputs) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: extern stage '%s': inputs is NULL but ninputs is %d", fn,
             name, ninputs);
    return false;
  }
  for (int k = 0; k < ninputs; k++) {
    if (!inputs[k]) {
      ir_error_null(ctx, "%s: extern stage '%s': inputs[%d] is NULL", fn, name, k);
      return false;
    }
    if (inputs[k]->ctx != ctx) {
      ir_error(ctx, TE_ERR_INVALID_ARG,
               "%s: extern stage '%s': input '%s' (inputs[%d]) belongs to another context", fn,
               name, inputs[k]->name, k);
      return false;
    }
  }
  return true;
}

static te_tensor *extern_impl(te_ctx *ctx, const char *name, te_dtype dtype, int ndim,
                              te_expr *const shape[], int ninputs, te_tensor *const inputs[],
                              te_extern_fn fn, const char *symbol) {
  const char *api = "te_extern";
  if (!sch_is_identifier(name)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: name '%s' is not a C identifier", api,
             name ? name : "(null)");
    return NULL;
  }
  if (!fn && !symbol) {
    ir_error(ctx, TE_ERR_INVALID_ARG,
             "%s: extern stage '%s': both the function and the symbol are NULL (give a function "
             "for JIT builds, a symbol for ahead-of-time ones, or both)",
             api, name);
    return NULL;
  }
  if (symbol && !sch_is_identifier(symbol)) {
    ir_error(ctx, TE_ERR_INVALID_ARG, "%s: extern stage '%s': symbol '%s' is not a C identifier",
             api, name, symbol);
    return NULL;
  }
  if (dtype.lanes != 1 || !ir_dtype_supported(dtype)) {
    char b[32];
    ir_error(ctx, TE_ERR_TYPE, "%s: extern stage '%s': dtype %s is not supported", api, name,
             te_dtype_str(dtype, b, sizeof b));
    return NULL;
  }
  if (!sch_check_shape(ctx, api, name, ndim, shape) || !check_inputs(ctx, name, ninputs, inputs))
    return NULL;
  sch_op *op = sch_op_new(ctx, SCH_OP_COMPUTE, name, ndim, shape, axis_names, 1);
  sch_extern *ext = ir_alloc_persistent(ctx, sizeof *ext);
  te_tensor **in = ir_alloc_persistent(ctx, sizeof *in * (size_t)(ninputs ? ninputs : 1));
  if (!op || !ext || !in)
    return NULL;
  if (ninputs)
    memcpy(in, inputs, sizeof *in * (size_t)ninputs);
  *ext = (sch_extern){fn, NULL, ninputs, in};
  if (symbol && !(ext->symbol = ir_strdup_persistent(ctx, symbol)))
    return NULL;
  op->nbody = 0; /* no body: the function computes it */
  op->ext = ext;
  op->outputs[0] = sch_make_output(op, dtype, 0);
  return op->outputs[0];
}

te_tensor *te_extern(te_ctx *ctx, const char *name, te_dtype dtype, int ndim,
                     te_expr *const shape[], int ninputs, te_tensor *const inputs[],
                     te_extern_fn fn, const char *symbol) {
  if (!ctx)
    return NULL;
  return IR_PUBLIC_CALL_PTR(
      ctx, extern_impl(ctx, name, dtype, ndim, shape, ninputs, inputs, fn, symbol));
}

te_extern_fn te_extern_function(const te_tensor *t) {
  return t && t->op && t->op->ext ? t->op->ext->fn : NULL;
}

const char *te_extern_symbol(const te_tensor *t) {
  return t && t->op && t->op->ext ? t->op->ext->symbol : NULL;
}

/* ---------------------------------------------------------------- schedule rules */

te_status sch_extern_refuse(te_stage *st, const char *fn, const char *what) {
  if (!st || !st->op->ext)
    return TE_OK;
  return ir_error(st->sch->ctx, TE_ERR_SCHEDULE,
                  "%s: stage '%s' is an extern stage: %s (its function computes the whole tensor; "
                  "it has no loops te schedules)",
                  fn, st->name, what);
}

te_stage *sch_extern_reader(te_stage *st) {
  te_schedule *s = st->sch;
  for (int i = 0; i < s->nstage; i++) {
    sch_op *op = s->stages[i]->op;
    for (int k = 0; op->ext && k < op->ext->ninputs; k++)
      for (int j = 0; j < st->op->nout; j++)
        if (op->ext->inputs[k] == st->op->outputs[j])
          return s->stages[i];
  }
  return NULL;
}

/* True when every extent of st's storage is its shape's (no padding from rounded-up loops). */
static bool stored_whole(te_stage *st, ir_analyzer *an) {
  for (int d = 0; d < st->op->ndim; d++) {
    te_expr *diff = ir_simplify(an, ir_sub(st->root[d]->alloc_extent, st->op->shape[d]));
    int64_t v;
    if (!ir_is_const_int(diff, &v) || v != 0)
      return false;
  }
  return true;
}

/* A tensor e passes: not padded, not reordered (the DLTensor te makes is compact row-major). */
static te_status check_passed(te_stage *e, te_stage *p, ir_analyzer *an) {
  te_ctx *ctx = e->sch->ctx;
  const char *who = p == e ? "its output" : "its input";
  if (p->attach == SCH_ATTACH_INLINE)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_compute_inline: stage '%s' is read by extern stage '%s', which needs it "
                    "realized as a whole tensor",
                    p->name, e->name);
  if (p->nstorage)
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_reorder_storage: stage '%s' is %s of extern stage '%s', which is passed "
                    "compact row-major storage",
                    p->name, who, e->name);
  if (!stored_whole(p, an))
    return ir_error(ctx, TE_ERR_SCHEDULE,
                    "te_set_tail: stage '%s' is %s of extern stage '%s': its rounded-up loops pad "
                    "its storage, and the extern is passed compact storage of the tensor's shape "
                    "(use another tail strategy for '%s')",
                    p->name, who, e->name, p->name);
  return TE_OK;
}

/* The extern stage st runs inside a vectorized loop (of the stages it is computed in). */
static te_iter *vector_loop_around(te_stage *st) {
  for (int depth = 0; st->attach == SCH_ATTACH_AT && depth < 1000; depth++) {
    te_stage *c = st->attach_stage;
    int at = sch_leaf_pos(c, st->attach_iter);
    for (int j = 0; j <= at && j < c->nleaf; j++)
      if (c->leaf[j]->kind == IR_FOR_VECTORIZED)
        return c->leaf[j];
    st = c;
  }
  return NULL;
}

te_status sch_check_externs(te_schedule *s) {
  te_ctx *ctx = s->ctx;
  ir_analyzer *an = NULL;
  for (int i = 0; i < s->nstage; i++) {
    te_stage *e = s->stages[i];
    if (!e->op->ext)
      continue;
    if (!an && !(an = ir_analyzer_new(ctx)))
      return te_last_status(ctx);
    te_iter *v = vector_loop_around(e);
    if (v)
      return ir_error(ctx, TE_ERR_SCHEDULE,
                      "te_compute_at: extern stage '%s' is computed inside vectorized loop '%s' "
                      "of '%s': a function call has no vector lanes (compute it outside that loop)",
                      e->name, v->name, v->stage->name);
    te_status r = check_passed(e, e, an);
    for (int k = 0; r == TE_OK && k < e->op->ext->ninputs; k++) {
      te_stage *p = sch_stage_of_tensor(s, e->op->ext->inputs[k]);
      if (p)
        r = check_passed(e, p, an);
    }
    if (r != TE_OK)
      return r;
  }
  return TE_OK;
}

/* ---------------------------------------------------------------- the call */

/* Appends t's extents and strides to exprs (compact row-major unless t declares strides). */
static int arg_exprs(te_ctx *ctx, te_tensor *t, te_expr **exprs) {
  for (int d = 0; d < t->ndim; d++)
    exprs[d] = t->shape[d];
  te_expr *stride = ir_i64(ctx, 1);
  for (int d = t->ndim - 1; d >= 0; d--) {
    exprs[t->ndim + d] = t->strides ? t->strides[d] : stride;
    stride = ir_mul(stride, t->shape[d]);
  }
  return 2 * t->ndim;
}

ir_stmt *sch_extern_stmt(te_stage *st) {
  te_ctx *ctx = st->sch->ctx;
  sch_extern *x = st->op->ext;
  ir_extern_call *c = ir_alloc(ctx, sizeof *c);
  int nargs = x->ninputs + 1;
  te_tensor **ts = ir_alloc(ctx, sizeof *ts * (size_t)nargs);
  te_expr **exprs = ir_alloc(ctx, sizeof *exprs * (size_t)(2 * TE_MAX_DIMS * nargs));
  if (!c || !ts || !exprs)
    return NULL;
  int n = 0;
  for (int k = 0; k < nargs; k++) {
    ts[k] = k < x->ninputs ? x->inputs[k] : st->op->outputs[0];
    n += arg_exprs(ctx, ts[k], exprs + n);
  }
  for (int k = 0; k < n; k++)
    if (!exprs[k])
      return NULL;
  *c = (ir_extern_call){st->name, x->symbol, x->fn, nargs, ts, NULL};
  ir_stmt *call = ir_call_extern(ctx, c, n, exprs);
  return call ? ir_attr(ctx, "produce", st->op->outputs[0], ir_i64(ctx, 0), call) : NULL;
}
