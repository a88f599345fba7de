/* test_attention.c — te-llama's attention kernel (gen/gen_attention.c) alone against plain C.
 *
 * The decoder tests (test_llama.c) see tl_attention through logits, at head sizes of 10 to 16
 * and at most 24 positions; this calls it directly on its cache layout (keys in blocks of 16
 * positions, transposed; values per head, seq_len rows apart), on random non-zero inputs with
 * the output poisoned (NaN) before each call and the cache's unwritten positions poisoned too
 * (a read past the P positions makes NaN), for:
 *   - head size 64 (te_specialize's branch) and 12, 40, 80, 128 (the general code);
 *   - P positions that divide neither the block of 16 nor the 64 positions of the scores'
 *     register block (1, 15, 17, 63, 65, 130, 201) and ones that do (16, 64, 128);
 *   - one token (generation) and several (a prompt: causal mask), grouped-query (several query
 *     heads a key/value head) and multi-head.
 * The reference computes in double: scores / sqrt(hs), softmax over the positions each token
 * sees, the weighted sum of values. Each output may be off by 1e-5 of the largest |value|.
 * Prints one line per case; exit status 0 when all pass.
 */
#include "tl_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
static unsigned rng = 2024u;

static float uniform(void) { /* in [-1, 1), never 0 */
  rng = rng * 1664525u + 1013904223u;
  float v = (float)((rng >> 8) & 0xffff) / 32768.0f - 1.0f;
  return v == 0 ? 0.5f : v;
}

/* T tokens (the last T of P positions), G key/value heads of M query heads each, head size hs;
   the cache holds `cap` positions (>= P). */
static void check(int64_t T, int64_t G, int64_t M, int64_t hs, int64_t P, int64_t cap) {
  int64_t nb = (cap + 15) / 16, H = G * M;
  size_t nq = (size_t)(T * H * hs), nk = (size_t)(G * nb * hs * 16), nv = (size_t)(G * cap * hs);
  float *q = malloc(sizeof(float) * nq), *o = malloc(sizeof(float) * nq);
  float *k = malloc(sizeof(float) * nk), *v = malloc(sizeof(float) * nv);
  double *w = malloc(sizeof(double) * (size_t)P);
  for (size_t i = 0; i < nq; i++)
    q[i] = uniform(), o[i] = NAN;
  for (size_t i = 0; i < nk; i++)
    k[i] = NAN;
  for (size_t i = 0; i < nv; i++)
    v[i] = NAN;
  float vmax = 0;
  for (int64_t g = 0; g < G; g++)
    for (int64_t p = 0; p < P; p++)
      for (int64_t c = 0; c < hs; c++) {
        k[((g * nb + p / 16) * hs + c) * 16 + p % 16] = uniform();
        float x = uniform();
        v[(g * cap + p) * hs + c] = x;
        vmax = fabsf(x) > vmax ? fabsf(x) : vmax;
      }
  int64_t qs[4] = {T, G, M, hs}, ks[4] = {G, nb, hs, 16}, vs[3] = {G, P, hs},
          vst[3] = {cap * hs, hs, 1};
  DLDataType f32 = {kDLFloat, 32, 1};
  DLTensor Q = {q, {kDLCPU, 0}, 4, f32, qs, NULL, 0}, K = {k, {kDLCPU, 0}, 4, f32, ks, NULL, 0};
  DLTensor V = {v, {kDLCPU, 0}, 3, f32, vs, vst, 0}, O = {o, {kDLCPU, 0}, 4, f32, qs, NULL, 0};
  int32_t rc = tl_attention(&Q, &K, &V, &O);
  double worst = rc ? INFINITY : 0;
  for (int64_t t = 0; !rc && t < T; t++)
    for (int64_t h = 0; h < H; h++) {
      int64_t g = h / M, seen = P - T + t + 1;
      const float *qh = q + (t * H + h) * hs;
      double mx = -INFINITY, z = 0;
      for (int64_t p = 0; p < seen; p++) {
        double s = 0;
        for (int64_t c = 0; c < hs; c++)
          s += (double)qh[c] * k[((g * nb + p / 16) * hs + c) * 16 + p % 16];
        w[p] = s / sqrt((double)hs);
        mx = w[p] > mx ? w[p] : mx;
      }
      for (int64_t p = 0; p < seen; p++)
        z += w[p] = exp(w[p] - mx);
      for (int64_t c = 0; c < hs; c++) {
        double want = 0;
        for (int64_t p = 0; p < seen; p++)
          want += w[p] / z * v[(g * cap + p) * hs + c];
        double e = fabs((double)o[(t * H + h) * hs + c] - want) / vmax;
        if (!(e <= worst)) /* NaN (an output left poisoned, a poisoned read) is infinitely wrong */
          worst = isnan(e) ? INFINITY : e;
      }
    }
  int ok = worst <= 1e-5;
  printf("%-6s tl_attention, %lld token(s), %lld x %lld heads, head size %lld, %lld positions "
         "(cache %lld): error %.3g of max |V|%s%s\n",
         ok ? "ok" : "FAIL", (long long)T, (long long)G, (long long)M, (long long)hs, (long long)P,
         (long long)cap, worst, rc ? ": " : "", rc ? te_rt_last_error() : "");
  failures += !ok;
  free(q), free(o), free(k), free(v), free(w);
}

int main(void) {
  static const int64_t heads[][2] = {{4, 2}, {3, 1}, {1, 8}}; /* G x M: GQA, multi-head, one kv */
  static const int64_t sizes[] = {64, 12, 40, 80, 128};
  static const int64_t positions[] = {1, 15, 16, 17, 63, 64, 65, 128, 130, 201};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++) {
      const int64_t *gm = heads[(s + p) % 3];
      int64_t P = positions[p], cap = P + (p % 3) * 7; /* a cache longer than P, or exactly P */
      check(1, gm[0], gm[1], sizes[s], P, cap);
      if (P >= 5)
        check(p % 2 ? 5 : P, gm[0], gm[1], sizes[s], P, cap); /* a prompt: all P, or 5 more */
    }
  printf("%s\n", failures ? "test_attention: FAILED" : "test_attention: all checks pass");
  return failures ? 1 : 0;
}
