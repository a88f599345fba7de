/* tune_test.c — apps.llama_tune_apply: te-llama's dense kernels built from a tuning log, as
 * tl_gen --tuning-log builds them (gen_tasks.c), must take the log's schedule and still be
 * right at symbolic sizes other than the tuned ones (tails that divide no split); a schedule
 * that does not fit the symbolic kernel must leave the hand one, still right.
 *
 *   tune_test LOG --dim D --hidden H --layers L --tokens T [--committed]
 *   (the shape LOG was tuned at)
 *
 * Builds the twelve dense kernels from LOG untimed (the log's schedule wherever it has one, as
 * tl_gen --no-guard): every kernel found in the log must replay onto the symbolic kernel. Then
 * checks the tuned ones against plain C on random non-zero data, outputs poisoned with NaN
 * before the call: tl_matvec and tl_bf16_matmul_add (the two kernels apps.llama_tune_tasks
 * tuned), or, with --committed (a log in the repository, apps.llama_tuning_log), all twelve,
 * which it must hold; that test is skipped (exit 77) on a CPU the log has no record for.
 * Without --committed, also: the timing guard keeps the hand schedule against a slower one. */
#include "../gen/gen.h"

#include "../../common/tune_guard.h"

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

enum { EPI_NONE, EPI_ADD, EPI_SWIGLU };

/* The twelve tunable kernels (gen_tasks.c). */
static const struct {
  const char *name;
  tl_gen_fn fn;
  int bf16, epi, batched;
} kernels[] = {
    {"tl_matvec", tl_gen_matvec, 0, EPI_NONE, 0},
    {"tl_matvec_add", tl_gen_matvec_add, 0, EPI_ADD, 0},
    {"tl_matvec_swiglu", tl_gen_matvec_swiglu, 0, EPI_SWIGLU, 0},
    {"tl_matmul", tl_gen_matmul, 0, EPI_NONE, 1},
    {"tl_matmul_add", tl_gen_matmul_add, 0, EPI_ADD, 1},
    {"tl_matmul_swiglu", tl_gen_matmul_swiglu, 0, EPI_SWIGLU, 1},
    {"tl_bf16_matvec", tl_gen_bf16_matvec, 1, EPI_NONE, 0},
    {"tl_bf16_matvec_add", tl_gen_bf16_matvec_add, 1, EPI_ADD, 0},
    {"tl_bf16_matvec_swiglu", tl_gen_bf16_matvec_swiglu, 1, EPI_SWIGLU, 0},
    {"tl_bf16_matmul", tl_gen_bf16_matmul, 1, EPI_NONE, 1},
    {"tl_bf16_matmul_add", tl_gen_bf16_matmul_add, 1, EPI_ADD, 1},
    {"tl_bf16_matmul_swiglu", tl_gen_bf16_matmul_swiglu, 1, EPI_SWIGLU, 1},
};
enum { NKERNELS = sizeof kernels / sizeof kernels[0] };

/* n x k random non-zero weights: f32 values that are bf16 ones, and their bf16 bits. */
static void weights(float *w, uint16_t *h, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    float f = uniform();
    memcpy(&u, &f, 4);
    h[i] = (uint16_t)(u >> 16);
    u = (uint32_t)h[i] << 16;
    memcpy(&f, &u, 4);
    w[i] = f;
  }
}

/* Kernel kernels[q] (module m) over T tokens (1-D when not batched), n x k weights, against
   plain C: Y = W X, R + W X, or silu(W X) * (W3 X). The error is relative to the magnitude of
   the products (and of the silu's argument times the other product, for swiglu). */
static int check(te_module *m, int q, int T, int64_t n, int64_t k) {
  const char *name = kernels[q].name;
  int bf16 = kernels[q].bf16, epi = kernels[q].epi, batched = kernels[q].batched;
  int64_t t = batched ? T : 1;
  size_t nk = (size_t)(n * k);
  float *x = malloc(sizeof(float) * (size_t)(t * k)), *r = malloc(sizeof(float) * (size_t)(t * n));
  float *y = malloc(sizeof(float) * (size_t)(t * n)), *w = malloc(sizeof(float) * nk);
  float *w3 = malloc(sizeof(float) * nk);
  uint16_t *h = malloc(2 * nk), *h3 = malloc(2 * nk);
  if (!x || !r || !y || !w || !w3 || !h || !h3) {
    printf("FAIL %s: out of memory\n", name);
    return 1;
  }
  for (int64_t i = 0; i < t * k; i++)
    x[i] = uniform();
  for (int64_t i = 0; i < t * n; i++)
    r[i] = uniform(), y[i] = NAN;
  weights(w, h, n * k);
  weights(w3, h3, n * k);
  int64_t xs[2] = {t, k}, ws[2] = {n, k}, ys[2] = {t, n};
  int nd = batched ? 2 : 1;
  DLDataType f32 = {kDLFloat, 32, 1}, wt = bf16 ? (DLDataType){kDLBfloat, 16, 1} : f32;
  DLTensor X = {x, {kDLCPU, 0}, nd, f32, batched ? xs : xs + 1, NULL, 0};
  DLTensor W = {bf16 ? (void *)h : (void *)w, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  DLTensor W3 = {bf16 ? (void *)h3 : (void *)w3, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  DLTensor R = {r, {kDLCPU, 0}, nd, f32, batched ? ys : ys + 1, NULL, 0};
  DLTensor Y = {y, {kDLCPU, 0}, nd, f32, batched ? ys : ys + 1, NULL, 0};
  DLTensor *args[4] = {&X, &W, epi == EPI_SWIGLU ? &W3 : epi == EPI_ADD ? &R : &Y, &Y};
  te_status st = te_module_call(m, name, epi == EPI_NONE ? 3 : 4, args, 0, NULL);
  double worst = st == TE_OK ? 0 : INFINITY;
  for (int64_t tt = 0; st == TE_OK && tt < t; tt++)
    for (int64_t i = 0; i < n; i++) {
      double p1 = 0, p3 = 0, b1 = 0, b3 = 0;
      for (int64_t j = 0; j < k; j++) {
        double xv = x[tt * k + j];
        p1 += xv * w[i * k + j], b1 += fabs(xv * w[i * k + j]);
        p3 += xv * w3[i * k + j], b3 += fabs(xv * w3[i * k + j]);
      }
      double want = p1, bound = b1;
      if (epi == EPI_ADD)
        want += r[tt * n + i], bound += fabs(r[tt * n + i]);
      if (epi == EPI_SWIGLU) {
        want = p1 / (1 + exp(-p1)) * p3;
        bound = b1 * (fabs(p3) + b3) + 1e-30;
      }
      double e = fabs((double)y[tt * n + i] - want) / (bound > 0 ? bound : 1);
      if (!(e <= worst)) /* NaN (an output left poisoned) counts as infinitely wrong */
        worst = isnan(e) ? INFINITY : e;
    }
  int ok = worst <= 1e-5;
  printf("%-4s %s (tuned), %lld token(s), %lld x %lld: error %.3g of the products' magnitude\n",
         ok ? "ok" : "FAIL", name, (long long)t, (long long)n, (long long)k, worst);
  free(x), free(r), free(y), free(w), free(w3), free(h), free(h3);
  return !ok;
}

/* The guard must keep the hand schedule against a slower one: tl_matvec's default schedule
   (one scalar dot product a row, no vectors, no threads), several times slower than the hand
   one, offered as "the tuned" module at a 110M model's width. */
static int check_guard_rejects_slower(te_ctx *ctx, te_target *t) {
  tl_shape saved = tl_tune.shape;
  const char *log = tl_tune.log;
  tl_tune.shape = (tl_shape){768, 2048, 12, 32};
  tl_tune.log = NULL;
  tl_tune.kernel = "tl_matvec";
  te_module *hand = NULL, *slow = NULL;
  te_status st = tl_gen_matvec(ctx, t, &hand); /* no log: the hand schedule */
  te_expr *n = te_var(ctx, "n"), *k = te_var(ctx, "k"), *i = te_var(ctx, "i");
  te_tensor *x = te_placeholder(ctx, "X", TE_F32, 1, TE_EXPRS(k));
  te_tensor *w = te_placeholder(ctx, "W", TE_F32, 2, TE_EXPRS(n, k));
  te_expr *kk = te_reduce_axis(ctx, "kk", te_int(ctx, 0), k);
  te_tensor *y = te_compute(ctx, "Y", 1, TE_EXPRS(n), TE_EXPRS(i),
                            TE_SUM(te_mul(TE_AT(x, kk), TE_AT(w, i, kk)), kk));
  te_schedule *s = y ? te_schedule_new(ctx, 1, &y) : NULL;
  if (st == TE_OK)
    st = s ? te_build(s, "tl_matvec", 3, (te_tensor *const[]){x, w, y}, 0, NULL, t, &slow)
           : te_last_status(ctx);
  tg_verdict v = {0};
  if (st == TE_OK)
    st = tl_guard("tl_matvec", hand, slow, &v);
  tl_tune.shape = saved;
  tl_tune.log = log;
  int ok = st == TE_OK && !v.use_tuned;
  printf("%-4s the guard keeps the hand tl_matvec (%.4g ms) against a slower one (%.4g ms, "
         "faster in %d of %d rounds)%s%s\n",
         ok ? "ok" : "FAIL", v.hand_s * 1e3, v.tuned_s * 1e3, v.wins, TG_ROUNDS,
         st == TE_OK ? "" : ": ", st == TE_OK ? "" : te_last_error(ctx));
  return !ok;
}

static bool parse_shape(char **argv, tl_shape *shape) {
  static const char *const opts[4] = {"--dim", "--hidden", "--layers", "--tokens"};
  int64_t *v[4] = {&shape->dim, &shape->hidden, &shape->layers, &shape->tokens};
  for (int i = 0; i < 4; i++) {
    if (strcmp(argv[2 * i], opts[i]))
      return false;
    *v[i] = atoll(argv[2 * i + 1]);
    if (*v[i] <= 0)
      return false;
  }
  return true;
}

int main(int argc, char **argv) {
  bool committed = argc == 11 && !strcmp(argv[10], "--committed");
  if ((argc != 10 && !committed) || !parse_shape(argv + 2, &tl_tune.shape)) {
    fprintf(stderr, "usage: tune_test LOG --dim D --hidden H --layers L --tokens T "
                    "[--committed]\n");
    return 2;
  }
  te_ctx *ctx = te_ctx_new();
  te_target *t = ctx ? te_target_parse(ctx, "llvm") : NULL;
  if (!t)
    return 1;
  tl_tune.ctx = ctx;
  tl_tune.log = argv[1];
  tl_tune.no_guard = true; /* the log's schedules themselves, untimed: are they right? */
  if (committed && !tg_log_has_target(argv[1], te_target_str(t))) {
    printf("SKIP: the tuning log %s holds no record for this CPU (%s): it was tuned on "
           "another machine\n",
           argv[1], te_target_short_str(t));
    te_ctx_free(ctx);
    return 77;
  }
  te_module *mods[NKERNELS];
  int failures = 0;
  for (int q = 0; q < NKERNELS; q++)
    if (build(ctx, t, kernels[q].name, kernels[q].fn, &mods[q]) != TE_OK) {
      fprintf(stderr, "tune_test: %s: %s\n", kernels[q].name, te_last_error(ctx));
      return 1;
    }
  /* apps.llama_tune_tasks tuned two kernels; the committed logs hold all twelve. Every kernel
     found must replay on the symbolic kernel (a kernel that does not says why on stderr) */
  int want = committed ? NKERNELS : 2;
  bool ok = tl_tune.found == want && tl_tune.replayed == tl_tune.found;
  printf("%-4s %d of %d kernels found in the log, %d of them replayed on the symbolic kernel\n",
         ok ? "ok" : "FAIL", tl_tune.found, want, tl_tune.replayed);
  failures += !ok;
  static const int64_t shapes[][2] = {{37, 203}, {64, 96}, {1, 1}, {70, 1000}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
    for (int q = 0; q < NKERNELS; q++)
      if (committed || !strcmp(kernels[q].name, "tl_matvec") ||
          !strcmp(kernels[q].name, "tl_bf16_matmul_add"))
        failures += check(mods[q], q, s % 2 ? 5 : 8, shapes[s][0], shapes[s][1]);
  if (!committed)
    failures += check_guard_rejects_slower(ctx, t);
  te_ctx_free(ctx);
  printf("%s\n", failures ? "tune_test: FAILED" : "tune_test: all checks pass");
  return failures ? 1 : 0;
}
