/* model.h — all-MiniLM-L6-v2's weights in the layout te-embed's kernels take, and its
 * tokenizer's vocabulary. */
#ifndef TE_EMBED_MODEL_H
#define TE_EMBED_MODEL_H

#include "minilm.h"
#include "tokenizer.h"

#include <stddef.h>

typedef struct embed_layer {
  /* dense weights packed in panels, Wp[n / EMBED_NR][k][n % EMBED_NR] (see gen_linear.c) */
  float *qkv_w, *qkv_b;   /* query, key, value fused: [3H x H], [3H] */
  float *out_w, *out_b;   /* the attention's output projection */
  float *ln1_g, *ln1_b;   /* its layer norm */
  float *up_w, *up_b;     /* feed-forward: H -> FFN, then GELU */
  float *down_w, *down_b; /* FFN -> H */
  float *ln2_g, *ln2_b;
} embed_layer;

typedef struct embed_model {
  embed_vocab *vocab;
  float *word, *pos, *type, *ln_g, *ln_b; /* embeddings and their layer norm */
  embed_layer layer[MINILM_LAYERS];
  float *memory; /* every array above lies in this one block */
} embed_model;

/* Loads DIR/model.safetensors, DIR/vocab.txt and DIR/1_Pooling/config.json (which must ask for
   mean pooling, the only pooling te-embed does). NULL with a message in err naming the file and
   the problem: a file missing or unreadable, a corrupt safetensors header, a tensor missing or of
   another dtype or shape than all-MiniLM-L6-v2's, a vocabulary of another size. */
embed_model *embed_model_load(const char *dir, char *err, size_t errlen);
void embed_model_free(embed_model *);

#endif
