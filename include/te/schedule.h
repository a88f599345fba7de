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

/* Where a buffer te allocates lives (te_cache_read, te_cache_write). On CPU targets every scope
   is ordinary memory; on GPU targets global is device memory, shared is a thread block's shared
   memory, local a thread's own. */
typedef enum { TE_SCOPE_GLOBAL, TE_SCOPE_LOCAL, TE_SCOPE_SHARED } te_scope;
/* A GPU index a loop can be bound to (te_bind): blockIdx.x/y/z and threadIdx.x/y/z. */
typedef enum {
  TE_BLOCK_X,
  TE_BLOCK_Y,
  TE_BLOCK_Z,
  TE_THREAD_X,
  TE_THREAD_Y,
  TE_THREAD_Z
} te_thread_tag;
/* How a split that does not divide its extent handles the last tile (te_set_tail). */
typedef enum { TE_TAIL_GUARD, TE_TAIL_SHIFT_INWARDS, TE_TAIL_ROUND_UP } te_tail;

/* The words of these enumerators as traces, the IR text and messages write them: "global",
   "local", "shared"; "blockIdx.x" ... "threadIdx.z"; "guard", "shift_inwards", "round_up".
   Static strings; NULL for a value that is no enumerator, so a binding can list every word by
   counting up from 0 until NULL. Thread-safe. */
TE_API const char *te_scope_name(te_scope);
TE_API const char *te_thread_tag_name(te_thread_tag);
TE_API const char *te_tail_name(te_tail);

/* A schedule for computing the given output tensors (computes, not placeholders), with every
   stage at its default: computed at root, loops in definition order, serial. */
TE_API te_schedule *te_schedule_new(te_ctx *, int nout, te_tensor *const outs[]);
/* The stage that computes t; NULL (TE_ERR_NOT_FOUND) when t is not part of the schedule or is a
   placeholder. */
TE_API te_stage *te_stage_of(te_schedule *, te_tensor *);
/* The stage of the n-th reduction lifted out of t's body (te_lifted_reduction, te/tensor.h):
   te_stage_of(s, te_lifted_reduction(t, n)), named like its tensor (C_red0). Until a
   te_compute_at or te_compute_root places it, the stage is computed inside the innermost
   non-vectorized loop of the one stage that reads it (at root when several stages read it);
   te_schedule_trace records nothing for that default. Errors: those of te_lifted_reduction,
   TE_ERR_NOT_FOUND when the tensor is not part of the schedule. */
TE_API te_stage *te_lifted_reduction_stage(te_schedule *, te_tensor *t, int n);
/* Root iteration variables: the i-th data-parallel axis, the i-th reduce axis. */
TE_API te_iter *te_axis(te_stage *, int i);
TE_API te_iter *te_reduce_iter(te_stage *, int i);
/* The current leaf loops, outermost first: their count (-1 for a NULL stage), and the i-th
   (NULL with TE_ERR_INVALID_ARG outside [0, count)). */
TE_API int te_leaf_count(te_stage *);
TE_API te_iter *te_leaf(te_stage *, int i);
/* The iterator's name ("i", "i.o", "i.o.j.o.f"), owned by the iterator; NULL for NULL. */
TE_API const char *te_iter_name(const te_iter *);

/* Split a leaf into outer and inner loops: inner has extent factor, outer ceil(extent/factor).
   When the factor does not divide the extent the tail is guarded (see te_set_tail). */
TE_API te_status te_split(te_stage *, te_iter *, int64_t factor, te_iter **outer, te_iter **inner);
/* Split so that outer has extent nparts. */
TE_API te_status te_split_nparts(te_stage *, te_iter *, int64_t nparts, te_iter **outer,
                                 te_iter **inner);
/* Split x by fx and y by fy, then order xo, yo, xi, yi (x must be outside y). */
TE_API te_status te_tile(te_stage *, te_iter *x, te_iter *y, int64_t fx, int64_t fy, te_iter **xo,
                         te_iter **yo, te_iter **xi, te_iter **yi);
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
   the inner vector code. On CPU targets L lanes that are not a power of two become unrolled
   pieces of the largest power of two dividing L (24: 3 x 8), as LLVM keeps vectors of other
   lengths in registers only within a basic block.
   In a cuda kernel a vectorized loop inside the thread-bound loops is each thread's vector code
   (te's counterpart of Halide's gpu_lanes, docs/gpu.md): a contiguous access of 2 or 4 lanes of
   32 bits (2 of 64) is one 128-bit ld/st.global.v4 (.shared for shared buffers) where its
   address is proven 16-byte aligned (the index's modular facts, the buffer's base: an
   argument's pointer is checked at the kernel's entry, the element-wise copy of the body taken
   when it is not aligned), wider vectors go in 128-bit pieces, other accesses an element at a
   time. A vectorized loop around a thread-bound loop is TE_ERR_SCHEDULE at te_build ("contains
   the GPU-thread-bound loop"). */
TE_API te_status te_vectorize(te_stage *, te_iter *);
/* The loop, a leaf of the stage (data or reduce axis), is replaced by one copy of its body per
   iteration. TE_ERR_SCHEDULE when the leaf already has another annotation. Refused at te_build
   and te_lower_text with TE_ERR_SCHEDULE, naming the loop: a loop with neither a constant
   extent nor a constant upper bound ("unroll a loop of constant extent, such as the inner loop
   of a split"), or more than 1024 iterations. Loops the schedule does not unroll are left to
   LLVM, except loops holding other loops or vectors wider than the target's, which are kept as
   loops so that the schedule alone decides how much of a tiled kernel is copied. */
TE_API te_status te_unroll(te_stage *, te_iter *);
/* The iterations of the loop, a data-parallel leaf of the stage, run on several threads: on
   CPU targets the body becomes a closure run by the runtime's parallel-for
   (te_rt_parallel_for); a parallel loop inside another runs serially within each outer
   iteration. TE_ERR_SCHEDULE for a reduce axis (its iterations update the same element: use
   te_rfactor first) or a leaf that already has another annotation. te_set_num_threads
   (te/build.h) sets how many threads run. */
TE_API te_status te_parallel(te_stage *, te_iter *);
/* Binds the loop, a data-parallel leaf of the stage, to a GPU block or thread index: on a cuda
   or vulkan target the loop becomes that index of a kernel launch (its extent the launch's,
   guarded when the loop is shorter). A stage binds each tag at most once; different stages may
   bind the same tag (their loops share the index). Errors: TE_ERR_INVALID_ARG for an unknown
   tag; TE_ERR_SCHEDULE for a reduce axis (cross-thread reductions need te_rfactor first), a tag
   this stage already bound to another leaf, or a leaf with another annotation. te_build for a
   CPU target refuses a bound loop with TE_ERR_TARGET; on GPU targets every stage must run
   inside bound loops (TE_ERR_SCHEDULE at te_build otherwise). */
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
   block whose channel axis is contiguous, for vectors along channels. A data axis split by a
   factor (te_split of te_axis(st, i) itself) may be given as its two parts instead, each a
   storage dim of its own (index i / f and i % f, extents rounded up to whole pieces): a blocked
   layout, as a BLAS packs B[k, j] into panels Bp[j / 64][k][j % 64] (dims j.o, k, j.i), or
   groups 4 consecutive k for vpdpbusd ([k / 4][j][k % 4]: k.o, j, k.i). Outputs and
   placeholders have their caller's layout: TE_ERR_SCHEDULE, as for an axis missing or given
   twice, one part of a split without the other, an iter that is neither a data axis nor a part
   of a data axis' own split (a fused, reduce or twice-split iter), or a split by a number of
   parts (te_split_nparts). A stage inlined later has no buffer: the order is then unused. */
TE_API te_status te_reorder_storage(te_stage *, int n, te_iter *const dims[]);

/* Stages that schedules add. These rewrite the computation this schedule runs, never the
   user's tensors: another schedule of the same computation is unaffected. The new tensor
   (*cache, *rf; pass NULL when not needed) belongs to the context, its stage to the schedule
   (te_stage_of). */

/* Adds the stage T_<scope> ("A_local") that copies tensor t (a placeholder or a computed
   tensor of this schedule) into a buffer of the given scope, and makes the nreaders listed
   stages read the copy instead of t; other readers keep reading t. The copy's axes are named
   ax0, ax1, ...; it is computed at root until placed (compute it at a reader's loop to copy
   only the tile that loop reads). Errors: TE_ERR_INVALID_ARG for a NULL t, nreaders < 1,
   a NULL reader or an unknown scope; TE_ERR_NOT_FOUND when t is not part of the schedule;
   TE_ERR_SCHEDULE for a reader of another schedule or one that does not read t directly (a
   read through an inlined stage does not count: name the stage that reads it). */
TE_API te_status te_cache_read(te_schedule *, te_tensor *, te_scope, int nreaders,
                               te_stage *const readers[], te_tensor **cache);
/* Adds the stage T_<scope> ("C_local") that computes t's expression (same axis and reduce-axis
   names) into a buffer of the given scope, and turns t's own stage into the copy
   t[...] = T_<scope>[...]; *cache is the new stage's tensor. The usual use: tile t's stage and
   compute the cache at a tile loop, so a reduction accumulates in a small buffer. Call it
   before any other primitive on t's stage. Errors: TE_ERR_INVALID_ARG for a NULL t or an
   unknown scope; TE_ERR_NOT_FOUND when t is a placeholder or not part of the schedule;
   TE_ERR_SCHEDULE when t's stage was already scheduled or another stage is computed at one of
   its loops; TE_ERR_UNSUPPORTED for a multi-output stage (te_compute_multi). */
TE_API te_status te_cache_write(te_schedule *, te_tensor *, te_scope, te_tensor **cache);
/* Factors a reduction: for k, a reduce leaf of t's stage (usually the inner loop of a split
   reduce axis), adds the stage T_rf whose data axes are t's with k inserted at position
   factor_axis, reducing over t's other reduce leaves; t's stage becomes the reduction of T_rf
   over that axis (a new reduce axis named like k). The partial results are independent, so
   they may be parallel, vectorized or bound to threads. t's stage is rebuilt: schedule it
   after te_rfactor. A reduction by a custom reducer (te_reduce; t any output of its stage) is
   factored with all its values together: T_rf has as many outputs as the reducer has values
   (*rf is the first; any of them names the stage), each partial starts from the reducer's
   identity, and t's stage combines the partials with the same reducer, so the reducer must
   combine two accumulated states (commutative and associative, as te_reducer_new asks).
   Errors: TE_ERR_INVALID_ARG for a NULL t or k, or factor_axis outside [0, ndim(t)];
   TE_ERR_NOT_FOUND when t has no stage; TE_ERR_SCHEDULE when t's body is no reduction, k is
   data-parallel, of another stage or not a leaf, or another stage is computed at one of its
   loops; TE_ERR_UNSUPPORTED for a stage with fused reduce iterators, or a custom reducer that
   cannot combine partial results: one whose results or identities read a tensor, a loop or
   reduce variable or a reduction, or one a probe at sample values finds not commutative or
   not associative (l + r * r). */
TE_API te_status te_rfactor(te_schedule *, te_tensor *, te_iter *, int factor_axis, te_tensor **rf);
/* How splits of the iterator (of this stage; it need not be a leaf, and may be split later)
   handle a factor that does not divide its extent. TE_TAIL_GUARD, the default: the last tile
   skips the points past the end, and loop partitioning peels it into its own loop.
   TE_TAIL_SHIFT_INWARDS: the last tile is shifted back to end at the extent, so every tile is
   full and needs no condition; overlapping points are computed twice (where that would be
   wrong, as in a reduction with a data loop inside a reduce loop, the guard is kept).
   TE_TAIL_ROUND_UP: every tile is computed whole into storage padded to whole tiles, with the
   stage's reads clamped into its inputs' shapes (rounding up an inner loop of a split runs into
   the next tile's points: where computing them twice would be wrong, as for shift_inwards, the
   guard is kept). Errors: TE_ERR_INVALID_ARG for a NULL or
   unknown argument; TE_ERR_SCHEDULE for an iterator of another stage, shift_inwards or
   round_up of a reduce axis, or round_up of an output stage (its buffer is the caller's). */
TE_API te_status te_set_tail(te_stage *, te_iter *, te_tail);
/* Attaches a hint to the loop, a leaf of the stage, printed in the IR as an attribute around
   it. The keys (the string is copied):
     "unroll_max_step"  inside the loop, every serial loop nest of constant extents with at most
                        value iterations in all is unrolled (TVM's auto_unroll_max_step);
     "prefetch"         CPU targets: each iteration prefetches what the loop reads value
                        iterations ahead (loops inside at their first iteration); GPU targets
                        keep the attribute only. A value <= 0 prefetches nothing.
     "nontemporal"      CPU targets, value > 0: inside the loop, the stores to the kernel's
                        argument buffers are streaming stores (x86 movntps/movnti: no read of
                        the line before it is written, no eviction of what is read), for a
                        large output written once (a layer norm, a softmax, a copy). Each
                        iteration checks that the argument buffers it stores with vectors are
                        64-byte aligned and streams only then (else plain stores), and ends
                        with a fence: put it on a loop whose iteration writes a lot (rows), not
                        an inner one. Masked stores (vector tails) and stores to temporaries
                        stay plain. GPU targets keep the attribute only. A value <= 0: none.
   A loop may carry several pragmas. Errors: TE_ERR_INVALID_ARG for a NULL iterator,
   TE_ERR_SCHEDULE for one that is not a leaf of the stage, TE_ERR_UNSUPPORTED for a NULL or
   unknown key. */
TE_API te_status te_pragma(te_stage *, te_iter *, const char *key, int64_t value);

/* Maps the loop and the loops inside it onto one hardware instruction (TVM's tensorize;
   docs/low-precision.md). The request is checked when the schedule is lowered, after
   vectorization; it is never dropped silently: a loop nest that does not have the instruction's
   shape is TE_ERR_SCHEDULE naming the stage, the loop and what did not match, and a target
   without the instruction is TE_ERR_TARGET. Instructions:
     "vpdpbusd"  x86 AVX512-VNNI (16 lanes, zmm) or AVX512-VNNI+VL / AVX-VNNI (8 or 4 lanes):
                 for each of N i32 lanes, 4 u8 x s8 products summed into the accumulator.
                 The loop must be a leaf reduce loop, serial, of constant extent 4, and contain
                 exactly one vectorized update C[v] = C[v] + i32(a) * i32(b) (the vector loop of
                 N = 16, 8 or 4 lanes inside it, C of dtype i32, one of a, b u8 and the other i8;
                 the index of C must not depend on the loop). Each side's 4 x N bytes are read as
                 one contiguous vector when they are contiguous (b in a "VNNI" layout
                 [K/4][N][4], a broadcast of 4 consecutive bytes), else gathered lane by lane.
     "vdpbf16ps" x86 AVX512-BF16 (16 lanes; 8 or 4 lanes need AVX512-BF16+VL): for each of N
                 f32 lanes, 2 bf16 x bf16 products added to the accumulator. The same shape with
                 groups of 2: the loop of constant extent 2 holding one vectorized update
                 C[v] = C[v] + f32(a) * f32(b), C of dtype f32, a and b bf16 (B's pair layout
                 [K/2][N][2] is one contiguous load). The result is the loop's sum up to the
                 instruction's order within a pair and its flushing of subnormals to zero.
     "mma_m16n8k16"  cuda sm_80 and newer: PTX mma.sync.aligned.m16n8k16 (f16 or bf16 inputs,
                 f32 accumulation). The loop (it may be a data loop) is the outermost of three
                 perfectly nested serial loops of constant extents playing m (16: used by the
                 indices of C and A), n (8: C and B) and k (16: A and B), in any order, around
                 one update C[c] = C[c] + f32(A[a]) * f32(B[b]) with C f32 and A, B both f16 or
                 both bf16, each index affine in the loops (any strides), no operand in local
                 memory. The kernel holding it runs a warp of 32 hardware threads for each thread
                 of the schedule (so at most 32 threads a block; docs/gpu.md).
     "mma_m16n8k32"  cuda sm_80 and newer: PTX mma.sync.aligned.m16n8k32.row.col.s32.{s8,u8}.
                 {s8,u8}.s32 (8-bit integer inputs, each side s8 or u8, s32 accumulation
                 wrapping as i32 addition does: exact). mma_m16n8k16's rules with k 32 and the
                 update C[c] = C[c] + i32(A[a]) * i32(B[b]), C i32.
   Without te_tensorize te makes ordinary code for the same nest (correct on every target).
   Errors now: TE_ERR_INVALID_ARG for a NULL iterator, TE_ERR_SCHEDULE for an iterator that is
   not a leaf of the stage (for vpdpbusd and vdpbf16ps: a leaf reduce loop) or a second tensorized
   loop, TE_ERR_UNSUPPORTED for an unknown instruction name. */
TE_API te_status te_tensorize(te_stage *, te_iter *, const char *intrinsic);

/* Specialization (Halide's specialize): the kernel tests cond once per call, before any loop,
   and runs the branch schedule when it holds, else the schedule s (the general one). *branch
   starts as a copy of s as it is now (its steps replayed on a fresh schedule of the same
   computation: te_stage_of(*branch, t) gives its stages; the stages cache_read, cache_write
   and rfactor added before are the branch's own copies, found by name with te_tune_stage,
   te/tune.h) and is scheduled further on its own;
   what is applied to s afterwards does not reach the branch. Several te_specialize calls on s
   are tried in the order they were made, the first whose condition holds wins; a branch may be
   specialized again (nested conditions). The branch belongs to s's context.
   Each branch is lowered and checked as a whole schedule, knowing its condition:
     n == C        (a size, a stride variable) n is C inside the branch: a stride == 1 gives
                   contiguous vector loads;
     n % C == 0    n is a multiple of C: splits of n by a divisor of C lose their tails;
     n < C, n <= C n is bounded (n > C and n >= C are tested but teach nothing);
   conditions joined by && each teach theirs; any other condition over integer sizes and
   scalars (||, !, float parameters) is tested and selects the branch without teaching it.
   The condition is simplified first: one that is always false gives a branch that is never
   lowered, one that is always true makes the branch the whole kernel (later specializations
   and the general schedule are not lowered). The trace records "specialize COND {", the
   branch's own steps, "}" (docs/schedule-trace.md), and replays it.
   cond may use only what the kernel is given: the computation's symbolic sizes and stride
   variables and its scalar parameters (te_param) that its bodies use, constants, arithmetic
   (+ - * // % min max), comparisons and && || !.
   Errors: TE_ERR_INVALID_ARG for NULL arguments, a cond of another context; TE_ERR_TYPE for
   a cond that is not a scalar bool; TE_ERR_SCHEDULE for a cond that uses a loop or reduce
   variable, a variable that is no size, stride or parameter of the computation, or reads a
   tensor, naming it; TE_ERR_UNSUPPORTED for a cond whose form the trace cannot write (a
   cast, a math call, two variables of the same name). te_build for a GPU target refuses a
   schedule with a specialization that is not constant (TE_ERR_UNSUPPORTED). */
TE_API te_status te_specialize(te_schedule *s, te_expr *cond, te_schedule **branch);

/* The primitives applied so far, one step a line, as replayable text; te_free() it. Each
   te_specialize is a block "specialize COND {", the branch's own steps, "}" where it was made
   (docs/schedule-trace.md). */
TE_API char *te_schedule_trace(te_schedule *);
/* Apply a trace made by te_schedule_trace to this schedule (of the same computation). */
TE_API te_status te_schedule_replay(te_schedule *, const char *trace);

#ifdef __cplusplus
}
#endif
#endif
