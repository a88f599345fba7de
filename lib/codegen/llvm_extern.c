/* llvm_extern.c — call_extern: an extern stage's function called with DLTensors (te_extern).
 *
 * Each argument gets a DLTensor and its shape and strides arrays on the stack (allocas in the
 * function's entry block, filled where the call is): data is the buffer's element 0 (a kernel
 * argument's data + byte_offset, as buffer_bind made it), byte_offset 0, device {kDLCPU, 0}.
 * The call is
 *     i32 SYMBOL(i32 ninputs, ptr inputs, ptr output)
 * to SYMBOL, an external declaration: the saved object leaves it undefined for the program to
 * link, the JIT binds it to the stage's function pointer (or to what dlsym finds, llvm_jit.c).
 * A stage without a symbol is called through a private name the JIT binds the same way
 * (cg_extern_private_name); te_module_save refuses it. A non-zero result returns TE_ERR_RUNTIME
 * from the kernel, its message naming the kernel, the stage, the function and the value.
 */
#include <stdio.h>
#include <string.h>

#include "llvm_cg.h"

void cg_extern_private_name(const char *kernel, const char *stage, char *buf, size_t size) {
  snprintf(buf, size, "te.extern.%s.%s", kernel, stage);
}

/* The i64 array of n values on the stack, filled. */
static LLVMValueRef i64_array(cg_llvm *cg, int n, te_expr *const *values, const char *name) {
  LLVMTypeRef t = LLVMArrayType2(cg->t_i64, (uint64_t)(n ? n : 1));
  LLVMValueRef a = cg_alloca(cg, t, name, 8);
  for (int d = 0; d < n; d++) {
    LLVMValueRef v = cg_expr(cg, values[d]);
    if (!v)
      return NULL;
    v = cg_to_i64(cg, v, values[d]->dtype);
    LLVMValueRef idx[2] = {LLVMConstInt(cg->t_i64, 0, 0), LLVMConstInt(cg->t_i64, (unsigned)d, 0)};
    LLVMBuildStore(cg->b, v, LLVMBuildInBoundsGEP2(cg->b, t, a, idx, 2, ""));
  }
  return a;
}

static void set_field(cg_llvm *cg, LLVMValueRef dl, unsigned field, LLVMValueRef v) {
  LLVMBuildStore(cg->b, v, LLVMBuildStructGEP2(cg->b, cg->t_dltensor, dl, field, ""));
}

/* A DLTensor for buffer b: extents and strides are exprs[0 .. 2 ndim). */
static LLVMValueRef dltensor(cg_llvm *cg, ir_buffer *b, te_expr *const *exprs) {
  LLVMValueRef data = ir_map_get(cg->bufs, b);
  if (!data) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': buffer '%s' is not bound",
             cg->kernel, b->name);
    return NULL;
  }
  LLVMValueRef shape = i64_array(cg, b->ndim, exprs, "ext_shape");
  LLVMValueRef strides = shape ? i64_array(cg, b->ndim, exprs + b->ndim, "ext_strides") : NULL;
  if (!strides)
    return NULL;
  LLVMValueRef dl = cg_alloca(cg, cg->t_dltensor, "ext_dltensor", 8);
  LLVMTypeRef dev_t = LLVMStructGetTypeAtIndex(cg->t_dltensor, 1);
  LLVMTypeRef dt_t = LLVMStructGetTypeAtIndex(cg->t_dltensor, 3);
  LLVMValueRef dev[2] = {LLVMConstInt(cg->t_i32, kDLCPU, 0), LLVMConstInt(cg->t_i32, 0, 0)};
  LLVMValueRef dt[3] = {LLVMConstInt(cg->t_i8, b->dtype.code, 0),
                        LLVMConstInt(cg->t_i8, b->dtype.bits, 0), LLVMConstInt(cg->t_i16, 1, 0)};
  set_field(cg, dl, 0, data);
  set_field(cg, dl, 1, LLVMConstNamedStruct(dev_t, dev, 2));
  set_field(cg, dl, 2, LLVMConstInt(cg->t_i32, (unsigned)b->ndim, 0));
  set_field(cg, dl, 3, LLVMConstNamedStruct(dt_t, dt, 3));
  set_field(cg, dl, 4, shape);
  set_field(cg, dl, 5, strides);
  set_field(cg, dl, 6, LLVMConstInt(cg->t_i64, 0, 0));
  return dl;
}

/* The declaration of the function the call goes to; NULL (an error) when the name is already
   a function of the module of another type or with a body (a kernel or one of its helpers). */
static LLVMValueRef callee(cg_llvm *cg, const ir_extern_call *c, LLVMTypeRef fty) {
  char priv[300];
  const char *name = c->symbol;
  if (!name) {
    cg_extern_private_name(cg->kernel, c->stage, priv, sizeof priv);
    name = priv;
  }
  if (c->symbol && cg_is_reserved_symbol(c->symbol)) {
    ir_error(cg->ctx, TE_ERR_INVALID_ARG,
             "te_build: kernel '%s': extern stage '%s': symbol '%s' is a function te's kernels "
             "call themselves; name the extern function otherwise",
             cg->kernel, c->stage, c->symbol);
    return NULL;
  }
  LLVMValueRef fn = LLVMGetNamedFunction(cg->mod, name);
  if (!fn) {
    fn = LLVMAddFunction(cg->mod, name, fty);
    cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
    return fn;
  }
  if (LLVMGlobalGetValueType(fn) != fty || LLVMCountBasicBlocks(fn) > 0 ||
      strcmp(name, cg->kernel) == 0) {
    ir_error(cg->ctx, TE_ERR_INVALID_ARG,
             "te_build: kernel '%s': extern stage '%s': symbol '%s' is the name of the kernel or "
             "of one of its functions; name the extern function otherwise",
             cg->kernel, c->stage, name);
    return NULL;
  }
  return fn;
}

bool cg_call_extern(cg_llvm *cg, ir_stmt *s) {
  const ir_extern_call *c = s->u.ext;
  if (!c->buffers) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: kernel '%s': unflattened call_extern",
             cg->kernel);
    return false;
  }
  LLVMTypeRef params[3] = {cg->t_i32, cg->t_ptr, cg->t_ptr};
  LLVMTypeRef fty = LLVMFunctionType(cg->t_i32, params, 3, 0);
  LLVMValueRef fn = callee(cg, c, fty);
  if (!fn)
    return false;
  int nin = c->nargs - 1, e = 0;
  LLVMTypeRef arr_t = LLVMArrayType2(cg->t_ptr, (uint64_t)(nin ? nin : 1));
  LLVMValueRef inputs = cg_alloca(cg, arr_t, "ext_inputs", 8), output = NULL;
  for (int a = 0; a < c->nargs; a++) {
    ir_buffer *b = c->buffers[a];
    LLVMValueRef dl = dltensor(cg, b, s->exprs + e);
    if (!dl)
      return false;
    e += 2 * b->ndim;
    if (a == nin) {
      output = dl;
      break;
    }
    LLVMValueRef idx[2] = {LLVMConstInt(cg->t_i64, 0, 0), LLVMConstInt(cg->t_i64, (unsigned)a, 0)};
    LLVMBuildStore(cg->b, dl, LLVMBuildInBoundsGEP2(cg->b, arr_t, inputs, idx, 2, ""));
  }
  LLVMValueRef args[3] = {LLVMConstInt(cg->t_i32, (unsigned)nin, 0), inputs, output};
  LLVMValueRef rc = LLVMBuildCall2(cg->b, fty, fn, args, 3, "ext_rc");
  char msg[512];
  if (c->symbol)
    snprintf(msg, sizeof msg, "kernel '%s': extern stage '%s' (function '%s') failed", cg->kernel,
             c->stage, c->symbol);
  else
    snprintf(msg, sizeof msg, "kernel '%s': extern stage '%s' failed", cg->kernel, c->stage);
  LLVMValueRef bad = LLVMBuildICmp(cg->b, LLVMIntNE, rc, LLVMConstNull(cg->t_i32), "");
  cg_fail_with_value(cg, bad, TE_ERR_RUNTIME, msg, LLVMBuildSExt(cg->b, rc, cg->t_i64, ""));
  return true;
}
