/* test_random_schedules.c — property test: every legal schedule computes the function its
 * definition says, checked against a plain C evaluation of that definition.
 *
 * Workloads (each with a C reference written out by hand below): matmul; a producer feeding a
 * reduction; a two-stage stencil; a sum over two axes; symbolic shapes with a scalar parameter
 * (one kernel called at two sizes); integer ops feeding an f64 contraction; an i32 matmul
 * (exact); a multi-output element-wise stage read by a custom argmax reducer with two outputs;
 * a zero-padding stage written with te_if_then_else under a 3x3 convolution. On each, random
 * sequences of primitives are applied with random arguments (split, split_nparts, tile, fuse,
 * reorder, unroll, parallel, vectorize, set_tail, pragma unroll_max_step/prefetch,
 * compute_inline/root/at, cache_read, cache_write, rfactor, reorder_storage) at a random
 * parallel thread count. A primitive may refuse its arguments: the step is then skipped and its
 * error cleared, so what remains is a legal schedule; te_build may still refuse it with
 * TE_ERR_SCHEDULE (a vectorized loop without a constant extent) and a message. A schedule that
 * builds must give the reference's numbers (outputs poisoned before every call), and its trace,
 * replayed on a fresh schedule, must lower to the same IR.
 *
 * Accepted steps are counted per primitive: each workload names the primitives it must see
 * accepted at least once, so a change that made a primitive refuse everything fails here
 * instead of comparing default schedules with themselves. A GPU test binds random splits to
 * blocks and threads and runs them on Vulkan (Mesa's lavapipe without a GPU).
 *
 * Seeds: a fixed corpus (the same every run) and a few cases from a run seed that changes every
 * run; TE_RANDOM_SCHEDULES_SEED=N fixes the run seed, TE_RANDOM_SCHEDULES_CASES=N sets the
 * number of run-seed cases per workload (a longer search). Every failure prints the case's
 * seed, the run seed and the trace; TE_RANDOM_SCHEDULES_VERBOSE=1 prints each refusal, and each
 * trace before it runs (a crash loses the note). Under AddressSanitizer the fixed corpus is smaller
 * and the counts are only printed.
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <criterion/hooks.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "te_test.h"

/* Under AddressSanitizer (several times slower) a prefix of the corpus runs; too few cases to
   promise that every primitive gets accepted, so the counts are printed but not required there
   (the RelWithDebInfo suite requires them). */
#if defined(__SANITIZE_ADDRESS__)
#define FIXED_CASES 16
#define RUN_CASES 2
#define GPU_CASES 3
#define REQUIRE_COUNTS 0
#else
#define FIXED_CASES 40
#define RUN_CASES 10
#define GPU_CASES 8
#define REQUIRE_COUNTS 1
#endif

TestSuite(random_schedules, .init = tt_setup, .fini = tt_teardown, .timeout = 280);

/* ---------------------------------------------------------------- seeds */

/* splitmix64: consecutive draws are independent (an LCG's high bits made a cache_write and the
   next draw's cache_read coincide). */
static uint64_t rng_state;
static uint32_t rnd(uint32_t n) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  z ^= z >> 31;
  return (uint32_t)(z % (n ? n : 1));
}

/* The run seed: chosen once per run by the runner process, before the tests (each in a
   process of its own) start, and passed to them in the environment. */
ReportHook(PRE_ALL)(struct criterion_test_set *tests) {
  (void)tests;
  const char *env = getenv("TE_RANDOM_SCHEDULES_SEED");
  if (!env || !*env) {
    char buf[32];
    snprintf(buf, sizeof buf, "%llu",
             (unsigned long long)((((uint64_t)time(NULL) * 1000003u) ^ ((uint64_t)getpid() << 16)) %
                                  1000000007u));
    setenv("TE_RANDOM_SCHEDULES_SEED", buf, 1);
  }
  fprintf(stderr, "random_schedules: run seed %s (TE_RANDOM_SCHEDULES_SEED=%s repeats this run)\n",
          getenv("TE_RANDOM_SCHEDULES_SEED"), getenv("TE_RANDOM_SCHEDULES_SEED"));
}

static uint64_t run_seed(void) {
  const char *env = getenv("TE_RANDOM_SCHEDULES_SEED");
  return env && *env ? strtoull(env, NULL, 10) : 1;
}

static int run_cases(void) {
  const char *env = getenv("TE_RANDOM_SCHEDULES_CASES");
  return env && *env ? atoi(env) : RUN_CASES;
}

/* ---------------------------------------------------------------- counting primitives */

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
  P_COUNT
};
static const char *const prim_name[P_COUNT] = {
    "split",      "split_nparts", "tile",        "fuse",    "reorder",         "unroll",
    "parallel",   "vectorize",    "set_tail",    "pragma",  "compute_inline",  "compute_root",
    "compute_at", "cache_read",   "cache_write", "rfactor", "reorder_storage", "bind"};
#define BIT(p) (1u << (p))
#define LOOP_PRIMS                                                                                 \
  (BIT(P_SPLIT) | BIT(P_SPLIT_NPARTS) | BIT(P_TILE) | BIT(P_FUSE) | BIT(P_REORDER) |               \
   BIT(P_UNROLL) | BIT(P_PARALLEL) | BIT(P_VECTORIZE) | BIT(P_SET_TAIL) | BIT(P_PRAGMA))
#define PLACE_PRIMS (BIT(P_COMPUTE_INLINE) | BIT(P_COMPUTE_ROOT) | BIT(P_COMPUTE_AT))

/* Per test (Criterion runs each test in its own process). */
static int accepted[P_COUNT], tried[P_COUNT];
static int cases_built, cases_refused;

/* Applies a primitive's result: a refusal must be a user error with a message; it is cleared
   (the step is skipped). */
static void step(enum prim p, te_status s) {
  tried[p]++;
  if (s == TE_OK) {
    accepted[p]++;
    return;
  }
  cr_assert(s != TE_ERR_INTERNAL && s != TE_ERR_CODEGEN && *te_last_error(tt_ctx),
            "[%s] te_%s refused with %s: '%s'", tt_note_text(), prim_name[p], te_status_str(s),
            te_last_error(tt_ctx));
  if (getenv("TE_RANDOM_SCHEDULES_VERBOSE"))
    fprintf(stderr, "  refused: %s\n", te_last_error(tt_ctx));
  te_clear_error(tt_ctx);
}

/* Every primitive of `must` was accepted at least once; prints the counts. */
static void check_counts(const char *name, unsigned must) {
  char line[1024];
  size_t k = (size_t)snprintf(line, sizeof line,
                              "random_schedules %s: %d built, %d refused by "
                              "te_build; accepted/tried:",
                              name, cases_built, cases_refused);
  for (int p = 0; p < P_COUNT && k < sizeof line; p++)
    if (tried[p])
      k += (size_t)snprintf(line + k, sizeof line - k, " %s %d/%d", prim_name[p], accepted[p],
                            tried[p]);
  printf("%s\n", line);
  fflush(stdout);
  for (int p = 0; p < P_COUNT && REQUIRE_COUNTS; p++)
    if (must & BIT(p))
      cr_expect(accepted[p] > 0, "%s: te_%s was never accepted (%d tries)", name, prim_name[p],
                tried[p]);
  cr_expect(cases_built >= 2 * cases_refused, "%s: te_build refused %d of %d schedules", name,
            cases_refused, cases_built + cases_refused);
}

/* ---------------------------------------------------------------- workloads */

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
  float alpha[2]; /* scalar parameter values (f32) */
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

/* C[i, j] = sum_k A[i, k] * B[k, j] in f32 or i32. */
static void matmul_workload(workload *w, te_dtype dt, int64_t M, int64_t N, int64_t K) {
  te_tensor *A = tt_placeholder("A", dt, 2, TT_SHAPE(M, K));
  te_tensor *B = tt_placeholder("B", dt, 2, TT_SHAPE(K, N));
  te_tensor *C = TT_NN(tt_matmul(A, B, M, N, K));
  *w = (workload){dt.code == kDLFloat ? "matmul" : "int_matmul",
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
                  {0}};
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
                  {0}};
  alloc_variant(w, 0, (const int64_t *[]){TT_SHAPE(M, N), TT_SHAPE(N), TT_SHAPE(M)},
                (const int[]){2, 1, 1});
  for (int64_t a = 0; a < M; a++) {
    double s = 0;
    for (int64_t b = 0; b < N; b++)
      s += ((float)G(w->b[0][0], a * N + b) * 2.0f + 1.0f) * G(w->b[0][1], b);
    tt_set(w->ref[0][0], a, s);
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
                  {0}};
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
                  {0}};
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
                      BIT(P_CACHE_WRITE),
                  2,
                  {{0}},
                  {{0}},
                  {1.5f, -0.75f}};
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
                  {0}};
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
  *w = (workload){"argmax", 1,    2, {A, out[0], out[1]},      0, {0},   {P[0], out[0]}, 2,  out[0],
                  A,        P[0], 1, LOOP_PRIMS | PLACE_PRIMS, 1, {{0}}, {{0}},          {0}};
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
                  {0}};
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

/* ---------------------------------------------------------------- random CPU schedules */

static void random_loop_steps(te_stage *st, int nsteps) {
  for (int k = 0; k < nsteps; k++) {
    int n = te_leaf_count(st);
    te_iter *l = te_leaf(st, (int)rnd((uint32_t)n));
    switch (rnd(12)) {
    case 0:
      step(P_SET_TAIL, te_set_tail(st, l, rnd(2) ? TE_TAIL_SHIFT_INWARDS : TE_TAIL_ROUND_UP));
      step(P_SPLIT, te_split(st, l, 1 + rnd(9), NULL, NULL));
      break;
    case 1:
      step(P_SPLIT, te_split(st, l, 1 + rnd(9), NULL, NULL));
      break;
    case 2:
      step(P_SPLIT_NPARTS, te_split_nparts(st, l, 1 + rnd(4), NULL, NULL));
      break;
    case 3:
      if (n >= 2) {
        int p = (int)rnd((uint32_t)n - 1);
        step(P_FUSE, te_fuse(st, te_leaf(st, p), te_leaf(st, p + 1), NULL));
      }
      break;
    case 4: {
      te_iter *perm[64];
      for (int i = 0; i < n; i++)
        perm[i] = te_leaf(st, i);
      for (int i = n - 1; i > 0; i--) {
        int j = (int)rnd((uint32_t)i + 1);
        te_iter *t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
      }
      step(P_REORDER, te_reorder(st, n, perm));
      break;
    }
    case 5:
      step(P_UNROLL, te_unroll(st, l));
      break;
    case 6:
      step(P_PARALLEL, te_parallel(st, l));
      break;
    case 7:
      step(P_VECTORIZE, te_vectorize(st, l));
      break;
    case 8:
      step(P_PRAGMA, te_pragma(st, l, rnd(2) ? "prefetch" : "unroll_max_step", 1 + rnd(8)));
      break;
    case 9:
      step(P_SET_TAIL, te_set_tail(st, l, (te_tail)rnd(3)));
      break;
    default:
      if (n >= 2) {
        te_iter *a = te_leaf(st, (int)rnd((uint32_t)n)), *b = te_leaf(st, (int)rnd((uint32_t)n));
        step(P_TILE, te_tile(st, a, b, 1 + rnd(6), 1 + rnd(6), NULL, NULL, NULL, NULL));
      }
    }
  }
}

/* A random placement for a producer stage read by consumer. */
static void random_placement(te_stage *producer, te_stage *consumer) {
  switch (rnd(4)) {
  case 0:
    step(P_COMPUTE_INLINE, te_compute_inline(producer));
    break;
  case 1:
    step(P_COMPUTE_ROOT, te_compute_root(producer));
    break;
  default: {
    int n = te_leaf_count(consumer);
    step(P_COMPUTE_AT, te_compute_at(producer, consumer, te_leaf(consumer, (int)rnd((uint32_t)n))));
  }
  }
}

/* Sometimes a random storage order for t's buffer (refused, and skipped, for outputs). */
static void random_storage(te_schedule *s, te_tensor *t) {
  if (!t || rnd(3) != 0)
    return;
  te_stage *st = te_stage_of(s, t);
  int n = te_tensor_ndim(t);
  if (!st || n < 2) {
    te_clear_error(tt_ctx);
    return;
  }
  te_iter *dims[8];
  for (int i = 0; i < n; i++)
    dims[i] = te_axis(st, i);
  for (int i = n - 1; i > 0; i--) { /* Fisher-Yates */
    int j = (int)rnd((uint32_t)i + 1);
    te_iter *x = dims[i];
    dims[i] = dims[j];
    dims[j] = x;
  }
  step(P_REORDER_STORAGE, te_reorder_storage(st, n, dims));
}

static te_schedule *new_schedule(workload *w) {
  te_schedule *s = te_schedule_new(tt_ctx, w->nout, w->t + w->nin);
  cr_assert(s, "te_schedule_new: %s", te_last_error(tt_ctx));
  return s;
}

static void random_schedule(workload *w, te_schedule *s) {
  te_tensor *out = w->stages[w->nstages - 1];
  te_stage *reader = tt_stage(s, w->reader ? w->reader : out);
  te_tensor *written = NULL, *read = NULL;
  /* cache_read first: after a cache_write the output stage reads the write cache, not inputs */
  if (w->cacheable && rnd(4) == 0)
    step(P_CACHE_READ, te_cache_read(s, w->cacheable, TE_SCOPE_LOCAL, 1, &reader, &read));
  if (rnd(5) == 0)
    step(P_CACHE_WRITE,
         te_cache_write(s, out, rnd(2) ? TE_SCOPE_LOCAL : TE_SCOPE_GLOBAL, &written));
  random_storage(s, written);
  random_storage(s, read);
  for (int i = 0; i < w->nstages; i++)
    random_storage(s, w->stages[i]);
  if (w->reduction && rnd(4) == 0) {
    te_stage *sr = te_stage_of(s, w->reduction);
    int n = te_leaf_count(sr);
    step(P_SPLIT, te_split(sr, te_leaf(sr, (int)rnd((uint32_t)n)), 1 + rnd(5), NULL, NULL));
    n = te_leaf_count(sr);
    step(P_RFACTOR, te_rfactor(s, w->reduction, te_leaf(sr, (int)rnd((uint32_t)n)), 0, NULL));
  }
  /* every stage of the schedule gets loop steps; producers then a placement */
  for (int i = w->nstages - 1; i >= 0; i--) {
    te_stage *st = te_stage_of(s, w->stages[i]);
    if (st)
      random_loop_steps(st, (int)rnd(6));
    te_clear_error(tt_ctx);
  }
  for (int i = w->nstages - 2; i >= 0; i--) {
    te_stage *p = te_stage_of(s, w->stages[i]), *c = te_stage_of(s, w->stages[i + 1]);
    if (p && c)
      random_placement(p, c);
    te_clear_error(tt_ctx);
  }
}

/* ---------------------------------------------------------------- checking a schedule */

/* The trace of s replays on a fresh schedule of the same computation to the same loop IR. */
static void check_replay(workload *w, te_schedule *s, const char *trace) {
  te_schedule *s2 = new_schedule(w);
  TT_OK(te_schedule_replay(s2, trace));
  char *t2 = te_schedule_trace(s2);
  cr_assert(t2 && !strcmp(trace, t2), "[%s] the replayed schedule's trace differs:\n%s",
            tt_note_text(), t2);
  te_free(t2);
  char *a = te_lower_text(s, w->nin + w->nout, w->t, w->ns, w->scalars);
  te_status sa = te_last_status(tt_ctx);
  te_clear_error(tt_ctx);
  char *b = te_lower_text(s2, w->nin + w->nout, w->t, w->ns, w->scalars);
  te_status sb = te_last_status(tt_ctx);
  te_clear_error(tt_ctx);
  cr_assert(sa == sb && (a == NULL) == (b == NULL),
            "[%s] replay lowers with %s, the schedule with %s", tt_note_text(), te_status_str(sb),
            te_status_str(sa));
  cr_assert(!a || !strcmp(a, b), "[%s] the replayed schedule lowers to other IR:\n%s\n--- vs\n%s",
            tt_note_text(), a, b);
  te_free(a);
  te_free(b);
}

/* Builds s for target (NULL: the host), runs it at every size variant with the outputs
   poisoned and compares each output with the reference; a build refusal is counted. */
static void build_and_compare(workload *w, te_schedule *s, te_target *target, const char *kernel) {
  te_module *m = NULL;
  te_status st = te_build(s, kernel, w->nin + w->nout, w->t, w->ns, w->scalars,
                          target ? target : tt_target(), &m);
  if (st != TE_OK) {
    cr_assert(st == TE_ERR_SCHEDULE && *te_last_error(tt_ctx),
              "[%s] te_build refused an accepted schedule with %s: %s", tt_note_text(),
              te_status_str(st), te_last_error(tt_ctx));
    cases_refused++;
    te_clear_error(tt_ctx);
    return;
  }
  cases_built++;
  for (int v = 0; v < w->nvariants; v++) {
    for (int o = 0; o < w->nout; o++)
      tt_poison(w->b[v][w->nin + o]);
    const void *values[2] = {&w->alpha[v], NULL};
    DLTensor *dl[8];
    tt_dl(w->nin + w->nout, w->b[v], dl);
    st = te_module_call(m, kernel, w->nin + w->nout, dl, w->ns, values);
    if (st == TE_ERR_RUNTIME && strstr(te_last_error(tt_ctx), "no Vulkan driver")) {
      printf("SKIP random_schedules %s: %s\n", w->name, te_last_error(tt_ctx));
      fflush(stdout);
      cr_skip_test("no Vulkan driver");
    }
    cr_assert(st == TE_OK, "[%s] the kernel failed: %s", tt_note_text(), te_last_error(tt_ctx));
    for (int o = 0; o < w->nout; o++)
      tt_assert_close(w->b[v][w->nin + o], w->ref[v][o], w->reduce_len);
  }
}

static void random_case(workload *w, uint64_t seed) {
  rng_state = seed * 2654435761ULL + 12345;
  int threads = 1 + (int)rnd(4);
  te_set_num_threads(threads);
  te_schedule *s = new_schedule(w);
  random_schedule(w, s);
  char *trace = te_schedule_trace(s);
  if (getenv("TE_RANDOM_SCHEDULES_VERBOSE"))
    fprintf(stderr, "%s seed %llu, %d threads:\n%s", w->name, (unsigned long long)seed, threads,
            trace ? trace : "?");
  tt_note("workload %s, seed %llu (run seed %llu), %d threads, trace:\n%s", w->name,
          (unsigned long long)seed, (unsigned long long)run_seed(), threads, trace ? trace : "?");
  build_and_compare(w, s, NULL, "k");
  check_replay(w, s, trace);
  te_free(trace);
  te_set_num_threads(0);
}

/* The fixed corpus (seeds base+1 .. base+FIXED_CASES), then cases from the run seed. */
static void run_workload(workload *w, uint64_t base) {
  for (uint64_t k = 1; k <= FIXED_CASES; k++)
    random_case(w, base + k);
  uint64_t r = run_seed();
  for (int k = 0; k < run_cases(); k++)
    random_case(w, (r * 7919u + base) * 131u + (uint64_t)k);
  check_counts(w->name, w->must);
}

Test(random_schedules, matmul) {
  workload w;
  matmul_workload(&w, TE_F32, 13, 17, 11);
  run_workload(&w, 0);
}

Test(random_schedules, producer_reduction) {
  workload w;
  producer_workload(&w, 9, 14);
  run_workload(&w, 1000);
}

Test(random_schedules, blur) {
  workload w;
  blur_workload(&w, 11, 19);
  run_workload(&w, 2000);
}

Test(random_schedules, sum_two_axes) {
  workload w;
  sum2_workload(&w, 5, 7, 6);
  run_workload(&w, 3000);
}

Test(random_schedules, symbolic_shapes_and_parameter) {
  workload w;
  symbolic_workload(&w);
  run_workload(&w, 4000);
}

Test(random_schedules, int_ops_into_f64) {
  workload w;
  int_f64_workload(&w, 7, 6, 9);
  run_workload(&w, 5000);
}

Test(random_schedules, int32_matmul) {
  workload w;
  matmul_workload(&w, TE_I32, 6, 5, 9);
  run_workload(&w, 6000);
}

Test(random_schedules, multi_output_custom_reducer) {
  workload w;
  argmax_workload(&w, 7, 10);
  run_workload(&w, 7000);
}

Test(random_schedules, if_then_else_padding) {
  workload w;
  pad_conv_workload(&w, 8, 11);
  run_workload(&w, 8000);
}

/* ---------------------------------------------------------------- GPU bindings (Vulkan) */

/* Binds the data loops of a stage: fused or not, split by a random power of two, outer loops to
   blocks and inner ones to threads; a reduction stays a serial loop in each thread. */
static void random_binding(te_stage *st, int ndata) {
  te_iter *x = te_axis(st, 0), *y = ndata >= 2 ? te_axis(st, 1) : NULL;
  if (y && rnd(2)) {
    te_iter *f = NULL;
    step(P_FUSE, te_fuse(st, x, y, &f));
    x = f ? f : x;
    y = f ? NULL : y;
  }
  te_iter *xo = NULL, *xi = NULL, *yo = NULL, *yi = NULL;
  step(P_SPLIT, te_split(st, x, (int64_t)1 << rnd(6), &xo, &xi));
  if (y)
    step(P_SPLIT, te_split(st, y, (int64_t)1 << rnd(4), &yo, &yi));
  if (xo && yo)
    step(P_REORDER, te_reorder(st, 4, (te_iter *const[]){xo, yo, xi, yi}));
  if (xo)
    step(P_BIND, te_bind(st, xo, TE_BLOCK_X));
  if (xi)
    step(P_BIND, te_bind(st, xi, TE_THREAD_X));
  if (yo)
    step(P_BIND, te_bind(st, yo, TE_BLOCK_Y));
  if (yi)
    step(P_BIND, te_bind(st, yi, TE_THREAD_Y));
  if (rnd(2) && te_leaf_count(st) > 4)
    step(P_UNROLL, te_unroll(st, te_leaf(st, te_leaf_count(st) - 1)));
}

static void gpu_case(workload *w, te_target *vk, uint64_t seed) {
  rng_state = seed * 2654435761ULL + 777;
  te_schedule *s = new_schedule(w);
  te_tensor *out = w->stages[w->nstages - 1];
  random_binding(tt_stage(s, out), te_tensor_ndim(out));
  for (int i = w->nstages - 2; i >= 0; i--) { /* producers: inlined or their own kernel */
    te_stage *p = tt_stage(s, w->stages[i]);
    if (rnd(2))
      step(P_COMPUTE_INLINE, te_compute_inline(p));
    else
      random_binding(p, te_tensor_ndim(w->stages[i]));
  }
  char *trace = te_schedule_trace(s);
  tt_note("vulkan workload %s, seed %llu, trace:\n%s", w->name, (unsigned long long)seed,
          trace ? trace : "?");
  build_and_compare(w, s, vk, "g");
  check_replay(w, s, trace);
  te_free(trace);
}

Test(random_schedules, gpu_bindings_on_vulkan) {
  te_target *vk = TT_NN(te_target_parse(tt_ctx, "vulkan"));
  workload mm, blur;
  matmul_workload(&mm, TE_F32, 9, 21, 7);
  blur_workload(&blur, 6, 37);
  uint64_t r = run_seed();
  for (int k = 1; k <= GPU_CASES; k++) {
    gpu_case(&mm, vk, 9000 + (uint64_t)k);
    gpu_case(&blur, vk, 9500 + (uint64_t)k);
  }
  gpu_case(&mm, vk, r);
  gpu_case(&blur, vk, r + 1);
  check_counts("vulkan", BIT(P_BIND) | BIT(P_SPLIT) | BIT(P_FUSE) | BIT(P_COMPUTE_INLINE));
}
