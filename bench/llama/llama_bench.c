/* llama_bench.c — te-llama against the plain C decoder (apps/llama/reference.c built as llama2.c
 * builds run.c: -Ofast -march=native -fopenmp, naive matrix-vector loops under
 * `#pragma omp parallel for`), on one checkpoint:
 *
 *   te-llama-bench CHECKPOINT [--threads N] [--prompt 128] [--gen 64] [--skip-plain-prompt]
 *                  [--plain CHECKPOINT2] [--only te|plain]
 *
 * --plain: the plain C runs CHECKPOINT2 instead (the same model in another format: te-llama on
 *   bf16 or Q8_0 weights against the plain C on f32, say);
 * prompt tok/s: a prompt of --prompt tokens at position 0 (te: one batch through the
 *   matrix-matrix kernels; plain C: one token at a time, as run.c does);
 * gen tok/s: --gen tokens one at a time after it, best of 3 rounds that alternate between
 *   the two engines (the machine may be shared: its other load falls on both alike);
 * the bandwidth limit of generation: the bytes of weights one token reads (every matrix and
 *   the norms; the embedding row is negligible) over this machine's read bandwidth, measured
 *   with the same thread count by summing a 1 GiB buffer (best of 5).
 * Prints one line per engine and "fraction of the limit" = achieved gen tok/s / limit tok/s.
 */
#define _POSIX_C_SOURCE 200809L
#include "checkpoint.h"
#include "model.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <te/runtime.h>
#include <time.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* GB/s of reading a 1 GiB buffer of floats on `threads` threads (best of 5). */
static double read_bandwidth(int threads) {
  size_t n = (size_t)1 << 28;
  float *buf = malloc(n * sizeof(float));
  if (!buf)
    return 0;
#pragma omp parallel for num_threads(threads)
  for (size_t i = 0; i < n; i++)
    buf[i] = (float)(i & 7);
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now();
    float total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total)
    for (size_t i = 0; i < n; i++)
      total += buf[i];
    double gbs = (double)(n * sizeof(float)) / (now() - t0) / 1e9;
    sink += total;
    if (gbs > best)
      best = gbs;
  }
  (void)sink;
  free(buf);
  return best;
}

static const char *weights_name(const tl_checkpoint *ck) {
  return ck->weights == TL_WEIGHTS_F32 ? "f32" : ck->weights == TL_WEIGHTS_BF16 ? "bf16" : "int8 Q8_0";
}

static double weight_bytes(const tl_checkpoint *ck) {
  const tl_config *c = &ck->c;
  double d = c->dim, kv = tl_kv_dim(c), h = c->hidden_dim, L = c->n_layers, V = c->vocab_size;
  double params = L * (d * d * 2 + kv * d * 2 + h * d * 3) + V * d;
  double per = ck->weights == TL_WEIGHTS_F32    ? 4.0
               : ck->weights == TL_WEIGHTS_BF16 ? 2.0
                                                : 1.0 + 4.0 / ck->group_size;
  return params * per + (2 * L + 1) * d * 4;
}

typedef struct {
  double prompt_tps, gen_tps;
} result;

static int *bench_tokens(int n) {
  int *toks = malloc(sizeof(int) * (size_t)n);
  for (int i = 0; toks && i < n; i++)
    toks[i] = 3 + (i * 7919) % 20000;
  return toks;
}

/* The prompt at position 0 (timed when `timed`; the plain C goes one token at a time, as
   run.c does). */
static int prompt_phase(tl_model *m, const int *toks, int prompt, int timed, result *r) {
  float *logits;
  double t0 = now();
  int step = timed ? m->max_batch : 1;
  if (step > 256 && !timed)
    step = 1;
  for (int at = 0; at < prompt; at += step) {
    int n = prompt - at < step ? prompt - at : step;
    if (m->forward(m, toks + at, n, at, &logits))
      return -1;
  }
  r->prompt_tps = timed ? prompt / (now() - t0) : 0;
  return 0;
}

/* gen tokens one at a time from position *pos; keeps the best rate over the rounds. */
static int gen_round(tl_model *m, const int *toks, int *pos, int gen, result *r) {
  float *logits;
  double t0 = now();
  for (int i = 0; i < gen; i++, (*pos)++)
    if (m->forward(m, &toks[*pos], 1, *pos, &logits))
      return -1;
  double tps = gen / (now() - t0);
  if (tps > r->gen_tps)
    r->gen_tps = tps;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: te-llama-bench CHECKPOINT [--threads N] [--prompt P] [--gen G] "
                    "[--skip-plain-prompt] [--only te|plain]\n");
    return 2;
  }
  int threads = 1, prompt = 128, gen = 64, plain_prompt = 1;
  const char *only = NULL, *plain_path = NULL;
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--prompt") && i + 1 < argc)
      prompt = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--gen") && i + 1 < argc)
      gen = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--skip-plain-prompt"))
      plain_prompt = 0;
    else if (!strcmp(argv[i], "--only") && i + 1 < argc)
      only = argv[++i];
    else if (!strcmp(argv[i], "--plain") && i + 1 < argc)
      plain_path = argv[++i];
  }
  char err[1024];
  tl_checkpoint ck, ck_plain;
  if (tl_checkpoint_open(argv[1], &ck, err, sizeof err) ||
      (plain_path && tl_checkpoint_open(plain_path, &ck_plain, err, sizeof err))) {
    fprintf(stderr, "te-llama-bench: %s\n", err);
    return 1;
  }
  const tl_checkpoint *pck = plain_path ? &ck_plain : &ck;
  if (memcmp(&pck->c, &ck.c, sizeof ck.c)) {
    fprintf(stderr, "te-llama-bench: %s and %s are models of different shapes\n", argv[1],
            plain_path);
    return 1;
  }
  if (prompt + gen > ck.c.seq_len)
    gen = ck.c.seq_len - prompt;
  omp_set_num_threads(threads);
  te_rt_set_num_threads(threads);
  double gbs = read_bandwidth(threads), bytes = weight_bytes(&ck);
  double limit = gbs * 1e9 / bytes;
  printf("checkpoint %s: dim %d, %d layers, %d/%d heads, %s; %.0f MB of weights a token\n", argv[1],
         ck.c.dim, ck.c.n_layers, ck.c.n_heads, ck.c.n_kv_heads, weights_name(&ck), bytes / 1e6);
  if (plain_path)
    printf("plain C on %s: %s; %.0f MB of weights a token\n", plain_path, weights_name(pck),
           weight_bytes(pck) / 1e6);
  printf("threads %d: read bandwidth %.2f GB/s -> generation limit %.2f tok/s\n", threads, gbs,
         limit);
  /* Both engines hold the same checkpoint; the generation rounds alternate between them so
     that the machine's other load falls on both alike; each keeps its best round. */
  result rt = {0, 0}, rp = {0, 0};
  int use_te = !only || !strcmp(only, "te"), use_plain = !only || !strcmp(only, "plain");
  enum { ROUNDS = 3 };
  if (prompt + ROUNDS * gen > ck.c.seq_len)
    gen = (ck.c.seq_len - prompt) / ROUNDS;
  int *toks = bench_tokens(prompt + ROUNDS * gen);
  tl_model *te = use_te ? tl_te_model_new(&ck, err, sizeof err) : NULL;
  tl_model *pl = use_plain ? tl_ref_model_new(pck, err, sizeof err) : NULL;
  if ((use_te && !te) || (use_plain && !pl)) {
    fprintf(stderr, "te-llama-bench: %s\n", err);
    return 1;
  }
  if ((te && prompt_phase(te, toks, prompt, 1, &rt)) ||
      (pl && prompt_phase(pl, toks, prompt, plain_prompt, &rp))) {
    fprintf(stderr, "te-llama-bench: prompt: %s %s\n", te ? te->err : "", pl ? pl->err : "");
    return 1;
  }
  int pos_te = prompt, pos_pl = prompt;
  for (int round = 0; round < ROUNDS; round++)
    if ((te && gen_round(te, toks, &pos_te, gen, &rt)) ||
        (pl && gen_round(pl, toks, &pos_pl, gen, &rp))) {
      fprintf(stderr, "te-llama-bench: generation failed\n");
      return 1;
    }
  if (te)
    printf("te-llama  prompt %8.2f tok/s   gen %8.2f tok/s   %.2f of the limit\n", rt.prompt_tps,
           rt.gen_tps, rt.gen_tps / limit);
  if (pl)
    printf("plain C   prompt %8.2f tok/s   gen %8.2f tok/s   %.2f of the limit (%s)\n",
           rp.prompt_tps, rp.gen_tps, rp.gen_tps / (gbs * 1e9 / weight_bytes(pck)),
           weights_name(pck));
  tl_model_free(te);
  tl_model_free(pl);
  free(toks);
  if (rt.gen_tps > 0 && rp.gen_tps > 0)
    printf("ratio te / plain: prompt %.2fx, gen %.2fx\n",
           rp.prompt_tps > 0 ? rt.prompt_tps / rp.prompt_tps : 0, rt.gen_tps / rp.gen_tps);
  tl_checkpoint_close(&ck);
  if (plain_path)
    tl_checkpoint_close(&ck_plain);
  return 0;
}
