/* te/expr.h — scalar expressions.
 *
 * Expressions are immutable, owned by their context, and hash-consed: building the same
 * expression twice gives the same pointer. Every constructor returns NULL on failure (with the
 * message on the context) and returns NULL without a new message when an operand is NULL, so an
 * expression can be built in one go and checked once.
 *
 * Types. Integer literals from te_int are i64 (index arithmetic is i64). When the operands of a
 * binary operation differ in type they are promoted as in Halide and TVM:
 *   - an int meets a float: the int becomes that float;
 *   - two ints or two floats: the narrower widens (signed wins over unsigned of the same width);
 *   - an immediate (te_int / te_float) takes the type of the other operand.
 * Errors (TE_ERR_TYPE): a float used as an index, a non-bool as a condition or an operand of
 * and/or/not, mismatched vector lanes, integer-only operations (floordiv, floormod) on floats,
 * float division on integers, a float-only math call on an integer.
 *
 * Semantics. Integer arithmetic wraps (two's complement). te_floordiv / te_floormod round towards
 * negative infinity (floormod has the sign of the divisor); division by zero is undefined in
 * kernels. Float arithmetic follows IEEE-754, except that te may contract a*b+c into an fma.
 */
#ifndef TE_EXPR_H
#define TE_EXPR_H

#include "core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct te_expr te_expr;

/* Immediates. te_int is an i64 literal; te_const makes a literal of any scalar dtype. */
TE_API te_expr *te_int(te_ctx *, int64_t value);
TE_API te_expr *te_float(te_ctx *, te_dtype, double value);
TE_API te_expr *te_const(te_ctx *, te_dtype, double value);

/* A new variable of type i64: an index variable (for te_compute) or a symbolic size (in a
   tensor's shape). Each call makes a distinct variable whatever its name; the name is for
   printing only and must be a C identifier. */
TE_API te_expr *te_var(te_ctx *, const char *name);
/* A new variable of any scalar dtype: a scalar kernel parameter (e.g. alpha: f32). */
TE_API te_expr *te_param(te_ctx *, const char *name, te_dtype);

/* Arithmetic. te_div is float division (TE_ERR_TYPE on ints: use te_floordiv). */
TE_API te_expr *te_add(te_expr *, te_expr *);
TE_API te_expr *te_sub(te_expr *, te_expr *);
TE_API te_expr *te_mul(te_expr *, te_expr *);
TE_API te_expr *te_div(te_expr *, te_expr *);
TE_API te_expr *te_floordiv(te_expr *, te_expr *);
TE_API te_expr *te_floormod(te_expr *, te_expr *);
TE_API te_expr *te_min(te_expr *, te_expr *);
TE_API te_expr *te_max(te_expr *, te_expr *);
TE_API te_expr *te_neg(te_expr *);

/* Comparisons give bool. */
TE_API te_expr *te_lt(te_expr *, te_expr *);
TE_API te_expr *te_le(te_expr *, te_expr *);
TE_API te_expr *te_gt(te_expr *, te_expr *);
TE_API te_expr *te_ge(te_expr *, te_expr *);
TE_API te_expr *te_eq(te_expr *, te_expr *);
TE_API te_expr *te_ne(te_expr *, te_expr *);

/* Logic on bools. */
TE_API te_expr *te_and(te_expr *, te_expr *);
TE_API te_expr *te_or(te_expr *, te_expr *);
TE_API te_expr *te_not(te_expr *);

/* cond ? t : f (both sides evaluated is allowed; te may evaluate either). t and f are promoted to
   a common type. */
TE_API te_expr *te_select(te_expr *cond, te_expr *t, te_expr *f);
/* cond ? t : f evaluating only the side cond chooses (TVM's if_then_else): a read on the other
   side is not made, so it may be out of the tensor's bounds, as in padding without clamps:
   te_if_then_else(x >= 1 && x <= W, In[x - 1], 0). In vector code the lanes of each side are
   masked loads (lanes of the other side read nothing); scalar code branches. Same types and
   errors as te_select; printed and parsed as if_then_else(cond, t, f). GPU kernels branch too
   (the Vulkan target: a structured selection). */
TE_API te_expr *te_if_then_else(te_expr *cond, te_expr *t, te_expr *f);
/* Conversion; float to int truncates towards zero. */
TE_API te_expr *te_cast(te_dtype, te_expr *);

/* Integer operators (quantized kernels). Operands must be integers (TE_ERR_TYPE on bool and
   floats: bools use te_and/te_or/te_not). Also callable by name through te_call
   ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "shift_left", "shift_right",
   "shift_right_logical", "rounding_shift_right"), which is how they print and parse.
   - bitwise and/or/xor/not: operands promoted as arithmetic is; bit by bit.
   - Shifts: the result has x's type (an immediate x is i64); the amount s may be any integer
     type and is read as unsigned, so a negative amount counts as a large one. Every amount is
     defined, none is undefined behaviour:
       te_shift_left(x, s)           x * 2^s wrapped; 0 when s >= width.
       te_shift_right(x, s)          arithmetic (sign-filling) for signed x, logical for unsigned
                                     x; s >= width gives -1 or 0 (signed) or 0 (unsigned): the
                                     value shifted out completely, floor(x / 2^s).
       te_shift_right_logical(x, s)  zero-filling whatever x's signedness; 0 when s >= width.
       te_rounding_shift_right(x, s) x / 2^s rounded to nearest, ties towards +infinity
                                     (floor((x + 2^(s-1)) / 2^s) computed without overflow, the
                                     requantization step of gemmlowp-style kernels); x when s = 0,
                                     and the exact rounding for s >= width (0, or 1 for an
                                     unsigned x >= 2^(width-1) when s = width). */
TE_API te_expr *te_bitwise_and(te_expr *, te_expr *);
TE_API te_expr *te_bitwise_or(te_expr *, te_expr *);
TE_API te_expr *te_bitwise_xor(te_expr *, te_expr *);
TE_API te_expr *te_bitwise_not(te_expr *);
TE_API te_expr *te_shift_left(te_expr *x, te_expr *s);
TE_API te_expr *te_shift_right(te_expr *x, te_expr *s);
TE_API te_expr *te_shift_right_logical(te_expr *x, te_expr *s);
TE_API te_expr *te_rounding_shift_right(te_expr *x, te_expr *s);
/* Conversion to t that saturates: an integer or float value past t's range gives t's minimum or
   maximum, NaN gives 0; within the range it is te_cast (floats truncate towards zero). To a
   float type it is te_cast. Built from min, max, select and cast, and printed as those.
   TE_ERR_TYPE for bool on either side or lanes that differ. */
TE_API te_expr *te_saturating_cast(te_dtype t, te_expr *e);

/* Math calls by name. Float-only (TE_ERR_TYPE on ints): exp exp2 log log2 log10 sqrt rsqrt sin
   cos tan tanh sigmoid erf floor ceil round trunc pow(2 args) fma(3 args). Any number type: abs.
   Integer arguments of a float-only call are not converted silently: cast them first.
   An unknown name is TE_ERR_NOT_FOUND; a wrong count of arguments TE_ERR_INVALID_ARG. */
TE_API te_expr *te_call(te_ctx *, const char *fn, int n, te_expr *const args[]);

/* The dtype of an expression ({0,0,0} for NULL). */
TE_API te_dtype te_expr_dtype(const te_expr *);
/* The context an expression belongs to (NULL for NULL). */
TE_API te_ctx *te_expr_ctx(const te_expr *);
/* The expression as text, in the IR printer's syntax; te_free() it. NULL for NULL. */
TE_API char *te_expr_text(const te_expr *);

#ifdef __cplusplus
}
#endif
#endif
