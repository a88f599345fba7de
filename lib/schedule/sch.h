/* sch.h — operations, tensors, stages and the schedule (internal).
 *
 * An operation (sch_op) is a placeholder or a compute. te_compute makes fresh axis variables for
 * each operation and substitutes them for the user's variables (and fresh copies of the reduce
 * axes), so every operation owns its variables: a schedule can refer to them by identity.
 *
 * A stage holds the schedule of one operation: its root iteration variables (axes, then reduce
 * axes), the relations primitives made between iteration variables, the ordered leaves, and the
 * attachment. sch_schedule_to_stmt turns the whole schedule into one loop nest of REALIZE /
 * PROVIDE / ACCESS / FOR / IF statements (see lib/schedule/ops_to_loops.c), after bound
 * inference (bound.c) has given every iteration variable its range.
 */
#ifndef TE_SCH_H
#define TE_SCH_H

#include "ir/arith.h"
#include "ir/ir.h"

typedef enum sch_op_kind { SCH_OP_PLACEHOLDER, SCH_OP_COMPUTE } sch_op_kind;

typedef struct sch_op {
  sch_op_kind kind;
  te_ctx *ctx;
  const char *name;
  uint32_t id; /* creation order */
  int ndim;
  te_expr **axes; /* COMPUTE: one fresh IR_VAR_INDEX var per dimension */
  te_expr **shape;
  int nbody; /* COMPUTE: one body per output (tuple reductions have several) */
  te_expr **body;
  int nreduce; /* reduce axes of the body (fresh IR_VAR_REDUCE vars) */
  te_expr **reduce_axes;
  int nout;
  te_tensor **outputs;
} sch_op;

/* Helpers shared by tensor.c and compute.c. */
bool sch_is_identifier(const char *s);
bool sch_check_shape(te_ctx *, const char *fn, const char *name, int ndim, te_expr *const shape[]);
te_expr **sch_copy_shape(te_ctx *, int ndim, te_expr *const shape[]);
te_tensor *sch_make_output(sch_op *, te_dtype, int value_index);
/* The one constructor of operations: kind, name and shape copied in (the shape simplified to
   i64 extents), room for nout outputs (the caller makes them with sch_make_output) and, for a
   compute, for nout bodies and ndim fresh IR_VAR_INDEX axes named axis_names[d] (placeholders
   have no axes: axis_names may be NULL). Reduce axes are the caller's. NULL (the error on ctx)
   when memory runs out. */
sch_op *sch_op_new(te_ctx *, sch_op_kind, const char *name, int ndim, te_expr *const shape[],
                   const char *const axis_names[], int nout);
te_expr *sch_freshen_body(te_ctx *, te_expr *body, int n, te_expr *const from[],
                          te_expr *const to[], sch_op *op);

/* The tensors an operation reads (placeholders and computes), each once, in first-use order. */
int sch_op_inputs(sch_op *, te_tensor ***out);
/* The tensors the expressions read (reduction conditions included), each once. */
int sch_expr_inputs(te_ctx *, int nexpr, te_expr *const exprs[], te_tensor ***out);
/* True when the operation's body has no reduction (element-wise in its axes). */
bool sch_op_is_injective(const sch_op *);

typedef enum sch_iter_type { SCH_ITER_DATA, SCH_ITER_REDUCE } sch_iter_type;

struct te_iter {
  te_expr *var;
  const char *name;
  sch_iter_type type;
  te_stage *stage;
  ir_for_kind kind;  /* annotation of a leaf */
  te_thread_tag tag; /* IR_FOR_THREAD */
  te_tail tail;      /* how a non-dividing split of this iter is handled (te_set_tail) */
  int npragmas;
  const char **pragma_keys;
  int64_t *pragma_values;
  int tensorize; /* te_tensorize: an ir_tensor_intrin (0: none) */
  /* filled by bound inference */
  te_expr *dom_min, *dom_extent;
  te_expr *alloc_extent; /* root data iters: storage extent (a constant bound when one exists) */
};

typedef enum sch_rel_kind { SCH_REL_SPLIT, SCH_REL_FUSE } sch_rel_kind;
typedef struct sch_rel {
  sch_rel_kind kind;
  te_iter *parent, *outer, *inner;          /* SPLIT */
  int64_t factor, nparts;                   /* SPLIT: one of them > 0 */
  te_iter *fuse_outer, *fuse_inner, *fused; /* FUSE */
} sch_rel;

typedef enum sch_attach { SCH_ATTACH_ROOT, SCH_ATTACH_INLINE, SCH_ATTACH_AT } sch_attach;

struct te_stage {
  te_schedule *sch;
  sch_op *op;
  const char *name; /* unique in the schedule: the op's name, or name_1, ... */
  int nroot;
  te_iter **root; /* axes then reduce axes */
  int nleaf;
  te_iter **leaf; /* current loop order, outermost first */
  int nrel;
  sch_rel *rels;
  int cap_rel, cap_leaf, cap_all;
  int nall;
  te_iter **all; /* every iter ever made in this stage (for ownership checks) */
  sch_attach attach;
  te_stage *attach_stage;
  te_iter *attach_iter;
  bool is_output;
  te_scope scope;              /* storage of an intermediate stage (cache stages: their scope) */
  int nstorage;                /* te_reorder_storage: 0 (row-major), or ndim with */
  int8_t storage[TE_MAX_DIMS]; /* the data axes' indices, outermost storage dim first */
};

struct te_schedule {
  te_ctx *ctx;
  int nout;
  te_tensor **outs;
  int nstage;
  te_stage **stages; /* topological order: producers before consumers */
  /* the trace: one step a line */
  int nsteps, cap_steps;
  char **steps;
  /* TE_OK, or the failure of a call that may have left the schedule half changed (out of
     memory, an internal error: see sch_call_end), and that call's name */
  te_status broken;
  const char *broken_by;
};

/* The error contract (core.h) for calls on a schedule. sch_call_begin opens the call
   (ir_call_begin) and returns TE_OK, or the refusal of a schedule an earlier call left half
   changed; sch_call_end closes it (ir_call_end) and marks the schedule unusable when the call
   failed after it may have started changing it. Primitives check their arguments before they
   change anything, so only TE_ERR_NOMEM and TE_ERR_INTERNAL do that. SCH_CALL runs one call
   between the two: return SCH_CALL(s, "te_split", split_impl(...)). */
te_status sch_call_begin(te_schedule *, const char *fn);
te_status sch_call_end(te_schedule *, const char *fn, te_status);
#define SCH_CALL(s, fn, call)                                                                      \
  sch_call_end((s), (fn), sch_call_begin((s), (fn)) == TE_OK ? (call) : te_last_status((s)->ctx))
/* TE_OK when the schedule can be used (lowered, built, traced); else records why. */
te_status sch_check_usable(te_schedule *, const char *fn);

/* schedule.c: list helpers shared by the primitives. */
bool sch_grow(te_ctx *, void ***arr, int *cap, int n, int need);
te_iter *sch_iter_new(te_stage *, const char *base, sch_iter_type, te_expr *var /* NULL: new */);
te_iter *sch_stage_find_iter(te_stage *, const char *name);
int sch_leaf_pos(const te_stage *, const te_iter *);
bool sch_leaf_replace(te_stage *, int pos, int nremove, int nins, te_iter *const ins[]);
sch_rel *sch_rel_add(te_stage *);
te_stage *sch_stage_by_name(te_schedule *, const char *name);
te_stage *sch_stage_of_op(te_schedule *, const sch_op *);
te_stage *sch_stage_of_tensor(te_schedule *, const te_tensor *);
bool sch_stage_reset(te_stage *, sch_op *);
te_stage *sch_stage_insert(te_schedule *, int pos, sch_op *);
int sch_stage_index(const te_schedule *, const te_stage *);

/* True when consumer reads producer's output directly or through inlined stages. */
bool sch_stage_reads(te_stage *consumer, te_stage *producer);

/* stage_values.c: shared by bound inference and loop generation. */
te_expr *sch_inline_expr(te_schedule *, te_expr *);
te_expr *sch_stage_source(te_stage *, int value_index, te_expr **cond);
te_status sch_propagate_domains(te_stage *, ir_analyzer *);
ir_map *sch_iter_values(te_stage *, ir_analyzer *);
bool sch_split_shifts(const sch_rel *, ir_analyzer *);
int sch_split_guards(te_stage *, ir_analyzer *, ir_map *values, bool reduce, te_expr ***out);
te_expr *sch_subst_roots(te_stage *, ir_map *values, te_expr *e);
bool sch_stage_rounds_up(const te_stage *);
te_expr *sch_covered_extent(te_stage *, te_iter *);
te_expr *sch_clamp_reads(te_ctx *, te_expr *);

/* The identity of a built-in reducer for dtype t (0, 1, lowest, highest). */
te_expr *sch_reduce_identity(te_ctx *, ir_reducer_kind, te_dtype t);

/* A stage computed at one of st's loops, or NULL. */
te_stage *sch_attached_at(te_stage *st);

/* The first stage reading p that runs outside c's leaf at (position), or NULL. */
te_stage *sch_reader_outside(te_stage *p, te_stage *c, int at);

/* Bound inference: fills dom_min/dom_extent of every iter of every stage. */
te_status sch_infer_bounds(te_schedule *, ir_analyzer *);

/* The whole schedule as one statement (REALIZE/PROVIDE/ACCESS form). Output tensors and
   placeholders are not realized: they are the kernel's buffers. Call inside a scratch arena. */
te_status sch_schedule_to_stmt(te_schedule *, ir_stmt **out);

/* The placeholders the outputs depend on, in first-use order. */
int sch_schedule_inputs(te_schedule *, te_tensor ***out);

#endif
