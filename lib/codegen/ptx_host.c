/* ptx_host.c — the host entry of a CUDA module.
 *
 * The entry NAME(DLTensor *..., scalars...) is the one lowering's make_entry wrote for the cuda
 * target (the checks every target makes; its tensors must be on the device: kDLCUDA), translated
 * by llvm_entry.c, compiled for the host and JIT'd; its compute_scope
 * NAME_impl(data pointers, scalars, sizes) runs the host steps of the GPU module (gpu.h):
 *   ALLOC   p_i = te_rt_cuda_alloc(count * element size)      (NULL: TE_ERR_RUNTIME)
 *   LAUNCH  dims = {grid x, y, z, block x, y, z} from their expressions of sizes and scalars;
 *           kernelParams = pointers to each parameter's value, in the kernel's order;
 *           te_rt_cuda_launch(module, k, dims, kernelParams)   (nonzero: return it)
 *   FREE    te_rt_cuda_free(p_i)
 * Every exit goes through one cleanup block that frees the temporaries still allocated, so a
 * failed launch leaks no device memory. Launches are asynchronous (te_device_sync waits).
 */
#include <stdio.h>
#include <string.h>

#include "ptx.h"

typedef struct ph {
  cg_llvm *cg;
  lw_func *f;
  LLVMValueRef module; /* the te_rt_cuda_module handle, a constant */
  LLVMValueRef status; /* i32 alloca */
  LLVMBasicBlockRef cleanup;
  ir_map *slots; /* temporary ir_buffer* -> alloca holding its device pointer */
  int ntemps;
  LLVMValueRef *temp_slots;
} ph;

/* if (code != 0) { status = code; goto cleanup; } */
static void ph_check(ph *h, LLVMValueRef failed, LLVMValueRef code) {
  cg_llvm *cg = h->cg;
  LLVMBasicBlockRef fail = cg_new_block(cg, "fail"), ok = cg_new_block(cg, "ok");
  LLVMBuildCondBr(cg->b, failed, fail, ok);
  LLVMPositionBuilderAtEnd(cg->b, fail);
  LLVMBuildStore(cg->b, code, h->status);
  LLVMBuildBr(cg->b, h->cleanup);
  LLVMPositionBuilderAtEnd(cg->b, ok);
}

static bool ph_alloc(ph *h, const lw_gpu_step *st) {
  cg_llvm *cg = h->cg;
  LLVMValueRef n = cg_expr(cg, st->count);
  if (!n)
    return false;
  n = cg_to_i64(cg, n, st->count->dtype);
  LLVMValueRef bytes = LLVMBuildMul(
      cg->b, n, LLVMConstInt(cg->t_i64, (unsigned)ir_dtype_bytes(st->buffer->dtype), 0), "");
  LLVMValueRef p = cg_call_fn(cg, "te_rt_cuda_alloc", cg->t_ptr, 1, &cg->t_i64, &bytes);
  LLVMValueRef slot = ir_map_get(h->slots, st->buffer);
  LLVMBuildStore(cg->b, p, slot);
  ph_check(h, LLVMBuildIsNull(cg->b, p, ""), LLVMConstInt(cg->t_i32, TE_ERR_RUNTIME, 0));
  return true;
}

/* A stack slot holding one kernel parameter's value. */
static LLVMValueRef ph_param_value(ph *h, const lw_gpu_param *p) {
  cg_llvm *cg = h->cg;
  LLVMValueRef v;
  if (p->kind == LW_GPU_PARAM_BUFFER) {
    LLVMValueRef slot = ir_map_get(h->slots, p->buffer);
    v = slot ? LLVMBuildLoad2(cg->b, cg->t_ptr, slot, "") : ir_map_get(cg->bufs, p->buffer);
  } else {
    v = cg_expr(cg, p->var);
    if (v && ir_is_bool(p->var->dtype))
      v = LLVMBuildZExt(cg->b, v, cg->t_i8, "");
  }
  if (!v) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: a kernel parameter is not bound");
    return NULL;
  }
  LLVMValueRef a = cg_alloca(cg, LLVMTypeOf(v), "param", 8);
  LLVMBuildStore(cg->b, v, a);
  return a;
}

static bool ph_launch(ph *h, const lw_gpu_kernel *k) {
  cg_llvm *cg = h->cg;
  LLVMTypeRef dims_t = LLVMArrayType2(cg->t_i64, 6);
  LLVMTypeRef args_t = LLVMArrayType2(cg->t_ptr, (uint64_t)(k->nparams > 0 ? k->nparams : 1));
  LLVMValueRef dims = cg_alloca(cg, dims_t, "dims", 8), args = cg_alloca(cg, args_t, "args", 8);
  for (int d = 0; d < 6; d++) {
    te_expr *e = d < 3 ? k->grid[d] : k->block[d - 3];
    LLVMValueRef v = cg_expr(cg, e);
    if (!v)
      return false;
    LLVMValueRef i = LLVMConstInt(cg->t_i64, (unsigned)d, 0);
    LLVMBuildStore(cg->b, cg_to_i64(cg, v, e->dtype),
                   LLVMBuildInBoundsGEP2(cg->b, cg->t_i64, dims, &i, 1, ""));
  }
  for (int i = 0; i < k->nparams; i++) {
    LLVMValueRef slot = ph_param_value(h, &k->params[i]);
    if (!slot)
      return false;
    LLVMValueRef at = LLVMConstInt(cg->t_i64, (unsigned)i, 0);
    LLVMBuildStore(cg->b, slot, LLVMBuildInBoundsGEP2(cg->b, cg->t_ptr, args, &at, 1, ""));
  }
  LLVMTypeRef pt[4] = {cg->t_ptr, cg->t_i32, cg->t_ptr, cg->t_ptr};
  LLVMValueRef av[4] = {h->module, LLVMConstInt(cg->t_i32, (unsigned)k->index, 0), dims, args};
  LLVMValueRef code = cg_call_fn(cg, "te_rt_cuda_launch", cg->t_i32, 4, pt, av);
  ph_check(h, LLVMBuildICmp(cg->b, LLVMIntNE, code, LLVMConstInt(cg->t_i32, 0, 0), ""), code);
  return true;
}

static void ph_free(ph *h, LLVMValueRef slot) {
  cg_llvm *cg = h->cg;
  LLVMValueRef p = LLVMBuildLoad2(cg->b, cg->t_ptr, slot, "");
  cg_call_fn(cg, "te_rt_cuda_free", cg->t_void, 1, &cg->t_ptr, &p);
  LLVMBuildStore(cg->b, LLVMConstNull(cg->t_ptr), slot);
}

static bool ph_steps(ph *h, const lw_gpu_module *m) {
  for (int i = 0; i < m->nsteps; i++) { /* every slot NULL before anything can fail */
    const lw_gpu_step *st = &m->steps[i];
    if (st->kind != LW_GPU_STEP_ALLOC)
      continue;
    LLVMValueRef slot = cg_alloca(h->cg, h->cg->t_ptr, st->buffer->name, 8);
    LLVMBuildStore(h->cg->b, LLVMConstNull(h->cg->t_ptr), slot);
    ir_map_put(h->slots, st->buffer, slot);
    h->temp_slots[h->ntemps++] = slot;
  }
  for (int i = 0; i < m->nsteps; i++) {
    const lw_gpu_step *st = &m->steps[i];
    if (st->kind == LW_GPU_STEP_ALLOC) {
      if (!ph_alloc(h, st))
        return false;
    } else if (st->kind == LW_GPU_STEP_FREE) {
      ph_free(h, ir_map_get(h->slots, st->buffer));
    } else if (!ph_launch(h, &m->kernels[st->kernel])) {
      return false;
    }
  }
  return true;
}

LLVMValueRef cg_cuda_host_impl(cg_llvm *cg, const ir_closure *c, lw_func *f, void *rt_module) {
  const lw_gpu_module *m = f->gpu;
  LLVMValueRef fn = m ? cg_closure_function(cg, c) : NULL;
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  ph h = {.cg = cg, .f = f, .slots = ir_map_new(cg->ctx)};
  h.temp_slots = ir_alloc(cg->ctx, sizeof *h.temp_slots * (size_t)(m ? m->nsteps + 1 : 1));
  if (!fn || !cg->vars || !cg->bufs || !h.slots || !h.temp_slots)
    return NULL;
  cg_fn_begin(cg, fn);
  for (int i = 0; i < c->ncaptures; i++) { /* device pointers, scalars, sizes */
    LLVMValueRef p = LLVMGetParam(fn, (unsigned)i);
    if (c->captures[i].buffer)
      ir_map_put(cg->bufs, c->captures[i].buffer, p);
    else
      cg_bind(cg, c->captures[i].var, p);
  }
  h.module = LLVMConstIntToPtr(LLVMConstInt(cg->t_i64, (unsigned long long)(uintptr_t)rt_module, 0),
                               cg->t_ptr);
  h.status = cg_alloca(cg, cg->t_i32, "status", 4);
  LLVMBuildStore(cg->b, LLVMConstInt(cg->t_i32, 0, 0), h.status);
  h.cleanup = cg_new_block(cg, "cleanup");
  if (!ph_steps(&h, m))
    return NULL;
  LLVMBuildBr(cg->b, h.cleanup);
  LLVMPositionBuilderAtEnd(cg->b, h.cleanup);
  for (int i = 0; i < h.ntemps; i++)
    ph_free(&h, h.temp_slots[i]);
  LLVMBuildRet(cg->b, LLVMBuildLoad2(cg->b, cg->t_i32, h.status, ""));
  return fn;
}
