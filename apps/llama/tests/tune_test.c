/* tune_test.c — apps.llama_tune_apply: te-llama's dense kernels built from a tuning log, as
 * tl_gen --tuning-log builds them (gen_tasks.c), must take the log's schedule and still be
 * right at symbolic sizes other than the tuned ones (tails that divide no split); a schedule
 * that does not fit the symbolic kernel must leave the hand one, still right.
 *
 *   tune_test LOG --dim D --hidden H --layers L --tokens T   (the shape LOG was tuned at)
 *
 * Checks tl_matvec and tl_bf16_matmul_add (the two kernels apps.llama_tune_tasks tuned) against
 * plain C on random non-zero data, outputs poisoned with NaN before the call. */
#include "../gen/gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint32_t rng = 12345;
static float uniform(void) {
  rng = rng * 1664525u + 1013904223u;
  float v = (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
  return v == 0 ? 0.5f : v;
}

/* Builds the kernel as tl_gen does with a log: at the tuned shape (look-up), then symbolic. */
static te_status build(te_ctx *ctx, te_target *t, const char *name, tl_gen_fn fn, te_module **out) {
  te_module *none;
  tl_tune.kernel = name;
  tl_tune.constant = true;
  te_status st = fn(ctx, t, &none);
  tl_tune.constant = false;
  return st == TE_OK ? fn(ctx, t, out) : st;
}

/* Y = [R +] W X over T tokens (T = 0: the matvec, 1-D), n x k weights (bf16 when bf16). */
static int check(te_module *m, const char *name, int bf16, int add, int T, int64_t n, int64_t k) {
  int64_t t = T ? T : 1;
  float *x = malloc(sizeof(float) * (size_t)(t * k)), *r = malloc(sizeof(float) * (size_t)(t * n));
  float *y = malloc(sizeof(float) * (size_t)(t * n)), *w = malloc(sizeof(float) * (size_t)(n * k));
  uint16_t *h = malloc(2 * (size_t)(n * k));
  for (int64_t i = 0; i < t * k; i++)
    x[i] = uniform();
  for (int64_t i = 0; i < t * n; i++)
    r[i] = uniform(), y[i] = NAN;
  for (int64_t i = 0; i < n * k; i++) { /* bf16: the f32 weights hold the bf16 values */
    uint32_t u;
    float f = uniform();
    memcpy(&u, &f, 4);
    h[i] = (uint16_t)(u >> 16);
    u = (uint32_t)h[i] << 16;
    memcpy(&f, &u, 4);
    w[i] = f;
  }
  int64_t xs[2] = {t, k}, ws[2] = {n, k}, ys[2] = {t, n};
  int nd = T ? 2 : 1;
  DLDataType f32 = {kDLFloat, 32, 1}, wt = bf16 ? (DLDataType){kDLBfloat, 16, 1} : f32;
  DLTensor X = {x, {kDLCPU, 0}, nd, f32, T ? xs : xs + 1, NULL, 0};
  DLTensor W = {bf16 ? (void *)h : (void *)w, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  DLTensor R = {r, {kDLCPU, 0}, nd, f32, T ? ys : ys + 1, NULL, 0};
  DLTensor Y = {y, {kDLCPU, 0}, nd, f32, T ? ys : ys + 1, NULL, 0};
  DLTensor *args[4] = {&X, &W, add ? &R : &Y, &Y};
  te_status st = te_module_call(m, name, add ? 4 : 3, args, 0, NULL);
  double worst = st == TE_OK ? 0 : INFINITY;
  for (int64_t tt = 0; st == TE_OK && tt < t; tt++)
    for (int64_t i = 0; i < n; i++) {
      double want = add ? r[tt * n + i] : 0, bound = fabs(want);
      for (int64_t j = 0; j < k; j++)
        want += (double)x[tt * k + j] * w[i * k + j],
            bound += fabs((double)x[tt * k + j] * w[i * k + j]);
      double e = fabs((double)y[tt * n + i] - want) / (bound > 0 ? bound : 1);
      if (!(e <= worst)) /* NaN (an output left poisoned) counts as infinitely wrong */
        worst = isnan(e) ? INFINITY : e;
    }
  int ok = worst <= 1e-5;
  printf("%-4s %s (tuned), %lld token(s), %lld x %lld: error %.3g of the products' magnitude\n",
         ok ? "ok" : "FAIL", name, (long long)t, (long long)n, (long long)k, worst);
  free(x), free(r), free(y), free(w), free(h);
  return !ok;
}

int main(int argc, char **argv) {
  if (argc != 10) {
    fprintf(stderr, "usage: tune_test LOG --dim D --hidden H --layers L --tokens T\n");
    return 2;
  }
  te_ctx *ctx = te_ctx_new();
  te_target *t = ctx ? te_target_parse(ctx, "llvm") : NULL;
  if (!t)
    return 1;
  tl_tune.ctx = ctx;
  tl_tune.log = argv[1];
  tl_tune.shape = (tl_shape){atoll(argv[3]), atoll(argv[5]), atoll(argv[7]), atoll(argv[9])};
  te_module *mv = NULL, *mm = NULL;
  int failures = 0;
  if (build(ctx, t, "tl_matvec", tl_gen_matvec, &mv) != TE_OK ||
      build(ctx, t, "tl_bf16_matmul_add", tl_gen_bf16_matmul_add, &mm) != TE_OK) {
    fprintf(stderr, "tune_test: %s\n", te_last_error(ctx));
    return 1;
  }
  /* both must be found in the log; whether a searched schedule fits the symbolic kernel
     depends on what the search drew (see gen_tasks.c), so taking it is reported, not required */
  printf("%-4s %d of 2 kernels found in the log, %d took its schedule\n",
         tl_tune.found == 2 ? "ok" : "FAIL", tl_tune.found, tl_tune.tuned);
  failures += tl_tune.found != 2;
  static const int64_t shapes[][2] = {{37, 203}, {64, 96}, {1, 1}, {70, 1000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    failures += check(mv, "tl_matvec", 0, 0, 0, shapes[s][0], shapes[s][1]);
    failures += check(mm, "tl_bf16_matmul_add", 1, 1, s % 2 ? 5 : 8, shapes[s][0], shapes[s][1]);
  }
  te_ctx_free(ctx);
  printf("%s\n", failures ? "tune_test: FAILED" : "tune_test: all checks pass");
  return failures ? 1 : 0;
}
