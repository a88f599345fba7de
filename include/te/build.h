/* te/build.h — targets, lowering, compiling and calling kernels.
 *
 * A kernel's arguments are its tensors (inputs and outputs, in the order given to te_build),
 * then its scalar parameters (te_param / te_var expressions). Symbolic sizes that appear in the
 * tensors' shapes are not arguments: the kernel binds them from the DLTensors it is given and
 * cross-checks every other place they appear.
 *
 * The generated entry point is
 *     int32_t NAME(DLTensor *t0, ..., DLTensor *tN, <scalar> s0, ...);
 * returning 0 or a te_status code with a message in te_rt_last_error() (te/runtime.h). Before it
 * touches memory it checks each DLTensor: not NULL, on the CPU, its rank, its dtype, its extents
 * (constant or symbolic), compact row-major strides (NULL strides or the compact ones), and a
 * non-NULL data pointer.
 */
#ifndef TE_BUILD_H
#define TE_BUILD_H

#include "schedule.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct te_target te_target;
typedef struct te_module te_module;

/* Parse a target string. Recognised now:
     "llvm" (the host), "llvm -mcpu=native", "llvm -mtriple=T -mcpu=C -mattr=+a,-b"
   "cuda ..." and "vulkan" are recognised and refused with TE_ERR_UNSUPPORTED by this version.
   Unknown kinds, options or CPUs are TE_ERR_TARGET (or TE_ERR_PARSE for malformed text).
   The target belongs to the context. */
TE_API te_target *te_target_parse(te_ctx *, const char *);
/* The target as a canonical string, with the CPU and features resolved ("llvm -mtriple=x86_64-
   pc-linux-gnu -mcpu=znver5 -mattr=+avx512f,..."). Owned by the target. */
TE_API const char *te_target_str(const te_target *);

/* The loop IR of the schedule after the whole lowering pipeline, as text; te_free() it.
   NULL on failure (message on the context). TE_DUMP=all (or a comma-separated list of pass
   names) in the environment prints the IR after each pass to stderr. */
TE_API char *te_lower_text(te_schedule *, int ntensors, te_tensor *const tensors[], int nscalars,
                           te_expr *const scalars[]);

/* Lower and compile the schedule into a module holding one kernel called name (a C
   identifier). Every placeholder and output of the computation must be among tensors. The
   module belongs to the context; building into an existing module is not supported (build one
   module a kernel; te_module_save writes them). */
TE_API te_status te_build(te_schedule *, const char *name, int ntensors,
                          te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                          te_target *, te_module **out);

/* Call a kernel of the module with the given buffers and scalars. scalars[i] points at a value
   of the i-th scalar parameter's dtype. Returns TE_OK or the kernel's error status (with the
   kernel's message on the context), TE_ERR_INVALID_ARG for a wrong argument count, TE_ERR_NOT_FOUND
   for an unknown name. */
TE_API te_status te_module_call(te_module *, const char *name, int ntensors,
                                DLTensor *const tensors[], int nscalars,
                                const void *const scalars[]);

/* The address of a compiled kernel's entry point (to call it directly, without libffi). */
TE_API void *te_module_entry(te_module *, const char *name);

enum {
  TE_SAVE_OBJECT = 1u << 0,
  TE_SAVE_STATIC_LIB = 1u << 1,
  TE_SAVE_HEADER = 1u << 2,
  TE_SAVE_LLVM_IR = 1u << 3,
  TE_SAVE_ASM = 1u << 4,
  TE_SAVE_PTX = 1u << 5,
  TE_SAVE_SPIRV = 1u << 6
};
TE_API te_status te_module_save(te_module *, const char *path_prefix, unsigned what);

/* The module's code as text: "ll" (optimized LLVM IR) or "asm". Owned by the module; NULL with
   TE_ERR_NOT_FOUND for an unknown kind. */
TE_API const char *te_module_source(te_module *, const char *kind);

/* Seconds spent lowering, in LLVM (codegen + optimization) and in JIT for the last te_build. */
typedef struct te_build_times {
  double lower_s, llvm_s, jit_s;
} te_build_times;
TE_API te_build_times te_module_build_times(const te_module *);

#ifdef __cplusplus
}
#endif
#endif
