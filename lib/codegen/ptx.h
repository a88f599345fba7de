/* ptx.h — the CUDA back end (lib/codegen/ptx_*.c): a lowered GPU module (gpu.h) to PTX through
 * LLVM's NVPTX back end, plus the host entry that launches it.
 *
 *   ptx_module.c  the driver: an NVPTX LLVM module holding every kernel, O3, PTX text; the
 *                 runtime module (te_rt_cuda_module); the host entry (ptx_host.c), JIT'd
 *   ptx_kernel.c  one kernel: calling convention 71 (PTX_Kernel), parameters, block and thread
 *                 ids from llvm.nvvm.read.ptx.sreg.*, shared buffers as addrspace(3) globals,
 *                 local buffers as allocas, barriers; the body through the CPU back end's
 *                 statement and expression code (llvm_stmt.c, llvm_expr.c, llvm_mem.c)
 *   ptx_mma.c     te_tensorize's mma_m16n8k16/k32 as mma.sync (fragment layouts: ptx_mma.h)
 *   ptx_shuffle.c warp_shuffle_xor (the warp trees of gpu_tree_warp.c) as shfl.sync.bfly
 *   ptx_vector.c  vector code: the body twice, with the arguments 16-byte aligned (checked at
 *                 the entry: 128-bit ld/st.global.v4 where the index proves the rest) and not
 *   ptx_math.c    which math calls a kernel may make (all with libdevice; without it a few)
 *   ptx_libdevice.c  math calls as calls of NVIDIA's libdevice, linked into the module
 *   ptx_host.c    the host entry's body: device temporaries, launch dimensions, launches
 */
#ifndef TE_PTX_H
#define TE_PTX_H

#include "llvm_cg.h"
#include "lower/gpu.h"

/* te_build's back end for a "cuda" target: fills the module (kernel record, PTX, host entry). */
te_status cg_cuda_compile(te_module *, lw_func *);

/* ptx_math.c: the kernel body checked for what NVPTX can write: without libdevice, NULL with
   TE_ERR_UNSUPPORTED for sin, cos, tan, pow and erf (then exp2, log2 and log10 are written
   through exp and log, whose polynomial code works on NVPTX); scalars and vectors alike. */
ir_stmt *cg_ptx_legalize(te_ctx *, const char *kernel, ir_stmt *body);

/* ptx_libdevice.c: the libdevice file found (TE_LIBDEVICE, CUDA_HOME, CUDA_PATH,
   /usr/local/cuda), or NULL. */
const char *cg_libdevice_path(void);
/* ptx_libdevice.c: the cg_llvm.math hook: exp, exp2, log, log2, log10, sin, cos, tan, tanh,
   pow and erf of f32/f64 as calls of libdevice's __nv_* functions. */
bool cg_ptx_libdevice_math(cg_llvm *, const te_expr *call, LLVMValueRef *args, LLVMValueRef *out);
/* ptx_libdevice.c: links libdevice into cg's module when a kernel calls it, and makes every
   function but the kernels internal (O3 keeps only what is used). */
te_status cg_ptx_link_libdevice(cg_llvm *);

/* ptx_mma.c: the cg_llvm.tensor_store hook: a store of an mma call as the warp's mma.sync. */
bool cg_ptx_mma_store(cg_llvm *, ir_stmt *);

/* ptx_shuffle.c: the cg_llvm.warp_shuffle hook: warp_shuffle_xor as shfl.sync.bfly.b32. */
LLVMValueRef cg_ptx_warp_shuffle(cg_llvm *, te_expr *call);

/* ptx_kernel.c: a call of the NVVM intrinsic name (TE_ERR_INTERNAL set and NULL when LLVM has
   none). */
LLVMValueRef cg_ptx_intrinsic_call(cg_llvm *, const char *name, int n, LLVMValueRef *args);

/* ptx_vector.c: kernel k's body (legalized) and its return, at the builder (k's parameters
   bound): twice when it has dense vector accesses to arguments, behind a check at the entry
   that their pointers are 16-byte aligned. Sets cg->mask_fast_path. */
bool cg_ptx_vector_body(cg_llvm *, const lw_gpu_kernel *k, ir_stmt *body);

/* ptx_kernel.c: writes kernel k into cg's (NVPTX) module. */
bool cg_ptx_kernel(cg_llvm *, const lw_gpu_kernel *k);

/* ptx_host.c: the body of the host entry (cg_host_hooks.impl); data is the te_rt_cuda_module
   handle its launches use. */
LLVMValueRef cg_cuda_host_impl(cg_llvm *, const ir_closure *, lw_func *, void *rt_module);

#endif
