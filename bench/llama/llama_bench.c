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
 *   the norms; the embedding row is negligible) over this machine's memory read bandwidth,
 *   measured with the same thread count by summing a buffer of max(1 GiB, 4 x the L3 cache)
 *   (best of 5). Not a buffer as large as the weights: the 110M model's 219 MB of bf16 weights
 *   fit in a 260 MiB L3 (Emerald Rapids), and a probe over them measured the L3, not memory.
 * Prints one line per engine and "fraction of the limit" = achieved gen tok/s / limit tok/s.
 * The checkpoints' pages are touched once before anything is timed (fault_in).
 *
 * Each rate is given twice: per second of wall-clock time, and per second of CPU time divided
 * by the thread count ("cpu"): on a machine shared with other jobs a process may get a fraction
 * of a core (the development VM: 2 cores, load 8-14), and then the wall-clock rate measures
 * the scheduler; the CPU-time rate is what the engine does while it runs (for 2 threads it
 * assumes both threads had a core whenever either worked). The bandwidth is measured both
 * ways too, and each limit uses its own.
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
#include <unistd.h>

static double clock_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
static double now(void) { return clock_of(CLOCK_MONOTONIC); }
static double cpu_now(void) { return clock_of(CLOCK_PROCESS_CPUTIME_ID); }

typedef struct {
  double wall, cpu; /* a rate per wall-clock second; per CPU second / threads */
} rate;

static int bench_threads = 1;

/* The rates of `work` done since (t0, c0), kept in *best when higher. */
static void keep_best(rate *best, double work, double t0, double c0) {
  double w = work / (now() - t0), c = work * bench_threads / (cpu_now() - c0);
  if (w > best->wall)
    best->wall = w;
  if (c > best->cpu)
    best->cpu = c;
}

/* The bandwidth probe's buffer: max(1 GiB, 4 x the L3 cache), so that the probe reads memory
   (a buffer the last-level cache holds measures the cache: the 110M model's bf16 weights are
   219 MB, Emerald Rapids' L3 260 MiB). */
static double probe_bytes(void) {
  double bytes = (double)(1 << 30);
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0 && 4.0 * (double)l3 > bytes)
    bytes = 4.0 * (double)l3;
#endif
  return bytes;
}

/* GB/s of reading `bytes` (probe_bytes()) from memory on `threads` threads, best of 5; the
   page-aligned buffer is read as 64 independent partial sums, so that the adds keep up with
   memory. */
static rate read_bandwidth(int threads, double bytes) {
  enum { PARTS = 64 };
  size_t n = (size_t)(bytes / sizeof(float)) / PARTS * PARTS;
  float *buf = aligned_alloc(4096, n * sizeof(float));
  rate best = {0, 0};
  if (!buf)
    return best;
#pragma omp parallel for num_threads(threads)
  for (size_t i = 0; i < n; i++)
    buf[i] = (float)(i & 7);
  volatile float sink = 0;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = now(), c0 = cpu_now();
    float total = 0;
#pragma omp parallel for num_threads(threads) reduction(+ : total)
    for (size_t b = 0; b < n / PARTS; b++) {
      float part[PARTS];
      for (int j = 0; j < PARTS; j++)
        part[j] = buf[b * PARTS + (size_t)j];
      float s = 0;
      for (int j = 0; j < PARTS; j++)
        s += part[j];
      total += s;
    }
    keep_best(&best, (double)(n * sizeof(float)) / 1e9, t0, c0);
    sink += total;
  }
  (void)sink;
  free(buf);
  return best;
}

/* Reads one byte of every page of the checkpoint's mapping, so that neither engine's timed
   phases take the page faults of the first pass over the weights (the engine that ran first
   paid them all: 1M faults for the 1.1B model at f32, seconds of CPU time in its prompt). */
static void fault_in(const tl_checkpoint *ck) {
  volatile unsigned char sink = 0;
  for (size_t at = 0; at < ck->map_size; at += 4096)
    sink ^= ((const unsigned char *)ck->map)[at];
  (void)sink;
}

static const char *weights_name(const tl_checkpoint *ck) {
  return ck->weights == TL_WEIGHTS_F32    ? "f32"
         : ck->weights == TL_WEIGHTS_BF16 ? "bf16"
                                          : "int8 Q8_0";
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
  rate prompt, gen;
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
  double t0 = now(), c0 = cpu_now();
  int step = timed ? m->max_batch : 1;
  if (step > 256 && !timed)
    step = 1;
  for (int at = 0; at < prompt; at += step) {
    int n = prompt - at < step ? prompt - at : step;
    if (m->forward(m, toks + at, n, at, &logits))
      return -1;
  }
  if (timed)
    keep_best(&r->prompt, prompt, t0, c0);
  return 0;
}

/* gen tokens one at a time from position *pos; keeps the best rate over the rounds. */
static int gen_round(tl_model *m, const int *toks, int *pos, int gen, result *r) {
  float *logits;
  double t0 = now(), c0 = cpu_now();
  for (int i = 0; i < gen; i++, (*pos)++)
    if (m->forward(m, &toks[*pos], 1, *pos, &logits))
      return -1;
  keep_best(&r->gen, gen, t0, c0);
  return 0;
}

/* One engine's line: its rates and generation as a fraction of its own weights' limit. */
static void report(const char *engine, const result *r, rate bw, double bytes,
                   const char *weights) {
  printf("%-9s prompt %8.2f tok/s (cpu %8.2f)   gen %8.2f tok/s (cpu %8.2f)   %.2f of the "
         "limit (cpu %.2f), %s\n",
         engine, r->prompt.wall, r->prompt.cpu, r->gen.wall, r->gen.cpu,
         r->gen.wall / (bw.wall * 1e9 / bytes), r->gen.cpu / (bw.cpu * 1e9 / bytes), weights);
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
  fault_in(&ck);
  if (plain_path)
    fault_in(&ck_plain);
  omp_set_num_threads(threads);
  te_rt_set_num_threads(threads);
  bench_threads = threads;
  double bytes = weight_bytes(&ck), pbytes = weight_bytes(pck);
  double probe = probe_bytes();
  rate bw = read_bandwidth(threads, probe);
  printf("checkpoint %s: dim %d, %d layers, %d/%d heads, %s; %.0f MB of weights a token\n", argv[1],
         ck.c.dim, ck.c.n_layers, ck.c.n_heads, ck.c.n_kv_heads, weights_name(&ck), bytes / 1e6);
  if (plain_path)
    printf("plain C on %s: %s; %.0f MB of weights a token\n", plain_path, weights_name(pck),
           weight_bytes(pck) / 1e6);
  printf("threads %d: memory read bandwidth %.2f GB/s (cpu %.2f; a %.0f MiB buffer, max(1 GiB, "
         "4 x the L3)) -> generation limit %.2f tok/s (cpu %.2f)\n",
         threads, bw.wall, bw.cpu, probe / (1 << 20), bw.wall * 1e9 / bytes, bw.cpu * 1e9 / bytes);
  /* Both engines hold the same checkpoint; the generation rounds alternate between them so
     that the machine's other load falls on both alike; each keeps its best round. */
  result rt = {{0, 0}, {0, 0}}, rp = {{0, 0}, {0, 0}};
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
    report("te-llama", &rt, bw, bytes, weights_name(&ck));
  if (pl)
    report("plain C", &rp, bw, pbytes, weights_name(pck));
  tl_model_free(te);
  tl_model_free(pl);
  free(toks);
  if (rt.gen.wall > 0 && rp.gen.wall > 0)
    printf("ratio te / plain: prompt %.2fx (cpu %.2fx), gen %.2fx (cpu %.2fx)\n",
           rp.prompt.wall > 0 ? rt.prompt.wall / rp.prompt.wall : 0,
           rp.prompt.cpu > 0 ? rt.prompt.cpu / rp.prompt.cpu : 0, rt.gen.wall / rp.gen.wall,
           rt.gen.cpu / rp.gen.cpu);
  tl_checkpoint_close(&ck);
  if (plain_path)
    tl_checkpoint_close(&ck_plain);
  return 0;
}
