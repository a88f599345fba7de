/* random_workloads.h — the workloads of test_random_schedules.c, each with its plain C
 * reference (included by that file only: an e2e test is one source file).
 *
 * A workload builds its computation through the public API, allocates its buffers (inputs filled
 * with random non-zero values) and computes the reference of every output with C loops written
 * from its definition, never with te. It also names the primitives the random schedules must see
 * accepted on it at least once.
 */
#ifndef TE_TEST_RANDOM_WORKLOADS_H
#define TE_TEST_RANDOM_WORKLOADS_H

#include <math.h>

#include "te_test.h"

/* The primitives the random schedules apply (counted per test). */
enum prim {
  P_SPLIT,
  P_SPLIT_NPARTS,
  P_TILE,
  P_FUSE,
  P_REORDER,
  P_UNROLL,
  P_PARALLEL,
  P_VECTORIZE,
  P_SET_TAIL,
  P_PRAGMA,
  P_COMPUTE_INLINE,
  P_COMPUTE_ROOT,
  P_COMPUTE_AT,
  P_CACHE_READ,
  P_CACHE_WRITE,
  P_RFACTOR,
  P_REORDER_STORAGE,
  P_BIND,
  P_SPECIALIZE,
  P_COUNT
};

static const char *const prim_name[P_COUNT] = {
    "split",          "split_nparts",    "tile",       "fuse",       "reorder",
    "unroll",         "parallel",        "vectorize",  "set_tail",   "pragma",
    "compute_inline", "compute_root",    "compute_at", "cache_read", "cache_write",
    "rfactor",        "reorder_storage", "bind",       "specialize"};

#define BIT(p) (1u << (p))
#define LOOP_PRIMS                                                                                 \
  (BIT(P_SPLIT) | BIT(P_SPLIT_NPARTS) | BIT(P_TILE) | BIT(P_FUSE) | BIT(P_REORDER) |               \
   BIT(P_UNROLL) | BIT(P_PARALLEL) | BIT(P_VECTORIZE) | BIT(P_SET_TAIL) | BIT(P_PRAGMA))
#define PLACE_PRIMS (BIT(P_COMPUTE_INLINE) | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT))

/* One workload: the kernel's tensors (inputs, then outputs), scalar parameters, and per size
   variant the buffers, parameter values and the C reference of every output. */
typedef struct workload {
  const char *name;
  int nin, nout;
  te_tensor *t[8];
  int ns;
  te_expr *scalars[2];
  te_tensor *stages[6]; /* one tensor of every computed stage, producers first */
  int nstages;
  te_tensor *reduction; /* a tensor whose stage may be rfactored, or NULL */
  te_tensor *cacheable; /* an input that may be cache_read, or NULL */
  te_tensor *reader;    /* the tensor whose stage reads it through the cache (NULL: the output) */
  int64_t reduce_len;
  unsigned must; /* primitives that must be accepted at least once */
  int nvariants; /* sizes the kernel is called at (symbolic shapes: 2) */
  tt_buf *b[2][8];
  tt_buf *ref[2][4];
  float alpha[2];    /* scalar parameter values (f32) */
  bool keep_default; /* producers may keep their default placement (lifted reductions) */
} workload;

static te_expr *I(int64_t v) { return te_int(tt_ctx, v); }
static te_expr *F(double v) { return te_float(tt_ctx, TE_F32, v); }

/* Allocates variant v's buffers at the given shapes (inputs filled) and references. */
static void alloc_variant(workload *w, int v, const int64_t *const shapes[], const int ndims[]) {
  for (int i = 0; i < w->nin + w->nout; i++) {
    w->b[v][i] = tt_alloc(te_tensor_dtype(w->t[i]), ndims[i], shapes[i]);
    if (i < w->nin)
      tt_fill(w->b[v][i], 100 * (uint64_t)v + (uint64_t)i + 1);
    else
      w->ref[v][i - w->nin] = tt_alloc(te_tensor_dtype(w->t[i]), ndims[i], shapes[i]);
  }
}

#define G(buf, i) tt_get((buf), (i))

/* C[i, j] = sum_k A[i, k] * B[k, j] in f32, i32, f16 or bf16 (the sum in that dtype). */
static void matmul_workload(workload *w, te_dtype dt, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", dt, 2, TT_SHAPE(K, N));
  te_tensor *C = TT_NN(tt_matmul(A, B, M, N, K));
  *w = (workload){dt.code == kDLFloat && dt.bits == 32 ? "matmul"
                  : dt.bits == 16 && dt.code != kDLInt ? "half_matmul"
                                                       : "int_matmul",
                  2,
                  1,
                  {A, B, C},
                  0,
                  {0},
                  {C},
                  1,
                  C,
                  A,
                  NULL,
                  K,
                  LOOP_PRIMS | BIT(P_CACHE_READ) | BIT(P_CACHE_WRITE) | BIT(P_RFACTOR) |
                      BIT(P_REORDER_STORAGE),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(K, N), TT_SHAPE(M, N)},
                (const int[]){2, 2, 2});
  tt_ref_matmul(w->b[0][0], w->b[0][1], w->ref[0][0], M, N, K);
}

/* P = A * 2 + 1 (injective), C[i] = sum_r P[i, r] * v[r]. */
static void producer_workload(workload *w, int64_t M, int64_t N) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, N));
  te_tensor *v = tt_placeholder("v", TE_F32, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                            te_add(te_mul(tt_at2(A, i, j), F(2)), F(1)));
  te_expr *r = te_reduce_axis(tt_ctx, "r", I(0), I(N));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(I(M)), TE_EXPRS(i),
                                  TE_SUM(te_mul(tt_at2(P, i, r), tt_at1(v, r)), r)));
  *w = (workload){"producer",
                  2,
                  1,
                  {A, v, C},
                  0,
                  {0},
                  {P, C},
                  2,
                  C,
                  v,
                  NULL,
                  N,
                  LOOP_PRIMS | PLACE_PRIMS | BIT(P_CACHE_READ) | BIT(P_REORDER_STORAGE),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, N), TT_SHAPE(N), TT_SHAPE(M)},
                (const int[]){2, 1, 1});
  for (int64_t a = 0; a < M; a++) {
    double s = 0;
    for (int64_t b = 0; b < N; b++)
      s += ((float)G(w->b[0][0], a * N + b) * 2.0f + 1.0f) * G(w->b[0][1], b);
    tt_set(w->ref[0][0], a, s);
  }
}

/* Low precision: P = A * A - 0.5 in f16 (rounded after each operation), S[i] = sum_r f32(P[i, r])
   * f32(v[r]) with v in bf16, accumulated in f32, and C = f16(S). The reference computes in
   double from the 16-bit inputs; C's f16 tolerance covers P's roundings. */
static void lowp_workload(workload *w, int64_t M, int64_t N) {
  te_tensor *A = tt_placeholder("A", TE_F16, 2, TT_SHAPE(M, N));
  te_tensor *v = tt_placeholder("v", TE_BF16, 1, TT_SHAPE(N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                            te_sub(te_mul(tt_at2(A, i, j), tt_at2(A, i, j)), F(0.5)));
  te_expr *r = te_reduce_axis(tt_ctx, "r", I(0), I(N));
  te_tensor *S = TT_NN(te_compute(
      tt_ctx, "S", 1, TE_EXPRS(I(M)), TE_EXPRS(i),
      TE_SUM(te_mul(te_cast(TE_F32, tt_at2(P, i, r)), te_cast(TE_F32, tt_at1(v, r))), r)));
  te_tensor *C =
      TT_NN(te_compute(tt_ctx, "C", 1, TE_EXPRS(I(M)), TE_EXPRS(i), te_cast(TE_F16, tt_at1(S, i))));
  *w = (workload){
      "lowp", 2,     1,   {A, v, C}, 0, {0}, {P, S, C}, 3, S, v, S, N, LOOP_PRIMS | PLACE_PRIMS, 1,
      {{0}},  {{0}}, {0}, false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, N), TT_SHAPE(N), TT_SHAPE(M)},
                (const int[]){2, 1, 1});
  for (int64_t a = 0; a < M; a++) {
    double acc = 0;
    for (int64_t b = 0; b < N; b++) {
      double x = G(w->b[0][0], a * N + b);
      acc += (x * x - 0.5) * G(w->b[0][1], b);
    }
    tt_set(w->ref[0][0], a, acc);
  }
}

/* The classic two-stage 3x3 box blur. */
static void blur_workload(workload *w, int64_t H, int64_t W) {
  te_tensor *in = tt_placeholder("input", TE_F32, 2, TT_SHAPE(H + 2, W + 2));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_tensor *bx = te_compute(tt_ctx, "blur_x", 2, TE_EXPRS(I(H + 2), I(W)), TE_EXPRS(y, x),
                             te_div(te_add(te_add(tt_at2(in, y, x), tt_at2(in, y, te_add(x, I(1)))),
                                           tt_at2(in, y, te_add(x, I(2)))),
                                    F(3)));
  te_tensor *by =
      TT_NN(te_compute(tt_ctx, "blur_y", 2, TE_EXPRS(I(H), I(W)), TE_EXPRS(y, x),
                       te_div(te_add(te_add(tt_at2(bx, y, x), tt_at2(bx, te_add(y, I(1)), x)),
                                     tt_at2(bx, te_add(y, I(2)), x)),
                              F(3))));
  *w = (workload){"blur",
                  1,
                  1,
                  {in, by},
                  0,
                  {0},
                  {bx, by},
                  2,
                  NULL,
                  in,
                  bx,
                  9,
                  LOOP_PRIMS | PLACE_PRIMS | BIT(P_CACHE_READ) | BIT(P_REORDER_STORAGE),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(H + 2, W + 2), TT_SHAPE(H, W)},
                (const int[]){2, 2});
  const tt_buf *a = w->b[0][0];
  for (int64_t r = 0; r < H; r++)
    for (int64_t c = 0; c < W; c++) {
      double s = 0;
      for (int dy = 0; dy < 3; dy++)
        s += (G(a, (r + dy) * (W + 2) + c) + G(a, (r + dy) * (W + 2) + c + 1) +
              G(a, (r + dy) * (W + 2) + c + 2)) /
             3;
      tt_set(w->ref[0][0], r * W + c, s / 3);
    }
}

/* S[i] = sum_{j,k} X[i, j, k]; T[i] = max(S[i], 0.5). */
static void sum2_workload(workload *w, int64_t A0, int64_t A1, int64_t A2) {
  te_tensor *X = tt_placeholder("X", TE_F32, 3, TT_SHAPE(A0, A1, A2));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *j = te_reduce_axis(tt_ctx, "j", I(0), I(A1)),
          *k = te_reduce_axis(tt_ctx, "k", I(0), I(A2));
  te_tensor *S = te_compute(tt_ctx, "S", 1, TE_EXPRS(I(A0)), TE_EXPRS(i),
                            te_sum(tt_at3(X, i, j, k), 2, TE_EXPRS(j, k)));
  te_tensor *T =
      TT_NN(te_compute(tt_ctx, "T", 1, TE_EXPRS(I(A0)), TE_EXPRS(i), te_max(tt_at1(S, i), F(0.5))));
  *w = (workload){"sum2",
                  1,
                  1,
                  {X, T},
                  0,
                  {0},
                  {S, T},
                  2,
                  S,
                  NULL,
                  NULL,
                  A1 * A2,
                  LOOP_PRIMS | BIT(P_COMPUTE_AT) | BIT(P_COMPUTE_ROOT) | BIT(P_RFACTOR),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(A0, A1, A2), TT_SHAPE(A0)}, (const int[]){3, 1});
  for (int64_t a = 0; a < A0; a++) {
    double s = 0;
    for (int64_t b = 0; b < A1 * A2; b++)
      s += G(w->b[0][0], a * A1 * A2 + b);
    tt_set(w->ref[0][0], a, s > 0.5 ? s : 0.5);
  }
}

/* C[i, j] = A[i, j] * alpha + B[j] with A: f32[M, N] symbolic, alpha a scalar parameter; the
   kernel is called at 7 x 13 (alpha 1.5) and 10 x 5 (alpha -0.75). */
static void symbolic_workload(workload *w) {
  te_expr *M = te_var(tt_ctx, "M"), *N = te_var(tt_ctx, "N");
  te_expr *alpha = TT_NN(te_param(tt_ctx, "alpha", TE_F32));
  te_tensor *A = TT_NN(te_placeholder(tt_ctx, "A", TE_F32, 2, TE_EXPRS(M, N)));
  te_tensor *B = TT_NN(te_placeholder(tt_ctx, "B", TE_F32, 1, TE_EXPRS(N)));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(M, N), TE_EXPRS(i, j),
                                  te_add(te_mul(tt_at2(A, i, j), alpha), tt_at1(B, j))));
  *w = (workload){"symbolic",
                  2,
                  1,
                  {A, B, C},
                  1,
                  {alpha},
                  {C},
                  1,
                  NULL,
                  B,
                  NULL,
                  1,
                  BIT(P_SPLIT) | BIT(P_SPLIT_NPARTS) | BIT(P_FUSE) | BIT(P_REORDER) | BIT(P_TILE) |
                      BIT(P_PARALLEL) | BIT(P_UNROLL) | BIT(P_PRAGMA) | BIT(P_CACHE_READ) |
                      BIT(P_CACHE_WRITE) | BIT(P_SPECIALIZE),
                  2,
                  {{0}},
                  {{0}},
                  {1.5f, -0.75f},
                  false};
  static const int64_t size[2][2] = {{7, 13}, {10, 5}};
  for (int v = 0; v < 2; v++) {
    int64_t m = size[v][0], n = size[v][1];
    alloc_variant(w, v, (const int64_t *[]){TT_SHAPE(m, n), TT_SHAPE(n), TT_SHAPE(m, n)},
                  (const int[]){2, 1, 2});
    for (int64_t a = 0; a < m * n; a++)
      tt_set(w->ref[v][0], a,
             (double)((float)G(w->b[v][0], a) * w->alpha[v] + (float)G(w->b[v][1], a % n)));
  }
}

/* P[i, k] = f64(A[i, k] // 2 + A[i, k] % 3) * 0.5 (i32 ops, a cast), C = P x B in f64. */
static void int_f64_workload(workload *w, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", TE_I32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F64, 2, TT_SHAPE(K, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j"), *k2 = te_var(tt_ctx, "k");
  te_expr *a = tt_at2(A, i, k2);
  te_expr *pi = te_add(te_floordiv(a, I(2)), te_floormod(a, I(3)));
  te_tensor *P = te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(K)), TE_EXPRS(i, k2),
                            te_mul(te_cast(TE_F64, pi), te_float(tt_ctx, TE_F64, 0.5)));
  te_expr *k = te_reduce_axis(tt_ctx, "r", I(0), I(K));
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  TE_SUM(te_mul(tt_at2(P, i, k), tt_at2(B, k, j)), k)));
  *w = (workload){"int_f64",
                  2,
                  1,
                  {A, B, C},
                  0,
                  {0},
                  {P, C},
                  2,
                  C,
                  B,
                  NULL,
                  K,
                  LOOP_PRIMS | PLACE_PRIMS | BIT(P_RFACTOR) | BIT(P_CACHE_WRITE),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(K, N), TT_SHAPE(M, N)},
                (const int[]){2, 2, 2});
  for (int64_t r = 0; r < M; r++)
    for (int64_t c = 0; c < N; c++) {
      double s = 0;
      for (int64_t q = 0; q < K; q++) {
        int64_t x = tt_geti(w->b[0][0], r * K + q);
        s += (double)(tt_floordiv(x, 2) + tt_floormod(x, 3)) * 0.5 * G(w->b[0][1], q * N + c);
      }
      tt_set(w->ref[0][0], r * N + c, s);
    }
}

/* (P_v0, P_v1)[i, k] = (A + 1, A * 2), then (idx, val)[i] = argmax_k P_v0 * P_v1 with a custom
   reducer of two values: a multi-output intermediate read by a multi-output reduction. */
static void argmax_workload(workload *w, int64_t M, int64_t K) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_expr *i = te_var(tt_ctx, "i"), *k2 = te_var(tt_ctx, "k");
  te_expr *pb[2] = {te_add(tt_at2(A, i, k2), F(1)), te_mul(tt_at2(A, i, k2), F(2))};
  te_tensor *P[2];
  TT_OK(te_compute_multi(tt_ctx, "P", 2, TE_EXPRS(I(M), I(K)), TE_EXPRS(i, k2), 2, pb, P));
  te_expr *li = te_param(tt_ctx, "li", TE_I32), *lv = te_param(tt_ctx, "lv", TE_F32);
  te_expr *ri = te_param(tt_ctx, "ri", TE_I32), *rv = te_param(tt_ctx, "rv", TE_F32);
  te_reducer *am = TT_NN(
      te_reducer_new(tt_ctx, 2, TE_EXPRS(li, lv), TE_EXPRS(ri, rv),
                     TE_EXPRS(te_select(te_gt(rv, lv), ri, li), te_max(lv, rv)),
                     TE_EXPRS(te_const(tt_ctx, TE_I32, -1), te_const(tt_ctx, TE_F32, -INFINITY))));
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(K));
  te_expr *vals[2] = {te_cast(TE_I32, k), te_mul(tt_at2(P[0], i, k), tt_at2(P[1], i, k))}, *red[2];
  TT_OK(te_reduce(am, 2, vals, 1, &k, NULL, red));
  te_tensor *out[2];
  TT_OK(te_compute_multi(tt_ctx, "amax", 1, TE_EXPRS(I(M)), &i, 2, red, out));
  *w =
      (workload){"argmax", 1,    2, {A, out[0], out[1]},      0, {0},   {P[0], out[0]}, 2,   out[0],
                 A,        P[0], 1, LOOP_PRIMS | PLACE_PRIMS, 1, {{0}}, {{0}},          {0}, false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(M), TT_SHAPE(M)},
                (const int[]){2, 1, 1});
  for (int64_t r = 0; r < M; r++) {
    int64_t best = -1;
    float bv = -INFINITY;
    for (int64_t c = 0; c < K; c++) {
      float a = (float)G(w->b[0][0], r * K + c), x = (a + 1.0f) * (a * 2.0f);
      if (x > bv)
        bv = x, best = c;
    }
    tt_seti(w->ref[0][0], r, best);
    tt_set(w->ref[0][1], r, bv);
  }
}

/* P = I zero-padded by one (te_if_then_else: reads outside I are not made), then a 3x3
   convolution O[y, x] = sum_{r,s} P[y + r, x + s] * Wt[r, s]. */
static void pad_conv_workload(workload *w, int64_t H, int64_t W) {
  te_tensor *In = tt_placeholder("I", TE_F32, 2, TT_SHAPE(H, W));
  te_tensor *Wt = tt_placeholder("Wt", TE_F32, 2, TT_SHAPE(3, 3));
  te_expr *y = te_var(tt_ctx, "y"), *x = te_var(tt_ctx, "x");
  te_expr *inside =
      te_and(te_and(te_ge(y, I(1)), te_le(y, I(H))), te_and(te_ge(x, I(1)), te_le(x, I(W))));
  te_tensor *P =
      te_compute(tt_ctx, "P", 2, TE_EXPRS(I(H + 2), I(W + 2)), TE_EXPRS(y, x),
                 te_if_then_else(inside, tt_at2(In, te_sub(y, I(1)), te_sub(x, I(1))), F(0)));
  te_expr *r = te_reduce_axis(tt_ctx, "r", I(0), I(3)),
          *s = te_reduce_axis(tt_ctx, "s", I(0), I(3));
  te_tensor *O = TT_NN(te_compute(
      tt_ctx, "O", 2, TE_EXPRS(I(H), I(W)), TE_EXPRS(y, x),
      te_sum(te_mul(tt_at2(P, te_add(y, r), te_add(x, s)), tt_at2(Wt, r, s)), 2, TE_EXPRS(r, s))));
  *w = (workload){"pad_conv",
                  2,
                  1,
                  {In, Wt, O},
                  0,
                  {0},
                  {P, O},
                  2,
                  O,
                  Wt,
                  NULL,
                  9,
                  LOOP_PRIMS | PLACE_PRIMS | BIT(P_CACHE_WRITE),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(H, W), TT_SHAPE(3, 3), TT_SHAPE(H, W)},
                (const int[]){2, 2, 2});
  for (int64_t a = 0; a < H; a++)
    for (int64_t b = 0; b < W; b++) {
      double acc = 0;
      for (int dr = 0; dr < 3; dr++)
        for (int ds = 0; ds < 3; ds++) {
          int64_t yy = a + dr - 1, xx = b + ds - 1;
          if (yy >= 0 && yy < H && xx >= 0 && xx < W)
            acc += G(w->b[0][0], yy * W + xx) * G(w->b[0][1], dr * 3 + ds);
        }
      tt_set(w->ref[0][0], a * W + b, acc);
    }
}

/* C[i, j] = sum_k A[i, k] * B[k, j] with strided inputs (te_placeholder_strided): A declared
   strides [s0, s1] and passed as the transpose of a K x M array (strides {1, M}), B declared
   [rs, 1] and passed as a crop (columns 2 .. N + 2) of a K x (N + 3) array through byte_offset. */
static void strided_matmul_workload(workload *w, int64_t M, int64_t N, int64_t K) {
  static int64_t a_shape[2], a_strides[2], b_shape[2], b_strides[2];
  te_expr *s0 = te_var(tt_ctx, "s0"), *s1 = te_var(tt_ctx, "s1"), *rs = te_var(tt_ctx, "rs");
  te_tensor *A =
      TT_NN(te_placeholder_strided(tt_ctx, "A", TE_F32, 2, TE_EXPRS(I(M), I(K)), TE_EXPRS(s0, s1)));
  te_tensor *B = TT_NN(
      te_placeholder_strided(tt_ctx, "B", TE_F32, 2, TE_EXPRS(I(K), I(N)), TE_EXPRS(rs, I(1))));
  te_tensor *C = TT_NN(tt_matmul(A, B, M, N, K));
  *w = (workload){"strided_matmul",
                  2,
                  1,
                  {A, B, C},
                  0,
                  {0},
                  {C},
                  1,
                  C,
                  A,
                  NULL,
                  K,
                  LOOP_PRIMS | BIT(P_CACHE_READ) | BIT(P_CACHE_WRITE) | BIT(P_RFACTOR),
                  1,
                  {{0}},
                  {{0}},
                  {0},
                  false};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(K, M), TT_SHAPE(K, N + 3), TT_SHAPE(M, N)},
                (const int[]){2, 2, 2});
  tt_buf *a = w->b[0][0], *b = w->b[0][1];
  a_shape[0] = M, a_shape[1] = K, a_strides[0] = 1, a_strides[1] = M;
  b_shape[0] = K, b_shape[1] = N, b_strides[0] = N + 3, b_strides[1] = 1;
  a->dl.shape = a_shape, a->dl.strides = a_strides;
  b->dl.shape = b_shape, b->dl.strides = b_strides, b->dl.byte_offset = 2 * sizeof(float);
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += G(a, k * M + i) * G(b, k * (N + 3) + 2 + j);
      tt_set(w->ref[0][0], i * N + j, acc);
    }
}

/* A scan with a dependent axis, read by an element-wise consumer:
     S[t, i] = t < 1 ? X[t, i] : 0.5 S[t - 1, i] + 0.25 S[t - 1, min(i + 1, N - 1)] + X[t, i]
     Y[t, i] = S[t, i] * 2
   Random loop steps often break its order (t parallel, i outside t): te_parallel refuses some,
   te_build the others, with TE_ERR_SCHEDULE. */
static void scan_workload(workload *w, int64_t T, int64_t N) {
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(T, N));
  te_tensor *St = tt_placeholder("S", TE_F32, 2, TT_SHAPE(T, N));
  te_expr *t = te_var(tt_ctx, "t"), *i = te_var(tt_ctx, "i");
  te_expr *prev = te_sub(t, I(1));
  te_expr *update =
      te_add(te_add(te_mul(F(0.5), tt_at2(St, prev, i)),
                    te_mul(F(0.25), tt_at2(St, prev, te_min(te_add(i, I(1)), I(N - 1))))),
             tt_at2(X, t, i));
  te_tensor *S = TT_NN(te_scan(tt_ctx, "S", St, 0, 1, TE_EXPRS(t, i), tt_at2(X, t, i), update));
  te_expr *a = te_var(tt_ctx, "a"), *b = te_var(tt_ctx, "b");
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(I(T), I(N)), TE_EXPRS(a, b),
                                  te_mul(tt_at2(S, a, b), F(2))));
  *w = (workload){.name = "scan",
                  .nin = 1,
                  .nout = 1,
                  .t = {X, Y},
                  .stages = {S, Y},
                  .nstages = 2,
                  .cacheable = X,
                  .reader = S,
                  .reduce_len = T,
                  .must = LOOP_PRIMS | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT) | BIT(P_CACHE_READ),
                  .nvariants = 1};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(T, N), TT_SHAPE(T, N)}, (const int[]){2, 2});
  tt_buf *s = tt_alloc(TE_F32, 2, TT_SHAPE(T, N));
  for (int64_t p = 0; p < T; p++)
    for (int64_t q = 0; q < N; q++) {
      double x = G(w->b[0][0], p * N + q);
      double v = p == 0 ? x
                        : 0.5 * G(s, (p - 1) * N + q) +
                              0.25 * G(s, (p - 1) * N + (q + 1 < N ? q + 1 : N - 1)) + x;
      tt_set(s, p * N + q, v);
      tt_set(w->ref[0][0], p * N + q, 2 * v);
    }
}

/* The extern stage's function: out = in0 x in1 (compact row-major f32), 1 when a DLTensor is
   not what te promises (any rank, dtype, device or stride wrong). Thread-safe: a random
   schedule may compute the stage inside a parallel loop. */
static int extern_matmul(int32_t nin, const DLTensor *const in[], DLTensor *out) {
  const DLTensor *t[3] = {in[0], in[1], out};
  for (int a = 0; a < 3; a++) {
    if (nin != 2 || t[a]->ndim != 2 || t[a]->dtype.code != kDLFloat || t[a]->dtype.bits != 32 ||
        t[a]->device.device_type != kDLCPU || t[a]->byte_offset != 0 || !t[a]->strides ||
        t[a]->strides[1] != 1 || t[a]->strides[0] != t[a]->shape[1])
      return 1;
  }
  int64_t M = in[0]->shape[0], K = in[0]->shape[1], N = in[1]->shape[1];
  if (in[1]->shape[0] != K || out->shape[0] != M || out->shape[1] != N)
    return 1;
  const float *x = in[0]->data, *y = in[1]->data;
  float *z = out->data;
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (double)x[m * K + k] * y[k * N + n];
      z[m * N + n] = (float)acc;
    }
  return 0;
}

/* An extern stage between te stages: P = 2 A + 1; E = extern_matmul(P, B); Y = max(E, 0) / 2.
   Loop primitives on E, inlining P or E and a padded P are refused (TE_ERR_SCHEDULE); E and P
   may be computed at Y's loops (E whole there). */
static void extern_workload(workload *w, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_tensor *P = TT_NN(te_compute(tt_ctx, "P", 2, TE_EXPRS(I(M), I(K)), TE_EXPRS(i, j),
                                  te_add(te_mul(tt_at2(A, i, j), F(2)), F(1))));
  te_tensor *E = TT_NN(te_extern(tt_ctx, "E", TE_F32, 2, TE_EXPRS(I(M), I(N)), 2, TT_TENSORS(P, B),
                                 extern_matmul, "extern_matmul"));
  te_tensor *Y = TT_NN(te_compute(tt_ctx, "Y", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_mul(te_max(tt_at2(E, i, j), F(0)), F(0.5))));
  *w = (workload){.name = "extern",
                  .nin = 2,
                  .nout = 1,
                  .t = {A, B, Y},
                  .stages = {P, E, Y},
                  .nstages = 3,
                  .cacheable = A,
                  .reader = P,
                  .reduce_len = K,
                  .must = LOOP_PRIMS | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT) | BIT(P_CACHE_READ),
                  .nvariants = 1};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(K, N), TT_SHAPE(M, N)},
                (const int[]){2, 2, 2});
  for (int64_t m = 0; m < M; m++)
    for (int64_t n = 0; n < N; n++) {
      double acc = 0;
      for (int64_t k = 0; k < K; k++)
        acc += (G(w->b[0][0], m * K + k) * 2 + 1) * G(w->b[0][1], k * N + n);
      tt_set(w->ref[0][0], m * N + n, (acc > 0 ? acc : 0) * 0.5);
    }
}

/* C[i, j] = alpha * sum_k A[i, k] * B[k, j] + C0[i, j]: the sum is lifted into C_red0. */
static void lifted_workload(workload *w, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", TE_F32, 2, TT_SHAPE(K, N));
  te_tensor *C0 = tt_placeholder("C0", TE_F32, 2, TT_SHAPE(M, N));
  te_expr *alpha = te_param(tt_ctx, "alpha", TE_F32);
  te_expr *i = te_var(tt_ctx, "i"), *j = te_var(tt_ctx, "j");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(0), I(K));
  te_expr *sum = TE_SUM(te_mul(tt_at2(A, i, k), tt_at2(B, k, j)), k);
  te_tensor *C = TT_NN(te_compute(tt_ctx, "C", 2, TE_EXPRS(I(M), I(N)), TE_EXPRS(i, j),
                                  te_add(te_mul(alpha, sum), tt_at2(C0, i, j))));
  te_tensor *R = TT_NN(te_lifted_reduction(C, 0));
  *w = (workload){.name = "lifted",
                  .nin = 3,
                  .nout = 1,
                  .t = {A, B, C0, C},
                  .ns = 1,
                  .scalars = {alpha},
                  .stages = {R, C},
                  .nstages = 2,
                  .reduction = R,
                  .cacheable = A,
                  .reader = R,
                  .reduce_len = K,
                  .must = LOOP_PRIMS | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT) | BIT(P_CACHE_READ) |
                          BIT(P_CACHE_WRITE) | BIT(P_RFACTOR),
                  .nvariants = 1,
                  .alpha = {1.5f},
                  .keep_default = true};
  alloc_variant(w, 0,
                (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(K, N), TT_SHAPE(M, N), TT_SHAPE(M, N)},
                (const int[]){2, 2, 2, 2});
  for (int64_t a = 0; a < M; a++)
    for (int64_t b = 0; b < N; b++) {
      double acc = 0;
      for (int64_t r = 0; r < K; r++)
        acc += G(w->b[0][0], a * K + r) * G(w->b[0][1], r * N + b);
      tt_set(w->ref[0][0], a * N + b, 1.5 * acc + G(w->b[0][2], a * N + b));
    }
}

/* D[i] = X[i, 0] + sum_{k in [1, K)} X[i, k] * sum_l Y[k, l] * Z[i, l]: D_red1[i, k] (the inner
   sum) is read by D_red0[i] (the outer), read by D. */
static void nested_lifted_workload(workload *w, int64_t M, int64_t K, int64_t L) {
  te_tensor *X = tt_placeholder("X", TE_F32, 2, TT_SHAPE(M, K));
  te_tensor *Y = tt_placeholder("Y", TE_F32, 2, TT_SHAPE(K, L));
  te_tensor *Z = tt_placeholder("Z", TE_F32, 2, TT_SHAPE(M, L));
  te_expr *i = te_var(tt_ctx, "i");
  te_expr *k = te_reduce_axis(tt_ctx, "k", I(1), I(K - 1));
  te_expr *l = te_reduce_axis(tt_ctx, "l", I(0), I(L));
  te_expr *inner = TE_SUM(te_mul(tt_at2(Y, k, l), tt_at2(Z, i, l)), l);
  te_expr *outer = TE_SUM(te_mul(tt_at2(X, i, k), inner), k);
  te_tensor *D = TT_NN(
      te_compute(tt_ctx, "D", 1, TE_EXPRS(I(M)), TE_EXPRS(i), te_add(tt_at2(X, i, I(0)), outer)));
  te_tensor *R0 = TT_NN(te_lifted_reduction(D, 0)), *R1 = TT_NN(te_lifted_reduction(D, 1));
  *w = (workload){.name = "nested_lifted",
                  .nin = 3,
                  .nout = 1,
                  .t = {X, Y, Z, D},
                  .stages = {R1, R0, D},
                  .nstages = 3,
                  .reduction = R1,
                  .cacheable = Z,
                  .reader = R1,
                  .reduce_len = K * L,
                  .must = LOOP_PRIMS | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT) | BIT(P_RFACTOR),
                  .nvariants = 1,
                  .keep_default = true};
  alloc_variant(w, 0,
                (const int64_t *[]){TT_SHAPE(M, K), TT_SHAPE(K, L), TT_SHAPE(M, L), TT_SHAPE(M)},
                (const int[]){2, 2, 2, 1});
  for (int64_t a = 0; a < M; a++) {
    double acc = 0;
    for (int64_t q = 1; q < K; q++) {
      double in = 0;
      for (int64_t r = 0; r < L; r++)
        in += G(w->b[0][1], q * L + r) * G(w->b[0][2], a * L + r);
      acc += G(w->b[0][0], a * K + q) * in;
    }
    tt_set(w->ref[0][0], a, G(w->b[0][0], a * K) + acc);
  }
}

#endif
