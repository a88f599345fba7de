/* ops_internal.h — helpers shared by the operator library (the files in lib/ops).
 *
 * The operators are written with the public tensor-expression API; these helpers only check
 * arguments (recording errors that name the operator), fold constant index arithmetic so that
 * constant shapes stay constant, compare extents, and build the padding stage that convolution
 * and pooling share.
 */
#ifndef TE_OPS_INTERNAL_H
#define TE_OPS_INTERNAL_H

#include "schedule/sch.h"
#include "te/ops.h"

/* Longest operator name accepted; stage names add at most OP_SUFFIX_MAX characters. */
#define OP_NAME_MAX 64
#define OP_SUFFIX_MAX 16
#define OP_BUF (OP_NAME_MAX + OP_SUFFIX_MAX + 2)

/* Checks the arguments common to every operator: ctx non-NULL, each tensor non-NULL and of
   ctx (labels name them in messages), name a C identifier of at most OP_NAME_MAX characters
   (NULL: *name becomes def). Records the error and returns false otherwise. */
bool op_begin(te_ctx *ctx, const char *fn, const char **name, const char *def, int n,
              te_tensor *const ts[], const char *const labels[]);

/* "<name>_<suffix>" into buf (OP_BUF bytes); returns buf. */
const char *op_stage_name(char *buf, const char *name, const char *suffix);

/* Index arithmetic on i64 expressions that folds constants (a + 0 is a, 2 + 3 is 5, ...). */
te_expr *op_iadd(te_ctx *, te_expr *a, te_expr *b);
te_expr *op_isub(te_ctx *, te_expr *a, te_expr *b);
te_expr *op_imul(te_ctx *, te_expr *a, te_expr *b);
te_expr *op_ifloordiv(te_ctx *, te_expr *a, te_expr *b);
te_expr *op_iaddc(te_ctx *, te_expr *a, int64_t c);
te_expr *op_imulc(te_ctx *, te_expr *a, int64_t c);

/* True when a and b are provably equal: the same expression or equal constants. */
bool op_same_extent(te_expr *a, te_expr *b);
/* True when e is the constant c. */
bool op_is_const(te_expr *e, int64_t c);

/* The shape of t as "[2, 3, n]" into buf; returns buf. Extent text "?" when unavailable. */
const char *op_shape_str(const te_tensor *t, char *buf, size_t size);
/* An extent as text into buf; returns buf. */
const char *op_extent_str(te_expr *e, char *buf, size_t size);

/* Rank check: "fn: <label> 'A' must have rank R (got shape [..])", TE_ERR_SHAPE. */
bool op_check_rank(te_ctx *, const char *fn, const char *label, const te_tensor *t, int rank);
/* Same dtype: "fn: dtypes of 'A' (f32) and 'B' (f64) differ", TE_ERR_TYPE. */
bool op_check_same_dtype(te_ctx *, const char *fn, const te_tensor *a, const te_tensor *b);
/* Float dtype: "fn: 'x' must have a float dtype (got i32)", TE_ERR_TYPE. */
bool op_check_float(te_ctx *, const char *fn, const te_tensor *t);
/* Not bool: "fn: 'x' has dtype bool; a number type is required", TE_ERR_TYPE. */
bool op_check_number(te_ctx *, const char *fn, const te_tensor *t);

/* The inputs of a product-sum operator (accum.c). acc NULL: numbers of one dtype, not 8/16-bit
   integers (TE_ERR_TYPE naming fn's _acc form). acc given: numbers of any dtypes, acc a scalar
   number type, a float input needs a float acc. */
bool op_check_inputs(te_ctx *, const char *fn, const te_tensor *a, const te_tensor *b,
                     const te_dtype *acc);
/* An integer acc holds each product of a and b and, for a constant number of terms, each sum
   (TE_ERR_TYPE "accumulator ... can overflow" otherwise). Floats always pass. */
bool op_check_acc_range(te_ctx *, const char *fn, const te_tensor *a, const te_tensor *b,
                        te_dtype acc, te_expr *terms);
/* x * y, in acc when given (each operand cast to it). */
te_expr *op_product(te_expr *x, te_expr *y, const te_dtype *acc);

/* The output extent of a sliding window over an input extent:
     floor((in + 2*pad - dil*(k - 1) - 1) / stride) + 1,
   folded when constant; a constant result < 1 is TE_ERR_SHAPE naming fn and what. */
te_expr *op_window_extent(te_ctx *, const char *fn, const char *what, te_expr *in, int64_t pad,
                          te_expr *k, int64_t stride, int64_t dil);

/* A padded copy of data named "<name>_pad": pad[d] elements of value on both sides of each
   dimension d (value's dtype must be data's). Reads of data are clamped into its bounds, so
   the stage never reads out of bounds even where te evaluates both sides of the select.
   Returns data itself when every pad[d] is 0. */
te_tensor *op_pad(te_ctx *, const char *name, te_tensor *data, const int64_t pad[], te_expr *value);

/* Fresh te_var index variables named from names[0..n). */
void op_vars(te_ctx *, int n, const char *const names[], te_expr *out[]);

#endif
