/* encoder.h — all-MiniLM-L6-v2's forward pass on te's ahead-of-time kernels (embed_kernels.h),
 * then mean pooling and L2 normalization, as sentence-transformers computes an embedding. */
#ifndef TE_EMBED_ENCODER_H
#define TE_EMBED_ENCODER_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The activations of a batch, reused (and grown) from one batch to the next. */
typedef struct embed_workspace {
  size_t rows;  /* capacity, in tokens */
  float *block; /* all of the buffers below */
  float *x, *x1, *t, *qkv, *ctx, *ffn, *mask_bias;
  int32_t *ids, *pos_ids;
} embed_workspace;

/* Embeds nb sentences: tokens[i] holds len[i] ids (1 <= len[i] <= MINILM_MAX_TOKENS); the
   batch is padded to the longest. out receives nb x MINILM_HIDDEN floats, row i the unit-length
   embedding of sentence i. 0, or -1 with a message in err (out of memory, a kernel's error). */
int embed_encode(const embed_model *, embed_workspace *, int nb, const int32_t *const tokens[],
                 const int len[], float *out, char *err, size_t errlen);
void embed_workspace_free(embed_workspace *);
/* With TE_EMBED_PROFILE=1 in the environment, prints to f each kernel's calls, process CPU
   time (all threads), wall time and GFLOP/s (of CPU time) since the program started; without
   it, nothing. */
void embed_profile_print(FILE *f);

#endif
