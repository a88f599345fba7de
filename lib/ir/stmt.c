/* stmt.c — statement constructors and buffers.
 *
 * Statements are not hash-consed: each constructor allocates a node in the current arena with
 * its expression and statement children copied inline. Like the expression constructors, a NULL
 * operand gives NULL without a new error, and broken invariants are ir_check failures.
 */
#include <string.h>

#include "base/ctx_internal.h"
#include "ir.h"

/* Bytes of the payload (u member) a statement kind carries. */
static size_t payload_size(ir_stmt_kind k) {
  switch (k) {
  case IR_S_FOR:
    return sizeof(ir_loop_info);
  case IR_S_STORE:
  case IR_S_ALLOCATE:
    return sizeof(ir_buffer *);
  case IR_S_PROVIDE:
    return sizeof(te_tensor *);
  case IR_S_REALIZE:
    return sizeof(ir_realize_info);
  case IR_S_ATTR:
    return sizeof(ir_attr_info);
  case IR_S_ASSERT:
    return sizeof(ir_assert_info);
  case IR_S_CALL_EXTERN:
    return sizeof(ir_extern_call *);
  default:
    return 0;
  }
}

ir_stmt *ir_stmt_make(te_ctx *ctx, ir_stmt_kind kind, int nexprs, te_expr *const exprs[],
                      int nstmts, ir_stmt *const stmts[], const void *payload) {
  if (!ctx)
    return NULL;
  for (int i = 0; exprs && i < nexprs; i++)
    if (!exprs[i])
      return NULL;
  if (!ir_check(
          ctx, (unsigned)kind < IR_STMT_COUNT && nexprs >= 0 && nexprs <= UINT16_MAX && nstmts >= 0,
          "ir_stmt_make: bad statement"))
    return NULL;
  size_t psize = payload_size(kind);
  if (!ir_check(ctx, psize == 0 || payload, "ir_stmt_make: missing payload"))
    return NULL;
  size_t size =
      sizeof(ir_stmt) + (size_t)nexprs * sizeof(te_expr *) + (size_t)nstmts * sizeof(ir_stmt *);
  ir_stmt *s = ir_alloc(ctx, size);
  if (!s)
    return NULL;
  s->kind = (uint16_t)kind;
  s->nexprs = (uint16_t)nexprs;
  s->nstmts = (uint32_t)nstmts;
  s->exprs = (te_expr **)(s + 1);
  s->stmts = (ir_stmt **)(s->exprs + nexprs);
  if (nexprs && exprs)
    memcpy(s->exprs, exprs, (size_t)nexprs * sizeof *exprs);
  if (nstmts && stmts)
    memcpy(s->stmts, stmts, (size_t)nstmts * sizeof *stmts);
  if (psize)
    memcpy(&s->u, payload, psize);
  return s;
}

static bool scalar_int(const te_expr *e) {
  return ir_is_intlike(e->dtype) && !ir_is_bool(e->dtype) && e->dtype.lanes == 1;
}

ir_stmt *ir_for(te_expr *var, te_expr *min, te_expr *extent, ir_for_kind kind, te_thread_tag tag,
                ir_stmt *body) {
  if (!var || !min || !extent || !body)
    return NULL;
  te_ctx *ctx = var->ctx;
  if (!ir_check(ctx,
                var->kind == IR_VAR && scalar_int(min) && ir_dtype_eq(min->dtype, extent->dtype),
                "ir_for: a variable and integer bounds of one dtype expected"))
    return NULL;
  ir_loop_info info = {kind, tag};
  te_expr *e[3] = {var, min, extent};
  return ir_stmt_make(ctx, IR_S_FOR, 3, e, 1, &body, &info);
}

ir_stmt *ir_store(ir_buffer *buf, te_expr *value, te_expr *index) {
  if (!buf || !value || !index)
    return NULL;
  te_ctx *ctx = value->ctx;
  if (!ir_check(ctx, ir_is_intlike(index->dtype) && index->dtype.lanes == value->dtype.lanes,
                "ir_store: integer index with the lanes of the value expected"))
    return NULL;
  te_expr *e[2] = {value, index};
  return ir_stmt_make(ctx, IR_S_STORE, 2, e, 0, NULL, &buf);
}

ir_stmt *ir_provide(te_tensor *t, te_expr *value, int n, te_expr *const idx[]) {
  if (!t || !value || n < 0 || n >= TE_MAX_DIMS + 1)
    return NULL;
  te_expr *e[TE_MAX_DIMS + 1];
  e[0] = value;
  for (int i = 0; i < n; i++) {
    if (!idx[i])
      return NULL;
    if (!ir_check(value->ctx, scalar_int(idx[i]), "ir_provide: integer index expected"))
      return NULL;
    e[i + 1] = idx[i];
  }
  return ir_stmt_make(value->ctx, IR_S_PROVIDE, n + 1, e, 0, NULL, &t);
}

ir_stmt *ir_allocate(te_ctx *ctx, ir_buffer *buf, te_expr *count, ir_stmt *body) {
  if (!ctx || !buf || !count || !body)
    return NULL;
  if (!ir_check(ctx, scalar_int(count), "ir_allocate: integer element count expected"))
    return NULL;
  return ir_stmt_make(ctx, IR_S_ALLOCATE, 1, &count, 1, &body, &buf);
}

ir_stmt *ir_realize(te_tensor *t, te_scope scope, int ndim, te_expr *const mins[],
                    te_expr *const extents[], ir_stmt *body) {
  return ir_realize_ordered(t, scope, ndim, mins, extents, NULL, body);
}

ir_stmt *ir_realize_ordered(te_tensor *t, te_scope scope, int ndim, te_expr *const mins[],
                            te_expr *const extents[], const int8_t *order, ir_stmt *body) {
  return ir_realize_laid_out(t, scope, ndim, mins, extents, order ? ndim : 0, order, NULL, body);
}

ir_stmt *ir_realize_laid_out(te_tensor *t, te_scope scope, int ndim, te_expr *const mins[],
                             te_expr *const extents[], int norder, const int8_t *order,
                             const int64_t *split, ir_stmt *body) {
  if (!t || !body || ndim < 0 || ndim > TE_MAX_DIMS || norder < 0 || norder > 2 * ndim)
    return NULL;
  te_expr *e[2 * TE_MAX_DIMS + 1];
  for (int i = 0; i < ndim; i++) {
    if (!mins[i] || !extents[i])
      return NULL;
    e[2 * i] = mins[i];
    e[2 * i + 1] = extents[i];
  }
  te_ctx *ctx = t->ctx;
  ir_realize_info info = {t, scope, 0, {0}, {0}};
  bool identity = norder == ndim;
  for (int i = 0; order && i < norder; i++)
    identity &= order[i] == i;
  for (int d = 0; split && d < ndim; d++)
    identity &= split[d] <= 0;
  if (order && !identity) {
    info.norder = (int8_t)norder;
    memcpy(info.order, order, (size_t)norder);
    for (int d = 0; split && d < ndim; d++)
      info.split[d] = split[d] > 0 ? split[d] : 0;
  }
  return ir_stmt_make(ctx, IR_S_REALIZE, 2 * ndim, e, 1, &body, &info);
}

ir_stmt *ir_let_stmt(te_expr *var, te_expr *value, ir_stmt *body) {
  if (!var || !value || !body)
    return NULL;
  if (!ir_check(var->ctx, var->kind == IR_VAR && ir_dtype_eq(var->dtype, value->dtype),
                "ir_let_stmt: a variable and a value of its dtype expected"))
    return NULL;
  te_expr *e[2] = {var, value};
  return ir_stmt_make(var->ctx, IR_S_LET_STMT, 2, e, 1, &body, NULL);
}

ir_stmt *ir_if(te_expr *cond, ir_stmt *then_s, ir_stmt *else_s) {
  if (!cond || !then_s)
    return NULL;
  if (!ir_check(cond->ctx, ir_is_bool(cond->dtype) && cond->dtype.lanes == 1,
                "ir_if: scalar bool condition expected"))
    return NULL;
  ir_stmt *s[2] = {then_s, else_s};
  return ir_stmt_make(cond->ctx, IR_S_IF, 1, &cond, else_s ? 2 : 1, s, NULL);
}

static int seq_count(int n, ir_stmt *const stmts[]) {
  int c = 0;
  for (int i = 0; i < n; i++)
    if (stmts[i])
      c += stmts[i]->kind == IR_S_SEQ ? (int)stmts[i]->nstmts : 1;
  return c;
}

ir_stmt *ir_seq(te_ctx *ctx, int n, ir_stmt *const stmts[]) {
  if (!ctx || n <= 0)
    return NULL;
  int c = seq_count(n, stmts);
  if (c == 0)
    return NULL;
  if (c == 1)
    for (int i = 0; i < n; i++)
      if (stmts[i])
        return stmts[i]->kind == IR_S_SEQ ? stmts[i]->stmts[0] : stmts[i];
  ir_stmt *s = ir_stmt_make(ctx, IR_S_SEQ, 0, NULL, c, NULL, NULL);
  if (!s)
    return NULL;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (!stmts[i])
      continue;
    if (stmts[i]->kind == IR_S_SEQ)
      for (uint32_t j = 0; j < stmts[i]->nstmts; j++)
        s->stmts[k++] = stmts[i]->stmts[j];
    else
      s->stmts[k++] = stmts[i];
  }
  return s;
}

ir_stmt *ir_seq2(te_ctx *ctx, ir_stmt *a, ir_stmt *b) {
  ir_stmt *s[2] = {a, b};
  return ir_seq(ctx, 2, s);
}

ir_stmt *ir_evaluate(te_expr *e) {
  if (!e)
    return NULL;
  return ir_stmt_make(e->ctx, IR_S_EVALUATE, 1, &e, 0, NULL, NULL);
}

ir_stmt *ir_attr(te_ctx *ctx, const char *key, void *node, te_expr *value, ir_stmt *body) {
  if (!ctx || !key || !value || !body)
    return NULL;
  ir_attr_info info = {ir_strdup(ctx, key), node};
  if (!info.key)
    return NULL;
  return ir_stmt_make(ctx, IR_S_ATTR, 1, &value, 1, &body, &info);
}

ir_stmt *ir_assert(te_expr *cond, te_status st, const char *message, ir_stmt *body) {
  if (!body)
    return NULL;
  return ir_assert_values(cond, st, message, 0, NULL, body);
}

ir_stmt *ir_assert_values(te_expr *cond, te_status st, const char *message, int nvalues,
                          te_expr *const values[], ir_stmt *body) {
  if (!cond)
    return NULL;
  if (!ir_check(cond->ctx, ir_is_bool(cond->dtype) && cond->dtype.lanes == 1,
                "ir_assert: scalar bool condition expected"))
    return NULL;
  if (!ir_check(cond->ctx, nvalues >= 0 && nvalues <= 2, "ir_assert: at most two values"))
    return NULL;
  te_expr *exprs[3] = {cond};
  for (int i = 0; i < nvalues; i++) {
    if (!values[i])
      return NULL;
    if (!ir_check(cond->ctx, ir_dtype_eq(values[i]->dtype, TE_I64),
                  "ir_assert: i64 values expected"))
      return NULL;
    exprs[i + 1] = values[i];
  }
  ir_assert_info info = {st, ir_strdup(cond->ctx, message ? message : "")};
  if (!info.message)
    return NULL;
  return ir_stmt_make(cond->ctx, IR_S_ASSERT, 1 + nvalues, exprs, body ? 1 : 0, &body, &info);
}

ir_stmt *ir_barrier(te_ctx *ctx) { return ir_stmt_make(ctx, IR_S_BARRIER, 0, NULL, 0, NULL, NULL); }

ir_stmt *ir_call_extern(te_ctx *ctx, ir_extern_call *call, int nexprs, te_expr *const exprs[]) {
  if (!call)
    return NULL;
  return ir_stmt_make(ctx, IR_S_CALL_EXTERN, nexprs, exprs, 0, NULL, &call);
}

ir_buffer *ir_buffer_new(te_ctx *ctx, const char *name, te_dtype t, int ndim,
                         te_expr *const shape[], te_scope scope, te_tensor *tensor, int arg_index) {
  if (!ctx || ndim < 0)
    return NULL;
  for (int i = 0; i < ndim; i++)
    if (!shape[i])
      return NULL;
  ir_buffer *b = ir_alloc(ctx, sizeof *b);
  te_expr **sh = b ? ir_alloc(ctx, (size_t)(ndim ? ndim : 1) * sizeof *sh) : NULL;
  if (!sh)
    return NULL;
  b->name = ir_strdup(ctx, name ? name : "buf");
  if (!b->name)
    return NULL;
  b->dtype = ir_elem(t);
  b->ndim = ndim;
  if (ndim)
    memcpy(sh, shape, (size_t)ndim * sizeof *sh);
  b->shape = sh;
  b->scope = scope;
  b->tensor = tensor;
  b->arg_index = arg_index;
  return b;
}
