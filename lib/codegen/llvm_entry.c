/* llvm_entry.c — a kernel's typed entry point and the checks it makes on its arguments.
 *
 *   int32_t NAME(DLTensor *t0, ..., DLTensor *tN, <scalar> s0, ...)
 * checks every DLTensor before touching the memory it describes, then calls
 *   internal int32_t NAME_impl(T *noalias data0, ..., <scalar> s0, ..., int64_t size0, ...)
 * which holds the loops. The split lets the body say `noalias` about the data pointers (LLVM
 * keeps that as scoped metadata when it inlines the body); it holds because the entry refuses
 * an output that overlaps another argument in memory. Scalars are passed in their dtype (index
 * parameters as int64_t, f32 as float); a bool scalar is a byte (uint8_t, 0 or 1).
 *
 * The checks, in order, each returning a te_status with a message (te_rt_last_error):
 *   1. per tensor: not NULL (TE_ERR_INVALID_ARG), on the CPU (kDLCPU or kDLCUDAHost:
 *      TE_ERR_INVALID_ARG), rank (TE_ERR_SHAPE), dtype code/bits/lanes (TE_ERR_TYPE), data not
 *      NULL and data + byte_offset aligned to the element size (TE_ERR_INVALID_ARG);
 *   2. symbolic sizes read from the tensors named by lw_func (size_arg/size_dim), each >= 1;
 *   3. per tensor and dimension: the extent equals its expression (constants and expressions of
 *      symbolic sizes; TE_ERR_SHAPE), then the strides are NULL or compact row-major (dimensions
 *      of extent 1 may have any stride, as DLPack allows; TE_ERR_SHAPE);
 *   4. no written tensor overlaps another argument's bytes (TE_ERR_INVALID_ARG).
 * Bool tensors are accepted in the layouts numpy and TVM use: {kDLUInt, 8}, {kDLBool (6), 8}
 * and {kDLUInt, 1}, one byte per element. The data pointer is data + byte_offset.
 */
#include <stdio.h>
#include <string.h>

#include "lower/gpu.h"
#include "llvm_cg.h"

typedef struct cg_targ {
  ir_buffer *buf;
  int pos;        /* position among the tensors */
  char what[200]; /* "kernel 'k': argument 'A' (#0)" */
  LLVMValueRef dl, data, shape, strides;
} cg_targ;

static LLVMValueRef cg_dl_field(cg_llvm *cg, LLVMValueRef dl, unsigned i, int j, LLVMTypeRef t) {
  LLVMValueRef idx[3] = {LLVMConstInt(cg->t_i32, 0, 0), LLVMConstInt(cg->t_i32, i, 0),
                         LLVMConstInt(cg->t_i32, (unsigned)(j < 0 ? 0 : j), 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, cg->t_dltensor, dl, idx, j < 0 ? 2 : 3, "");
  return LLVMBuildLoad2(cg->b, t, p, "");
}

static LLVMValueRef cg_shape_at(cg_llvm *cg, LLVMValueRef arr, int d) {
  LLVMValueRef i = LLVMConstInt(cg->t_i64, (unsigned)d, 0);
  return LLVMBuildLoad2(cg->b, cg->t_i64, LLVMBuildInBoundsGEP2(cg->b, cg->t_i64, arr, &i, 1, ""),
                        "");
}

/* if (cond) return te_rt_arg_error(code, what, expected, got); */
static void cg_fail_arg_if(cg_llvm *cg, LLVMValueRef cond, te_status code, const char *what,
                           LLVMValueRef expected, LLVMValueRef got) {
  LLVMBasicBlockRef fail = cg_new_block(cg, "bad_arg"), ok = cg_new_block(cg, "ok");
  LLVMBuildCondBr(cg->b, cond, fail, ok);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  LLVMBuildRet(cg->b, cg_rt_arg_error(cg, code, what, expected, got));
  LLVMPositionBuilderAtEnd(cg->b, ok);
}

static LLVMValueRef cg_ne(cg_llvm *cg, LLVMValueRef a, unsigned long long b) {
  return LLVMBuildICmp(cg->b, LLVMIntNE, a, LLVMConstInt(LLVMTypeOf(a), b, 0), "");
}

static void cg_check_dtype(cg_llvm *cg, cg_targ *a) {
  te_dtype t = a->buf->dtype;
  LLVMValueRef code = cg_dl_field(cg, a->dl, 3, 0, cg->t_i8);
  LLVMValueRef bits = cg_dl_field(cg, a->dl, 3, 1, cg->t_i8);
  LLVMValueRef lanes = cg_dl_field(cg, a->dl, 3, 2, cg->t_i16);
  char what[320];
  if (ir_is_bool(t)) {
    LLVMValueRef u8 = LLVMBuildAnd(cg->b, LLVMBuildNot(cg->b, cg_ne(cg, code, kDLUInt), ""),
                                   LLVMBuildNot(cg->b, cg_ne(cg, bits, 8), ""), "");
    LLVMValueRef b8 = LLVMBuildAnd(cg->b, LLVMBuildNot(cg->b, cg_ne(cg, code, 6), ""),
                                   LLVMBuildNot(cg->b, cg_ne(cg, bits, 8), ""), "");
    LLVMValueRef u1 = LLVMBuildAnd(cg->b, LLVMBuildNot(cg->b, cg_ne(cg, code, kDLUInt), ""),
                                   LLVMBuildNot(cg->b, cg_ne(cg, bits, 1), ""), "");
    LLVMValueRef ok = LLVMBuildOr(cg->b, LLVMBuildOr(cg->b, u8, b8, ""), u1, "");
    ok = LLVMBuildAnd(cg->b, ok, LLVMBuildNot(cg->b, cg_ne(cg, lanes, 1), ""), "");
    snprintf(what, sizeof what,
             "%s must be bool (one byte an element: DLPack {kDLUInt, 8}, {kDLBool, 8} or "
             "{kDLUInt, 1}, lanes 1)",
             a->what);
    cg_fail_if(cg, LLVMBuildNot(cg->b, ok, ""), TE_ERR_TYPE, what);
    return;
  }
  char name[32];
  ir_dtype_name(t, name, sizeof name);
  const char *field[3] = {"code", "bits", "lanes"};
  LLVMValueRef got[3] = {code, bits, lanes};
  unsigned expected[3] = {t.code, t.bits, 1};
  for (int i = 0; i < 3; i++) {
    snprintf(what, sizeof what, "%s must be %s; dtype %s", a->what, name, field[i]);
    LLVMValueRef g = LLVMBuildZExt(cg->b, got[i], cg->t_i64, "");
    cg_fail_arg_if(cg, cg_ne(cg, got[i], expected[i]), TE_ERR_TYPE, what,
                   LLVMConstInt(cg->t_i64, expected[i], 0), g);
  }
}

static void cg_check_basic(cg_llvm *cg, cg_targ *a) {
  char what[320];
  snprintf(what, sizeof what, "%s is NULL", a->what);
  cg_fail_if(cg, LLVMBuildIsNull(cg->b, a->dl, ""), TE_ERR_INVALID_ARG, what);
  LLVMValueRef dev = cg_dl_field(cg, a->dl, 1, 0, cg->t_i32);
  if (cg->host) { /* a GPU module's host entry: device memory */
    snprintf(what, sizeof what, "%s device_type (%s)", a->what, cg->host->device_name);
    cg_fail_arg_if(cg, cg_ne(cg, dev, (unsigned)cg->host->device_type), TE_ERR_INVALID_ARG, what,
                   LLVMConstInt(cg->t_i64, (unsigned)cg->host->device_type, 0),
                   LLVMBuildSExt(cg->b, dev, cg->t_i64, ""));
  } else {
    snprintf(what, sizeof what, "%s device_type (kDLCPU = 1; kDLCUDAHost = 3 is accepted too)",
             a->what);
    cg_fail_arg_if(cg, LLVMBuildAnd(cg->b, cg_ne(cg, dev, kDLCPU), cg_ne(cg, dev, kDLCUDAHost), ""),
                   TE_ERR_INVALID_ARG, what, LLVMConstInt(cg->t_i64, kDLCPU, 0),
                   LLVMBuildSExt(cg->b, dev, cg->t_i64, ""));
  }
  LLVMValueRef ndim = cg_dl_field(cg, a->dl, 2, -1, cg->t_i32);
  snprintf(what, sizeof what, "%s ndim", a->what);
  cg_fail_arg_if(cg, cg_ne(cg, ndim, (unsigned)a->buf->ndim), TE_ERR_SHAPE, what,
                 LLVMConstInt(cg->t_i64, (unsigned)a->buf->ndim, 0),
                 LLVMBuildSExt(cg->b, ndim, cg->t_i64, ""));
  cg_check_dtype(cg, a);
  LLVMValueRef data = cg_dl_field(cg, a->dl, 0, -1, cg->t_ptr);
  snprintf(what, sizeof what, "%s has a NULL data pointer", a->what);
  cg_fail_if(cg, LLVMBuildIsNull(cg->b, data, ""), TE_ERR_INVALID_ARG, what);
  LLVMValueRef off = cg_dl_field(cg, a->dl, 6, -1, cg->t_i64);
  a->data = LLVMBuildGEP2(cg->b, cg->t_i8, data, &off, 1, "data");
  int bytes = ir_dtype_bytes(a->buf->dtype);
  if (bytes > 1) { /* loads and stores assume the element's natural alignment */
    LLVMValueRef addr = LLVMBuildPtrToInt(cg->b, a->data, cg->t_i64, "");
    LLVMValueRef rem =
        LLVMBuildAnd(cg->b, addr, LLVMConstInt(cg->t_i64, (unsigned)bytes - 1, 0), "");
    snprintf(what, sizeof what,
             "%s data pointer (data + byte_offset) is not aligned to its element size (%d bytes)",
             a->what, bytes);
    cg_fail_if(cg, cg_ne(cg, rem, 0), TE_ERR_INVALID_ARG, what);
  }
  a->shape = cg_dl_field(cg, a->dl, 4, -1, cg->t_ptr);
  a->strides = cg_dl_field(cg, a->dl, 5, -1, cg->t_ptr);
}

/* Binds the symbolic sizes from the tensors they are read from (each must be >= 1). */
static bool cg_bind_sizes(cg_llvm *cg, lw_func *f, cg_targ *targs, LLVMValueRef *sizes) {
  for (int k = 0; k < f->nsizes; k++) {
    int ai = f->size_arg[k], d = f->size_dim[k];
    if (!ir_check(cg->ctx, ai >= 0 && ai < f->nargs && f->args[ai].is_buffer, "size argument"))
      return false;
    cg_targ *a = &targs[ai];
    if (!ir_check(cg->ctx, d >= 0 && d < a->buf->ndim, "size dimension"))
      return false;
    LLVMValueRef v = cg_shape_at(cg, a->shape, d);
    char what[400];
    snprintf(what, sizeof what, "%s dim %d extent (the symbolic size '%s') must be >= 1", a->what,
             d, f->size_vars[k]->u.var.name);
    cg_fail_if(cg, LLVMBuildICmp(cg->b, LLVMIntSLT, v, LLVMConstInt(cg->t_i64, 1, 0), ""),
               TE_ERR_SHAPE, what);
    LLVMValueRef bound = cg_cast_value(cg, v, TE_I64, ir_elem(f->size_vars[k]->dtype));
    cg_bind(cg, f->size_vars[k], bound);
    sizes[k] = bound;
  }
  return true;
}

/* Extents against their expressions, then compact strides. Returns the element count. */
static LLVMValueRef cg_check_extents(cg_llvm *cg, cg_targ *a) {
  char what[400];
  LLVMValueRef count = LLVMConstInt(cg->t_i64, 1, 0);
  for (int d = 0; d < a->buf->ndim; d++) {
    LLVMValueRef want = cg_expr(cg, a->buf->shape[d]);
    if (!want)
      return NULL;
    want = cg_to_i64(cg, want, a->buf->shape[d]->dtype);
    LLVMValueRef got = cg_shape_at(cg, a->shape, d);
    snprintf(what, sizeof what, "%s dim %d extent", a->what, d);
    cg_fail_arg_if(cg, LLVMBuildICmp(cg->b, LLVMIntNE, want, got, ""), TE_ERR_SHAPE, what, want,
                   got);
    count = LLVMBuildMul(cg->b, count, got, "");
  }
  LLVMBasicBlockRef check = cg_new_block(cg, "strides"), done = cg_new_block(cg, "strides_ok");
  LLVMBuildCondBr(cg->b, LLVMBuildIsNull(cg->b, a->strides, ""), done, check);
  LLVMPositionBuilderAtEnd(cg->b, check);
  LLVMValueRef expect = LLVMConstInt(cg->t_i64, 1, 0);
  for (int d = a->buf->ndim - 1; d >= 0; d--) {
    LLVMValueRef ext = cg_shape_at(cg, a->shape, d), st = cg_shape_at(cg, a->strides, d);
    LLVMValueRef bad =
        LLVMBuildAnd(cg->b, LLVMBuildICmp(cg->b, LLVMIntNE, st, expect, ""), cg_ne(cg, ext, 1), "");
    snprintf(what, sizeof what, "%s dim %d stride (only compact row-major tensors are accepted)",
             a->what, d);
    cg_fail_arg_if(cg, bad, TE_ERR_SHAPE, what, expect, st);
    expect = LLVMBuildMul(cg->b, expect, ext, "");
  }
  LLVMBuildBr(cg->b, done);
  LLVMPositionBuilderAtEnd(cg->b, done);
  return count;
}

static int cg_find_written(ir_visitor *v, ir_stmt *s) {
  ir_map *written = v->data;
  ir_map_put(written, s->u.buffer, s->u.buffer);
  return IR_CONTINUE;
}

/* An output must not share bytes with any other argument (the body's noalias depends on it). */
static void cg_check_overlap(cg_llvm *cg, lw_func *f, cg_targ *targs, LLVMValueRef *counts) {
  ir_map *written = ir_map_new(cg->ctx);
  if (!written)
    return;
  ir_visitor v = {.data = written};
  v.stmt[IR_S_STORE] = cg_find_written;
  ir_visit_stmt(&v, f->body);
  for (int k = 0; f->gpu && k < f->gpu->nkernels; k++) /* a GPU module: what its kernels write */
    for (int i = 0; i < f->gpu->kernels[k].nparams; i++)
      if (f->gpu->kernels[k].params[i].written)
        ir_map_put(written, f->gpu->kernels[k].params[i].buffer, f->gpu->kernels[k].params[i].buffer);
  for (int i = 0; i < f->nargs; i++) {
    for (int j = i + 1; j < f->nargs; j++) {
      if (!f->args[i].is_buffer || !f->args[j].is_buffer)
        continue;
      cg_targ *a = &targs[i], *b = &targs[j];
      if (!ir_map_get(written, a->buf) && !ir_map_get(written, b->buf))
        continue;
      LLVMValueRef ab = LLVMBuildPtrToInt(cg->b, a->data, cg->t_i64, "");
      LLVMValueRef bb = LLVMBuildPtrToInt(cg->b, b->data, cg->t_i64, "");
      LLVMValueRef ae = LLVMBuildAdd(
          cg->b, ab,
          LLVMBuildMul(cg->b, counts[i],
                       LLVMConstInt(cg->t_i64, (unsigned)ir_dtype_bytes(a->buf->dtype), 0), ""),
          "");
      LLVMValueRef be = LLVMBuildAdd(
          cg->b, bb,
          LLVMBuildMul(cg->b, counts[j],
                       LLVMConstInt(cg->t_i64, (unsigned)ir_dtype_bytes(b->buf->dtype), 0), ""),
          "");
      LLVMValueRef overlap = LLVMBuildAnd(cg->b, LLVMBuildICmp(cg->b, LLVMIntULT, ab, be, ""),
                                          LLVMBuildICmp(cg->b, LLVMIntULT, bb, ae, ""), "");
      char msg[512];
      snprintf(msg, sizeof msg,
               "kernel '%s': arguments '%s' (#%d) and '%s' (#%d) overlap in memory; a tensor the "
               "kernel writes must not share memory with another argument",
               cg->kernel, a->buf->name, a->pos, b->buf->name, b->pos);
      cg_fail_if(cg, overlap, TE_ERR_INVALID_ARG, msg);
    }
  }
}

static const char *cg_arg_name(const lw_arg *a) {
  const char *n = a->is_buffer ? a->buffer->name : a->var->u.var.name;
  return n ? n : "arg";
}

/* The declaration of internal int32_t NAME_impl(T *data..., scalars..., sizes...), which the
   CPU entry and the CUDA host code both call after checking the arguments. */
LLVMValueRef cg_impl_function(cg_llvm *cg, lw_func *f) {
  int n = f->nargs + f->nsizes;
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(n + 1));
  if (!params)
    return NULL;
  for (int i = 0; i < f->nargs; i++)
    if (!(params[i] = f->args[i].is_buffer ? cg->t_ptr : cg_type(cg, f->args[i].var->dtype)))
      return NULL;
  for (int k = 0; k < f->nsizes; k++)
    if (!(params[f->nargs + k] = cg_type(cg, f->size_vars[k]->dtype)))
      return NULL;
  char name[300];
  snprintf(name, sizeof name, "%s_impl", f->name);
  LLVMValueRef fn =
      LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_i32, params, (unsigned)n, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  return fn;
}

/* internal int32_t NAME_impl(T *noalias data..., scalars..., sizes...): the loops. */
static LLVMValueRef cg_impl(cg_llvm *cg, lw_func *f) {
  LLVMValueRef fn = cg_impl_function(cg, f);
  if (!fn)
    return NULL;
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!cg->vars || !cg->bufs)
    return NULL;
  cg_fn_begin(cg, fn);
  for (int i = 0; i < f->nargs; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)i);
    const char *an = cg_arg_name(&f->args[i]);
    LLVMSetValueName2(p, an, strlen(an));
    if (f->args[i].is_buffer) {
      cg_add_enum_attr(cg, fn, (unsigned)i + 1, "noalias");
      ir_map_put(cg->bufs, f->args[i].buffer, p);
    } else {
      cg_bind(cg, f->args[i].var, p);
    }
  }
  for (int k = 0; k < f->nsizes; k++)
    cg_bind(cg, f->size_vars[k], LLVMGetParam(fn, (unsigned)(f->nargs + k)));
  if (!cg_stmt(cg, f->body))
    return NULL;
  LLVMBuildRet(cg->b, LLVMConstInt(cg->t_i32, 0, 0));
  return fn;
}

/* The entry's parameters: tensors in argument order, then scalars (bool as a byte). */
static LLVMValueRef cg_entry_fn(cg_llvm *cg, lw_func *f, int *param_of_arg) {
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(f->nargs + 1));
  if (!params)
    return NULL;
  int np = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; i < f->nargs; i++) {
      if (f->args[i].is_buffer != (pass == 0))
        continue;
      te_dtype t = pass == 0 ? TE_U8 : f->args[i].var->dtype;
      params[np] = pass == 0 ? cg->t_ptr : ir_is_bool(t) ? cg->t_i8 : cg_type(cg, t);
      if (!params[np])
        return NULL;
      param_of_arg[i] = np++;
    }
  }
  LLVMValueRef fn =
      LLVMAddFunction(cg->mod, f->name, LLVMFunctionType(cg->t_i32, params, (unsigned)np, 0));
  cg_fn_attrs(cg, fn);
  for (int i = 0; i < f->nargs; i++) {
    const char *an = cg_arg_name(&f->args[i]);
    LLVMSetValueName2(LLVMGetParam(fn, (unsigned)param_of_arg[i]), an, strlen(an));
  }
  return fn;
}

LLVMValueRef cg_entry(cg_llvm *cg, lw_func *f) {
  LLVMValueRef impl = cg->host ? cg->host->impl(cg, f, cg->host->data) : cg_impl(cg, f);
  int *param_of_arg = ir_alloc(cg->ctx, sizeof(int) * (size_t)(f->nargs + 1));
  cg_targ *targs = ir_alloc(cg->ctx, sizeof *targs * (size_t)(f->nargs + 1));
  LLVMValueRef *sizes = ir_alloc(cg->ctx, sizeof *sizes * (size_t)(f->nsizes + 1));
  LLVMValueRef *counts = ir_alloc(cg->ctx, sizeof *counts * (size_t)(f->nargs + 1));
  LLVMValueRef *call_args =
      ir_alloc(cg->ctx, sizeof *call_args * (size_t)(f->nargs + f->nsizes + 1));
  if (!impl || !param_of_arg || !targs || !sizes || !counts || !call_args)
    return NULL;
  LLVMValueRef fn = cg_entry_fn(cg, f, param_of_arg);
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!fn || !cg->vars || !cg->bufs)
    return NULL;
  cg_fn_begin(cg, fn);
  for (int i = 0; i < f->nargs; i++) {
    if (!f->args[i].is_buffer)
      continue;
    cg_targ *a = &targs[i];
    a->buf = f->args[i].buffer;
    a->pos = param_of_arg[i];
    a->dl = LLVMGetParam(fn, (unsigned)a->pos);
    snprintf(a->what, sizeof a->what, "kernel '%s': argument '%s' (#%d)", f->name,
             cg_arg_name(&f->args[i]), a->pos);
    cg_check_basic(cg, a);
  }
  if (!cg_bind_sizes(cg, f, targs, sizes))
    return NULL;
  for (int i = 0; i < f->nargs; i++)
    if (f->args[i].is_buffer && !(counts[i] = cg_check_extents(cg, &targs[i])))
      return NULL;
  cg_check_overlap(cg, f, targs, counts);
  for (int i = 0; i < f->nargs; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)param_of_arg[i]);
    if (f->args[i].is_buffer)
      p = targs[i].data;
    else if (ir_is_bool(f->args[i].var->dtype))
      p = LLVMBuildICmp(cg->b, LLVMIntNE, p, LLVMConstInt(cg->t_i8, 0, 0), "");
    call_args[i] = p;
  }
  for (int k = 0; k < f->nsizes; k++)
    call_args[f->nargs + k] = sizes[k];
  LLVMValueRef r = LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(impl), impl, call_args,
                                  (unsigned)(f->nargs + f->nsizes), "");
  LLVMBuildRet(cg->b, r);
  return fn;
}
