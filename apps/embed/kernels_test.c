/* kernels_test.c — te-embed's kernels (libembed_kernels.a) against plain C, on random non-zero
 * inputs with every output poisoned (NaN) first, at sizes that divide none of the schedules'
 * tiles (rows not a multiple of the 6-row register tile or the 48-row block; a sequence not a
 * multiple of the 16-lane vectors). Tolerance: relative, 1e-4 x sqrt(terms / 256) for sums of
 * more than 256 terms, of |ref| + the mean magnitude of the reference (test/README.md).
 * CTest apps.embed_kernels; needs no model. Exit status 0 when every kernel matches.
 */
#include "embed_kernels.h"
#include "embed_kernels_config.h"
#include "minilm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN };

static int failures;
static unsigned seed = 1;

static float uniform(void) { /* non-zero, in [-1, -0.05] U [0.05, 1] */
  seed = seed * 1664525u + 1013904223u;
  float u = (float)(seed >> 8) / 16777216.0f;
  return (u < 0.5f ? -1.0f : 1.0f) * (0.05f + 1.9f * fabsf(u - 0.5f));
}

static float *random_floats(size_t n, float scale) {
  float *p = malloc(sizeof *p * n);
  for (size_t i = 0; p && i < n; i++)
    p[i] = scale * uniform();
  return p;
}

static float *poisoned(size_t n) {
  float *p = malloc(sizeof *p * n);
  for (size_t i = 0; p && i < n; i++)
    p[i] = NAN;
  return p;
}

static DLTensor f32(float *d, int ndim, int64_t *shape) {
  DLTensor t = {d, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  return t;
}

static void check(const char *what, int rc, const float *got, const double *want, size_t n,
                  int terms) {
  double mean = 0;
  for (size_t i = 0; i < n; i++)
    mean += fabs(want[i]) / (double)n;
  double rtol = 1e-4 * (terms > 256 ? sqrt(terms / 256.0) : 1.0);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= rtol * (fabs(want[i]) + mean)))
      first = bad++ ? first : i;
  if (rc != 0)
    printf("  status %d: %s\n", rc, te_rt_last_error());
  else if (bad)
    printf("  %zu of %zu wrong, first [%zu]: got %g, want %g\n", bad, n, first, got[first],
           want[first]);
  printf("%-56s %s\n", what, rc == 0 && bad == 0 ? "ok" : "FAILED");
  failures += rc != 0 || bad != 0;
}

static void pack(const float *w, int n, int k, float *wp) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++)
      wp[((size_t)(j / EMBED_NR) * k + i) * EMBED_NR + j % EMBED_NR] = w[(size_t)j * k + i];
}

typedef int32_t (*linear_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);

static void test_linear(const char *name, linear_fn fn, int64_t m, int n, int k, int gelu) {
  float *x = random_floats((size_t)m * k, 1), *w = random_floats((size_t)n * k, 0.1f);
  float *b = random_floats((size_t)n, 1), *wp = malloc(sizeof *wp * (size_t)n * k);
  float *y = poisoned((size_t)m * n);
  double *want = malloc(sizeof *want * (size_t)m * n);
  pack(w, n, k, wp);
  for (int64_t i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      double s = b[j];
      for (int l = 0; l < k; l++)
        s += (double)x[i * k + l] * w[(size_t)j * k + l];
      want[i * n + j] = gelu ? 0.5 * s * (1 + erf(s / sqrt(2.0))) : s;
    }
  int64_t sx[2] = {m, k}, sw[3] = {n / EMBED_NR, k, EMBED_NR}, sb[1] = {n}, sy[2] = {m, n};
  DLTensor tx = f32(x, 2, sx), tw = f32(wp, 3, sw), tb = f32(b, 1, sb), ty = f32(y, 2, sy);
  char what[96];
  snprintf(what, sizeof what, "%s (m = %lld)", name, (long long)m);
  check(what, fn(&tx, &tw, &tb, &ty), y, want, (size_t)m * n, k);
  free(x), free(w), free(b), free(wp), free(y), free(want);
}

/* (x - mean) / sqrt(var + eps) * g + b over each row of x [m, H], in double. */
static void layer_norm_ref(const double *x, int64_t m, const float *g, const float *b,
                           double *out) {
  for (int64_t r = 0; r < m; r++) {
    double mean = 0, var = 0;
    for (int c = 0; c < H; c++)
      mean += x[r * H + c] / H;
    for (int c = 0; c < H; c++)
      var += (x[r * H + c] - mean) * (x[r * H + c] - mean) / H;
    for (int c = 0; c < H; c++)
      out[r * H + c] = (x[r * H + c] - mean) / sqrt(var + MINILM_LN_EPS) * g[c] + b[c];
  }
}

static void test_add_ln(int64_t m) {
  size_t n = (size_t)m * H;
  float *x = random_floats(n, 1), *r = random_floats(n, 1), *g = random_floats(H, 1);
  float *b = random_floats(H, 1), *y = poisoned(n);
  double *sum = malloc(sizeof *sum * n), *want = malloc(sizeof *want * n);
  for (size_t i = 0; i < n; i++)
    sum[i] = (double)x[i] + r[i];
  layer_norm_ref(sum, m, g, b, want);
  int64_t s2[2] = {m, H}, s1[1] = {H};
  DLTensor tx = f32(x, 2, s2), tr = f32(r, 2, s2), tg = f32(g, 1, s1), tb = f32(b, 1, s1),
           ty = f32(y, 2, s2);
  char what[96];
  snprintf(what, sizeof what, "embed_add_ln (m = %lld)", (long long)m);
  check(what, embed_add_ln(&tx, &tr, &tg, &tb, &ty), y, want, n, H);
  free(x), free(r), free(g), free(b), free(y), free(sum), free(want);
}

static void test_embed_ln(int64_t m) {
  size_t n = (size_t)m * H;
  float *word = random_floats((size_t)MINILM_VOCAB * H, 1);
  float *pos = random_floats((size_t)MINILM_POSITIONS * H, 1);
  float *type = random_floats((size_t)MINILM_TYPES * H, 1);
  float *g = random_floats(H, 1), *b = random_floats(H, 1), *y = poisoned(n);
  int32_t *ids = malloc(sizeof *ids * (size_t)m), *pids = malloc(sizeof *pids * (size_t)m);
  double *sum = malloc(sizeof *sum * n), *want = malloc(sizeof *want * n);
  for (int64_t r = 0; r < m; r++) {
    ids[r] = (int32_t)((r * 7919 + 13) % MINILM_VOCAB);
    pids[r] = (int32_t)(r % 11);
    for (int c = 0; c < H; c++)
      sum[r * H + c] =
          (double)word[(size_t)ids[r] * H + c] + pos[(size_t)pids[r] * H + c] + type[c];
  }
  layer_norm_ref(sum, m, g, b, want);
  int64_t sm[1] = {m}, sw[2] = {MINILM_VOCAB, H}, sp[2] = {MINILM_POSITIONS, H},
          st[2] = {MINILM_TYPES, H}, sh[1] = {H}, sy[2] = {m, H};
  DLTensor tids = {ids, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, sm, NULL, 0};
  DLTensor tpids = {pids, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, sm, NULL, 0};
  DLTensor tw = f32(word, 2, sw), tp = f32(pos, 2, sp), tt = f32(type, 2, st), tg = f32(g, 1, sh),
           tb = f32(b, 1, sh), ty = f32(y, 2, sy);
  char what[96];
  snprintf(what, sizeof what, "embed_ln (m = %lld)", (long long)m);
  check(what, embed_ln(&tids, &tpids, &tw, &tp, &tt, &tg, &tb, &ty), y, want, n, H);
  free(word), free(pos), free(type), free(g), free(b), free(y), free(ids), free(pids);
  free(sum), free(want);
}

/* Sentence i of the batch has len[i] tokens of s; the rest is masked. */
static void test_attention(int64_t nb, int64_t s, const int *len) {
  const int NH = MINILM_HEADS, D = MINILM_HEAD_DIM;
  size_t nq = (size_t)(nb * s * 3 * H), no = (size_t)(nb * s * H);
  float *qkv = random_floats(nq, 1), *mb = malloc(sizeof *mb * (size_t)(nb * s));
  float *out = poisoned(no);
  double *want = malloc(sizeof *want * no), *p = malloc(sizeof *p * (size_t)s);
  for (int64_t b = 0; b < nb; b++)
    for (int64_t j = 0; j < s; j++)
      mb[b * s + j] = j < len[b] ? 0.0f : -1e30f;
  for (int64_t b = 0; b < nb; b++)
    for (int h = 0; h < NH; h++)
      for (int64_t i = 0; i < s; i++) {
        const float *q = qkv + (b * s + i) * 3 * H + h * D;
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < len[b]; j++) { /* masked keys: exp(-1e30) = 0 */
          const float *k = qkv + (b * s + j) * 3 * H + H + h * D;
          double dot = 0;
          for (int d = 0; d < D; d++)
            dot += (double)q[d] * k[d];
          p[j] = dot / sqrt((double)D);
          mx = fmax(mx, p[j]);
        }
        for (int64_t j = 0; j < len[b]; j++)
          sum += (p[j] = exp(p[j] - mx));
        for (int d = 0; d < D; d++) {
          double o = 0;
          for (int64_t j = 0; j < len[b]; j++)
            o += p[j] * qkv[(b * s + j) * 3 * H + 2 * H + h * D + d];
          want[(b * s + i) * H + h * D + d] = o / sum;
        }
      }
  int64_t sq[3] = {nb, s, 3 * H}, sm[3] = {nb, s / EMBED_SEQ_MULTIPLE, EMBED_SEQ_MULTIPLE},
          so[4] = {nb, s, NH, D};
  DLTensor tq = f32(qkv, 3, sq), tm = f32(mb, 3, sm), to = f32(out, 4, so);
  char what[96];
  snprintf(what, sizeof what, "embed_attention (b = %lld, s = %lld, padded)", (long long)nb,
           (long long)s);
  check(what, embed_attention(&tq, &tm, &to), out, want, no, (int)s);
  free(qkv), free(mb), free(out), free(want), free(p);
}

int main(void) {
  te_rt_set_num_threads(2);
  static const int64_t rows[] = {1, 13, 53};
  for (int i = 0; i < 3; i++) {
    test_linear("embed_qkv", embed_qkv, rows[i], 3 * H, H, 0);
    test_linear("embed_attn_out", embed_attn_out, rows[i], H, H, 0);
    test_linear("embed_ffn_up (+ GELU)", embed_ffn_up, rows[i], F, H, 1);
    test_linear("embed_ffn_down", embed_ffn_down, rows[i], H, F, 0);
    test_add_ln(rows[i]);
    test_embed_ln(rows[i]);
  }
  test_attention(1, 4, (const int[]){4});
  /* the keys are padded to whole vectors (16 lanes with AVX-512) inside the kernel: 20 keys are
     one vector and a padded one; 16 and 32 none; 108 (the benchmark's) 6 and 4 padded lanes */
  test_attention(3, 20, (const int[]){20, 17, 5});
  test_attention(1, 16, (const int[]){16});
  test_attention(2, 32, (const int[]){29, 32});
  test_attention(2, 108, (const int[]){108, 61});
  printf("%s\n", failures ? "embed kernels: FAILED" : "embed kernels: all match C");
  return failures ? 1 : 0;
}
