/* tune_test.c — te-embed's kernels tuned as a model (docs/tuning-tasks.md), end to end: after
 * apps.embed_tune_tasks exported the tasks and ran `te-tune tune-tasks` on them with a tiny
 * budget, this checks
 *   - the allocation table: every task had its warm-up round, the budget was spent and no more;
 *   - the generator with the log: every exported kernel takes the log's schedule (replayed on
 *     the symbolic kernel; untimed, then guarded by gen_guard, which may keep the hand one), and
 *     gives the hand-scheduled kernel's outputs (within f32 rounding
 *     of a different summation order) at a size other than the tuned one and dividing none of
 *     the tiles, on random non-zero inputs with the outputs poisoned (NaN) first.
 * The hand kernels themselves are checked against plain C by apps.embed_kernels.
 *
 *   embed_tune_test LOG ALLOCATION BUDGET      (CTest apps.embed_tune_apply)
 *   embed_tune_test --committed LOG BATCH SEQ  (CTest apps.embed_tuning_log: the log in the
 *                                              repository, tuned at BATCH x SEQ; no allocation;
 *                                              skipped, exit 77, on a CPU it has no record for)
 */
#include "gen.h"

#include "../common/tune_guard.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

enum { H = MINILM_HIDDEN, F = MINILM_FFN };
static int64_t tuned_batch = 2, tuned_seq = 16; /* the size the log was tuned at */
static bool tuned_committed;                    /* --committed: the repository's log */
enum { B = 2, S = 28, M = B * S }; /* the size checked: 56 rows, not a multiple of 6 or 48 */

static int failures;
static unsigned seed = 7;

static float uniform(void) { /* non-zero, in [-1, -0.05] U [0.05, 1] */
  seed = seed * 1664525u + 1013904223u;
  float u = (float)(seed >> 8) / 16777216.0f;
  return (u < 0.5f ? -1.0f : 1.0f) * (0.05f + 1.9f * fabsf(u - 0.5f));
}

/* Kernel k's arguments at B x S: random non-zero inputs (the mask: 0, and -1e30 for the last 5
   tokens of sentence 1, padding), the output poisoned. */
static int kernel_args(const gen *g, int k, gen_arg *a, int *terms) {
  int n = gen_kernel_args(g, k, B, S, a, terms);
  for (int i = 0; i < n; i++) {
    a[i].data = malloc(sizeof(float) * a[i].n);
    for (size_t e = 0; a[i].data && e < a[i].n; e++)
      a[i].data[e] = i == n - 1         ? NAN
                     : k == 2 && i == 1 ? (e >= a[i].n - 5 ? -1e30f : 0.0f)
                                        : uniform();
  }
  return n;
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

static bool gen_init(gen *g, const char *log, bool guard) {
  *g = (gen){0};
  g->ctx = te_ctx_new();
  g->log = log;
  g->tune_batch = tuned_batch, g->tune_seq = tuned_seq;
  g->no_guard = !guard;
  te_target *target = g->ctx ? te_target_parse(g->ctx, "llvm") : NULL;
  if (!target)
    return false;
  gen_set_target(g, target);
  return true;
}

/* Kernel k with the hand schedule (log NULL) or the log's. */
static te_module *make_kernel(gen *g, int k) {
  te_module *m = NULL;
  te_status st = TE_OK;
  if (g->log) {
    g->batch = tuned_batch, g->seq = tuned_seq;
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
  int before = tuned->tuned + tuned->kept, absent = tuned->absent, terms = 0;
  te_module *mh = make_kernel(hand, k), *mt = make_kernel(tuned, k);
  if (!mh || !mt)
    return;
  if (tuned->absent != absent && tuned_committed) {
    /* a committed log made before the kernel's computation changed (embed_attention's keys
       padded to whole vectors): nothing to replay, the hand schedule is the library's */
    printf("%s: no record in the committed log (its computation changed since); skipped\n", name);
  } else if (tuned->tuned + tuned->kept != before + 1) {
    printf("%s: the generator did not take the log's schedule\n", name);
    failures++;
  }
  gen_arg a[GEN_MAX_ARGS];
  int n = kernel_args(hand, k, a, &terms);
  float *want = malloc(sizeof(float) * a[n - 1].n);
  if (want && gen_call(mh, name, a, n) == TE_OK) {
    memcpy(want, a[n - 1].data, sizeof(float) * a[n - 1].n);
    for (size_t i = 0; i < a[n - 1].n; i++)
      a[n - 1].data[i] = NAN; /* poisoned again for the tuned kernel */
    if (gen_call(mt, name, a, n) == TE_OK)
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
  bool committed = argc == 5 && !strcmp(argv[1], "--committed");
  tuned_committed = committed;
  if (argc != 4 && !committed) {
    fprintf(stderr, "usage: embed_tune_test LOG ALLOCATION BUDGET\n"
                    "       embed_tune_test --committed LOG BATCH SEQ\n");
    return 2;
  }
  const char *log = committed ? argv[2] : argv[1];
  if (committed) {
    tuned_batch = atoll(argv[3]), tuned_seq = atoll(argv[4]);
    gen probe;
    if (!gen_init(&probe, log, false))
      return 1;
    bool here = tg_log_has_target(log, te_target_str(probe.target));
    if (!here)
      printf("SKIP: the tuning log %s holds no record for this CPU (%s): it was tuned on "
             "another machine\n",
             log, te_target_short_str(probe.target));
    te_ctx_free(probe.ctx);
    if (!here)
      return 77;
  } else {
    check_allocation(argv[2], atoi(argv[3]));
  }
  /* Untimed, every kernel takes the log's schedule; guarded (as the generator builds the
     library), each the faster of the log's and the hand one: either way the same outputs. A
     committed log is checked untimed only (what the guard does is apps.embed_tune_apply's). */
  for (int guard = 0; guard < (committed ? 1 : 2); guard++) {
    gen hand, tuned;
    if (!gen_init(&hand, NULL, false) || !gen_init(&tuned, log, guard)) {
      printf("cannot make a context and a target\n");
      return 1;
    }
    printf("%s:\n", guard ? "guarded" : "the log's schedules, untimed");
    for (int k = 1; k < GEN_NKERNELS; k++) /* embed_ln is not a task (gen_kernels.c) */
      check_kernel(&hand, &tuned, k);
    if (tuned.tuned + tuned.kept + tuned.absent != GEN_NKERNELS - 1 ||
        (!committed && tuned.absent) || (!guard && tuned.kept)) {
      printf("%d kernels from the log, %d hand schedules kept: want %d in all%s\n", tuned.tuned,
             tuned.kept, GEN_NKERNELS - 1, guard ? "" : ", none kept untimed");
      failures++;
    }
    te_ctx_free(hand.ctx);
    te_ctx_free(tuned.ctx);
  }
  printf("%s\n", failures ? "FAILED" : "all tuned kernels match the hand ones");
  return failures != 0;
}
