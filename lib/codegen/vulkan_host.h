/* vulkan_host.h — the host side of a "vulkan" module (internal): what te_build keeps of the
 * lowered GPU module, and how te_module_call runs it through libte_runtime's launcher.
 *
 *   vulkan_prog.c    launch sizes, temporary sizes and tensor extents as small postfix programs
 *                    over the symbolic sizes and integer scalars: the IR lives in the build's
 *                    scratch arena, the module must evaluate them at every call
 *   vulkan_module.c  te_build for vulkan: each kernel to SPIR-V (spirv_*.c), the plan of steps,
 *                    the module's texts ("spirv-dis") and its destructor
 *   vulkan_call.c    te_module_call for vulkan: argument checks, device buffers, launches
 *
 * Buffers at call time: the kernel takes ordinary CPU DLTensors (kDLCPU, or kDLCUDAHost, as the
 * CPU entry does). Each call copies every tensor into a storage buffer of the device (host-visible
 * memory, kept by the module between calls and grown when needed), runs the steps, and copies
 * back the tensors some kernel writes. So a vulkan kernel is called exactly as an "llvm" one is,
 * and results never alias the inputs.
 */
#ifndef TE_CODEGEN_VULKAN_HOST_H
#define TE_CODEGEN_VULKAN_HOST_H

#include "runtime/vulkan.h"
#include "spirv.h"

/* ---- host expressions (vulkan_prog.c) ---- */

typedef struct cg_vk_ins {
  int op; /* cg_vk_op (vulkan_prog.c) */
  int64_t v;
} cg_vk_ins;

typedef struct cg_vk_prog {
  int n;
  cg_vk_ins *ins; /* in the context's memory */
} cg_vk_prog;

/* The slots programs read: sizes first (lw_func::size_vars order), then scalar parameters
   (lw_func order among args). */
typedef struct cg_vk_slots {
  int nsizes, nscalars;
  te_expr **vars; /* nsizes + nscalars variables */
} cg_vk_slots;

/* Compiles an i64 (or other integer / bool) expression over the slot variables. TE_ERR_
   UNSUPPORTED names what cannot be evaluated on the host (a float scalar in a launch size). */
te_status cg_vk_prog_make(te_ctx *, const char *kernel, const cg_vk_slots *, te_expr *,
                          cg_vk_prog *out);
/* Evaluates; false (with *err set to a static reason) on division by zero or a bad program. */
bool cg_vk_prog_eval(const cg_vk_prog *, const int64_t *slots, int64_t *out, const char **err);

/* ---- the module (vulkan_module.c, vulkan_call.c) ---- */

typedef struct cg_vk_tensor {
  const char *name;
  int ndim;
  te_dtype dtype;
  cg_vk_prog *shape; /* ndim programs */
  bool written;      /* some kernel stores to it: copied back after the launches */
  te_rt_vk_buffer *buf;
} cg_vk_tensor;

typedef struct cg_vk_param {
  lw_gpu_param_kind kind;
  int tensor;     /* BUFFER: tensor argument index, or -1 */
  int temp;       /* BUFFER: host temporary index, or -1 */
  int slot;       /* SCALAR / SIZE: slot index */
  int offset;     /* SCALAR / SIZE: push-constant offset */
  te_dtype mtype; /* SCALAR / SIZE: push-constant member type */
} cg_vk_param;

typedef struct cg_vk_kernel {
  const char *name;
  uint32_t *words; /* malloc'd */
  size_t nwords;
  unsigned features;
  int64_t local[3];
  int64_t shared_bytes;
  cg_vk_prog grid[3];
  int nparams, nbuffers;
  cg_vk_param *params;
  uint32_t push_bytes;
  te_rt_vk_kernel *pipe; /* made at the first call */
} cg_vk_kernel;

typedef struct cg_vk_temp {
  const char *name;
  te_dtype dtype;
  te_rt_vk_buffer *buf;
} cg_vk_temp;

typedef struct cg_vk_step {
  lw_gpu_step_kind kind;
  int kernel, temp;
  cg_vk_prog count;
} cg_vk_step;

typedef struct cg_vk_module {
  te_ctx *ctx;
  const char *name; /* the te_build name */
  int ntensors;
  cg_vk_tensor *tensors;
  int nscalars;
  te_dtype *scalar_dtypes;
  int nsizes;
  int *size_arg, *size_dim;
  const char **size_names;
  int nkernels;
  cg_vk_kernel *kernels;
  int ntemps;
  cg_vk_temp *temps;
  int nsteps;
  cg_vk_step *steps;
  char *dis; /* te_module_source(m, "spirv-dis"), made on demand (malloc'd) */
} cg_vk_module;

/* cg_vulkan_compile, cg_vulkan_call, cg_vulkan_source: codegen.h */

#endif
