/* gpu.h — a lowered GPU module: the host/device split of one lowered function (internal).
 *
 * For a GPU target (cuda, vulkan) the lowering pipeline ends with the pass "gpu_split"
 * (lib/lower/gpu_split.c), which cuts the lowered function into
 *   - device kernels: one per outermost group of thread-bound loops. A kernel's body is the code
 *     of ONE thread: every thread-bound loop is gone, its variable replaced by the kernel's
 *     block/thread index variable (plus the loop's min), and
 *   - the host part: the launches in order, and the global temporaries that live between them.
 * Both back ends (PTX: lib/codegen/ptx_*.c; SPIR-V: lib/codegen/spirv_*.c) consume only this
 * structure; they never see thread-bound loops. The split lives in the build's scratch arena,
 * reachable from lw_func::gpu (NULL for CPU targets). It is the lowering layer's: lib/lower makes
 * and prints it (gpu_print.c), lib/codegen only reads it.
 *
 * Stability: this is the contract between the GPU lowering and the two back ends. Changes are
 * additive (new fields at the end of a struct, new enum values at the end); existing fields keep
 * their meaning.
 *
 * ---- What a kernel body may contain (guaranteed by gpu_split) ----
 *   - Statements: FOR (kinds SERIAL and UNROLLED only; UNROLLED may be emitted as a plain loop),
 *     STORE, LET_STMT, IF, SEQ, EVALUATE, BARRIER, ATTR (ignorable annotations: emit the body).
 *     No ALLOCATE (shared and local buffers are hoisted into lw_gpu_kernel::shared/local), no
 *     REALIZE/PROVIDE (flattened), no ASSERT, no thread-bound or parallel FOR.
 *     No VECTORIZED loop (vectorize.c ran before); RAMP/BROADCAST, vector loads/stores and
 *     `attr vector_mask` regions appear only where the schedule asked for vectorize (the cuda
 *     back end writes them: ptx_vector.c); a back end that cannot emit them refuses with
 *     TE_ERR_UNSUPPORTED naming the kernel.
 *   - Expressions: the ordinary flattened expression IR (ir.h). Free variables of a body are
 *     exactly: the kernel's index variables (lw_gpu_kernel::idx), its scalar and size params.
 *     Buffers read or written are exactly: its buffer params, its shared and its local buffers.
 *   - Index arithmetic is i64 (as everywhere in te); the index variables are i64 too (a back end
 *     reads the 32-bit hardware id and zero-extends it).
 *   - Threads beyond a stage's extent are already guarded in the body: when a stage inside the
 *     kernel uses fewer threads than the launch's block size on an axis, its statements are
 *     wrapped in `if (threadIdx.x < extent)`. Back ends emit guards as ordinary IFs.
 *
 * ---- BARRIER ----
 *   IR_S_BARRIER in a body means: every thread of the block waits here, and shared-memory writes
 *   made before it are visible to every thread of the block after it (CUDA bar.sync 0 /
 *   __syncthreads; SPIR-V OpControlBarrier(Workgroup, Workgroup, AcquireRelease|WorkgroupMemory)).
 *   gpu_split puts barriers only in block-uniform control flow: never under an IF whose condition
 *   depends on a thread index, never inside a loop whose trip count depends on one.
 *
 * ---- Cross-thread reductions (gpu_tree*.c) ----
 *   cuda: warp_shuffle_xor calls (intrinsics.def), each the value of a LET_STMT at a point every
 *   thread of its warp reaches together. vulkan: `if (has_subgroup_ops()) A else B`, A using the
 *   subgroup intrinsics; both sides hold barriers, block-uniform since the condition is a
 *   property of the device. The SPIR-V back end writes the kernel once with A, once with B.
 *
 * ---- Parameter order (the device calling convention; both back ends keep it) ----
 *   params[] lists buffers first (by increasing arg_index of the lowered function, then host
 *   temporaries in the order of their LW_GPU_STEP_ALLOC steps), then scalar parameters (in the
 *   lowered function's order), then symbolic sizes (in lw_func::size_vars order). PTX: one
 *   kernel parameter each (buffers: a global pointer to the element type; scalars by value;
 *   sizes as i64). SPIR-V: buffer i is binding i of descriptor set 0; scalars then sizes are
 *   the members of one push-constant block, in params[] order.
 */
#ifndef TE_LOWER_GPU_MODULE_H
#define TE_LOWER_GPU_MODULE_H

#include "lower.h"

/* The kernel's index variables, indexed by te_thread_tag: TE_BLOCK_X .. TE_THREAD_Z. */
enum { LW_GPU_NIDX = 6 };

typedef enum lw_gpu_param_kind {
  LW_GPU_PARAM_BUFFER, /* a global-memory buffer: a function argument or a host temporary */
  LW_GPU_PARAM_SCALAR, /* a scalar kernel parameter (IR_VAR_PARAM var, any supported dtype) */
  LW_GPU_PARAM_SIZE    /* a symbolic size (IR_VAR_INDEX var, i64), bound by the host */
} lw_gpu_param_kind;

typedef struct lw_gpu_param {
  lw_gpu_param_kind kind;
  ir_buffer *buffer; /* BUFFER: scope global; arg_index >= 0 for a function argument (the
                        DLTensor at that position), -1 for a host temporary (LW_GPU_STEP_ALLOC) */
  te_expr *var;      /* SCALAR, SIZE: the variable the body reads */
  bool read;         /* BUFFER: the body loads from it */
  bool written;      /* BUFFER: the body stores to it */
} lw_gpu_param;

/* A buffer allocated inside a kernel: scope TE_SCOPE_SHARED (one per block, in workgroup /
   addrspace(3) memory) or TE_SCOPE_LOCAL (one per thread: registers or a private array).
   The element count is a compile-time constant (gpu_split refuses symbolic ones). The memory
   is uninitialized at kernel start. */
typedef struct lw_gpu_alloc {
  ir_buffer *buffer; /* buffer->dtype is the element type; buffer->name is unique in the kernel */
  int64_t count;     /* elements (>= 1) */
} lw_gpu_alloc;

typedef struct lw_gpu_kernel {
  const char *name; /* a C identifier, unique in the module: "<func>_kernel<k>" */
  int index;        /* position in lw_gpu_module::kernels */
  int nparams;
  lw_gpu_param *params; /* see "Parameter order" above */
  /* Launch dimensions: grid[d] blocks and block[d] threads per block on axis d = x, y, z.
     i64 expressions over the size and scalar params only (the host evaluates them at call
     time); the constant 1 on an axis no loop is bound to. block[] is constant when the
     schedule's thread extents are (always checked against the target's limits when constant). */
  te_expr *grid[3];
  te_expr *block[3];
  /* The index variables the body reads: idx[TE_BLOCK_X] is blockIdx.x, idx[TE_THREAD_X] is
     threadIdx.x, ... (IR_VAR_INDEX, i64, named "blockIdx.x" etc.). NULL when unused. Their
     range is [0, grid[d]) or [0, block[d]). */
  te_expr *idx[LW_GPU_NIDX];
  int nshared;
  lw_gpu_alloc *shared; /* TE_SCOPE_SHARED buffers */
  int nlocal;
  lw_gpu_alloc *local;  /* TE_SCOPE_LOCAL buffers */
  int64_t shared_bytes; /* sum over shared of count * element bytes (checked against the target) */
  bool uses_barrier;    /* the body contains IR_S_BARRIER */
  ir_stmt *body;        /* the code of one thread */
  /* Warp kernels (gpu_warp.c): a kernel whose body holds an mma store runs a warp of
     32 hardware threads for each of its threads. Then lane is the lane variable (i64, 0..31,
     "laneid"; NULL in other kernels), block[0] counts hardware threads (32 times the body's
     threadIdx.x extent), idx[TE_THREAD_X] is the hardware threadIdx.x / 32, every store to a
     global or shared buffer other than the mma's runs in lane 0 only, and the back end makes
     the warp's stores visible to its lanes around each mma (PTX bar.warp.sync). */
  te_expr *lane;
} lw_gpu_kernel;

/* One step of the host part, run in order by the host entry. */
typedef enum lw_gpu_step_kind {
  LW_GPU_STEP_ALLOC,  /* allocate buffer (global scope, count elements) on the device */
  LW_GPU_STEP_LAUNCH, /* launch kernels[kernel] with its grid/block, after all earlier steps */
  LW_GPU_STEP_FREE    /* release a buffer of an earlier ALLOC (after the launches using it) */
} lw_gpu_step_kind;

typedef struct lw_gpu_step {
  lw_gpu_step_kind kind;
  int kernel;        /* LAUNCH */
  ir_buffer *buffer; /* ALLOC, FREE: a host temporary (arg_index -1) */
  te_expr *count;    /* ALLOC: element count, i64 over sizes and scalars */
} lw_gpu_step;

typedef struct lw_gpu_module {
  int nkernels;
  lw_gpu_kernel *kernels;
  int nsteps;
  lw_gpu_step *steps; /* the host part; launches in the order the stages compute */
  /* Launches in one module run back to back on one stream/queue: a kernel sees every global
     write of the kernels launched before it. The host entry runs make_entry's checks of the
     DLTensors (device type kDLCUDA for cuda; CPU tensors for vulkan, which copies them) before
     the first step. */
} lw_gpu_module;

/* The printed split (malloc'd): each kernel with its launch dimensions, parameters, shared and
   local buffers and body, then the host steps. What te_lower_text shows for a GPU target. */
char *lw_gpu_module_to_string(te_ctx *, const lw_func *, const lw_gpu_module *);

#endif
