/* test_kernels.c — te-llama's weight products (gen/gen_dense.c) one by one against plain C.
 *
 * The decoder tests (test_llama.c) see these kernels only through logits; this checks each
 * one directly: the matrix-vector kernels of generation (whose partial sums are added as a
 * tree of te_rfactor levels) and the matrix-matrix kernels of the prompt (gen/gen_matmul.c: an
 * SGEMM schedule when 32 divides the tokens, blocked dots else; at 1 to 129 tokens, and split
 * in two calls as model_te.c calls them), f32 and bf16 weights,
 * plain / + residual / SwiGLU, on random non-zero inputs with the output poisoned (NaN) before
 * each call, at shapes that divide none of the kernels' blocks (rows by 16, lanes by 16, 32
 * or 64, tokens by 4) and at ones that divide all of them (the matrix-vector kernels'
 * te_specialize branch for a width of whole 32-lane vectors). The reference sums in
 * double; each output may be off by 1e-5 of the sum of its products' magnitudes (f32 rounding of a
 * sum in another order). Prints one line per kernel and shape; exit status 0 when all pass.
 */
#include "tl_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static unsigned rng = 12345u;

static float uniform(void) { /* in [-1, 1), never 0 */
  rng = rng * 1664525u + 1013904223u;
  float v = (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
  return v == 0 ? 0.5f : v;
}

static uint16_t bf16_of(float f) { /* truncation: any bf16 value will do as a weight */
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);
}
static float f32_of_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

typedef enum { PLAIN, ADD, SWIGLU } epilogue;
static const char *const epi_names[] = {"", "_add", "_swiglu"};

/* One kernel: T tokens (0: the matrix-vector kernel, one token), n x k weights; the tokens in
   two calls when split. */
static void check(int bf16, epilogue epi, int T, int64_t n, int64_t k, int split) {
  int64_t t = T ? T : 1;
  size_t nw = (size_t)(n * k);
  float *x = malloc(sizeof(float) * (size_t)(t * k)), *r = malloc(sizeof(float) * (size_t)(t * n));
  float *y = malloc(sizeof(float) * (size_t)(t * n));
  float *w1 = malloc(sizeof(float) * nw), *w3 = malloc(sizeof(float) * nw);
  uint16_t *h1 = malloc(2 * nw), *h3 = malloc(2 * nw);
  for (int64_t i = 0; i < t * k; i++)
    x[i] = uniform();
  for (int64_t i = 0; i < t * n; i++)
    r[i] = uniform(), y[i] = NAN;
  for (size_t i = 0; i < nw; i++) { /* the f32 weights hold the bf16 values when bf16 */
    w1[i] = uniform(), w3[i] = uniform();
    h1[i] = bf16_of(w1[i]), h3[i] = bf16_of(w3[i]);
    if (bf16)
      w1[i] = f32_of_bf16(h1[i]), w3[i] = f32_of_bf16(h3[i]);
  }
  int64_t xs[2] = {t, k}, ws[2] = {n, k}, ys[2] = {t, n};
  int nd = T ? 2 : 1;
  DLDataType f32 = {kDLFloat, 32, 1}, wt = bf16 ? (DLDataType){kDLBfloat, 16, 1} : f32;
  DLTensor X = {x, {kDLCPU, 0}, nd, f32, T ? xs : xs + 1, NULL, 0};
  DLTensor W = {bf16 ? (void *)h1 : (void *)w1, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  DLTensor W3 = {bf16 ? (void *)h3 : (void *)w3, {kDLCPU, 0}, 2, wt, ws, NULL, 0};
  DLTensor R = {r, {kDLCPU, 0}, nd, f32, T ? ys : ys + 1, NULL, 0};
  DLTensor Y = {y, {kDLCPU, 0}, nd, f32, T ? ys : ys + 1, NULL, 0};
  int32_t rc = 0;
  if (!T)
    rc = epi == PLAIN ? (bf16 ? tl_bf16_matvec : tl_matvec)(&X, &W, &Y)
         : epi == ADD ? (bf16 ? tl_bf16_matvec_add : tl_matvec_add)(&X, &W, &R, &Y)
                      : (bf16 ? tl_bf16_matvec_swiglu : tl_matvec_swiglu)(&X, &W, &W3, &Y);
  /* split: the tokens in two calls as model_te.c makes them, the largest multiple of 32 (the
     SGEMM schedule) then the rest (the blocked-dot one); else one call */
  for (int64_t t0 = 0, t1; T && !rc && t0 < t; t0 = t1) {
    t1 = split && t0 == 0 && t >= 32 ? t - t % 32 : t;
    int64_t xp[2] = {t1 - t0, k}, yp[2] = {t1 - t0, n};
    DLTensor Xp = X, Rp = R, Yp = Y;
    Xp.shape = xp, Rp.shape = yp, Yp.shape = yp;
    Xp.data = x + t0 * k, Rp.data = r + t0 * n, Yp.data = y + t0 * n;
    rc = epi == PLAIN ? (bf16 ? tl_bf16_matmul : tl_matmul)(&Xp, &W, &Yp)
         : epi == ADD ? (bf16 ? tl_bf16_matmul_add : tl_matmul_add)(&Xp, &W, &Rp, &Yp)
                      : (bf16 ? tl_bf16_matmul_swiglu : tl_matmul_swiglu)(&Xp, &W, &W3, &Yp);
  }
  double worst = rc ? INFINITY : 0;
  for (int64_t tt = 0; !rc && tt < t; tt++)
    for (int64_t i = 0; i < n; i++) {
      double a = 0, b = 0, mag_a = 0, mag_b = 0;
      for (int64_t j = 0; j < k; j++) {
        double xv = x[tt * k + j];
        a += xv * w1[i * k + j], mag_a += fabs(xv * w1[i * k + j]);
        b += xv * w3[i * k + j], mag_b += fabs(xv * w3[i * k + j]);
      }
      double want = a, bound = mag_a;
      if (epi == ADD)
        want = r[tt * n + i] + a, bound = fabs(r[tt * n + i]) + mag_a;
      else if (epi == SWIGLU) /* |d(silu(a) b)| <= 1.1 |b| |da| + |silu(a)| |db| */
        want = a / (1 + exp(-a)) * b, bound = 1.1 * fabs(b) * mag_a + fabs(a) * mag_b;
      double e = fabs((double)y[tt * n + i] - want) / (bound > 0 ? bound : 1);
      if (!(e <= worst)) /* NaN (an output left poisoned) counts as infinitely wrong */
        worst = isnan(e) ? INFINITY : e;
    }
  int ok = worst <= 1e-5;
  printf("%-6s tl_%s%s%s, %d token(s)%s, %lld x %lld: error %.3g of the products' magnitude%s%s\n",
         ok ? "ok" : "FAIL", bf16 ? "bf16_" : "", T ? "matmul" : "matvec", epi_names[epi], (int)t,
         split && t >= 32 && t % 32 ? " in 2 calls" : "", (long long)n, (long long)k, worst,
         rc ? ": " : "", rc ? te_rt_last_error() : "");
  failures += !ok;
  free(x), free(r), free(y), free(w1), free(w3), free(h1), free(h3);
}

int main(void) {
  /* rows x width: neither divides a block; both divide every block; one row, one lane; widths
     that are a whole number of 32-lane vectors (the matrix-vector kernels' te_specialize
     branch, prefetching: 256, 64, 768, and 96, which is not one of the general schedule's 64
     bf16 lanes) and ones that are not (the general schedule, its masked tail) */
  static const int64_t shapes[][2] = {{37, 203}, {50, 130},  {64, 256}, {1, 1},  {19, 64},
                                      {16, 65},  {70, 1000}, {33, 768}, {21, 96}};
  for (int bf16 = 0; bf16 < 2; bf16++)
    for (int epi = PLAIN; epi <= SWIGLU; epi++)
      for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        check(bf16, (epilogue)epi, 0, shapes[s][0], shapes[s][1], 0);
        check(bf16, (epilogue)epi, s % 2 ? 4 : 7, shapes[s][0], shapes[s][1], 0);
      }
  /* The prompt kernels at token counts around their two schedules' tiles (tokens by 4; by 32
     for the SGEMM schedule, which takes T % 32 == 0), in one call and split as model_te.c
     calls them, at widths dividing none of their blocks (rows by 12, 16, 48; k by 16, 256) and
     all of them */
  static const int tokens[] = {1, 3, 17, 32, 33, 64, 96, 129};
  static const int64_t prompt_shapes[][2] = {{37, 203}, {100, 300}, {96, 512}};
  for (int bf16 = 0; bf16 < 2; bf16++)
    for (int epi = PLAIN; epi <= SWIGLU; epi++)
      for (size_t s = 0; s < sizeof prompt_shapes / sizeof prompt_shapes[0]; s++)
        for (size_t i = 0; i < sizeof tokens / sizeof tokens[0]; i++)
          for (int split = 0; split < 1 + (tokens[i] > 32 && tokens[i] % 32); split++)
            check(bf16, (epilogue)epi, tokens[i], prompt_shapes[s][0], prompt_shapes[s][1], split);
  printf("%s\n", failures ? "test_kernels: FAILED" : "test_kernels: all checks pass");
  return failures ? 1 : 0;
}
