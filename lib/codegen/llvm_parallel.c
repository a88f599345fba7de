/* llvm_parallel.c — parallel loops as closures run by te_rt_parallel_for.
 *
 *   closure NAME_parK(c0, c1, ...) { for (x, min, extent) parallel { body } }
 * (the attribute lowering's make_closures put around the loop, with its captures) becomes, in
 * the enclosing function,
 *   closure = { min, c0, c1, ... };
 *   r = te_rt_parallel_for(NAME_parK, &closure, extent);  if (r) { free live; return r; }
 * and new internal functions
 *   int32_t NAME_parK(int64_t i, void *closure) { return NAME_parK_body(closure->min + i, ...); }
 *   int32_t NAME_parK_body(x, c0, c1, ...) { body; return 0; }
 * the second with a fresh set of bindings: the captures and nothing else. Failures in the body
 * (asserts, allocations) return their code from the closure; the runtime passes the first one
 * back, with its message, and the enclosing function returns it. Nested parallel loops have
 * closures of their own; the runtime runs them serially inside the outer one. A parallel loop
 * inside masked vector code gets the mask again inside its body (vectorize.c puts a
 * vector_mask attribute there): the outlined function cannot use the enclosing one's value.
 */
#include <stdio.h>

#include "llvm_cg.h"

/* internal int32_t NAME_parK_body(x, captured...): the loop body for one value of the loop
   variable. Captured buffers are noalias parameters (distinct arguments the entry checked for
   overlap, or distinct allocations); once LLVM inlines this into the closure that becomes
   scoped alias metadata, which the closure's loads from its struct alone would not give. */
static LLVMValueRef cg_closure_inner(cg_llvm *cg, ir_stmt *s, const char *name, LLVMTypeRef st,
                                     const ir_closure *c) {
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(c->ncaptures + 1));
  if (!params)
    return NULL;
  for (int k = 0; k <= c->ncaptures; k++)
    params[k] = LLVMStructGetTypeAtIndex(st, (unsigned)k);
  LLVMValueRef fn = LLVMAddFunction(
      cg->mod, name, LLVMFunctionType(cg->t_i32, params, (unsigned)c->ncaptures + 1, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!cg->vars || !cg->bufs)
    return NULL;
  cg_fn_begin(cg, fn);
  cg_bind(cg, IR_FOR_VAR(s), LLVMGetParam(fn, 0));
  cg_bind_captures(cg, fn, c, 1, false);
  if (!cg_stmt(cg, IR_FOR_BODY(s)))
    return NULL;
  LLVMBuildRet(cg->b, LLVMConstInt(cg->t_i32, 0, 0));
  return fn;
}

/* Writes the closure (and its body function); the caller saved and restores the builder and
   the bindings. */
static bool cg_closure_body(cg_llvm *cg, ir_stmt *s, LLVMValueRef fn, LLVMTypeRef st,
                            const ir_closure *c, LLVMTypeRef var_t) {
  char name[300];
  snprintf(name, sizeof name, "%s_body", LLVMGetValueName(fn));
  LLVMValueRef inner = cg_closure_inner(cg, s, name, st, c);
  LLVMValueRef *args = ir_alloc(cg->ctx, sizeof *args * (size_t)(c->ncaptures + 1));
  if (!inner || !args)
    return false;
  cg_fn_begin(cg, fn);
  LLVMValueRef i = LLVMGetParam(fn, 0), cl = LLVMGetParam(fn, 1);
  for (int k = 0; k <= c->ncaptures; k++)
    args[k] = LLVMBuildLoad2(cg->b, LLVMStructGetTypeAtIndex(st, (unsigned)k),
                             LLVMBuildStructGEP2(cg->b, st, cl, (unsigned)k, ""), "");
  if (var_t != cg->t_i64)
    i = LLVMBuildTrunc(cg->b, i, var_t, "");
  args[0] = LLVMBuildAdd(cg->b, args[0], i, IR_FOR_VAR(s)->u.var.name);
  LLVMValueRef r = LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(inner), inner, args,
                                  (unsigned)c->ncaptures + 1, "");
  LLVMBuildRet(cg->b, r);
  return true;
}

static LLVMValueRef cg_closure_fn(cg_llvm *cg, const ir_closure *c) {
  LLVMTypeRef params[2] = {cg->t_i64, cg->t_ptr};
  LLVMValueRef fn = LLVMAddFunction(cg->mod, c->name, LLVMFunctionType(cg->t_i32, params, 2, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  cg_add_enum_attr(cg, fn, 2, "noalias"); /* the closure pointer: private to this call */
  return fn;
}

bool cg_parallel_closure(cg_llvm *cg, ir_stmt *attr) {
  const ir_closure *c = attr->u.attr.node;
  ir_stmt *s = attr->stmts[0];
  if (!c || s->kind != IR_S_FOR || s->u.loop.kind != IR_FOR_PARALLEL) {
    ir_error(cg->ctx, TE_ERR_INTERNAL,
             "internal: codegen: kernel '%s': a closure must hold one parallel loop", cg->kernel);
    return false;
  }
  LLVMValueRef min = cg_expr(cg, IR_FOR_MIN(s));
  LLVMValueRef ext = min ? cg_expr(cg, IR_FOR_EXTENT(s)) : NULL;
  LLVMTypeRef *fields = ext ? ir_alloc(cg->ctx, sizeof *fields * (size_t)(c->ncaptures + 1)) : NULL;
  LLVMValueRef *values =
      fields ? ir_alloc(cg->ctx, sizeof *values * (size_t)(c->ncaptures + 1)) : NULL;
  if (!values)
    return false;
  fields[0] = LLVMTypeOf(min);
  for (int k = 0; k < c->ncaptures; k++) {
    if (!(values[k] = cg_captured(cg, &c->captures[k])))
      return false;
    fields[k + 1] = LLVMTypeOf(values[k]);
  }
  LLVMTypeRef st = LLVMStructTypeInContext(cg->lctx, fields, (unsigned)c->ncaptures + 1, 0);
  LLVMValueRef cl = cg_alloca(cg, st, "closure", 64); /* vector captures need their alignment */
  LLVMBuildStore(cg->b, min, LLVMBuildStructGEP2(cg->b, st, cl, 0, ""));
  for (int k = 0; k < c->ncaptures; k++)
    LLVMBuildStore(cg->b, values[k], LLVMBuildStructGEP2(cg->b, st, cl, (unsigned)k + 1, ""));

  cg_fn saved_fn = cg->fn;
  ir_map *saved_vars = cg->vars, *saved_bufs = cg->bufs;
  LLVMValueRef saved_mask = cg->mask; /* a value of this function: the body makes its own */
  cg->mask = NULL;
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(cg->b);
  LLVMValueRef fn = cg_closure_fn(cg, c);
  bool ok = cg_closure_body(cg, s, fn, st, c, LLVMTypeOf(min));
  cg->fn = saved_fn, cg->vars = saved_vars, cg->bufs = saved_bufs, cg->mask = saved_mask;
  LLVMPositionBuilderAtEnd(cg->b, saved_block);
  if (!ok)
    return false;
  LLVMValueRef r = cg_rt_parallel_for(cg, fn, cl, cg_to_i64(cg, ext, IR_FOR_EXTENT(s)->dtype));
  cg_return_if_nonzero(cg, r);
  return true;
}
