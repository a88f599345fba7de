/* gpu_lower.h — internals shared by the GPU lowering passes (lib/lower/gpu_*.c).
 *
 * For a GPU target the pipeline ends (before simplify_final, which then only sees the host
 * statement) with two passes:
 *   gpu_split     (gpu_split.c)   the host/device split: each outermost thread-bound loop
 *                                 becomes a kernel (gpu_kernel.c: launch extents and limits;
 *                                 gpu_rewrite.c: the body of one thread); fills lw_func::gpu
 *   gpu_barriers  (gpu_barrier.c) barriers where threads of a block share a buffer, then the
 *                                 one-thread final reductions made trees (gpu_tree.c)
 * For CPU targets both return their statement unchanged. The result (lower/gpu.h) is what the
 * PTX and SPIR-V back ends compile.
 */
#ifndef TE_LOWER_GPU_H
#define TE_LOWER_GPU_H

#include "gpu.h"
#include "lower.h"

/* True when lowering for a cuda or vulkan target. */
bool lw_gpu_target(const lw_pass_ctx *);
/* True when s contains a loop bound to a block or thread index. */
bool lw_gpu_has_thread_loop(ir_stmt *s);

/* What the host part knows while kernels are made: the host temporaries (global buffers
   allocated around kernels, in order) and the names of stages for messages. */
typedef struct lw_gpu_host {
  lw_pass_ctx *p;
  lw_gpu_module *mod;
  int ntemps, cap_temps;
  ir_buffer **temps;
  int cap_kernels, cap_steps;
  const char *stage; /* the innermost `produce` around the current statement */
} lw_gpu_host;

/* gpu_kernel.c: makes kernel number index of h->mod from root, an outermost thread-bound loop
   (launch extents, the checks against the target's limits, the body, the parameters). */
te_status lw_gpu_make_kernel(lw_gpu_host *h, ir_stmt *root, lw_gpu_kernel *k);

/* gpu_rewrite.c: the body of one thread of k: thread-bound loops become index variables
   (guarded where a loop has fewer iterations than the launch), shared and local allocations are
   hoisted into k (global-scope ones inside a kernel get shared or local scope), stores outside
   every threadIdx loop are guarded to run in one thread. ext[tag] are the launch extents. */
ir_stmt *lw_gpu_rewrite_body(lw_gpu_host *h, lw_gpu_kernel *k, ir_stmt *root,
                             te_expr *const ext[LW_GPU_NIDX]);

/* True when cond is the single-thread guard gpu_rewrite.c makes (threadIdx.x == 0 && ...). */
bool lw_gpu_is_single_guard(const lw_gpu_kernel *k, te_expr *cond);

/* gpu_tree.c: a one-thread final reduction over the shared buffer SH of partial results, as
   matched at the kernel's top level:

     if (guard) { prefix; for (k, 0, N) OUT[o] = f(OUT[o], SH[e(k)]) }

   guard the single-thread guard (threadIdx.d == 0 for the participating thread indices d; the
   other thread indices group), f the combine over the variables a (standing for OUT[o]) and b (for
   SH[e(k)]). The threads that agree on every grouping index form a group; each group reduces its
   own N partials, its threads numbered by pos, the participating indices linearized (x fastest, as
   the hardware numbers threads). */
typedef struct lw_gpu_tree {
  ir_buffer *out, *sh;
  te_expr *out_index, *k;
  te_expr *sh_index;           /* e(k): where SH holds partial k */
  te_expr *out_load, *sh_load; /* the two loads in the store's value */
  int nout, nsh;               /* how often each occurs */
  te_expr *a, *b;              /* the variables standing for them */
  te_expr *guard;              /* the single-thread guard */
  ir_stmt *prefix;             /* the statements under the guard before the loop, or NULL */
  te_expr *pos;                /* this thread's number in its group, in [0, parts) */
  int64_t parts;               /* threads a group (the participating extents' product) */
  bool whole_block;            /* every thread index participates: one group a block */
  bool one_dim;                /* the block has threads along x only */
  /* warps (cuda): below the participating indices lie grouping ones of low threads in all
     (1 when none); a warp holds 32 / low consecutive pos values of each of them, and moving
     pos by d moves the hardware lane by d * low. warp_ok: that layout holds (gpu_tree.c). */
  int64_t low;
  bool warp_ok;
} lw_gpu_tree;

/* gpu_tree_match.c: whether s (a top-level statement of k) is such a reduction, with t, its
   combine f and its N partials filled in when it is. */
bool lw_gpu_tree_match(lw_pass_ctx *, const lw_gpu_kernel *k, ir_stmt *s, lw_gpu_tree *t,
                       te_expr **f, int64_t *n);
/* Whether s loads or stores b. */
bool lw_gpu_stmt_uses_buffer(ir_stmt *s, ir_buffer *b);

/* SH's index for partial number kx: e(kx). */
te_expr *lw_gpu_tree_sh_at(lw_pass_ctx *, const lw_gpu_tree *t, te_expr *kx);

/* f(x, y) for the tree's combine f. */
te_expr *lw_gpu_tree_apply(lw_pass_ctx *, const lw_gpu_tree *t, te_expr *f, te_expr *x, te_expr *y);

/* gpu_tree_warp.c (cuda): the final reduction over n partials as warp shuffles
   (warp_shuffle_xor) within each warp of 32 threads, then across the warps through SH; NULL
   on failure. Needs t->warp_ok (the warp layout of lw_gpu_tree) and n <= t->parts. */
ir_stmt *lw_gpu_tree_warp(lw_pass_ctx *, const lw_gpu_tree *t, te_expr *f, int64_t n);

/* gpu_tree_subgroup.c (vulkan): whether the tree can use subgroup operations (f is a sum,
   product, max or min of a 32/64-bit scalar, every thread of the one-dimensional block holds
   a partial: one group, n = its threads), and the statement `if (has_subgroup_ops()) { subgroup
   reduction } else { fallback }` replacing the match (after t's prefix); NULL on failure. */
bool lw_gpu_tree_subgroup_ok(const lw_gpu_tree *t, te_expr *f, int64_t n);
ir_stmt *lw_gpu_tree_subgroup(lw_pass_ctx *, const lw_gpu_tree *t, te_expr *f, ir_stmt *fallback);

/* True when s holds a tensor-core call (mma_m16n8k16; gpu_warp.c). */
bool lw_gpu_has_mma(ir_stmt *s);

/* gpu_tree.c: body with each one-thread final reduction over a shared buffer of partial
   results (an rfactor'd reduction bound to thread indices) made a tree of log2(N) steps of
   each group's threads, with barriers; sets k->uses_barrier when it adds them. NULL on
   failure. */
ir_stmt *lw_gpu_tree_reductions(lw_pass_ctx *, lw_gpu_kernel *k, ir_stmt *body);

/* The passes (registered in pipeline.c). */
ir_stmt *lw_gpu_split(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_gpu_barriers(lw_pass_ctx *, ir_stmt *);
ir_stmt *lw_gpu_warp(lw_pass_ctx *, ir_stmt *); /* gpu_warp.c: a warp per thread for mma */

#endif
