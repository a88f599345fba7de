/* te/ops.h — a library of common operators, written as tensor expressions.
 *
 * Each function builds the compute stages of one operator from its input tensors and returns
 * the output tensor; nothing is scheduled or compiled. The stages are ordinary te_compute
 * tensors, so they are scheduled like any other: te_stage_of(schedule, out) for the output, and
 * the intermediate stages by their predictable names, found through the tensors they read (see
 * te_op_stage below). These are the workloads te-tune tunes and what users start from.
 *
 * Common rules (every function):
 *   - name is the output tensor's name (a C identifier, at most 64 characters); intermediate
 *     stages are called "<name>_<suffix>" (e.g. "conv_pad", "sm_max"). NULL picks the default
 *     given with each function ("matmul", "conv2d", ...).
 *   - Shapes are those of the inputs: constant or symbolic (te_var) extents. Where two extents
 *     must agree they must be equal constants or the identical expression (the same te_var, or
 *     the same expression of te_vars: expressions are hash-consed); anything else is TE_ERR_SHAPE
 *     because te cannot prove it at build time.
 *   - Operators that multiply or combine two tensors (matmul, conv2d, pooling's padding) require
 *     inputs of one dtype (TE_ERR_TYPE otherwise); the output has that dtype. Reductions
 *     accumulate in the output dtype.
 *   - The _acc forms (matmul, batch_matmul, the convolutions) take an accumulator dtype acc: each
 *     product is acc(a) * acc(b), summed in acc, and the output has dtype acc; the inputs may
 *     differ (u8 x i8). bf16 or f16 inputs with acc TE_F32 are the mixed-precision GEMM (the
 *     products of 16-bit values are exact in f32). A float input needs a float acc that holds
 *     its values (its own dtype or wider: f32 for f16/bf16, f64 for any; TE_ERR_TYPE otherwise,
 *     e.g. f32 inputs summed in bf16); an integer acc must hold every product and, for a
 *     constant number of terms, every sum (TE_ERR_TYPE "accumulator i16 can overflow ...").
 *   - On failure the result is NULL with TE_ERR_INVALID_ARG (NULL argument, bad name, bad
 *     parameter), TE_ERR_SHAPE (rank or extent mismatch) or TE_ERR_TYPE (dtype), and a message
 *     that names the operator and the rule, e.g.
 *       "te_op_conv2d_nchw: kernel channels 32 do not match input channels 64".
 *     A NULL input (e.g. the result of an earlier failed call) gives NULL and keeps the
 *     context's first error, so a network can be built and checked once; with no error
 *     recorded, a NULL input is TE_ERR_INVALID_ARG naming it ("te_op_relu: x is NULL").
 */
#ifndef TE_OPS_H
#define TE_OPS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- matrix products */

/* C = op(A) x op(B), op(X) = X or its transpose. A is [M, K] ([K, M] with trans_a), B is [K, N]
   ([N, K] with trans_b); C is [M, N]:  C[i, j] = sum_k op(A)[i, k] * op(B)[k, j].
   Stages: the output only; its reduce axis is "k" (te_reduce_iter(stage, 0)).
   Errors: rank not 2 (TE_ERR_SHAPE), K of A and B not equal (TE_ERR_SHAPE), dtypes differ
   (TE_ERR_TYPE). Default name "matmul". */
TE_API te_tensor *te_op_matmul(te_ctx *, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                               const char *name);

/* te_op_matmul accumulating in acc (see the common rules): C[i, j] = sum_k acc(A[i, k]) *
   acc(B[k, j]), C of dtype acc. Default name "matmul". */
TE_API te_tensor *te_op_matmul_acc(te_ctx *, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                                   te_dtype acc, const char *name);

/* Batched matrix product: A [b, M, K] ([b, K, M] with trans_a), B [b, K, N] ([b, N, K] with
   trans_b), C [b, M, N]. The batch extents must be equal. Stages: the output only (reduce axis
   "k"). Errors as te_op_matmul (rank 3 here). Default name "batch_matmul". */
TE_API te_tensor *te_op_batch_matmul(te_ctx *, te_tensor *A, te_tensor *B, int trans_a, int trans_b,
                                     const char *name);

/* te_op_batch_matmul accumulating in acc. Default name "batch_matmul". */
TE_API te_tensor *te_op_batch_matmul_acc(te_ctx *, te_tensor *A, te_tensor *B, int trans_a,
                                         int trans_b, te_dtype acc, const char *name);

/* ---------------------------------------------------------------- convolution */

/* Stride, zero padding (on both sides of each spatial axis) and dilation of a 2-D convolution.
   A zero stride or dilation means 1; a NULL params pointer means all defaults (stride 1, no
   padding, dilation 1). Negative values are TE_ERR_INVALID_ARG. */
typedef struct te_conv2d_params {
  int64_t stride_h, stride_w, pad_h, pad_w, dilation_h, dilation_w;
} te_conv2d_params;

/* 2-D convolution (cross-correlation, as in deep-learning frameworks), NCHW.
   data [N, C, H, W], kernel [O, C, KH, KW] (OIHW); output [N, O, OH, OW] with
     OH = floor((H + 2*pad_h - dilation_h*(KH - 1) - 1) / stride_h) + 1   (likewise OW);
     out[n, o, y, x] = sum_{rc, ry, rx} pad[n, rc, y*sh + ry*dh, x*sw + rx*dw] * kernel[o, rc, ry,
   rx] Stages: "<name>_pad" [N, C, H + 2*pad_h, W + 2*pad_w] when pad_h or pad_w > 0: an injective
   stage (data inside the bounds, zero outside; it never reads data out of bounds), meant for
   te_compute_inline or te_compute_at; then the output, with reduce axes rc, ry, rx (in that
   order). Errors: ranks not 4 (TE_ERR_SHAPE), kernel channels != data channels (TE_ERR_SHAPE),
   a constant output extent < 1 (TE_ERR_SHAPE), negative parameters (TE_ERR_INVALID_ARG),
   dtypes differ (TE_ERR_TYPE). Default name "conv2d". */
TE_API te_tensor *te_op_conv2d_nchw(te_ctx *, te_tensor *data, te_tensor *kernel,
                                    const te_conv2d_params *, const char *name);

/* 2-D convolution, NHWC: data [N, H, W, C], kernel [KH, KW, C, O] (HWIO); output [N, OH, OW, O]
   (OH, OW as above); out[n, y, x, o] = sum_{ry, rx, rc} pad[n, y*sh + ry*dh, x*sw + rx*dw, rc] *
   kernel[ry, rx, rc, o]. Stages: "<name>_pad" [N, H + 2*pad_h, W + 2*pad_w, C] when padding,
   then the output with reduce axes ry, rx, rc (in that order). Errors as te_op_conv2d_nchw.
   Default name "conv2d". */
TE_API te_tensor *te_op_conv2d_nhwc(te_ctx *, te_tensor *data, te_tensor *kernel,
                                    const te_conv2d_params *, const char *name);

/* The convolutions above accumulating in acc (see the common rules); the padding stage keeps
   data's dtype (zero padding), the output has dtype acc. */
TE_API te_tensor *te_op_conv2d_nchw_acc(te_ctx *, te_tensor *data, te_tensor *kernel,
                                        const te_conv2d_params *, te_dtype acc, const char *name);
TE_API te_tensor *te_op_conv2d_nhwc_acc(te_ctx *, te_tensor *data, te_tensor *kernel,
                                        const te_conv2d_params *, te_dtype acc, const char *name);

/* Depthwise 2-D convolution, NCHW, channel multiplier 1: data [N, C, H, W], kernel
   [C, 1, KH, KW]; output [N, C, OH, OW];
     out[n, c, y, x] = sum_{ry, rx} pad[n, c, y*sh + ry*dh, x*sw + rx*dw] * kernel[c, 0, ry, rx].
   Stages: "<name>_pad" when padding, then the output with reduce axes ry, rx. Errors as
   te_op_conv2d_nchw, plus a kernel dimension 1 that is not 1 (TE_ERR_SHAPE). Default name
   "depthwise_conv2d". */
TE_API te_tensor *te_op_depthwise_conv2d_nchw(te_ctx *, te_tensor *data, te_tensor *kernel,
                                              const te_conv2d_params *, const char *name);

/* te_op_depthwise_conv2d_nchw accumulating in acc. */
TE_API te_tensor *te_op_depthwise_conv2d_nchw_acc(te_ctx *, te_tensor *data, te_tensor *kernel,
                                                  const te_conv2d_params *, te_dtype acc,
                                                  const char *name);

/* ---------------------------------------------------------------- quantization */

/* Requantization of an integer accumulator x (at most 32 bits, any shape) to dtype (an integer
   type of at most 32 bits, typically i8 or u8) with a real scale and a zero point, in integer
   arithmetic only (gemmlowp's scheme), exact and identical on every back end:
     scale = M * 2^-s with M = round(frexp mantissa of scale * 2^31), in [2^30, 2^31);
     out = te_saturating_cast(dtype, te_rounding_shift_right(i64(x) * M, s) + zero_point)
   i.e. round(x * scale) (ties up) + zero_point clamped to dtype's range. One stage, the output.
   Errors: x not an integer of <= 32 bits or dtype not one (TE_ERR_TYPE), scale not finite or
   not in (0, 2^31), zero_point outside dtype's range (TE_ERR_INVALID_ARG). Default name
   "requantize". */
TE_API te_tensor *te_op_requantize(te_ctx *, te_tensor *x, double scale, int64_t zero_point,
                                   te_dtype dtype, const char *name);

/* ---------------------------------------------------------------- pooling */

/* Window, stride and padding of a 2-D pooling. kernel_h/kernel_w must be >= 1; a zero stride
   means 1; padding must be >= 0 and smaller than the window (pad_h < kernel_h), so that every
   window holds at least one element of the input. */
typedef struct te_pool2d_params {
  int64_t kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w;
} te_pool2d_params;

/* Max pooling, NCHW: data [N, C, H, W], output [N, C, OH, OW],
     OH = floor((H + 2*pad_h - kernel_h) / stride_h) + 1   (likewise OW),
     out[n, c, y, x] = max_{ry, rx} pad[n, c, y*sh + ry, x*sw + rx].
   Padded positions hold the dtype's lowest value (-FLT_MAX, -DBL_MAX, INTn_MIN, 0 for unsigned),
   so they never win. Stages: "<name>_pad" when padding (injective), then the output with reduce
   axes ry, rx. Any number dtype. Errors: rank not 4 (TE_ERR_SHAPE), bad params
   (TE_ERR_INVALID_ARG), constant output extent < 1 (TE_ERR_SHAPE), bool data (TE_ERR_TYPE).
   Default name "max_pool2d". */
TE_API te_tensor *te_op_max_pool2d(te_ctx *, te_tensor *data, const te_pool2d_params *,
                                   const char *name);

/* Average pooling, NCHW, shapes as te_op_max_pool2d. The divisor is always the full window
   size kernel_h * kernel_w, padded (zero) positions included ("count_include_pad" in PyTorch's
   terms): out = sum(window) / (kernel_h * kernel_w). Stages: "<name>_pad" when padding, the
   window sum "<name>_sum" (reduce axes ry, rx), then the output (injective, the division).
   Float dtypes only (TE_ERR_TYPE otherwise). Default name "avg_pool2d". */
TE_API te_tensor *te_op_avg_pool2d(te_ctx *, te_tensor *data, const te_pool2d_params *,
                                   const char *name);

/* ---------------------------------------------------------------- normalization */

/* Softmax over the last axis of x (any rank >= 1, float), numerically stable:
     m = max_k x[..., k];  e = exp(x - m);  s = sum_k e[..., k];  out = e / s.
   Stages: "<name>_max" (reduction, shape of x without its last axis), "<name>_exp" (injective,
   shape of x), "<name>_sum" (reduction of <name>_exp), then the output (shape of x).
   Errors: rank 0 (TE_ERR_SHAPE), non-float dtype (TE_ERR_TYPE). Default name "softmax". */
TE_API te_tensor *te_op_softmax(te_ctx *, te_tensor *x, const char *name);

/* Layer normalization over the last axis of x (rank >= 1, float), with gamma and beta of shape
   [D] (D the last extent of x) and the same dtype:
     mean = sum_k x[..., k] / D;  var = sum_k (x[..., k] - mean)^2 / D   (biased variance);
     out = (x - mean) / sqrt(var + eps) * gamma + beta.
   Stages: "<name>_mean", "<name>_var" (reductions, shape of x without its last axis), then the
   output. Errors: rank 0 or gamma/beta not [D] (TE_ERR_SHAPE), dtypes (TE_ERR_TYPE), eps < 0
   or not finite (TE_ERR_INVALID_ARG). Default name "layer_norm". */
TE_API te_tensor *te_op_layer_norm(te_ctx *, te_tensor *x, te_tensor *gamma, te_tensor *beta,
                                   double eps, const char *name);

/* ---------------------------------------------------------------- element-wise */

/* Binary element-wise operators with NumPy broadcasting: shapes are aligned on the right, the
   shorter one is extended with leading 1s, and in each dimension the extents must be equal (as
   defined above) or one of them the constant 1, which is stretched. The output has the
   broadcast shape; its dtype follows te's promotion rules (te/expr.h). One stage (the output).
     te_op_add a + b, te_op_sub a - b, te_op_mul a * b,
     te_op_div a / b (float division: integer operands are TE_ERR_TYPE),
     te_op_maximum max(a, b), te_op_minimum min(a, b).
   Errors: non-broadcastable shapes (TE_ERR_SHAPE, naming both shapes and the dimension), bool
   operands (TE_ERR_TYPE). Default names "add", "sub", "mul", "div", "maximum", "minimum". */
TE_API te_tensor *te_op_add(te_ctx *, te_tensor *a, te_tensor *b, const char *name);
TE_API te_tensor *te_op_sub(te_ctx *, te_tensor *a, te_tensor *b, const char *name);
TE_API te_tensor *te_op_mul(te_ctx *, te_tensor *a, te_tensor *b, const char *name);
TE_API te_tensor *te_op_div(te_ctx *, te_tensor *a, te_tensor *b, const char *name);
TE_API te_tensor *te_op_maximum(te_ctx *, te_tensor *a, te_tensor *b, const char *name);
TE_API te_tensor *te_op_minimum(te_ctx *, te_tensor *a, te_tensor *b, const char *name);

/* max(x, 0), same shape and dtype (any number type; bool is TE_ERR_TYPE). Default "relu". */
TE_API te_tensor *te_op_relu(te_ctx *, te_tensor *x, const char *name);

/* x + bias broadcast along one axis: bias is 1-D with the extent of x's dimension axis
   (negative axis counts from the end: -1 is the last). out[..., c, ...] = x[..., c, ...] +
   bias[c]; e.g. NCHW conv output with axis 1, NHWC with axis 3 or -1. Same dtype required.
   Errors: axis out of range (TE_ERR_INVALID_ARG), bias not [x.dim(axis)] (TE_ERR_SHAPE),
   dtypes differ (TE_ERR_TYPE). Default "bias_add". */
TE_API te_tensor *te_op_bias_add(te_ctx *, te_tensor *x, te_tensor *bias, int axis,
                                 const char *name);

/* fn(x) element-wise, through te_call: fn is one of te_call's one-argument functions (exp exp2
   log log2 log10 sqrt rsqrt sin cos tan tanh sigmoid erf floor ceil round trunc: float x only;
   abs: any number type) or "neg". Same shape and dtype as x. Errors: unknown fn
   (TE_ERR_NOT_FOUND), a float-only fn on an integer tensor (TE_ERR_TYPE). Default name: fn. */
TE_API te_tensor *te_op_unary(te_ctx *, te_tensor *x, const char *fn, const char *name);

/* te_cast(dtype, x) element-wise (float to int truncates towards zero). Errors: an unsupported
   dtype (TE_ERR_TYPE or TE_ERR_UNSUPPORTED, from te_cast). Default name "cast". */
TE_API te_tensor *te_op_cast(te_ctx *, te_tensor *x, te_dtype dtype, const char *name);

/* ---------------------------------------------------------------- finding stages */

/* The intermediate stage "<te_tensor_name(out)>_<suffix>" of an operator built above (e.g.
   te_op_stage(conv, "pad")), found by walking the tensors out reads; NULL with
   TE_ERR_NOT_FOUND when the operator has no such stage (e.g. no padding), TE_ERR_INVALID_ARG for
   an empty or NULL suffix, and NULL without a new message for a NULL out. Pass the result to
   te_stage_of. Works for any tensor named by this convention, not only those built here. */
TE_API te_tensor *te_op_stage(te_tensor *out, const char *suffix);

#ifdef __cplusplus
}
#endif
#endif
