/* sampler.c — run.c's sampling rules (sampler.h). */
#include "sampler.h"

#include <math.h>
#include <stdlib.h>

int tl_sampler_init(tl_sampler *s, int vocab_size, float temperature, float topp,
                    unsigned long long seed) {
  s->vocab_size = vocab_size;
  s->temperature = temperature;
  s->topp = topp;
  s->rng = seed;
  s->scratch = malloc((size_t)vocab_size * sizeof *s->scratch);
  return s->scratch ? 0 : -1;
}

void tl_sampler_free(tl_sampler *s) {
  free(s->scratch);
  s->scratch = NULL;
}

/* xorshift64*, its top 32 bits */
static unsigned next_u32(unsigned long long *state) {
  *state ^= *state >> 12;
  *state ^= *state << 25;
  *state ^= *state >> 27;
  return (unsigned)((*state * 0x2545F4914F6CDD1Dull) >> 32);
}

static float next_f32(unsigned long long *state) {
  return (float)(next_u32(state) >> 8) / 16777216.0f;
}

void tl_softmax(float *x, int n) {
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

static int argmax(const float *p, int n) {
  int best = 0;
  for (int i = 1; i < n; i++)
    if (p[i] > p[best])
      best = i;
  return best;
}

static int sample_all(const float *p, int n, float coin) {
  float cdf = 0.0f;
  for (int i = 0; i < n; i++) {
    cdf += p[i];
    if (coin < cdf)
      return i;
  }
  return n - 1;
}

static int by_prob_desc(const void *a, const void *b) {
  float pa = ((const tl_prob_index *)a)->prob, pb = ((const tl_prob_index *)b)->prob;
  return pa > pb ? -1 : pa < pb ? 1 : 0;
}

/* Nucleus sampling: candidates below (1 - p) / (n - 1) cannot be in the nucleus and are dropped
   before sorting; the nucleus ends at the first token that takes the sum past p. */
static int sample_nucleus(const float *p, int n, float topp, tl_prob_index *tmp, float coin) {
  const float cutoff = (1.0f - topp) / (float)(n - 1);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (p[i] >= cutoff)
      tmp[m].index = i, tmp[m].prob = p[i], m++;
  qsort(tmp, (size_t)m, sizeof *tmp, by_prob_desc);
  float total = 0.0f;
  int last = m - 1;
  for (int i = 0; i < m; i++) {
    total += tmp[i].prob;
    if (total > topp) {
      last = i;
      break;
    }
  }
  float r = coin * total, cdf = 0.0f;
  for (int i = 0; i <= last; i++) {
    cdf += tmp[i].prob;
    if (r < cdf)
      return tmp[i].index;
  }
  return tmp[last].index;
}

int tl_sample(tl_sampler *s, float *logits) {
  if (s->temperature == 0.0f)
    return argmax(logits, s->vocab_size);
  for (int i = 0; i < s->vocab_size; i++)
    logits[i] /= s->temperature;
  tl_softmax(logits, s->vocab_size);
  float coin = next_f32(&s->rng);
  if (s->topp <= 0 || s->topp >= 1)
    return sample_all(logits, s->vocab_size, coin);
  return sample_nucleus(logits, s->vocab_size, s->topp, s->scratch, coin);
}
