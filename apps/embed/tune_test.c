/* tune_test.c — te-embed's kernels tuned as a model (docs/tuning-tasks.md), end to end: after
 * apps.embed_tune_tasks exported the tasks and ran `te-tune tune-tasks` on them with a tiny
 * budget, this checks
 *   - the allocation table: every task had its warm-up round, the budget was spent and no more;
 *   - the generator with the log: every exported kernel takes the log's schedule (replayed on
 *     the symbolic kernel), and gives the hand-scheduled kernel's outputs (within f32 rounding
 *     of a different summation order) at a size other than the tuned one and dividing none of
 *     the tiles, on random non-zero inputs with the outputs poisoned (NaN) first.
 * The hand kernels themselves are checked against plain C by apps.embed_kernels.
 *
 *   embed_tune_test LOG ALLOCATION BUDGET      (CTest apps.embed_tune_apply)
 */
#include "gen.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN, TUNED_BATCH = 2, TUNED_SEQ = 16 };
enum { B = 2, S = 28, M = B * S }; /* the size checked: 56 rows, not a multiple of 6 or 48 */

static int failures;
static unsigned seed = 7;

static float uniform(void) { /* non-zero, in [-1, -0.05] U [0.05, 1] */
  seed = seed * 1664525u + 1013904223u;
  float u = (float)(seed >> 8) / 16777216.0f;
  return (u < 0.5f ? -1.0f : 1.0f) * (0.05f + 1.9f * fabsf(u - 0.5f));
}

/* One kernel argument: its shape and data (random for inputs, NaN for the output). */
typedef struct arg {
  int ndim;
  int64_t shape[4];
  float *data;
  size_t n;
} arg;

static arg make_arg(int ndim, const int64_t *shape, bool output) {
  arg a = {ndim, {0}, NULL, 1};
  for (int d = 0; d < ndim; d++)
    a.n *= (size_t)(a.shape[d] = shape[d]);
  a.data = malloc(sizeof(float) * a.n);
  for (size_t i = 0; a.data && i < a.n; i++)
    a.data[i] = output ? NAN : uniform();
  return a;
}

/* The arguments of kernel k at B x S (the output last); *terms: the sums' length. */
static int kernel_args(const gen *g, int k, arg *a, int *terms) {
  static const int64_t lin[7][2] = {{0}, {3 * H, H}, {0}, {H, H}, {F, H}, {H, F}, {0}};
  if (k == 2) { /* attention: QKV, mask_bias (sentence 1 ends in 5 padding tokens), out */
    a[0] = make_arg(3, (int64_t[]){B, S, 3 * H}, false);
    a[1] = make_arg(3, (int64_t[]){B, S / 4, 4}, false);
    for (size_t i = 0; a[1].data && i < a[1].n; i++)
      a[1].data[i] = i >= a[1].n - 5 ? -1e30f : 0.0f;
    a[2] = make_arg(4, (int64_t[]){B, S, MINILM_HEADS, MINILM_HEAD_DIM}, true);
    *terms = S;
    return 3;
  }
  if (k == 6) { /* residual + layer norm: X, R, gamma, beta, Y */
    a[0] = make_arg(2, (int64_t[]){M, H}, false);
    a[1] = make_arg(2, (int64_t[]){M, H}, false);
    a[2] = make_arg(1, (int64_t[]){H}, false);
    a[3] = make_arg(1, (int64_t[]){H}, false);
    a[4] = make_arg(2, (int64_t[]){M, H}, true);
    *terms = H;
    return 5;
  }
  int64_t n = lin[k][0], kk = lin[k][1]; /* dense: X, Wp (packed panels), bias, Y */
  a[0] = make_arg(2, (int64_t[]){M, kk}, false);
  a[1] = make_arg(3, (int64_t[]){n / g->nr, kk, g->nr}, false);
  a[2] = make_arg(1, (int64_t[]){n}, false);
  a[3] = make_arg(2, (int64_t[]){M, n}, true);
  *terms = (int)kk;
  return 4;
}

static te_status call(te_module *mod, const char *name, arg *a, int nargs) {
  DLTensor t[5];
  DLTensor *p[5];
  for (int i = 0; i < nargs; i++) {
    t[i] = (DLTensor){a[i].data, {kDLCPU, 0}, a[i].ndim, {kDLFloat, 32, 1}, a[i].shape,
                      NULL,      0};
    p[i] = &t[i];
  }
  return te_module_call(mod, name, nargs, p, 0, NULL);
}

/* The tuned kernel's output against the hand kernel's. */
static void compare(const char *name, const float *got, const float *want, size_t n, int terms) {
  double mean = 0;
  for (size_t i = 0; i < n; i++)
    mean += fabs(want[i]) / (double)n;
  double rtol = 1e-4 * (terms > 256 ? sqrt(terms / 256.0) : 1.0);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < n; i++)
    if (!(fabs(got[i] - want[i]) <= rtol * (fabs(want[i]) + mean)))
      first = bad++ ? first : i;
  printf("%-16s %s", name, bad ? "WRONG" : "ok");
  if (bad)
    printf(": %zu of %zu differ, first [%zu]: tuned %g, hand %g", bad, n, first, got[first],
           want[first]);
  printf("\n");
  failures += bad != 0;
}

static bool gen_init(gen *g, const char *log) {
  *g = (gen){te_ctx_new(), NULL, 0, 0, 0, 0, NULL, log, NULL, 0};
  if (!g->ctx || !(g->target = te_target_parse(g->ctx, "llvm")))
    return false;
  g->lanes = te_target_vector_bits(g->target) / 32;
  g->nr = 4 * g->lanes;
  return true;
}

/* Kernel k with the hand schedule (log NULL) or the log's. */
static te_module *make_kernel(gen *g, int k) {
  te_module *m = NULL;
  te_status st = TE_OK;
  if (g->log) {
    g->batch = TUNED_BATCH, g->seq = TUNED_SEQ;
    st = gen_kernel(g, k, &m);
    g->batch = g->seq = 0;
  }
  if (st == TE_OK)
    st = gen_kernel(g, k, &m);
  if (st != TE_OK) {
    printf("%s: %s\n", gen_kernel_name(k), te_last_error(g->ctx));
    failures++;
    return NULL;
  }
  return m;
}

static void check_kernel(gen *hand, gen *tuned, int k) {
  const char *name = gen_kernel_name(k);
  int before = tuned->tuned, terms = 0;
  te_module *mh = make_kernel(hand, k), *mt = make_kernel(tuned, k);
  if (!mh || !mt)
    return;
  if (tuned->tuned != before + 1) {
    printf("%s: the generator did not take the log's schedule\n", name);
    failures++;
  }
  arg a[5];
  int n = kernel_args(hand, k, a, &terms);
  float *want = malloc(sizeof(float) * a[n - 1].n);
  if (want && call(mh, name, a, n) == TE_OK) {
    memcpy(want, a[n - 1].data, sizeof(float) * a[n - 1].n);
    for (size_t i = 0; i < a[n - 1].n; i++)
      a[n - 1].data[i] = NAN; /* poisoned again for the tuned kernel */
    if (call(mt, name, a, n) == TE_OK)
      compare(name, a[n - 1].data, want, a[n - 1].n, terms);
    else
      printf("%s: the tuned kernel failed: %s\n", name, te_last_error(tuned->ctx)), failures++;
  } else {
    printf("%s: the hand kernel failed: %s\n", name, te_last_error(hand->ctx));
    failures++;
  }
  free(want);
  for (int i = 0; i < n; i++)
    free(a[i].data);
}

/* Every exported task in the allocation table, with its warm-up round; trials add up to budget. */
static void check_allocation(const char *path, int budget) {
  FILE *f = fopen(path, "r");
  if (!f) {
    printf("no allocation table '%s'\n", path);
    failures++;
    return;
  }
  char line[512], name[64];
  int rows = 0, trials_sum = 0, rounds, trials;
  double weight;
  while (fgets(line, sizeof line, f))
    if (sscanf(line, "%63[^\t]\t%lf\t%d\t%d", name, &weight, &rounds, &trials) == 4) {
      rows++;
      trials_sum += trials;
      if (rounds < 1) {
        printf("allocation: task %s had no round (the warm-up gives every task one)\n", name);
        failures++;
      }
    }
  fclose(f);
  printf("allocation: %d tasks, %d trials of a budget of %d\n", rows, trials_sum, budget);
  if (rows != GEN_NKERNELS - 1 || trials_sum != budget)
    failures++;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: embed_tune_test LOG ALLOCATION BUDGET\n");
    return 2;
  }
  check_allocation(argv[2], atoi(argv[3]));
  gen hand, tuned;
  if (!gen_init(&hand, NULL) || !gen_init(&tuned, argv[1])) {
    printf("cannot make a context and a target\n");
    return 1;
  }
  for (int k = 1; k < GEN_NKERNELS; k++) /* embed_ln is not a task (gen_kernels.c) */
    check_kernel(&hand, &tuned, k);
  te_ctx_free(hand.ctx);
  te_ctx_free(tuned.ctx);
  printf("%s\n", failures ? "FAILED" : "all tuned kernels match the hand ones");
  return failures != 0;
}
