/* checkpoint.h — llama2.c's checkpoint files, memory-mapped and checked.
 *
 * Three layouts (llama2.c's export.py writes them; all little-endian):
 *   legacy (run.c):  7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size,
 *                    seq_len; a negative vocab_size means the classifier is not shared with
 *                    the embedding), then f32 tensors: embedding, rms_att, wq, wk, wv, wo,
 *                    rms_ffn, w1, w2, w3, rms_final, the two unused RoPE tables
 *                    (seq_len * head_size / 2 each), [classifier].
 *   version 1:       a 256-byte header: uint32 magic 0x616b3432 ("ak42"), int32 1, the 7 ints,
 *                    uint8 shared_classifier; then f32 tensors: rms_att, rms_ffn, rms_final,
 *                    embedding, wq, wk, wv, wo, w1, w2, w3, [classifier].
 *   version 2 (runq.c, Q8_0): the same header with version 2 and int32 group_size after the
 *                    flag; the norms in f32 (rms_att, rms_ffn, rms_final), then each matrix as
 *                    int8 values followed by one f32 scale per group of group_size values:
 *                    embedding, wq[l] for each layer, wk[l], wv[l], wo[l], w1[l], w2[l],
 *                    w3[l], [classifier].
 *   version 3 (te-llama's bf16; llama2.c has no bf16 file): the version-1 header with version 3
 *                    and the version-1 tensor order; the norms in f32 (rms_att, rms_ffn,
 *                    rms_final), every matrix in bf16 (2 bytes a value: the upper half of the
 *                    f32, rounded to nearest even): embedding, wq, wk, wv, wo, w1, w2, w3,
 *                    [classifier]. te-llama-make-checkpoint --format bf16 writes it.
 * Every size is checked against the file before any weight is touched: a file too short for
 * its header or its tensors, non-positive or inconsistent sizes (dim not a multiple of
 * n_heads, n_heads not of n_kv_heads, an odd head size, a group size that does not divide the
 * rows) are refused with a message naming the file and the rule.
 */
#ifndef TL_CHECKPOINT_H
#define TL_CHECKPOINT_H
#include <stddef.h>
#include <stdint.h>

typedef struct {
  int dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
} tl_config;

typedef enum { TL_WEIGHTS_F32, TL_WEIGHTS_Q8, TL_WEIGHTS_BF16 } tl_weights;

/* A matrix of rows x cols: f32 values (f), int8 values with one scale per group (Q8_0: q, s),
   or bf16 values (b: the upper 16 bits of each f32). */
typedef struct {
  const float *f;
  const int8_t *q;
  const float *s;
  const uint16_t *b;
} tl_matrix;

/* A bf16 value widened to f32 (exact). */
static inline float tl_bf16_to_f32(uint16_t v) {
  union {
    uint32_t u;
    float f;
  } w = {(uint32_t)v << 16};
  return w.f;
}

typedef struct {
  tl_config c;
  int version; /* 0 legacy, 1, 2, 3 (bf16) */
  tl_weights weights;
  int group_size; /* Q8_0 only */
  int shared_classifier;
  const float *embedding; /* vocab_size x dim, f32 (widened for Q8_0 and bf16: owned) */
  const float *rms_att;   /* n_layers x dim */
  const float *rms_ffn;   /* n_layers x dim */
  const float *rms_final; /* dim */
  tl_matrix *wq, *wk, *wv, *wo, *w1, *w2, *w3; /* n_layers each: dim x dim, kv_dim x dim, ... */
  tl_matrix wcls;                              /* vocab_size x dim */
  void *map;
  size_t map_size;
  float *embedding_owned;
  tl_matrix *layers_owned;
} tl_checkpoint;

/* kv_dim = dim * n_kv_heads / n_heads; head_size = dim / n_heads. */
int tl_kv_dim(const tl_config *);
int tl_head_size(const tl_config *);

/* Opens and checks the checkpoint. 0 on success; -1 with a message in err otherwise (nothing
   left open). */
int tl_checkpoint_open(const char *path, tl_checkpoint *, char *err, size_t errlen);
void tl_checkpoint_close(tl_checkpoint *);

#endif
