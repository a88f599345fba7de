/* reference.c — the plain C decoder (model.h): llama2.c's math written as its run.c is, one
 * token at a time, naive matrix-vector loops with `#pragma omp parallel for` (in effect when
 * built with -fopenmp, as the benchmark builds it; the tests build it without). For Q8_0
 * checkpoints it follows runq.c: activations quantized to int8 in groups before each product,
 * int32 dot products per group, scaled by both groups' scales; for bf16 checkpoints each weight
 * is widened to f32 as it is read (the same loop as f32, half the bytes).
 * It is te-llama's reference in the tests and its opponent in the benchmark. */
#include "model.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  tl_model base;
  const tl_checkpoint *ck;
  float *x, *xb, *xb2, *hb, *hb2, *q, *att, *logits, *key_cache, *value_cache;
  int8_t *xq;
  float *xs;
} ref_model;

static void rmsnorm(float *o, const float *x, const float *w, int n) {
  float ss = 0.0f;
  for (int j = 0; j < n; j++)
    ss += x[j] * x[j];
  ss /= (float)n;
  ss += 1e-5f;
  ss = 1.0f / sqrtf(ss);
  for (int j = 0; j < n; j++)
    o[j] = w[j] * (ss * x[j]);
}

static void softmax(float *x, int n) {
  float mx = x[0];
  for (int i = 1; i < n; i++)
    if (x[i] > mx)
      mx = x[i];
  float sum = 0.0f;
  for (int i = 0; i < n; i++) {
    x[i] = expf(x[i] - mx);
    sum += x[i];
  }
  for (int i = 0; i < n; i++)
    x[i] /= sum;
}

/* out (d) = W (d x n) x (n) */
static void matmul_f32(float *out, const float *x, const float *w, int n, int d) {
  int i;
#pragma omp parallel for private(i)
  for (i = 0; i < d; i++) {
    float v = 0.0f;
    for (int j = 0; j < n; j++)
      v += w[(size_t)i * (size_t)n + (size_t)j] * x[j];
    out[i] = v;
  }
}

/* out (d) = W (d x n, bf16) x (n) */
static void matmul_bf16(float *out, const float *x, const uint16_t *w, int n, int d) {
  int i;
#pragma omp parallel for private(i)
  for (i = 0; i < d; i++) {
    float v = 0.0f;
    for (int j = 0; j < n; j++)
      v += tl_bf16_to_f32(w[(size_t)i * (size_t)n + (size_t)j]) * x[j];
    out[i] = v;
  }
}

/* runq.c's quantize: per group, scale = max |x| / 127, q = round(x / scale) */
static void quantize(int8_t *q, float *s, const float *x, int n, int gs) {
  for (int g = 0; g < n / gs; g++) {
    float mx = 0.0f;
    for (int i = 0; i < gs; i++) {
      float a = fabsf(x[g * gs + i]);
      if (a > mx)
        mx = a;
    }
    float scale = mx / 127.0f;
    s[g] = scale;
    for (int i = 0; i < gs; i++)
      q[g * gs + i] = (int8_t)roundf(x[g * gs + i] / scale);
  }
}

static void matmul_q8(float *out, const int8_t *xq, const float *xs, const tl_matrix *w, int n,
                      int d, int gs) {
  int i;
#pragma omp parallel for private(i)
  for (i = 0; i < d; i++) {
    float v = 0.0f;
    size_t row = (size_t)i * (size_t)n;
    for (int j = 0; j + gs <= n; j += gs) {
      int32_t acc = 0;
      for (int k = 0; k < gs; k++)
        acc += (int32_t)xq[j + k] * (int32_t)w->q[row + (size_t)j + (size_t)k];
      v += (float)acc * w->s[(row + (size_t)j) / (size_t)gs] * xs[j / gs];
    }
    out[i] = v;
  }
}

static void product(ref_model *m, float *out, const float *x, const tl_matrix *w, int n, int d) {
  if (m->ck->weights == TL_WEIGHTS_F32) {
    matmul_f32(out, x, w->f, n, d);
  } else if (m->ck->weights == TL_WEIGHTS_BF16) {
    matmul_bf16(out, x, w->b, n, d);
  } else {
    quantize(m->xq, m->xs, x, n, m->ck->group_size);
    matmul_q8(out, m->xq, m->xs, w, n, d, m->ck->group_size);
  }
}

static void attention(ref_model *m, int l, int pos) {
  const tl_config *p = &m->ck->c;
  int kv_dim = tl_kv_dim(p), hs = tl_head_size(p), kv_mul = p->n_heads / p->n_kv_heads;
  size_t loff = (size_t)l * (size_t)p->seq_len * (size_t)kv_dim;
  int h;
#pragma omp parallel for private(h)
  for (h = 0; h < p->n_heads; h++) {
    const float *q = m->q + h * hs;
    float *att = m->att + (size_t)h * (size_t)p->seq_len;
    for (int t = 0; t <= pos; t++) {
      const float *k = m->key_cache + loff + (size_t)t * (size_t)kv_dim + (size_t)(h / kv_mul * hs);
      float score = 0.0f;
      for (int i = 0; i < hs; i++)
        score += q[i] * k[i];
      att[t] = score / sqrtf((float)hs);
    }
    softmax(att, pos + 1);
    float *xb = m->xb + h * hs;
    memset(xb, 0, (size_t)hs * sizeof(float));
    for (int t = 0; t <= pos; t++) {
      const float *v =
          m->value_cache + loff + (size_t)t * (size_t)kv_dim + (size_t)(h / kv_mul * hs);
      for (int i = 0; i < hs; i++)
        xb[i] += att[t] * v[i];
    }
  }
}

static void rope(ref_model *m, float *k, int pos) {
  const tl_config *p = &m->ck->c;
  int kv_dim = tl_kv_dim(p), hs = tl_head_size(p);
  for (int i = 0; i < p->dim; i += 2) {
    float freq = 1.0f / powf(10000.0f, (float)(i % hs) / (float)hs);
    float val = (float)pos * freq, fcr = cosf(val), fci = sinf(val);
    for (int v = 0; v < (i < kv_dim ? 2 : 1); v++) {
      float *vec = v == 0 ? m->q : k;
      float v0 = vec[i], v1 = vec[i + 1];
      vec[i] = v0 * fcr - v1 * fci;
      vec[i + 1] = v0 * fci + v1 * fcr;
    }
  }
}

static void forward_one(ref_model *m, int token, int pos) {
  const tl_checkpoint *ck = m->ck;
  const tl_config *p = &ck->c;
  int dim = p->dim, kv_dim = tl_kv_dim(p), hidden = p->hidden_dim;
  memcpy(m->x, ck->embedding + (size_t)token * (size_t)dim, (size_t)dim * sizeof(float));
  for (int l = 0; l < p->n_layers; l++) {
    size_t loff = (size_t)l * (size_t)p->seq_len * (size_t)kv_dim;
    float *k = m->key_cache + loff + (size_t)pos * (size_t)kv_dim;
    float *v = m->value_cache + loff + (size_t)pos * (size_t)kv_dim;
    rmsnorm(m->xb, m->x, ck->rms_att + (size_t)l * (size_t)dim, dim);
    product(m, m->q, m->xb, &ck->wq[l], dim, dim);
    product(m, k, m->xb, &ck->wk[l], dim, kv_dim);
    product(m, v, m->xb, &ck->wv[l], dim, kv_dim);
    rope(m, k, pos);
    attention(m, l, pos);
    product(m, m->xb2, m->xb, &ck->wo[l], dim, dim);
    for (int i = 0; i < dim; i++)
      m->x[i] += m->xb2[i];
    rmsnorm(m->xb, m->x, ck->rms_ffn + (size_t)l * (size_t)dim, dim);
    product(m, m->hb, m->xb, &ck->w1[l], dim, hidden);
    product(m, m->hb2, m->xb, &ck->w3[l], dim, hidden);
    for (int i = 0; i < hidden; i++) {
      float val = m->hb[i];
      val *= 1.0f / (1.0f + expf(-val));
      m->hb[i] = val * m->hb2[i];
    }
    product(m, m->xb, m->hb, &ck->w2[l], hidden, dim);
    for (int i = 0; i < dim; i++)
      m->x[i] += m->xb[i];
  }
  rmsnorm(m->x, m->x, ck->rms_final, dim);
  product(m, m->logits, m->x, &ck->wcls, dim, p->vocab_size);
}

static int forward(tl_model *base, const int *tokens, int n, int pos, float **logits) {
  ref_model *m = (ref_model *)base;
  const tl_config *c = &m->ck->c;
  if (n < 1 || pos < 0 || pos + n > c->seq_len) {
    snprintf(base->err, sizeof base->err, "forward: %d tokens at position %d (seq_len %d)", n, pos,
             c->seq_len);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    if (tokens[i] < 0 || tokens[i] >= c->vocab_size) {
      snprintf(base->err, sizeof base->err, "forward: token %d is outside the vocabulary (%d)",
               tokens[i], c->vocab_size);
      return -1;
    }
    forward_one(m, tokens[i], pos + i);
  }
  *logits = m->logits;
  return 0;
}

static void destroy(tl_model *base) {
  ref_model *m = (ref_model *)base;
  free(m->x), free(m->xb), free(m->xb2), free(m->hb), free(m->hb2), free(m->q), free(m->att);
  free(m->logits), free(m->key_cache), free(m->value_cache), free(m->xq), free(m->xs);
  free(m);
}

tl_model *tl_ref_model_new(const tl_checkpoint *ck, char *err, size_t errlen) {
  const tl_config *p = &ck->c;
  ref_model *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  m->base.forward = forward;
  m->base.destroy = destroy;
  m->base.max_batch = p->seq_len;
  m->ck = ck;
  size_t d = (size_t)p->dim, h = (size_t)p->hidden_dim, wide = d > h ? d : h;
  size_t cache = (size_t)p->n_layers * (size_t)p->seq_len * (size_t)tl_kv_dim(p);
  m->x = calloc(d, 4), m->xb = calloc(d, 4), m->xb2 = calloc(d, 4);
  m->hb = calloc(h, 4), m->hb2 = calloc(h, 4), m->q = calloc(d, 4);
  m->att = calloc((size_t)p->n_heads * (size_t)p->seq_len, 4);
  m->logits = calloc((size_t)p->vocab_size, 4);
  m->key_cache = calloc(cache, 4), m->value_cache = calloc(cache, 4);
  m->xq = calloc(wide, 1), m->xs = calloc(wide, 4);
  if (!m->x || !m->xb || !m->xb2 || !m->hb || !m->hb2 || !m->q || !m->att || !m->logits ||
      !m->key_cache || !m->value_cache || !m->xq || !m->xs) {
    destroy(&m->base);
    snprintf(err, errlen, "out of memory for the activations and the KV cache");
    return NULL;
  }
  return &m->base;
}
