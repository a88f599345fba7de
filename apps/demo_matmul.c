/* demo_matmul.c — te's walking skeleton, end to end, through the public C API only.
 *
 * C[i, j] = sum_k A[i, k] * B[k, j] with M = N = K = 512 in f32, compiled twice: with the default
 * schedule (loops i, j, k in definition order) and with a hand schedule (32x32 tiles of i and j,
 * k split by 4, loops ordered i.o, j.o, k.o, i.i, k.i, j.i). Each kernel runs on random non-zero
 * inputs with its output poisoned (NaN) before every run, is checked against a plain C triple
 * loop, and is timed (median of 5 runs). Then the lowered IR of the scheduled version is printed.
 * Exit status 0 when everything ran and matched, 1 otherwise (with te's message).
 */
#define _POSIX_C_SOURCE 200809L

#include <te/te.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { M = 512, N = 512, K = 512, REPS = 5 };

/* The computation: placeholders A, B and the output C. */
typedef struct matmul {
  te_tensor *a, *b, *c;
} matmul;

/* Host buffers with their DLTensor views, and the plain C reference. */
typedef struct buffers {
  float *a, *b, *c;
  double *ref, *ref_abs; /* exact-ish result, and sum of |A*B| for a tolerance that scales */
  int64_t shape_a[2], shape_b[2], shape_c[2];
  DLTensor ta, tb, tc;
} buffers;

static void fail(te_ctx *ctx, const char *what) {
  fprintf(stderr, "te-demo: %s failed: %s (%s)\n", what, te_last_error(ctx),
          te_status_str(te_last_status(ctx)));
  te_ctx_free(ctx);
  exit(1);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static matmul define_matmul(te_ctx *ctx) {
  matmul mm;
  te_expr *m = te_int(ctx, M), *n = te_int(ctx, N), *k_ext = te_int(ctx, K);
  te_expr *i = te_var(ctx, "i"), *j = te_var(ctx, "j");
  te_expr *k = te_reduce_axis(ctx, "k", te_int(ctx, 0), k_ext);
  mm.a = te_placeholder(ctx, "A", TE_F32, 2, TE_EXPRS(m, k_ext));
  mm.b = te_placeholder(ctx, "B", TE_F32, 2, TE_EXPRS(k_ext, n));
  te_expr *body = TE_SUM(te_mul(TE_AT(mm.a, i, k), TE_AT(mm.b, k, j)), k);
  mm.c = te_compute(ctx, "C", 2, TE_EXPRS(m, n), TE_EXPRS(i, j), body);
  if (!mm.c) /* sticky errors: one check covers every call above */
    fail(ctx, "defining the matmul");
  return mm;
}

/* Hand schedule: tile i, j by 32x32, split k by 4, order i.o j.o k.o i.i k.i j.i. */
static void hand_schedule(te_ctx *ctx, te_schedule *s, const matmul *mm) {
  te_stage *st = te_stage_of(s, mm->c);
  te_iter *io, *jo, *ii, *ji, *ko, *ki;
  if (!st || te_tile(st, te_axis(st, 0), te_axis(st, 1), 32, 32, &io, &jo, &ii, &ji) != TE_OK ||
      te_split(st, te_reduce_iter(st, 0), 4, &ko, &ki) != TE_OK ||
      te_reorder(st, 6, (te_iter *const[]){io, jo, ko, ii, ki, ji}) != TE_OK)
    fail(ctx, "scheduling");
}

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

/* A random value in [-1, -0.1] or [0.1, 1]: never zero, so a kernel that skips work shows. */
static float rand_nonzero(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  double u = (double)(rng_state >> 11) / 9007199254740992.0; /* [0, 1) */
  double mag = 0.1 + 0.9 * u;
  return (float)((rng_state & 1) ? mag : -mag);
}

static void make_tensor(DLTensor *t, void *data, int64_t *shape, int64_t rows, int64_t cols) {
  shape[0] = rows;
  shape[1] = cols;
  memset(t, 0, sizeof *t);
  t->data = data;
  t->device = (DLDevice){kDLCPU, 0};
  t->ndim = 2;
  t->dtype = (DLDataType){kDLFloat, 32, 1};
  t->shape = shape;
  t->strides = NULL; /* compact row-major */
}

static void reference(buffers *b) {
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      double sum = 0, abs_sum = 0;
      for (int k = 0; k < K; k++) {
        double p = (double)b->a[i * K + k] * (double)b->b[k * N + j];
        sum += p;
        abs_sum += fabs(p);
      }
      b->ref[i * N + j] = sum;
      b->ref_abs[i * N + j] = abs_sum;
    }
}

static int buffers_init(buffers *b) {
  memset(b, 0, sizeof *b);
  b->a = malloc(sizeof(float) * M * K);
  b->b = malloc(sizeof(float) * K * N);
  b->c = malloc(sizeof(float) * M * N);
  b->ref = malloc(sizeof(double) * M * N);
  b->ref_abs = malloc(sizeof(double) * M * N);
  if (!b->a || !b->b || !b->c || !b->ref || !b->ref_abs)
    return 0;
  for (int x = 0; x < M * K; x++)
    b->a[x] = rand_nonzero();
  for (int x = 0; x < K * N; x++)
    b->b[x] = rand_nonzero();
  make_tensor(&b->ta, b->a, b->shape_a, M, K);
  make_tensor(&b->tb, b->b, b->shape_b, K, N);
  make_tensor(&b->tc, b->c, b->shape_c, M, N);
  reference(b);
  return 1;
}

static void buffers_free(buffers *b) {
  free(b->a);
  free(b->b);
  free(b->c);
  free(b->ref);
  free(b->ref_abs);
}

/* Relative tolerance 1e-4 of the sum of |A*B| (so cancellation does not make it meaningless). */
static int check(const buffers *b, const char *label) {
  for (int x = 0; x < M * N; x++) {
    double err = fabs((double)b->c[x] - b->ref[x]);
    if (!(err <= 1e-4 * b->ref_abs[x])) { /* NaN (an element never written) fails too */
      fprintf(stderr, "te-demo: %s: wrong result at C[%d, %d]: got %g, expected %g\n", label, x / N,
              x % N, (double)b->c[x], b->ref[x]);
      return 0;
    }
  }
  return 1;
}

static int cmp_double(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* Build s into a kernel, run it REPS times (output poisoned before each run, checked after), and
   print the median time and GFLOP/s. Returns 1 on success. */
static int run_variant(te_ctx *ctx, te_target *target, te_schedule *s, const matmul *mm, buffers *b,
                       const char *label) {
  te_module *mod = NULL;
  if (te_build(s, "matmul", 3, (te_tensor *const[]){mm->a, mm->b, mm->c}, 0, NULL, target, &mod) !=
      TE_OK)
    fail(ctx, "te_build");
  DLTensor *args[3] = {&b->ta, &b->tb, &b->tc};
  double times[REPS];
  for (int r = 0; r < REPS; r++) {
    for (int x = 0; x < M * N; x++)
      b->c[x] = NAN;
    double t0 = now_s();
    if (te_module_call(mod, "matmul", 3, args, 0, NULL) != TE_OK)
      fail(ctx, "te_module_call");
    times[r] = now_s() - t0;
    if (!check(b, label))
      return 0;
  }
  qsort(times, REPS, sizeof times[0], cmp_double);
  double median = times[REPS / 2];
  double gflops = 2.0 * M * N * K / median * 1e-9;
  printf("%-18s %9.3f ms  %8.2f GFLOP/s  (median of %d, result correct)\n", label, median * 1e3,
         gflops, REPS);
  return 1;
}

int main(void) {
  te_ctx *ctx = te_ctx_new();
  if (!ctx) {
    fprintf(stderr, "te-demo: out of memory\n");
    return 1;
  }
  matmul mm = define_matmul(ctx);
  te_target *target = te_target_parse(ctx, "llvm -mcpu=native");
  if (!target)
    fail(ctx, "te_target_parse");
  buffers b;
  if (!buffers_init(&b)) {
    fprintf(stderr, "te-demo: out of memory\n");
    buffers_free(&b);
    te_ctx_free(ctx);
    return 1;
  }
  printf("te %s: C[i,j] = sum_k A[i,k] * B[k,j], %dx%dx%d f32, target %s\n\n", TE_VERSION_STRING, M,
         N, K, te_target_str(target));

  te_schedule *plain = te_schedule_new(ctx, 1, &mm.c);
  te_schedule *tiled = te_schedule_new(ctx, 1, &mm.c);
  if (!plain || !tiled)
    fail(ctx, "te_schedule_new");
  hand_schedule(ctx, tiled, &mm);
  int ok = run_variant(ctx, target, plain, &mm, &b, "default schedule") &&
           run_variant(ctx, target, tiled, &mm, &b, "tiled schedule");

  if (ok) {
    char *ir = te_lower_text(tiled, 3, (te_tensor *const[]){mm.a, mm.b, mm.c}, 0, NULL);
    if (!ir)
      fail(ctx, "te_lower_text");
    printf("\nLowered IR of the tiled schedule:\n%s\n", ir);
    te_free(ir);
  }
  buffers_free(&b);
  te_ctx_free(ctx);
  return ok ? 0 : 1;
}
