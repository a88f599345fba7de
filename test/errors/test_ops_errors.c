/* test_ops_errors.c — misuse of the operator library (te/ops.h): every call returns NULL with
 * the exact status and a message that names the operator and the rule (channel, rank, extent,
 * broadcast, dtype and parameter errors), and a NULL input keeps the context's first error.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../common/te_test.h"

TestSuite(ops_errors, .init = tt_setup, .fini = tt_teardown);

static te_tensor *ph(const char *name, te_dtype t, int nd, const int64_t s[]) {
  return tt_placeholder(name, t, nd, s);
}
#define PH(name, t, ...) ph((name), (t), TT_NDIM_(__VA_ARGS__), TT_SHAPE(__VA_ARGS__))

Test(ops_errors, conv_channel_mismatch) {
  te_tensor *D = PH("data", TE_F32, 1, 64, 8, 8), *K = PH("w", TE_F32, 16, 32, 3, 3);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, NULL, "conv"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE,
                "te_op_conv2d_nchw: kernel channels 32 do not match input channels 64");
  te_clear_error(tt_ctx);
  te_tensor *Dh = PH("data", TE_F32, 1, 8, 8, 64), *Kh = PH("w", TE_F32, 3, 3, 32, 16);
  cr_assert_null(te_op_conv2d_nhwc(tt_ctx, Dh, Kh, NULL, "conv"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_conv2d_nhwc: kernel channels 32", "input channels 64");
  te_clear_error(tt_ctx);
  te_tensor *Kd = PH("w", TE_F32, 63, 1, 3, 3);
  cr_assert_null(te_op_depthwise_conv2d_nchw(tt_ctx, D, Kd, NULL, "dw"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_depthwise_conv2d_nchw: kernel channels 63");
  te_clear_error(tt_ctx);
  te_tensor *Km = PH("w", TE_F32, 64, 2, 3, 3);
  cr_assert_null(te_op_depthwise_conv2d_nchw(tt_ctx, D, Km, NULL, "dw"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "channel multiplier", "must be 1 (got 2)");
}

Test(ops_errors, rank_mismatch) {
  te_tensor *A3 = PH("A", TE_F32, 2, 3, 4), *B = PH("B", TE_F32, 4, 5);
  cr_assert_null(te_op_matmul(tt_ctx, A3, B, 0, 0, "C"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_matmul: A 'A' must have rank 2", "[2, 3, 4]");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_batch_matmul(tt_ctx, B, B, 0, 0, "C"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_batch_matmul: A 'B' must have rank 3");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, A3, PH("w", TE_F32, 1, 2, 3, 3), NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_conv2d_nchw: data 'A' must have rank 4");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_max_pool2d(tt_ctx, A3, &(te_pool2d_params){2, 2, 2, 2, 0, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_max_pool2d: data 'A' must have rank 4");
  te_clear_error(tt_ctx);
  te_tensor *S = TT_NN(te_placeholder(tt_ctx, "s", TE_F32, 0, NULL));
  cr_assert_null(te_op_softmax(tt_ctx, S, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_softmax: 's' must have rank >= 1");
}

Test(ops_errors, matmul_inner_extents) {
  te_tensor *A = PH("A", TE_F32, 3, 4), *B = PH("B", TE_F32, 5, 6);
  cr_assert_null(te_op_matmul(tt_ctx, A, B, 0, 0, "C"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_matmul: reduction extent K = 4 of A 'A' [3, 4]",
                "does not match", "5 of B 'B' [5, 6]");
  te_clear_error(tt_ctx);
  /* with trans_b, B [6, 4] has K = 4: fine */
  TT_NN(te_op_matmul(tt_ctx, A, PH("Bt", TE_F32, 6, 4), 0, 1, "C"));
  /* symbolic extents must be the identical expression */
  te_expr *k1 = te_var(tt_ctx, "k"), *k2 = te_var(tt_ctx, "k");
  te_tensor *As = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, 3), k1)));
  te_tensor *Bs = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(k2, te_int(tt_ctx, 3))));
  cr_assert_null(te_op_matmul(tt_ctx, As, Bs, 0, 0, "C"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "identical expression");
  te_clear_error(tt_ctx);
  cr_assert_null(
      te_op_batch_matmul(tt_ctx, PH("A", TE_F32, 2, 3, 4), PH("B", TE_F32, 3, 4, 5), 0, 0, "C"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_batch_matmul: batch extent 2 of A",
                "does not match 3 of B");
}

Test(ops_errors, not_broadcastable) {
  te_tensor *A = PH("a", TE_F32, 2, 3), *B = PH("b", TE_F32, 4);
  cr_assert_null(te_op_add(tt_ctx, A, B, "c"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE,
                "te_op_add: shapes [2, 3] of 'a' and [4] of 'b' are not "
                "broadcastable: dimension 1 of the result (3 vs 4)");
  te_clear_error(tt_ctx);
  te_expr *n = te_var(tt_ctx, "n"), *m = te_var(tt_ctx, "m");
  te_tensor *X = TT_NN(te_placeholder(tt_ctx, "x", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *Y = TT_NN(te_placeholder(tt_ctx, "y", TE_F32, 1, TE_EXPRS(m)));
  cr_assert_null(te_op_maximum(tt_ctx, X, Y, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_maximum", "(n vs m)", "identical expression");
  te_clear_error(tt_ctx);
  /* the same symbol broadcasts; a 1 stretches */
  TT_NN(te_op_mul(tt_ctx, X, X, NULL));
  TT_NN(te_op_sub(tt_ctx, X, PH("one", TE_F32, 1), NULL));
  TT_NO_ERR(tt_ctx);
}

Test(ops_errors, bad_conv_params) {
  te_tensor *D = PH("data", TE_F32, 1, 3, 8, 8), *K = PH("w", TE_F32, 4, 3, 3, 3);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, &(te_conv2d_params){.stride_h = -1}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_conv2d_nchw: stride_h must be >= 0", "-1");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_conv2d_nhwc(tt_ctx, PH("d", TE_F32, 1, 8, 8, 3), PH("w", TE_F32, 3, 3, 3, 4),
                                   &(te_conv2d_params){.pad_w = -2}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_conv2d_nhwc: pad_w must be >= 0");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, &(te_conv2d_params){.dilation_w = -3}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "dilation_w must be >= 0");
  te_clear_error(tt_ctx);
  /* a window larger than the padded image */
  te_tensor *K9 = PH("w", TE_F32, 4, 3, 9, 3);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K9, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_conv2d_nchw: output height would be 0 (< 1)");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, &(te_conv2d_params){.dilation_h = 4}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "output height would be 0", "window 9 (dilation 4)");
}

Test(ops_errors, bad_pool_params) {
  te_tensor *D = PH("data", TE_F32, 1, 3, 8, 8);
  cr_assert_null(te_op_max_pool2d(tt_ctx, D, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_max_pool2d: params is NULL");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_avg_pool2d(tt_ctx, D, &(te_pool2d_params){0, 2, 1, 1, 0, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_avg_pool2d: kernel_h and kernel_w must be >= 1");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_max_pool2d(tt_ctx, D, &(te_pool2d_params){2, 2, -2, 1, 0, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "stride_h and stride_w must be >= 0");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_max_pool2d(tt_ctx, D, &(te_pool2d_params){3, 3, 1, 1, 3, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "padding must be >= 0 and smaller than the window");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_max_pool2d(tt_ctx, D, &(te_pool2d_params){9, 2, 1, 1, 0, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_max_pool2d: output height would be 0");
}

Test(ops_errors, dtypes) {
  te_tensor *D = PH("data", TE_F32, 1, 3, 8, 8), *K = PH("w", TE_F64, 4, 3, 3, 3);
  cr_assert_null(te_op_conv2d_nchw(tt_ctx, D, K, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE,
                "te_op_conv2d_nchw: dtypes of 'data' (f32) and 'w' (f64) differ");
  te_clear_error(tt_ctx);
  te_tensor *I = PH("i", TE_I32, 2, 3);
  cr_assert_null(te_op_softmax(tt_ctx, I, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_softmax: 'i' must have a float dtype (got i32)");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_avg_pool2d(tt_ctx, PH("d", TE_I8, 1, 1, 4, 4),
                                  &(te_pool2d_params){2, 2, 2, 2, 0, 0}, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_avg_pool2d", "float dtype");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_div(tt_ctx, I, I, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_div: float division of integer tensors");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_relu(tt_ctx, PH("b", TE_BOOL, 3), NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE, "te_op_relu: 'b' has dtype bool");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_cast(tt_ctx, I, TE_DTYPE(kDLFloat, 8), NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "te_op_cast: cannot cast 'i' to f8");
}

Test(ops_errors, layer_norm_and_bias_add) {
  te_tensor *X = PH("x", TE_F32, 4, 6), *G = PH("g", TE_F32, 6), *B5 = PH("b", TE_F32, 5);
  cr_assert_null(te_op_layer_norm(tt_ctx, X, G, B5, 1e-5, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_layer_norm: 'b' must have shape [D]", "(got [5])");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_layer_norm(tt_ctx, X, G, G, -1, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_layer_norm: eps must be finite and >= 0");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_layer_norm(tt_ctx, X, G, G, NAN, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "eps must be finite");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_bias_add(tt_ctx, X, G, 2, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_bias_add: axis 2 is out of range");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_bias_add(tt_ctx, X, G, 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_bias_add: bias 'g' [6] must have shape [4]");
}

Test(ops_errors, unary_functions) {
  te_tensor *F = PH("f", TE_F32, 3), *I = PH("i", TE_I32, 3);
  cr_assert_null(te_op_unary(tt_ctx, F, "nosuchfn", NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_op_unary: unknown function 'nosuchfn'");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_unary(tt_ctx, F, "likely", NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "unknown function 'likely'");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_unary(tt_ctx, F, "pow", NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_unary: function 'pow' takes 2 arguments");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_unary(tt_ctx, I, "exp", NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_TYPE,
                "te_op_unary: function 'exp' needs a float tensor; 'i' is i32");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_unary(tt_ctx, F, NULL, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_unary: fn is NULL");
}

Test(ops_errors, names_null_inputs_and_stickiness) {
  te_tensor *A = PH("A", TE_F32, 3, 4);
  cr_assert_null(te_op_relu(tt_ctx, A, "bad name"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_relu: name 'bad name' is not a C identifier");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_matmul(tt_ctx, NULL, A, 0, 0, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_matmul: A is NULL");
  te_clear_error(tt_ctx);
  /* a failed operator feeding the next: the first message stays */
  te_tensor *bad = te_op_add(tt_ctx, A, PH("B", TE_F32, 5), NULL);
  cr_assert_null(bad);
  cr_assert_null(te_op_relu(tt_ctx, bad, NULL));
  cr_assert_null(te_op_softmax(tt_ctx, bad, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "te_op_add: shapes [3, 4] of 'A' and [5] of 'B'");
  te_clear_error(tt_ctx);
  /* another context's tensor */
  te_ctx *other = te_ctx_new();
  te_tensor *O =
      te_placeholder(other, "O", TE_F32, 2, TE_EXPRS(te_int(other, 3), te_int(other, 4)));
  cr_assert_null(te_op_add(tt_ctx, A, O, NULL));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_add: b 'O' belongs to another context");
  te_ctx_free(other);
}

Test(ops_errors, stage_lookup) {
  te_tensor *X = PH("x", TE_F32, 3, 4);
  te_tensor *sm = TT_NN(te_op_softmax(tt_ctx, X, "sm"));
  cr_assert_str_eq(te_tensor_name(TT_NN(te_op_stage(sm, "max"))), "sm_max");
  cr_assert_null(te_op_stage(sm, "pad"));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_NOT_FOUND, "te_op_stage: 'sm' reads no stage called 'sm_pad'");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_stage(sm, ""));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_INVALID_ARG, "te_op_stage: suffix");
  te_clear_error(tt_ctx);
  cr_assert_null(te_op_stage(NULL, "max"));
  TT_NO_ERR(tt_ctx);
}
