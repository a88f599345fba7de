/* test_extern.c — extern stages (te_extern) inside te pipelines, against plain C on random
 * non-zero inputs with outputs poisoned, at shapes no split divides:
 *   P = 2 A + 1 (te) -> E = P x B (extern: OpenBLAS's cblas_sgemm where the build found
 *   OpenBLAS, and a hand-written C matmul always) -> Y = relu(E) * 0.5 + c[j] (te),
 *   under the default schedule and schedules that split, vectorize and parallelize the te
 *   stages, compute P and E at Y's row-block loop (E then called once per block, whole), and
 *   run that block loop in parallel (the extern called concurrently), and cache B for the
 *   extern (te_cache_read with the extern as reader); every schedule's trace replays;
 *   an extern that is the kernel's output, with symbolic sizes, its buffer checked;
 *   an extern reading a strided input (te_placeholder_strided) gets the caller's strides;
 *   a function found by dlsym (symbol only; this executable exports its symbols);
 *   a non-zero return fails the call with TE_ERR_RUNTIME naming the stage and the value;
 *   the workload text of an extern (extern(SYMBOL, ...)) round-trips, builds and runs.
 * The hand-written functions check every field of the DLTensors they are given and fail with
 * a distinct code when one is wrong.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdatomic.h>
#include <string.h>

#ifdef TE_TEST_HAVE_CBLAS
#include <cblas.h>
#endif

TestSuite(extern_stage, .init = tt_setup, .fini = tt_teardown);

static te_expr *CI(int64_t v) { return te_int(tt_ctx, v); }
static te_expr *F(double v) { return te_float(tt_ctx, TE_F32, v); }

/* 0 when t is a compact row-major f32 CPU tensor of rank nd (extents checked by the caller);
   else a code saying what is wrong. */
static int bad_compact_f32(const DLTensor *t, int nd) {
  if (!t || !t->data)
    return 101;
  if (t->ndim != nd || !t->shape || !t->strides)
    return 102;
  if (t->dtype.code != kDLFloat || t->dtype.bits != 32 || t->dtype.lanes != 1)
    return 103;
  if (t->device.device_type != kDLCPU || t->device.device_id != 0 || t->byte_offset != 0)
    return 104;
  int64_t s = 1;
  for (int d = nd - 1; d >= 0; d--) {
    if (t->strides[d] != s)
      return 105;
    s *= t->shape[d];
  }
  return 0;
}

static atomic_int matmul_calls;

/* out[m, n] = sum_k a[m, k] * b[k, n], by hand. */
static int hand_matmul(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  atomic_fetch_add(&matmul_calls, 1);
  if (nin != 2)
    return 100;
  int bad = bad_compact_f32(in[0], 2);
  bad = bad ? bad : bad_compact_f32(in[1], 2);
  bad = bad ? bad : bad_compact_f32(out, 2);
  if (bad)
    return bad;
  int64_t M = in[0]->shape[0], K = in[0]->shape[1], N = in[1]->shape[1];
  if (in[1]->shape[0] != K || out->shape[0] != M || out->shape[1] != N)
    return 106;
  const float *a = in[0]->data, *b = in[1]->data;
  float *c = out->data;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (double)a[m * K + k] * b[k * N + n];
      c[m * N + n] = (float)acc;
    }
  return 0;
}

#ifdef TE_TEST_HAVE_CBLAS
static int blas_matmul(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  atomic_fetch_add(&matmul_calls, 1);
  if (nin != 2 || bad_compact_f32(in[0], 2) || bad_compact_f32(in[1], 2) || bad_compact_f32(out, 2))
    return 100;
  int M = (int)in[0]->shape[0], K = (int)in[0]->shape[1], N = (int)in[1]->shape[1];
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, in[0]->data,
              (int)in[0]->strides[0], in[1]->data, (int)in[1]->strides[0], 0.0f, out->data,
              (int)out->strides[0]);
  return 0;
}
#endif

enum { M = 37, K = 19, N = 23 };

static const char *const pipeline_schedules[] = {
    "default",
    "Y: i split by 8 parallel, j split by 8 vectorized; P: k split by 4 vectorized",
    "P and E at Y's i.o (E whole, once per block of rows)",
    "P and E at Y's i.o, i.o parallel (E called concurrently)",
    "B cached for E (te_cache_read with the extern as reader), the cache at root",
};

static te_tensor *pipeline_B; /* B of the pipeline, for kind 4 */

static void schedule_pipeline(te_schedule *s, te_tensor *P, te_tensor *E, te_tensor *Y, int kind) {
  te_stage *sy = tt_stage(s, Y), *sp = tt_stage(s, P);
  te_iter *io, *ii, *jo, *ji, *ko, *ki;
  if (kind == 0)
    return;
  if (kind == 4) {
    te_tensor *cache = NULL;
    TT_OK(te_cache_read(s, pipeline_B, TE_SCOPE_GLOBAL, 1, (te_stage *[]){tt_stage(s, E)}, &cache));
    return;
  }
  TT_OK(te_split(sy, te_axis(sy, 0), 8, &io, &ii));
  if (kind == 1) {
    TT_OK(te_parallel(sy, io));
    TT_OK(te_split(sy, te_axis(sy, 1), 8, &jo, &ji));
    TT_OK(te_vectorize(sy, ji));
    TT_OK(te_split(sp, te_axis(sp, 1), 4, &ko, &ki));
    TT_OK(te_vectorize(sp, ki));
    return;
  }
  TT_OK(te_compute_at(tt_stage(s, E), sy, io));
  TT_OK(te_compute_at(sp, sy, io));
  if (kind == 3)
    TT_OK(te_parallel(sy, io));
}

/* P = 2 A + 1; E = fn(P, B); Y = max(E, 0) * 0.5 + c[j]. */
static void check_pipeline(te_extern_fn fn, const char *what) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *c = tt_placeholder("c", TE_F32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(CI(M), CI(K)), TE_EXPRS(i, j),
                                  te_add(te_mul(tt_at2(A, i, j), F(2)), F(1))));
  te_tensor *E = TT_NN(
      te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(CI(M), CI(N)), 2, TT_TENSORS(P, B), fn, NULL));
  te_tensor *Y =
      TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(CI(M), CI(N)), TE_EXPRS(i, j),
                       te_add(te_mul(te_max(tt_at2(E, i, j), F(0)), F(0.5)), tt_at1(c, j))));
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N), *cc = TT_ALLOC(TE_F32, N);
  tt_buf *p = TT_ALLOC(TE_F32, M, K), *e = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_buf *got = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 1);
  tt_fill(b, 2);
  tt_fill(cc, 3);
  for (int64_t q = 0; q < M * K; q++)
    tt_set(p, q, tt_get(a, q) * 2 + 1);
  tt_ref_matmul(p, b, e, M, N, K);
  for (int64_t q = 0; q < M * N; q++)
    tt_set(ref, q, fmax(tt_get(e, q), 0) * 0.5 + tt_get(cc, q % N));
  pipeline_B = B;
  for (int kind = 0; kind < 5; kind++) {
    te_schedule *s = tt_schedule1(Y);
    schedule_pipeline(s, P, E, Y, kind);
    /* the trace (compute_at of the extern included) replays to itself */
    char *trace = TT_NN(te_schedule_trace(s));
    te_schedule *r = tt_schedule1(Y);
    TT_OK(te_schedule_replay(r, trace));
    char *again = TT_NN(te_schedule_trace(r));
    cr_assert_str_eq(again, trace);
    te_free(trace);
    te_free(again);
    if (kind == 4) {
      char *ir = TT_NN(te_lower_text(s, 4, TT_TENSORS(A, B, c, Y), 0, NULL));
      cr_assert(strstr(ir, "call_extern E = <fn>(P[37, 19; 19, 1], B_global[19, 23; 23, 1])"), "%s",
                ir);
      te_free(ir);
    }
    te_module *mod = tt_build(s, "pipe", 4, TT_TENSORS(A, B, c, Y), 0, NULL);
    tt_poison(got);
    atomic_store(&matmul_calls, 0);
    tt_call(mod, "pipe", 4, TT_BUFS(a, b, cc, got), 0, NULL);
    tt_note("%s, schedule: %s", what, pipeline_schedules[kind]);
    tt_assert_close(got, ref, K);
    int expect = kind == 2 || kind == 3 ? (M + 7) / 8 : 1;
    cr_assert_eq(atomic_load(&matmul_calls), expect, "%s: %s: the extern ran %d times, not %d",
                 what, pipeline_schedules[kind], atomic_load(&matmul_calls), expect);
  }
}

Test(extern_stage, pipeline_hand_matmul) { check_pipeline(hand_matmul, "hand-written matmul"); }

Test(extern_stage, pipeline_openblas_sgemm) {
#ifdef TE_TEST_HAVE_CBLAS
  check_pipeline(blas_matmul, "OpenBLAS cblas_sgemm");
#else
  tt_skip("openblas", "this build found no OpenBLAS (cblas.h, libopenblas)");
#endif
}

/* The lowered IR calls the extern between the producer's and the consumer's loops. */
Test(extern_stage, lowered_ir) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(CI(M), CI(K)), TE_EXPRS(i, j),
                                  te_add(tt_at2(A, i, j), F(1))));
  te_tensor *E = TT_NN(te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(CI(M), CI(N)), 2,
                                 TT_TENSORS(P, B), hand_matmul, "my_sgemm"));
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(CI(M), CI(N)), TE_EXPRS(i, j),
                                  te_mul(tt_at2(E, i, j), F(3))));
  cr_assert_eq(te_extern_function(E), hand_matmul);
  cr_assert_str_eq(te_extern_symbol(E), "my_sgemm");
  cr_assert_null(te_extern_symbol(P));
  char *ir = TT_NN(te_lower_text(tt_schedule1(Y), 3, TT_TENSORS(A, B, Y), 0, NULL));
  cr_assert(strstr(ir, "call_extern E = my_sgemm(P[37, 19; 19, 1], B[19, 23; 23, 1]) -> "
                       "E[37, 23; 23, 1]"),
            "%s", ir);
  const char *pe = strstr(ir, "produce P"), *ee = strstr(ir, "produce E"),
             *ye = strstr(ir, "produce Y");
  cr_assert(pe && ee && ye && pe < ee && ee < ye, "%s", ir);
  te_free(ir);
}

/* ---------------------------------------------------------------- the extern as output */

/* out[i, j] = in[i, j] * 10 + j, any rank-2 shape; checks compactness. */
static int scale_rows(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  if (nin != 1)
    return 100;
  int bad = bad_compact_f32(in[0], 2);
  bad = bad ? bad : bad_compact_f32(out, 2);
  if (bad)
    return bad;
  if (in[0]->shape[0] != out->shape[0] || in[0]->shape[1] != out->shape[1])
    return 106;
  const float *x = in[0]->data;
  float *y = out->data;
  for (int64_t q = 0; q < out->shape[0] * out->shape[1]; q++)
    y[q] = x[q] * 10 + (float)(q % out->shape[1]);
  return 0;
}

/* Exported (the executable is linked with its symbols exported): found by dlsym. */
int te_test_extern_scale_rows(int32_t nin, const DLTensor *const in[], DLTensor *out);
int te_test_extern_scale_rows(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  return scale_rows(nin, in, out);
}

/* X (n x 5) -> Q = X + 1 (te) -> E = scale_rows(Q), the kernel's output; n symbolic. */
static void check_output(te_extern_fn fn, const char *symbol) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *X = TT_NN(te_placeholder(tt_ctx, "X", TE_F32, 2, TE_EXPRS(n, CI(5))));
  te_tensor *Q = TT_NN(te_compute(tt_ctx, "Q", 2, TE_EXPRS(n, CI(5)), TE_EXPRS(i, j),
                                  te_add(tt_at2(X, i, j), F(1))));
  te_tensor *E =
      TT_NN(te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(n, CI(5)), 1, TT_TENSORS(Q), fn, symbol));
  te_module *mod = tt_build(tt_schedule1(E), "outk", 2, TT_TENSORS(X, E), 0, NULL);
  for (int64_t rows = 1; rows <= 9; rows += 4) {
    tt_buf *x = TT_ALLOC(TE_F32, rows, 5), *got = TT_ALLOC(TE_F32, rows, 5);
    tt_buf *ref = TT_ALLOC(TE_F32, rows, 5);
    tt_fill(x, (uint64_t)rows);
    for (int64_t q = 0; q < rows * 5; q++)
      tt_set(ref, q, (tt_get(x, q) + 1) * 10 + (double)(q % 5));
    tt_poison(got);
    tt_call(mod, "outk", 2, TT_BUFS(x, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
  /* the extern's buffer is the kernel's output: checked like any output's */
  tt_buf *x = TT_ALLOC(TE_F32, 3, 5), *wrong = TT_ALLOC(TE_F32, 3, 4);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(x, wrong), dl);
  cr_assert_eq(te_module_call(mod, "outk", 2, dl, 0, NULL), TE_ERR_SHAPE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "'E'");
}

Test(extern_stage, output_symbolic) { check_output(scale_rows, NULL); }
Test(extern_stage, output_by_dlsym) { check_output(NULL, "te_test_extern_scale_rows"); }

/* ---------------------------------------------------------------- strided input */

/* out[i, j] = in[i, j] for a rank-2 input of any strides (the caller's). */
static int copy_strided(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  if (nin != 1 || !in[0]->strides || bad_compact_f32(out, 2))
    return 100;
  if (in[0]->strides[0] != 11 || in[0]->strides[1] != 2)
    return 107;
  const float *x = in[0]->data;
  float *y = out->data;
  for (int64_t a = 0; a < out->shape[0]; a++)
    for (int64_t b = 0; b < out->shape[1]; b++)
      y[a * out->shape[1] + b] = x[a * in[0]->strides[0] + b * in[0]->strides[1]];
  return 0;
}

Test(extern_stage, strided_input) {
  te_expr *s0 = te_var(tt_ctx, "s0"), *s1 = te_var(tt_ctx, "s1");
  te_tensor *X = TT_NN(
      te_placeholder_strided(tt_ctx, "X", TE_F32, 2, TE_EXPRS(CI(4), CI(5)), TE_EXPRS(s0, s1)));
  te_tensor *E = TT_NN(te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(CI(4), CI(5)), 1, TT_TENSORS(X),
                                 copy_strided, NULL));
  te_module *mod = tt_build(tt_schedule1(E), "strk", 2, TT_TENSORS(X, E), 0, NULL);
  tt_buf *base = TT_ALLOC(TE_F32, 4, 11), *got = TT_ALLOC(TE_F32, 4, 5);
  tt_fill(base, 9);
  int64_t shape[2] = {4, 5}, strides[2] = {11, 2};
  DLTensor view = base->dl;
  view.shape = shape;
  view.strides = strides;
  view.byte_offset = sizeof(float); /* starts at column 1 */
  tt_poison(got);
  DLTensor *dl[2] = {&view, &got->dl};
  cr_assert_eq(te_module_call(mod, "strk", 2, dl, 0, NULL), TE_OK, "%s", te_last_error(tt_ctx));
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 5; b++)
      cr_assert_eq(tt_get(got, a * 5 + b), tt_get(base, a * 11 + 1 + 2 * b), "[%d, %d]", a, b);
}

/* ---------------------------------------------------------------- failure */

static int fail_seven(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  (void)nin, (void)in, (void)out;
  return 7;
}

Test(extern_stage, nonzero_return_is_the_kernels_error) {
  te_tensor *X = tt_placeholder("X", TE_F32, 1, TT_SHAPE(8));
  te_tensor *E = TT_NN(te_extern(tt_ctx, "Failing", TE_F32, 1, TE_EXPRS(CI(8)), 1, TT_TENSORS(X),
                                 fail_seven, "fail_seven"));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *Y =
      TT_NN(te_compute(tt_ctx, "Y", 1, TE_EXPRS(CI(8)), TE_EXPRS(i), te_add(tt_at1(E, i), F(1))));
  te_module *mod = tt_build(tt_schedule1(Y), "failk", 2, TT_TENSORS(X, Y), 0, NULL);
  tt_buf *x = TT_ALLOC(TE_F32, 8), *y = TT_ALLOC(TE_F32, 8);
  tt_fill(x, 4);
  DLTensor *dl[2];
  tt_dl(2, TT_BUFS(x, y), dl);
  cr_assert_eq(te_module_call(mod, "failk", 2, dl, 0, NULL), TE_ERR_RUNTIME);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_RUNTIME, "kernel 'failk'", "extern stage 'Failing'",
                "function 'fail_seven'", "(got 7)");
  /* the kernel still works on the next call once the function succeeds: nothing was leaked
     (the ASan build checks) */
}

/* ---------------------------------------------------------------- workload text */

Test(extern_stage, workload_text_round_trip) {
  const char *text = "P[i, j] = A[i, j]*2.0f + 1.0f;\n"
                     "E[i, j] = extern(te_test_extern_scale_rows, P);\n"
                     "Y[i, j] = E[i, j] + 1.0f\n"
                     "where A: f32[n, 5], E: f32[n, 5]";
  int nout;
  te_tensor **outs;
  TT_OK(te_parse(tt_ctx, text, &nout, &outs));
  cr_assert_eq(nout, 1);
  char *canon = TT_NN(te_workload_text(nout, outs));
  cr_assert(strstr(canon, "E[ax0, ax1] = extern(te_test_extern_scale_rows, P)"), "%s", canon);
  cr_assert(strstr(canon, "E: f32[n, 5]"), "%s", canon);
  int n2;
  te_tensor **outs2;
  TT_OK(te_parse(tt_ctx, canon, &n2, &outs2));
  char *again = TT_NN(te_workload_text(n2, outs2));
  cr_assert_str_eq(again, canon);
  /* built and run: the symbol is found by dlsym */
  int nin;
  te_tensor **ins;
  TT_OK(te_workload_inputs(n2, outs2, &nin, &ins, NULL, NULL));
  cr_assert_eq(nin, 1);
  te_module *mod = tt_build(tt_schedule1(outs2[0]), "wk", 2, TT_TENSORS(ins[0], outs2[0]), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, 3, 5), *got = TT_ALLOC(TE_F32, 3, 5), *ref = TT_ALLOC(TE_F32, 3, 5);
  tt_fill(a, 11);
  for (int64_t q = 0; q < 15; q++)
    tt_set(ref, q, (tt_get(a, q) * 2 + 1) * 10 + (double)(q % 5) + 1);
  tt_poison(got);
  tt_call(mod, "wk", 2, TT_BUFS(a, got), 0, NULL);
  tt_assert_close(got, ref, 1);
  te_free(canon);
  te_free(again);
  /* an extern without a symbol has no text */
  te_tensor *X = tt_placeholder("X", TE_F32, 1, TT_SHAPE(4));
  te_tensor *J = TT_NN(te_extern(tt_ctx, "J", TE_F32, 1, TE_EXPRS(CI(4)), 1, &X, fail_seven, NULL));
  cr_assert_null(te_workload_text(1, &J));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "extern stage 'J' has no symbol");
  te_clear_error(tt_ctx);
  /* misuse in the text */
  cr_assert_neq(te_parse(tt_ctx, "E[i] = extern(f, A) where A: f32[4]", &nout, &outs), TE_OK);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SHAPE, "extern stage 'E' needs its dtype and shape declared");
  te_clear_error(tt_ctx);
  cr_assert_neq(te_parse(tt_ctx, "E[i] = extern(f, A[i]) where A: f32[4], E: f32[4]", &nout, &outs),
                TE_OK);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_PARSE, "the inputs of extern are names of tensors");
}
