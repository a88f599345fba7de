/* codegen.h — modules and the back ends (internal).
 *
 * The codegen layer (lib/codegen/) translates a lowered function (lib/lower: lw_func, and for GPU
 * targets its host/device split, lower/gpu.h) for a target (lib/target) into a te_module; it
 * never sees a schedule. te_build (lib/driver/build.c) = lw_lower + cg_llvm_compile (or the
 * cuda / vulkan back end) + JIT. One te_module holds one LLVM module and its JIT; its kernels
 * are called through libffi (te_module_call) or directly (te_module_entry).
 */
#ifndef TE_CODEGEN_H
#define TE_CODEGEN_H

#include "lower/lower.h"
#include "target/target.h"

/* One argument of a kernel, as a saved header describes it (in the context's memory). */
typedef struct cg_arg_meta {
  const char *name; /* the tensor's or parameter's name */
  bool is_tensor;
  bool is_output;    /* a computed tensor (the kernel writes it) */
  te_dtype dtype;    /* element dtype, or the scalar's */
  const char *shape; /* tensors: the printed extents, "n, 64" ("" for rank 0) */
} cg_arg_meta;

/* One kernel in a module. */
typedef struct cg_kernel {
  const char *name;
  int ntensors;
  int nscalars;
  te_dtype *scalar_dtypes;
  int *tensor_ndim; /* for te_module_call's own checks */
  void *entry;      /* JIT address, NULL until linked */
  const char *trace;
  lw_func *func; /* NULL after the build's scratch arena is gone */
  void *ffi;     /* libffi call interface, prepared on the first te_module_call */
  int nargs;     /* tensors first, then scalars (the entry's order) */
  cg_arg_meta *args;
  const char *sizes; /* how symbolic sizes are bound: "n = A.shape[0]" ("" when none) */
  int nexterns;      /* the extern stages the kernel calls (te_extern), each once */
  struct cg_extern_meta *externs;
} cg_kernel;

/* An extern stage a kernel calls: the JIT binds its name, the header declares its symbol. */
typedef struct cg_extern_meta {
  const char *stage;
  const char *symbol; /* NULL: called through a private name, JIT only */
  te_extern_fn fn;    /* NULL: looked up by symbol in the process when JIT-compiled */
} cg_extern_meta;

struct te_module {
  te_ctx *ctx;
  te_target *target;
  int nkernels;
  cg_kernel *kernels;
  char *ll_text;  /* malloc'd, optimized LLVM IR */
  char *asm_text; /* malloc'd, made on demand */
  void *llvm;     /* cg_llvm_module state: JIT, target machine, object (llvm_jit.c) */
  void *vk;       /* vulkan targets: cg_vk_module, SPIR-V and the host plan (vulkan_host.h) */
  char *ptx_text; /* cuda targets: malloc'd PTX of every kernel (ptx_module.c) */
  te_build_times times;
};

/* A new, empty module for target, owned by the context (freed with it). NULL on failure. */
te_module *cg_module_new(te_ctx *, te_target *);

/* Compile a lowered function into the module (LLVM IR, O3, JIT for a host target). The module
   copies what it keeps (names, dtypes, trace) to the context, so func may live in a scratch
   arena that ends after this call. A module holds one kernel: a second call is
   TE_ERR_UNSUPPORTED. */
te_status cg_llvm_compile(te_module *, lw_func *);

/* CUDA targets (ptx_module.c): te_build's back end for a lowered function with its host/device
   split: PTX in ptx_text, the JIT'd host entry as the kernel's entry. */
te_status cg_cuda_compile(te_module *, lw_func *);

/* Vulkan targets (vulkan_module.c, vulkan_call.c): te_build's back end for a lowered function
   with its host/device split; te_module_call (argument counts already checked); the SPIR-V
   disassembly of every device kernel, owned by the module ("spirv-dis"; NULL on failure). */
te_status cg_vulkan_compile(te_module *, lw_func *);
te_status cg_vulkan_call(te_module *, cg_kernel *, DLTensor *const tensors[],
                         const void *const scalars[]);
const char *cg_vulkan_source(te_module *);
/* The device kernels of a vulkan module (0 for other modules) and the SPIR-V words of the i-th,
   owned by the module (te_module_save's TE_SAVE_SPIRV). */
int cg_vulkan_nkernels(const te_module *);
const uint32_t *cg_vulkan_words(const te_module *, int i, size_t *nwords);

/* Seconds since an arbitrary point (CLOCK_MONOTONIC; llvm_module.c). */
double cg_now(void);

/* True for names generated code calls (libm, libc, te_rt_*): a kernel may not take them
   (llvm_jit.c). */
bool cg_is_reserved_symbol(const char *name);

/* Copies what a saved header says about the kernel (arguments, dtypes, shapes, sizes) from the
   lowered function into the context's memory (save_header.c). */
te_status cg_kernel_meta(te_ctx *, cg_kernel *, const lw_func *);

/* The record of the one kernel f in module m (name, argument kinds, header metadata). */
te_status cg_kernel_record(te_module *m, lw_func *f);

#endif
