/* model_te.c — the decoder on te's kernels (model.h), generated ahead of time into the static
 * library tl_kernels (gen/) and called through their DLTensor entry points; this file only
 * lays out buffers and calls kernels.
 *
 * A layer, for n tokens at positions pos .. pos + n - 1 (n > 1: the matrix-matrix kernels, one
 * pass over each weight for the whole prompt; n = 1: the matrix-vector kernels):
 *   xb = rmsnorm(x) ; q = Wq xb ; k = Wk xb ; v = Wv xb   (n = 1: one product over the three,
 *                                                           laid out one below the other)
 *   q = rope(q) ; cache_k[pos..] = rope(k) ; cache_v[pos..] = v   (n = 1: one RoPE call for q
 *                                                           and k where they are adjacent)
 *   xb = attention(q, cache_k[0 .. pos+n), cache_v[0 .. pos+n))   (grouped-query, causal)
 *   x = x + Wo xb                        (one kernel: product and residual)
 *   xb = rmsnorm(x) ; h = silu(W1 xb) * (W3 xb)   (one kernel: both products and SwiGLU)
 *   x = x + W2 h                         (one kernel)
 * then rmsnorm and the classifier for the last token only. A generated token so runs five
 * parallel kernels a layer (the qkv product, attention, and the three above; RMSNorm and RoPE
 * of one token are serial, a loop of one iteration).
 * f32 and bf16 weights take the same path through kernels of the same computation (tl_* and
 * tl_bf16_*, which read W as bf16 and widen it in registers); Q8_0 follows runq.c (layer_q8),
 * on its weights laid out once for the int8 dot-product kernels (q8_layout.h).
 * The KV cache has the layout tl_attention reads (gen/gen_attention.c), one layer's:
 *   keys   [kv_heads][seq_len / 16 rounded up][head_size][16]   (16 positions a block, transposed)
 *   values [kv_heads][seq_len][head_size]
 * each head's keys and values contiguous over the positions; store_kv writes a token's there.
 */
#include "model.h"
#include "q8_layout.h"
#include "tl_kernels.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_BATCH = 256 };

typedef struct {
  tl_model base;
  const tl_checkpoint *ck;
  int batch;
  float *x, *x2, *xb, *q, *qr, *kt, *kr, *vt, *hb, *logits; /* kt, kr: k before, after RoPE */
  float *key_cache, *value_cache;                           /* n_layers x the layouts above */
  int8_t *xq;      /* Q8_0: quantized activations, their scales and corrections (gen/gen_q8.c), */
  float *xs, *hb2; /* the second SwiGLU product */
  int32_t *xc;
  float *fused;    /* a generated token's q, k, v (Q8_0: or w1, w3) product, padded rows included */
  tl_matrix *wqkv; /* f32, bf16: each layer's wq, wk, wv one below the other (a generated token) */
  void *wqkv_data;
  tl_q8_matrix *q8w; /* Q8_0: the weights in the kernels' layout: Q8_PER_LAYER a layer, wcls */
  const struct q8_kernels *q8;
  const struct dense_kernels *dense;
} te_model;

/* The weight products of one weight type (gen/gen_dense.c). */
typedef int32_t (*dense3_fn)(DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*dense4_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);
struct dense_kernels {
  DLDataType wtype;
  dense3_fn matvec, matmul;
  dense4_fn matvec_add, matmul_add, matvec_swiglu, matmul_swiglu;
};
static const struct dense_kernels f32_kernels = {{kDLFloat, 32, 1}, tl_matvec,     tl_matmul,
                                                 tl_matvec_add,     tl_matmul_add, tl_matvec_swiglu,
                                                 tl_matmul_swiglu};
static const struct dense_kernels bf16_kernels = {
    {kDLBfloat, 16, 1}, tl_bf16_matvec,        tl_bf16_matmul,       tl_bf16_matvec_add,
    tl_bf16_matmul_add, tl_bf16_matvec_swiglu, tl_bf16_matmul_swiglu};

/* The Q8_0 kernels of one group size (gen/gen_q8.c). */
typedef int32_t (*quantize_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*quantize_swiglu_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *, DLTensor *);
typedef int32_t (*q8_matmul_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *, DLTensor *,
                                DLTensor *);
typedef int32_t (*q8_matmul_add_fn)(DLTensor *, DLTensor *, DLTensor *, DLTensor *, DLTensor *,
                                    DLTensor *, DLTensor *);
struct q8_kernels {
  int group_size;
  quantize_fn quantize;
  quantize_swiglu_fn quantize_swiglu;
  q8_matmul_fn matmul, matvec;
  q8_matmul_add_fn matmul_add, matvec_add;
};
static const struct q8_kernels q8_kernels[] = {
    {64, tl_quantize_g64, tl_quantize_swiglu_g64, tl_q8_matmul_g64, tl_q8_matvec_g64,
     tl_q8_matmul_add_g64, tl_q8_matvec_add_g64},
    {32, tl_quantize_g32, tl_quantize_swiglu_g32, tl_q8_matmul_g32, tl_q8_matvec_g32,
     tl_q8_matmul_add_g32, tl_q8_matvec_add_g32},
    {16, tl_quantize_g16, tl_quantize_swiglu_g16, tl_q8_matmul_g16, tl_q8_matvec_g16,
     tl_q8_matmul_add_g16, tl_q8_matvec_add_g16},
    {8, tl_quantize_g8, tl_quantize_swiglu_g8, tl_q8_matmul_g8, tl_q8_matvec_g8,
     tl_q8_matmul_add_g8, tl_q8_matvec_add_g8},
};

/* A DLTensor with its shape stored beside it. */
typedef struct {
  DLTensor t;
  int64_t shape[4], strides[4]; /* strides: unused unless t.strides points to it */
} view;

static DLTensor *tensor(view *v, const void *data, DLDataType dt, int ndim, int64_t d0, int64_t d1,
                        int64_t d2, int64_t d3) {
  int64_t dims[4] = {d0, d1, d2, d3};
  memcpy(v->shape, dims, sizeof dims);
  v->t = (DLTensor){(void *)data, {kDLCPU, 0}, ndim, dt, v->shape, NULL, 0};
  return &v->t;
}

static const DLDataType F32 = {kDLFloat, 32, 1};
#define V1(v, p, a) tensor(v, p, F32, 1, a, 0, 0, 0)
#define V2(v, p, a, b) tensor(v, p, F32, 2, a, b, 0, 0)
#define V3(v, p, a, b, c) tensor(v, p, F32, 3, a, b, c, 0)
#define V4(v, p, a, b, c, d) tensor(v, p, F32, 4, a, b, c, d)

static int kernel_failed(te_model *m, const char *kernel, int rc) {
  snprintf(m->base.err, sizeof m->base.err, "kernel %s failed (status %d): %s", kernel, rc,
           te_rt_last_error());
  return -1;
}
#define CALL(m, k, ...)                                                                            \
  do {                                                                                             \
    int call_rc_ = k(__VA_ARGS__);                                                                 \
    if (call_rc_ != 0)                                                                             \
      return kernel_failed(m, #k, call_rc_);                                                       \
  } while (0)

/* The weights of w as a rows x cols DLTensor of the model's weight type. */
static DLTensor *weights(view *v, const te_model *m, const tl_matrix *w, int64_t rows,
                         int64_t cols) {
  const void *data = m->dense == &bf16_kernels ? (const void *)w->b : (const void *)w->f;
  return tensor(v, data, m->dense->wtype, 2, rows, cols, 0, 0);
}

static int dense_failed(te_model *m, const char *kernel, int n, int rc) {
  char name[64];
  snprintf(name, sizeof name, "%s%s%s", m->dense == &bf16_kernels ? "tl_bf16_" : "tl_",
           n == 1 ? "matvec" : "matmul", kernel);
  return kernel_failed(m, name, rc);
}

/* The prompt's n tokens go to a matrix-matrix kernel in at most two calls: the largest multiple
   of 32, which takes the kernel's SGEMM schedule (gen/gen_matmul.c), then the rest (under 32),
   which takes its blocked-dot one; one call when 32 divides n or n < 32. Each call reads the
   weights once, but the SGEMM schedule's tokens cost less than half the blocked dots' (at 110M,
   1 thread: 0.12 against 0.27 ms a layer), so the split pays for its second pass over the
   weights from the first 32 tokens on. Returns the end of the call that starts at token t0. */
enum { PROMPT_TILE = 32 };
static int prompt_part(int n, int t0) {
  return t0 == 0 && n > PROMPT_TILE ? n - n % PROMPT_TILE : n;
}

/* Y = W X for n tokens: the matrix-vector kernel for one token, the matrix-matrix one else. */
static int product(te_model *m, const float *x, const tl_matrix *w, int64_t rows, int64_t cols,
                   float *y, int n) {
  view vx, vw, vy;
  DLTensor *wt = weights(&vw, m, w, rows, cols);
  int rc = n == 1 ? m->dense->matvec(V1(&vx, x, cols), wt, V1(&vy, y, rows)) : 0;
  for (int t0 = 0, t1; n > 1 && !rc && t0 < n; t0 = t1) {
    t1 = prompt_part(n, t0);
    rc = m->dense->matmul(V2(&vx, x + t0 * cols, t1 - t0, cols), wt,
                          V2(&vy, y + t0 * rows, t1 - t0, rows));
  }
  return rc ? dense_failed(m, "", n, rc) : 0;
}

/* Y = R + W X */
static int product_add(te_model *m, const float *x, const tl_matrix *w, int64_t rows, int64_t cols,
                       const float *r, float *y, int n) {
  view vx, vw, vr, vy;
  DLTensor *wt = weights(&vw, m, w, rows, cols);
  int rc =
      n == 1 ? m->dense->matvec_add(V1(&vx, x, cols), wt, V1(&vr, r, rows), V1(&vy, y, rows)) : 0;
  for (int t0 = 0, t1; n > 1 && !rc && t0 < n; t0 = t1) {
    t1 = prompt_part(n, t0);
    rc = m->dense->matmul_add(V2(&vx, x + t0 * cols, t1 - t0, cols), wt,
                              V2(&vr, r + t0 * rows, t1 - t0, rows),
                              V2(&vy, y + t0 * rows, t1 - t0, rows));
  }
  return rc ? dense_failed(m, "_add", n, rc) : 0;
}

/* Y = silu(W1 X) * (W3 X) */
static int product_swiglu(te_model *m, const float *x, const tl_matrix *w1, const tl_matrix *w3,
                          int64_t rows, int64_t cols, float *y, int n) {
  view vx, vw, vw3, vy;
  DLTensor *w1t = weights(&vw, m, w1, rows, cols), *w3t = weights(&vw3, m, w3, rows, cols);
  int rc = n == 1 ? m->dense->matvec_swiglu(V1(&vx, x, cols), w1t, w3t, V1(&vy, y, rows)) : 0;
  for (int t0 = 0, t1; n > 1 && !rc && t0 < n; t0 = t1) {
    t1 = prompt_part(n, t0);
    rc = m->dense->matmul_swiglu(V2(&vx, x + t0 * cols, t1 - t0, cols), w1t, w3t,
                                 V2(&vy, y + t0 * rows, t1 - t0, rows));
  }
  return rc ? dense_failed(m, "_swiglu", n, rc) : 0;
}

static int rmsnorm(te_model *m, const float *x, const float *w, float *y, int n, int64_t d) {
  view vx, vw, vy;
  CALL(m, tl_rmsnorm, V2(&vx, x, n, d), V1(&vw, w, d), V2(&vy, y, n, d));
  return 0;
}

static const DLDataType I8 = {kDLInt, 8, 1}, U8 = {kDLUInt, 8, 1}, I32 = {kDLInt, 32, 1};

/* Q8_0: xq, xs, xc = quantize(x), x being n rows of `cols` (runq.c's quantize; xc the
   correction of the kernels' unsigned weights, gen/gen_q8.c). */
static int quantize(te_model *m, const float *x, int n, int64_t cols) {
  int64_t gs = m->q8->group_size, ng = cols / gs;
  view vx, vs, vq, vc;
  int rc = m->q8->quantize(V3(&vx, x, n, ng, gs), V2(&vs, m->xs, n, ng),
                           tensor(&vq, m->xq, I8, 3, n, ng, gs, 0),
                           tensor(&vc, m->xc, I32, 2, n, ng, 0, 0));
  return rc ? kernel_failed(m, "tl_quantize", rc) : 0;
}

/* Q8_0: the same of silu(a) * b (n rows of `cols` each), SwiGLU and quantization in one
   kernel. */
static int quantize_swiglu(te_model *m, const float *a, const float *b, int n, int64_t cols) {
  int64_t gs = m->q8->group_size, ng = cols / gs;
  view va, vb, vs, vq, vc;
  int rc = m->q8->quantize_swiglu(V3(&va, a, n, ng, gs), V3(&vb, b, n, ng, gs),
                                  V2(&vs, m->xs, n, ng), tensor(&vq, m->xq, I8, 3, n, ng, gs, 0),
                                  tensor(&vc, m->xc, I32, 2, n, ng, 0, 0));
  return rc ? kernel_failed(m, "tl_quantize_swiglu", rc) : 0;
}

static int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/* The tokens the Q8_0 matrix-matrix kernel runs at once (gen/gen_q8.c, TOKENS). */
enum { Q8_TOKENS = 4 };

/* The Q8_0 weights of a layer in the kernels' layout, in this order: wq, wk, wv one below the
   other, wo, w1 and w3 one below the other, w2 (a generated token runs one product for wq, wk
   and wv, one for w1 and w3: fewer kernel calls, each with more rows to share out). */
enum { Q8_QKV, Q8_WO, Q8_W13, Q8_W2, Q8_PER_LAYER };

/* Q8_0: Y = [R +] W X with X the last quantize()'s (R when r is not NULL); W is the parts p0 ..
   p1 - 1 of m->q8w[which], `rows` of its rows (those of the parts, or all the padded rows). */
static int q8_product(te_model *m, int which, int p0, int p1, int64_t rows, const float *r,
                      float *y, int n) {
  const tl_q8_matrix *w = &m->q8w[which];
  int64_t gs = m->q8->group_size, ng = w->cols / gs, L = TL_Q8_LANES;
  int64_t b0 = w->first[p0], nb = w->first[p1] - b0;
  int64_t tq = round_up(n, Q8_TOKENS); /* the matrix-matrix kernel reads whole groups of tokens */
  view vws, vxq, vxc, vxs, vr, vy;
  int64_t wshape[5] = {nb, ng, gs / 4, L, 4}; /* Wp[b][g][r / 4][l][r % 4] */
  DLTensor wp = {w->w + b0 * ng * gs * L, {kDLCPU, 0}, 5, U8, wshape, NULL, 0}, *wpt = &wp;
  DLTensor *wst = V3(&vws, w->s + b0 * ng * L, nb, ng, L);
  DLTensor *xqt, *xct, *xst, *yt, *rt;
  if (n == 1) {
    xqt = tensor(&vxq, m->xq, I8, 2, ng, gs, 0, 0), xct = tensor(&vxc, m->xc, I32, 1, ng, 0, 0, 0);
    xst = V1(&vxs, m->xs, ng), yt = V1(&vy, y, rows), rt = V1(&vr, r, rows);
  } else {
    xqt = tensor(&vxq, m->xq, I8, 3, tq, ng, gs, 0);
    xct = tensor(&vxc, m->xc, I32, 2, tq, ng, 0, 0);
    xst = V2(&vxs, m->xs, tq, ng), yt = V2(&vy, y, n, rows), rt = V2(&vr, r, n, rows);
  }
  int rc = r ? (n == 1 ? m->q8->matvec_add : m->q8->matmul_add)(wpt, wst, xqt, xct, xst, rt, yt)
             : (n == 1 ? m->q8->matvec : m->q8->matmul)(wpt, wst, xqt, xct, xst, yt);
  if (rc == 0)
    return 0;
  char name[32];
  snprintf(name, sizeof name, "tl_q8_%s%s_g%d", n == 1 ? "matvec" : "matmul", r ? "_add" : "",
           m->q8->group_size);
  return kernel_failed(m, name, rc);
}

static int attention_block(te_model *m, int l, int n, int pos, const float *q, const float *k,
                           const float *v);

/* A layer of a Q8_0 model: runq.c's order (quantize before each product; the residuals added
   by the products' kernels, SwiGLU computed by the kernel that quantizes its result). */
static int layer_q8(te_model *m, int l, int n, int pos) {
#define W(name) (l * Q8_PER_LAYER + Q8_##name)
  const tl_checkpoint *ck = m->ck;
  const tl_config *c = &ck->c;
  int64_t d = c->dim, kv = tl_kv_dim(c), hid = c->hidden_dim;
  float *t, *q = m->q, *k = m->kt, *v = m->vt;
  const int64_t *qkv = m->q8w[W(QKV)].first, *w13 = m->q8w[W(W13)].first, L = TL_Q8_LANES;
  if (rmsnorm(m, m->x, ck->rms_att + l * d, m->xb, n, d) || quantize(m, m->xb, n, d))
    return -1;
  if (n == 1) { /* one product: q, k and v are read where it wrote them */
    if (q8_product(m, W(QKV), 0, 3, qkv[3] * L, NULL, m->fused, 1))
      return -1;
    q = m->fused, k = m->fused + qkv[1] * L, v = m->fused + qkv[2] * L;
  } else if (q8_product(m, W(QKV), 0, 1, d, NULL, q, n) ||
             q8_product(m, W(QKV), 1, 2, kv, NULL, k, n) ||
             q8_product(m, W(QKV), 2, 3, kv, NULL, v, n)) {
    return -1;
  }
  if (attention_block(m, l, n, pos, q, k, v) || quantize(m, m->xb, n, d) ||
      q8_product(m, W(WO), 0, 1, d, m->x, m->xb, n))
    return -1;
  t = m->x, m->x = m->xb, m->xb = t;
  if (rmsnorm(m, m->x, ck->rms_ffn + l * d, m->xb, n, d) || quantize(m, m->xb, n, d))
    return -1;
  float *h1 = m->hb, *h3 = m->hb2;
  if (n == 1) {
    if (q8_product(m, W(W13), 0, 2, w13[2] * L, NULL, m->fused, 1))
      return -1;
    h1 = m->fused, h3 = m->fused + w13[1] * L;
  } else if (q8_product(m, W(W13), 0, 1, hid, NULL, h1, n) ||
             q8_product(m, W(W13), 1, 2, hid, NULL, h3, n)) {
    return -1;
  }
  if (quantize_swiglu(m, h1, h3, n, hid) || q8_product(m, W(W2), 0, 1, d, m->x, m->xb, n))
    return -1;
  t = m->x, m->x = m->xb, m->xb = t;
  return 0;
#undef W
}

/* The KV cache of layer l (the layouts at the top). */
static int64_t key_blocks(const tl_config *c) { return (c->seq_len + 15) / 16; }
static float *layer_keys(const te_model *m, int l) {
  const tl_config *c = &m->ck->c;
  return m->key_cache + (size_t)l * (size_t)(key_blocks(c) * 16 * tl_kv_dim(c));
}
static float *layer_values(const te_model *m, int l) {
  const tl_config *c = &m->ck->c;
  return m->value_cache + (size_t)l * (size_t)c->seq_len * (size_t)tl_kv_dim(c);
}

/* The n tokens' keys k (after RoPE) and values v, [n][kv_dim] each, into layer l's cache at
   positions pos .. pos + n - 1. */
static void store_kv(te_model *m, int l, int n, int pos, const float *k, const float *v) {
  const tl_config *c = &m->ck->c;
  int64_t G = c->n_kv_heads, hs = tl_head_size(c), kv = tl_kv_dim(c), nb = key_blocks(c);
  float *keys = layer_keys(m, l), *values = layer_values(m, l);
  for (int t = 0; t < n; t++) {
    int64_t p = pos + t;
    for (int64_t g = 0; g < G; g++) {
      const float *kg = k + t * kv + g * hs, *vg = v + t * kv + g * hs;
      float *block = keys + ((g * nb + p / 16) * hs) * 16 + p % 16;
      for (int64_t i = 0; i < hs; i++)
        block[i * 16] = kg[i];
      memcpy(values + (g * c->seq_len + p) * hs, vg, sizeof(float) * (size_t)hs);
    }
  }
}

/* RoPE on q and k, k and v into the cache, then attention into xb (q, k, v: [n][dim or
   kv_dim]). */
static int attention_block(te_model *m, int l, int n, int pos, const float *q, const float *k,
                           const float *v) {
  const tl_config *c = &m->ck->c;
  int64_t hs = tl_head_size(c), G = c->n_kv_heads, M = c->n_heads / c->n_kv_heads;
  view a, b, e, f;
  const float *kr = m->kr;
  if (n == 1 && k == q + c->dim) { /* q and k one after the other: one call for both */
    CALL(m, tl_rope, V4(&a, q, 1, c->n_heads + G, hs / 2, 2),
         V4(&b, m->qr, 1, c->n_heads + G, hs / 2, 2), pos);
    kr = m->qr + c->dim;
  } else {
    CALL(m, tl_rope, V4(&a, q, n, c->n_heads, hs / 2, 2), V4(&b, m->qr, n, c->n_heads, hs / 2, 2),
         pos);
    CALL(m, tl_rope, V4(&a, k, n, G, hs / 2, 2), V4(&b, m->kr, n, G, hs / 2, 2), pos);
  }
  store_kv(m, l, n, pos, kr, v);
  /* the values of positions 0 .. pos + n - 1 of each head, seq_len rows apart */
  DLTensor *vt = V3(&e, layer_values(m, l), G, pos + n, hs);
  e.strides[0] = c->seq_len * hs, e.strides[1] = hs, e.strides[2] = 1;
  vt->strides = e.strides;
  CALL(m, tl_attention, V4(&a, m->qr, n, G, M, hs),
       V4(&b, layer_keys(m, l), G, key_blocks(c), hs, 16), vt, V4(&f, m->xb, n, G, M, hs));
  return 0;
}

static int layer(te_model *m, int l, int n, int pos) {
  const tl_checkpoint *ck = m->ck;
  const tl_config *c = &ck->c;
  int64_t d = c->dim, kv = tl_kv_dim(c), hid = c->hidden_dim;
  if (m->q8)
    return layer_q8(m, l, n, pos);
  if (rmsnorm(m, m->x, ck->rms_att + l * d, m->xb, n, d))
    return -1;
  if (n == 1) { /* one product for q, k and v, read where it wrote them */
    if (product(m, m->xb, &m->wqkv[l], d + 2 * kv, d, m->fused, 1) ||
        attention_block(m, l, 1, pos, m->fused, m->fused + d, m->fused + d + kv))
      return -1;
  } else if (product(m, m->xb, &ck->wq[l], d, d, m->q, n) ||
             product(m, m->xb, &ck->wk[l], kv, d, m->kt, n) ||
             product(m, m->xb, &ck->wv[l], kv, d, m->vt, n) ||
             attention_block(m, l, n, pos, m->q, m->kt, m->vt)) {
    return -1;
  }
  float *t;
  if (product_add(m, m->xb, &ck->wo[l], d, d, m->x, m->x2, n))
    return -1;
  t = m->x, m->x = m->x2, m->x2 = t;
  if (rmsnorm(m, m->x, ck->rms_ffn + l * d, m->xb, n, d) ||
      product_swiglu(m, m->xb, &ck->w1[l], &ck->w3[l], hid, d, m->hb, n) ||
      product_add(m, m->hb, &ck->w2[l], d, hid, m->x, m->x2, n))
    return -1;
  t = m->x, m->x = m->x2, m->x2 = t;
  return 0;
}

static int forward(tl_model *base, const int *tokens, int n, int pos, float **logits) {
  te_model *m = (te_model *)base;
  const tl_config *c = &m->ck->c;
  int64_t d = c->dim;
  if (n < 1 || n > m->batch || pos < 0 || pos + n > c->seq_len) {
    snprintf(base->err, sizeof base->err,
             "forward: %d tokens at position %d (at most %d at once, and seq_len %d in all)", n,
             pos, m->batch, c->seq_len);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (tokens[i] < 0 || tokens[i] >= c->vocab_size) {
      snprintf(base->err, sizeof base->err, "forward: token %d is outside the vocabulary (%d)",
               tokens[i], c->vocab_size);
      return -1;
    }
    memcpy(m->x + (size_t)i * (size_t)d, m->ck->embedding + (size_t)tokens[i] * (size_t)d,
           sizeof(float) * (size_t)d);
  }
  for (int l = 0; l < c->n_layers; l++)
    if (layer(m, l, n, pos))
      return -1;
  if (rmsnorm(m, m->x + (size_t)(n - 1) * (size_t)d, m->ck->rms_final, m->xb, 1, d))
    return -1;
  if (m->q8 ? quantize(m, m->xb, 1, d) ||
                  q8_product(m, c->n_layers * Q8_PER_LAYER, 0, 1, c->vocab_size, NULL, m->logits, 1)
            : product(m, m->xb, &m->ck->wcls, c->vocab_size, d, m->logits, 1))
    return -1;
  *logits = m->logits;
  return 0;
}

/* The Q8_0 weights in the kernels' layout (q8_layout.h): m->q8w, Q8_PER_LAYER matrices a layer
   in enum order, then the classifier. 0, or -1 when out of memory. */
static int pack_q8(te_model *m) {
  const tl_checkpoint *ck = m->ck;
  const tl_config *c = &ck->c;
  int64_t d = c->dim, kv = tl_kv_dim(c), hid = c->hidden_dim, gs = ck->group_size;
  int nmat = c->n_layers * Q8_PER_LAYER + 1;
  m->q8w = calloc((size_t)nmat, sizeof *m->q8w);
  if (!m->q8w)
    return -1;
  for (int l = 0; l < c->n_layers; l++) {
    tl_q8_matrix *w = &m->q8w[l * Q8_PER_LAYER];
    if (tl_q8_pack(3, (const tl_matrix *const[]){&ck->wq[l], &ck->wk[l], &ck->wv[l]},
                   (const int64_t[]){d, kv, kv}, d, gs, &w[Q8_QKV]) ||
        tl_q8_pack(1, (const tl_matrix *const[]){&ck->wo[l]}, &d, d, gs, &w[Q8_WO]) ||
        tl_q8_pack(2, (const tl_matrix *const[]){&ck->w1[l], &ck->w3[l]},
                   (const int64_t[]){hid, hid}, d, gs, &w[Q8_W13]) ||
        tl_q8_pack(1, (const tl_matrix *const[]){&ck->w2[l]}, &d, hid, gs, &w[Q8_W2]))
      return -1;
  }
  int64_t vocab = c->vocab_size;
  return tl_q8_pack(1, (const tl_matrix *const[]){&ck->wcls}, &vocab, d, gs, &m->q8w[nmat - 1]);
}

/* f32 and bf16: each layer's wq, wk and wv copied one below the other into m->wqkv, so that a
   generated token runs one matrix-vector product (one parallel loop, over d + 2 kv_dim rows)
   instead of three (the prompt's matrix-matrix products read the checkpoint's). 0, or -1 when
   out of memory. */
static int pack_qkv(te_model *m) {
  const tl_checkpoint *ck = m->ck;
  const tl_config *c = &ck->c;
  size_t d = (size_t)c->dim, kv = (size_t)tl_kv_dim(c),
         elem = ck->weights == TL_WEIGHTS_BF16 ? 2 : 4;
  size_t per_layer = (d + 2 * kv) * d * elem;
  m->wqkv = calloc((size_t)c->n_layers, sizeof *m->wqkv);
  m->wqkv_data = malloc(per_layer * (size_t)c->n_layers);
  if (!m->wqkv || !m->wqkv_data)
    return -1;
  for (int l = 0; l < c->n_layers; l++) {
    char *to = (char *)m->wqkv_data + per_layer * (size_t)l;
    const tl_matrix *parts[3] = {&ck->wq[l], &ck->wk[l], &ck->wv[l]};
    size_t rows[3] = {d, kv, kv};
    if (elem == 2)
      m->wqkv[l].b = (const uint16_t *)to;
    else
      m->wqkv[l].f = (const float *)to;
    for (int i = 0; i < 3; i++) {
      const void *from = elem == 2 ? (const void *)parts[i]->b : (const void *)parts[i]->f;
      memcpy(to, from, rows[i] * d * elem);
      to += rows[i] * d * elem;
    }
  }
  return 0;
}

static void destroy(tl_model *base) {
  te_model *m = (te_model *)base;
  free(m->x), free(m->x2), free(m->xb), free(m->q), free(m->qr), free(m->kt), free(m->hb);
  free(m->kr), free(m->vt);
  free(m->logits), free(m->key_cache), free(m->value_cache), free(m->xq), free(m->xs), free(m->hb2);
  free(m->xc), free(m->fused);
  if (m->q8w)
    for (int i = 0; i <= m->ck->c.n_layers * Q8_PER_LAYER; i++)
      tl_q8_matrix_free(&m->q8w[i]);
  free(m->q8w);
  free(m->wqkv), free(m->wqkv_data);
  free(m);
}

tl_model *tl_te_model_new(const tl_checkpoint *ck, char *err, size_t errlen) {
  const tl_config *c = &ck->c;
  const struct q8_kernels *q8 = NULL;
  if (ck->weights == TL_WEIGHTS_Q8) {
    for (size_t i = 0; i < sizeof q8_kernels / sizeof q8_kernels[0]; i++)
      if (q8_kernels[i].group_size == ck->group_size)
        q8 = &q8_kernels[i];
    if (!q8) {
      snprintf(err, errlen,
               "Q8_0 group size %d: te-llama's kernels take groups of 64, 32, 16 "
               "or 8",
               ck->group_size);
      return NULL;
    }
  }
  te_model *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  m->base.forward = forward;
  m->base.destroy = destroy;
  m->ck = ck;
  m->q8 = q8;
  m->dense = ck->weights == TL_WEIGHTS_BF16 ? &bf16_kernels : &f32_kernels;
  m->batch = c->seq_len < MAX_BATCH ? c->seq_len : MAX_BATCH;
  m->base.max_batch = m->batch;
  size_t B = (size_t)m->batch, d = (size_t)c->dim, kv = (size_t)tl_kv_dim(c);
  size_t cache = (size_t)c->n_layers * (size_t)(key_blocks(c) * 16) * kv; /* keys; values fit */
  m->x = malloc(B * d * 4), m->x2 = malloc(B * d * 4), m->xb = malloc(B * d * 4);
  m->q = malloc(B * d * 4), m->qr = malloc((B * d + kv) * 4), m->kt = malloc(B * kv * 4);
  m->kr = malloc(B * kv * 4), m->vt = malloc(B * kv * 4);
  m->hb = malloc(B * (size_t)c->hidden_dim * 4), m->logits = malloc((size_t)c->vocab_size * 4);
  m->key_cache = malloc(cache * 4), m->value_cache = malloc(cache * 4);
  size_t wide = (size_t)round_up((int64_t)B, Q8_TOKENS) *
                (d > (size_t)c->hidden_dim ? d : (size_t)c->hidden_dim);
  m->xq = malloc(wide), m->xs = malloc(wide * 4), m->xc = malloc(wide * 4),
  m->hb2 = malloc(B * (size_t)c->hidden_dim * 4);
  size_t fused =
      (size_t)(round_up((int64_t)d, TL_Q8_ROW_ALIGN) + 2 * round_up((int64_t)kv, TL_Q8_ROW_ALIGN));
  size_t fused_ffn = (size_t)(2 * round_up(c->hidden_dim, TL_Q8_ROW_ALIGN));
  fused = fused > fused_ffn ? fused : fused_ffn;
  m->fused = malloc(fused * 4);
  if (q8 && pack_q8(m)) {
    destroy(&m->base);
    snprintf(err, errlen, "out of memory for the Q8_0 weights in the kernels' layout");
    return NULL;
  }
  if (!q8 && pack_qkv(m)) {
    destroy(&m->base);
    snprintf(err, errlen, "out of memory for the layers' wq, wk and wv in one matrix");
    return NULL;
  }
  if (!m->xq || !m->xs || !m->xc || !m->fused || !m->hb2 || !m->x || !m->x2 || !m->xb || !m->q ||
      !m->qr || !m->kt || !m->kr || !m->vt || !m->hb || !m->logits || !m->key_cache ||
      !m->value_cache) {
    destroy(&m->base);
    snprintf(err, errlen, "out of memory for the activations and the KV cache (%zu MB)",
             cache * 8 >> 20);
    return NULL;
  }
  /* Poisoned: a kernel that reads what no kernel wrote makes NaN logits, which the tests see. */
  float *bufs[] = {m->x,  m->x2, m->xb,     m->q,   m->qr, m->kt,   m->kr,
                   m->vt, m->hb, m->logits, m->hb2, m->xs, m->fused};
  size_t lens[] = {B * d,
                   B * d,
                   B * d,
                   B * d,
                   B * d + kv,
                   B * kv,
                   B * kv,
                   B * kv,
                   B * (size_t)c->hidden_dim,
                   (size_t)c->vocab_size,
                   B * (size_t)c->hidden_dim,
                   wide,
                   fused};
  for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
    for (size_t j = 0; j < lens[i]; j++)
      bufs[i][j] = NAN;
  for (size_t j = 0; j < cache; j++)
    m->key_cache[j] = m->value_cache[j] = NAN;
  memset(m->xq, 0, wide); /* the rows past a prompt's tokens are read (and their results dropped) */
  memset(m->xc, 0x7f, wide * 4); /* a large correction: wrong logits if read unwritten */
  return &m->base;
}
