/* te/tensor.h — tensors and the operations that define them.
 *
 * A placeholder is an input. A compute defines each element of a new tensor from index
 * variables: C[i, j] = body(i, j). The variables given to te_compute are bound for that body
 * only, so one te_var may index several computes. Reductions (te_sum, ...) may appear only at
 * the top of a compute body; their axes come from te_reduce_axis.
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

/* A reduction axis ranging over [min, min + extent). */
TE_API te_expr *te_reduce_axis(te_ctx *, const char *name, te_expr *min, te_expr *extent);

/* A computed tensor: element [vars] = body. vars are distinct te_var variables, one per
   dimension; body may use them, symbolic sizes, scalar parameters and reduce axes (inside a
   reduction), and may read other tensors with te_at. The tensor's dtype is the body's. */
TE_API te_tensor *te_compute(te_ctx *, const char *name, int ndim, te_expr *const shape[],
                             te_expr *const vars[], te_expr *body);

/* A read of tensor t at the given indices (integer expressions). The count must equal the rank. */
TE_API te_expr *te_at(te_tensor *t, int n, te_expr *const idx[]);

/* Reductions of body over the given reduce axes: sum, max, min, product. The identity is 0,
   the type's lowest value, its highest value, and 1. */
TE_API te_expr *te_sum(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_max_r(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_min_r(te_expr *body, int nk, te_expr *const axes[]);
TE_API te_expr *te_prod(te_expr *body, int nk, te_expr *const axes[]);

/* Accessors. */
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
