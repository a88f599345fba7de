/* kernel_bench.c — te-llama's matrix-vector kernels alone, against the machine's read bandwidth:
 *
 *   te-llama-kernel-bench [--threads N] [--config 110M|1.1B] [--mb M]
 *
 * Generation is memory-bound: each matrix-vector product streams its weights once, so a kernel
 * is as good as the fraction of the read bandwidth it reaches. For each product of a decoder
 * layer at the config's shapes (and the classifier), f32 and bf16, this calls the kernel on
 * consecutive copies of the weights (--mb of them in all; by default max(1 GiB, 4 x the L3
 * cache), te-llama-bench's probe: a 256 MB pass fits in Emerald Rapids' 260 MiB L3 and times
 * the cache) and prints GB/s of weights read and that rate over the bandwidth of summing a
 * buffer of the same size (read_bandwidth, as te-llama-bench measures it). Rates are per CPU second
 * / threads, as te-llama-bench's "cpu" rates (the machine may be shared), best of 5 passes; the
 * wall-clock rate is printed beside. Then the attention of one generated token (tl_attention) at
 * 160 and 512 cached positions: GB/s of the KV cache it reads, against the same bandwidth.
 */
#define _POSIX_C_SOURCE 200809L
#include "tl_kernels.h"

#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double clock_of(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int threads = 1;

typedef struct {
  double wall, cpu; /* GB/s */
} rate;

static void keep_best(rate *best, double gb, double t0, double c0) {
  double w = gb / (clock_of(CLOCK_MONOTONIC) - t0);
  double c = gb * threads / (clock_of(CLOCK_PROCESS_CPUTIME_ID) - c0);
  if (w > best->wall)
    best->wall = w;
  if (c > best->cpu)
    best->cpu = c;
}

/* One pass summing the buffer as 64 independent partial sums (te-llama-bench's read_bandwidth),
   its rate kept in *best. */
static void bandwidth_pass(const float *buf, size_t n, rate *best) {
  enum { PARTS = 64 };
  static volatile float sink;
  double t0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
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
  keep_best(best, (double)(n / PARTS * PARTS * sizeof(float)) / 1e9, t0, c0);
  sink += total;
}

typedef enum { PLAIN, ADD, SWIGLU } kind;
typedef struct {
  const char *name;
  kind k;
  int64_t n, k_;
} product;

static DLTensor tensor(void *data, int bits, int code, int ndim, int64_t *shape) {
  return (DLTensor){data, {kDLCPU, 0}, ndim, {(uint8_t)code, (uint8_t)bits, 1}, shape, NULL, 0};
}

/* One kernel at one shape: best GB/s of weights over 5 passes through `copies` weight copies. */
/* One kernel at one shape: best GB/s of weights over ROUNDS passes through weight copies of
   `budget` bytes in all, each pass after one over the bandwidth buffer (best kept in *bw), so
   that the machine's other load falls on both alike. */
enum { ROUNDS = 7 };
static rate run(const product *s, int bf16, size_t budget, const float *buf, size_t nbuf,
                rate *bw) {
  size_t wbytes = (size_t)s->n * (size_t)s->k_ * (bf16 ? 2 : 4) * (s->k == SWIGLU ? 2 : 1);
  size_t copies = budget / wbytes < 2 ? 2 : budget / wbytes;
  size_t each = (wbytes + 4095) / 4096 * 4096;
  char *w = aligned_alloc(4096, each * copies);
  float *x = malloc(sizeof(float) * (size_t)s->k_), *r = malloc(sizeof(float) * (size_t)s->n);
  float *y = malloc(sizeof(float) * (size_t)s->n);
  rate best = {0, 0};
  if (!w || !x || !r || !y)
    goto done;
  for (size_t i = 0; i < each * copies / 2; i++) /* bf16 / f32 halves of small values */
    ((uint16_t *)w)[i] = (uint16_t)(0x3c00 + (i * 37) % 128);
  for (int64_t i = 0; i < s->k_; i++)
    x[i] = 0.01f * (float)(i % 17);
  for (int64_t i = 0; i < s->n; i++)
    r[i] = 1;
  int64_t xs[1] = {s->k_}, ws[2] = {s->n, s->k_}, ys[1] = {s->n};
  int bits = bf16 ? 16 : 32, code = bf16 ? kDLBfloat : kDLFloat;
  for (int rep = 0; rep < ROUNDS; rep++) {
    bandwidth_pass(buf, nbuf, bw);
    double t0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t c = 0; c < copies; c++) {
      char *wc = w + c * each;
      DLTensor X = tensor(x, 32, kDLFloat, 1, xs), W = tensor(wc, bits, code, 2, ws);
      DLTensor W3 = tensor(wc + wbytes / 2, bits, code, 2, ws), Y = tensor(y, 32, kDLFloat, 1, ys);
      DLTensor R = tensor(r, 32, kDLFloat, 1, ys);
      int32_t rc = 0;
      if (s->k == PLAIN)
        rc = bf16 ? tl_bf16_matvec(&X, &W, &Y) : tl_matvec(&X, &W, &Y);
      else if (s->k == ADD)
        rc = bf16 ? tl_bf16_matvec_add(&X, &W, &R, &Y) : tl_matvec_add(&X, &W, &R, &Y);
      else
        rc = bf16 ? tl_bf16_matvec_swiglu(&X, &W, &W3, &Y) : tl_matvec_swiglu(&X, &W, &W3, &Y);
      if (rc) {
        fprintf(stderr, "%s: %s\n", s->name, te_rt_last_error());
        exit(1);
      }
    }
    keep_best(&best, (double)(wbytes * copies) / 1e9, t0, c0);
  }
done:
  free(w), free(x), free(r), free(y);
  return best;
}

/* tl_attention for one generated token at P cached positions, G x M heads of hs: best GB/s of
   the KV cache it reads (every head's keys and values of the P positions) over ROUNDS passes
   through layer caches of `budget` bytes in all, as run() does for the weights. */
static rate run_attention(int64_t G, int64_t M, int64_t hs, int64_t P, size_t budget,
                          const float *buf, size_t nbuf, rate *bw) {
  int64_t nb = (P + 15) / 16;
  size_t kfl = (size_t)(G * nb * hs * 16), vfl = (size_t)(G * P * hs);
  size_t each = (kfl + vfl) * sizeof(float), copies = budget / each < 2 ? 2 : budget / each;
  float *cache = aligned_alloc(64, each * copies),
        *q = malloc(sizeof(float) * (size_t)(G * M * hs));
  float *o = malloc(sizeof(float) * (size_t)(G * M * hs));
  rate best = {0, 0};
  if (!cache || !q || !o)
    goto done;
  for (size_t i = 0; i < (kfl + vfl) * copies; i++)
    cache[i] = 0.01f * (float)(i % 13);
  for (int64_t i = 0; i < G * M * hs; i++)
    q[i] = 0.1f * (float)(i % 7);
  int64_t qs[4] = {1, G, M, hs}, ks[4] = {G, nb, hs, 16}, vs[3] = {G, P, hs},
          vst[3] = {P * hs, hs, 1};
  for (int rep = 0; rep < ROUNDS; rep++) {
    bandwidth_pass(buf, nbuf, bw);
    double t0 = clock_of(CLOCK_MONOTONIC), c0 = clock_of(CLOCK_PROCESS_CPUTIME_ID);
    for (size_t c = 0; c < copies; c++) {
      float *kc = cache + c * (kfl + vfl);
      DLTensor Q = tensor(q, 32, kDLFloat, 4, qs), K = tensor(kc, 32, kDLFloat, 4, ks);
      DLTensor V = tensor(kc + kfl, 32, kDLFloat, 3, vs), O = tensor(o, 32, kDLFloat, 4, qs);
      V.strides = vst;
      if (tl_attention(&Q, &K, &V, &O)) {
        fprintf(stderr, "attention: %s\n", te_rt_last_error());
        exit(1);
      }
    }
    keep_best(&best, (double)(each * copies) / 1e9, t0, c0);
  }
done:
  free(cache), free(q), free(o);
  return best;
}

int main(int argc, char **argv) {
  const char *config = "110M";
  size_t mb = 1024;
#ifdef _SC_LEVEL3_CACHE_SIZE
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 > 0 && (size_t)l3 * 4 / (1 << 20) > mb)
    mb = (size_t)l3 * 4 / (1 << 20);
#endif
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--config") && i + 1 < argc)
      config = argv[++i];
    else if (!strcmp(argv[i], "--mb") && i + 1 < argc)
      mb = (size_t)atoi(argv[++i]);
    else {
      fprintf(stderr, "usage: te-llama-kernel-bench [--threads N] [--config 110M|1.1B] [--mb M]\n");
      return 2;
    }
  }
  omp_set_num_threads(threads);
  te_rt_set_num_threads(threads);
  int big = !strcmp(config, "1.1B");
  int64_t d = big ? 2048 : 768, kv = big ? 256 : 768, hid = big ? 5632 : 2048;
  product shapes[] = {{"wq (d x d)", PLAIN, d, d},    {"wk (kv x d)", PLAIN, kv, d},
                      {"wo + residual", ADD, d, d},   {"w1, w3 + swiglu", SWIGLU, hid, d},
                      {"w2 + residual", ADD, d, hid}, {"classifier", PLAIN, 32000, d}};
  size_t budget = mb << 20, nbuf = budget / sizeof(float);
  float *buf = aligned_alloc(4096, nbuf * sizeof(float));
  if (!buf)
    return 1;
#pragma omp parallel for num_threads(threads)
  for (size_t i = 0; i < nbuf; i++)
    buf[i] = (float)(i & 7);
  printf("%s shapes, %d thread(s), %zu MB of weights a pass, best of %d passes\n", config, threads,
         mb, ROUNDS);
  for (int b = 0; b < 2; b++)
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      rate bw = {0, 0}, r = run(&shapes[i], b, budget, buf, nbuf, &bw);
      printf("%-5s %-16s %5lld x %-5lld  %6.2f GB/s (cpu %6.2f)  bandwidth %6.2f (cpu %6.2f)  "
             "%.2f of it (cpu %.2f)\n",
             b ? "bf16" : "f32", shapes[i].name, (long long)shapes[i].n, (long long)shapes[i].k_,
             r.wall, r.cpu, bw.wall, bw.cpu, r.wall / bw.wall, r.cpu / bw.cpu);
    }
  int64_t G = big ? 4 : 12, M = big ? 8 : 1;
  static const int64_t positions[] = {160, 512};
  for (size_t i = 0; i < 2; i++) {
    rate bw = {0, 0}, r = run_attention(G, M, 64, positions[i], budget, buf, nbuf, &bw);
    printf("f32   attention, %3lld positions  (KV cache)     %6.2f GB/s (cpu %6.2f)  bandwidth "
           "%6.2f (cpu %6.2f)  %.2f of it (cpu %.2f)\n",
           (long long)positions[i], r.wall, r.cpu, bw.wall, bw.cpu, r.wall / bw.wall,
           r.cpu / bw.cpu);
  }
  free(buf);
  return 0;
}
