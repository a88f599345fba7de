/* test_strided.c — strided and offset inputs (te_placeholder_strided): views of a larger base
 * buffer passed without copies. A transposed view (strides {1, M}), a crop through byte_offset
 * (strides {W, 1}, the innermost 1 declared so vectorized loads stay contiguous), a broadcast row
 * (stride 0), a compact DLTensor with strides NULL given to a strided placeholder, and a stride
 * variable shared by two inputs; each under several schedules (tails, vectorize, parallel), on
 * odd sizes, against plain C with the output poisoned.
 */
#include "../common/te_test.h"

#include <criterion/criterion.h>
#include <string.h>

TestSuite(strided, .init = tt_setup, .fini = tt_teardown);

/* A view of base: shape, strides (NULL: compact) and an element offset from base's data. */
typedef struct view {
  DLTensor dl;
  int64_t shape[2], strides[2];
} view;

static void make_view(view *v, const tt_buf *base, int64_t h, int64_t w, const int64_t *strides,
                      int64_t elem_offset) {
  memset(v, 0, sizeof *v);
  v->dl = base->dl;
  v->shape[0] = h, v->shape[1] = w;
  v->dl.ndim = 2;
  v->dl.shape = v->shape;
  v->dl.strides = NULL;
  if (strides) {
    v->strides[0] = strides[0], v->strides[1] = strides[1];
    v->dl.strides = v->strides;
  }
  v->dl.byte_offset = (uint64_t)elem_offset * base->elem_bytes;
}

/* Element [i, j] of a view of an f32 base. */
static double at(const tt_buf *base, const view *v, int64_t i, int64_t j) {
  int64_t s0 = v->dl.strides ? v->strides[0] : v->shape[1];
  int64_t s1 = v->dl.strides ? v->strides[1] : 1;
  return tt_get(base, (int64_t)(v->dl.byte_offset / base->elem_bytes) + i * s0 + j * s1);
}

enum { SCHED_VECTORIZE = TT_S_COUNT, SCHED_PARALLEL, SCHED_COUNT };

/* The generic schedules, then: j split by 8 (a tail at most sizes), inner vectorized; i
   parallel with j split by 4 and unrolled. */
static void apply(te_schedule *s, te_tensor *C, int kind) {
  te_stage *st = tt_stage(s, C);
  te_iter *o, *in;
  if (kind < TT_S_COUNT) {
    tt_apply_sched(s, C, kind);
  } else if (kind == SCHED_VECTORIZE) {
    TT_OK(te_split(st, te_axis(st, 1), 8, &o, &in));
    TT_OK(te_vectorize(st, in));
  } else {
    TT_OK(te_parallel(st, te_axis(st, 0)));
    TT_OK(te_split(st, te_axis(st, 1), 4, &o, &in));
    TT_OK(te_unroll(st, in));
  }
}

static const char *sched_name(int kind) {
  return kind < TT_S_COUNT         ? tt_sched_name(kind)
         : kind == SCHED_VECTORIZE ? "vectorize 8"
                                   : "parallel, unroll 4";
}

/* C[i, j] = A[i, j] * 3 + B[i, j] with A strided (both strides variables) and B compact. */
static te_tensor *axpb(te_tensor *A, te_tensor *B, te_expr *M, te_expr *N) {
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *body = te_add(te_mul(tt_at2(A, i, j), te_float(tt_ctx, TE_F32, 3)), tt_at2(B, i, j));
  return TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(M, N), TE_EXPRS(i, j), body));
}

static void run_axpb(te_module *m, const tt_buf *base, view *a, int64_t h, int64_t w) {
  tt_buf *b = TT_ALLOC(TE_F32, h, w), *got = TT_ALLOC(TE_F32, h, w), *ref = TT_ALLOC(TE_F32, h, w);
  tt_fill(b, (uint64_t)(h * 31 + w));
  for (int64_t p = 0; p < h; p++)
    for (int64_t q = 0; q < w; q++)
      tt_set(ref, p * w + q, at(base, a, p, q) * 3 + tt_get(b, p * w + q));
  DLTensor *args[3] = {&a->dl, &b->dl, &got->dl};
  TT_OK(te_module_call(m, "axpb", 3, args, 0, NULL));
  tt_assert_close(got, ref, 1);
}

/* A transposed view (numpy's a.T): A[i, j] is base[j, i], strides {1, M}. */
Test(strided, transposed_view) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N");
  te_expr *s0 = te_var(tt_ctx, "s0"), *s1 = te_var(tt_ctx, "s1");
  te_tensor *A =
      TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N), TE_EXPRS(s0, s1)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N)));
  te_tensor *C = axpb(A, B, M, N);
  static const int64_t shapes[][2] = {{1, 1}, {5, 13}, {17, 9}, {33, 40}};
  for (int kind = 0; kind < SCHED_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    apply(s, C, kind);
    te_module *m = tt_build(s, "axpb", 3, TT_TENSORS(A, B, C), 0, NULL);
    for (int t = 0; t < 4; t++) {
      int64_t h = shapes[t][0], w = shapes[t][1];
      tt_note("transposed %lld x %lld, schedule %s", (long long)h, (long long)w, sched_name(kind));
      tt_buf *base = TT_ALLOC(TE_F32, w, h); /* the array A is the transpose of */
      tt_fill(base, (uint64_t)(h + w));
      view a;
      make_view(&a, base, h, w, (const int64_t[]){1, h}, 0);
      run_axpb(m, base, &a, h, w);
    }
  }
}

/* A crop base[r0 : r0 + h, c0 : c0 + w] of an H x W array: byte_offset to its first element,
   strides {W, 1}; the innermost stride declared 1, so loads stay contiguous. */
Test(strided, crop_through_byte_offset) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N"), *rs = te_var(tt_ctx, "row_stride");
  te_tensor *A = TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N),
                                              TE_EXPRS(rs, te_int(tt_ctx, 1))));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N)));
  te_tensor *C = axpb(A, B, M, N);
  static const int64_t crops[][4] = {{1, 1, 0, 0}, {5, 13, 2, 3}, {17, 9, 0, 7}, {20, 31, 3, 1}};
  for (int kind = 0; kind < SCHED_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    apply(s, C, kind);
    te_module *m = tt_build(s, "axpb", 3, TT_TENSORS(A, B, C), 0, NULL);
    for (int t = 0; t < 4; t++) {
      int64_t h = crops[t][0], w = crops[t][1], r0 = crops[t][2], c0 = crops[t][3];
      int64_t H = h + r0 + 2, W = w + c0 + 3;
      tt_note("crop %lld x %lld at (%lld, %lld) of %lld x %lld, schedule %s", (long long)h,
              (long long)w, (long long)r0, (long long)c0, (long long)H, (long long)W,
              sched_name(kind));
      tt_buf *base = TT_ALLOC(TE_F32, H, W);
      tt_fill(base, (uint64_t)(H * W));
      view a;
      make_view(&a, base, h, w, (const int64_t[]){W, 1}, r0 * W + c0);
      run_axpb(m, base, &a, h, w);
    }
  }
}

/* With the innermost stride declared 1 the vectorized loop loads A with one contiguous ramp;
   with it symbolic, A's load is a strided ramp (a gather). */
Test(strided, vectorized_loads_contiguous_when_inner_stride_is_one) {
  te_expr *M = te_var(tt_ctx, "M"), *rs = te_var(tt_ctx, "rs"), *cs = te_var(tt_ctx, "cs");
  te_expr *N = te_int(tt_ctx, 64);
  for (int symbolic = 0; symbolic < 2; symbolic++) {
    te_tensor *A = TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N),
                                                TE_EXPRS(rs, symbolic ? cs : te_int(tt_ctx, 1))));
    te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N)));
    te_tensor *C = axpb(A, B, M, N);
    te_schedule *s = tt_schedule1(C);
    apply(s, C, SCHED_VECTORIZE);
    char *ir = TT_NN(te_lower_text(s, 3, TT_TENSORS(A, B, C), 0, NULL));
    const char *load = strstr(ir, "A[ramp(");
    const char *end = load ? strstr(load, ")]") : NULL;
    size_t len = end ? (size_t)(end - load) : 0;
    bool contiguous = len > 6 && strncmp(end - 6, ", 1, 8", 6) == 0;
    bool gather = len > 7 && strncmp(end - 7, ", cs, 8", 7) == 0;
    cr_log_info("%s", ir);
    te_free(ir);
    cr_expect(symbolic ? gather && !contiguous : contiguous && !gather,
              "%s innermost stride: expected a %s load of A", symbolic ? "symbolic" : "unit",
              symbolic ? "strided" : "contiguous");
  }
}

/* A broadcast row (numpy's broadcast_to, torch's expand): A[i, j] is row[j], strides {0, 1}. */
Test(strided, broadcast_row_stride_zero) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N");
  te_expr *s0 = te_var(tt_ctx, "s0"), *s1 = te_var(tt_ctx, "s1");
  te_tensor *A =
      TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N), TE_EXPRS(s0, s1)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N)));
  te_tensor *C = axpb(A, B, M, N);
  for (int kind = 0; kind < SCHED_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    apply(s, C, kind);
    te_module *m = tt_build(s, "axpb", 3, TT_TENSORS(A, B, C), 0, NULL);
    tt_note("broadcast 7 x 19, schedule %s", sched_name(kind));
    tt_buf *row = TT_ALLOC(TE_F32, 19);
    tt_fill(row, 5);
    view a;
    make_view(&a, row, 7, 19, (const int64_t[]){0, 1}, 0);
    run_axpb(m, row, &a, 7, 19);
  }
}

/* A compact DLTensor (strides NULL) given to a strided placeholder: the stride variables take
   the compact strides. */
Test(strided, compact_tensor_with_null_strides) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N");
  te_expr *s0 = te_var(tt_ctx, "s0"), *s1 = te_var(tt_ctx, "s1");
  te_tensor *A =
      TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N), TE_EXPRS(s0, s1)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N)));
  te_tensor *C = axpb(A, B, M, N);
  for (int kind = 0; kind < SCHED_COUNT; kind++) {
    te_schedule *s = tt_schedule1(C);
    apply(s, C, kind);
    te_module *m = tt_build(s, "axpb", 3, TT_TENSORS(A, B, C), 0, NULL);
    tt_note("compact 6 x 11, schedule %s", sched_name(kind));
    tt_buf *base = TT_ALLOC(TE_F32, 6, 11);
    tt_fill(base, 9);
    view a;
    make_view(&a, base, 6, 11, NULL, 0);
    run_axpb(m, base, &a, 6, 11);
  }
}

/* Two crops of one base sharing the stride variable rs: A's binds it, B's is checked against
   it. D[i, j] = A[i, j] - B[i, j] * 2. */
Test(strided, stride_variable_shared_by_two_inputs) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N"), *rs = te_var(tt_ctx, "rs");
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j"), *one = te_int(tt_ctx, 1);
  te_tensor *A =
      TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N), TE_EXPRS(rs, one)));
  te_tensor *B =
      TT_NN(te_placeholder_strided(tt_ctx, "B", TE_F32, 2, TE_EXPRS(M, N), TE_EXPRS(rs, one)));
  te_tensor *D = TT_NN(
      te_compute(tt_ctx, "D", 2, TE_EXPRS(M, N), TE_EXPRS(i, j),
                 te_sub(tt_at2(A, i, j), te_mul(tt_at2(B, i, j), te_float(tt_ctx, TE_F32, 2)))));
  te_schedule *s = tt_schedule1(D);
  apply(s, D, SCHED_VECTORIZE);
  te_module *m = tt_build(s, "sub", 3, TT_TENSORS(A, B, D), 0, NULL);
  int64_t H = 12, W = 23, h = 5, w = 10;
  tt_buf *base = TT_ALLOC(TE_F32, H, W), *got = TT_ALLOC(TE_F32, h, w);
  tt_buf *ref = TT_ALLOC(TE_F32, h, w);
  tt_fill(base, 3);
  view a, b;
  make_view(&a, base, h, w, (const int64_t[]){W, 1}, 1 * W + 2);
  make_view(&b, base, h, w, (const int64_t[]){W, 1}, 6 * W + 11);
  for (int64_t p = 0; p < h; p++)
    for (int64_t q = 0; q < w; q++)
      tt_set(ref, p * w + q, at(base, &a, p, q) - 2 * at(base, &b, p, q));
  DLTensor *args[3] = {&a.dl, &b.dl, &got->dl};
  TT_OK(te_module_call(m, "sub", 3, args, 0, NULL));
  tt_assert_close(got, ref, 1);
}

/* A stride variable used in the body (the distance between rows, in elements). */
Test(strided, stride_variable_in_the_body) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N"), *rs = te_var(tt_ctx, "rs");
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *A = TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F64, 2, TE_EXPRS(M, N),
                                              TE_EXPRS(rs, te_int(tt_ctx, 1))));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(M, N), TE_EXPRS(i, j),
                                  te_add(tt_at2(A, i, j), te_cast(TE_F64, rs))));
  te_schedule *s = tt_schedule1(C);
  te_module *m = tt_build(s, "plus_rs", 2, TT_TENSORS(A, C), 0, NULL);
  tt_buf *base = TT_ALLOC(TE_F64, 4, 9), *got = TT_ALLOC(TE_F64, 3, 5);
  tt_buf *ref = TT_ALLOC(TE_F64, 3, 5);
  tt_fill(base, 4);
  view a;
  make_view(&a, base, 3, 5, (const int64_t[]){9, 1}, 10);
  for (int64_t p = 0; p < 3; p++)
    for (int64_t q = 0; q < 5; q++)
      tt_set(ref, p * 5 + q, at(base, &a, p, q) + 9);
  DLTensor *args[2] = {&a.dl, &got->dl};
  TT_OK(te_module_call(m, "plus_rs", 2, args, 0, NULL));
  tt_assert_close(got, ref, 1);
}
