/* make_checkpoint.c — te-llama-make-checkpoint: random-weight checkpoints of any shape in
 * llama2.c's layouts, and a tokenizer.bin to go with them (tests and benchmarks cannot download
 * trained weights).
 *
 *   te-llama-make-checkpoint [--config tiny|15M|110M|1.1B] [--dim D] [--hidden H] [--layers L]
 *       [--heads NH] [--kv-heads NKV] [--vocab V] [--seq S] [--format legacy|v1|q8|bf16]
 *       [--group-size G] [--unshared] [--seed N] [--out FILE] [--tokenizer FILE]
 *
 * The configs: 15M and 110M are llama2.c's TinyStories models (dim 288 / 768, 6 / 12 layers),
 * 1.1B is TinyLlama's shape (dim 2048, hidden 5632, 22 layers, 32 query heads sharing 4
 * key/value heads), tiny a small grouped-query model whose sizes divide none of te-llama's
 * vector and block sizes (the tests' default). Options after --config override its sizes.
 * Weights are uniform in [-1, 1] / sqrt(fan-in) (norm weights 1 +- 0.1), drawn from the seed per
 * tensor, so the three formats of one seed hold the same model (Q8_0 rounded, as export.py's
 * version2_export does, with its group size backed off until it divides dim; bf16 rounded to
 * nearest even, in te-llama's version 3 layout, checkpoint.h).
 * --tokenizer writes a tokenizer.bin of the vocabulary size: <unk>, <s>, </s>, the 256 byte
 * tokens, printable ASCII, then made-up merges of lowercase pieces, scored by rank.
 * Exit status 0, or 1 with a message.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  int dim, hidden, layers, heads, kv_heads, vocab, seq;
} shape;

static const struct {
  const char *name;
  shape s;
} configs[] = {
    {"tiny", {72, 200, 2, 6, 2, 420, 48}},
    {"15M", {288, 768, 6, 6, 6, 32000, 256}},
    {"110M", {768, 2048, 12, 12, 12, 32000, 1024}},
    {"1.1B", {2048, 5632, 22, 32, 4, 32000, 2048}},
};

typedef struct {
  FILE *f;
  const char *path;
  int failed;
} out_file;

static void put(out_file *o, const void *p, size_t n) {
  if (!o->failed && fwrite(p, 1, n, o->f) != n)
    o->failed = 1;
}

static uint64_t mix(uint64_t x) { /* splitmix64 */
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/* The tensor's values: uniform in [-scale, scale] around center, from (seed, id). */
static void fill(float *v, size_t n, uint64_t seed, uint64_t id, float center, float scale) {
  uint64_t s = mix(seed * 1000003u + id);
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13, s ^= s >> 7, s ^= s << 17;
    float u = (float)(s >> 40) / 16777216.0f * 2.0f - 1.0f;
    v[i] = center + scale * u;
  }
}

typedef struct {
  shape s;
  uint64_t seed;
  int format; /* 0 legacy, 1 v1, 2 q8, 3 bf16 */
  int group;
  int unshared;
  float *buf;
  int8_t *qbuf;
  float *sbuf;
  uint16_t *hbuf;
} gen;

/* f32 to bf16, rounded to nearest even (the values here are finite). */
static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* Writes tensor `id` (rows x cols) in f32, bf16 or Q8_0 (values, then scales). */
static void tensor(gen *g, out_file *o, uint64_t id, size_t rows, size_t cols, int norm) {
  size_t n = rows * cols;
  fill(g->buf, n, g->seed, id, norm ? 1.0f : 0.0f, norm ? 0.1f : 1.0f / sqrtf((float)cols));
  if (g->format == 3 && !norm) {
    for (size_t i = 0; i < n; i++)
      g->hbuf[i] = to_bf16(g->buf[i]);
    put(o, g->hbuf, n * 2);
    return;
  }
  if (g->format != 2 || norm) {
    put(o, g->buf, n * 4);
    return;
  }
  size_t gs = (size_t)g->group;
  for (size_t k = 0; k < n / gs; k++) {
    float mx = 0.0f;
    for (size_t i = 0; i < gs; i++)
      mx = fmaxf(mx, fabsf(g->buf[k * gs + i]));
    float scale = mx / 127.0f;
    g->sbuf[k] = scale;
    for (size_t i = 0; i < gs; i++)
      g->qbuf[k * gs + i] = (int8_t)roundf(g->buf[k * gs + i] / scale);
  }
  put(o, g->qbuf, n);
  put(o, g->sbuf, n / gs * 4);
}

enum { T_EMB, T_RMS_ATT, T_RMS_FFN, T_RMS_FINAL, T_WQ, T_WK, T_WV, T_WO, T_W1, T_W2, T_W3, T_CLS };
static uint64_t tid(int kind, int layer) { return (uint64_t)kind * 1000 + (uint64_t)layer; }

static void header(gen *g, out_file *o) {
  const shape *s = &g->s;
  if (g->format == 0) {
    int32_t v[7] = {s->dim,   s->hidden,   s->layers,
                    s->heads, s->kv_heads, g->unshared ? -s->vocab : s->vocab,
                    s->seq};
    put(o, v, sizeof v);
    return;
  }
  unsigned char h[256] = {0};
  int32_t v[9] = {0x616b3432,  g->format == 3 ? 3 : g->format == 1 ? 1 : 2,
                  s->dim,      s->hidden,
                  s->layers,   s->heads,
                  s->kv_heads, s->vocab,
                  s->seq};
  memcpy(h, v, sizeof v);
  h[36] = (unsigned char)!g->unshared;
  if (g->format == 2)
    memcpy(h + 37, &g->group, 4);
  put(o, h, sizeof h);
}

static void layers(gen *g, out_file *o, int kind, size_t rows, size_t cols) {
  for (int l = 0; l < g->s.layers; l++)
    tensor(g, o, tid(kind, l), rows, cols, 0);
}

static void write_model(gen *g, out_file *o) {
  const shape *s = &g->s;
  size_t d = (size_t)s->dim, h = (size_t)s->hidden, V = (size_t)s->vocab;
  size_t kv = d * (size_t)s->kv_heads / (size_t)s->heads, hs = d / (size_t)s->heads;
  header(g, o);
  if (g->format == 0) {
    tensor(g, o, tid(T_EMB, 0), V, d, 0);
    for (int l = 0; l < s->layers; l++)
      tensor(g, o, tid(T_RMS_ATT, l), 1, d, 1);
    layers(g, o, T_WQ, d, d), layers(g, o, T_WK, kv, d), layers(g, o, T_WV, kv, d);
    layers(g, o, T_WO, d, d);
    for (int l = 0; l < s->layers; l++)
      tensor(g, o, tid(T_RMS_FFN, l), 1, d, 1);
    layers(g, o, T_W1, h, d), layers(g, o, T_W2, d, h), layers(g, o, T_W3, h, d);
    tensor(g, o, tid(T_RMS_FINAL, 0), 1, d, 1);
    memset(g->buf, 0, (size_t)s->seq * hs / 2 * 4);
    put(o, g->buf, (size_t)s->seq * hs / 2 * 4); /* the unused RoPE tables */
    put(o, g->buf, (size_t)s->seq * hs / 2 * 4);
  } else {
    for (int l = 0; l < s->layers; l++)
      tensor(g, o, tid(T_RMS_ATT, l), 1, d, 1);
    for (int l = 0; l < s->layers; l++)
      tensor(g, o, tid(T_RMS_FFN, l), 1, d, 1);
    tensor(g, o, tid(T_RMS_FINAL, 0), 1, d, 1);
    tensor(g, o, tid(T_EMB, 0), V, d, 0);
    layers(g, o, T_WQ, d, d), layers(g, o, T_WK, kv, d), layers(g, o, T_WV, kv, d);
    layers(g, o, T_WO, d, d);
    layers(g, o, T_W1, h, d), layers(g, o, T_W2, d, h), layers(g, o, T_W3, h, d);
  }
  if (g->unshared)
    tensor(g, o, tid(T_CLS, 0), V, d, 0);
}

/* A made-up vocabulary: specials, bytes, printable ASCII, then merges of lowercase pieces. */
static int write_tokenizer(const char *path, int vocab, uint64_t seed) {
  if (vocab < 3 + 256 + 95) {
    fprintf(stderr,
            "te-llama-make-checkpoint: --tokenizer needs a vocabulary of at least 354 "
            "tokens (specials, bytes, printable ASCII), not %d\n",
            vocab);
    return 1;
  }
  char **pieces = calloc((size_t)vocab, sizeof *pieces);
  float *scores = calloc((size_t)vocab, sizeof *scores);
  int n = 0;
  pieces[n++] = strdup("<unk>"), pieces[n++] = strdup("\n<s>\n"), pieces[n++] = strdup("\n</s>\n");
  for (int b = 0; b < 256; b++) {
    char s[8];
    snprintf(s, sizeof s, "<0x%02X>", b);
    pieces[n++] = strdup(s);
  }
  int first_ascii = n;
  for (int c = 32; c < 127; c++) {
    char s[2] = {(char)c, 0};
    pieces[n++] = strdup(s);
  }
  /* the pool merges draw from: " ", the 26 lowercase letters and the merges made so far */
  int *pool = malloc((size_t)vocab * sizeof *pool), npool = 0;
  pool[npool++] = first_ascii;
  for (int c = 'a'; c <= 'z'; c++)
    pool[npool++] = first_ascii + (c - 32);
  uint64_t st = mix(seed + 77);
  for (int tries = 0; n < vocab && tries < vocab * 100; tries++) {
    st = mix(st);
    const char *a = pieces[pool[st % (uint64_t)npool]];
    const char *b = pieces[pool[(st >> 32) % (uint64_t)npool]];
    size_t la = strlen(a), lb = strlen(b);
    if (b[0] == ' ' || la + lb > 8) /* a space only starts a piece */
      continue;
    char s[16];
    memcpy(s, a, la), memcpy(s + la, b, lb), s[la + lb] = 0;
    int dup = 0;
    for (int i = first_ascii + 95; i < n && !dup; i++)
      dup = !strcmp(pieces[i], s);
    if (dup)
      continue;
    scores[n] = -(float)(n - first_ascii - 95);
    pool[npool++] = n;
    pieces[n++] = strdup(s);
  }
  free(pool);
  for (int i = n; i < vocab; i++) { /* filler, if the merges ran out */
    char s[24];
    snprintf(s, sizeof s, "<extra_%d>", i);
    pieces[i] = strdup(s);
    scores[i] = -1e6f;
  }
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "te-llama-make-checkpoint: cannot write %s\n", path);
    return 1;
  }
  int32_t maxlen = 0;
  for (int i = 0; i < vocab; i++)
    if ((int32_t)strlen(pieces[i]) > maxlen)
      maxlen = (int32_t)strlen(pieces[i]);
  fwrite(&maxlen, 4, 1, f);
  for (int i = 0; i < vocab; i++) {
    int32_t len = (int32_t)strlen(pieces[i]);
    fwrite(&scores[i], 4, 1, f);
    fwrite(&len, 4, 1, f);
    fwrite(pieces[i], 1, (size_t)len, f);
    free(pieces[i]);
  }
  free(pieces), free(scores);
  return fclose(f) == 0 ? 0 : 1;
}

static int bad(const char *what, const char *v) {
  fprintf(stderr,
          "te-llama-make-checkpoint: %s '%s' (see the comment at the top of "
          "make_checkpoint.c)\n",
          what, v);
  return 1;
}

int main(int argc, char **argv) {
  gen g = {configs[0].s, 1, 0, 64, 0, NULL, NULL, NULL, NULL};
  const char *out = NULL, *tok = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int *num = !strcmp(a, "--dim")          ? &g.s.dim
               : !strcmp(a, "--hidden")     ? &g.s.hidden
               : !strcmp(a, "--layers")     ? &g.s.layers
               : !strcmp(a, "--heads")      ? &g.s.heads
               : !strcmp(a, "--kv-heads")   ? &g.s.kv_heads
               : !strcmp(a, "--vocab")      ? &g.s.vocab
               : !strcmp(a, "--seq")        ? &g.s.seq
               : !strcmp(a, "--group-size") ? &g.group
                                            : NULL;
    if (!strcmp(a, "--unshared")) {
      g.unshared = 1;
      continue;
    }
    if (!v)
      return bad("missing value after", a);
    i++;
    if (num) {
      char *end;
      long x = strtol(v, &end, 10);
      if (*end || x <= 0 || x > (1 << 20))
        return bad("not a size in [1, 2^20]:", v);
      *num = (int)x;
    } else if (!strcmp(a, "--config")) {
      int found = 0;
      for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++)
        if (!strcmp(v, configs[c].name))
          g.s = configs[c].s, found = 1;
      if (!found)
        return bad("unknown config (tiny, 15M, 110M, 1.1B)", v);
    } else if (!strcmp(a, "--format")) {
      g.format = !strcmp(v, "legacy") ? 0
                 : !strcmp(v, "v1")   ? 1
                 : !strcmp(v, "q8")   ? 2
                 : !strcmp(v, "bf16") ? 3
                                      : -1;
      if (g.format < 0)
        return bad("unknown format (legacy, v1, q8, bf16)", v);
    } else if (!strcmp(a, "--seed")) {
      g.seed = strtoull(v, NULL, 10);
    } else if (!strcmp(a, "--out")) {
      out = v;
    } else if (!strcmp(a, "--tokenizer")) {
      tok = v;
    } else {
      return bad("unknown option", a);
    }
  }
  if (g.s.dim % g.s.heads || g.s.heads % g.s.kv_heads || (g.s.dim / g.s.heads) % 2) {
    fprintf(stderr, "te-llama-make-checkpoint: dim must be a multiple of heads, heads of "
                    "kv-heads, and the head size even\n");
    return 1;
  }
  while (g.format == 2 && (g.s.dim % g.group || g.s.hidden % g.group))
    g.group /= 2; /* export.py's backoff */
  if (tok && write_tokenizer(tok, g.s.vocab, g.seed))
    return 1;
  if (!out)
    return 0;
  size_t d = (size_t)g.s.dim, biggest = (size_t)g.s.vocab * d;
  if ((size_t)g.s.hidden * d > biggest)
    biggest = (size_t)g.s.hidden * d;
  if ((size_t)g.s.seq * d > biggest)
    biggest = (size_t)g.s.seq * d;
  g.buf = malloc(biggest * 4), g.qbuf = malloc(biggest), g.sbuf = malloc(biggest * 4);
  g.hbuf = malloc(biggest * 2);
  out_file o = {fopen(out, "wb"), out, 0};
  if (!g.buf || !g.qbuf || !g.sbuf || !g.hbuf || !o.f) {
    fprintf(stderr, "te-llama-make-checkpoint: cannot write %s (or out of memory)\n", out);
    return 1;
  }
  write_model(&g, &o);
  if (fclose(o.f) != 0 || o.failed) {
    fprintf(stderr, "te-llama-make-checkpoint: writing %s failed\n", out);
    return 1;
  }
  free(g.buf), free(g.qbuf), free(g.sbuf), free(g.hbuf);
  return 0;
}
