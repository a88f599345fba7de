/* ptx.h — the CUDA back end (lib/codegen/ptx_*.c): a lowered GPU module (gpu.h) to PTX through
 * LLVM's NVPTX back end, plus the host entry that launches it.
 *
 *   ptx_module.c  the driver: an NVPTX LLVM module holding every kernel, O3, PTX text; the
 *                 runtime module (te_rt_cuda_module); the host entry (ptx_host.c), JIT'd
 *   ptx_kernel.c  one kernel: calling convention 71 (PTX_Kernel), parameters, block and thread
 *                 ids from llvm.nvvm.read.ptx.sreg.*, shared buffers as addrspace(3) globals,
 *                 local buffers as allocas, barriers; the body through the CPU back end's
 *                 statement and expression code (llvm_stmt.c, llvm_expr.c, llvm_mem.c)
 *   ptx_math.c    which math calls a kernel may make on NVPTX (no libdevice): the rest refused
 *   ptx_host.c    the host entry's body: device temporaries, launch dimensions, launches
 */
#ifndef TE_PTX_H
#define TE_PTX_H

#include "llvm_cg.h"
#include "lower/gpu.h"

/* te_build's back end for a "cuda" target: fills the module (kernel record, PTX, host entry). */
te_status cg_cuda_compile(te_module *, lw_func *);

/* ptx_math.c: the kernel body with exp2, log2 and log10 written through exp and log (whose
   polynomial code works on NVPTX); NULL with TE_ERR_UNSUPPORTED naming the function for calls
   NVPTX cannot lower without libdevice (sin, cos, tan, pow, erf) and for vector code. */
ir_stmt *cg_ptx_legalize(te_ctx *, const char *kernel, ir_stmt *body);

/* ptx_kernel.c: writes kernel k into cg's (NVPTX) module. */
bool cg_ptx_kernel(cg_llvm *, const lw_gpu_kernel *k);

/* ptx_host.c: the body of the host entry (cg_host_hooks.impl); data is the te_rt_cuda_module
   handle its launches use. */
LLVMValueRef cg_cuda_host_impl(cg_llvm *, const ir_closure *, lw_func *, void *rt_module);

#endif
