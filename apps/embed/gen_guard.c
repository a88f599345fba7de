/* gen_guard.c — tuning never makes te-embed slower: before a kernel takes the tuning log's
 * schedule, the generator times it against the hand schedule, both as the library would ship
 * them (symbolic sizes, bound at the call to the tuned batch), side by side in alternating
 * rounds with the caches flushed before each call (te-embed's weights are out of cache when a
 * kernel starts: 90 MB of them go by in a pass), on one thread, and keeps the faster.
 *
 * Why not trust the log: te-tune measured the kernel with constant sizes and its inputs in
 * cache; the library's kernel has symbolic sizes (its loops have tails and guards the constant
 * one folded away) and runs among other kernels. Measured here: a log 1.05x faster than the
 * hand schedules made te-embed 1.1-1.3x slower in CPU time without this guard.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include "gen.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN, ROUNDS = 7, FLUSH_BYTES = 64 << 20 };

static void set_shape(gen_arg *a, int ndim, const int64_t *shape) {
  a->ndim = ndim;
  a->n = 1;
  for (int d = 0; d < ndim; d++)
    a->n *= (size_t)(a->shape[d] = shape[d]);
}

int gen_kernel_args(const gen *g, int k, int64_t b, int64_t s, gen_arg a[GEN_MAX_ARGS],
                    int *terms) {
  static const int64_t dense[GEN_NKERNELS][2] = {{0}, {3 * H, H}, {0}, {H, H}, {F, H}, {H, F}, {0}};
  int64_t m = b * s;
  memset(a, 0, sizeof(gen_arg) * GEN_MAX_ARGS);
  if (k == 2) { /* embed_attention: QKV, mask_bias, out */
    set_shape(&a[0], 3, (int64_t[]){b, s, 3 * H});
    set_shape(&a[1], 3, (int64_t[]){b, s / 4, 4});
    set_shape(&a[2], 4, (int64_t[]){b, s, MINILM_HEADS, MINILM_HEAD_DIM});
    *terms = (int)s;
    return 3;
  }
  if (k == 6) { /* embed_add_ln: X, R, gamma, beta, Y */
    set_shape(&a[0], 2, (int64_t[]){m, H});
    set_shape(&a[1], 2, (int64_t[]){m, H});
    set_shape(&a[2], 1, (int64_t[]){H});
    set_shape(&a[3], 1, (int64_t[]){H});
    set_shape(&a[4], 2, (int64_t[]){m, H});
    *terms = H;
    return 5;
  }
  if (k <= 0 || k >= GEN_NKERNELS)
    return 0;                                /* embed_ln: not a task */
  int64_t n = dense[k][0], kk = dense[k][1]; /* the dense layers: X, Wp (panels), bias, Y */
  set_shape(&a[0], 2, (int64_t[]){m, kk});
  set_shape(&a[1], 3, (int64_t[]){n / g->nr, kk, g->nr});
  set_shape(&a[2], 1, (int64_t[]){n});
  set_shape(&a[3], 2, (int64_t[]){m, n});
  *terms = (int)kk;
  return 4;
}

te_status gen_call(te_module *mod, const char *name, gen_arg *a, int nargs) {
  DLTensor t[GEN_MAX_ARGS];
  DLTensor *p[GEN_MAX_ARGS];
  for (int i = 0; i < nargs; i++) {
    t[i] = (DLTensor){a[i].data, {kDLCPU, 0}, a[i].ndim, {kDLFloat, 32, 1}, a[i].shape, NULL, 0};
    p[i] = &t[i];
  }
  return te_module_call(mod, name, nargs, p, 0, NULL);
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

/* The median time of one call of each module, alternating between them, caches flushed. */
static te_status time_pair(const char *name, te_module *const mods[2], gen_arg *a, int nargs,
                           double med[2]) {
  double t[2][ROUNDS];
  unsigned char *junk = malloc(FLUSH_BYTES);
  if (!junk)
    return TE_ERR_NOMEM;
  te_status st = TE_OK;
  for (int r = 0; r < ROUNDS && st == TE_OK; r++)
    for (int j = 0; j < 2 && st == TE_OK; j++) {
      int which = (r + j) % 2; /* the order turns each round: neither is always first */
      memset(junk, r + j, FLUSH_BYTES);
      double t0 = now_s();
      st = gen_call(mods[which], name, a, nargs);
      t[which][r] = now_s() - t0;
    }
  free(junk);
  for (int j = 0; j < 2; j++) {
    qsort(t[j], ROUNDS, sizeof(double), by_value);
    med[j] = t[j][ROUNDS / 2];
  }
  return st;
}

te_status gen_guard(gen *g, int k, te_module *hand, te_module *tuned, bool *use_tuned) {
  gen_arg a[GEN_MAX_ARGS];
  int terms, nargs = gen_kernel_args(g, k, g->tune_batch, g->tune_seq, a, &terms);
  te_status st = TE_OK;
  for (int i = 0; i < nargs && st == TE_OK; i++) {
    if (!(a[i].data = malloc(sizeof(float) * a[i].n)))
      st = TE_ERR_NOMEM;
    for (size_t e = 0; st == TE_OK && e < a[i].n; e++)
      a[i].data[e] = (k == 2 && i == 1) ? 0.0f : (float)((e * 2654435761u) % 1000) * 1e-3f - 0.5f;
  }
  double med[2] = {0, 0};
  te_set_num_threads(1); /* one thread's speed: woken threads of a busy machine wait for a core */
  if (st == TE_OK)
    st = time_pair(gen_kernel_name(k), (te_module *const[]){hand, tuned}, a, nargs, med);
  te_set_num_threads(0);
  for (int i = 0; i < nargs; i++)
    free(a[i].data);
  *use_tuned = st == TE_OK && med[1] <= med[0];
  if (st == TE_OK)
    fprintf(stderr,
            "gen_kernels: %s: %s (%.4g ms against the hand schedule's %.4g ms at %lld x "
            "%lld)\n",
            gen_kernel_name(k), *use_tuned ? "the tuning log's schedule" : "hand schedule kept",
            med[1] * 1e3, med[0] * 1e3, (long long)g->tune_batch, (long long)g->tune_seq);
  return st;
}
