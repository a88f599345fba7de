/* te/schedule.h — how a computation is executed.
 *
 * A schedule holds one stage per operation reachable from its outputs. A stage has one root
 * iteration variable per output dimension and per reduce axis; primitives derive new iteration
 * variables from them (split: one into outer and inner; fuse: two adjacent into one) and order,
 * annotate and place them. Each primitive checks its arguments and returns TE_ERR_SCHEDULE (or
 * TE_ERR_INVALID_ARG for NULLs) with a message naming the stage, the axis and the rule.
 *
 * Iteration variables are named after their origin: splitting "i" gives "i.o" and "i.i",
 * fusing "i" and "j" gives "i.j.f". They are owned by the schedule.
 *
 * Every primitive that succeeds is recorded as one step of the schedule's trace
 * (te_schedule_trace), which te_schedule_replay can apply to a fresh schedule of the same
 * computation.
 */
#ifndef TE_SCHEDULE_H
#define TE_SCHEDULE_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct te_schedule te_schedule;
typedef struct te_stage te_stage;
typedef struct te_iter te_iter;

typedef enum { TE_SCOPE_GLOBAL, TE_SCOPE_LOCAL, TE_SCOPE_SHARED } te_scope;
typedef enum {
  TE_BLOCK_X, TE_BLOCK_Y, TE_BLOCK_Z, TE_THREAD_X, TE_THREAD_Y, TE_THREAD_Z
} te_thread_tag;
typedef enum { TE_TAIL_GUARD, TE_TAIL_SHIFT_INWARDS, TE_TAIL_ROUND_UP } te_tail;

/* A schedule for computing the given output tensors (computes, not placeholders), with every
   stage at its default: computed at root, loops in definition order, serial. */
TE_API te_schedule *te_schedule_new(te_ctx *, int nout, te_tensor *const outs[]);
/* The stage that computes t; NULL (TE_ERR_NOT_FOUND) when t is not part of the schedule or is a
   placeholder. */
TE_API te_stage *te_stage_of(te_schedule *, te_tensor *);
/* Root iteration variables: the i-th data-parallel axis, the i-th reduce axis. */
TE_API te_iter *te_axis(te_stage *, int i);
TE_API te_iter *te_reduce_iter(te_stage *, int i);
/* The current leaf loops, outermost first: their count, and the i-th. */
TE_API int te_leaf_count(te_stage *);
TE_API te_iter *te_leaf(te_stage *, int i);
TE_API const char *te_iter_name(const te_iter *);

/* Split a leaf into outer and inner loops: inner has extent factor, outer ceil(extent/factor).
   When the factor does not divide the extent the tail is guarded (see te_set_tail). */
TE_API te_status te_split(te_stage *, te_iter *, int64_t factor, te_iter **outer, te_iter **inner);
/* Split so that outer has extent nparts. */
TE_API te_status te_split_nparts(te_stage *, te_iter *, int64_t nparts, te_iter **outer,
                                 te_iter **inner);
/* Split x by fx and y by fy, then order xo, yo, xi, yi (x must be outside y). */
TE_API te_status te_tile(te_stage *, te_iter *x, te_iter *y, int64_t fx, int64_t fy,
                         te_iter **xo, te_iter **yo, te_iter **xi, te_iter **yi);
/* Fuse two adjacent leaves (outer immediately outside inner) into one. Both must be
   data-parallel or both reductions. */
TE_API te_status te_fuse(te_stage *, te_iter *outer, te_iter *inner, te_iter **fused);
/* Reorder: the given leaves take, in the given order, the positions they occupied. */
TE_API te_status te_reorder(te_stage *, int n, te_iter *const order[]);

/* Loop annotations.
   te_vectorize: the loop becomes straight-line vector code of L lanes, L its extent (a split's
   constant factor; the natural choice is te_target_vector_bits / the element's bits). A tail
   whose extent is bounded by the factor becomes masked vector code. Refused at te_build with
   TE_ERR_SCHEDULE, naming the loop: a loop with no constant extent or bound ("split it by a
   constant first"), more than 1024 lanes, a store all lanes would make to one element, an inner
   loop whose extent depends on the loop without a constant bound. A reduction axis is refused
   here (use te_rfactor). A vectorized loop holding another vectorized loop is unrolled around
   the inner vector code. */
TE_API te_status te_vectorize(te_stage *, te_iter *);
TE_API te_status te_unroll(te_stage *, te_iter *);
TE_API te_status te_parallel(te_stage *, te_iter *);
TE_API te_status te_bind(te_stage *, te_iter *, te_thread_tag);

/* Placement. compute_inline substitutes the stage's body into its readers (an injective stage,
   not an output); compute_root computes it in full before its readers (the default). */
TE_API te_status te_compute_at(te_stage *producer, te_stage *consumer, te_iter *at);
TE_API te_status te_compute_inline(te_stage *);
TE_API te_status te_compute_root(te_stage *);

/* Storage order of a buffer te allocates for the stage (an intermediate stage, a cache stage):
   dims lists each of its data axes (te_axis(st, i)) once, outermost storage dimension first;
   the last is contiguous. The default is the axes' own order (row-major). Loops are unchanged:
   only which elements are neighbours in memory is. With te_cache_write or te_cache_read a block
   can so be laid out differently from its tensor, e.g. a local accumulator or a copied weight
   block whose channel axis is contiguous, for vectors along channels. Outputs and placeholders
   have their caller's layout: TE_ERR_SCHEDULE, as for a count other than the stage's number of
   axes, an iter that is not a data axis of the stage (a split, fused or reduce iter) or an axis
   given twice. A stage inlined later has no buffer: the order is then unused. */
TE_API te_status te_reorder_storage(te_stage *, int n, te_iter *const dims[]);

TE_API te_status te_cache_read(te_schedule *, te_tensor *, te_scope, int nreaders,
                               te_stage *const readers[], te_tensor **cache);
TE_API te_status te_cache_write(te_schedule *, te_tensor *, te_scope, te_tensor **cache);
TE_API te_status te_rfactor(te_schedule *, te_tensor *, te_iter *, int factor_axis,
                            te_tensor **rf);
TE_API te_status te_set_tail(te_stage *, te_iter *, te_tail);
TE_API te_status te_pragma(te_stage *, te_iter *, const char *key, int64_t value);

/* The primitives applied so far, one step a line, as replayable text; te_free() it. */
TE_API char *te_schedule_trace(te_schedule *);
/* Apply a trace made by te_schedule_trace to this schedule (of the same computation). */
TE_API te_status te_schedule_replay(te_schedule *, const char *trace);

#ifdef __cplusplus
}
#endif
#endif
