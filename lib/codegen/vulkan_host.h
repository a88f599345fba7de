/* vulkan_host.h — the host side of a "vulkan" module (internal): what te_build keeps of the
 * lowered GPU module, and how te_module_call runs it through libte_runtime's launcher.
 *
 *   vulkan_prog.c    launch sizes, temporary sizes and the entry's expressions as small postfix
 *                    programs over the symbolic sizes, integer scalars and DLTensor fields: the
 *                    IR lives in the build's scratch arena, the module must evaluate them at
 *                    every call
 *   vulkan_entry.c   the entry's checks (lowering's make_entry) as steps run at every call
 *   vulkan_module.c  te_build for vulkan: each kernel to SPIR-V (spirv_*.c), the plan of steps,
 *                    the module's texts ("spirv-dis") and its destructor
 *   vulkan_call.c    te_module_call for vulkan: the entry's checks, device buffers, launches
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
   (lw_func order among args), then the other variables the entry lets (vulkan_entry.c); and the
   tensors' handles, whose DLTensor fields programs may read. */
typedef struct cg_vk_slots {
  int nsizes, nscalars, nlets;
  te_expr **vars; /* nsizes + nscalars + nlets variables */
  int ntensors;
  te_expr **handles; /* lw_arg::handle of each tensor */
} cg_vk_slots;

/* Compiles an i64 (or other integer / bool) expression over the slot variables. TE_ERR_
   UNSUPPORTED names what cannot be evaluated on the host (a float scalar in a launch size). */
te_status cg_vk_prog_make(te_ctx *, const char *kernel, const cg_vk_slots *, te_expr *,
                          cg_vk_prog *out);
/* Evaluates over the slots and the call's tensors (NULL where a program reads none); false (with
 *err set to a static reason) on division by zero or a bad program. */
bool cg_vk_prog_eval(const cg_vk_prog *, const int64_t *slots, DLTensor *const *tensors,
                     int64_t *out, const char **err);

/* ---- the entry's checks (vulkan_entry.c) ---- */

typedef enum cg_vk_check_kind {
  CG_VK_ASSERT, /* fail with status and message unless cond */
  CG_VK_LET,    /* slots[slot] = value */
  CG_VK_BIND,   /* host[tensor] = value: where the tensor's element 0 is */
  CG_VK_IF      /* unless cond, skip the next `skip` steps */
} cg_vk_check_kind;

typedef struct cg_vk_check {
  cg_vk_check_kind kind;
  cg_vk_prog cond, value;
  int nvalues;
  cg_vk_prog values[2]; /* the message's values (ir_assert_info) */
  te_status status;
  const char *message;
  int slot, tensor, skip;
} cg_vk_check;

struct cg_vk_module;
/* Compiles the statement make_entry wrote in front of the compute_scope; sets *nlets to the
   slots its lets need beyond slots->vars (and grows that array). */
te_status cg_vk_entry_make(te_ctx *, struct cg_vk_module *, lw_func *, cg_vk_slots *);
/* Runs the checks on a call's tensors: fills slots (sizes, lets) and host (each tensor's
   element 0), or returns the failed check's status with its message on the context. */
te_status cg_vk_entry_run(te_module *, DLTensor *const tensors[], int64_t *slots, char **host);

/* ---- the module (vulkan_module.c, vulkan_call.c) ---- */

typedef struct cg_vk_tensor {
  const char *name;
  int ndim;
  te_dtype dtype;
  bool written; /* some kernel stores to it: copied back after the launches */
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
  /* a kernel with subgroup operations (CG_SPV_SUBGROUP): the module without them (malloc'd),
     which a device lacking them runs; NULL for other kernels */
  uint32_t *plain_words;
  size_t plain_nwords;
  unsigned plain_features;
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
  int nsizes, nslots; /* slots: sizes, scalars, the entry's lets */
  int nchecks;
  cg_vk_check *checks; /* the entry (vulkan_entry.c) */
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
