/* make_entry.c — pass "make_entry": the kernel's calling convention as IR (Halide's
 * AddImageChecks, TVM's MakePackedAPI).
 *
 * Needs: the finished body (after make_closures; for a GPU target the host part gpu_split
 * left, with lw_func::gpu). Guarantees: every tensor argument has a handle (lw_arg::handle, the
 * DLTensor * the entry receives) and the body is the entry:
 *     <checks of each tensor>                 asserts on dl_* reads of its handle
 *     let A.data = ptr_add(dl_data(A), dl_byte_offset(A))     (with the tensor's checks)
 *     let n = dl_extent(A, 0)  assert(n >= 1)  each symbolic size, from where args.c found it
 *     <extents, element counts, strides>      each dimension against its expression
 *     <no overlap>                            outputs against every other argument
 *     bind A = A.data  ...                    each argument buffer at its address
 *     compute_scope NAME_impl(args..., sizes...) { <the body> }
 * Every target's entry is this statement: the CPU JIT, static libraries and the CUDA host entry
 * translate it to LLVM (codegen/llvm_entry.c), the Vulkan host runs it before its copies
 * (codegen/vulkan_entry.c). What depends on the target comes from lw_abi_of (abi.c).
 *
 * The checks, in order, with the messages users see (codegen prefixes "kernel 'NAME': "):
 *   1. per tensor: not NULL (TE_ERR_INVALID_ARG); on the target's device (TE_ERR_INVALID_ARG);
 *      rank (TE_ERR_SHAPE); dtype code, bits, lanes (TE_ERR_TYPE: one compare of the whole
 *      DLDataType, then, when it differs, which field; bool tensors in the layouts numpy and TVM
 *      use: {kDLUInt, 8}, {kDLBool (6), 8}, {kDLUInt, 1}); data not NULL and, where
 *      the code works in place, data + byte_offset aligned to the element size
 *      (TE_ERR_INVALID_ARG); a shape array when ndim > 0 (TE_ERR_SHAPE);
 *   2. each symbolic size >= 1 (TE_ERR_SHAPE; below 2^31 too for 32-bit devices);
 *      Each stride variable of a strided placeholder (te_placeholder_strided) is bound from
 *      its dimension's stride (the compact one when strides is NULL) and must be >= 0;
 *   3. per tensor and dimension: the extent equals its expression (TE_ERR_SHAPE), for 32-bit
 *      devices the element count so far is below 2^31, then the strides are NULL or compact
 *      row-major (a dimension of extent 1 may have any stride, as DLPack allows; TE_ERR_SHAPE);
 *      a strided tensor's declared strides that are not its own stride variables are checked
 *      instead (TE_ERR_SHAPE, expected and got);
 *   4. where the code works in place, no written tensor overlaps another argument's bytes
 *      (TE_ERR_INVALID_ARG): the body's noalias depends on it.
 * A tensor's layout — where its element 0 is and how an index maps to memory — is data +
 * byte_offset (tensor_address) and, in tensor_layout(), compact strides (checked) or a strided
 * tensor's declared ones (bound or checked); storage_flatten indexes with the same strides. The
 * overlap check of a strided tensor covers its elements' whole span.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "lower.h"

typedef enum item_kind { ITEM_ASSERT, ITEM_LET, ITEM_BIND, ITEM_STMT } item_kind;

/* One statement of the prologue; the prologue is folded around the compute_scope at the end. */
typedef struct item {
  item_kind kind;
  te_expr *cond;  /* ASSERT; LET: the variable */
  te_expr *value; /* LET, BIND: the value */
  te_expr *vals[2];
  int nvals;
  te_status status;
  const char *msg;
  ir_buffer *buffer; /* BIND */
  ir_stmt *stmt;     /* STMT: a whole statement (the strides' if) */
} item;

typedef struct tensor_arg {
  ir_buffer *buf;
  int pos;         /* position among the entry's tensors (they come first) */
  char what[200];  /* "argument 'A' (#0)" */
  te_expr *handle; /* the DLTensor * */
  te_expr *data;   /* the address of element 0 */
} tensor_arg;

typedef struct entry {
  lw_pass_ctx *p;
  te_ctx *ctx;
  const lw_abi *abi;
  int n, cap;
  item *items;
  bool failed;
} entry;

static void push(entry *e, item it) {
  if (e->n == e->cap) {
    int cap = e->cap ? 2 * e->cap : 64;
    item *a = ir_alloc(e->ctx, sizeof *a * (size_t)cap);
    if (!a) {
      e->failed = true;
      return;
    }
    if (e->n)
      memcpy(a, e->items, sizeof *a * (size_t)e->n);
    e->items = a, e->cap = cap;
  }
  e->items[e->n++] = it;
}

static const char *msgf(entry *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *msgf(entry *e, const char *fmt, ...) {
  char buf[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  const char *s = ir_strdup(e->ctx, buf);
  if (!s)
    e->failed = true;
  return s;
}

/* assert(cond, status, msg[, expected], got); a NULL operand (out of memory) fails the pass. */
static void check(entry *e, te_expr *cond, te_status st, const char *msg, te_expr *expected,
                  te_expr *got) {
  item it = {.kind = ITEM_ASSERT, .cond = cond, .status = st, .msg = msg};
  if (expected)
    it.vals[it.nvals++] = ir_cast(TE_I64, expected);
  if (got)
    it.vals[it.nvals++] = ir_cast(TE_I64, got);
  for (int i = 0; i < it.nvals; i++)
    e->failed = e->failed || !it.vals[i];
  e->failed = e->failed || !cond || !msg;
  push(e, it);
}

static void let(entry *e, te_expr *var, te_expr *value) {
  e->failed = e->failed || !var || !value;
  push(e, (item){.kind = ITEM_LET, .cond = var, .value = value});
}

static te_expr *i64c(entry *e, int64_t v) { return ir_i64(e->ctx, v); }

static te_expr *dl(entry *e, ir_intrin id, te_dtype t, te_expr *handle) {
  return ir_call(e->ctx, id, t, 1, &handle);
}

static te_expr *dl_dim(entry *e, ir_intrin id, te_expr *handle, int d) {
  te_expr *args[2] = {handle, i64c(e, d)};
  return ir_call(e->ctx, id, TE_I64, 2, args);
}

static te_expr *isnull(entry *e, te_expr *h) {
  return h ? ir_call(e->ctx, IR_INTRIN_ISNULL, TE_BOOL, 1, &h) : NULL;
}
static te_expr *eq(te_expr *a, te_expr *b) { return ir_binary(IR_EQ, a, b); }
static te_expr *or2(te_expr *a, te_expr *b) { return ir_binary(IR_OR, a, b); }
static te_expr *and2(te_expr *a, te_expr *b) { return ir_binary(IR_AND, a, b); }

/* True when cond is known to hold (constant shapes against a limit): no check is needed. */
static bool always(entry *e, te_expr *cond) {
  te_expr *s = cond ? ir_simplify(e->p->an, cond) : NULL;
  int64_t v;
  return s && ir_is_const_int(s, &v) && v == 1;
}

/* The product of a buffer's extents from dimension `from` to `to` (exclusive), simplified. */
static te_expr *extent_product(entry *e, const ir_buffer *b, int from, int to) {
  te_expr *p = i64c(e, 1);
  for (int d = from; d < to && p; d++)
    p = ir_mul(p, ir_cast(TE_I64, b->shape[d]));
  return p ? ir_simplify(e->p->an, p) : NULL;
}

static void check_dtype(entry *e, tensor_arg *a) {
  te_dtype t = a->buf->dtype;
  te_expr *code = dl(e, IR_INTRIN_DL_DTYPE_CODE, TE_U8, a->handle);
  te_expr *bits = dl(e, IR_INTRIN_DL_DTYPE_BITS, TE_U8, a->handle);
  te_expr *lanes = dl(e, IR_INTRIN_DL_DTYPE_LANES, TE_U16, a->handle);
  te_expr *one_lane = eq(lanes, ir_int(e->ctx, TE_U16, 1));
  if (ir_is_bool(t)) {
    te_expr *u8 =
        and2(eq(code, ir_int(e->ctx, TE_U8, kDLUInt)), eq(bits, ir_int(e->ctx, TE_U8, 8)));
    te_expr *b8 = and2(eq(code, ir_int(e->ctx, TE_U8, 6)), eq(bits, ir_int(e->ctx, TE_U8, 8)));
    te_expr *u1 =
        and2(eq(code, ir_int(e->ctx, TE_U8, kDLUInt)), eq(bits, ir_int(e->ctx, TE_U8, 1)));
    check(e, and2(or2(or2(u8, b8), u1), one_lane), TE_ERR_TYPE,
          msgf(e,
               "%s must be bool (one byte an element: DLPack {kDLUInt, 8}, {kDLBool, 8} or "
               "{kDLUInt, 1}, lanes 1)",
               a->what),
          NULL, NULL);
    return;
  }
  /* if (dtype word wrong) { which field: code, bits, lanes }: one compare when it is right */
  char name[32];
  ir_dtype_name(t, name, sizeof name);
  te_expr *got[3] = {code, bits, lanes};
  unsigned want[3] = {t.code, t.bits, 1};
  const char *field[3] = {"code", "bits", "lanes"};
  ir_stmt *fields = NULL;
  for (int i = 2; i >= 0 && !e->failed; i--) {
    te_expr *w = got[i] ? ir_int(e->ctx, got[i]->dtype, want[i]) : NULL;
    te_expr *vals[2] = {i64c(e, want[i]), got[i] ? ir_cast(TE_I64, got[i]) : NULL};
    fields = vals[1] ? ir_assert_values(eq(got[i], w), TE_ERR_TYPE,
                                        msgf(e, "%s must be %s; dtype %s", a->what, name, field[i]),
                                        2, vals, fields)
                     : NULL;
    e->failed = e->failed || !fields;
  }
  te_expr *word = ir_int(e->ctx, TE_U32, (int64_t)t.code | (int64_t)t.bits << 8 | 1 << 16);
  te_expr *wrong = ir_binary(IR_NE, dl(e, IR_INTRIN_DL_DTYPE, TE_U32, a->handle), word);
  ir_stmt *s = wrong && fields ? ir_if(wrong, fields, NULL) : NULL;
  e->failed = e->failed || !s;
  push(e, (item){.kind = ITEM_STMT, .stmt = s});
}

/* Where element 0 of a tensor is (data + byte_offset), and that the code may use it there. */
static void tensor_address(entry *e, tensor_arg *a) {
  te_expr *args[2] = {dl(e, IR_INTRIN_DL_DATA, IR_HANDLE, a->handle),
                      dl(e, IR_INTRIN_DL_BYTE_OFFSET, TE_U64, a->handle)};
  check(e, ir_not(isnull(e, args[0])), TE_ERR_INVALID_ARG,
        msgf(e, "%s has a NULL data pointer", a->what), NULL, NULL);
  char name[220];
  snprintf(name, sizeof name, "%s.data", a->buf->name);
  a->data = ir_var_new(e->ctx, name, IR_HANDLE, IR_VAR_HANDLE);
  let(e, a->data,
      args[0] && args[1] ? ir_call(e->ctx, IR_INTRIN_PTR_ADD, IR_HANDLE, 2, args) : NULL);
  int bytes = ir_dtype_bytes(a->buf->dtype);
  if (e->abi->in_place && bytes > 1) { /* loads and stores assume the element's alignment */
    te_expr *addr = a->data ? ir_cast(TE_U64, a->data) : NULL;
    check(e, eq(ir_floormod(addr, ir_int(e->ctx, TE_U64, bytes)), ir_int(e->ctx, TE_U64, 0)),
          TE_ERR_INVALID_ARG,
          msgf(e,
               "%s data pointer (data + byte_offset) is not aligned to its element size (%d "
               "bytes)",
               a->what, bytes),
          NULL, NULL);
  }
}

/* 1. What a tensor must be before anything reads its shape or memory. */
static void check_tensor(entry *e, tensor_arg *a) {
  const lw_abi *abi = e->abi;
  check(e, ir_not(isnull(e, a->handle)), TE_ERR_INVALID_ARG, msgf(e, "%s is NULL", a->what), NULL,
        NULL);
  te_expr *dev = dl(e, IR_INTRIN_DL_DEVICE_TYPE, TE_I32, a->handle);
  te_expr *on = eq(dev, ir_int(e->ctx, TE_I32, abi->device_type));
  if (abi->device_type_also)
    on = or2(on, eq(dev, ir_int(e->ctx, TE_I32, abi->device_type_also)));
  check(e, on, TE_ERR_INVALID_ARG, msgf(e, "%s device_type (%s)", a->what, abi->device_rule),
        i64c(e, abi->device_type), dev);
  te_expr *ndim = dl(e, IR_INTRIN_DL_NDIM, TE_I32, a->handle);
  check(e, eq(ndim, ir_int(e->ctx, TE_I32, a->buf->ndim)), TE_ERR_SHAPE,
        msgf(e, "%s ndim", a->what), i64c(e, a->buf->ndim), ndim);
  check_dtype(e, a);
  tensor_address(e, a);
  if (a->buf->ndim > 0)
    check(e, ir_not(isnull(e, dl(e, IR_INTRIN_DL_SHAPE, IR_HANDLE, a->handle))), TE_ERR_SHAPE,
          msgf(e, "%s has a NULL shape", a->what), NULL, NULL);
}

/* The stride of dimension d as the tensor has it: strides[d], or the compact row-major one when
   its strides are NULL (only the side taken is read). */
static te_expr *actual_stride(entry *e, tensor_arg *a, int d) {
  te_expr *args[3] = {isnull(e, dl(e, IR_INTRIN_DL_STRIDES, IR_HANDLE, a->handle)),
                      extent_product(e, a->buf, d + 1, a->buf->ndim),
                      dl_dim(e, IR_INTRIN_DL_STRIDE, a->handle, d)};
  if (!args[0] || !args[1] || !args[2])
    return NULL;
  return ir_call(e->ctx, IR_INTRIN_IF_THEN_ELSE, TE_I64, 3, args);
}

/* A stride variable: bound from the stride of its dimension, which must be >= 0. */
static void bind_stride(entry *e, tensor_arg *a, int d, te_expr *var) {
  let(e, var, ir_cast(var->dtype, actual_stride(e, a, d)));
  te_expr *v = ir_cast(TE_I64, var);
  check(e, ir_binary(IR_GE, v, i64c(e, 0)), TE_ERR_SHAPE,
        msgf(e, "%s dim %d stride (the stride variable '%s') must be >= 0", a->what, d,
             var->u.var.name),
        NULL, v);
}

/* 2. Each symbolic size, read from the tensor and dimension args.c chose for it; then each
   stride variable. */
static void bind_sizes(entry *e, tensor_arg *targs) {
  lw_func *f = e->p->func;
  for (int k = 0; k < f->nsizes && !e->failed; k++) {
    int ai = f->size_arg[k], d = f->size_dim[k];
    if (!ir_check(e->ctx, ai >= 0 && ai < f->nargs && f->args[ai].is_buffer, "size argument") ||
        !ir_check(e->ctx, d >= 0 && d < f->args[ai].buffer->ndim, "size dimension")) {
      e->failed = true;
      return;
    }
    tensor_arg *a = &targs[ai];
    te_expr *var = f->size_vars[k];
    if (lw_size_is_stride(f, k)) {
      bind_stride(e, a, d, var);
      continue;
    }
    let(e, var, ir_cast(var->dtype, dl_dim(e, IR_INTRIN_DL_EXTENT, a->handle, d)));
    te_expr *v = ir_cast(TE_I64, var);
    te_expr *ok = ir_binary(IR_GE, v, i64c(e, 1));
    if (e->abi->index32)
      check(e, and2(ok, ir_lt(v, i64c(e, (int64_t)1 << 31))), TE_ERR_SHAPE,
            msgf(e,
                 "%s dim %d extent (the symbolic size '%s') must be in [1, 2^31) for a %s "
                 "kernel",
                 a->what, d, var->u.var.name, e->abi->target_name),
            NULL, v);
    else
      check(e, ok, TE_ERR_SHAPE,
            msgf(e, "%s dim %d extent (the symbolic size '%s') must be >= 1", a->what, d,
                 var->u.var.name),
            NULL, NULL);
  }
}

/* Whether x is the size (stride false) or stride variable bound from dimension dim of arg. */
static bool is_size_of(const lw_func *f, te_expr *x, int arg, int dim, bool stride) {
  for (int k = 0; k < f->nsizes; k++)
    if (f->size_vars[k] == x)
      return f->size_arg[k] == arg && f->size_dim[k] == dim && lw_size_is_stride(f, k) == stride;
  return false;
}

/* A strided tensor's declared strides: each that is not the stride variable bound from that
   dimension is checked against the tensor's (a dimension of extent 1 may have any stride). */
static void check_declared_strides(entry *e, tensor_arg *a, int arg) {
  const ir_buffer *b = a->buf;
  for (int d = 0; d < b->ndim && !e->failed; d++) {
    if (is_size_of(e->p->func, b->strides[d], arg, d, true))
      continue;
    int64_t ext;
    if (ir_is_const_int(b->shape[d], &ext) && ext == 1)
      continue;
    te_expr *got = actual_stride(e, a, d), *want = b->strides[d];
    te_expr *ok = or2(eq(got, want), eq(ir_cast(TE_I64, b->shape[d]), i64c(e, 1)));
    check(e, ok, TE_ERR_SHAPE, msgf(e, "%s dim %d stride (as the tensor declares it)", a->what, d),
          want, got);
  }
}

/* 3. The tensor's layout: each extent against its expression, then compact row-major strides,
   or a strided tensor's declared strides (its stride variables are bound with the sizes). */
static void tensor_layout(entry *e, tensor_arg *a, int arg) {
  const ir_buffer *b = a->buf;
  for (int d = 0; d < b->ndim; d++) {
    te_expr *got = dl_dim(e, IR_INTRIN_DL_EXTENT, a->handle, d);
    te_expr *want = ir_cast(TE_I64, b->shape[d]);
    if (!is_size_of(e->p->func, b->shape[d], arg, d, false)) /* a size's own dim holds it */
      check(e, eq(got, want), TE_ERR_SHAPE, msgf(e, "%s dim %d extent", a->what, d), want, got);
    if (e->abi->index32) {
      te_expr *count = extent_product(e, b, 0, d + 1);
      te_expr *fits = ir_lt(count, i64c(e, (int64_t)1 << 31));
      if (!always(e, fits))
        check(e, fits, TE_ERR_SHAPE,
              msgf(e, "%s has 2^31 elements or more; %s kernels index with 32 bits", a->what,
                   e->abi->target_name),
              NULL, NULL);
    }
  }
  if (b->strides) {
    check_declared_strides(e, a, arg);
    return;
  }
  ir_stmt *strides = NULL; /* if (strides) { each dimension, innermost first } */
  for (int d = b->ndim - 1; d >= 0 && !e->failed; d--) {
    te_expr *expect = extent_product(e, b, d + 1, b->ndim);
    te_expr *st = dl_dim(e, IR_INTRIN_DL_STRIDE, a->handle, d);
    te_expr *ok = eq(st, expect);
    int64_t ext;
    if (ir_is_const_int(b->shape[d], &ext)) {
      if (ext == 1) /* any stride: DLPack allows it for a dimension of extent 1 */
        continue;
    } else {
      ok = or2(ok, eq(ir_cast(TE_I64, b->shape[d]), i64c(e, 1)));
    }
    ir_stmt *s = ir_assert_values(
        ok, TE_ERR_SHAPE,
        msgf(e, "%s dim %d stride (only compact row-major tensors are accepted)", a->what, d), 2,
        (te_expr *const[]){expect, st}, NULL);
    strides = s ? ir_seq2(e->ctx, strides, s) : NULL;
    e->failed = e->failed || !strides;
  }
  if (strides) {
    te_expr *has = ir_not(isnull(e, dl(e, IR_INTRIN_DL_STRIDES, IR_HANDLE, a->handle)));
    ir_stmt *s = has ? ir_if(has, strides, NULL) : NULL;
    e->failed = e->failed || !s;
    push(e, (item){.kind = ITEM_STMT, .stmt = s});
  }
}

static int find_written(ir_visitor *v, ir_stmt *s) {
  if (!ir_map_put(v->data, s->u.buffer, s->u.buffer))
    return IR_ABORT;
  return IR_CONTINUE;
}

/* An extern's output is written by its function. */
static int find_extern_written(ir_visitor *v, ir_stmt *s) {
  ir_buffer *out = s->u.ext->buffers[s->u.ext->nargs - 1];
  return ir_map_put(v->data, out, out) ? IR_CONTINUE : IR_ABORT;
}

/* How many elements from element 0 a buffer's memory reaches: the element count, or for a
   strided buffer 1 + sum (extent_d - 1) * stride_d (the last element's index, plus one). */
static te_expr *span(entry *e, const ir_buffer *b) {
  if (!b->strides)
    return extent_product(e, b, 0, b->ndim);
  te_expr *n = i64c(e, 1);
  for (int d = 0; d < b->ndim && n; d++)
    n = ir_add(n, ir_mul(ir_sub(ir_cast(TE_I64, b->shape[d]), i64c(e, 1)), b->strides[d]));
  return n ? ir_simplify(e->p->an, n) : NULL;
}

/* 4. No tensor the kernel writes shares bytes with another argument. */
static void check_overlap(entry *e, tensor_arg *targs, ir_stmt *body) {
  lw_func *f = e->p->func;
  ir_map *written = ir_map_new(e->ctx);
  ir_visitor v = {.data = written};
  v.stmt[IR_S_STORE] = find_written;
  v.stmt[IR_S_CALL_EXTERN] = find_extern_written;
  if (!written || ir_visit_stmt(&v, body) == IR_ABORT) {
    e->failed = true;
    return;
  }
  for (int i = 0; i < f->nargs; i++)
    for (int j = i + 1; j < f->nargs && !e->failed; j++) {
      if (!f->args[i].is_buffer || !f->args[j].is_buffer)
        continue;
      tensor_arg *a = &targs[i], *b = &targs[j];
      bool wa = ir_map_get(written, a->buf) || lw_gpu_writes(f, a->buf);
      bool wb = ir_map_get(written, b->buf) || lw_gpu_writes(f, b->buf);
      if (!wa && !wb)
        continue;
      te_expr *ab = ir_cast(TE_U64, a->data), *bb = ir_cast(TE_U64, b->data);
      te_expr *bytes_a = ir_mul(span(e, a->buf), i64c(e, ir_dtype_bytes(a->buf->dtype)));
      te_expr *bytes_b = ir_mul(span(e, b->buf), i64c(e, ir_dtype_bytes(b->buf->dtype)));
      te_expr *ae = ir_add(ab, ir_cast(TE_U64, bytes_a ? ir_simplify(e->p->an, bytes_a) : NULL));
      te_expr *be = ir_add(bb, ir_cast(TE_U64, bytes_b ? ir_simplify(e->p->an, bytes_b) : NULL));
      check(e, ir_not(and2(ir_lt(ab, be), ir_lt(bb, ae))), TE_ERR_INVALID_ARG,
            msgf(e,
                 "arguments '%s' (#%d) and '%s' (#%d) overlap in memory; a tensor the kernel "
                 "writes must not share memory with another argument",
                 a->buf->name, a->pos, b->buf->name, b->pos),
            NULL, NULL);
    }
}

/* The kernel body as the function the entry calls: arguments in order, then the sizes. */
static ir_stmt *compute_scope(entry *e, ir_stmt *body) {
  lw_func *f = e->p->func;
  ir_closure *c = ir_alloc(e->ctx, sizeof *c);
  ir_capture *caps = ir_alloc(e->ctx, sizeof *caps * (size_t)(f->nargs + f->nsizes + 1));
  char name[300];
  snprintf(name, sizeof name, "%s_impl", f->name);
  if (!c || !caps || !(c->name = ir_strdup(e->ctx, name)))
    return NULL;
  for (int i = 0; i < f->nargs; i++)
    caps[i] = f->args[i].is_buffer ? (ir_capture){NULL, f->args[i].buffer}
                                   : (ir_capture){f->args[i].var, NULL};
  for (int k = 0; k < f->nsizes; k++)
    caps[f->nargs + k] = (ir_capture){f->size_vars[k], NULL};
  c->ncaptures = f->nargs + f->nsizes;
  c->captures = caps;
  return ir_attr(e->ctx, "compute_scope", c, i64c(e, 0), body);
}

/* The prologue folded around the compute_scope, last item innermost. */
static ir_stmt *fold(entry *e, ir_stmt *rest) {
  for (int i = e->n - 1; i >= 0 && rest; i--) {
    item *it = &e->items[i];
    switch (it->kind) {
    case ITEM_ASSERT:
      rest = ir_assert_values(it->cond, it->status, it->msg, it->nvals, it->vals, rest);
      break;
    case ITEM_LET:
      rest = ir_let_stmt(it->cond, it->value, rest);
      break;
    case ITEM_BIND:
      rest = ir_attr(e->ctx, "buffer_bind", it->buffer, it->value, rest);
      break;
    case ITEM_STMT:
      rest = ir_seq2(e->ctx, it->stmt, rest);
      break;
    }
  }
  return rest;
}

ir_stmt *lw_make_entry(lw_pass_ctx *p, ir_stmt *body) {
  lw_func *f = p->func;
  entry e = {.p = p, .ctx = p->ctx, .abi = lw_abi_of(p)};
  tensor_arg *targs = ir_alloc(p->ctx, sizeof *targs * (size_t)(f->nargs + 1));
  if (!targs)
    return NULL;
  int pos = 0;
  for (int i = 0; i < f->nargs; i++) {
    if (!f->args[i].is_buffer)
      continue;
    tensor_arg *a = &targs[i];
    a->buf = f->args[i].buffer;
    a->pos = pos++;
    snprintf(a->what, sizeof a->what, "argument '%s' (#%d)", a->buf->name ? a->buf->name : "arg",
             a->pos);
    a->handle = f->args[i].handle =
        ir_var_new(p->ctx, a->buf->name ? a->buf->name : "arg", IR_HANDLE, IR_VAR_HANDLE);
    if (!a->handle)
      return NULL;
    check_tensor(&e, a);
  }
  bind_sizes(&e, targs);
  for (int i = 0; i < f->nargs && !e.failed; i++)
    if (f->args[i].is_buffer)
      tensor_layout(&e, &targs[i], i);
  if (e.abi->in_place)
    check_overlap(&e, targs, body);
  for (int i = 0; i < f->nargs; i++)
    if (f->args[i].is_buffer)
      push(&e, (item){.kind = ITEM_BIND, .buffer = targs[i].buf, .value = targs[i].data});
  if (e.failed)
    return ir_failed(p->ctx)
               ? NULL
               : (ir_error(p->ctx, TE_ERR_INTERNAL, "internal: make_entry failed"), NULL);
  return fold(&e, compute_scope(&e, body));
}
