/* test_ops_quant.c — quantized operators against plain C, exactly: te_op_matmul_acc and the
 * convolutions' _acc forms with u8 x s8 (and s8 x s8, u8 x u8) inputs accumulating in i32,
 * te_op_requantize back to i8/u8, and a whole quantized layer (matmul -> requantize). Inputs
 * span the types' whole ranges with the extremes (0, 255, -128, 127) mixed in; shapes do not
 * divide the schedules' factors; every kernel runs under the schedules of test_ops_util.h.
 */
#include <math.h>
#include <stdlib.h>

#include "test_ops_util.h"

TestSuite(ops_quant, .init = tt_setup, .fini = tt_teardown);

/* Random values over t's whole range (8-bit types), every third one an extreme. */
static void fill_q(tt_buf *b, uint64_t seed) {
  te_dtype t = b->dl.dtype;
  srand((unsigned)seed);
  int64_t lo = t.code == kDLInt ? -128 : 0, hi = t.code == kDLInt ? 127 : 255;
  for (int64_t i = 0; i < b->numel; i++) {
    int64_t v = lo + rand() % (hi - lo + 1);
    if (i % 3 == 0)
      v = (i / 3) % 2 ? lo : hi;
    tt_seti(b, i, v);
  }
}

static void check_matmul_acc(te_dtype ta, te_dtype tb, int64_t m, int64_t n, int64_t k, int trb) {
  int64_t sb[2] = {trb ? n : k, trb ? k : n};
  te_tensor *A = tt_placeholder("A", ta, 2, TT_SHAPE(m, k)), *B = tt_placeholder("B", tb, 2, sb);
  te_tensor *C = TT_NN(te_op_matmul_acc(tt_ctx, A, B, 0, trb, TE_I32, "C"));
  cr_assert(te_dtype_eq(te_tensor_dtype(C), TE_I32));
  tt_buf *a = tt_alloc(ta, 2, TT_SHAPE(m, k)), *b = tt_alloc(tb, 2, sb);
  tt_buf *got = TT_ALLOC(TE_I32, m, n), *ref = TT_ALLOC(TE_I32, m, n);
  fill_q(a, 5), fill_q(b, 6);
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < n; j++) {
      int64_t s = 0;
      for (int64_t r = 0; r < k; r++)
        s += tt_geti(a, i * k + r) * tt_geti(b, trb ? j * k + r : r * n + j);
      tt_seti(ref, i * n + j, s);
    }
  ops_plan p = {.nreduce = 1};
  ops_check("matmul_acc", C, &p, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), got, ref, k);
}

Test(ops_quant, matmul_u8_s8_to_i32) {
  check_matmul_acc(TE_U8, TE_I8, 13, 11, 17, 0);
  check_matmul_acc(TE_U8, TE_I8, 5, 7, 9, 1);
}

Test(ops_quant, matmul_s8_s8_and_u8_u8) {
  check_matmul_acc(TE_I8, TE_I8, 6, 9, 10, 0);
  check_matmul_acc(TE_U8, TE_U8, 7, 5, 12, 0);
}

/* Long sums of extreme products: far past i8 and i16, inside i32. */
Test(ops_quant, matmul_long_k_does_not_overflow) { check_matmul_acc(TE_U8, TE_I8, 3, 4, 700, 0); }

static void check_conv_acc(bool nhwc, const ops_conv_case *q) {
  ops_check_conv_acc(TE_U8, TE_I8, TE_I32, nhwc, q, fill_q, 8);
}

Test(ops_quant, conv2d_u8_s8_to_i32) {
  const ops_conv_case body = {1, 8, 9, 7, 5, 3, 3, {1, 1, 1, 1, 1, 1}};  /* ResNet's 3x3/1 pad 1 */
  const ops_conv_case odd = {2, 3, 11, 10, 4, 3, 2, {2, 1, 1, 0, 1, 2}}; /* strides, dilation */
  check_conv_acc(false, &body);
  check_conv_acc(true, &body);
  check_conv_acc(false, &odd);
  check_conv_acc(true, &odd);
}

/* The integer formula of te_op_requantize, written out. */
static int64_t ref_requant(int64_t x, double scale, int64_t zp, te_dtype t) {
  int e = 0;
  double f = frexp(scale, &e);
  int64_t m = llround(f * 2147483648.0);
  if (m == (int64_t)1 << 31)
    m >>= 1, e++;
  int64_t s = 31 - e;
  __int128 p = (__int128)x * m;
  int64_t r;
  if (s == 0)
    r = (int64_t)p;
  else if (s > 100)
    r = 0;
  else { /* floor((p + 2^(s-1)) / 2^s) */
    __int128 num = p + ((__int128)1 << (s - 1));
    r = (int64_t)(num >> s); /* arithmetic shift of __int128 floors */
  }
  r += zp;
  int64_t lo = t.code == kDLInt ? -128 : 0, hi = t.code == kDLInt ? 127 : 255;
  return r < lo ? lo : r > hi ? hi : r;
}

static void check_requant(te_dtype t, double scale, int64_t zp) {
  enum { R = 5, C = 41 };
  te_tensor *X = tt_placeholder("X", TE_I32, 2, TT_SHAPE(R, C));
  te_tensor *Q = TT_NN(te_op_requantize(tt_ctx, X, scale, zp, t, "q"));
  cr_assert(te_dtype_eq(te_tensor_dtype(Q), t));
  tt_buf *x = TT_ALLOC(TE_I32, R, C), *got = TT_ALLOC(t, R, C), *ref = TT_ALLOC(t, R, C);
  srand(77);
  const int64_t special[] = {0, 1, -1, INT32_MAX, INT32_MIN, 40, -40, 41, -41, 1000000};
  for (int64_t i = 0; i < R * C; i++) {
    int64_t v = (int64_t)(rand() % 40001) - 20000;
    if (i % 4 == 0)
      v = special[(i / 4) % 10];
    tt_seti(x, i, v);
  }
  for (int64_t i = 0; i < R * C; i++) {
    int64_t want = ref_requant(tt_geti(x, i), scale, zp, t);
    tt_seti(ref, i, want);
    /* and the formula is round(x * scale) + zp to within one step (ties and M's rounding) */
    double real = floor((double)tt_geti(x, i) * scale + 0.5) + (double)zp;
    double lo = t.code == kDLInt ? -128 : 0, hi = t.code == kDLInt ? 127 : 255;
    real = real < lo ? lo : real > hi ? hi : real;
    cr_assert(fabs(real - (double)want) <= 1, "requantize of %lld: %lld far from %g",
              (long long)tt_geti(x, i), (long long)want, real);
  }
  ops_plan p = {.nreduce = 0};
  ops_check("requantize", Q, &p, 2, TT_TENSORS(X, Q), TT_BUFS(x, got), got, ref, 1);
}

Test(ops_quant, requantize_to_i8_and_u8) {
  check_requant(TE_I8, 0.0123, -3);
  check_requant(TE_U8, 0.5, 128); /* ties: x = 41 * 0.5 = 20.5 rounds up */
  check_requant(TE_U8, 1.0 / 3.0, 0);
  check_requant(TE_I8, 1e-12, 7); /* a shift past 64 bits: the zero point alone */
  check_requant(TE_I8, 3.0, 0);   /* a scale above 1 */
}

/* A quantized dense layer: u8 x s8 -> i32 -> requantized u8, two stages in one kernel. */
Test(ops_quant, quantized_layer) {
  enum { M = 9, N = 10, K = 33 };
  te_tensor *A = tt_placeholder("A", TE_U8, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_I8, 2, TT_SHAPE(K, N));
  te_tensor *C = TT_NN(te_op_matmul_acc(tt_ctx, A, B, 0, 0, TE_I32, "acc"));
  te_tensor *Q = TT_NN(te_op_requantize(tt_ctx, C, 0.002, 10, TE_U8, "out"));
  tt_buf *a = TT_ALLOC(TE_U8, M, K), *b = TT_ALLOC(TE_I8, K, N);
  tt_buf *got = TT_ALLOC(TE_U8, M, N), *ref = TT_ALLOC(TE_U8, M, N);
  fill_q(a, 1), fill_q(b, 2);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      int64_t s = 0;
      for (int64_t r = 0; r < K; r++)
        s += tt_geti(a, i * K + r) * tt_geti(b, r * N + j);
      tt_seti(ref, i * N + j, ref_requant(s, 0.002, 10, TE_U8));
    }
  te_schedule *s = tt_schedule1(Q);
  TT_OK(te_compute_at(tt_stage(s, C), tt_stage(s, Q), TT_NN(te_axis(tt_stage(s, Q), 0))));
  tt_check(s, 3, TT_TENSORS(A, B, Q), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, 1);
}
