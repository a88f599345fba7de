/* test_parse_roundtrip.c — te_workload_text and te_parse together, on computations built with
 * the C API and with ops.h.
 *
 * For each computation: its canonical text parses (in a fresh context) to a computation whose
 * text is byte-identical, and which lowers to the same loop nest as the original under the
 * default schedule and under a hand schedule applied to the original and replayed on the copy
 * through the schedule trace.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule/sch.h"

static te_ctx *ctx, *ctx2;

static void setup(void) {
  ctx = te_ctx_new();
  ctx2 = te_ctx_new();
}
static void teardown(void) {
  te_ctx_free(ctx);
  te_ctx_free(ctx2);
}

TestSuite(parse_roundtrip, .init = setup, .fini = teardown);

#define E(...) TE_EXPRS(__VA_ARGS__)
#define I(v) te_int(ctx, (v))

/* ---------------------------------------------------------------- helpers */

/* te_lower_text over the computation's inputs then outputs, with its scalar parameters. */
static char *lowered(te_schedule *s, int nout, te_tensor *const outs[]) {
  te_tensor **ins, *args[32];
  te_expr **params;
  int nin, np;
  cr_assert_eq(te_workload_inputs(nout, outs, &nin, &ins, &np, &params), TE_OK, "%s",
               te_last_error(s->ctx));
  cr_assert_leq(nin + nout, 32);
  for (int i = 0; i < nin; i++)
    args[i] = ins[i];
  for (int i = 0; i < nout; i++)
    args[nin + i] = outs[i];
  char *t = te_lower_text(s, nin + nout, args, np, params);
  cr_assert_not_null(t, "lowering failed: %s", te_last_error(s->ctx));
  return t;
}

typedef void (*sched_fn)(te_schedule *, te_tensor *const outs[]);

/* The round trip of outs (built in ctx): text, parse, text again, and (lower) the lowered IR
   (which names tensors and variables as created: only comparable when the text renamed
   nothing). */
static void round_trip_(int nout, te_tensor *const outs[], sched_fn sched, bool lower) {
  cr_assert_eq(te_last_status(ctx), TE_OK, "building failed: %s", te_last_error(ctx));
  char *t1 = te_workload_text(nout, outs);
  cr_assert_not_null(t1, "te_workload_text: %s", te_last_error(ctx));
  int n2;
  te_tensor **o2;
  te_status st = te_parse(ctx2, t1, &n2, &o2);
  cr_assert_eq(st, TE_OK, "te_parse of\n%s\nfailed: %s", t1, te_last_error(ctx2));
  cr_assert_eq(n2, nout, "outputs: %d, want %d\n%s", n2, nout, t1);
  for (int i = 0; i < nout; i++)
    cr_assert_str_eq(te_tensor_name(o2[i]), te_tensor_name(outs[i]));
  char *t2 = te_workload_text(n2, o2);
  cr_assert_not_null(t2, "te_workload_text of the copy: %s", te_last_error(ctx2));
  cr_assert_str_eq(t2, t1, "not a fixed point:\n%s\nvs\n%s", t1, t2);
  cr_assert_eq(te_workload_hash(t1), te_workload_hash(t2));

  for (int pass = 0; lower && pass < (sched ? 2 : 1); pass++) {
    te_schedule *s1 = te_schedule_new(ctx, nout, outs);
    te_schedule *s2 = te_schedule_new(ctx2, n2, o2);
    cr_assert(s1 && s2, "schedules: %s %s", te_last_error(ctx), te_last_error(ctx2));
    if (pass == 1) {
      sched(s1, outs);
      cr_assert_eq(te_last_status(ctx), TE_OK, "schedule: %s", te_last_error(ctx));
      char *trace = te_schedule_trace(s1);
      cr_assert_not_null(trace);
      cr_assert_eq(te_schedule_replay(s2, trace), TE_OK, "replay of\n%s\nfailed: %s", trace,
                   te_last_error(ctx2));
      te_free(trace);
    }
    char *l1 = lowered(s1, nout, outs), *l2 = lowered(s2, n2, o2);
    cr_assert_str_eq(l2, l1,
                     "lowered IR differs (%s schedule) for\n%s\n--- original:\n%s\n--- parsed:\n%s",
                     pass ? "hand" : "default", t1, l1, l2);
    te_free(l1);
    te_free(l2);
  }
  te_free(t1);
  te_free(t2);
}

static void round_trip(int nout, te_tensor *const outs[], sched_fn sched) {
  round_trip_(nout, outs, sched, true);
}

static te_tensor *ph(const char *name, te_dtype t, int n, const int64_t *shape) {
  te_expr *s[TE_MAX_DIMS];
  for (int i = 0; i < n; i++)
    s[i] = I(shape[i]);
  return te_placeholder(ctx, name, t, n, s);
}
#define PH(name, t, ...)                                                                           \
  ph((name), (t), (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),                       \
     (int64_t[]){__VA_ARGS__})

static te_stage *stage(te_schedule *s, te_tensor *t) {
  te_stage *st = te_stage_of(s, t);
  cr_assert_not_null(st, "stage of %s: %s", te_tensor_name(t), te_last_error(s->ctx));
  return st;
}

/* ---------------------------------------------------------------- C API */

static void sched_tile(te_schedule *s, te_tensor *const outs[]) {
  te_stage *st = stage(s, outs[0]);
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  te_tile(st, te_axis(st, 0), te_axis(st, 1), 8, 16, &io, &jo, &ii, &ji);
  te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki);
  te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji});
  te_vectorize(st, ji);
  te_parallel(st, io);
}

Test(parse_roundtrip, matmul_symbolic) {
  te_expr *M = te_var(ctx, "M"), *N = te_var(ctx, "N"), *K = te_var(ctx, "K");
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, E(M, K));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, E(K, N));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", I(0), K);
  te_tensor *C =
      te_compute(ctx, "C", 2, E(M, N), E(i, j), TE_SUM(te_mul(TE_AT(A, i, k), TE_AT(B, k, j)), k));
  round_trip(1, &C, sched_tile);
}

Test(parse_roundtrip, text_of_matmul_is_canonical) {
  te_expr *M = te_var(ctx, "M"), *N = te_var(ctx, "N"), *K = te_var(ctx, "K");
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 2, E(M, K));
  te_tensor *B = te_placeholder(ctx, "B", TE_F32, 2, E(K, N));
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", I(0), K);
  te_tensor *C =
      te_compute(ctx, "C", 2, E(M, N), E(i, j), TE_SUM(te_mul(TE_AT(A, i, k), TE_AT(B, k, j)), k));
  char *t = te_workload_text(1, &C);
  cr_assert_str_eq(t, "C[i, j] = sum(A[i, k]*B[k, j], k)\n"
                      "where A: f32[M, K], B: f32[K, N], C: [M, N], k: [0, K)\n");
  /* the same computation written by hand has the same key */
  int n;
  te_tensor **o;
  cr_assert_eq(te_parse(ctx2,
                        "C[i,j] = sum(A[i,k] * B[k,j], k) where A: f32[M,K], B: f32[K,N], "
                        "k: [0, K)",
                        &n, &o),
               TE_OK, "%s", te_last_error(ctx2));
  char *t2 = te_workload_text(n, o);
  cr_assert_str_eq(t2, t);
  cr_assert_eq(te_workload_hash(t2), te_workload_hash(t));
  te_free(t);
  te_free(t2);
}

static void sched_inline_first(te_schedule *s, te_tensor *const outs[]) {
  (void)outs;
  te_compute_inline(s->stages[0]->op->kind == SCH_OP_COMPUTE ? s->stages[0] : s->stages[1]);
}

Test(parse_roundtrip, literals_casts_select_and_calls) {
  te_tensor *A = PH("A", TE_F32, 16), *Bi = PH("Bi", TE_I32, 16), *U = PH("U", TE_U8, 16);
  te_expr *i = te_var(ctx, "i");
  te_expr *a = TE_AT(A, i), *b = TE_AT(Bi, i);
  te_expr *cond = te_and(te_lt(i, I(3)), te_not(te_gt(a, te_float(ctx, TE_F32, 0.1))));
  te_expr *body = te_select(cond, te_mul(te_cast(TE_F64, a), te_float(ctx, TE_F64, -1.5)),
                            te_float(ctx, TE_F64, 1.0 / 0.0));
  body = te_add(body, te_cast(TE_F64, te_add(te_floordiv(b, te_const(ctx, TE_I32, -7)),
                                             te_floormod(b, te_const(ctx, TE_I32, 3)))));
  body = te_add(body, te_cast(TE_F64, te_call(ctx, "exp", 1, E(te_neg(a)))));
  body = te_add(body, te_cast(TE_F64, TE_AT(U, te_floormod(te_add(i, I(1)), I(16)))));
  body = te_sub(body, te_call(ctx, "pow", 2, E(te_cast(TE_F64, a), te_float(ctx, TE_F64, 1e-30))));
  te_tensor *C = te_compute(ctx, "C", 1, E(I(16)), E(i), body);
  te_tensor *D = te_compute(
      ctx, "D", 1, E(I(16)), E(i),
      te_max(te_min(TE_AT(C, i), te_float(ctx, TE_F64, 2.0)), te_float(ctx, TE_F64, -2.0)));
  round_trip(1, &D, sched_inline_first);
}

Test(parse_roundtrip, argmax_custom_reducer_multi_output) {
  te_tensor *A = PH("A", TE_F32, 8, 32);
  te_expr *li = te_param(ctx, "li", TE_I64), *lv = te_param(ctx, "lv", TE_F32);
  te_expr *ri = te_param(ctx, "ri", TE_I64), *rv = te_param(ctx, "rv", TE_F32);
  te_reducer *r = te_reducer_new(ctx, 2, E(li, lv), E(ri, rv),
                                 E(te_select(te_gt(rv, lv), ri, li), te_max(lv, rv)),
                                 E(te_int(ctx, -1), te_float(ctx, TE_F32, -1.0 / 0.0)));
  te_expr *i = te_var(ctx, "i"), *k = te_reduce_axis(ctx, "k", I(0), I(32));
  te_expr *out[2];
  cr_assert_eq(te_reduce(r, 2, E(k, TE_AT(A, i, k)), 1, &k, NULL, out), TE_OK);
  te_tensor *M[2];
  cr_assert_eq(te_compute_multi(ctx, "argmax", 1, E(I(8)), &i, 2, out, M), TE_OK, "%s",
               te_last_error(ctx));
  round_trip(2, M, NULL);
}

Test(parse_roundtrip, multi_output_then_consumer_and_param) {
  te_tensor *A = PH("A", TE_F32, 10);
  te_expr *alpha = te_param(ctx, "alpha", TE_F32);
  te_expr *i = te_var(ctx, "i");
  te_tensor *M[2];
  cr_assert_eq(te_compute_multi(
                   ctx, "M", 1, E(I(10)), &i, 2,
                   E(te_add(TE_AT(A, i), te_float(ctx, TE_F32, 1)), te_mul(TE_AT(A, i), alpha)), M),
               TE_OK);
  te_tensor *D =
      te_compute(ctx, "D", 1, E(I(10)), &i, te_mul(te_sub(TE_AT(M[0], i), TE_AT(M[1], i)), alpha));
  round_trip(1, &D, NULL);
}

Test(parse_roundtrip, name_clashes_are_renamed_stably) {
  te_expr *n = te_var(ctx, "n"), *n2 = te_var(ctx, "n");
  te_tensor *A = te_placeholder(ctx, "A", TE_F32, 1, E(n));
  te_tensor *A2 = te_placeholder(ctx, "A", TE_F32, 1, E(n2));
  te_tensor *W = te_placeholder(ctx, "where", TE_F32, 1, E(n));
  te_expr *i = te_var(ctx, "n"); /* an index variable called like a size */
  te_expr *k = te_reduce_axis(ctx, "k", I(0), n2), *k2 = te_reduce_axis(ctx, "k", I(0), n);
  te_tensor *S = te_compute(ctx, "A_1", 1, E(n), E(i), te_add(TE_AT(A, i), TE_AT(W, i)));
  te_tensor *T =
      te_compute(ctx, "T", 1, E(n), E(i), TE_SUM(te_mul(TE_AT(S, k2), TE_AT(A2, k)), k, k2));
  round_trip_(1, &T, NULL, false);
  char *t = te_workload_text(1, &T);
  cr_assert_str_eq(t, "A_1[n_2] = A[n_2] + where_1[n_2];\n"
                      "T[n_2] = sum(A_1[k_1]*A_2[k], k, k_1)\n"
                      "where A: f32[n], where_1: f32[n], A_2: f32[n_1], A_1: [n], T: [n], "
                      "k: [0, n_1), k_1: [0, n)\n");
  te_free(t);
}

Test(parse_roundtrip, names_that_are_words_of_the_language) {
  te_expr *size = te_var(ctx, "size");
  te_tensor *outputs = te_placeholder(ctx, "outputs", TE_F32, 2, E(size, I(4)));
  te_tensor *f32 = te_placeholder(ctx, "f32", TE_F32, 1, E(I(4)));
  te_expr *inf = te_var(ctx, "inf"), *exp = te_var(ctx, "exp");
  te_expr *identity = te_param(ctx, "identity", TE_F32);
  te_expr *axes = te_reduce_axis(ctx, "axes", I(0), I(4));
  te_tensor *t = te_compute(
      ctx, "i64", 1, E(size), E(inf),
      TE_SUM(te_mul(te_mul(TE_AT(outputs, inf, axes), TE_AT(f32, axes)), identity), axes));
  te_tensor *u =
      te_compute(ctx, "reducer", 1, E(size), E(exp), te_max(TE_AT(t, exp), te_cast(TE_F32, exp)));
  round_trip_(1, &u, NULL, false);
  char *text = te_workload_text(1, &u);
  cr_assert_str_eq(text, "i64[inf_1] = sum(outputs[inf_1, axes]*f32[axes]*identity, axes);\n"
                         "reducer[exp] = max(i64[exp], f32(exp))\n"
                         "where outputs: f32[size, 4], f32: f32[4], identity: f32, i64: [size], "
                         "reducer: [size], axes: [0, 4)\n");
  te_free(text);
}

Test(parse_roundtrip, intermediate_output_and_shared_axis_declaration) {
  te_tensor *A = PH("A", TE_F64, 6, 5);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *r = te_reduce_axis(ctx, "r", I(0), I(5));
  te_tensor *P =
      te_compute(ctx, "P", 2, E(I(6), I(5)), E(i, j), te_mul(TE_AT(A, i, j), TE_AT(A, i, j)));
  te_tensor *S = te_compute(ctx, "S", 1, E(I(6)), E(i), TE_SUM(TE_AT(P, i, r), r));
  te_tensor *X = te_compute(ctx, "X", 1, E(I(6)), E(i), te_max_r(TE_AT(A, i, r), 1, &r));
  round_trip(3, (te_tensor *const[]){X, P, S}, NULL);
  char *t = te_workload_text(3, (te_tensor *const[]){X, P, S});
  cr_assert_str_eq(t,
                   "X[i] = max(A[i, r], r);\nP[i, j] = A[i, j]*A[i, j];\nS[i] = sum(P[i, r], r)\n"
                   "where A: f64[6, 5], X: [6], P: [6, 5], S: [6], r: [0, 5)\n"
                   "outputs X, P, S\n");
  te_free(t);
}

/* ---------------------------------------------------------------- ops.h */

static void sched_conv(te_schedule *s, te_tensor *const outs[]) {
  te_tensor *pad = te_op_stage(outs[0], "pad");
  te_stage *c = stage(s, outs[0]);
  te_iter *yo, *yi;
  te_split(c, te_axis(c, 2), 4, &yo, &yi);
  te_compute_at(stage(s, pad), c, yo);
  te_vectorize(c, te_axis(c, 3));
}

Test(parse_roundtrip, op_conv2d_nchw_pad) {
  te_tensor *data = PH("data", TE_F32, 1, 4, 14, 14), *w = PH("weight", TE_F32, 8, 4, 3, 3);
  te_conv2d_params p = {.stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
  te_tensor *out = te_op_conv2d_nchw(ctx, data, w, &p, "conv");
  round_trip(1, &out, sched_conv);
}

Test(parse_roundtrip, ops_other_convolutions_and_pools) {
  te_tensor *d = PH("d", TE_F32, 1, 9, 9, 3), *k = PH("k", TE_F32, 3, 3, 3, 5);
  te_conv2d_params p = {.pad_h = 1, .pad_w = 2, .dilation_h = 2, .dilation_w = 1};
  te_tensor *nhwc = te_op_conv2d_nhwc(ctx, d, k, &p, NULL);
  round_trip(1, &nhwc, NULL);
  te_tensor *dw_in = PH("x", TE_F32, 1, 4, 10, 10), *dw_k = PH("w", TE_F32, 4, 1, 3, 3);
  te_tensor *dw = te_op_depthwise_conv2d_nchw(ctx, dw_in, dw_k, &p, NULL);
  round_trip(1, &dw, NULL);
  te_pool2d_params pp = {
      .kernel_h = 3, .kernel_w = 3, .stride_h = 2, .stride_w = 2, .pad_h = 1, .pad_w = 1};
  te_tensor *mx = te_op_max_pool2d(ctx, dw_in, &pp, NULL);
  round_trip(1, &mx, NULL);
  te_tensor *avg = te_op_avg_pool2d(ctx, dw_in, &pp, NULL);
  round_trip(1, &avg, NULL);
  te_tensor *xi = PH("xi", TE_I8, 1, 2, 6, 6);
  te_tensor *mxi = te_op_max_pool2d(ctx, xi, &pp, "pool_i8");
  round_trip(1, &mxi, NULL);
}

static void sched_softmax(te_schedule *s, te_tensor *const outs[]) {
  te_stage *o = stage(s, outs[0]);
  te_compute_inline(stage(s, te_op_stage(outs[0], "exp")));
  te_compute_at(stage(s, te_op_stage(outs[0], "sum")), o, te_axis(o, 0));
  te_compute_at(stage(s, te_op_stage(outs[0], "max")), o, te_axis(o, 0));
}

Test(parse_roundtrip, ops_softmax_layer_norm_matmul) {
  te_tensor *x = PH("x", TE_F32, 4, 33);
  te_tensor *sm = te_op_softmax(ctx, x, "sm");
  round_trip(1, &sm, sched_softmax);
  te_tensor *g = PH("gamma", TE_F32, 33), *b = PH("beta", TE_F32, 33);
  te_tensor *ln = te_op_layer_norm(ctx, x, g, b, 1e-5, NULL);
  round_trip(1, &ln, NULL);
  te_tensor *A = PH("A", TE_F64, 20, 12), *B = PH("B", TE_F64, 16, 12);
  te_tensor *mm = te_op_matmul(ctx, A, B, 0, 1, NULL);
  round_trip(1, &mm, NULL);
  te_tensor *bA = PH("bA", TE_F32, 2, 12, 20), *bB = PH("bB", TE_F32, 2, 12, 16);
  te_tensor *bmm = te_op_batch_matmul(ctx, bA, bB, 1, 0, NULL);
  round_trip(1, &bmm, NULL);
}

Test(parse_roundtrip, ops_elementwise_chain) {
  te_expr *n = te_var(ctx, "n");
  te_tensor *x = te_placeholder(ctx, "x", TE_F32, 3, E(I(2), n, I(7)));
  te_tensor *y = PH("y", TE_F32, 1, 7), *bias = te_placeholder(ctx, "bias", TE_F32, 1, E(n));
  te_tensor *t = te_op_add(ctx, x, y, NULL);
  t = te_op_bias_add(ctx, t, bias, 1, NULL);
  t = te_op_relu(ctx, t, NULL);
  t = te_op_unary(ctx, t, "neg", NULL);
  t = te_op_unary(ctx, t, "sigmoid", NULL);
  t = te_op_maximum(ctx, t, y, NULL);
  t = te_op_div(ctx, t, x, NULL);
  t = te_op_cast(ctx, t, TE_I16, NULL);
  round_trip(1, &t, NULL);
}

/* f16 and bf16 tensors, an f16 immediate (printed 0.1f16: the shortest that reads back), a bf16
   infinity, and an f32-accumulated sum of their products. */
Test(parse_roundtrip, f16_bf16_literals_and_f32_sum) {
  te_tensor *A = PH("A", TE_F16, 16), *V = PH("V", TE_BF16, 16);
  te_expr *i = te_var(ctx, "i");
  te_expr *k = te_reduce_axis(ctx, "k", I(0), I(16));
  te_tensor *P = te_compute(
      ctx, "P", 1, E(I(16)), E(i),
      te_max(te_mul(TE_AT(A, i), te_float(ctx, TE_F16, 0.1)), te_cast(TE_F16, TE_AT(V, i))));
  te_tensor *S =
      te_compute(ctx, "S", 1, E(I(16)), E(i),
                 te_sum(te_mul(te_cast(TE_F32, TE_AT(P, k)), te_cast(TE_F32, TE_AT(V, k))), 1, &k));
  te_tensor *C =
      te_compute(ctx, "C", 1, E(I(16)), E(i),
                 te_min(te_cast(TE_BF16, TE_AT(S, i)), te_float(ctx, TE_BF16, 1.0 / 0.0)));
  round_trip(1, &C, sched_inline_first);
}
