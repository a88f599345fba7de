/* codegen.h — targets, modules and the LLVM CPU back end (internal).
 *
 * te_build = lw_lower (lib/lower) + cg_llvm_compile (this folder) + JIT. One te_module holds one
 * LLVM module and its JIT; its kernels are called through libffi (te_module_call) or directly
 * (te_module_entry).
 */
#ifndef TE_CODEGEN_H
#define TE_CODEGEN_H

#include "../lower/lower.h"

typedef enum tg_kind { TG_LLVM, TG_CUDA, TG_VULKAN } tg_kind;

struct te_target {
  te_ctx *ctx;
  tg_kind kind;
  const char *triple;   /* resolved: never NULL for LLVM */
  const char *cpu;      /* resolved ("znver5" for native on this host) */
  const char *features; /* resolved "+avx512f,..." */
  int vector_bits;      /* preferred vector width: 512, 256, 128 */
  bool is_host;         /* JIT-able in this process */
  const char *str;      /* canonical string */
  /* GPU targets (kind CUDA or VULKAN; target_gpu.c). The lowering checks launches against these
     limits; 0 for CPU targets. */
  int gpu_arch;                /* cuda: the SM version, 80 for sm_80; vulkan: 0 */
  int max_threads_per_block;   /* threads in one block / workgroup (all axes together) */
  int max_block_dim[3];        /* threads per block on x, y, z */
  int64_t max_grid_dim[3];     /* blocks on x, y, z */
  int64_t max_shared_bytes;    /* shared (workgroup) memory of one block, in bytes */
  te_target *host;             /* GPU targets: the CPU target host entries are compiled for
                                  (made by the first build, ptx_module.c) */
};

/* GPU target strings (target_gpu.c): true when s starts with the kind "cuda", "nvptx" or
   "vulkan"; the parse fills t (kind, limits, canonical string) or records the error. */
bool tg_string_is_gpu(const char *s);
te_status tg_gpu_parse(te_ctx *, const char *s, te_target *t);

/* One argument of a kernel, as a saved header describes it (in the context's memory). */
typedef struct cg_arg_meta {
  const char *name;  /* the tensor's or parameter's name */
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
  int *tensor_ndim;         /* for te_module_call's own checks */
  void *entry;              /* JIT address, NULL until linked */
  const char *trace;
  lw_func *func;            /* NULL after the build's scratch arena is gone */
  void *ffi;                /* libffi call interface, prepared on the first te_module_call */
  int nargs;                /* tensors first, then scalars (the entry's order) */
  cg_arg_meta *args;
  const char *sizes;        /* how symbolic sizes are bound: "n = A.shape[0]" ("" when none) */
} cg_kernel;

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

/* Copies what a saved header says about the kernel (arguments, dtypes, shapes, sizes) from the
   lowered function into the context's memory (save_header.c). */
te_status cg_kernel_meta(te_ctx *, cg_kernel *, const lw_func *);

/* The record of the one kernel f in module m (name, argument kinds, header metadata). */
te_status cg_kernel_record(te_module *m, lw_func *f);

#endif
