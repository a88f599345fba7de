/* codegen.h — targets, modules and the LLVM CPU back end (internal).
 *
 * te_build = lw_lower (lib/lower) + cg_llvm_compile (this folder) + JIT. One te_module holds one
 * LLVM module and its JIT; its kernels are called through libffi (te_module_call) or directly
 * (te_module_entry).
 */
#ifndef TE_CODEGEN_H
#define TE_CODEGEN_H

#include "../lower/lower.h"

typedef enum cg_target_kind { CG_TARGET_LLVM, CG_TARGET_CUDA, CG_TARGET_VULKAN } cg_target_kind;

struct te_target {
  te_ctx *ctx;
  cg_target_kind kind;
  const char *triple;   /* resolved: never NULL for LLVM */
  const char *cpu;      /* resolved ("znver5" for native on this host) */
  const char *features; /* resolved "+avx512f,..." */
  int vector_bits;      /* preferred vector width: 512, 256, 128 */
  bool is_host;         /* JIT-able in this process */
  const char *str;      /* canonical string */
};

/* One kernel in a module. */
typedef struct cg_kernel {
  const char *name;
  int ntensors;
  int nscalars;
  te_dtype *scalar_dtypes;
  int *tensor_ndim;         /* for te_module_call's own checks */
  void *entry;              /* JIT address, NULL until linked */
  const char *trace;
  lw_func *func;            /* NULL after the build's scratch arena is gone */
  void *ffi;                /* libffi call interface, prepared on the first te_module_call */
} cg_kernel;

struct te_module {
  te_ctx *ctx;
  te_target *target;
  int nkernels;
  cg_kernel *kernels;
  char *ll_text;  /* malloc'd, optimized LLVM IR */
  char *asm_text; /* malloc'd, made on demand */
  void *llvm;     /* cg_llvm_module state: JIT, target machine, object (llvm_jit.c) */
  te_build_times times;
};

/* A new, empty module for target, owned by the context (freed with it). NULL on failure. */
te_module *cg_module_new(te_ctx *, te_target *);

/* Compile a lowered function into the module (LLVM IR, O3, JIT for a host target). The module
   copies what it keeps (names, dtypes, trace) to the context, so func may live in a scratch
   arena that ends after this call. A module holds one kernel: a second call is
   TE_ERR_UNSUPPORTED. */
te_status cg_llvm_compile(te_module *, lw_func *);

#endif
