/* test_vulkan_vector.c — vectorized loops inside Vulkan kernels (lib/codegen/spirv_lanes.c: the
 * vector code written lane by lane), RUN on the machine's Vulkan device (lavapipe on CPU-only
 * machines) on poisoned outputs against plain C, on shapes the vector width does not divide
 * (the tails are masked vector code: a lane past the end must neither load nor store), with
 * 2, 3, 4 and 8 lanes, f32, f64 (te's f64 math functions), i32 and bool data, gathers (a
 * transposed read) and if_then_else guarding out-of-bounds neighbours.
 *
 * Without a Vulkan driver the tests are skipped (TE_REQUIRE=vulkan makes that a failure).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <criterion/criterion.h>

#include "../common/te_test.h"

TestSuite(vulkan_vector, .init = tt_setup, .fini = tt_teardown);

static void vv_call(te_module *m, const char *name, int nt, tt_buf *const bufs[], int ns,
                    const void *const sc[]) {
  DLTensor *dl[8];
  tt_dl(nt, bufs, dl);
  te_status st = te_module_call(m, name, nt, dl, ns, sc);
  if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver"))
    tt_skip("vulkan", "kernel %s: %s", name, te_last_error(tt_ctx));
  TT_OK(st);
}

/* The stage's axis 0 split as blockIdx.x x threadIdx.x (32) x a vectorized inner loop of
   `lanes`. */
static void vv_schedule(te_stage *st, te_iter *axis, int64_t lanes) {
  te_iter *o = NULL, *v = NULL, *bx = NULL, *tx = NULL;
  TT_OK(te_split(st, axis, lanes, &o, &v));
  TT_OK(te_split(st, o, 32, &bx, &tx));
  TT_OK(te_bind(st, bx, TE_BLOCK_X));
  TT_OK(te_bind(st, tx, TE_THREAD_X));
  TT_OK(te_vectorize(st, v));
}

static te_module *vv_build(te_schedule *s, const char *name, int nt, te_tensor *const ts[], int ns,
                           te_expr *const sc[]) {
  te_module *m = NULL;
  TT_OK(te_build(s, name, nt, ts, ns, sc, TT_NN(te_target_parse(tt_ctx, "vulkan")), &m));
  return m;
}

/* C[i] = select(A[i] > B[i], A[i] * B[i], exp(A[i]) - B[i]) + f32(i32(A[i] * 10) % 7), on a
   symbolic n: n = 1000, 1, 4097, 131 with 2, 3, 4 and 8 lanes. */
static void vv_elementwise(int64_t lanes) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 1, TE_EXPRS(n)));
  te_expr *a = tt_at1(A, i), *b = tt_at1(B, i);
  te_expr *sel =
      te_select(te_gt(a, b), te_mul(a, b), te_sub(te_call(tt_ctx, "exp", 1, TE_EXPRS(a)), b));
  te_expr *q =
      te_floormod(te_cast(TE_I32, te_mul(a, te_float(tt_ctx, TE_F32, 10))), te_int(tt_ctx, 7));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), te_add(sel, te_cast(TE_F32, q))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  vv_schedule(st, te_axis(st, 0), lanes);
  char name[32];
  snprintf(name, sizeof name, "vec%lld", (long long)lanes);
  te_module *m = vv_build(s, name, 3, TT_TENSORS(A, B, C), 0, NULL);
  static const int64_t sizes[] = {1000, 1, 4097, 131};
  for (int t = 0; t < 4; t++) {
    int64_t len = sizes[t];
    tt_note("lanes %lld, n = %lld", (long long)lanes, (long long)len);
    tt_buf *ta = TT_ALLOC(TE_F32, len), *tb = TT_ALLOC(TE_F32, len);
    tt_buf *got = TT_ALLOC(TE_F32, len), *ref = TT_ALLOC(TE_F32, len);
    tt_fill(ta, 50 + (uint64_t)t), tt_fill(tb, 60 + (uint64_t)t);
    for (int64_t k = 0; k < len; k++) {
      float x = (float)tt_get(ta, k), y = (float)tt_get(tb, k);
      double v = x > y ? (double)(x * y) : exp((double)x) - y;
      int32_t qi = (int32_t)(x * 10.0f) % 7;
      tt_set(ref, k, v + (qi < 0 ? qi + 7 : qi));
    }
    tt_poison(got);
    vv_call(m, name, 3, TT_BUFS(ta, tb, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}

Test(vulkan_vector, elementwise_2_lanes) { vv_elementwise(2); }
Test(vulkan_vector, elementwise_3_lanes) { vv_elementwise(3); }
Test(vulkan_vector, elementwise_4_lanes) { vv_elementwise(4); }
Test(vulkan_vector, elementwise_8_lanes) { vv_elementwise(8); }

/* f64 data and math in vector code: C[i] = sin(A[i]) * pow(B[i], 2.5) + (A[i] < 0), 4 lanes,
   n = 999. */
Test(vulkan_vector, f64_math_4_lanes) {
  enum { N = 999 };
  te_expr *n = te_int(tt_ctx, N), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F64, 1, TE_EXPRS(n)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F64, 1, TE_EXPRS(n)));
  te_expr *a = tt_at1(A, i), *b = tt_at1(B, i);
  te_expr *body =
      te_add(te_mul(te_call(tt_ctx, "sin", 1, TE_EXPRS(a)),
                    te_call(tt_ctx, "pow", 2, TE_EXPRS(b, te_float(tt_ctx, TE_F64, 2.5)))),
             te_cast(TE_F64, te_lt(a, te_float(tt_ctx, TE_F64, 0))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), body));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  vv_schedule(st, te_axis(st, 0), 4);
  te_module *m = vv_build(s, "vecf64", 3, TT_TENSORS(A, B, C), 0, NULL);
  tt_buf *ta = TT_ALLOC(TE_F64, N), *tb = TT_ALLOC(TE_F64, N);
  tt_buf *got = TT_ALLOC(TE_F64, N), *ref = TT_ALLOC(TE_F64, N);
  tt_fill_range(ta, 70, -20, 20), tt_fill_range(tb, 71, 0.1, 4);
  for (int k = 0; k < N; k++) {
    double x = tt_get(ta, k);
    tt_set(ref, k, sin(x) * pow(tt_get(tb, k), 2.5) + (x < 0));
  }
  tt_poison(got);
  vv_call(m, "vecf64", 3, TT_BUFS(ta, tb, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

/* A gather: B[i, j] = A[j, i] + 1 (i32), j vectorized by 4 (a strided read, a contiguous
   write), 37 x 50. */
Test(vulkan_vector, transpose_gather_i32) {
  enum { R = 37, K = 50 };
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = tt_placeholder("A", TE_I32, 2, TT_SHAPE(K, R));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 2, TE_EXPRS(te_int(tt_ctx, R), te_int(tt_ctx, K)),
                                  TE_EXPRS(i, j), te_add(tt_at2(A, j, i), te_int(tt_ctx, 1))));
  te_schedule *s = tt_schedule1(B);
  te_stage *st = tt_stage(s, B);
  te_iter *jo = NULL, *jv = NULL;
  TT_OK(te_split(st, te_axis(st, 1), 4, &jo, &jv));
  TT_OK(te_bind(st, te_axis(st, 0), TE_BLOCK_X));
  TT_OK(te_bind(st, jo, TE_THREAD_X));
  TT_OK(te_vectorize(st, jv));
  te_module *m = vv_build(s, "vgather", 2, TT_TENSORS(A, B), 0, NULL);
  tt_buf *ta = TT_ALLOC(TE_I32, K, R), *got = TT_ALLOC(TE_I32, R, K), *ref = TT_ALLOC(TE_I32, R, K);
  tt_fill(ta, 80);
  for (int r = 0; r < R; r++)
    for (int c = 0; c < K; c++)
      tt_seti(ref, r * K + c, tt_geti(ta, c * R + r) + 1);
  tt_poison(got);
  vv_call(m, "vgather", 2, TT_BUFS(ta, got), 0, NULL);
  tt_assert_close(got, ref, 1);
}

/* if_then_else in vector code: B[i] = i >= 1 ? A[i - 1] : -A[i], plus (A[i] > 0) as a bool
   output; only lanes inside [0, n) load (n = 1001, 4 lanes). */
Test(vulkan_vector, if_then_else_and_bool_output) {
  enum { N = 1001 };
  te_expr *n = te_int(tt_ctx, N), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_expr *left = tt_at1(A, te_sub(i, te_int(tt_ctx, 1)));
  te_expr *v = te_call(tt_ctx, "if_then_else", 3,
                       TE_EXPRS(te_ge(i, te_int(tt_ctx, 1)), left, te_neg(tt_at1(A, i))));
  te_tensor *B = TT_NN(te_compute(tt_ctx, "B", 1, TE_EXPRS(n), TE_EXPRS(i), v));
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_gt(tt_at1(A, i), te_float(tt_ctx, TE_F32, 0))));
  te_schedule *s = TT_NN(te_schedule_new(tt_ctx, 2, TT_TENSORS(B, P)));
  vv_schedule(tt_stage(s, B), te_axis(tt_stage(s, B), 0), 4);
  vv_schedule(tt_stage(s, P), te_axis(tt_stage(s, P), 0), 4);
  te_module *m = vv_build(s, "vite", 3, TT_TENSORS(A, B, P), 0, NULL);
  tt_buf *ta = TT_ALLOC(TE_F32, N), *got = TT_ALLOC(TE_F32, N), *ref = TT_ALLOC(TE_F32, N);
  tt_buf *gp = TT_ALLOC(TE_BOOL, N), *rp = TT_ALLOC(TE_BOOL, N);
  tt_fill(ta, 90);
  for (int k = 0; k < N; k++) {
    tt_set(ref, k, k >= 1 ? tt_get(ta, k - 1) : -tt_get(ta, k));
    tt_seti(rp, k, tt_get(ta, k) > 0);
  }
  tt_poison(got), tt_poison(gp);
  vv_call(m, "vite", 3, TT_BUFS(ta, got, gp), 0, NULL);
  tt_assert_close(got, ref, 1);
  tt_assert_close(gp, rp, 1);
}

/* Wider than CG_SPV_MAX_LANES: refused naming the lanes. */
Test(vulkan_vector, too_many_lanes_refused) {
  te_expr *n = te_int(tt_ctx, 1024), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_mul(tt_at1(A, i), te_float(tt_ctx, TE_F32, 2))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  vv_schedule(st, te_axis(st, 0), 32);
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "wide", 2, TT_TENSORS(A, C), 0, NULL,
                        TT_NN(te_target_parse(tt_ctx, "vulkan")), &m),
               TE_ERR_UNSUPPORTED, "%s", te_last_error(tt_ctx));
  TT_EXPECT_ERR(tt_ctx, TE_ERR_UNSUPPORTED, "kernel 'wide", "32 lanes", "at most 16");
  cr_assert_null(m);
}

/* The masked tail of each row: C[r, c] = A[r, c] + c on 8 x n, a row a thread, c vectorized by
   4 (n = 50, 13, 7: the last vector of a row has lanes past n, which would land on the next
   row's first elements with the wrong c, after that row's thread wrote them, were they not
   masked off). */
Test(vulkan_vector, masked_row_tails) {
  enum { R = 8 };
  te_expr *n = te_var(tt_ctx, "n"), *r = te_var(tt_ctx, "r"), *c = te_var(tt_ctx, "c");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(te_int(tt_ctx, R), n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(te_int(tt_ctx, R), n), TE_EXPRS(r, c),
                                  te_add(tt_at2(A, r, c), te_cast(TE_F32, c))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *co = NULL, *cv = NULL;
  TT_OK(te_split(st, te_axis(st, 1), 4, &co, &cv));
  TT_OK(te_bind(st, te_axis(st, 0), TE_THREAD_X));
  TT_OK(te_vectorize(st, cv));
  te_module *m = vv_build(s, "vtail", 2, TT_TENSORS(A, C), 0, NULL);
  static const int64_t sizes[] = {50, 13, 7};
  for (int t = 0; t < 3; t++) {
    int64_t len = sizes[t];
    tt_note("n = %lld", (long long)len);
    tt_buf *ta = TT_ALLOC(TE_F32, R, len), *got = TT_ALLOC(TE_F32, R, len);
    tt_buf *ref = TT_ALLOC(TE_F32, R, len);
    tt_fill(ta, 100 + (uint64_t)t);
    for (int64_t k = 0; k < R * len; k++)
      tt_set(ref, k, (float)tt_get(ta, k) + (float)(k % len));
    tt_poison(got);
    vv_call(m, "vtail", 2, TT_BUFS(ta, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}
