/* ptx_vector.c — vector code (a vectorized loop inside a kernel) in CUDA kernels: the kernel's
 * body written once with its arguments known 16-byte aligned and once without.
 *
 * The vector IR (ramps, broadcasts, vector arithmetic, selects, casts, math calls, loads,
 * stores, masked regions) is written by the CPU back end's code (llvm_expr.c, llvm_mem.c,
 * llvm_stmt.c): a dense access (a ramp index of stride 1) is one LLVM vector load or store
 * carrying the alignment llvm_mem.c proves, and NVPTX makes of it the widest ld/st that
 * alignment allows: 16 bytes: ld.global.v4.f32 / v2.f64 (ld.shared.* for shared buffers; 8 or 16
 * lanes of f32 in several 128-bit pieces), 8 bytes: v2.f32, less: one access an element. A
 * misaligned vector access is therefore never emitted: the alignment LLVM is given is one the
 * code can prove. Gathers and scatters (any other vector index) and masked accesses are
 * scalarized by LLVM, one predicated access a lane.
 *
 * What is proven: the offset's alignment comes from the index's modular analysis (ir_modular_of:
 * `(blockIdx.x*64 + threadIdx.x)*4` is a multiple of 4 elements) times the element size; the
 * base's is known for temporaries (device allocations: 256-byte aligned; llvm_mem.c assumes 64),
 * shared buffers (64-byte aligned globals) and local ones (64-byte aligned allocas), but not for
 * arguments: a caller's device pointer may be any element-aligned address (a DLTensor with a
 * byte offset, a torch slice), and requiring 16 bytes would refuse ordinary views. So a kernel
 * with a dense vector access to an argument, at an index that a 16-byte aligned base would make
 * wider than an element, checks at its entry that every such argument's pointer is 16-byte
 * aligned and takes one of two copies of its body: the one where those bases are 16-byte
 * aligned (cg->base_align), or the one where they are element-aligned (accesses an element at a
 * time where the index alone does not prove more). The condition is the same for
 * every thread of the launch, so the branch never diverges; the cost is the code size.
 *
 * Tails: a vectorized loop whose extent varies by thread (a split that does not divide, bound
 * to threads: loop partitioning cannot peel a thread loop) is a masked region (vectorize.c).
 * Masked accesses cost a branch a lane on NVPTX, so such a region is written twice as well
 * (cg->mask_fast_path, llvm_stmt.c): unmasked when every lane is live (all threads but those at
 * the end), masked otherwise.
 */
#include "ptx.h"

enum { PV_ALIGN = 16 }; /* the widest access sm_80 and sm_90 have: 128 bits */

/* The argument buffers accessed densely with vectors at an index whose modular facts would make
   the access wider than an element on a 16-byte aligned base: buffer -> PV_ALIGN, what the
   aligned copy of the body knows of their bases (cg->base_align). A kernel without any (rows of
   1001 f32: no vector start is ever 8-byte aligned) has one body. */
typedef struct pv {
  cg_llvm *cg;
  ir_map *args;
  bool nomem;
} pv;

static int pv_add(pv *st, ir_buffer *b, te_expr *idx) {
  int64_t stride;
  if (idx->kind != IR_RAMP || !ir_is_const_int(idx->args[1], &stride) || stride != 1 ||
      b->arg_index < 0 || b->scope != TE_SCOPE_GLOBAL || ir_map_has(st->args, b))
    return IR_CONTINUE;
  unsigned elem = (unsigned)ir_dtype_bytes(b->dtype);
  if (cg_index_align(st->cg, idx->args[0], elem, PV_ALIGN) <= elem)
    return IR_CONTINUE; /* element accesses whatever the base */
  if (ir_map_put(st->args, b, (void *)(uintptr_t)PV_ALIGN))
    return IR_CONTINUE;
  st->nomem = true;
  return IR_ABORT;
}

static int pv_load(ir_visitor *v, te_expr *e) {
  return e->dtype.lanes > 1 ? pv_add(v->data, e->u.buffer, e->args[0]) : IR_CONTINUE;
}

static int pv_store(ir_visitor *v, ir_stmt *s) {
  return s->exprs[0]->dtype.lanes > 1 ? pv_add(v->data, s->u.buffer, s->exprs[1]) : IR_CONTINUE;
}

/* (p0 | p1 | ...) & 15 == 0 for the pointers of k's buffer parameters in args, in the
   parameters' order (the same code every build). */
static LLVMValueRef pv_aligned(cg_llvm *cg, const lw_gpu_kernel *k, const ir_map *args) {
  const ir_buffer **bufs = ir_alloc(cg->ctx, sizeof *bufs * (size_t)(k->nparams ? k->nparams : 1));
  if (!bufs)
    return NULL;
  int n = 0;
  for (int i = 0; i < k->nparams; i++)
    if (k->params[i].kind == LW_GPU_PARAM_BUFFER && ir_map_has(args, k->params[i].buffer))
      bufs[n++] = k->params[i].buffer;
  return cg_bases_aligned(cg, n, bufs, PV_ALIGN, "args_aligned");
}

bool cg_ptx_vector_body(cg_llvm *cg, const lw_gpu_kernel *k, ir_stmt *body) {
  pv st = {.cg = cg, .args = ir_map_new(cg->ctx)};
  if (!st.args)
    return false;
  ir_visitor v = {.data = &st};
  v.expr[IR_LOAD] = pv_load;
  v.stmt[IR_S_STORE] = pv_store;
  ir_visit_stmt(&v, body);
  if (st.nomem)
    return false; /* ir_map_put recorded TE_ERR_NOMEM */
  cg->mask_fast_path = true;
  cg->base_align = NULL;
  if (st.args->count == 0) {
    if (!cg_stmt(cg, body))
      return false;
    LLVMBuildRetVoid(cg->b);
    return true;
  }
  LLVMValueRef aligned = pv_aligned(cg, k, st.args);
  if (!aligned)
    return false;
  LLVMBasicBlockRef vec = cg_new_block(cg, "aligned_args"), elem = cg_new_block(cg, "any_args");
  LLVMBuildCondBr(cg->b, aligned, vec, elem);
  LLVMPositionBuilderAtEnd(cg->b, vec);
  cg->base_align = st.args;
  bool ok = cg_stmt(cg, body);
  cg->base_align = NULL;
  if (!ok)
    return false;
  LLVMBuildRetVoid(cg->b);
  LLVMPositionBuilderAtEnd(cg->b, elem);
  if (!cg_stmt(cg, body))
    return false;
  LLVMBuildRetVoid(cg->b);
  return true;
}
