/* llvm_cg.h — the LLVM CPU back end's internal state and functions (lib/codegen/llvm_*.c).
 *
 * One cg_llvm holds everything a build needs while it turns one lowered function (lw_func) into
 * LLVM IR: the LLVM context, module, builder and target machine, the common types, the function
 * being written (cg_fn) and the maps from IR identities (VARs, buffers) to LLVM values. Files
 * split by concern, as in ponyc/c3c:
 *   llvm_types.c     dtypes -> LLVM types and constants
 *   llvm_expr.c      expressions (arithmetic, comparisons, casts, vectors, let)
 *   llvm_half.c      conversions to and from f16 and bf16 (instructions or inline code)
 *   llvm_call.c      math calls (LLVM intrinsics and libm)
 *   llvm_vmath.c     exp, log, tanh, sigmoid as inline polynomials (scalars and vectors)
 *   llvm_mem.c       loads and stores (bool is i1 in registers, i8 in memory)
 *   llvm_stmt.c      statements; early returns that free live heap allocations
 *   llvm_parallel.c  parallel loops outlined into closures for te_rt_parallel_for
 *   llvm_entry.c     the typed entry point: make_entry's checks, binds and compute_scope
 *   llvm_module.c    module setup, verification, O3, the compile driver
 *   llvm_jit.c       ORC LLJIT, absolute symbols, asm emission, disposal
 *   llvm_rt.c        calls into libte_runtime (te/runtime.h)
 *   save_object.c    modules linked into one and written as an object, asm or IR (save.h)
 * and, outside the LLVM state: module.c (te_module_call through libffi, texts, times). Targets
 * are lib/target's (te_target_parse, target machines: target/target_llvm.h); te_build, which runs
 * the lowering and then this back end, is lib/driver's.
 *
 * Error convention: functions return NULL / false on failure with the message on the context
 * (TE_ERR_INTERNAL for IR that cannot reach codegen, TE_ERR_TARGET for constructs the CPU cannot
 * run). Nothing here aborts.
 */
#ifndef TE_LLVM_CG_H
#define TE_LLVM_CG_H

#include <llvm-c/Analysis.h>
#include <llvm-c/Core.h>
#include <llvm-c/Target.h>
#include <llvm-c/TargetMachine.h>

#include "codegen.h"
#include "target/target_llvm.h"

struct cg_llvm;
/* The host part of a GPU module (ptx_host.c): the entry point is the one make_entry wrote for the
   target (its checks ask for device memory), but its compute_scope launches kernels instead of
   running loops. impl writes the scope's function (cg_closure_function: data pointers, scalars,
   sizes) from the module's host steps. */
typedef struct cg_host_hooks {
  LLVMValueRef (*impl)(struct cg_llvm *, const ir_closure *, lw_func *, void *data);
  void *data;
} cg_host_hooks;

/* The function being written. */
typedef struct cg_fn {
  LLVMValueRef fn;
  LLVMBasicBlockRef alloca_block; /* the entry block: allocas, then a branch to the body */
  int nlive, cap;                 /* heap allocations live at the insertion point */
  LLVMValueRef *live;
  int64_t stack_bytes; /* the bytes of the buffers given allocas so far (llvm_stmt.c) */
} cg_fn;

typedef struct cg_llvm {
  te_ctx *ctx;
  const te_target *target;
  LLVMContextRef lctx;
  LLVMModuleRef mod;
  LLVMBuilderRef b;
  LLVMTargetMachineRef tm;
  LLVMTypeRef t_void, t_i1, t_i8, t_i16, t_i32, t_i64, t_f32, t_f64, t_ptr;
  LLVMTypeRef t_dltensor; /* DLPack v0.6 DLTensor */
  const char *kernel;     /* the kernel's name, for messages */
  ir_map *vars;           /* VAR te_expr* -> LLVMValueRef (NULL: not bound here) */
  ir_map *bufs;           /* ir_buffer* -> LLVMValueRef pointer to element 0 */
  cg_fn fn;
  LLVMValueRef mask; /* inside `attr vector_mask`: the live lanes (vector loads and stores are
                        masked with it); NULL elsewhere */
  ir_analyzer *an;   /* modular facts on indices, for the alignment of accesses (llvm_mem.c) */
  /* device code: ir_buffer* -> the alignment in bytes of its base pointer, (void *)(uintptr_t),
     where it is known better than llvm_mem.c's default (a CUDA kernel's arguments checked
     16-byte aligned: ptx_vector.c); NULL: the defaults */
  ir_map *base_align;
  /* device code: a vector_mask region is written twice, its unmasked copy taken when every lane
     is live (llvm_stmt.c; ptx_vector.c says why) */
  bool mask_fast_path;
  /* inside `attr nontemporal`'s aligned copy (llvm_stream.c): unmasked stores to argument
     buffers carry !nontemporal (streaming stores) */
  bool nontemporal;
  const cg_host_hooks *host;         /* GPU modules' host entry (llvm_entry.c); NULL for CPUs */
  lw_func *func;                     /* the function whose entry is being written */
  bool (*barrier)(struct cg_llvm *); /* device code: writes IR_S_BARRIER (llvm_stmt.c) */
  /* device code: a target's own code for a math call (llvm_call.c asks it first). Returns false
     when the call is not the target's to write; else true with *out the value (NULL: an error,
     recorded on the context). args are the call's arguments, already generated. */
  bool (*math)(struct cg_llvm *, const te_expr *call, LLVMValueRef *args, LLVMValueRef *out);
  /* device code: writes a store whose value is a warp's tensor-core call (ir_is_mma_call,
     llvm_mem.c asks it); NULL where the target has none */
  bool (*tensor_store)(struct cg_llvm *, ir_stmt *);
  LLVMValueRef warp_lane; /* device code of a warp kernel (lower/gpu.h): the lane, i32 */
  /* device code: writes a warp_shuffle_xor call (llvm_expr.c asks it); NULL where the target has
     none. block: the kernel's threads a block on x, y, z when constant (the warps that exist),
     else 0 */
  LLVMValueRef (*warp_shuffle)(struct cg_llvm *, te_expr *call);
  int64_t block[3];
} cg_llvm;

/* llvm_stream.c: `attr nontemporal` (lower/nontemporal.c), its body versioned on alignment */
bool cg_nontemporal_attr(cg_llvm *, ir_stmt *);
/* Marks a store instruction streaming when cg->nontemporal is set and buf is an argument. */
void cg_mark_nontemporal(cg_llvm *, const ir_buffer *buf, LLVMValueRef store);

/* llvm_types.c */
LLVMTypeRef cg_type(cg_llvm *, te_dtype);     /* register type (bool: i1), vectors by lanes */
LLVMTypeRef cg_mem_type(cg_llvm *, te_dtype); /* memory type (bool: i8) */
LLVMValueRef cg_const_int(cg_llvm *, te_dtype, int64_t); /* splat when lanes > 1 */
LLVMValueRef cg_const_float(cg_llvm *, te_dtype, double);
/* Vectors have at most this many lanes (LW_VECTOR_MAX in vectorize.c): element arrays of
   constant vectors live on the stack, so cg_splat and friends never fail for lack of memory. */
#define CG_MAX_LANES 1024
LLVMValueRef cg_splat(cg_llvm *, LLVMValueRef scalar, int lanes);
LLVMValueRef cg_to_i64(cg_llvm *, LLVMValueRef v, te_dtype); /* widen an index to i64 */
void cg_fn_attrs(cg_llvm *, LLVMValueRef fn); /* target-cpu, features, vector width, nounwind */
void cg_add_enum_attr(cg_llvm *, LLVMValueRef fn, unsigned index, const char *name);

/* llvm_expr.c */
LLVMValueRef cg_expr(cg_llvm *, te_expr *);
LLVMValueRef cg_cast_value(cg_llvm *, LLVMValueRef v, te_dtype from, te_dtype to);
/* Binds (or, with value NULL, unbinds) a variable; returns the previous binding. */
LLVMValueRef cg_bind(cg_llvm *, te_expr *var, LLVMValueRef value);

/* llvm_half.c: a cast from or to f16/bf16 (from != to; lanes equal). */
LLVMValueRef cg_half_cast(cg_llvm *, LLVMValueRef v, te_dtype from, te_dtype to);

/* llvm_call.c */
LLVMValueRef cg_call(cg_llvm *, te_expr *);
/* The integer operators of intrinsics.def (llvm_bits.c); NULL for any other call. */
LLVMValueRef cg_int_op(cg_llvm *, ir_intrin, te_dtype, LLVMValueRef *args);
/* te_tensorize's dot4_u8s8 and dot2_bf16 calls (llvm_dot.c). */
LLVMValueRef cg_dot(cg_llvm *, te_expr *);

/* llvm_vmath.c: exp, log, tanh and sigmoid of f32/f64 scalars and vectors as inline polynomial
   code (no libm call, so vectors stay vectors). t is the dtype of x (lanes included). */
LLVMValueRef cg_vm_exp(cg_llvm *, te_dtype t, LLVMValueRef x);
LLVMValueRef cg_vm_log(cg_llvm *, te_dtype t, LLVMValueRef x);
LLVMValueRef cg_vm_tanh(cg_llvm *, te_dtype t, LLVMValueRef x);
LLVMValueRef cg_vm_sigmoid(cg_llvm *, te_dtype t, LLVMValueRef x);
/* A call of the LLVM intrinsic `name` overloaded on one type (llvm.fabs, llvm.vector.reduce.or,
   ...); NULL with an internal error when LLVM has no such intrinsic. */
LLVMValueRef cg_intrinsic(cg_llvm *, const char *name, LLVMTypeRef overload, int n,
                          LLVMValueRef *args);
/* A call to a function declared once per module (created on first use). */
LLVMValueRef cg_call_fn(cg_llvm *, const char *name, LLVMTypeRef ret, int n,
                        LLVMTypeRef const params[], LLVMValueRef const args[]);

/* llvm_mem.c */
/* (p0 | p1 | ...) % align == 0 over the bound pointers of the n buffers (an i1 named name);
   NULL with an internal error recorded when one is not bound. align: a power of two. */
LLVMValueRef cg_bases_aligned(cg_llvm *, int n, const ir_buffer *const bufs[], unsigned align,
                              const char *name);
LLVMValueRef cg_load(cg_llvm *, te_expr *);
/* The alignment in bytes of element `at` (a scalar index) of elem-byte elements from a base
   aligned to `base` bytes: from at's modular facts (cg->an), at least elem, at most base. */
unsigned cg_index_align(cg_llvm *, te_expr *at, unsigned elem, unsigned base);
bool cg_store(cg_llvm *, ir_stmt *);

/* llvm_stmt.c */
bool cg_stmt(cg_llvm *, ir_stmt *);
LLVMBasicBlockRef cg_new_block(cg_llvm *, const char *name);
/* if (cond) { te_rt_error(code, msg); cleanup; return code; } — code is a te_status. */
void cg_fail_if(cg_llvm *, LLVMValueRef cond, te_status code, const char *msg);
/* if (cond) { te_rt_value_error(code, msg, got); cleanup; return code; } (got: an i64). */
void cg_fail_with_value(cg_llvm *, LLVMValueRef cond, te_status code, const char *msg,
                        LLVMValueRef got);
/* llvm_extern.c: call_extern, the call of an extern stage's function. */
bool cg_call_extern(cg_llvm *, ir_stmt *);
/* The name a module calls extern stage `stage` of kernel `kernel` by when it has no symbol. */
void cg_extern_private_name(const char *kernel, const char *stage, char *buf, size_t size);
/* if (code_value != 0) { cleanup; return code_value; } */
void cg_return_if_nonzero(cg_llvm *, LLVMValueRef code_value);
/* Starts a function: an alloca block and a body block, builder at the body. */
void cg_fn_begin(cg_llvm *, LLVMValueRef fn);
LLVMValueRef cg_alloca(cg_llvm *, LLVMTypeRef, const char *name, unsigned align);

/* llvm_parallel.c: `attr closure` around a parallel loop */
bool cg_parallel_closure(cg_llvm *, ir_stmt *);

/* llvm_rt.c: the runtime functions generated code calls (te/runtime.h). */
LLVMValueRef cg_rt_error(cg_llvm *, LLVMValueRef code, LLVMValueRef msg);
/* te_rt_arg_error(code, what, expected, got), or te_rt_value_error(code, what, got) when
   expected is NULL. */
LLVMValueRef cg_rt_arg_error(cg_llvm *, te_status, const char *what, LLVMValueRef expected,
                             LLVMValueRef got);
LLVMValueRef cg_rt_alloc(cg_llvm *, LLVMValueRef bytes);
void cg_rt_free(cg_llvm *, LLVMValueRef ptr);
LLVMValueRef cg_rt_parallel_for(cg_llvm *, LLVMValueRef fn, LLVMValueRef closure, LLVMValueRef n);
LLVMValueRef cg_str(cg_llvm *, const char *s); /* a private constant C string */

/* llvm_entry.c: the typed entry NAME and its body function; returns the entry. */
LLVMValueRef cg_entry(cg_llvm *, lw_func *);
/* The calling convention's intrinsics (dl_*, isnull, ptr_add) on evaluated operands; NULL for
   another id. */
LLVMValueRef cg_abi_call(cg_llvm *, ir_intrin, LLVMValueRef *args);
bool cg_buffer_bind(cg_llvm *, ir_stmt *);   /* attr buffer_bind */
bool cg_compute_scope(cg_llvm *, ir_stmt *); /* attr compute_scope */
/* The internal function of a closure: i32 NAME(captures...) (buffers as pointers). */
LLVMValueRef cg_closure_function(cg_llvm *, const ir_closure *);
/* Binds a closure's captures to fn's parameters from index first on (buffers noalias). */
void cg_bind_captures(cg_llvm *, LLVMValueRef fn, const ir_closure *, unsigned first, bool names);
/* The value of a capture where the closure is made (NULL with an internal error: unbound). */
LLVMValueRef cg_captured(cg_llvm *, const ir_capture *);

/* llvm_module.c: cg_llvm_compile for the host part of a GPU module: the entry NAME is compiled
   for the CPU target host (and JIT'd) with hooks writing its body; the module keeps its own
   (GPU) target. */
te_status cg_llvm_compile_host(te_module *, lw_func *, te_target *host, const cg_host_hooks *);

/* llvm_jit.c: the module's LLVM state (te_module.llvm). */
typedef struct cg_llvm_module {
  LLVMContextRef lctx; /* owned here until handed to the JIT's thread-safe context */
  void *tsctx;         /* LLVMOrcThreadSafeContextRef when JIT'd */
  void *jit;           /* LLVMOrcLLJITRef when JIT'd */
  LLVMTargetMachineRef tm;
  LLVMModuleRef opt; /* optimized clone kept for asm (and objects later) */
  LLVMModuleRef mod; /* the module while not handed to the JIT */
} cg_llvm_module;
/* Takes the module; for a host target JITs it and fills kernel entries. */
te_status cg_jit_add(te_module *, cg_llvm_module *, LLVMModuleRef);
char *cg_emit_asm(te_module *);             /* malloc'd asm text, NULL with the error recorded */
void cg_llvm_module_free(cg_llvm_module *); /* NULL is allowed */

/* save_object.c (see save.h): the kernels of several modules as one LLVM module, in a fresh
   LLVM context. */
typedef struct cg_blob cg_blob; /* save.h */
typedef struct cg_linked {
  LLVMContextRef lctx;
  LLVMModuleRef mod;
  LLVMTargetMachineRef tm;
} cg_linked;

/* Links the optimized code of mods (same target, distinct kernel names: checked by the caller)
   into one module named name. */
te_status cg_link_modules(te_ctx *, int n, te_module *const mods[], const char *name,
                          cg_linked *out);
/* The linked module as an object file or asm text (LLVMObjectFile / LLVMAssemblyFile). */
te_status cg_emit(te_ctx *, cg_linked *, LLVMCodeGenFileType, cg_blob *out);
/* The linked module as LLVM IR text. */
te_status cg_emit_ll(te_ctx *, cg_linked *, cg_blob *out);
/* The global symbols the object defines (the kernels), malloc'd array of malloc'd names. */
int cg_exported_symbols(cg_linked *, char ***out);
void cg_linked_free(cg_linked *);

void cg_llvm_setup(cg_llvm *cg, te_module *m, lw_func *f, LLVMTargetMachineRef tm,
                   const char *triple);

LLVMValueRef cg_prefetch(cg_llvm *cg, te_expr *load);

#endif
