/* test_parse_kernels.c — kernels built from workload texts (te_parse) compute the right numbers:
 * against plain C references, and against the same operator built with ops.h.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "te_test.h"

TestSuite(parse_kernels, .init = tt_setup, .fini = tt_teardown);

/* Parses text into the kernel's arguments: the placeholders (te_workload_inputs, first-use
   order), then the outputs. Returns the count. */
static int parse(const char *text, te_tensor **args, int *nout) {
  int n, nin;
  te_tensor **o, **in;
  TT_OK(te_parse(tt_ctx, text, &n, &o));
  TT_OK(te_workload_inputs(n, o, &nin, &in, NULL, NULL));
  for (int i = 0; i < nin; i++)
    args[i] = in[i];
  for (int i = 0; i < n; i++)
    args[nin + i] = o[i];
  *nout = n;
  return nin + n;
}

Test(parse_kernels, symbolic_matmul) {
  te_tensor *o[8];
  int nout;
  cr_assert_eq(
      parse("C[i, j] = sum(A[i, k]*B[k, j], k) where B: f32[K, N], A: f32[M, K], k: [0, K)", o,
            &nout),
      3);
  te_tensor *A = o[0], *B = o[1], *C = o[2];
  cr_assert_str_eq(te_tensor_name(A), "A"); /* first-use order */
  te_schedule *s = tt_schedule1(C);
  te_module *m = tt_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL);
  int64_t M = 7, N = 5, K = 9;
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *c = TT_ALLOC(TE_F32, M, N),
         *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_ref_matmul(a, b, ref, M, N, K);
  tt_call(m, "mm", 3, TT_BUFS(a, b, c), 0, NULL);
  tt_assert_close(c, ref, K);
}

Test(parse_kernels, masked_sum_and_int_ops) {
  te_tensor *o[8];
  int nout;
  cr_assert_eq(parse("C[i] = sum(A[i, k], k where k <= i);\n"
                     "D[i] = select(i % 2 == 0, I[i] // 3, I[i] % -4) + i32(C[i] > 0.0)\n"
                     "where A: f64[6, 6], I: i32[6], k: [0, 6)\n"
                     "outputs C, D",
                     o, &nout),
               4);
  te_schedule *s = te_schedule_new(tt_ctx, 2, TT_TENSORS(o[2], o[3]));
  cr_assert_not_null(s, "%s", te_last_error(tt_ctx));
  te_module *m = tt_build(s, "k", 4, o, 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F64, 6, 6), *in = TT_ALLOC(TE_I32, 6), *c = TT_ALLOC(TE_F64, 6),
         *d = TT_ALLOC(TE_I32, 6), *rc = TT_ALLOC(TE_F64, 6), *rd = TT_ALLOC(TE_I32, 6);
  tt_fill(a, 3);
  tt_fill(in, 4);
  for (int64_t i = 0; i < 6; i++) {
    double acc = 0;
    for (int64_t k = 0; k <= i; k++)
      acc += tt_get(a, i * 6 + k);
    tt_set(rc, i, acc);
    int64_t x = tt_geti(in, i);
    tt_seti(rd, i, (i % 2 == 0 ? tt_floordiv(x, 3) : tt_floormod(x, -4)) + (acc > 0));
  }
  tt_call(m, "k", 4, TT_BUFS(a, in, c, d), 0, NULL);
  tt_assert_close(c, rc, 6);
  tt_assert_close(d, rd, 1);
}

Test(parse_kernels, argmax_reducer) {
  te_tensor *o[8];
  int nout;
  cr_assert_eq(parse("M[i] = argmax((k, A[i, k]), k)\n"
                     "where A: f32[5, 11], k: [0, 11), argmax: reducer (li: i64, lv: f32) "
                     "(ri: i64, rv: f32) = (select(rv > lv, ri, li), max(lv, rv)) "
                     "identity (-1, f32(-inf))",
                     o, &nout),
               3);
  te_schedule *s = te_schedule_new(tt_ctx, 2, TT_TENSORS(o[1], o[2]));
  cr_assert_not_null(s, "%s", te_last_error(tt_ctx));
  te_module *m = tt_build(s, "argmax", 3, o, 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, 5, 11), *idx = TT_ALLOC(TE_I64, 5), *val = TT_ALLOC(TE_F32, 5),
         *ridx = TT_ALLOC(TE_I64, 5), *rval = TT_ALLOC(TE_F32, 5);
  tt_fill(a, 5);
  for (int64_t i = 0; i < 5; i++) {
    int64_t best = -1;
    double bv = -INFINITY;
    for (int64_t k = 0; k < 11; k++)
      if (tt_get(a, i * 11 + k) > bv)
        bv = tt_get(a, i * 11 + k), best = k;
    tt_seti(ridx, i, best);
    tt_set(rval, i, bv);
  }
  tt_call(m, "argmax", 3, TT_BUFS(a, idx, val), 0, NULL);
  tt_assert_close(idx, ridx, 1);
  tt_assert_close(val, rval, 1);
}

/* conv2d with padding: the text of te_op_conv2d_nchw's computation, parsed into the same
   context under other names, computes what the operator computes. */
Test(parse_kernels, conv2d_text_matches_operator) {
  te_expr *ds[4] = {te_int(tt_ctx, 1), te_int(tt_ctx, 3), te_int(tt_ctx, 9), te_int(tt_ctx, 8)};
  te_expr *ks[4] = {te_int(tt_ctx, 4), te_int(tt_ctx, 3), te_int(tt_ctx, 3), te_int(tt_ctx, 3)};
  te_tensor *data = te_placeholder(tt_ctx, "data", TE_F32, 4, ds);
  te_tensor *kern = te_placeholder(tt_ctx, "kernel", TE_F32, 4, ks);
  te_conv2d_params p = {.stride_h = 2, .pad_h = 1, .pad_w = 1};
  te_tensor *conv = TT_NN(te_op_conv2d_nchw(tt_ctx, data, kern, &p, "conv"));
  char *text = TT_NN(te_workload_text(1, &conv));
  te_ctx *c2 = te_ctx_new();
  int n, nin;
  te_tensor **out2, **in2;
  cr_assert_eq(te_parse(c2, text, &n, &out2), TE_OK, "%s\n%s", text, te_last_error(c2));
  cr_assert_eq(te_workload_inputs(n, out2, &nin, &in2, NULL, NULL), TE_OK);
  cr_assert_eq(nin, 2);
  te_tensor *o[3] = {in2[0], in2[1], out2[0]};
  te_schedule *s1 = tt_schedule1(conv);
  te_module *m1 = tt_build(s1, "conv_op", 3, TT_TENSORS(data, kern, conv), 0, NULL);
  te_schedule *s2 = te_schedule_new(c2, 1, &o[2]);
  te_target *t2 = te_target_parse(c2, "llvm");
  te_module *m2;
  cr_assert_eq(te_build(s2, "conv_text", 3, o, 0, NULL, t2, &m2), TE_OK, "%s", te_last_error(c2));
  tt_buf *x = TT_ALLOC(TE_F32, 1, 3, 9, 8), *w = TT_ALLOC(TE_F32, 4, 3, 3, 3);
  tt_buf *y1 = TT_ALLOC(TE_F32, 1, 4, 5, 8), *y2 = TT_ALLOC(TE_F32, 1, 4, 5, 8);
  tt_fill(x, 7);
  tt_fill(w, 8);
  tt_call(m1, "conv_op", 3, TT_BUFS(x, w, y1), 0, NULL);
  DLTensor *dl[3];
  tt_dl(3, TT_BUFS(x, w, y2), dl);
  cr_assert_eq(te_module_call(m2, "conv_text", 3, dl, 0, NULL), TE_OK, "%s", te_last_error(c2));
  tt_assert_close(y2, y1, 27);
  /* and both compute the convolution: stride 2 x 1, padding 1, in plain C */
  tt_buf *ref = TT_ALLOC(TE_F32, 1, 4, 5, 8);
  for (int oc = 0; oc < 4; oc++)
    for (int y = 0; y < 5; y++)
      for (int xo = 0; xo < 8; xo++) {
        double acc = 0;
        for (int c = 0; c < 3; c++)
          for (int ry = 0; ry < 3; ry++)
            for (int rx = 0; rx < 3; rx++) {
              int iy = 2 * y + ry - 1, ix = xo + rx - 1;
              if (iy >= 0 && iy < 9 && ix >= 0 && ix < 8)
                acc +=
                    tt_get(x, (c * 9 + iy) * 8 + ix) * tt_get(w, ((oc * 3 + c) * 3 + ry) * 3 + rx);
            }
        tt_set(ref, (oc * 5 + y) * 8 + xo, acc);
      }
  tt_assert_close(y1, ref, 27);
  te_ctx_free(c2);
  te_free(text);
}
