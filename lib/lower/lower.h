/* lower.h — the lowering pipeline: schedule -> loop IR ready for code generation.
 *
 * The passes and their order are one table in pipeline.c. Each pass is a function
 *     ir_stmt *pass(lw_pass_ctx *, ir_stmt *)
 * in its own file, with a header comment saying what it needs and what it guarantees. A pass
 * returns NULL on failure with the error recorded on the context.
 *
 * The lowering layer (lib/lower/) uses schedule, target and ir (lib/layers.txt). It reads a
 * schedule and a target and makes an lw_func, with its host/device split for GPU targets
 * (gpu.h): what the back ends (lib/codegen) translate. This header names no schedule internals
 * (the files that read them include schedule/sch.h), so the back ends, which include it, see
 * none.
 */
#ifndef TE_LOWER_H
#define TE_LOWER_H

#include "ir/arith.h"
#include "ir/ir.h"
#include "target/target.h"

/* One argument of a lowered function: a buffer (a tensor) or a scalar parameter. */
typedef struct lw_arg {
  bool is_buffer;
  bool is_output;    /* is_buffer: a computed tensor (the kernel writes it), not a placeholder */
  ir_buffer *buffer; /* is_buffer: the flat buffer bound to the i-th DLTensor */
  te_expr *var;      /* scalar parameter (IR_VAR_PARAM or IR_VAR_INDEX var) */
  te_expr *handle;   /* is_buffer: the DLTensor * the entry receives (an IR_VAR_HANDLE variable
                        named as the tensor); made by make_entry, NULL before */
} lw_arg;

/* A lowered kernel: arguments and body. The body reads symbolic sizes as free IR_VAR_INDEX
   variables; size_vars lists them, each with the argument and dimension it is bound from: the
   extent of that dimension, or for a stride variable of a strided placeholder
   (te_placeholder_strided; size_is_stride[k]) its stride. The extents' sizes come first. */
typedef struct lw_func {
  const char *name;
  int nargs;
  lw_arg *args;
  int nsizes;
  te_expr **size_vars;
  int *size_arg, *size_dim; /* where each size var is read from */
  bool *size_is_stride;     /* the k-th is read from the DLTensor's strides, not its shape */
  ir_stmt *body;
  const char *trace; /* the schedule trace, for headers and logs */
  /* GPU targets: the host/device split made by the last pass (lower/gpu.h); NULL for
     CPU targets and before that pass. */
  struct lw_gpu_module *gpu;
} lw_func;

/* Whether f's k-th size variable is a stride variable (functions made by hand have no flags). */
static inline bool lw_size_is_stride(const lw_func *f, int k) {
  return f->size_is_stride && f->size_is_stride[k];
}

/* What a te_specialize branch being lowered knows from its condition (specialize.c), read by
   the pass "specialize" (the substitutions) and by lw_analyzer_new (the others). */
typedef struct lw_facts {
  te_expr *cond;        /* the conditions the branch runs under, joined by && */
  int nsubst;           /* variable -> expression: n == 4 gives n -> 4, n % 16 == 0 gives */
  te_expr **from, **to; /* n -> n_div16*16 */
  int nlets;            /* the variables made for those (n_div16), each let to its value */
  te_expr **let_var, **let_value; /* (n // 16) around the branch's loop nest; >= 1 */
  int nranges;                    /* n < 64: n bound to [lo, hi] */
  te_expr **range_var;
  int64_t *range_lo, *range_hi;
} lw_facts;

typedef struct lw_pass_ctx {
  te_ctx *ctx;
  lw_func *func;
  ir_analyzer *an;
  ir_map *tensor_buffers; /* te_tensor* -> ir_buffer* for arguments (made by lw_lower) */
  const struct te_target *target;
  te_schedule *sch;      /* the schedule being lowered (read by the first pass) */
  const char *api;       /* the public function lowering for, named in messages ("te_build") */
  const lw_facts *facts; /* lowering a te_specialize branch: its condition's facts, else NULL */
} lw_pass_ctx;

/* A target's side of the calling convention (abi.c): what the entry make_entry writes must
   check besides what every target checks (make_entry.c lists the checks). */
typedef struct lw_abi {
  int device_type;         /* the DLDeviceType a tensor must have ... */
  int device_type_also;    /* ... or this one (0: none) */
  const char *device_rule; /* the rule in words, for the message: "kDLCPU = 1; ..." */
  bool in_place;           /* the code works on the tensors' own memory: data must be aligned to
                              the element size and a written tensor must not overlap another
                              argument (the body's noalias); false where the host copies */
  bool index32;            /* the device indexes with 32 bits: sizes and element counts must
                              be below 2^31 (vulkan) */
  const char *target_name; /* "vulkan", for the 32-bit messages */
} lw_abi;

typedef ir_stmt *(*lw_pass_fn)(lw_pass_ctx *, ir_stmt *);
typedef struct lw_pass {
  const char *name;
  lw_pass_fn fn;
  unsigned flags;
} lw_pass;
enum {
  LW_PASS_FLATTENED = 1, /* the IR after this pass has no ACCESS/PROVIDE/REALIZE */
  LW_PASS_ABI = 2,       /* a calling-convention pass: te_lower_text stops before these */
};

/* Lower a schedule. Must be called inside a scratch arena (ir_scratch_begin); the result lives
   there. Checks that every placeholder and output is among tensors, names are C identifiers,
   scalars are parameters. */
te_status lw_lower(te_schedule *, const char *name, int ntensors, te_tensor *const tensors[],
                   int nscalars, te_expr *const scalars[], const struct te_target *, lw_func **out);

/* The size of a lowered body as code (code_size.c): statements after unrolling, loops counted
   once, a vector store one per 256 bits it writes. What a tuner bounds before compiling. */
int64_t lw_code_size(ir_stmt *body);

/* lw_lower for api ("te_build", "te_lower_text": named in error messages), stopping after the
   pass named stop_after (NULL: the whole pipeline; an unknown name is TE_ERR_INVALID_ARG). The
   result of an early stop is for printing only (code generation needs the whole pipeline). */
te_status lw_lower_until(te_schedule *, const char *api, const char *name, int ntensors,
                         te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                         const struct te_target *, const char *stop_after, lw_func **out);

/* Scratch arena, lw_lower_until and lw_func_to_string in one call: the printed IR (malloc'd) or
   NULL with the error on the schedule's context. What te_lower_text and the golden tests use. */
char *lw_lower_text(te_schedule *, const char *api, const char *name, int ntensors,
                    te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                    const char *stop_after);

/* lw_lower_text for a target (NULL: the CPU pipeline as te_lower_text prints it; a GPU target
   prints the kernels and the host steps). Without stop_after the text is the computation: the
   pipeline up to the calling-convention passes (LW_PASS_ABI), which only te_build needs. */
char *lw_lower_text_for(te_schedule *, const struct te_target *, const char *api, const char *name,
                        int ntensors, te_tensor *const tensors[], int nscalars,
                        te_expr *const scalars[], const char *stop_after);

/* The printed lowered function (signature line, then the body). malloc'd. */
char *lw_func_to_string(te_ctx *, const lw_func *);

/* ---- internals shared by the files of this folder ---- */

/* Checks the kernel's arguments (args.c) and makes the function's signature: one ir_buffer per
   tensor (arg_index = position) recorded in *tensor_buffers, the scalars, the size variables. */
te_status lw_make_signature(te_schedule *, const char *api, const char *name, int ntensors,
                            te_tensor *const tensors[], int nscalars, te_expr *const scalars[],
                            lw_func **out, ir_map **tensor_buffers);

/* The pipeline (pipeline.c): the ordered table, and the driver that runs it on pctx->func. */
extern const lw_pass lw_pipeline[];
extern const int lw_pipeline_count;
int lw_pass_index(const char *name); /* -1 when no pass has that name */
te_status lw_run_pipeline(lw_pass_ctx *, const char *stop_after);
/* The passes first .. last (indices of the table) on pctx->func->body, as lw_run_pipeline runs
   them (timing, dumps, the verifier). */
te_status lw_run_passes(lw_pass_ctx *, int first, int last);
/* specialize.c: lw_run_pipeline for a schedule with te_specialize branches: each branch (and
   the general schedule) through the computation's passes under its condition's facts, the
   results joined by if / else on the conditions, then the passes after (up to stop_after). */
te_status lw_run_specialized(lw_pass_ctx *, const char *stop_after);
/* The name of the last pass before the calling-convention passes (where te_lower_text stops). */
const char *lw_last_compute_pass(void);

/* Runs the calling-convention passes (LW_PASS_ABI: make_closures, make_entry) on a function
   made without a schedule (codegen's unit tests build lw_funcs by hand). target NULL: the CPU. */
te_status lw_run_abi_passes(te_ctx *, lw_func *, const struct te_target *);

/* abi.c: the calling convention of pctx's target, and whether a GPU module's kernels write
   buffer b (an argument) — what make_entry needs to know of the host/device split. */
const lw_abi *lw_abi_of(const lw_pass_ctx *);
bool lw_gpu_writes(const lw_func *, const ir_buffer *b);

/* A fresh analyzer that assumes every size variable of pctx->func is >= 1. */
ir_analyzer *lw_analyzer_new(lw_pass_ctx *);

/* The passes (one file each). lw_schedule_to_loops ignores its statement argument: it is the
   start of the pipeline (sch_schedule_to_stmt, then the check that every free variable of the
   loop nest is an argument or a size). */
ir_stmt *lw_schedule_to_loops(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_storage_flatten(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_specialize(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_simplify(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_loop_partition(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_vectorize(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_tensorize(lw_pass_ctx *, ir_stmt *);
/* tensorize_mma.c: the nest of a loop marked "mma_m16n8k16" or "mma_m16n8k32" (id) as one mma
   store; NULL with the error recorded when it does not match. */
ir_stmt *lw_tensorize_mma(lw_pass_ctx *, ir_analyzer *, te_iter *, ir_tensor_intrin id,
                          ir_stmt *loop);
ir_stmt *lw_unroll(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_prefetch(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_nontemporal(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_remove_likely(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_widen_half(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_make_closures(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_make_entry(lw_pass_ctx *, ir_stmt *);

#endif
