/* spirv.h — the SPIR-V back end: Vulkan compute shaders written by te itself (internal).
 *
 * One device kernel of a lowered GPU module (gpu.h) becomes one SPIR-V 1.3 module (Vulkan 1.1
 * environment) with one GLCompute entry point named after the kernel. Files:
 *   spirv_module.c  the word buffer: sections in SPIR-V's order, ids, deduplicated types and
 *                   constants, instruction helpers, the final assembly of the module
 *   spirv_expr.c    expressions: arithmetic, comparisons, logic, select, loads, lets
 *   spirv_cast.c    casts and the 32-bit form of i64 indices (see "Index arithmetic")
 *   spirv_math.c    math calls through GLSL.std.450 (and what it lacks: erf, round, pow's cases)
 *   spirv_math64.c  f64 exp, exp2, log, log2, log10, pow, tanh, sigmoid as SPIR-V functions
 *                   of f64 arithmetic (GLSL.std.450 has them for 16/32-bit floats only), and
 *                   the builder those functions are written with (spirv_math64.h)
 *   spirv_math64_trig.c  f64 sin, cos, tan and erf, the same way
 *   spirv_lanes.c   vectorized loops' vector code rewritten as per-lane scalar code first
 *   spirv_subgroup.c  subgroup reductions, elect, SubgroupId / NumSubgroups (GroupNonUniform)
 *   spirv_stmt.c    statements: structured control flow (OpSelectionMerge / OpLoopMerge),
 *                   stores, lets, barriers
 *   spirv_kernel.c  the kernel's interface (storage buffers in set 0, the push-constant block,
 *                   built-in ids, shared and local arrays, LocalSize) and the compile driver
 *   spirv_tools.c   validation (spvValidate) and disassembly (spvBinaryToText), SPIRV-Tools
 *   vulkan_module.c the host side of a "vulkan" module: te_build and te_module_call
 *
 * The interface a kernel has (what the host side and libte_runtime's launcher follow):
 *   - buffer param i (gpu.h's params order) is binding i of descriptor set 0: a Block-decorated
 *     struct holding a runtime array of the element type (bool and 8/16-bit ints need the
 *     8/16-bit storage features, 64-bit types Int64/Float64);
 *   - scalar params, then symbolic sizes, are the members of one push-constant block in params
 *     order, each at an offset aligned to its size (bool and 8/16-bit scalars are 32-bit
 *     members; sizes are i32, see below); cg_spv_push_layout computes the offsets;
 *   - the workgroup size (LocalSize) is the kernel's block extents, which must be constants.
 *
 * Index arithmetic. te's IR computes indices in i64. This back end keeps every i64 value whose
 * leaves are index variables, sizes and small constants in 32-bit registers ("narrow"), as Halide
 * does, and uses real 64-bit integers (Int64) only for 64-bit data: i64/u64 tensors, i64 scalar
 * parameters and what is computed from them. An operation mixing both widens the narrow operand;
 * an index computed from 64-bit data is narrowed where it indexes memory. The host guarantees
 * that narrowing is exact: at call time every buffer has fewer than 2^31 elements, every size
 * is below 2^31, and so is the number of threads on each axis. A kernel without 64-bit data
 * needs no Int64 capability (most GPUs run 64-bit integer arithmetic slowly or not at all).
 */
#ifndef TE_CODEGEN_SPIRV_H
#define TE_CODEGEN_SPIRV_H

#include <spirv/unified1/GLSL.std.450.h>
#include <spirv/unified1/spirv.h>

#include "codegen.h"
#include "lower/gpu.h"

/* ---- the module being written (spirv_module.c) ---- */

typedef struct cg_spv_words {
  uint32_t *w;
  size_t n, cap;
} cg_spv_words;

/* Capabilities and device features a kernel needs (the host checks them against the device). */
enum {
  CG_SPV_INT64 = 1 << 0,
  CG_SPV_FLOAT64 = 1 << 1,
  CG_SPV_INT16 = 1 << 2,
  CG_SPV_INT8 = 1 << 3,
  CG_SPV_STORAGE8 = 1 << 4,
  CG_SPV_STORAGE16 = 1 << 5,
  CG_SPV_FLOAT16 = 1 << 6, /* an f16 type: the Float16 capability, the device's shaderFloat16 */
  /* subgroup operations (spirv_subgroup.c): GroupNonUniform and GroupNonUniformArithmetic, the
     device's subgroups supporting basic and arithmetic operations in compute shaders */
  CG_SPV_SUBGROUP = 1 << 7
};

/* An emitted value: its id and, for i64 dtypes, whether it is held in 32 bits (see above). */
typedef struct cg_spv_val {
  uint32_t id;
  bool narrow;
} cg_spv_val;

/* How the body reaches a variable. */
typedef struct cg_spv_binding {
  uint32_t id; /* the value, or for a loop variable the Function-storage pointer */
  bool narrow; /* as cg_spv_val */
  bool is_ptr; /* loop variables: OpLoad id at each use */
} cg_spv_binding;

/* How the body reaches a buffer. */
typedef struct cg_spv_buf {
  uint32_t var;       /* the OpVariable */
  SpvStorageClass sc; /* StorageBuffer (params), Workgroup (shared), Function (local) */
  te_dtype elem;      /* the IR element type */
  uint32_t mem_type;  /* the element's memory type (bool: u8) */
  uint32_t ptr_type;  /* pointer to one element in sc */
} cg_spv_buf;

typedef struct cg_spv {
  te_ctx *ctx;
  const char *kernel; /* for messages */
  uint32_t bound;     /* next id */
  cg_spv_words caps, exts, imports, entry, modes, debug, annot, globals;
  cg_spv_words fhead, fvars, code;   /* the function: OpFunction and first label, its Function-
                                       storage variables, then the code */
  cg_spv_words fns;                  /* the functions the entry calls (f64 math), after it */
  uint32_t f64_fns[IR_INTRIN_COUNT]; /* their ids by intrinsic, 0 until first called */
  uint32_t two_over_pi;              /* sin/cos/tan's table of 2/pi (in the one being written) */
  unsigned features;                 /* CG_SPV_* */
  bool oom;
  uint32_t glsl; /* GLSL.std.450 import */
  uint32_t fn;   /* the entry function */
  /* deduplication of types and constants: a table of (key words) -> id */
  uint32_t *dkeys; /* each entry: length word then the key words */
  size_t dkeys_n, dkeys_cap;
  uint32_t *dslots; /* open addressing: offset+1 into dkeys, 0 empty */
  uint32_t *dids;
  size_t dcap, dcount;
  /* the body */
  ir_map *vars;   /* te_expr* VAR -> cg_spv_binding* */
  ir_map *bufs;   /* ir_buffer* -> cg_spv_buf* */
  ir_map *cache;  /* te_expr* -> cg_spv_val* for the current block (cleared on each new block,
                     store, barrier and binding) */
  uint32_t block; /* the current block's label; 0 after a terminator */
  uint32_t t_void, t_bool, t_i32, t_u32;
  /* has_subgroup_ops() (intrinsics.def): which side of such an IF this module is written with */
  bool subgroups;
  uint32_t subgroup_id_var, num_subgroups_var; /* built-in Input variables, 0 until used */
} cg_spv;

void cg_spv_init(cg_spv *, te_ctx *, const char *kernel);
void cg_spv_free(cg_spv *);
uint32_t cg_spv_id(cg_spv *);
/* Appends one instruction (opcode, operands) to a section. */
void cg_spv_op(cg_spv *, cg_spv_words *, SpvOp, int n, const uint32_t *operands);
/* Appends an instruction whose operands end with a literal string. */
void cg_spv_op_str(cg_spv *, cg_spv_words *, SpvOp, int n, const uint32_t *operands,
                   const char *str);
/* An instruction with a result type and a fresh result id in the code section: returns the id. */
uint32_t cg_spv_inst(cg_spv *, SpvOp, uint32_t type, int n, const uint32_t *operands);
void cg_spv_name(cg_spv *, uint32_t id, const char *name);
void cg_spv_decorate(cg_spv *, uint32_t id, SpvDecoration, int n, const uint32_t *extra);
/* OpExtInst of GLSL.std.450 (op: enum GLSLstd450) in the code section. */
uint32_t cg_spv_glsl(cg_spv *, uint32_t type, enum GLSLstd450 op, int n, const uint32_t *args);
void cg_spv_member_decorate(cg_spv *, uint32_t id, uint32_t member, SpvDecoration, uint32_t v);

/* Deduplicated types and constants (in the globals section). */
uint32_t cg_spv_type(cg_spv *, SpvOp, int n, const uint32_t *operands);
uint32_t cg_spv_t_int(cg_spv *, int bits, bool is_signed);
uint32_t cg_spv_t_float(cg_spv *, int bits);
uint32_t cg_spv_t_ptr(cg_spv *, SpvStorageClass, uint32_t pointee);
/* Register type of an IR scalar dtype (bool: OpTypeBool; i64 as stored: 64-bit). */
uint32_t cg_spv_t_dtype(cg_spv *, te_dtype);
/* Memory type of an element (bool: u8). */
uint32_t cg_spv_t_mem(cg_spv *, te_dtype);
uint32_t cg_spv_const(cg_spv *, uint32_t type, int nwords, const uint32_t *words);
uint32_t cg_spv_const_i32(cg_spv *, int32_t);
uint32_t cg_spv_const_u32(cg_spv *, uint32_t);
uint32_t cg_spv_const_bool(cg_spv *, bool);
/* An IR constant of dtype t (ints by value, floats converted to t's width). */
uint32_t cg_spv_const_int(cg_spv *, te_dtype, int64_t);
uint32_t cg_spv_const_float(cg_spv *, te_dtype, double);

/* Opens a new block (OpLabel label) and makes it current. */
void cg_spv_label(cg_spv *, uint32_t label);
void cg_spv_branch(cg_spv *, uint32_t target);

/* The words of the whole module (malloc'd), capabilities and extensions from features. */
uint32_t *cg_spv_finish(cg_spv *, size_t *nwords);

/* ---- expressions (spirv_expr.c, spirv_cast.c) ---- */

/* The value of e; id 0 on failure (message on the context). */
cg_spv_val cg_spv_expr(cg_spv *, te_expr *);
/* e's value as an i32 index (narrowing a 64-bit one). */
uint32_t cg_spv_index(cg_spv *, te_expr *);
/* v (of IR dtype t) converted to dtype to; narrow i64 results stay narrow where exact. */
cg_spv_val cg_spv_cast(cg_spv *, cg_spv_val v, te_dtype from, te_dtype to);
/* A narrow i64 value widened to a real 64-bit one (identity for others). */
uint32_t cg_spv_widen(cg_spv *, cg_spv_val v, te_dtype t);
/* The 32-bit form of an i64 value. */
uint32_t cg_spv_narrow(cg_spv *, cg_spv_val v);
/* The register type of a value of dtype t (i64: by narrowness). */
uint32_t cg_spv_val_type(cg_spv *, te_dtype t, bool narrow);
cg_spv_val cg_spv_call(cg_spv *, te_expr *);
/* The integer operators of intrinsics.def (spirv_bits.c): which calls they are, and a call's
   value. */
bool cg_spv_is_int_op(ir_intrin);
cg_spv_val cg_spv_int_op(cg_spv *, te_expr *);
/* e = select or if_then_else (cond, t, f), cond's value c: a structured selection
   (OpSelectionMerge) whose branches evaluate only the chosen side, joined by an OpPhi. */
cg_spv_val cg_spv_select_branchy(cg_spv *, te_expr *e, uint32_t c);
void cg_spv_cache_clear(cg_spv *);
/* An f64 math call (exp, exp2, log, log2, log10, pow, tanh, sigmoid, sin, cos, tan, erf) on
   argument values args: an OpFunctionCall of its function, written into the module on first use
   (spirv_math64.c). 0 for another intrinsic. */
bool cg_spv_is_f64_fn(ir_intrin);
uint32_t cg_spv_f64_call(cg_spv *, ir_intrin, const uint32_t *args);
/* The subgroup intrinsics (spirv_subgroup.c): which calls they are, and a call's value. */
bool cg_spv_is_subgroup_op(ir_intrin);
cg_spv_val cg_spv_subgroup_op(cg_spv *, te_expr *);
/* Binds var (value or pointer); returns the previous binding (NULL when none). */
cg_spv_binding *cg_spv_bind(cg_spv *, te_expr *var, cg_spv_binding *b);
/* The element pointer of buffer[index] (the index as i32). */
uint32_t cg_spv_elem_ptr(cg_spv *, ir_buffer *, uint32_t index, cg_spv_buf **out);

/* ---- vector code (spirv_lanes.c) ---- */

/* The most lanes a vector of a Vulkan kernel may have (each is written as scalar code). */
#define CG_SPV_MAX_LANES 16
/* body with every vector expression and statement rewritten lane by lane (spirv_lanes.c says
   how; body itself when it has none). NULL on failure: TE_ERR_UNSUPPORTED for vectors of more
   than CG_SPV_MAX_LANES lanes and te_tensorize's vector instructions, named. */
ir_stmt *cg_spv_scalarize(te_ctx *, const char *kernel, ir_stmt *body);

/* ---- statements (spirv_stmt.c) ---- */
bool cg_spv_stmt(cg_spv *, ir_stmt *);

/* ---- kernels (spirv_kernel.c) ---- */

/* Where each push-constant member lives: params[] order; -1 for buffers. */
typedef struct cg_spv_push {
  int nmembers;
  int *offset;     /* byte offset of params[i] in the block, -1 for buffers */
  te_dtype *mtype; /* the member's type (bool/8/16-bit ints: 32-bit; sizes: i32) */
  uint32_t bytes;  /* the block's size, a multiple of 4 */
} cg_spv_push;
te_status cg_spv_push_layout(te_ctx *, const lw_gpu_kernel *, cg_spv_push *out);

/* One compiled kernel: SPIR-V words (malloc'd) and what the host needs to launch it. A kernel
   whose body asks has_subgroup_ops() is written twice: words with subgroup operations, and
   plain_words (malloc'd; NULL for other kernels) without, for devices lacking them. */
typedef struct cg_spv_kernel {
  uint32_t *words;
  size_t nwords;
  unsigned features; /* CG_SPV_* */
  uint32_t *plain_words;
  size_t plain_nwords;
  unsigned plain_features;
  int64_t local[3]; /* LocalSize */
  cg_spv_push push;
} cg_spv_kernel;

/* Compiles one device kernel. TE_ERR_TARGET for non-constant block extents, TE_ERR_UNSUPPORTED
   for constructs this back end does not emit (named), TE_ERR_CODEGEN when validation fails (in
   TE_DEBUG builds, or always when validate is set). */
te_status cg_spv_compile_kernel(te_ctx *, const lw_gpu_kernel *, bool validate, cg_spv_kernel *out);

/* ---- SPIRV-Tools (spirv_tools.c) ---- */

/* TE_OK, or TE_ERR_CODEGEN with the validator's message naming the kernel (Vulkan 1.1 rules). */
te_status cg_spv_validate(te_ctx *, const char *kernel, const uint32_t *words, size_t nwords);
/* The disassembly (malloc'd, spirv-dis's text), NULL on failure. */
char *cg_spv_disassemble(const uint32_t *words, size_t nwords);

#endif
