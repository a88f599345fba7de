/* minilm.h — the shape of all-minilm-l6-v2 (a 6-layer BERT encoder), shared by the kernel
 * generator (gen_kernels.c) and te-embed. */
#ifndef TE_EMBED_MINILM_H
#define TE_EMBED_MINILM_H

enum {
  MINILM_HIDDEN = 384,  /* hidden size */
  MINILM_HEADS = 12,    /* attention heads */
  MINILM_HEAD_DIM = 32, /* MINILM_HIDDEN / MINILM_HEADS */
  MINILM_FFN = 1536,    /* intermediate size */
  MINILM_LAYERS = 6,
  MINILM_VOCAB = 30522,
  MINILM_POSITIONS = 512, /* position embeddings */
  MINILM_TYPES = 2,       /* token type embeddings */
  MINILM_MAX_TOKENS = 256 /* sentence-transformers' max_seq_length: longer inputs are cut */
};
#define MINILM_LN_EPS 1e-12

#endif
