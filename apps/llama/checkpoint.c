/* checkpoint.c — reads and checks llama2.c's checkpoint layouts (checkpoint.h). */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

enum { HEADER_BYTES = 256, MAX_SIZE = 1 << 24 };
static const uint32_t MAGIC = 0x616b3432u;

int tl_kv_dim(const tl_config *c) { return (int)((int64_t)c->dim * c->n_kv_heads / c->n_heads); }
int tl_head_size(const tl_config *c) { return c->dim / c->n_heads; }

static int fail(char *err, size_t n, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, n, fmt, ap);
  va_end(ap);
  return -1;
}

static int32_t read_i32(const unsigned char *p) {
  uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  int32_t r;
  memcpy(&r, &v, 4);
  return r;
}

/* The sizes a model needs: each positive and below 2^24, and the shapes consistent. */
static int check_config(const char *path, const tl_config *c, char *err, size_t n) {
  const int v[7] = {c->dim,        c->hidden_dim, c->n_layers, c->n_heads,
                    c->n_kv_heads, c->vocab_size, c->seq_len};
  static const char *names[7] = {"dim",        "hidden_dim", "n_layers", "n_heads",
                                 "n_kv_heads", "vocab_size", "seq_len"};
  for (int i = 0; i < 7; i++)
    if (v[i] <= 0 || v[i] >= MAX_SIZE)
      return fail(err, n, "%s: header: %s is %d (must be in [1, %d]); not a llama2.c checkpoint?",
                  path, names[i], v[i], MAX_SIZE - 1);
  if (c->dim % c->n_heads)
    return fail(err, n, "%s: header: dim %d is not a multiple of n_heads %d", path, c->dim,
                c->n_heads);
  if (c->n_heads % c->n_kv_heads)
    return fail(err, n, "%s: header: n_heads %d is not a multiple of n_kv_heads %d", path,
                c->n_heads, c->n_kv_heads);
  if (tl_head_size(c) % 2)
    return fail(err, n, "%s: header: the head size %d (dim / n_heads) is odd; RoPE needs pairs",
                path, tl_head_size(c));
  return 0;
}

/* A cursor over the mapped weights that refuses to run past the end of the file. */
typedef struct {
  const unsigned char *base;
  size_t at, size;
  int short_by; /* set once a tensor does not fit */
  size_t need;
} cursor;

static const void *take(cursor *cur, size_t bytes) {
  if (cur->short_by || bytes > cur->size - cur->at) {
    cur->short_by = 1;
    cur->need += bytes;
    return NULL;
  }
  const void *p = cur->base + cur->at;
  cur->at += bytes;
  cur->need += bytes;
  return p;
}

static void take_f32(cursor *cur, tl_matrix *m, size_t elems) { m->f = take(cur, elems * 4); }

static void take_bf16(cursor *cur, tl_matrix *m, size_t elems) { m->b = take(cur, elems * 2); }

static void take_q8(cursor *cur, tl_matrix *m, size_t elems, int gs) {
  m->q = take(cur, elems);
  m->s = take(cur, elems / (size_t)gs * 4);
}

typedef struct {
  tl_matrix *wq, *wk, *wv, *wo, *w1, *w2, *w3;
} layer_arrays;

/* The seven per-layer matrices in the file's order: all wq, then all wk, ... */
static void take_matrix(cursor *cur, tl_checkpoint *ck, tl_matrix *m, size_t elems) {
  if (ck->weights == TL_WEIGHTS_Q8)
    take_q8(cur, m, elems, ck->group_size);
  else if (ck->weights == TL_WEIGHTS_BF16)
    take_bf16(cur, m, elems);
  else
    take_f32(cur, m, elems);
}

static void take_layers(cursor *cur, tl_checkpoint *ck) {
  const tl_config *c = &ck->c;
  size_t d = (size_t)c->dim, kv = (size_t)tl_kv_dim(c), h = (size_t)c->hidden_dim;
  tl_matrix *sets[7] = {ck->wq, ck->wk, ck->wv, ck->wo, ck->w1, ck->w2, ck->w3};
  size_t elems[7] = {d * d, kv * d, kv * d, d * d, h * d, d * h, h * d};
  for (int s = 0; s < 7; s++)
    for (int l = 0; l < c->n_layers; l++)
      take_matrix(cur, ck, &sets[s][l], elems[s]);
}

/* Legacy files keep each weight kind's layers in one block; the matrices are views into it. */
static void take_legacy(cursor *cur, tl_checkpoint *ck) {
  const tl_config *c = &ck->c;
  size_t d = (size_t)c->dim, kv = (size_t)tl_kv_dim(c), h = (size_t)c->hidden_dim;
  size_t L = (size_t)c->n_layers, hs = (size_t)tl_head_size(c);
  ck->embedding = take(cur, (size_t)c->vocab_size * d * 4);
  ck->rms_att = take(cur, L * d * 4);
  tl_matrix *sets[7] = {ck->wq, ck->wk, ck->wv, ck->wo, NULL, NULL, NULL};
  size_t elems[7] = {d * d, kv * d, kv * d, d * d, h * d, d * h, h * d};
  for (int s = 0; s < 4; s++)
    for (size_t l = 0; l < L; l++)
      take_f32(cur, &sets[s][l], elems[s]);
  ck->rms_ffn = take(cur, L * d * 4);
  tl_matrix *ffn[3] = {ck->w1, ck->w2, ck->w3};
  for (int s = 0; s < 3; s++)
    for (size_t l = 0; l < L; l++)
      take_f32(cur, &ffn[s][l], elems[4 + s]);
  ck->rms_final = take(cur, d * 4);
  take(cur, (size_t)c->seq_len * hs / 2 * 4 * 2); /* the RoPE tables run.c skips */
}

static int map_file(const char *path, tl_checkpoint *ck, char *err, size_t n) {
  int fd = open(path, O_RDONLY);
  if (fd < 0)
    return fail(err, n, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || st.st_size <= 0) {
    close(fd);
    return fail(err, n, "%s: empty or unreadable file", path);
  }
  ck->map_size = (size_t)st.st_size;
  ck->map = mmap(NULL, ck->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (ck->map == MAP_FAILED) {
    ck->map = NULL;
    return fail(err, n, "%s: mmap failed: %s", path, strerror(errno));
  }
  return 0;
}

static int read_header(const char *path, tl_checkpoint *ck, size_t *offset, char *err, size_t n) {
  const unsigned char *p = ck->map;
  if (ck->map_size < 28)
    return fail(err, n, "%s: truncated: %zu bytes, shorter than a header (28 bytes)", path,
                ck->map_size);
  uint32_t magic = (uint32_t)read_i32(p);
  int *dst[7] = {&ck->c.dim,        &ck->c.hidden_dim, &ck->c.n_layers, &ck->c.n_heads,
                 &ck->c.n_kv_heads, &ck->c.vocab_size, &ck->c.seq_len};
  if (magic != MAGIC) { /* legacy */
    for (int i = 0; i < 7; i++)
      *dst[i] = read_i32(p + 4 * i);
    ck->shared_classifier = ck->c.vocab_size > 0;
    if (ck->c.vocab_size < 0)
      ck->c.vocab_size = -ck->c.vocab_size;
    *offset = 28;
    return check_config(path, &ck->c, err, n);
  }
  if (ck->map_size < HEADER_BYTES)
    return fail(err, n, "%s: truncated: %zu bytes, shorter than a version header (%d bytes)", path,
                ck->map_size, HEADER_BYTES);
  ck->version = read_i32(p + 4);
  if (ck->version < 1 || ck->version > 3)
    return fail(err, n, "%s: version %d is not supported (0 legacy, 1 f32, 2 int8 Q8_0, 3 bf16)",
                path, ck->version);
  for (int i = 0; i < 7; i++)
    *dst[i] = read_i32(p + 8 + 4 * i);
  ck->shared_classifier = p[36] != 0;
  *offset = HEADER_BYTES;
  if (check_config(path, &ck->c, err, n))
    return -1;
  if (ck->version == 3)
    ck->weights = TL_WEIGHTS_BF16;
  if (ck->version == 2) {
    ck->weights = TL_WEIGHTS_Q8;
    ck->group_size = read_i32(p + 37);
    int gs = ck->group_size;
    if (gs <= 0 || ck->c.dim % gs || ck->c.hidden_dim % gs)
      return fail(err, n,
                  "%s: header: group size %d must be positive and divide dim %d and "
                  "hidden_dim %d",
                  path, gs, ck->c.dim, ck->c.hidden_dim);
  }
  return 0;
}

/* The f32 values of a Q8_0 or bf16 matrix (the embedding table, looked up a row at a time). */
static void widen(float *out, const tl_matrix *m, size_t elems, int gs) {
  for (size_t i = 0; i < elems; i++)
    out[i] = m->b ? tl_bf16_to_f32(m->b[i]) : (float)m->q[i] * m->s[i / (size_t)gs];
}

static int map_tensors(const char *path, tl_checkpoint *ck, size_t offset, char *err, size_t n) {
  const tl_config *c = &ck->c;
  size_t L = (size_t)c->n_layers, d = (size_t)c->dim, V = (size_t)c->vocab_size;
  ck->layers_owned = calloc(7 * L, sizeof(tl_matrix));
  if (!ck->layers_owned)
    return fail(err, n, "%s: out of memory", path);
  tl_matrix **sets[7] = {&ck->wq, &ck->wk, &ck->wv, &ck->wo, &ck->w1, &ck->w2, &ck->w3};
  for (int s = 0; s < 7; s++)
    *sets[s] = ck->layers_owned + (size_t)s * L;
  cursor cur = {ck->map, offset, ck->map_size, 0, offset};
  tl_matrix emb = {0};
  if (ck->version == 0) {
    take_legacy(&cur, ck);
  } else {
    ck->rms_att = take(&cur, L * d * 4);
    ck->rms_ffn = take(&cur, L * d * 4);
    ck->rms_final = take(&cur, d * 4);
    take_matrix(&cur, ck, &emb, V * d);
    take_layers(&cur, ck);
  }
  if (ck->shared_classifier)
    ck->wcls = ck->version == 0 ? (tl_matrix){ck->embedding, 0, 0, 0} : emb;
  else
    take_matrix(&cur, ck, &ck->wcls, V * d);
  if (cur.short_by)
    return fail(err, n, "%s: truncated: %zu bytes, the header's model needs %zu", path,
                ck->map_size, cur.need);
  if (ck->version == 1)
    ck->embedding = emb.f;
  if (ck->version >= 2) { /* runq.c looks tokens up in a dequantized copy of the table */
    ck->embedding_owned = malloc(V * d * sizeof(float));
    if (!ck->embedding_owned)
      return fail(err, n, "%s: out of memory for the embedding table", path);
    widen(ck->embedding_owned, &emb, V * d, ck->group_size);
    ck->embedding = ck->embedding_owned;
  }
  return 0;
}

int tl_checkpoint_open(const char *path, tl_checkpoint *ck, char *err, size_t errlen) {
  memset(ck, 0, sizeof *ck);
  size_t offset = 0;
  if (map_file(path, ck, err, errlen) || read_header(path, ck, &offset, err, errlen) ||
      map_tensors(path, ck, offset, err, errlen)) {
    tl_checkpoint_close(ck);
    return -1;
  }
  return 0;
}

void tl_checkpoint_close(tl_checkpoint *ck) {
  if (ck->map)
    munmap(ck->map, ck->map_size);
  free(ck->embedding_owned);
  free(ck->layers_owned);
  memset(ck, 0, sizeof *ck);
}
