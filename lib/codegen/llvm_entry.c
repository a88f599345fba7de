/* llvm_entry.c — a kernel's typed entry point: the entry make_entry wrote, translated.
 *
 *   int32_t NAME(DLTensor *t0, ..., DLTensor *tN, <scalar> s0, ...)
 * runs the checks and bindings of lowering's make_entry pass (lib/lower/make_entry.c: asserts
 * on dl_* reads of the tensors, lets of the sizes, `bind` of each buffer), then calls
 *   internal int32_t NAME_impl(T *noalias data0, ..., <scalar> s0, ..., int64_t size0, ...)
 * the function of its `compute_scope` (the loops; for a CUDA module the host steps, ptx_host.c)
 * and returns its status. The split lets the body say `noalias` about the data pointers (LLVM
 * keeps that as scoped metadata when it inlines the body); it holds because the entry refuses an
 * output that overlaps another argument. Scalars are passed in their dtype (index parameters
 * as int64_t, f32 as float); a bool scalar is a byte (uint8_t, 0 or 1).
 *
 * Nothing here decides what is checked: this file translates the calling convention's
 * intrinsics (a DLTensor field is a load at its DLPack v0.6 offset, isnull a compare with NULL,
 * ptr_add a byte GEP), `bind` and `compute_scope`; asserts are llvm_stmt.c's.
 */
#include <stdio.h>
#include <string.h>

#include "llvm_cg.h"

/* The DLTensor field i (a struct member j of it when j >= 0) of handle h. */
static LLVMValueRef cg_dl_field(cg_llvm *cg, LLVMValueRef h, unsigned i, int j, LLVMTypeRef t) {
  LLVMValueRef idx[3] = {LLVMConstInt(cg->t_i32, 0, 0), LLVMConstInt(cg->t_i32, i, 0),
                         LLVMConstInt(cg->t_i32, (unsigned)(j < 0 ? 0 : j), 0)};
  LLVMValueRef p = LLVMBuildInBoundsGEP2(cg->b, cg->t_dltensor, h, idx, j < 0 ? 2 : 3, "");
  return LLVMBuildLoad2(cg->b, t, p, "");
}

/* Element d of the int64_t array of field i (shape, strides). */
static LLVMValueRef cg_dl_array(cg_llvm *cg, LLVMValueRef h, unsigned i, LLVMValueRef d) {
  LLVMValueRef arr = cg_dl_field(cg, h, i, -1, cg->t_ptr);
  return LLVMBuildLoad2(cg->b, cg->t_i64, LLVMBuildInBoundsGEP2(cg->b, cg->t_i64, arr, &d, 1, ""),
                        "");
}

LLVMValueRef cg_abi_call(cg_llvm *cg, ir_intrin id, LLVMValueRef *a) {
  /* DLPack v0.6: data, device {type, id}, ndim, dtype {code, bits, lanes}, shape, strides,
     byte_offset */
  switch (id) {
  case IR_INTRIN_DL_DATA:
    return cg_dl_field(cg, a[0], 0, -1, cg->t_ptr);
  case IR_INTRIN_DL_DEVICE_TYPE:
    return cg_dl_field(cg, a[0], 1, 0, cg->t_i32);
  case IR_INTRIN_DL_NDIM:
    return cg_dl_field(cg, a[0], 2, -1, cg->t_i32);
  case IR_INTRIN_DL_DTYPE_CODE:
    return cg_dl_field(cg, a[0], 3, 0, cg->t_i8);
  case IR_INTRIN_DL_DTYPE_BITS:
    return cg_dl_field(cg, a[0], 3, 1, cg->t_i8);
  case IR_INTRIN_DL_DTYPE_LANES:
    return cg_dl_field(cg, a[0], 3, 2, cg->t_i16);
  case IR_INTRIN_DL_DTYPE: { /* LLVM merges the three loads into one where the layout allows */
    LLVMValueRef code = LLVMBuildZExt(cg->b, cg_dl_field(cg, a[0], 3, 0, cg->t_i8), cg->t_i32, "");
    LLVMValueRef bits = LLVMBuildZExt(cg->b, cg_dl_field(cg, a[0], 3, 1, cg->t_i8), cg->t_i32, "");
    LLVMValueRef lanes =
        LLVMBuildZExt(cg->b, cg_dl_field(cg, a[0], 3, 2, cg->t_i16), cg->t_i32, "");
    LLVMValueRef v =
        LLVMBuildOr(cg->b, code, LLVMBuildShl(cg->b, bits, LLVMConstInt(cg->t_i32, 8, 0), ""), "");
    return LLVMBuildOr(cg->b, v, LLVMBuildShl(cg->b, lanes, LLVMConstInt(cg->t_i32, 16, 0), ""),
                       "");
  }
  case IR_INTRIN_DL_SHAPE:
    return cg_dl_field(cg, a[0], 4, -1, cg->t_ptr);
  case IR_INTRIN_DL_STRIDES:
    return cg_dl_field(cg, a[0], 5, -1, cg->t_ptr);
  case IR_INTRIN_DL_BYTE_OFFSET:
    return cg_dl_field(cg, a[0], 6, -1, cg->t_i64);
  case IR_INTRIN_DL_EXTENT:
    return cg_dl_array(cg, a[0], 4, a[1]);
  case IR_INTRIN_DL_STRIDE:
    return cg_dl_array(cg, a[0], 5, a[1]);
  case IR_INTRIN_ISNULL:
    return LLVMBuildIsNull(cg->b, a[0], "");
  case IR_INTRIN_PTR_ADD:
    return LLVMBuildGEP2(cg->b, cg->t_i8, a[0], &a[1], 1, "data");
  default:
    return NULL;
  }
}

/* bind B = address { body }: the body's buffer B is at address. */
bool cg_buffer_bind(cg_llvm *cg, ir_stmt *s) {
  LLVMValueRef p = cg_expr(cg, s->exprs[0]);
  if (!p)
    return false;
  ir_map_put(cg->bufs, s->u.attr.node, p);
  bool ok = cg_stmt(cg, s->stmts[0]);
  ir_map_put(cg->bufs, s->u.attr.node, NULL);
  return ok;
}

static const char *cg_capture_name(const ir_capture *k) {
  const char *n = k->var ? k->var->u.var.name : k->buffer->name;
  return n ? n : "arg";
}

LLVMValueRef cg_captured(cg_llvm *cg, const ir_capture *k) {
  LLVMValueRef v = k->var ? ir_map_get(cg->vars, k->var) : ir_map_get(cg->bufs, k->buffer);
  if (!v)
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': '%s' is captured but not "
             "bound",
             cg->kernel, cg_capture_name(k));
  return v;
}

LLVMValueRef cg_closure_function(cg_llvm *cg, const ir_closure *c) {
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(c->ncaptures + 1));
  if (!params)
    return NULL;
  for (int i = 0; i < c->ncaptures; i++)
    if (!(params[i] = c->captures[i].var ? cg_type(cg, c->captures[i].var->dtype) : cg->t_ptr))
      return NULL;
  LLVMValueRef fn = LLVMAddFunction(cg->mod, c->name,
                                    LLVMFunctionType(cg->t_i32, params, (unsigned)c->ncaptures, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  return fn;
}

void cg_bind_captures(cg_llvm *cg, LLVMValueRef fn, const ir_closure *c, unsigned first,
                      bool names) {
  for (int i = 0; i < c->ncaptures; i++) {
    const ir_capture *k = &c->captures[i];
    LLVMValueRef p = LLVMGetParam(fn, first + (unsigned)i);
    if (names) {
      const char *n = cg_capture_name(k);
      LLVMSetValueName2(p, n, strlen(n));
    }
    if (k->buffer) { /* distinct arguments (the entry refused overlaps) or distinct allocations */
      cg_add_enum_attr(cg, fn, first + (unsigned)i + 1, "noalias");
      ir_map_put(cg->bufs, k->buffer, p);
    } else {
      cg_bind(cg, k->var, p);
    }
  }
}

/* internal int32_t NAME_impl(captures...): the loops. */
static LLVMValueRef cg_impl(cg_llvm *cg, const ir_closure *c, ir_stmt *body) {
  LLVMValueRef fn = cg_closure_function(cg, c);
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!fn || !cg->vars || !cg->bufs)
    return NULL;
  cg_fn_begin(cg, fn);
  cg_bind_captures(cg, fn, c, 0, true);
  if (!cg_stmt(cg, body))
    return NULL;
  LLVMBuildRet(cg->b, LLVMConstInt(cg->t_i32, 0, 0));
  return fn;
}

/* compute_scope NAME_impl(captures) { body }: return NAME_impl(captured values...). The scope
   ends the entry: nothing follows it. */
bool cg_compute_scope(cg_llvm *cg, ir_stmt *s) {
  const ir_closure *c = s->u.attr.node;
  LLVMValueRef *args = ir_alloc(cg->ctx, sizeof *args * (size_t)(c->ncaptures + 1));
  if (!args)
    return false;
  for (int i = 0; i < c->ncaptures; i++)
    if (!(args[i] = cg_captured(cg, &c->captures[i])))
      return false;
  cg_fn saved_fn = cg->fn;
  ir_map *saved_vars = cg->vars, *saved_bufs = cg->bufs;
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(cg->b);
  LLVMValueRef impl =
      cg->host ? cg->host->impl(cg, c, cg->func, cg->host->data) : cg_impl(cg, c, s->stmts[0]);
  cg->fn = saved_fn, cg->vars = saved_vars, cg->bufs = saved_bufs;
  LLVMPositionBuilderAtEnd(cg->b, saved_block);
  if (!impl)
    return false;
  LLVMValueRef r =
      LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(impl), impl, args, (unsigned)c->ncaptures, "");
  LLVMBuildRet(cg->b, r);
  LLVMPositionBuilderAtEnd(cg->b, cg_new_block(cg, "unreachable")); /* nothing follows */
  return true;
}

static const char *cg_arg_name(const lw_arg *a) {
  const char *n = a->is_buffer ? a->buffer->name : a->var->u.var.name;
  return n ? n : "arg";
}

/* The entry's parameters: tensors in argument order, then scalars (bool as a byte; f16 and bf16
   as their 16 bits in an integer, uint16_t in C, which has no portable half type and whose
   calling conventions pass _Float16 in float registers that libffi cannot fill). */
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
      params[np] = pass == 0       ? cg->t_ptr
                   : ir_is_bool(t) ? cg->t_i8
                   : ir_is_half(t) ? cg->t_i16
                                   : cg_type(cg, t);
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
  for (int i = 0; i < f->nargs; i++)
    if (f->args[i].is_buffer && !f->args[i].handle) {
      ir_error(cg->ctx, TE_ERR_INTERNAL,
               "internal: codegen: kernel '%s' has no entry (the make_entry pass must run)",
               f->name);
      return NULL;
    }
  int *param_of_arg = ir_alloc(cg->ctx, sizeof(int) * (size_t)(f->nargs + 1));
  if (!param_of_arg)
    return NULL;
  LLVMValueRef fn = cg_entry_fn(cg, f, param_of_arg);
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!fn || !cg->vars || !cg->bufs)
    return NULL;
  cg->func = f;
  cg_fn_begin(cg, fn);
  for (int i = 0; i < f->nargs; i++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)param_of_arg[i]);
    if (f->args[i].is_buffer)
      cg_bind(cg, f->args[i].handle, p);
    else if (ir_is_bool(f->args[i].var->dtype)) /* a byte at the boundary, i1 inside */
      cg_bind(cg, f->args[i].var,
              LLVMBuildICmp(cg->b, LLVMIntNE, p, LLVMConstInt(cg->t_i8, 0, 0), ""));
    else if (ir_is_half(f->args[i].var->dtype)) /* the 16 bits at the boundary */
      cg_bind(cg, f->args[i].var,
              LLVMBuildBitCast(cg->b, p, cg_type(cg, f->args[i].var->dtype), ""));
    else
      cg_bind(cg, f->args[i].var, p);
  }
  if (!cg_stmt(cg, f->body))
    return NULL;
  LLVMBuildRet(cg->b, LLVMConstInt(cg->t_i32, 0, 0));
  return fn;
}
