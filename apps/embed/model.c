/* model.c — loading all-MiniLM-L6-v2 (model.h): every tensor the encoder uses is checked for
 * dtype and shape and copied out of the mapped file; dense weights are packed for the kernels
 * (gen_linear.c), Q, K and V side by side as one [3H x H] matrix. */
#include "model.h"

#include "embed_kernels_config.h"
#include "safetensors.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN };

/* The floats of the whole model, handed out in order. */
typedef struct {
  float *next;
} arena;

static float *take(arena *a, size_t n) {
  float *p = a->next;
  a->next += (n + 15) & ~(size_t)15; /* 64-byte aligned arrays */
  return p;
}

static size_t model_floats(void) {
  size_t per_layer = 3 * H * H + 3 * H + H * H + H + 2 * H + F * H + F + H * F + H + 2 * H;
  return (size_t)MINILM_VOCAB * H + MINILM_POSITIONS * H + MINILM_TYPES * H + 2 * H +
         MINILM_LAYERS * (per_layer + 16 * 12) + 16 * 5;
}

/* W [n x k] (PyTorch's Linear layout, out x in) into panels Wp[n / NR][k][NR]. */
static void pack(const float *w, int n, int k, float *wp) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < k; i++)
      wp[((size_t)(j / EMBED_NR) * k + i) * EMBED_NR + j % EMBED_NR] = w[(size_t)j * k + i];
}

typedef struct {
  st_file *st;
  char *err;
  size_t errlen;
  float *scratch; /* room for the largest dense weight (F x H; Q, K, V are 3H x H), unpacked */
} loader;

static int vec(loader *l, const char *name, int n, float *dst) {
  return st_read_f32(l->st, name, 1, (int64_t[]){n}, dst, l->err, l->errlen);
}

static int mat(loader *l, const char *name, int rows, int cols, float *dst) {
  return st_read_f32(l->st, name, 2, (int64_t[]){rows, cols}, dst, l->err, l->errlen);
}

/* A dense layer "prefix.weight" [n x k] packed into wp and "prefix.bias" into b. */
static int dense(loader *l, const char *prefix, int n, int k, float *wp, float *b) {
  char name[128];
  snprintf(name, sizeof name, "%s.weight", prefix);
  if (mat(l, name, n, k, l->scratch) < 0)
    return -1;
  pack(l->scratch, n, k, wp);
  snprintf(name, sizeof name, "%s.bias", prefix);
  return vec(l, name, n, b);
}

static int load_layer(loader *l, int i, embed_layer *L) {
  char p[128], q[128];
  static const char *const qkv[3] = {"query", "key", "value"};
  for (int t = 0; t < 3; t++) { /* rows [t H, (t + 1) H) of the fused matrix */
    snprintf(p, sizeof p, "encoder.layer.%d.attention.self.%s.weight", i, qkv[t]);
    if (mat(l, p, H, H, l->scratch + (size_t)t * H * H) < 0)
      return -1;
    snprintf(p, sizeof p, "encoder.layer.%d.attention.self.%s.bias", i, qkv[t]);
    if (vec(l, p, H, L->qkv_b + t * H) < 0)
      return -1;
  }
  pack(l->scratch, 3 * H, H, L->qkv_w);
  snprintf(p, sizeof p, "encoder.layer.%d.attention.output.dense", i);
  snprintf(q, sizeof q, "encoder.layer.%d.intermediate.dense", i);
  if (dense(l, p, H, H, L->out_w, L->out_b) < 0 || dense(l, q, F, H, L->up_w, L->up_b) < 0)
    return -1;
  snprintf(p, sizeof p, "encoder.layer.%d.output.dense", i);
  if (dense(l, p, H, F, L->down_w, L->down_b) < 0)
    return -1;
  snprintf(p, sizeof p, "encoder.layer.%d.attention.output.LayerNorm.weight", i);
  snprintf(q, sizeof q, "encoder.layer.%d.attention.output.LayerNorm.bias", i);
  if (vec(l, p, H, L->ln1_g) < 0 || vec(l, q, H, L->ln1_b) < 0)
    return -1;
  snprintf(p, sizeof p, "encoder.layer.%d.output.LayerNorm.weight", i);
  snprintf(q, sizeof q, "encoder.layer.%d.output.LayerNorm.bias", i);
  if (vec(l, p, H, L->ln2_g) < 0 || vec(l, q, H, L->ln2_b) < 0)
    return -1;
  return 0;
}

static void carve(embed_model *m) {
  arena a = {m->memory};
  m->word = take(&a, (size_t)MINILM_VOCAB * H);
  m->pos = take(&a, (size_t)MINILM_POSITIONS * H);
  m->type = take(&a, (size_t)MINILM_TYPES * H);
  m->ln_g = take(&a, H);
  m->ln_b = take(&a, H);
  for (int i = 0; i < MINILM_LAYERS; i++) {
    embed_layer *L = &m->layer[i];
    L->qkv_w = take(&a, 3 * H * H), L->qkv_b = take(&a, 3 * H);
    L->out_w = take(&a, H * H), L->out_b = take(&a, H);
    L->ln1_g = take(&a, H), L->ln1_b = take(&a, H);
    L->up_w = take(&a, F * H), L->up_b = take(&a, F);
    L->down_w = take(&a, H * F), L->down_b = take(&a, H);
    L->ln2_g = take(&a, H), L->ln2_b = take(&a, H);
  }
}

static int load_weights(embed_model *m, const char *dir, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/model.safetensors", dir);
  loader l = {st_open(path, err, errlen), err, errlen, malloc(sizeof(float) * F * H)};
  int r = -1;
  if (l.st && l.scratch &&
      mat(&l, "embeddings.word_embeddings.weight", MINILM_VOCAB, H, m->word) == 0 &&
      mat(&l, "embeddings.position_embeddings.weight", MINILM_POSITIONS, H, m->pos) == 0 &&
      mat(&l, "embeddings.token_type_embeddings.weight", MINILM_TYPES, H, m->type) == 0 &&
      vec(&l, "embeddings.LayerNorm.weight", H, m->ln_g) == 0 &&
      vec(&l, "embeddings.LayerNorm.bias", H, m->ln_b) == 0) {
    r = 0;
    for (int i = 0; i < MINILM_LAYERS && r == 0; i++)
      r = load_layer(&l, i, &m->layer[i]);
  } else if (l.st && !l.scratch) {
    snprintf(err, errlen, "out of memory loading %s", path);
  }
  free(l.scratch);
  st_close(l.st);
  return r;
}

/* 1_Pooling/config.json must ask for mean pooling of 384-wide token embeddings. */
static int check_pooling(const char *dir, char *err, size_t errlen) {
  char path[4096];
  snprintf(path, sizeof path, "%s/1_Pooling/config.json", dir);
  json_error_t jerr;
  json_t *c = json_load_file(path, 0, &jerr);
  if (!c) {
    snprintf(err, errlen, "%s: %s", path, jerr.text);
    return -1;
  }
  int ok = json_is_true(json_object_get(c, "pooling_mode_mean_tokens")) &&
           json_integer_value(json_object_get(c, "word_embedding_dimension")) == H;
  const char *other[] = {"pooling_mode_cls_token", "pooling_mode_max_tokens",
                         "pooling_mode_mean_sqrt_len_tokens"};
  for (int i = 0; i < 3; i++)
    ok = ok && !json_is_true(json_object_get(c, other[i]));
  json_decref(c);
  if (!ok)
    snprintf(err, errlen,
             "%s: te-embed does mean pooling of %d-wide token embeddings only "
             "(pooling_mode_mean_tokens true, the other modes false)",
             path, H);
  return ok ? 0 : -1;
}

embed_model *embed_model_load(const char *dir, char *err, size_t errlen) {
  embed_model *m = calloc(1, sizeof *m);
  if (!m ||
      !(m->memory = aligned_alloc(64, ((model_floats() * sizeof(float)) + 63) & ~(size_t)63))) {
    snprintf(err, errlen, "out of memory loading the model");
    embed_model_free(m);
    return NULL;
  }
  carve(m);
  char path[4096];
  snprintf(path, sizeof path, "%s/vocab.txt", dir);
  if (check_pooling(dir, err, errlen) < 0 || !(m->vocab = embed_vocab_load(path, err, errlen)) ||
      load_weights(m, dir, err, errlen) < 0) {
    embed_model_free(m);
    return NULL;
  }
  if (embed_vocab_size(m->vocab) != MINILM_VOCAB) {
    snprintf(err, errlen, "%s: %d tokens; the model's embeddings have %d", path,
             (int)embed_vocab_size(m->vocab), MINILM_VOCAB);
    embed_model_free(m);
    return NULL;
  }
  return m;
}

void embed_model_free(embed_model *m) {
  if (!m)
    return;
  embed_vocab_free(m->vocab);
  free(m->memory);
  free(m);
}
