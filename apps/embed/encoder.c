/* encoder.c — the forward pass (encoder.h): per layer
 *
 *   qkv = X Wqkv^T + b                    embed_qkv        [m, 3H]
 *   ctx = attention(qkv, mask)            embed_attention  [b, s, heads, head_dim] = [m, H]
 *   X1  = layer_norm(ctx Wo^T + b + X)    embed_attn_out, embed_add_ln
 *   f   = gelu(X1 W1^T + b1)              embed_ffn_up     [m, FFN]
 *   X   = layer_norm(f W2^T + b2 + X1)    embed_ffn_down, embed_add_ln
 *
 * with m = b x s tokens (the batch padded to its longest sentence, rounded up to a multiple of
 * EMBED_SEQ_MULTIPLE for the attention's blocks of query rows). Padding tokens are
 * computed like the others but masked out of every attention and of the pooling.
 */
#include "encoder.h"

#include "embed_kernels.h"
#include "embed_kernels_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN };

/* TE_EMBED_PROFILE=1: each kernel's calls timed (process CPU time, all threads, and wall
   time), printed by embed_profile_print. Off, the cost is one branch a call. */
enum { PROF_KERNELS = 8 };
static struct {
  const char *name;
  long calls;
  double cpu_s, wall_s, flop;
} prof[PROF_KERNELS];
static int prof_on = -1;

static int profiling(void) {
  if (prof_on < 0) {
    const char *e = getenv("TE_EMBED_PROFILE");
    prof_on = e && *e && strcmp(e, "0") != 0;
  }
  return prof_on;
}

static double clock_s(clockid_t c) {
  struct timespec t;
  clock_gettime(c, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

typedef struct {
  double cpu, wall;
} prof_mark;

static prof_mark prof_start(void) {
  prof_mark m = {0, 0};
  if (profiling())
    m = (prof_mark){clock_s(CLOCK_PROCESS_CPUTIME_ID), clock_s(CLOCK_MONOTONIC)};
  return m;
}

static void prof_stop(prof_mark m, const char *name, double flop) {
  if (!profiling())
    return;
  double cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - m.cpu, wall = clock_s(CLOCK_MONOTONIC) - m.wall;
  for (int i = 0; i < PROF_KERNELS; i++)
    if (!prof[i].name || !strcmp(prof[i].name, name)) {
      prof[i].name = name;
      prof[i].calls++;
      prof[i].cpu_s += cpu, prof[i].wall_s += wall, prof[i].flop += flop;
      return;
    }
}

void embed_profile_print(FILE *f) {
  if (!profiling())
    return;
  double total = 0;
  for (int i = 0; i < PROF_KERNELS && prof[i].name; i++)
    total += prof[i].cpu_s;
  fprintf(f, "te-embed profile: %-16s %7s %10s %10s %6s %8s\n", "kernel", "calls", "cpu ms",
          "wall ms", "cpu%", "GFLOP/s");
  for (int i = 0; i < PROF_KERNELS && prof[i].name; i++)
    fprintf(f, "te-embed profile: %-16s %7ld %10.1f %10.1f %5.1f%% %8.1f\n", prof[i].name,
            prof[i].calls, 1e3 * prof[i].cpu_s, 1e3 * prof[i].wall_s,
            100 * prof[i].cpu_s / (total > 0 ? total : 1),
            prof[i].flop > 0 ? 1e-9 * prof[i].flop / prof[i].cpu_s : 0.0);
}

static size_t round16(size_t n) { return (n + 15) & ~(size_t)15; }

static int workspace_reserve(embed_workspace *w, size_t rows) {
  if (rows <= w->rows)
    return 0;
  size_t per_row = 2 * H + H + 3 * H + H + F + 1; /* x, x1, t, qkv, ctx, ffn, mask_bias */
  size_t floats = round16(rows * per_row) + 8 * 16 + 2 * round16(rows);
  float *block = aligned_alloc(64, floats * sizeof(float));
  if (!block)
    return -1;
  free(w->block);
  w->block = block;
  w->rows = rows;
  float *p = block;
  float **bufs[] = {&w->x, &w->x1, &w->t, &w->qkv, &w->ctx, &w->ffn, &w->mask_bias};
  size_t widths[] = {H, H, H, 3 * H, H, F, 1};
  for (int i = 0; i < 7; i++) {
    *bufs[i] = p;
    p += round16(rows * widths[i]);
  }
  w->ids = (int32_t *)p;
  w->pos_ids = w->ids + round16(rows);
  return 0;
}

void embed_workspace_free(embed_workspace *w) {
  free(w->block);
  memset(w, 0, sizeof *w);
}

/* A DLTensor of f32 (or i32) over data with the given shape (which must outlive the call). */
static DLTensor f32(const float *data, int ndim, int64_t *shape) {
  DLTensor t = {(void *)data, {kDLCPU, 0}, ndim, {kDLFloat, 32, 1}, shape, NULL, 0};
  return t;
}

static DLTensor i32(const int32_t *data, int64_t *shape) {
  DLTensor t = {(void *)data, {kDLCPU, 0}, 1, {kDLInt, 32, 1}, shape, NULL, 0};
  return t;
}

static int kernel_failed(int rc, const char *kernel, char *err, size_t errlen) {
  if (rc != 0)
    snprintf(err, errlen, "kernel %s failed (%d): %s", kernel, rc, te_rt_last_error());
  return rc != 0;
}

/* Y = X W^T + b through a linear kernel: X [m, k], W packed, Y [m, n]. */
typedef int32_t (*linear_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);

static int linear(linear_fn fn, const char *name, int64_t m, int n, int k, const float *x,
                  const float *w, const float *b, float *y, char *err, size_t errlen) {
  int64_t sx[2] = {m, k}, sw[3] = {n / EMBED_NR, k, EMBED_NR}, sb[1] = {n}, sy[2] = {m, n};
  DLTensor tx = f32(x, 2, sx), tw = f32(w, 3, sw), tb = f32(b, 1, sb), ty = f32(y, 2, sy);
  prof_mark p = prof_start();
  int rc = fn(&tx, &tw, &tb, &ty);
  prof_stop(p, name, 2.0 * (double)m * n * k);
  return kernel_failed(rc, name, err, errlen);
}

static int add_ln(int64_t m, const float *x, const float *r, const float *g, const float *b,
                  float *y, char *err, size_t errlen) {
  int64_t s2[2] = {m, H}, s1[1] = {H};
  DLTensor tx = f32(x, 2, s2), tr = f32(r, 2, s2), tg = f32(g, 1, s1), tb = f32(b, 1, s1),
           ty = f32(y, 2, s2);
  prof_mark p = prof_start();
  int rc = embed_add_ln(&tx, &tr, &tg, &tb, &ty);
  prof_stop(p, "embed_add_ln", 0);
  return kernel_failed(rc, "embed_add_ln", err, errlen);
}

static int embeddings(const embed_model *md, embed_workspace *w, int64_t m, char *err,
                      size_t errlen) {
  int64_t sm[1] = {m}, sw[2] = {MINILM_VOCAB, H}, sp[2] = {MINILM_POSITIONS, H},
          st[2] = {MINILM_TYPES, H}, sh[1] = {H}, sy[2] = {m, H};
  DLTensor ids = i32(w->ids, sm), pids = i32(w->pos_ids, sm), word = f32(md->word, 2, sw),
           pos = f32(md->pos, 2, sp), type = f32(md->type, 2, st), g = f32(md->ln_g, 1, sh),
           b = f32(md->ln_b, 1, sh), y = f32(w->x, 2, sy);
  prof_mark p = prof_start();
  int rc = embed_ln(&ids, &pids, &word, &pos, &type, &g, &b, &y);
  prof_stop(p, "embed_ln", 0);
  return kernel_failed(rc, "embed_ln", err, errlen);
}

static int attention(embed_workspace *w, int64_t nb, int64_t s, char *err, size_t errlen) {
  int64_t sq[3] = {nb, s, 3 * H}, sm[3] = {nb, s / EMBED_SEQ_MULTIPLE, EMBED_SEQ_MULTIPLE},
          so[4] = {nb, s, MINILM_HEADS, MINILM_HEAD_DIM};
  DLTensor q = f32(w->qkv, 3, sq), mb = f32(w->mask_bias, 3, sm), o = f32(w->ctx, 4, so);
  prof_mark p = prof_start();
  int rc = embed_attention(&q, &mb, &o);
  /* the two products, Q K^T and P V, at their padded size */
  prof_stop(p, "embed_attention", 4.0 * (double)nb * MINILM_HEADS * s * s * MINILM_HEAD_DIM);
  return kernel_failed(rc, "embed_attention", err, errlen);
}

static int layer(const embed_layer *L, embed_workspace *w, int64_t nb, int64_t s, char *err,
                 size_t errlen) {
  int64_t m = nb * s;
  if (linear(embed_qkv, "embed_qkv", m, 3 * H, H, w->x, L->qkv_w, L->qkv_b, w->qkv, err, errlen) ||
      attention(w, nb, s, err, errlen) ||
      linear(embed_attn_out, "embed_attn_out", m, H, H, w->ctx, L->out_w, L->out_b, w->t, err,
             errlen) ||
      add_ln(m, w->t, w->x, L->ln1_g, L->ln1_b, w->x1, err, errlen) ||
      linear(embed_ffn_up, "embed_ffn_up", m, F, H, w->x1, L->up_w, L->up_b, w->ffn, err, errlen) ||
      linear(embed_ffn_down, "embed_ffn_down", m, H, F, w->ffn, L->down_w, L->down_b, w->t, err,
             errlen) ||
      add_ln(m, w->t, w->x1, L->ln2_g, L->ln2_b, w->x, err, errlen))
    return -1;
  return 0;
}

/* Mean of each sentence's token embeddings (padding excluded), scaled to unit length as
   torch.nn.functional.normalize does (dividing by max(norm, 1e-12)). */
static void pool(const embed_workspace *w, int nb, int64_t s, const int len[], float *out) {
  for (int i = 0; i < nb; i++) {
    double acc[H] = {0}, norm = 0;
    for (int t = 0; t < len[i]; t++)
      for (int c = 0; c < H; c++)
        acc[c] += w->x[((size_t)i * s + t) * H + c];
    for (int c = 0; c < H; c++) {
      acc[c] /= len[i];
      norm += acc[c] * acc[c];
    }
    norm = fmax(sqrt(norm), 1e-12);
    for (int c = 0; c < H; c++)
      out[(size_t)i * H + c] = (float)(acc[c] / norm);
  }
}

int embed_encode(const embed_model *md, embed_workspace *w, int nb, const int32_t *const tokens[],
                 const int len[], float *out, char *err, size_t errlen) {
  int s = 0;
  for (int i = 0; i < nb; i++)
    s = len[i] > s ? len[i] : s;
  s = (s + EMBED_SEQ_MULTIPLE - 1) / EMBED_SEQ_MULTIPLE * EMBED_SEQ_MULTIPLE; /* attention's */
  int64_t m = (int64_t)nb * s;
  if (workspace_reserve(w, (size_t)m) < 0) {
    snprintf(err, errlen, "out of memory for a batch of %d x %d tokens", nb, s);
    return -1;
  }
  for (int i = 0; i < nb; i++)
    for (int t = 0; t < s; t++) {
      size_t r = (size_t)i * s + t;
      w->ids[r] = t < len[i] ? tokens[i][t] : 0; /* [PAD] */
      w->pos_ids[r] = t;
      w->mask_bias[r] = t < len[i] ? 0.0f : -1e30f;
    }
  if (embeddings(md, w, m, err, errlen))
    return -1;
  for (int l = 0; l < MINILM_LAYERS; l++)
    if (layer(&md->layer[l], w, nb, s, err, errlen))
      return -1;
  prof_mark p = prof_start();
  pool(w, nb, s, len, out);
  prof_stop(p, "pool (C)", 0);
  return 0;
}
