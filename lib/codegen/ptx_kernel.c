/* ptx_kernel.c — one CUDA kernel as an NVPTX LLVM function.
 *
 *   void NAME(ptr addrspace(1) noalias buf0, ..., <scalar> s0, ..., i64 size0, ...)
 * with calling convention 71 (PTX_Kernel: LLVM 22 ignores nvvm.annotations made through the C
 * API, TOOLCHAIN.md), parameters in gpu.h's order. Buffers arrive as global pointers and are
 * used through generic ones (addrspacecast; LLVM's address-space inference turns the accesses
 * back into ld.global/st.global); read-only buffers are marked readonly. Bool scalars are bytes.
 * Block and thread indices are read once at the entry from llvm.nvvm.read.ptx.sreg.{ctaid,tid}
 * and widened to i64 (gpu.h's index variables). Shared buffers are addrspace(3) globals of the
 * kernel (named KERNEL_BUFFER, 64-byte aligned), local buffers are allocas; barriers are
 * llvm.nvvm.barrier.cta.sync.aligned.all(0) (bar.sync 0; LLVM 22's name for barrier0).
 * The body is written by the CPU back end's code (cg_stmt): it has no thread loops left; a
 * kernel with vector accesses to its arguments gets two copies of it (ptx_vector.c).
 */
#include <stdio.h>
#include <string.h>

#include "ptx.h"

enum { CG_PTX_KERNEL_CC = 71 };

LLVMValueRef cg_ptx_intrinsic_call(cg_llvm *cg, const char *name, int n, LLVMValueRef *args) {
  unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
  if (!id) {
    ir_error(cg->ctx, TE_ERR_INTERNAL, "internal: codegen: LLVM has no intrinsic '%s'", name);
    return NULL;
  }
  LLVMValueRef fn = LLVMGetIntrinsicDeclaration(cg->mod, id, NULL, 0);
  LLVMTypeRef fty = LLVMIntrinsicGetType(cg->lctx, id, NULL, 0);
  return LLVMBuildCall2(cg->b, fty, fn, args, (unsigned)n, "");
}

static bool ptx_barrier(cg_llvm *cg) {
  const char *name = "llvm.nvvm.barrier.cta.sync.aligned.all";
  if (!LLVMLookupIntrinsicID(name, strlen(name)))
    name = "llvm.nvvm.barrier0"; /* LLVM before 21 */
  LLVMValueRef zero = LLVMConstInt(cg->t_i32, 0, 0);
  bool takes_id = strcmp(name, "llvm.nvvm.barrier0") != 0;
  return cg_ptx_intrinsic_call(cg, name, takes_id ? 1 : 0, &zero) != NULL;
}

static LLVMTypeRef ptx_param_type(cg_llvm *cg, const lw_gpu_param *p) {
  if (p->kind == LW_GPU_PARAM_BUFFER)
    return LLVMPointerTypeInContext(cg->lctx, 1);
  return ir_is_bool(p->var->dtype) ? cg->t_i8 : cg_type(cg, p->var->dtype);
}

static bool ptx_bind_params(cg_llvm *cg, const lw_gpu_kernel *k, LLVMValueRef fn) {
  for (int i = 0; i < k->nparams; i++) {
    const lw_gpu_param *p = &k->params[i];
    LLVMValueRef v = LLVMGetParam(fn, (unsigned)i);
    const char *name = p->kind == LW_GPU_PARAM_BUFFER ? p->buffer->name : p->var->u.var.name;
    LLVMSetValueName2(v, name, strlen(name));
    if (p->kind == LW_GPU_PARAM_BUFFER) {
      /* not in a warp kernel: LLVM assumes a noalias buffer that never escapes is untouched by
         the memory-clobbering bar.warp.sync (ptx_mma.c), and would move a lane's loads of
         another lane's stores across it */
      if (!k->lane)
        cg_add_enum_attr(cg, fn, (unsigned)i + 1, "noalias");
      if (!p->written)
        cg_add_enum_attr(cg, fn, (unsigned)i + 1, "readonly");
      ir_map_put(cg->bufs, p->buffer, LLVMBuildAddrSpaceCast(cg->b, v, cg->t_ptr, name));
    } else {
      if (ir_is_bool(p->var->dtype))
        v = LLVMBuildICmp(cg->b, LLVMIntNE, v, LLVMConstInt(cg->t_i8, 0, 0), "");
      cg_bind(cg, p->var, v);
    }
  }
  return true;
}

static bool ptx_bind_indices(cg_llvm *cg, const lw_gpu_kernel *k) {
  static const char *const sreg[LW_GPU_NIDX] = {
      "llvm.nvvm.read.ptx.sreg.ctaid.x", "llvm.nvvm.read.ptx.sreg.ctaid.y",
      "llvm.nvvm.read.ptx.sreg.ctaid.z", "llvm.nvvm.read.ptx.sreg.tid.x",
      "llvm.nvvm.read.ptx.sreg.tid.y",   "llvm.nvvm.read.ptx.sreg.tid.z"};
  cg->warp_lane = NULL;
  if (k->lane) { /* a warp per thread (gpu_warp.c): hardware tid.x = 32 * threadIdx.x + lane */
    LLVMValueRef tid = cg_ptx_intrinsic_call(cg, sreg[TE_THREAD_X], 0, NULL);
    if (!tid)
      return false;
    cg->warp_lane = LLVMBuildAnd(cg->b, tid, LLVMConstInt(cg->t_i32, 31, 0), "laneid");
    cg_bind(cg, k->lane, LLVMBuildZExt(cg->b, cg->warp_lane, cg->t_i64, "laneid"));
    if (k->idx[TE_THREAD_X])
      cg_bind(cg, k->idx[TE_THREAD_X],
              LLVMBuildZExt(cg->b, LLVMBuildLShr(cg->b, tid, LLVMConstInt(cg->t_i32, 5, 0), ""),
                            cg->t_i64, "threadIdx.x"));
  }
  for (int t = 0; t < LW_GPU_NIDX; t++) {
    if (!k->idx[t] || (k->lane && t == TE_THREAD_X))
      continue;
    LLVMValueRef v = cg_ptx_intrinsic_call(cg, sreg[t], 0, NULL);
    if (!v)
      return false;
    cg_bind(cg, k->idx[t], LLVMBuildZExt(cg->b, v, cg->t_i64, k->idx[t]->u.var.name));
  }
  return true;
}

static bool ptx_bind_buffers(cg_llvm *cg, const lw_gpu_kernel *k) {
  for (int i = 0; i < k->nshared; i++) {
    const lw_gpu_alloc *a = &k->shared[i];
    LLVMTypeRef elem = cg_mem_type(cg, a->buffer->dtype);
    if (!elem)
      return false;
    LLVMTypeRef at = LLVMArrayType2(elem, (uint64_t)a->count);
    char name[400];
    snprintf(name, sizeof name, "%s_%s", k->name, a->buffer->name);
    LLVMValueRef g = LLVMAddGlobalInAddressSpace(cg->mod, at, name, 3);
    LLVMSetInitializer(g, LLVMGetUndef(at));
    LLVMSetLinkage(g, LLVMInternalLinkage);
    LLVMSetAlignment(g, 64); /* llvm_mem.c assumes 64-byte aligned allocations */
    ir_map_put(cg->bufs, a->buffer, LLVMBuildAddrSpaceCast(cg->b, g, cg->t_ptr, a->buffer->name));
  }
  for (int i = 0; i < k->nlocal; i++) {
    const lw_gpu_alloc *a = &k->local[i];
    LLVMTypeRef elem = cg_mem_type(cg, a->buffer->dtype);
    if (!elem)
      return false;
    ir_map_put(cg->bufs, a->buffer,
               cg_alloca(cg, LLVMArrayType2(elem, (uint64_t)a->count), a->buffer->name, 64));
  }
  return true;
}

bool cg_ptx_kernel(cg_llvm *cg, const lw_gpu_kernel *k) {
  ir_stmt *body = cg_ptx_legalize(cg->ctx, k->name, k->body);
  if (!body)
    return false;
  LLVMTypeRef *params = ir_alloc(cg->ctx, sizeof *params * (size_t)(k->nparams + 1));
  if (!params)
    return false;
  for (int i = 0; i < k->nparams; i++)
    if (!(params[i] = ptx_param_type(cg, &k->params[i])))
      return false;
  LLVMValueRef fn = LLVMAddFunction(cg->mod, k->name,
                                    LLVMFunctionType(cg->t_void, params, (unsigned)k->nparams, 0));
  LLVMSetFunctionCallConv(fn, CG_PTX_KERNEL_CC);
  cg_add_enum_attr(cg, fn, LLVMAttributeFunctionIndex, "nounwind");
  cg->kernel = k->name;
  cg->vars = ir_map_new(cg->ctx);
  cg->bufs = ir_map_new(cg->ctx);
  if (!cg->vars || !cg->bufs)
    return false;
  cg->barrier = ptx_barrier;
  cg->math = cg_libdevice_path() ? cg_ptx_libdevice_math : NULL;
  cg->tensor_store = cg_ptx_mma_store;
  cg->warp_shuffle = cg_ptx_warp_shuffle;
  for (int d = 0; d < 3; d++)
    if (!ir_is_const_int(k->block[d], &cg->block[d]))
      cg->block[d] = 0;
  cg_fn_begin(cg, fn);
  if (!ptx_bind_params(cg, k, fn) || !ptx_bind_indices(cg, k) || !ptx_bind_buffers(cg, k))
    return false;
  return cg_ptx_vector_body(cg, k, body);
}
