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

/* Parse a target string. Recognised:
     "llvm" (the host), "llvm -mcpu=native", "llvm -mtriple=T -mcpu=C -mattr=+a,-b"
     "cuda" (= "cuda -arch=sm_80"), "cuda -arch=sm_90": PTX for NVIDIA GPUs
     "vulkan": SPIR-V compute shaders for Vulkan
   GPU targets take -max_threads_per_block=N and -max_shared_memory_per_block=BYTES (the limits
   lowering checks launches against; defaults cuda 1024 and 49152, vulkan 256 and 32768).
   Unknown kinds, options or CPUs are TE_ERR_TARGET (or TE_ERR_PARSE for malformed text).
   The target belongs to the context. */
TE_API te_target *te_target_parse(te_ctx *, const char *);
/* The target as a canonical string, with the CPU and features resolved ("llvm -mtriple=x86_64-
   pc-linux-gnu -mcpu=znver5 -mattr=+avx512f,..."). Owned by the target; NULL for NULL. */
TE_API const char *te_target_str(const te_target *);
/* The target as people read it, for messages and listings: "llvm -mcpu=znver5" for this
   machine. The -mtriple only when it is not the host's platform; of the features, on the host's
   CPU only those set otherwise than on the host ("llvm -mcpu=znver5 -mattr=-avx512f"), on another
   CPU those the string set; at most 6, then "... (N more)". te_target_str names them all (over
   1,000 characters for an AVX-512 host); the short string of a parsed te_target_str is the same
   as the original's. GPU targets: te_target_str. For display only: tuning logs and saved
   libraries record te_target_str, and parsing this string may give a target with other
   features. Owned by the target; NULL for NULL. */
TE_API const char *te_target_short_str(const te_target *);
/* The target's vector register width in bits (512 with AVX-512, 256 with AVX/AVX2, 128
   otherwise; 0 for NULL). The natural number of lanes for te_vectorize is this / the element's
   bits: 16 f32 lanes on AVX-512, 8 on AVX2. Wider vectors work too (they are split into several
   registers), narrower ones leave part of each register unused. */
TE_API int te_target_vector_bits(const te_target *);

/* The loop IR of the schedule after the lowering pipeline, as text; te_free() it: the
   computation, up to the pass simplify_final, without the calling convention that te_build
   adds last (make_closures, make_entry: the argument checks, size bindings and closures;
   TE_STOP_AFTER=make_entry in the environment prints those too, TE_STOP_AFTER=<pass> stops
   after any pass). NULL on failure (message on the context). TE_DUMP=all (or a comma-separated
   list of pass names) in the environment prints the IR after each pass to stderr. */
TE_API char *te_lower_text(te_schedule *, int ntensors, te_tensor *const tensors[], int nscalars,
                           te_expr *const scalars[]);

/* te_lower_text for a target: for a GPU target (cuda, vulkan) the host/device split — the host
   steps (launches with their grid and block extents, device temporaries) and each kernel's
   parameters, shared and local buffers and the body of one thread. A NULL target is
   te_lower_text. Errors as te_build's lowering (limits of the target, unbound stages). */
TE_API char *te_lower_text_for(te_schedule *, te_target *, int ntensors, te_tensor *const tensors[],
                               int nscalars, te_expr *const scalars[]);

/* Lower and compile the schedule into a module holding one kernel called name (a C
   identifier). Every placeholder and output of the computation must be among tensors. The
   module belongs to the context; building into an existing module is not supported (build one
   module a kernel; te_modules_save writes several into one library). */
TE_API te_status te_build(te_schedule *, const char *name, int ntensors, te_tensor *const tensors[],
                          int nscalars, te_expr *const scalars[], te_target *, te_module **out);

/* Call a kernel of the module with the given buffers and scalars. scalars[i] points at a value
   of the i-th scalar parameter's dtype (f16 and bf16: a uint16_t holding the value's 16 bits,
   as the generated header declares them). Returns TE_OK or the kernel's error status (with the
   kernel's message on the context), TE_ERR_INVALID_ARG for a wrong argument count, TE_ERR_NOT_FOUND
   for an unknown name.
   A "vulkan" kernel takes the same CPU DLTensors (kDLCPU) as an "llvm" one: te checks them the
   same way, copies them into storage buffers of the Vulkan device (kept by the module between
   calls), runs the device kernels in order and copies back the tensors they write. Its indices
   are 32-bit: a tensor must have fewer than 2^31 elements and a symbolic size be below 2^31
   (TE_ERR_SHAPE otherwise). Without a Vulkan driver the call is TE_ERR_RUNTIME with a message
   starting "no Vulkan driver"; a device that lacks a feature a kernel needs (64-bit ints or
   floats, 8/16-bit storage) or its workgroup size is TE_ERR_UNSUPPORTED / TE_ERR_TARGET. */
TE_API te_status te_module_call(te_module *, const char *name, int ntensors,
                                DLTensor *const tensors[], int nscalars,
                                const void *const scalars[]);

/* The address of a compiled kernel's entry point (to call it directly, without libffi). */
TE_API void *te_module_entry(te_module *, const char *name);

/* The number of threads that parallel loops (te_parallel) of every kernel in the process use
   from now on; n <= 0 restores the default (the TE_NUM_THREADS environment variable when set,
   else OpenMP's default). Results do not depend on it: each parallel iteration computes the
   same values whichever thread runs it. Kernels in static libraries call
   te_rt_set_num_threads (te/runtime.h), which this forwards to. Thread-safe. */
TE_API void te_set_num_threads(int n);
/* The number of threads parallel loops use now. */
TE_API int te_num_threads(void);

enum {
  TE_SAVE_OBJECT = 1u << 0,
  TE_SAVE_STATIC_LIB = 1u << 1,
  TE_SAVE_HEADER = 1u << 2,
  TE_SAVE_LLVM_IR = 1u << 3,
  TE_SAVE_ASM = 1u << 4,
  TE_SAVE_PTX = 1u << 5,
  TE_SAVE_SPIRV = 1u << 6
};
/* Writes the module's kernels to files, for programs that call them without te (and without
   LLVM) at run time. path_prefix "dir/name" gives, as what asks:
     TE_SAVE_OBJECT      dir/name.o     an ELF object, position independent
     TE_SAVE_STATIC_LIB  dir/libname.a  a System V archive of that object, with a symbol index
     TE_SAVE_HEADER      dir/name.h     one prototype per kernel (argument names = tensor and
                                        parameter names); a comment per kernel giving each
                                        argument's dtype and shape (symbolic sizes named) and the
                                        schedule trace; the target and te's version
     TE_SAVE_LLVM_IR     dir/name.ll    the optimized LLVM IR
     TE_SAVE_ASM         dir/name.s     assembly
     TE_SAVE_PTX         dir/name.ptx   a cuda module's PTX (one module a file)
     TE_SAVE_SPIRV       dir/name.spv   vulkan targets: the SPIR-V binary of the device kernel
                                        (dir/name_0.spv, dir/name_1.spv, ... when there are
                                        several, in launch order; each entry point is named
                                        after its device kernel)
   name must be a C identifier and dir must exist. The object's only global symbols are the
   kernels, by the names given to te_build; every helper is local, so several libraries link
   into one program. A program links libname.a with libte_runtime and libm. Kernels check their
   arguments as JIT-compiled ones do (te_rt_last_error gives the message).
   Objects and libraries can be written for any target te compiles for (another x86-64 CPU,
   -mtriple=aarch64-linux-gnu), not only the host; a target te cannot write ELF objects for
   (Mach-O or COFF platforms, GPUs) is TE_ERR_TARGET, and TE_SAVE_PTX / TE_SAVE_SPIRV on a CPU
   target too. Files are written under temporary names and renamed when all are complete: on any
   failure (TE_ERR_IO for a path that cannot be written) nothing is left behind. */
TE_API te_status te_module_save(te_module *, const char *path_prefix, unsigned what);

/* te_module_save for the kernels of several modules, in one set of files (one object, one
   library, one header): the modules belong to ctx, were built for the same target and have
   distinct kernel names. No modules is TE_ERR_INVALID_ARG (nothing to save). */
TE_API te_status te_modules_save(te_ctx *, int nmodules, te_module *const modules[],
                                 const char *path_prefix, unsigned what);

/* The module's code as text: "ll" (optimized LLVM IR) or "asm"; for a cuda module "ptx" (every
   kernel's PTX; "asm" is the same text, "ll" the NVPTX LLVM IR); for a vulkan module
   "spirv-dis" (the disassembly of every device kernel's SPIR-V, as spirv-dis prints it). Owned
   by the module; NULL with TE_ERR_NOT_FOUND for an unknown kind. */
TE_API const char *te_module_source(te_module *, const char *kind);

/* Seconds spent lowering, in LLVM (codegen + optimization) and in JIT for the module's
   te_build (each >= 0); all 0 for a NULL module. */
typedef struct te_build_times {
  double lower_s, llvm_s, jit_s;
} te_build_times;
TE_API te_build_times te_module_build_times(const te_module *);

#ifdef __cplusplus
}
#endif
#endif
