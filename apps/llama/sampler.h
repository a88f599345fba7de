/* sampler.h — choosing the next token from logits as llama2.c's run.c does: greedy at
 * temperature 0; otherwise softmax(logits / temperature) sampled with one xorshift draw,
 * restricted to the top-p nucleus when 0 < p < 1. Same seed, same tokens. */
#ifndef TL_SAMPLER_H
#define TL_SAMPLER_H

typedef struct {
  float prob;
  int index;
} tl_prob_index;

typedef struct {
  int vocab_size;
  float temperature, topp;
  unsigned long long rng;
  tl_prob_index *scratch;
} tl_sampler;

/* 0, or -1 when out of memory. */
int tl_sampler_init(tl_sampler *, int vocab_size, float temperature, float topp,
                    unsigned long long seed);
void tl_sampler_free(tl_sampler *);
/* The next token; logits are overwritten (scaled and normalized) when temperature > 0. */
int tl_sample(tl_sampler *, float *logits);
/* softmax in place (max subtracted first), as run.c's. */
void tl_softmax(float *x, int n);

#endif
