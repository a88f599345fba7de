/* test_vectorize.c — vectorized schedules (with unrolled and parallel loops beside them) give
 * the numbers of plain C: element-wise kernels in f32, f64 and i32 on odd shapes (tails masked),
 * symbolic sizes, tiled matmuls, a softmax with vector exp, conditions that vary by lane,
 * producers computed inside a vectorized loop, two vectorized axes of one stage, fused rows
 * split across row ends (contiguous vectors); thread-count
 * changes give bit-identical results; the refusals of te_vectorize at build time.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

TestSuite(vectorize, .init = tt_setup, .fini = tt_teardown, .timeout = 240);

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }

/* ---------------------------------------------------------------- element-wise */

enum {
  EW_SPLIT16,
  EW_SPLIT8_PAR,
  EW_TILE_UNROLL_PAR,
  EW_FUSE_PAR,
  EW_WHOLE_ROW,
  EW_ROWS,
  EW_COUNT
};
static const char *ew_names[] = {"split j 16 + vectorize",
                                 "split j 8 + vectorize + parallel i",
                                 "tile 4x16 + unroll i.i + vectorize j.i + parallel i.o",
                                 "fuse + split 16 + vectorize + parallel",
                                 "vectorize the whole row (53 lanes)",
                                 "vectorize i (37 lanes) through the j loop"};

static void ew_sched(te_schedule *s, te_tensor *C, int kind) {
  te_stage *st = tt_stage(s, C);
  te_iter *i = te_axis(st, 0), *j = te_axis(st, 1), *o, *in, *io, *jo, *ii, *ji, *f;
  switch (kind) {
  case EW_SPLIT16:
    TT_OK(te_split(st, j, 16, &o, &in));
    TT_OK(te_vectorize(st, in));
    break;
  case EW_SPLIT8_PAR:
    TT_OK(te_split(st, j, 8, &o, &in));
    TT_OK(te_vectorize(st, in));
    TT_OK(te_parallel(st, i));
    break;
  case EW_TILE_UNROLL_PAR:
    TT_OK(te_tile(st, i, j, 4, 16, &io, &jo, &ii, &ji));
    TT_OK(te_unroll(st, ii));
    TT_OK(te_vectorize(st, ji));
    TT_OK(te_parallel(st, io));
    break;
  case EW_FUSE_PAR:
    TT_OK(te_fuse(st, i, j, &f));
    TT_OK(te_split(st, f, 16, &o, &in));
    TT_OK(te_vectorize(st, in));
    TT_OK(te_parallel(st, o));
    break;
  case EW_WHOLE_ROW:
    TT_OK(te_vectorize(st, j));
    break;
  case EW_ROWS:
    TT_OK(te_vectorize(st, i));
    break;
  }
}

/* C = select(A > B, A * B + A, max(B - A, A)) */
static void run_elementwise(te_dtype dt) {
  enum { M = 37, N = 53 };
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(M, N));
  te_tensor *B = tt_placeholder("B", dt, 2, TT_SHAPE(M, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *a = tt_at2(A, i, j), *b = tt_at2(B, i, j);
  te_expr *body = te_select(te_gt(a, b), te_add(te_mul(a, b), a), te_max(te_sub(b, a), a));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j), body));
  tt_buf *ab = TT_ALLOC(dt, M, N), *bb = TT_ALLOC(dt, M, N);
  tt_buf *got = TT_ALLOC(dt, M, N), *ref = TT_ALLOC(dt, M, N);
  tt_fill(ab, 11);
  tt_fill(bb, 12);
  for (int64_t p = 0; p < M * N; p++) {
    double x = tt_get(ab, p), y = tt_get(bb, p);
    tt_set(ref, p, x > y ? x * y + x : fmax(y - x, x));
  }
  for (int kind = 0; kind < EW_COUNT; kind++) {
    tt_note("elementwise %d-bit code %d, %s", dt.bits, dt.code, ew_names[kind]);
    te_schedule *s = tt_schedule1(C);
    ew_sched(s, C, kind);
    tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(ab, bb, got), 0, NULL, NULL, got, ref, 1);
  }
}

Test(vectorize, elementwise_f32) { run_elementwise(TE_F32); }
Test(vectorize, elementwise_f64) { run_elementwise(TE_F64); }
Test(vectorize, elementwise_i32) { run_elementwise(TE_I32); }

/* C[i] = A[i] * 2 + B[i] over symbolic n (1 .. 1000): the steady state is full vectors, the
   tail a masked vector; f32 by 16 lanes (and parallel), f64 by 8, i32 by 4 unrolled outer. */
static void run_symbolic(te_dtype dt, int lanes, bool par) {
  static const int64_t sizes[] = {1, 7, 15, 16, 17, 100, 1000};
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", dt, 1, TE_EXPRS(n)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", dt, 1, TE_EXPRS(n)));
  te_expr *two = te_const(tt_ctx, dt, 2);
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i),
                                  te_add(te_mul(tt_at1(A, i), two), tt_at1(B, i))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), lanes, &o, &in));
  TT_OK(te_vectorize(st, in));
  if (par)
    TT_OK(te_parallel(st, o));
  tt_note("symbolic, %d lanes", lanes);
  te_module *m = tt_build(s, "sym", 3, TT_TENSORS(A, B, C), 0, NULL);
  for (int t = 0; t < (int)(sizeof sizes / sizeof sizes[0]); t++) {
    int64_t len = sizes[t];
    tt_note("symbolic, %d lanes, n = %lld", lanes, (long long)len);
    tt_buf *a = TT_ALLOC(dt, len), *b = TT_ALLOC(dt, len);
    tt_buf *got = TT_ALLOC(dt, len + 1), *ref = TT_ALLOC(dt, len);
    tt_fill(a, 21);
    tt_fill(b, 22);
    for (int64_t p = 0; p < len; p++)
      tt_set(ref, p, tt_get(a, p) * 2 + tt_get(b, p));
    /* one element more than the kernel is told about: a masked tail must not write it */
    tt_poison(got);
    tt_set(got, len, 12345);
    got->shape[0] = len;
    got->numel = len;
    tt_call(m, "sym", 3, TT_BUFS(a, b, got), 0, NULL);
    cr_assert_eq(tt_get(got, len), 12345, "n = %lld: the element past the end was written",
                 (long long)len);
    tt_assert_close(got, ref, 1);
  }
}

Test(vectorize, symbolic_f32_16_parallel) { run_symbolic(TE_F32, 16, true); }
Test(vectorize, symbolic_f64_8) { run_symbolic(TE_F64, 8, false); }
Test(vectorize, symbolic_i32_4) { run_symbolic(TE_I32, 4, true); }

/* C[i, j] = A[i, j] > B[i, j] (bool) over n x 19: rows split by 8 and vectorized, with the
   parallel j loop inside the vectorized one; the tail of rows is masked, and the parallel body
   (an outlined function) gets the mask again. */
Test(vectorize, bool_output_parallel_inside_masked_tail) {
  static const int64_t rows[] = {3, 8, 21};
  enum { N = 19 };
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(n, I(N))));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(n, I(N))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(n, I(N)), TE_EXPRS(i, j),
                                  te_gt(tt_at2(A, i, j), tt_at2(B, i, j))));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), 8, &o, &in));
  TT_OK(te_reorder(st, 3, (te_iter *const[]){o, in, te_axis(st, 1)}));
  TT_OK(te_vectorize(st, in));
  TT_OK(te_parallel(st, te_axis(st, 1)));
  tt_note("bool output, parallel inside vectorized");
  te_module *m = tt_build(s, "cmp", 3, TT_TENSORS(A, B, C), 0, NULL);
  for (int t = 0; t < 3; t++) {
    int64_t len = rows[t];
    tt_note("bool output, n = %lld", (long long)len);
    tt_buf *a = TT_ALLOC(TE_F32, len, N), *b = TT_ALLOC(TE_F32, len, N);
    tt_buf *got = TT_ALLOC(TE_BOOL, len, N), *ref = TT_ALLOC(TE_BOOL, len, N);
    tt_fill(a, 91);
    tt_fill(b, 92);
    for (int64_t p = 0; p < len * N; p++)
      tt_seti(ref, p, tt_get(a, p) > tt_get(b, p));
    tt_poison(got);
    tt_call(m, "cmp", 3, TT_BUFS(a, b, got), 0, NULL);
    tt_assert_close(got, ref, 1);
  }
}

/* ---------------------------------------------------------------- matmul */

static void run_matmul(te_dtype dt, int M, int N, int K) {
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", dt, 2, TT_SHAPE(K, N));
  te_tensor *C = tt_matmul(A, B, M, N, K);
  tt_buf *a = TT_ALLOC(dt, M, K), *b = TT_ALLOC(dt, K, N);
  tt_buf *got = TT_ALLOC(dt, M, N), *ref = TT_ALLOC(dt, M, N);
  tt_fill(a, 31);
  tt_fill(b, 32);
  for (int p = 0; p < M; p++)
    for (int q = 0; q < N; q++) {
      double acc = 0;
      for (int r = 0; r < K; r++)
        acc += tt_get(a, p * K + r) * tt_get(b, r * N + q);
      tt_set(ref, p * N + q, acc);
    }
  for (int variant = 0; variant < 3; variant++) {
    tt_note("matmul %dx%dx%d, variant %d", M, N, K, variant);
    te_schedule *s = tt_schedule1(C);
    te_stage *st = tt_stage(s, C);
    te_iter *io, *jo, *ii, *ji, *ko, *ki;
    TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 16, &io, &jo, &ii, &ji));
    TT_OK(te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki));
    TT_OK(te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ki, ii, ji}));
    TT_OK(te_vectorize(st, ji));
    if (variant >= 1) {
      TT_OK(te_unroll(st, ii));
      TT_OK(te_parallel(st, io));
    }
    if (variant == 2)
      TT_OK(te_unroll(st, ki));
    tt_check(s, 3, TT_TENSORS(A, B, C), TT_BUFS(a, b, got), 0, NULL, NULL, got, ref, K);
  }
}

Test(vectorize, matmul_f32_odd) { run_matmul(TE_F32, 37, 53, 29); }
Test(vectorize, matmul_f32_64) { run_matmul(TE_F32, 64, 64, 64); }
Test(vectorize, matmul_f64_odd) { run_matmul(TE_F64, 19, 35, 13); }
Test(vectorize, matmul_i32_odd) { run_matmul(TE_I32, 23, 33, 9); }

/* ---------------------------------------------------------------- softmax and math */

/* Row softmax of a 13 x 37 f32 matrix: M = max_j A, E = exp(A - M), S = sum_j E, O = E / S,
   with the element-wise stages vectorized by 16 (tails masked) and S vectorized across rows
   (its reduction loop inside the vectorized loop). */
Test(vectorize, softmax) {
  enum { R = 13, N = 37 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(R, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(N));
  te_expr *k2 = te_reduce_axis(tt_ctx, "k2", I(0), I(N));
  te_tensor *Mx = TT_NN(te_compute(tt_ctx, "M", 1, TE_EXPRS(I(R)), TE_EXPRS(i),
                                   te_max_r(tt_at2(A, i, k), 1, TE_EXPRS(k))));
  te_tensor *E = TT_NN(
      te_compute(tt_ctx, "E", 2, TE_EXPRS(I(R), I(N)), TE_EXPRS(i, j),
                 te_call(tt_ctx, "exp", 1, TE_EXPRS(te_sub(tt_at2(A, i, j), tt_at1(Mx, i))))));
  te_tensor *S =
      TT_NN(te_compute(tt_ctx, "S", 1, TE_EXPRS(I(R)), TE_EXPRS(i), TE_SUM(tt_at2(E, i, k2), k2)));
  te_tensor *O = TT_NN(te_compute(tt_ctx, "O", 2, TE_EXPRS(I(R), I(N)), TE_EXPRS(i, j),
                                  te_div(tt_at2(E, i, j), tt_at1(S, i))));
  tt_buf *a = TT_ALLOC(TE_F32, R, N), *got = TT_ALLOC(TE_F32, R, N), *ref = TT_ALLOC(TE_F32, R, N);
  tt_fill_range(a, 41, -8, 8);
  for (int p = 0; p < R; p++) {
    double mx = -INFINITY, sum = 0;
    for (int q = 0; q < N; q++)
      mx = fmax(mx, tt_get(a, p * N + q));
    for (int q = 0; q < N; q++)
      sum += exp(tt_get(a, p * N + q) - mx);
    for (int q = 0; q < N; q++)
      tt_set(ref, p * N + q, exp(tt_get(a, p * N + q) - mx) / sum);
  }
  te_schedule *s = tt_schedule1(O);
  te_tensor *vec_stages[2] = {E, O};
  for (int t = 0; t < 2; t++) {
    te_stage *st = tt_stage(s, vec_stages[t]);
    te_iter *o, *in;
    TT_OK(te_split(st, te_axis(st, 1), 16, &o, &in));
    TT_OK(te_vectorize(st, in));
  }
  TT_OK(te_vectorize(tt_stage(s, S), te_axis(tt_stage(s, S), 0)));
  TT_OK(te_parallel(tt_stage(s, O), te_axis(tt_stage(s, O), 0)));
  tt_note("softmax");
  tt_check(s, 2, TT_TENSORS(A, O), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* log, tanh and sigmoid vectorized (f32 and f64), inputs covering their ranges. */
static void run_math(te_dtype dt, const char *fn, double lo, double hi) {
  enum { N = 203 };
  te_tensor *A = tt_placeholder("A", dt, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(I(N)), TE_EXPRS(i),
                                  te_call(tt_ctx, fn, 1, TE_EXPRS(tt_at1(A, i)))));
  tt_buf *a = TT_ALLOC(dt, N), *got = TT_ALLOC(dt, N), *ref = TT_ALLOC(dt, N);
  for (int p = 0; p < N; p++) {
    double x = lo + (hi - lo) * p / (N - 1);
    tt_set(a, p, x);
    x = tt_get(a, p);
    double r = strcmp(fn, "log") == 0    ? log(x)
               : strcmp(fn, "tanh") == 0 ? tanh(x)
                                         : 1 / (1 + exp(-x));
    tt_set(ref, p, r);
  }
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  TT_OK(te_split(st, te_axis(st, 0), dt.bits == 32 ? 16 : 8, &o, &in));
  TT_OK(te_vectorize(st, in));
  tt_note("%s f%d", fn, dt.bits);
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

Test(vectorize, math_functions) {
  te_dtype dts[2] = {TE_F32, TE_F64};
  for (int d = 0; d < 2; d++) {
    run_math(dts[d], "log", 0.001, 1000);
    run_math(dts[d], "tanh", -12, 12);
    run_math(dts[d], "sigmoid", -30, 30);
  }
}

/* ---------------------------------------------------------------- conditions, producers */

/* Tile 8x5 of 37x53 with i.i and j.i fused and the fused loop vectorized (40 lanes): the tile
   guards are not linear in the fused variable, so they stay as conditions that vary by lane
   (masked code). */
Test(vectorize, lane_varying_guards) {
  enum { M = 37, N = 53 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_add(tt_at2(A, i, j), te_float(tt_ctx, TE_F32, 1))));
  tt_buf *a = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, M, N), *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 51);
  for (int p = 0; p < M * N; p++)
    tt_set(ref, p, tt_get(a, p) + 1);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji, *f;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 8, 5, &io, &jo, &ii, &ji));
  TT_OK(te_fuse(st, ii, ji, &f));
  TT_OK(te_vectorize(st, f));
  tt_note("fused tile vectorized");
  char *text = TT_NN(te_lower_text(s, 2, TT_TENSORS(A, C), 0, NULL));
  cr_expect(strstr(text, "vector_mask") != NULL, "expected masked code:\n%s", text);
  te_free(text);
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* Rows fused, then split by 64 and 16 (56 columns: blocks straddle rows): the row-major index
   (f // 56)*56 + f % 56 of every access must fold back into the fused variable, so loads and
   stores are contiguous vectors (ramps), not gathers through a per-lane division. A row of the
   padded input is read one row down, so the shift is congruent to the index, not equal. */
Test(vectorize, fused_rows_split_across_rows_stay_contiguous) {
  enum { M = 7, N = 56 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M + 1, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *body = te_add(tt_at2(A, i, j), tt_at2(A, te_add(i, I(1)), j));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j), body));
  tt_buf *a = TT_ALLOC(TE_F32, M + 1, N), *got = TT_ALLOC(TE_F32, M, N),
         *ref = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 52);
  for (int p = 0; p < M * N; p++)
    tt_set(ref, p, (float)(tt_get(a, p) + tt_get(a, p + N)));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *f, *fo, *fi, *fj, *fv;
  TT_OK(te_fuse(st, te_axis(st, 0), te_axis(st, 1), &f));
  TT_OK(te_split(st, f, 64, &fo, &fi));
  TT_OK(te_split(st, fi, 16, &fj, &fv));
  TT_OK(te_vectorize(st, fv));
  tt_note("fused rows, split 64 x 16");
  char *text = TT_NN(te_lower_text(s, 2, TT_TENSORS(A, C), 0, NULL));
  cr_expect(strstr(text, "C[ramp(") != NULL, "expected contiguous stores:\n%s", text);
  cr_expect(strstr(text, "A[ramp(") != NULL, "expected contiguous loads:\n%s", text);
  cr_expect(strstr(text, "%") == NULL, "expected no modulo left in the indices:\n%s", text);
  te_free(text);
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* A 3x3-ish blur: bx computed inside the vectorized x.i loop of by (a buffer per lane, an inner
   loop whose min varies by lane), and P = A * 2 computed at a vectorized loop. */
Test(vectorize, producers_inside_vectorized_loop) {
  enum { H = 11, W = 37 };
  te_tensor *in = tt_placeholder("in", TE_F32, 2, TT_SHAPE(H + 2, W + 2));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_tensor *bx = TT_NN(te_compute(tt_ctx, "bx", 2, TE_EXPRS(I(H + 2), I(W)), TE_EXPRS(y, x),
                                   te_add(te_add(tt_at2(in, y, x), tt_at2(in, y, te_add(x, I(1)))),
                                          tt_at2(in, y, te_add(x, I(2))))));
  te_tensor *by = TT_NN(te_compute(tt_ctx, "by", 2, TE_EXPRS(I(H), I(W)), TE_EXPRS(y, x),
                                   te_add(te_add(tt_at2(bx, y, x), tt_at2(bx, te_add(y, I(1)), x)),
                                          tt_at2(bx, te_add(y, I(2)), x))));
  tt_buf *ib = TT_ALLOC(TE_F32, H + 2, W + 2), *got = TT_ALLOC(TE_F32, H, W),
         *ref = TT_ALLOC(TE_F32, H, W);
  tt_fill(ib, 61);
  for (int p = 0; p < H; p++)
    for (int q = 0; q < W; q++) {
      double acc = 0;
      for (int dy = 0; dy < 3; dy++)
        for (int dx = 0; dx < 3; dx++)
          acc += tt_get(ib, (p + dy) * (W + 2) + q + dx);
      tt_set(ref, p * W + q, acc);
    }
  for (int variant = 0; variant < 3; variant++) {
    tt_note("blur, variant %d", variant);
    te_schedule *s = tt_schedule1(by);
    te_stage *sy = tt_stage(s, by), *sx = tt_stage(s, bx);
    te_iter *xo, *xi;
    TT_OK(te_split(sy, te_axis(sy, 1), 8, &xo, &xi));
    TT_OK(te_vectorize(sy, xi));
    if (variant == 0)
      TT_OK(te_compute_at(sx, sy, xi)); /* inside the vectorized loop */
    else if (variant == 1)
      TT_OK(te_compute_at(sx, sy, xo)); /* outside it, with its own vectorized loop */
    if (variant == 1) {
      te_iter *o, *inr;
      TT_OK(te_split(sx, te_axis(sx, 1), 4, &o, &inr));
      TT_OK(te_vectorize(sx, inr));
    }
    if (variant == 2)
      TT_OK(te_compute_inline(sx));
    tt_check(s, 2, TT_TENSORS(in, by), TT_BUFS(ib, got), 0, NULL, NULL, got, ref, 9);
  }
}

/* Two vectorized axes of one stage: the inner one is vectorized, the outer unrolled. */
Test(vectorize, two_vectorized_axes) {
  enum { M = 12, N = 35 };
  te_tensor *A = tt_placeholder("A", TE_F64, 2, TT_SHAPE(M, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_mul(tt_at2(A, i, j), tt_at2(A, i, j))));
  tt_buf *a = TT_ALLOC(TE_F64, M, N), *got = TT_ALLOC(TE_F64, M, N), *ref = TT_ALLOC(TE_F64, M, N);
  tt_fill(a, 71);
  for (int p = 0; p < M * N; p++)
    tt_set(ref, p, tt_get(a, p) * tt_get(a, p));
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 4, 8, &io, &jo, &ii, &ji));
  TT_OK(te_vectorize(st, ii));
  TT_OK(te_vectorize(st, ji));
  tt_note("two vectorized axes");
  tt_check(s, 2, TT_TENSORS(A, C), TT_BUFS(a, got), 0, NULL, NULL, got, ref, 1);
}

/* ---------------------------------------------------------------- threads */

/* A parallel, vectorized matmul gives the same bits with 1, 2, 3 and 8 threads. */
Test(vectorize, thread_count_changes_nothing) {
  enum { M = 45, N = 40, K = 31 };
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *C = tt_matmul(A, B, M, N, K);
  te_schedule *s = tt_schedule1(C);
  te_stage *st = tt_stage(s, C);
  te_iter *io, *jo, *ii, *ji;
  TT_OK(te_tile(st, te_axis(st, 0), te_axis(st, 1), 2, 16, &io, &jo, &ii, &ji));
  TT_OK(te_vectorize(st, ji));
  TT_OK(te_parallel(st, io));
  te_module *m = tt_build(s, "mm", 3, TT_TENSORS(A, B, C), 0, NULL);
  tt_buf *a = TT_ALLOC(TE_F32, M, K), *b = TT_ALLOC(TE_F32, K, N);
  tt_buf *first = TT_ALLOC(TE_F32, M, N), *got = TT_ALLOC(TE_F32, M, N);
  tt_fill(a, 81);
  tt_fill(b, 82);
  static const int counts[] = {1, 2, 3, 8};
  for (int t = 0; t < 4; t++) {
    te_set_num_threads(counts[t]);
    cr_assert_eq(te_num_threads(), counts[t]);
    tt_buf *out = t == 0 ? first : got;
    tt_poison(out);
    tt_note("%d threads", counts[t]);
    tt_call(m, "mm", 3, TT_BUFS(a, b, out), 0, NULL);
    if (t > 0)
      cr_assert(memcmp(first->dl.data, got->dl.data, sizeof(float) * M * N) == 0,
                "%d threads give other bits than 1 thread", counts[t]);
  }
  te_set_num_threads(0);
  cr_assert_geq(te_num_threads(), 1);
}

/* ---------------------------------------------------------------- refusals */

Test(vectorize, refuses_symbolic_extent) {
  te_expr *n = te_var(tt_ctx, "n"), *i = te_var(tt_ctx, "i");
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 1, TE_EXPRS(n)));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(n), TE_EXPRS(i), tt_at1(A, i)));
  te_schedule *s = tt_schedule1(C);
  TT_OK(te_vectorize(tt_stage(s, C), te_axis(tt_stage(s, C), 0)));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "k", 2, TT_TENSORS(A, C), 0, NULL, tt_target(), &m), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize: loop 'i' has no constant extent",
                "split it by a constant first");
}

Test(vectorize, refuses_too_many_lanes) {
  te_expr *i = te_var(tt_ctx, "i");
  te_tensor *A = tt_placeholder("A", TE_F32, 1, TT_SHAPE(5000));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(I(5000)), TE_EXPRS(i), tt_at1(A, i)));
  te_schedule *s = tt_schedule1(C);
  TT_OK(te_vectorize(tt_stage(s, C), te_axis(tt_stage(s, C), 0)));
  te_module *m = NULL;
  cr_assert_eq(te_build(s, "k", 2, TT_TENSORS(A, C), 0, NULL, tt_target(), &m), TE_ERR_SCHEDULE);
  TT_EXPECT_ERR(tt_ctx, TE_ERR_SCHEDULE, "te_vectorize: loop 'i' has extent 5000", "lanes");
}
