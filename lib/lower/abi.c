/* abi.c — what the calling convention depends on the target for (make_entry.c reads it).
 *
 * Every target's entry takes DLTensors and checks them the same way (make_entry.c); three things
 * differ by target, and are decided here only:
 *   - the device a tensor must be on: the CPU (kDLCPU, or pinned kDLCUDAHost memory) for "llvm"
 *     and for "vulkan" (whose host copies CPU tensors to the device), the GPU (kDLCUDA) for "cuda";
 *   - whether the code works on the tensors' own memory ("llvm", "cuda"): then data must be
 *     aligned to the element size and a written tensor must not overlap another argument;
 *   - 32-bit indexing ("vulkan"): sizes and element counts below 2^31.
 * And the one fact of the host/device split make_entry needs: which arguments a GPU module's
 * kernels write (the overlap check).
 */
#include "gpu_lower.h"

static const lw_abi abi_cpu = {kDLCPU, kDLCUDAHost, "kDLCPU = 1; kDLCUDAHost = 3 is accepted too",
                               true,   false,       "llvm"};
static const lw_abi abi_cuda = {kDLCUDA, 0, "kDLCUDA = 2: device memory", true, false, "cuda"};
static const lw_abi abi_vulkan = {kDLCPU,
                                  kDLCUDAHost,
                                  "kDLCPU = 1; kDLCUDAHost = 3 is accepted too; te copies the "
                                  "tensors to the Vulkan device",
                                  false,
                                  true,
                                  "vulkan"};

const lw_abi *lw_abi_of(const lw_pass_ctx *p) {
  if (!p->target)
    return &abi_cpu;
  switch (p->target->kind) {
  case TG_CUDA:
    return &abi_cuda;
  case TG_VULKAN:
    return &abi_vulkan;
  default:
    return &abi_cpu;
  }
}

bool lw_gpu_writes(const lw_func *f, const ir_buffer *b) {
  for (int k = 0; f->gpu && k < f->gpu->nkernels; k++)
    for (int i = 0; i < f->gpu->kernels[k].nparams; i++)
      if (f->gpu->kernels[k].params[i].buffer == b && f->gpu->kernels[k].params[i].written)
        return true;
  return false;
}
