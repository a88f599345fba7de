/* llvm_parallel.c — parallel loops as closures run by te_rt_parallel_for.
 *
 *   for (x, min, extent) parallel { body }
 * becomes, in the enclosing function,
 *   closure = { min, <every variable and buffer the body uses that is bound out here> };
 *   r = te_rt_parallel_for(NAME_parK, &closure, extent);  if (r) { free live; return r; }
 * and new internal functions
 *   int32_t NAME_parK(int64_t i, void *closure) { return NAME_parK_body(closure->min + i, ...); }
 *   int32_t NAME_parK_body(x, captured values..., T *noalias buffers...) { body; return 0; }
 * the second with a fresh set of bindings. The capture set is found by a
 * walk of the body: a VAR or buffer is captured when it is bound at the loop (loop and let
 * variables defined inside the body are not bound yet, so they are not captured). Failures in
 * the body (asserts, allocations) return their code from the closure; the runtime passes the
 * first one back, with its message, and the enclosing function returns it. Nested parallel
 * loops are outlined again; the runtime runs them serially inside the outer one. A parallel loop
 * inside masked vector code gets the mask again inside its body (vectorize.c puts a
 * vector_mask attribute there): the outlined function cannot use the enclosing one's value.
 */
#include <stdio.h>

#include "llvm_cg.h"

typedef struct cg_captures {
  cg_llvm *cg;
  ir_map *seen;
  int n, cap;
  const void **keys; /* te_expr* VAR or ir_buffer* */
  bool *is_buf;
  bool oom;
} cg_captures;

static void cg_capture_add(cg_captures *c, const void *key, bool is_buf) {
  if (ir_map_get(c->seen, key))
    return;
  if (!ir_map_put(c->seen, key, (void *)key)) {
    c->oom = true;
    return;
  }
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : 16;
    const void **keys = ir_alloc(c->cg->ctx, sizeof *keys * (size_t)cap);
    bool *bufs = ir_alloc(c->cg->ctx, sizeof *bufs * (size_t)cap);
    if (!keys || !bufs) {
      c->oom = true;
      return;
    }
    for (int i = 0; i < c->n; i++)
      keys[i] = c->keys[i], bufs[i] = c->is_buf[i];
    c->keys = keys, c->is_buf = bufs, c->cap = cap;
  }
  c->keys[c->n] = key;
  c->is_buf[c->n++] = is_buf;
}

static int cg_capture_var(ir_visitor *v, te_expr *e) {
  cg_captures *c = v->data;
  if (ir_map_get(c->cg->vars, e))
    cg_capture_add(c, e, false);
  return IR_CONTINUE;
}

static int cg_capture_load(ir_visitor *v, te_expr *e) {
  cg_captures *c = v->data;
  if (ir_map_get(c->cg->bufs, e->u.buffer))
    cg_capture_add(c, e->u.buffer, true);
  return IR_CONTINUE;
}

static int cg_capture_store(ir_visitor *v, ir_stmt *s) {
  cg_captures *c = v->data;
  if (ir_map_get(c->cg->bufs, s->u.buffer))
    cg_capture_add(c, s->u.buffer, true);
  return IR_CONTINUE;
}

static LLVMValueRef cg_captured_value(cg_llvm *cg, const cg_captures *c, int i) {
  return ir_map_get(c->is_buf[i] ? cg->bufs : cg->vars, c->keys[i]);
}

/* internal int32_t NAME_parK_body(x, captured...): the loop body for one value of the loop
   variable. Captured buffers are noalias parameters (distinct arguments the entry checked for
   overlap, or distinct allocations); once LLVM inlines this into the closure that becomes
   scoped alias metadata, which the closure's loads from its struct alone would not give. */
static LLVMValueRef cg_closure_inner(cg_llvm *cg, ir_stmt *s, const char *name, LLVMTypeRef st,
                                     const cg_captures *c) {
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(c->n + 1));
  if (!params)
    return NULL;
  for (int k = 0; k <= c->n; k++)
    params[k] = LLVMStructGetTypeAtIndex(st, (unsigned)k);
  LLVMValueRef fn =
      LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_i32, params, (unsigned)c->n + 1, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!cg->vars || !cg->bufs)
    return NULL;
  cg_fn_begin(cg, fn);
  cg_bind(cg, IR_FOR_VAR(s), LLVMGetParam(fn, 0));
  for (int k = 0; k < c->n; k++) {
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)k + 1);
    if (c->is_buf[k])
      cg_add_enum_attr(cg, fn, (unsigned)k + 2, "noalias");
    ir_map_put(c->is_buf[k] ? cg->bufs : cg->vars, c->keys[k], p);
  }
  if (!cg_stmt(cg, IR_FOR_BODY(s)))
    return NULL;
  LLVMBuildRet(cg->b, LLVMConstInt(cg->t_i32, 0, 0));
  return fn;
}

/* Writes the closure (and its body function); the caller saved and restores the builder and
   the bindings. */
static bool cg_closure_body(cg_llvm *cg, ir_stmt *s, LLVMValueRef fn, LLVMTypeRef st,
                            const cg_captures *c, LLVMTypeRef var_t) {
  char name[300];
  snprintf(name, sizeof name, "%s_body", LLVMGetValueName(fn));
  LLVMValueRef inner = cg_closure_inner(cg, s, name, st, c);
  LLVMValueRef *args = ir_alloc(cg->ctx, sizeof *args * (size_t)(c->n + 1));
  if (!inner || !args)
    return false;
  cg_fn_begin(cg, fn);
  LLVMValueRef i = LLVMGetParam(fn, 0), cl = LLVMGetParam(fn, 1);
  for (int k = 0; k <= c->n; k++)
    args[k] = LLVMBuildLoad2(cg->b, LLVMStructGetTypeAtIndex(st, (unsigned)k),
                             LLVMBuildStructGEP2(cg->b, st, cl, (unsigned)k, ""), "");
  if (var_t != cg->t_i64)
    i = LLVMBuildTrunc(cg->b, i, var_t, "");
  args[0] = LLVMBuildAdd(cg->b, args[0], i, IR_FOR_VAR(s)->u.var.name);
  LLVMValueRef r =
      LLVMBuildCall2(cg->b, LLVMGlobalGetValueType(inner), inner, args, (unsigned)c->n + 1, "");
  LLVMBuildRet(cg->b, r);
  return true;
}

static LLVMValueRef cg_closure_fn(cg_llvm *cg) {
  char name[256];
  snprintf(name, sizeof name, "%s_par%d", cg->kernel, cg->nclosures++);
  LLVMTypeRef params[2] = {cg->t_i64, cg->t_ptr};
  LLVMValueRef fn = LLVMAddFunction(cg->mod, name, LLVMFunctionType(cg->t_i32, params, 2, 0));
  LLVMSetLinkage(fn, LLVMInternalLinkage);
  cg_fn_attrs(cg, fn);
  cg_add_enum_attr(cg, fn, 2, "noalias"); /* the closure pointer: private to this call */
  return fn;
}

bool cg_parallel_for(cg_llvm *cg, ir_stmt *s) {
  LLVMValueRef min = cg_expr(cg, IR_FOR_MIN(s));
  LLVMValueRef ext = min ? cg_expr(cg, IR_FOR_EXTENT(s)) : NULL;
  if (!ext)
    return false;
  cg_captures c = {.cg = cg, .seen = ir_map_new(cg->ctx)};
  ir_visitor v = {.data = &c};
  v.expr[IR_VAR] = cg_capture_var;
  v.expr[IR_LOAD] = cg_capture_load;
  v.stmt[IR_S_STORE] = cg_capture_store;
  if (!c.seen)
    return false;
  ir_visit_stmt(&v, IR_FOR_BODY(s));
  if (c.oom)
    return false;

  LLVMTypeRef *fields = ir_alloc(cg->ctx, sizeof *fields * (size_t)(c.n + 1));
  if (!fields)
    return false;
  fields[0] = LLVMTypeOf(min);
  for (int k = 0; k < c.n; k++)
    fields[k + 1] = LLVMTypeOf(cg_captured_value(cg, &c, k));
  LLVMTypeRef st = LLVMStructTypeInContext(cg->lctx, fields, (unsigned)c.n + 1, 0);
  LLVMValueRef cl = cg_alloca(cg, st, "closure", 64); /* vector captures need their alignment */
  LLVMBuildStore(cg->b, min, LLVMBuildStructGEP2(cg->b, st, cl, 0, ""));
  for (int k = 0; k < c.n; k++)
    LLVMBuildStore(cg->b, cg_captured_value(cg, &c, k),
                   LLVMBuildStructGEP2(cg->b, st, cl, (unsigned)k + 1, ""));

  cg_fn saved_fn = cg->fn;
  ir_map *saved_vars = cg->vars, *saved_bufs = cg->bufs;
  LLVMValueRef saved_mask = cg->mask; /* a value of this function: the body makes its own */
  cg->mask = NULL;
  LLVMBasicBlockRef saved_block = LLVMGetInsertBlock(cg->b);
  LLVMValueRef fn = cg_closure_fn(cg);
  bool ok = cg_closure_body(cg, s, fn, st, &c, LLVMTypeOf(min));
  cg->fn = saved_fn, cg->vars = saved_vars, cg->bufs = saved_bufs, cg->mask = saved_mask;
  LLVMPositionBuilderAtEnd(cg->b, saved_block);
  if (!ok)
    return false;
  LLVMValueRef r = cg_rt_parallel_for(cg, fn, cl, cg_to_i64(cg, ext, IR_FOR_EXTENT(s)->dtype));
  cg_return_if_nonzero(cg, r);
  return true;
}
