/* prompt_bench.c — te-llama's prompt products alone (gen/gen_matmul.c), token count by token
 * count:
 *
 *   te-llama-prompt-bench [--threads N] [--config 110M|1.1B] [--bf16] [--rounds R] T... | --range A
 * B
 *
 * For each T, one decoder layer's products for T prompt tokens — wq, wk, wv, wo + residual,
 * w1, w3 + SwiGLU, w2 + residual — called as model_te.c calls them (the largest multiple of 32
 * tokens, then the rest), on one layer's weights (which stay in L3 between calls: this times
 * the arithmetic, not the weights' first read). Prints the best of R rounds of milliseconds
 * per layer, per CPU second / threads ("cpu", as te-llama-bench's rates: the machine may be
 * shared) and wall-clock, and GFLOP/s per CPU second.
 */
#define _POSIX_C_SOURCE 200809L
#include "tl_kernels.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int32_t (*mm3)(DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*mm4)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);

static double clock_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int bf16;
static float *x, *r, *y;

static DLTensor tensor(void *data, int64_t *shape, int weight) {
  DLDataType dt = weight && bf16 ? (DLDataType){kDLBfloat, 16, 1} : (DLDataType){kDLFloat, 32, 1};
  return (DLTensor){data, {kDLCPU, 0}, 2, dt, shape, NULL, 0};
}

/* Y = W X (+ R, or SwiGLU with w3 when w3) for T tokens, in model_te.c's calls. */
static void product(mm3 f3, mm4 f4, void *w, void *w3, int64_t n, int64_t k, int T) {
  for (int t0 = 0, t1; t0 < T; t0 = t1) {
    t1 = t0 == 0 && T > 32 ? T - T % 32 : T;
    int64_t xs[2] = {t1 - t0, k}, ws[2] = {n, k}, ys[2] = {t1 - t0, n};
    DLTensor X = tensor(x + t0 * k, xs, 0), W = tensor(w, ws, 1), W3 = tensor(w3, ws, 1);
    DLTensor R = tensor(r + t0 * n, ys, 0), Y = tensor(y + t0 * n, ys, 0);
    if (f3 ? f3(&X, &W, &Y) : f4(&X, &W, w3 ? &W3 : &R, &Y)) {
      fprintf(stderr, "prompt product failed: %s\n", te_rt_last_error());
      exit(1);
    }
  }
}

static int64_t D, H, KV;
static void *wq, *wk, *wv, *wo, *w1, *w3, *w2;

static void layer(int T) {
  mm3 mm = bf16 ? tl_bf16_matmul : tl_matmul;
  mm4 add = bf16 ? tl_bf16_matmul_add : tl_matmul_add;
  mm4 swiglu = bf16 ? tl_bf16_matmul_swiglu : tl_matmul_swiglu;
  product(mm, NULL, wq, NULL, D, D, T);
  product(mm, NULL, wk, NULL, KV, D, T);
  product(mm, NULL, wv, NULL, KV, D, T);
  product(NULL, add, wo, NULL, D, D, T);
  product(NULL, swiglu, w1, w3, H, D, T);
  product(NULL, add, w2, NULL, D, H, T);
}

static float *values(int64_t n) { /* small values in [-0.5, 0.5) */
  float *f = malloc(sizeof(float) * (size_t)n);
  for (int64_t i = 0; i < n; i++)
    f[i] = (float)((i * 2654435761u) % 1000) / 1000.0f - 0.5f;
  return f;
}

static void *weights(int64_t n) { /* values() as f32, or their upper halves (bf16) */
  float *f = values(n);
  if (!bf16)
    return f;
  uint16_t *h = malloc(2 * (size_t)n);
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &f[i], 4);
    h[i] = (uint16_t)(u >> 16);
  }
  free(f);
  return h;
}

int main(int argc, char **argv) {
  int threads = 1, rounds = 5, n = 0, cap = 256, *tokens = malloc(sizeof(int) * (size_t)cap);
  const char *config = "110M";
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--config") && i + 1 < argc)
      config = argv[++i];
    else if (!strcmp(argv[i], "--bf16"))
      bf16 = 1;
    else if (!strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--range") && i + 2 < argc) {
      int a = atoi(argv[i + 1]), b = atoi(argv[i + 2]);
      for (int t = a; t <= b && n < cap; t++)
        tokens[n++] = t;
      i += 2;
    } else if (atoi(argv[i]) > 0 && n < cap)
      tokens[n++] = atoi(argv[i]);
    else {
      fprintf(stderr, "usage: te-llama-prompt-bench [--threads N] [--config 110M|1.1B] [--bf16] "
                      "[--rounds R] T... | --range A B\n");
      return 2;
    }
  }
  if (!n)
    tokens[n++] = 128;
  te_rt_set_num_threads(threads);
  int big = !strcmp(config, "1.1B");
  D = big ? 2048 : 768, H = big ? 5632 : 2048, KV = big ? 256 : 768;
  int max_t = 0;
  for (int i = 0; i < n; i++)
    max_t = tokens[i] > max_t ? tokens[i] : max_t;
  x = values(max_t * H), r = values(max_t * H), y = values(max_t * H);
  wq = weights(D * D), wk = weights(KV * D), wv = weights(KV * D), wo = weights(D * D);
  w1 = weights(H * D), w3 = weights(H * D), w2 = weights(D * H);
  double flop = 2.0 * (double)(2 * D * D + 2 * KV * D + 3 * H * D); /* a token's, a layer */
  printf("%s %s, %d thread(s), one layer's prompt products, best of %d rounds\n"
         "tokens  ms (cpu)  ms (wall)  GFLOP/s (cpu)\n",
         config, bf16 ? "bf16" : "f32", threads, rounds);
  for (int i = 0; i < n; i++) {
    int T = tokens[i], reps = (int)(3e8 / (flop * T)) + 1;
    double cpu = 1e30, wall = 1e30;
    layer(T); /* warm */
    for (int rd = 0; rd < rounds; rd++) {
      double w0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
      for (int q = 0; q < reps; q++)
        layer(T);
      double w = (clock_of(CLOCK_MONOTONIC) - w0) / reps;
      double c = (clock_of(CLOCK_PROCESS_CPUTIME_ID) - c0) / reps / threads;
      cpu = c < cpu ? c : cpu, wall = w < wall ? w : wall;
    }
    printf("%6d  %8.3f  %9.3f  %13.1f\n", T, cpu * 1e3, wall * 1e3, flop * T / cpu / 1e9);
    fflush(stdout);
  }
  return 0;
}
