/* gen_guard.c — tuning never makes te-embed slower: before a kernel takes the tuning log's
 * schedule, the generator times it against the hand schedule, both as the library would ship
 * them (symbolic sizes, bound at the call to the tuned batch), side by side in alternating
 * rounds with the caches flushed before each call (te-embed's weights are out of cache when a
 * kernel starts: 90 MB of them go by in a pass), on one thread, and keeps the hand one unless
 * the tuned one is clearly faster (apps/common/tune_guard.h: the timing and the rule, shared
 * with te-llama's generator).
 *
 * Why not trust the log: te-tune measured the kernel with constant sizes and its inputs in
 * cache; the library's kernel has symbolic sizes (its loops have tails and guards the constant
 * one folded away) and runs among other kernels. Measured here: a log 1.05x faster than the
 * hand schedules made te-embed 1.1-1.3x slower in CPU time without this guard.
 */
#include "gen.h"

#include "../common/tune_guard.h"

#include <stdlib.h>
#include <string.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN };

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

/* The DLTensors of the arguments, in t, and pointers to them in p. */
static void dltensors(gen_arg *a, int nargs, DLTensor t[], DLTensor *p[]) {
  for (int i = 0; i < nargs; i++) {
    t[i] = (DLTensor){a[i].data, {kDLCPU, 0}, a[i].ndim, {kDLFloat, 32, 1}, a[i].shape, NULL, 0};
    p[i] = &t[i];
  }
}

te_status gen_call(te_module *mod, const char *name, gen_arg *a, int nargs) {
  DLTensor t[GEN_MAX_ARGS];
  DLTensor *p[GEN_MAX_ARGS];
  dltensors(a, nargs, t, p);
  return te_module_call(mod, name, nargs, p, 0, NULL);
}

/* The guard times at most this many rows (sentences x tokens): of the tuned 32 x 128, 8
   sentences, so that the build's timing stays at a few seconds (a kernel's time per row hardly
   changes past a few hundred rows: its weights are reused across them from cache). */
enum { GUARD_ROWS = 1024 };

te_status gen_guard(gen *g, int k, te_module *hand, te_module *tuned, bool *use_tuned) {
  gen_arg a[GEN_MAX_ARGS];
  int64_t b = GUARD_ROWS / g->tune_seq;
  b = b < 1 ? 1 : b > g->tune_batch ? g->tune_batch : b;
  int terms, nargs = gen_kernel_args(g, k, b, g->tune_seq, a, &terms);
  te_status st = TE_OK;
  for (int i = 0; i < nargs && st == TE_OK; i++) {
    if (!(a[i].data = malloc(sizeof(float) * a[i].n)))
      st = TE_ERR_NOMEM;
    for (size_t e = 0; st == TE_OK && e < a[i].n; e++)
      a[i].data[e] = (k == 2 && i == 1) ? 0.0f : (float)((e * 2654435761u) % 1000) * 1e-3f - 0.5f;
  }
  DLTensor t[GEN_MAX_ARGS];
  DLTensor *p[GEN_MAX_ARGS];
  dltensors(a, nargs, t, p);
  tg_verdict v;
  if (st == TE_OK)
    st = tg_compare(hand, tuned, gen_kernel_name(k), nargs, p, &v);
  for (int i = 0; i < nargs; i++)
    free(a[i].data);
  *use_tuned = st == TE_OK && v.use_tuned;
  if (st == TE_OK) {
    char what[64], where[64];
    snprintf(what, sizeof what, "gen_kernels: %s", gen_kernel_name(k));
    snprintf(where, sizeof where, "%lld x %lld", (long long)b, (long long)g->tune_seq);
    tg_report(what, where, &v);
  }
  return st;
}
