/* llvm_rt.c — calls from generated code into libte_runtime (te/runtime.h).
 *
 * The functions are declared in the module by name, with the C prototypes of te/runtime.h. The
 * JIT binds them to this process's runtime by absolute symbols (llvm_jit.c); an object file
 * (issue 5) resolves them by an ordinary link against libte_runtime. Messages are private
 * constant strings in the module.
 */
#include "llvm_cg.h"

LLVMValueRef cg_str(cg_llvm *cg, const char *s) { return LLVMBuildGlobalString(cg->b, s, ".msg"); }

LLVMValueRef cg_rt_error(cg_llvm *cg, LLVMValueRef code, LLVMValueRef msg) {
  LLVMTypeRef params[2] = {cg->t_i32, cg->t_ptr};
  LLVMValueRef args[2] = {code, msg};
  return cg_call_fn(cg, "te_rt_error", cg->t_i32, 2, params, args);
}

LLVMValueRef cg_rt_arg_error(cg_llvm *cg, te_status code, const char *what, LLVMValueRef expected,
                             LLVMValueRef got) {
  LLVMTypeRef params[4] = {cg->t_i32, cg->t_ptr, cg->t_i64, cg->t_i64};
  LLVMValueRef args[4] = {LLVMConstInt(cg->t_i32, (unsigned)code, 0), cg_str(cg, what), expected,
                          got};
  if (!expected) /* "what (got G)" */
    return cg_call_fn(cg, "te_rt_value_error", cg->t_i32, 3, params,
                      (LLVMValueRef[]){args[0], args[1], got});
  return cg_call_fn(cg, "te_rt_arg_error", cg->t_i32, 4, params, args);
}

/* The result is fresh memory, 64-byte aligned: saying so (noalias, align 64 on the returned
   pointer) lets LLVM keep an accumulator that lives in it in registers across a loop that
   also reads other buffers, as it does for noalias arguments. */
LLVMValueRef cg_rt_alloc(cg_llvm *cg, LLVMValueRef bytes) {
  LLVMValueRef p = cg_call_fn(cg, "te_rt_alloc", cg->t_ptr, 1, &cg->t_i64, &bytes);
  unsigned noalias = LLVMGetEnumAttributeKindForName("noalias", 7);
  unsigned align = LLVMGetEnumAttributeKindForName("align", 5);
  LLVMAddCallSiteAttribute(p, LLVMAttributeReturnIndex,
                           LLVMCreateEnumAttribute(cg->lctx, noalias, 0));
  LLVMAddCallSiteAttribute(p, LLVMAttributeReturnIndex,
                           LLVMCreateEnumAttribute(cg->lctx, align, 64));
  return p;
}

void cg_rt_free(cg_llvm *cg, LLVMValueRef ptr) {
  cg_call_fn(cg, "te_rt_free", cg->t_void, 1, &cg->t_ptr, &ptr);
}

LLVMValueRef cg_rt_parallel_for(cg_llvm *cg, LLVMValueRef fn, LLVMValueRef closure,
                                LLVMValueRef n) {
  LLVMTypeRef params[3] = {cg->t_ptr, cg->t_ptr, cg->t_i64};
  LLVMValueRef args[3] = {fn, closure, n};
  return cg_call_fn(cg, "te_rt_parallel_for", cg->t_i32, 3, params, args);
}
