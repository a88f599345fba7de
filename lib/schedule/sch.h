/* sch.h — operations, tensors, stages and the schedule (internal).
 *
 * An operation (sch_op) is a placeholder or a compute (an extern stage is a compute without a
 * body, extern.c). te_compute makes fresh axis variables for
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
  /* Reductions inside an expression (lift_reduce.c). On the compute whose body held them:
     nlifted operations, in the order the reductions first appear in the body (pre-order, outer
     before inner), and the body as written (source_body, with reduce axes of its own listed in
     source_reduce_axes, the body's own ones first), which te_workload_text prints. On a lifted
     operation: the compute it was lifted from and its index there. */
  int nlifted;
  struct sch_op **lifted;
  te_expr **source_body;
  int nsource_reduce;
  te_expr **source_reduce_axes;
  struct sch_op *lifted_from;
  int lift_index;
  /* A scan (scan.c): the body reads the op's own output at earlier steps along scan_axis
     (steps before scan_ninit are the initial value); scan_state is the placeholder the user's
     update read instead (the workload text prints it as the scan); scan_dependent[d] is true
     when the body reads the scan along axis d at another index than that axis' variable. */
  bool is_scan;
  int scan_axis, scan_ninit;
  te_tensor *scan_state;
  te_expr *scan_source; /* select(t < ninit, init, update) as written: reads scan_state */
  bool scan_dependent[TE_MAX_DIMS];
  /* An extern stage (extern.c): a COMPUTE with no body (nbody 0), computed by a user's C
     function from whole inputs; NULL for every other operation. */
  struct sch_extern *ext;
} sch_op;

typedef struct sch_extern {
  te_extern_fn fn;    /* NULL: resolved from symbol */
  const char *symbol; /* NULL: JIT builds only */
  int ninputs;
  te_tensor **inputs;
} sch_extern;

/* The most reduce axes the reductions enclosing one point of a body may have in all. */
#define SCH_MAX_SCOPE_AXES 64

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
/* te_compute's work once names are checked (fn names the public call in messages): checks the
   bodies, makes the operation with fresh variables, and lifts reductions inside expressions. */
sch_op *sch_make_compute(te_ctx *, const char *fn, const char *name, int ndim,
                         te_expr *const shape[], te_expr *const vars[], int nbody,
                         te_expr *const bodies[]);
/* lift_reduce.c: replaces each reduction inside op's bodies (not a body that is itself a
   reduction) by a read of a new compute NAME_red<n> over the variables it uses, filling the
   lifted fields of op. False (the error on the context) on failure. */
bool sch_lift_reductions(sch_op *op, const char *fn);
/* The body as the user wrote it (reductions inside expressions in place), and its reduce
   axes: what te_workload_text prints. */
te_expr *sch_op_source_body(const sch_op *, int k);
int sch_op_source_reduce_axes(const sch_op *, te_expr *const **axes);

/* The tensors an operation reads (placeholders and computes), each once, in first-use order. */
int sch_op_inputs(sch_op *, te_tensor ***out);
/* The tensors the expressions read (reduction conditions included), each once. */
int sch_expr_inputs(te_ctx *, int nexpr, te_expr *const exprs[], te_tensor ***out);
/* True when the operation's body has no reduction (element-wise in its axes) and is no scan. */
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
  /* a lifted reduction (lift_reduce.c) not placed by the user: computed at the innermost loop
     of the stage reading it, chosen when the schedule is lowered (sch_place_lifted) */
  bool fused_default;
  te_scope scope; /* storage of an intermediate stage (cache stages: their scope) */
  /* te_reorder_storage: 0 (row-major), or the storage dims (ndim plus one per split axis),
     outermost first, as ir_realize_info.order encodes them; storage_split[d] > 0: data axis d
     is stored as two dims, its outer and inner part of a split by that factor */
  int nstorage;
  int8_t storage[2 * TE_MAX_DIMS];
  int64_t storage_split[TE_MAX_DIMS];
};

/* One te_specialize of a schedule (specialize.c): the branch run when cond holds. */
typedef struct sch_special {
  te_expr *cond;       /* simplified; bool */
  te_schedule *branch; /* its first nprefix steps are the parent's, copied */
  int at_step;         /* the parent's steps before it: where the trace writes its block */
} sch_special;

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
  /* te_specialize: the branches, tried in order before this schedule; a branch's first
     nprefix steps were copied from the schedule it specializes */
  int nspecial, cap_special;
  sch_special *special;
  int nprefix;
};

/* specialize.c */
te_status sch_specialize(te_schedule *, te_expr *cond, te_schedule **branch);
/* The variable of the computation named name that a condition may use (a size, a stride
   variable, a parameter its bodies use); NULL with TE_ERR_NOT_FOUND recorded (none, or two),
   nothing recorded when fn is NULL. */
te_expr *sch_condition_var(te_schedule *, const char *name, const char *fn);
/* cond_text.c: a condition as te_specialize's trace writes it, read back (variables through
   sch_condition_var); NULL with TE_ERR_PARSE (or the lookup's error) recorded, nothing when fn
   is NULL (te_specialize's check that its condition reads back). */
te_expr *sch_condition_parse(te_schedule *, const char *text, const char *fn);
/* trace.c: replay of trace text into s, its lines numbered from first_line (messages). */
te_status sch_replay(te_schedule *, const char *trace, int first_line);
/* schedule.c: te_schedule_new's work (errors recorded, no call boundary). */
te_schedule *sch_schedule_new(te_ctx *, int nout, te_tensor *const outs[]);

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

/* placement.c: stages of lifted reductions still at their default (fused_default) are placed
   at the innermost loop of their reader for lowering (attach set to SCH_ATTACH_AT), and put
   back to root by sch_unplace_lifted, so later primitives see the schedule as the user left
   it. */
void sch_place_lifted(te_schedule *);
void sch_unplace_lifted(te_schedule *);

/* scan.c: the checks of a schedule's scans when it is lowered (the rules of scan.c), and of one
   loop annotation: TE_ERR_SCHEDULE, naming the stage, the loop and the rule, when the leaf of a
   scan stage comes from its scan axis and kind would run its steps out of order. */
te_status sch_check_scans(te_schedule *);
te_status sch_scan_check_annotation(te_stage *, te_iter *, ir_for_kind, const char *fn);
/* True when iterator it of st was made (by splits and fuses) from st's root iterator root. */
bool sch_iter_from_root(const te_stage *st, const te_iter *it, int root);
/* True when a depends on b through reads (directly or through any chain of stages). */
bool sch_stage_depends_on(te_stage *a, te_stage *b);
/* The one non-inlined stage that reads st, or NULL when several or none do. */
te_stage *sch_only_reader(te_stage *st);

/* rfactor_split.c: TE_OK when te_rfactor may combine partial results of stage's custom reducer
   with the reducer itself; TE_ERR_UNSUPPORTED (recorded, naming fn and the stage) when its
   results read anything but its own values and parameters, or when a probe at sample values
   finds it not commutative or not associative. */
te_status sch_rfactor_check_combiner(te_ctx *, ir_analyzer *, const char *fn, const char *stage,
                                     const ir_custom_reducer *);

/* extern.c. The refusal of a primitive on an extern stage (fn names the primitive, what the
   rule), TE_OK when st is no extern stage. */
te_status sch_extern_refuse(te_stage *st, const char *fn, const char *what);
/* The extern stage reading st (directly), or NULL. */
te_stage *sch_extern_reader(te_stage *st);
/* The checks of a schedule's extern stages when it is lowered (after bound inference): their
   inputs and themselves realized compactly, not inside a vectorized loop. */
te_status sch_check_externs(te_schedule *);
/* The statement computing extern stage st: call_extern over its inputs and output. */
ir_stmt *sch_extern_stmt(te_stage *st);

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
