/* test_ops_lowp_acc.c — the operator library's mixed-precision forms: te_op_matmul_acc,
 * te_op_batch_matmul_acc and the convolutions' _acc forms with bf16 or f16 inputs accumulating in
 * f32, against an f64 reference of the 16-bit values' products rounded once to f32, within f32's
 * tolerance for the sum's length (a sum kept in bf16 or f16 would miss it by two orders of
 * magnitude). Random non-zero inputs, outputs poisoned, shapes that do not divide the schedules'
 * factors; every kernel runs under the schedules of test_ops_util.h.
 */
#include "test_ops_util.h"

TestSuite(ops_lowp_acc, .init = tt_setup, .fini = tt_teardown);

static void check_matmul(te_dtype t, int64_t batch, int64_t m, int64_t n, int64_t k, int tra,
                         int trb) {
  int64_t sa[3] = {batch, tra ? k : m, tra ? m : k}, sb[3] = {batch, trb ? n : k, trb ? k : n};
  int64_t sc[3] = {batch, m, n};
  int r = batch ? 3 : 2, o = batch ? 0 : 1; /* rank, and the offset past an absent batch axis */
  te_tensor *A = tt_placeholder("A", t, r, sa + o), *B = tt_placeholder("B", t, r, sb + o);
  te_tensor *C = TT_NN(batch ? te_op_batch_matmul_acc(tt_ctx, A, B, tra, trb, TE_F32, "C")
                             : te_op_matmul_acc(tt_ctx, A, B, tra, trb, TE_F32, "C"));
  cr_assert(te_dtype_eq(te_tensor_dtype(C), TE_F32));
  tt_buf *a = tt_alloc(t, r, sa + o), *b = tt_alloc(t, r, sb + o);
  tt_buf *got = tt_alloc(TE_F32, r, sc + o), *ref = tt_alloc(TE_F32, r, sc + o);
  tt_fill(a, 11), tt_fill(b, 12);
  for (int64_t q = 0; q < (batch ? batch : 1); q++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < n; j++) {
        double s = 0;
        for (int64_t x = 0; x < k; x++)
          s += tt_get(a, q * m * k + (tra ? x * m + i : i * k + x)) *
               tt_get(b, q * k * n + (trb ? j * k + x : x * n + j));
        tt_set(ref, (q * m + i) * n + j, s);
      }
  ops_plan p = {.nreduce = 1};
  ops_check(batch ? "batch_matmul_acc" : "matmul_acc", C, &p, 3, TT_TENSORS(A, B, C),
            TT_BUFS(a, b, got), got, ref, k);
}

Test(ops_lowp_acc, matmul_bf16_to_f32) {
  check_matmul(TE_BF16, 0, 13, 11, 17, 0, 0);
  check_matmul(TE_BF16, 0, 5, 7, 9, 1, 1);
}

Test(ops_lowp_acc, matmul_f16_to_f32) {
  check_matmul(TE_F16, 0, 9, 14, 19, 0, 1);
  check_matmul(TE_F16, 0, 6, 5, 8, 1, 0);
}

/* A long sum: bf16 accumulation would be off by ~1%, f32's stays within 1e-4 */
Test(ops_lowp_acc, matmul_bf16_long_k) { check_matmul(TE_BF16, 0, 3, 5, 1500, 0, 0); }

Test(ops_lowp_acc, batch_matmul_bf16_and_f16_to_f32) {
  check_matmul(TE_BF16, 3, 5, 6, 7, 0, 0);
  check_matmul(TE_F16, 2, 4, 9, 10, 0, 1);
}

static void check_conv(te_dtype t, bool nhwc, const ops_conv_case *q) {
  ops_check_conv_acc(t, t, TE_F32, nhwc, q, tt_fill, 13);
}

Test(ops_lowp_acc, conv2d_bf16_and_f16_to_f32) {
  const ops_conv_case body = {1, 8, 9, 7, 5, 3, 3, {1, 1, 1, 1, 1, 1}};  /* ResNet's 3x3/1 pad 1 */
  const ops_conv_case odd = {2, 3, 11, 10, 4, 3, 2, {2, 1, 1, 0, 1, 2}}; /* strides, dilation */
  check_conv(TE_BF16, false, &body);
  check_conv(TE_BF16, true, &odd);
  check_conv(TE_F16, false, &odd);
  check_conv(TE_F16, true, &body);
}
