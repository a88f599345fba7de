/* te/tensor.h — tensors and the operations that define them.
 *
 * A placeholder is an input. A compute defines each element of a new tensor from index
 * variables: C[i, j] = body(i, j). The variables given to te_compute are bound for that body
 * only, so one te_var may index several computes. Reductions (te_sum, ...) take their axes
 * from te_reduce_axis; they may be the whole body or appear anywhere inside it (see
 * te_lifted_reduction).
 *
 * Shapes are i64 expressions made of constants and symbolic sizes (te_var); a kernel binds the
 * symbolic sizes from its buffers at call time.
 */
#ifndef TE_TENSOR_H
#define TE_TENSOR_H

#include "expr.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct te_tensor te_tensor;

#define TE_MAX_DIMS 8

/* An input tensor. ndim in [0, TE_MAX_DIMS]; every extent an integer expression of constants and
   symbolic sizes (a constant extent must be > 0). */
TE_API te_tensor *te_placeholder(te_ctx *, const char *name, te_dtype, int ndim,
                                 te_expr *const shape[]);

/* An input tensor with a declared layout, for views, crops and transposed arrays (numpy slices,
   torch views) passed without copies. Element [i_0, ..., i_n-1] is at
       data + byte_offset + (i_0 * strides[0] + ... + i_n-1 * strides[n-1]) * sizeof(element)
   (DLPack's rule: strides count elements). Each strides[d] is an i64 expression:
     - a te_var that is not a symbolic size: a stride variable, bound at call time from the
       DLTensor's strides[d] (from the compact row-major strides when its strides is NULL);
       a variable used by several dimensions or tensors is bound at its first bare use and the
       others are checked against it;
     - anything else (a constant, a size, `2 * n`, a stride variable bound elsewhere): the
       DLTensor's stride of that dimension must equal it, else the call fails with TE_ERR_SHAPE
       naming the argument, the dimension, the expected and the actual stride (a dimension of
       extent 1 may have any stride, as DLPack allows).
   Every stride must be >= 0 at call time (a constant < 0 is TE_ERR_SHAPE here; a negative
   DLTensor stride is TE_ERR_SHAPE at the call). A stride variable is a kernel value like a
   size: it may be used in expressions and schedules, and is never passed as a scalar. The
   byte offset of every tensor, strided or not, is the DLTensor's byte_offset (a crop is data +
   byte_offset with the parent's strides). When the innermost stride is the constant 1 the
   vectorizer keeps contiguous loads; a symbolic innermost stride gives strided (gathered) loads
   unless a schedule specializes on it being 1 (te_specialize). Kernels for CPU targets only
   (a GPU target refuses it with TE_ERR_UNSUPPORTED). strides NULL is te_placeholder. Owned by
   the context; NULL on error (TE_ERR_INVALID_ARG, TE_ERR_TYPE, TE_ERR_SHAPE with a message). */
TE_API te_tensor *te_placeholder_strided(te_ctx *, const char *name, te_dtype, int ndim,
                                         te_expr *const shape[], te_expr *const strides[]);

/* The declared stride of dimension i of a tensor made by te_placeholder_strided; NULL for other
   tensors (compact row-major, recording nothing) and for i outside [0, rank). */
TE_API te_expr *te_tensor_stride(const te_tensor *, int i);

/* A reduction axis ranging over [min, min + extent). */
TE_API te_expr *te_reduce_axis(te_ctx *, const char *name, te_expr *min, te_expr *extent);

/* A computed tensor: element [vars] = body. vars are distinct te_var variables, one per
   dimension; body may use them, symbolic sizes, scalar parameters and reduce axes (inside a
   reduction), and may read other tensors with te_at. The tensor's dtype is the body's. */
TE_API te_tensor *te_compute(te_ctx *, const char *name, int ndim, te_expr *const shape[],
                             te_expr *const vars[], te_expr *body);

/* Reductions inside an expression. A compute's body may use reductions anywhere, nested ones
   included:  C[i, j] = beta * C0[i, j] + alpha * sum(A[i, k] * B[k, j], k)
              mean[j] = sum(X[k, j], k) / N
   te_compute lifts each reduction that is not the whole body into a compute of its own, named
   NAME_red<n> (C_red0), n counting the distinct reductions of the body in the order they first
   appear, outer before inner, left to right. Its axes are the variables the reduction uses that
   are bound outside it: the compute's index variables (in dimension order, same names), then
   the reduce axes of the reductions around it (nested reductions); the compute reads it there
   (C[i, j] = beta * C0[i, j] + alpha * C_red0[i, j]). A schedule computes a lifted reduction
   inside the innermost loop of the stage reading it (the innermost loop not vectorized) until
   it is placed with te_compute_at or te_compute_root, so the default loop nest stays fused; its
   stage (te_lifted_reduction_stage, te/schedule.h) takes every primitive a reduction stage
   does. A reduction of several values (te_reduce with n > 1) cannot be part of an expression;
   the domain of a nested reduction's axis may not depend on a variable bound around it
   (TE_ERR_UNSUPPORTED).
   te_lifted_reduction_count: how many reductions were lifted out of t's body (0 for a
   placeholder, -1 for NULL). te_lifted_reduction: the tensor of the n-th, owned by the context;
   NULL with TE_ERR_INVALID_ARG for n outside [0, count), TE_ERR_NOT_FOUND when there are none.
   Thread-safe on a context not being changed. */
TE_API int te_lifted_reduction_count(const te_tensor *t);
TE_API te_tensor *te_lifted_reduction(te_tensor *t, int n);

/* A scan (a recurrence: TVM's te.scan, Halide's update over an RDom): the tensor NAME of the
   state's shape and dtype whose elements along axis scan_axis are computed in order, each step
   from the steps before it:
       NAME[vars] = vars[scan_axis] < ninit ? init : update
   state is a placeholder made for the purpose (te_placeholder, NAME's dtype and shape) that
   stands for NAME's own values inside update; it is never a kernel argument. update may read
   state at scan index vars[scan_axis] - c, for a constant c in [1, ninit], and at any index
   along the other axes; init may not read it. Both may read other tensors and hold reductions
   (lifted as for te_lifted_reduction; one reading the state is a stage in a cycle with the
   scan, computed inside its scan-axis loop). Both sides are evaluated at every step, as in
   te_select: init's reads must stay in bounds at every step (X[t, i], or X0[0, i] for an
   initial row); update's reads of the state are clamped at step 0 by te. Example, a
   cumulative sum down the rows of X:
       S = te_placeholder(ctx, "S", TE_F32, 2, {T, N})
       C = te_scan(ctx, "C", S, 0, 1, {t, i}, X[t, i], S[t - 1, i] + X[t, i])
   Schedules. The loops made from the scan axis stay serial (te_parallel, te_vectorize and
   te_bind refuse them with TE_ERR_SCHEDULE); an axis along which update reads the state at an
   index other than its own variable (S[t - 1, i + 1], sum_j W[i, j] * S[t - 1, j]) is
   dependent: its loops stay inside those of the scan axis and are never fused with them. The
   other axes take every primitive (split, reorder outside the scan axis, parallel, vectorize).
   At a consumer's loop (te_compute_at) a scan is still computed whole along the scan axis and
   its dependent axes. te_build and te_lower_text refuse a schedule breaking these rules with
   TE_ERR_SCHEDULE, naming the stage, the loop and the rule. A scan cannot be inlined
   (TE_ERR_SCHEDULE) nor given te_cache_write (TE_ERR_UNSUPPORTED); te_cache_read of it for a
   stage inside the recurrence is TE_ERR_SCHEDULE.
   Errors (NULL): TE_ERR_INVALID_ARG for a state that is not a placeholder, init reading the
   state, update reading it at another scan index than t - 1 ... t - ninit or never, scan_axis
   outside [0, rank), ninit < 1 or above a constant scan extent; TE_ERR_TYPE for init or update
   of another dtype than the state's; and those of te_compute. */
TE_API te_tensor *te_scan(te_ctx *, const char *name, te_tensor *state, int scan_axis, int ninit,
                          te_expr *const vars[], te_expr *init, te_expr *update);

/* An extern stage (TVM's te.extern, Halide's define_extern): the tensor NAME of the declared
   dtype and shape whose elements a C function the user supplies computes, from whole input
   tensors, inside an otherwise te-generated kernel. The function is called once each time the
   stage is computed (once per kernel call at root; once per iteration of the loop it is computed
   at, te_compute_at) as
       int fn(int32_t ninputs, const DLTensor *const inputs[], DLTensor *output)
   inputs[k] describes inputs[k] of te_extern and output the stage's own tensor, with data
   pointing at element 0 (byte_offset 0), device {kDLCPU, 0}, the tensor's dtype and rank, and
   shape and strides arrays (strides in elements, never NULL) filled in: compact row-major for
   every tensor te allocates (the stage's output, a te-computed input) and for kernel arguments
   declared with te_placeholder; a strided placeholder (te_placeholder_strided) passes the
   strides the caller's DLTensor has. The function writes every element of output and nothing
   else; it returns 0 on success. Any other value stops the kernel: the kernel returns
   TE_ERR_RUNTIME with the message "kernel 'K': extern stage 'NAME' (function 'SYMBOL') failed
   (got V)", V the value returned ("(function ...)" only when there is a symbol; the message is
   te_rt_last_error's, and te_last_error's after te_module_call).
   Lifetime: the DLTensors, their shape and strides arrays and the buffers te allocates live
   for the duration of the call only; the function must not keep pointers to them.
   Threading: a stage computed inside a parallel loop (te_compute_at at or inside a te_parallel
   loop) is called concurrently from the kernel's worker threads, each call with buffers of its
   own; otherwise from the thread that calls the kernel. fn must be thread-safe in the first
   case (te_set_num_threads(1) serializes the calls).
     fn      the function JIT-compiled kernels call (te_build for the host), or NULL;
     symbol  its C name for ahead-of-time kernels (te_module_save): the saved object calls
             SYMBOL, an undefined external the program linking the library must define (the
             saved header declares its prototype), or NULL. With fn NULL a JIT build looks
             SYMBOL up in the process (dlsym: an exported symbol of the program or of a loaded
             library) and fails with TE_ERR_NOT_FOUND if it is not there; with symbol NULL,
             te_module_save refuses the module (TE_ERR_UNSUPPORTED).
   Schedules. The stage has no loops of its own: loop primitives (split, fuse, reorder, tile,
   vectorize, parallel, unroll, bind, tail, pragma, tensorize) on it, te_compute_at of another
   stage at it, te_compute_inline of it or of a stage it reads, te_cache_write,
   te_reorder_storage and te_rfactor of it are refused with TE_ERR_SCHEDULE naming the stage
   and the rule. Its inputs are always realized whole, and so is the stage itself: te_compute_at
   of it into a consumer's loop computes it whole there (each iteration of that loop calls fn);
   at a vectorized loop it is refused. A te-computed input whose storage te_set_tail(round_up)
   pads cannot be passed compact and is refused (TE_ERR_SCHEDULE) when the kernel is lowered.
   Stages before and after it are scheduled and fused as usual. Kernels for CPU targets only: a
   GPU target (cuda, vulkan) refuses a schedule holding an extern stage with TE_ERR_UNSUPPORTED.
   The stage may be an output of the kernel (its buffer is then checked like any output's).
   Errors (NULL): TE_ERR_INVALID_ARG for a name that is not a C identifier, fn and symbol both
   NULL, a symbol that is not a C identifier, ninputs outside [0, TE_EXTERN_MAX_INPUTS], inputs
   NULL (with ninputs > 0) or holding a NULL tensor or one of another context; TE_ERR_TYPE for
   an unsupported dtype; those of te_placeholder for the shape. te_build refuses a symbol te's
   kernels use themselves (te_rt_*, the libm and libc functions: TE_ERR_INVALID_ARG). Owned by
   the context. */
#define TE_EXTERN_MAX_INPUTS 16
typedef int (*te_extern_fn)(int32_t ninputs, const DLTensor *const inputs[], DLTensor *output);
TE_API te_tensor *te_extern(te_ctx *, const char *name, te_dtype, int ndim, te_expr *const shape[],
                            int ninputs, te_tensor *const inputs[], te_extern_fn fn,
                            const char *symbol);
/* The function and symbol of an extern stage's tensor (NULL for other tensors). */
TE_API te_extern_fn te_extern_function(const te_tensor *);
TE_API const char *te_extern_symbol(const te_tensor *);

/* A read of tensor t at the given indices (integer expressions). The count must equal the rank. */
TE_API te_expr *te_at(te_tensor *t, int n, te_expr *const idx[]);

/* Reductions of body over the given reduce axes: sum, max, min, product. The identity is 0,
   the type's lowest value, its highest value, and 1. */
TE_API te_expr *te_sum(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_max_r(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_min_r(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_prod(te_expr *body, int nk, te_expr *const axes[]);

/* A commutative reducer of n values (1 <= n <= 16), for reductions that te_sum & co. do not
   cover: argmax (index and value), sums of pairs, ... lhs[i] and rhs[i] are distinct te_param
   variables of the i-th value's type standing for the accumulated and the incoming value;
   results[i] is the combined i-th value, an expression of them; identity[i] the value the
   accumulation starts from. The combination must be commutative and associative (te may
   reorder it, e.g. after te_rfactor). Owned by the context; NULL on error.
   Example (argmax): results = { select(rv > lv, ri, li), max(lv, rv) },
                     identity = { -1, -inf }. */
typedef struct te_reducer te_reducer;
TE_API te_reducer *te_reducer_new(te_ctx *, int n, te_expr *const lhs[], te_expr *const rhs[],
                                  te_expr *const results[], te_expr *const identity[]);
/* The reduction of the n values over the reduce axes, restricted to the points where cond holds
   (cond NULL: everywhere). out[i] receives the i-th result; pass out (all n of them, in order)
   to te_compute_multi, or out[0] to te_compute when n == 1. Errors: count or type mismatch
   (TE_ERR_INVALID_ARG, TE_ERR_TYPE), axes that are not reduce axes. */
TE_API te_status te_reduce(te_reducer *, int n, te_expr *const values[], int nk,
                           te_expr *const axes[], te_expr *cond, te_expr *out[]);

/* A compute with several outputs over one loop nest: outs[k][vars] = bodies[k]. The bodies are
   either all results of one te_reduce call, in order, or none is a reduction. The outputs are
   named NAME_v0, NAME_v1, ...; a kernel must take all of them as arguments when the stage is an
   output. On error outs[] are NULL. */
TE_API te_status te_compute_multi(te_ctx *, const char *name, int ndim, te_expr *const shape[],
                                  te_expr *const vars[], int nout, te_expr *const bodies[],
                                  te_tensor *outs[]);

/* Accessors: the name (owned by the tensor), dtype, rank and the i-th extent (an i64
   expression) of a tensor. A NULL tensor gives NULL, {0, 0, 0}, -1 and NULL, recording
   nothing (there is no context to record on); an i outside [0, rank) gives NULL with
   TE_ERR_INVALID_ARG. */
TE_API const char *te_tensor_name(const te_tensor *);
TE_API te_dtype te_tensor_dtype(const te_tensor *);
TE_API int te_tensor_ndim(const te_tensor *);
TE_API te_expr *te_tensor_dim(const te_tensor *, int i);

/* Convenience: TE_SHAPE(ctx, 1024, n) is not possible in C for mixed ints and exprs, so shapes
   are built with te_int / te_var; these helpers make arrays inline. */
#define TE_EXPRS(...) ((te_expr *const[]){__VA_ARGS__})
#define TE_NARGS_(...) (int)(sizeof((te_expr *const[]){__VA_ARGS__}) / sizeof(te_expr *))
#define TE_AT(t, ...) te_at((t), TE_NARGS_(__VA_ARGS__), TE_EXPRS(__VA_ARGS__))
#define TE_SUM(body, ...) te_sum((body), TE_NARGS_(__VA_ARGS__), TE_EXPRS(__VA_ARGS__))

#ifdef __cplusplus
}
#endif
#endif
