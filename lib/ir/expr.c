/* expr.c — expression constructors: ir_make (hash-consed) and the typed ir_* constructors.
 *
 * ir_* constructors do no promotion: they check the invariants of the node they make with
 * ir_check (TE_ERR_INTERNAL: a caller inside te built a bad node) and return NULL, without a new
 * error, when an operand is NULL. The public te_* functions (expr_api.c) check the user's types
 * and promote before calling these.
 */
#include <string.h>

#include "base/ctx_internal.h"
#include "cons.h"

/* Bytes of the payload (u member) a node kind carries. */
static size_t payload_size(ir_expr_kind k) {
  switch (k) {
  case IR_INT:
    return sizeof(int64_t);
  case IR_FLOAT:
    return sizeof(double);
  case IR_VAR:
    return sizeof(ir_var_info);
  case IR_CALL:
    return sizeof(ir_intrin);
  case IR_ACCESS:
    return sizeof(te_tensor *);
  case IR_LOAD:
    return sizeof(ir_buffer *);
  case IR_REDUCE:
    return sizeof(ir_reduce *);
  default:
    return 0;
  }
}

/* Wraps v to the width of an int/uint/bool dtype (the canonical value of an immediate). */
static int64_t wrap_int(te_dtype t, int64_t v) {
  if (t.bits >= 64)
    return v;
  uint64_t mask = ((uint64_t)1 << t.bits) - 1, u = (uint64_t)v & mask;
  if (t.code == kDLInt && (u >> (t.bits - 1)) & 1)
    u |= ~mask;
  return (int64_t)u;
}

static te_expr *alloc_node(te_ctx *ctx, int nargs) {
  te_expr *e = ir_alloc(ctx, sizeof *e + (size_t)nargs * sizeof(te_expr *));
  if (e)
    e->args = (te_expr **)(e + 1);
  return e;
}

static te_expr *make_var(te_ctx *ctx, te_dtype t, const ir_var_info *info) {
  te_expr *e = alloc_node(ctx, 0);
  if (!e)
    return NULL;
  e->kind = IR_VAR;
  e->dtype = t;
  e->ctx = ctx;
  e->u.var = *info;
  e->u.var.id = ctx->next_var_id++;
  e->hash = e->u.var.id * 2654435761u;
  return e;
}

te_expr *ir_make(te_ctx *ctx, ir_expr_kind kind, te_dtype dtype, int nargs, te_expr *const args[],
                 const void *payload) {
  if (!ctx)
    return NULL;
  for (int i = 0; i < nargs; i++)
    if (!args[i])
      return NULL;
  if (!ir_check(ctx, (unsigned)kind < IR_EXPR_COUNT, "ir_make: bad expression kind"))
    return NULL;
  int want = ir_expr_kind_nargs[kind];
  if (!ir_check(ctx, nargs >= 0 && nargs <= UINT16_MAX && (want < 0 || want == nargs),
                "ir_make: wrong number of children"))
    return NULL;
  for (int i = 0; i < nargs; i++)
    if (!ir_check(ctx, args[i]->ctx == ctx, "ir_make: child from another context"))
      return NULL;
  size_t psize = payload_size(kind);
  if (!ir_check(ctx, psize == 0 || payload, "ir_make: missing payload"))
    return NULL;
  if (kind == IR_VAR)
    return make_var(ctx, dtype, payload);

  /* The key lives on the stack; its args point at the caller's array until it is copied. */
  te_expr key;
  memset(&key, 0, sizeof key);
  key.kind = (uint16_t)kind;
  key.nargs = (uint16_t)nargs;
  key.dtype = dtype;
  key.ctx = ctx;
  key.args = (te_expr **)args;
  if (psize && payload)
    memcpy(&key.u, payload, psize);
  if (kind == IR_INT)
    key.u.i = wrap_int(dtype, key.u.i);
  key.hash = ir_cons_hash(&key);
  te_expr *found = ir_cons_find(ctx, &key);
  if (found)
    return found;

  te_expr *e = alloc_node(ctx, nargs);
  if (!e)
    return NULL;
  te_expr **slot = e->args;
  *e = key;
  e->args = slot;
  if (nargs)
    memcpy(e->args, args, (size_t)nargs * sizeof *args);
  if (!ir_cons_insert(ctx, e))
    return NULL;
  return e;
}

/* ---------------------------------------------------------------- leaves */

te_expr *ir_int(te_ctx *ctx, te_dtype t, int64_t v) {
  if (!ctx)
    return NULL;
  if (!ir_check(ctx, ir_is_intlike(t), "ir_int: not an integer dtype"))
    return NULL;
  return ir_make(ctx, IR_INT, t, 0, NULL, &v);
}

te_expr *ir_i64(te_ctx *ctx, int64_t v) { return ir_int(ctx, TE_I64, v); }
te_expr *ir_bool(te_ctx *ctx, bool b) { return ir_int(ctx, TE_BOOL, b ? 1 : 0); }

te_expr *ir_float(te_ctx *ctx, te_dtype t, double v) {
  if (!ctx)
    return NULL;
  if (!ir_check(ctx, ir_is_float(t), "ir_float: not a float dtype"))
    return NULL;
  v = ir_float_round(t, v);
  return ir_make(ctx, IR_FLOAT, t, 0, NULL, &v);
}

te_expr *ir_var_new(te_ctx *ctx, const char *name, te_dtype t, ir_var_kind kind) {
  if (!ctx)
    return NULL;
  ir_var_info info = {0};
  info.name = ir_strdup(ctx, name ? name : "v");
  if (!info.name)
    return NULL;
  info.kind = kind;
  return make_var(ctx, t, &info);
}

te_expr *ir_reduce_axis_new(te_ctx *ctx, const char *name, te_expr *min, te_expr *extent) {
  if (!ctx || !min || !extent)
    return NULL;
  if (!ir_check(ctx, ir_is_intlike(min->dtype) && ir_is_intlike(extent->dtype),
                "ir_reduce_axis_new: integer domain expected"))
    return NULL;
  te_expr *v = ir_var_new(ctx, name, TE_I64, IR_VAR_REDUCE);
  if (v) {
    v->u.var.dom_min = min;
    v->u.var.dom_extent = extent;
  }
  return v;
}

/* ---------------------------------------------------------------- operators */

static bool is_cmp(ir_expr_kind k) { return k >= IR_EQ && k <= IR_GE; }

te_expr *ir_binary(ir_expr_kind k, te_expr *a, te_expr *b) {
  if (!a || !b)
    return NULL;
  te_ctx *ctx = a->ctx;
  if (!ir_check(ctx, k >= IR_ADD && k <= IR_OR, "ir_binary: not a binary kind"))
    return NULL;
  if (!ir_check(ctx, ir_dtype_eq(a->dtype, b->dtype), "ir_binary: operand dtypes differ"))
    return NULL;
  te_dtype t = a->dtype;
  bool ok;
  if (k == IR_AND || k == IR_OR)
    ok = ir_is_bool(t);
  else if (k == IR_EQ || k == IR_NE)
    ok = true;
  else if (k == IR_DIV)
    ok = ir_is_float(t);
  else if (k >= IR_FLOORDIV && k <= IR_TRUNCMOD)
    ok = ir_is_intlike(t) && !ir_is_bool(t);
  else
    ok = !ir_is_bool(t);
  if (!ir_check(ctx, ok, "ir_binary: operation not defined for this dtype"))
    return NULL;
  te_expr *args[2] = {a, b};
  return ir_make(ctx, k, is_cmp(k) ? ir_bool_of(t) : t, 2, args, NULL);
}

te_expr *ir_not(te_expr *a) {
  if (!a)
    return NULL;
  if (!ir_check(a->ctx, ir_is_bool(a->dtype), "ir_not: bool operand expected"))
    return NULL;
  return ir_make(a->ctx, IR_NOT, a->dtype, 1, &a, NULL);
}

te_expr *ir_select(te_expr *c, te_expr *t, te_expr *f) {
  if (!c || !t || !f)
    return NULL;
  te_ctx *ctx = c->ctx;
  if (!ir_check(ctx,
                ir_is_bool(c->dtype) && (c->dtype.lanes == 1 || c->dtype.lanes == t->dtype.lanes),
                "ir_select: condition must be bool"))
    return NULL;
  if (!ir_check(ctx, ir_dtype_eq(t->dtype, f->dtype), "ir_select: branch dtypes differ"))
    return NULL;
  te_expr *args[3] = {c, t, f};
  return ir_make(ctx, IR_SELECT, t->dtype, 3, args, NULL);
}

te_expr *ir_cast(te_dtype t, te_expr *e) {
  if (!e)
    return NULL;
  if (ir_dtype_eq(t, e->dtype))
    return e;
  if (!ir_check(e->ctx, t.lanes == e->dtype.lanes, "ir_cast: lanes differ"))
    return NULL;
  return ir_make(e->ctx, IR_CAST, t, 1, &e, NULL);
}

te_expr *ir_call(te_ctx *ctx, ir_intrin id, te_dtype t, int n, te_expr *const args[]) {
  if (!ctx)
    return NULL;
  if (!ir_check(ctx, (unsigned)id < IR_INTRIN_COUNT, "ir_call: bad intrinsic"))
    return NULL;
  int want = ir_intrin_table[id].nargs;
  if (!ir_check(ctx, want < 0 || want == n, "ir_call: wrong argument count"))
    return NULL;
  return ir_make(ctx, IR_CALL, t, n, args, &id);
}

static bool index_ok(const te_expr *e) { return ir_is_intlike(e->dtype) && !ir_is_bool(e->dtype); }

te_expr *ir_access(te_tensor *tensor, int n, te_expr *const idx[]) {
  if (!tensor)
    return NULL;
  te_ctx *ctx = tensor->ctx;
  if (!ir_check(ctx, n == tensor->ndim, "ir_access: index count differs from the rank"))
    return NULL;
  for (int i = 0; i < n; i++) {
    if (!idx[i])
      return NULL;
    if (!ir_check(ctx, index_ok(idx[i]) && idx[i]->dtype.lanes == 1,
                  "ir_access: integer index expected"))
      return NULL;
  }
  return ir_make(ctx, IR_ACCESS, tensor->dtype, n, idx, &tensor);
}

te_expr *ir_load(ir_buffer *buf, te_dtype t, te_expr *index) {
  if (!buf || !index)
    return NULL;
  te_ctx *ctx = index->ctx;
  if (!ir_check(ctx, index_ok(index) && index->dtype.lanes == t.lanes,
                "ir_load: index must be an integer with the lanes of the value"))
    return NULL;
  if (!ir_check(ctx, ir_dtype_eq(ir_elem(t), buf->dtype),
                "ir_load: element type differs from the buffer's"))
    return NULL;
  return ir_make(ctx, IR_LOAD, t, 1, &index, &buf);
}

te_expr *ir_ramp(te_expr *base, te_expr *stride, int lanes) {
  if (!base || !stride)
    return NULL;
  te_ctx *ctx = base->ctx;
  if (!ir_check(ctx,
                index_ok(base) && base->dtype.lanes == 1 &&
                    ir_dtype_eq(base->dtype, stride->dtype) && lanes >= 1 && lanes <= UINT16_MAX,
                "ir_ramp: scalar integer base and stride of one dtype expected"))
    return NULL;
  te_expr *args[2] = {base, stride};
  return ir_make(ctx, IR_RAMP, ir_with_lanes(base->dtype, lanes), 2, args, NULL);
}

te_expr *ir_broadcast(te_expr *v, int lanes) {
  if (!v)
    return NULL;
  if (!ir_check(v->ctx, v->dtype.lanes == 1 && lanes >= 1 && lanes <= UINT16_MAX,
                "ir_broadcast: scalar value expected"))
    return NULL;
  return ir_make(v->ctx, IR_BROADCAST, ir_with_lanes(v->dtype, lanes), 1, &v, NULL);
}

te_expr *ir_let(te_expr *var, te_expr *value, te_expr *body) {
  if (!var || !value || !body)
    return NULL;
  if (!ir_check(var->ctx, var->kind == IR_VAR && ir_dtype_eq(var->dtype, value->dtype),
                "ir_let: a variable and a value of its dtype expected"))
    return NULL;
  te_expr *args[3] = {var, value, body};
  return ir_make(var->ctx, IR_LET, body->dtype, 3, args, NULL);
}

te_expr *ir_reduce_make(te_ctx *ctx, te_dtype t, const ir_reduce *r, int nsrc,
                        te_expr *const src[]) {
  if (!ctx || !r)
    return NULL;
  for (int i = 0; i < r->naxes; i++)
    if (!r->axes[i])
      return NULL;
  if (!ir_check(ctx, r->naxes >= 0 && nsrc >= 1 && r->value_index >= 0 && r->value_index < nsrc,
                "ir_reduce_make: bad reduction"))
    return NULL;
  for (int i = 0; i < r->naxes; i++)
    if (!ir_check(ctx, r->axes[i]->kind == IR_VAR, "ir_reduce_make: axes must be variables"))
      return NULL;
  if (r->cond &&
      !ir_check(ctx, ir_is_bool(r->cond->dtype), "ir_reduce_make: condition must be bool"))
    return NULL;
  ir_reduce *copy = ir_alloc(ctx, sizeof *copy);
  te_expr **axes = copy ? ir_alloc(ctx, (size_t)(r->naxes ? r->naxes : 1) * sizeof *axes) : NULL;
  if (!axes)
    return NULL;
  *copy = *r;
  if (r->naxes)
    memcpy(axes, r->axes, (size_t)r->naxes * sizeof *axes);
  copy->axes = axes;
  return ir_make(ctx, IR_REDUCE, t, nsrc, src, &copy);
}
