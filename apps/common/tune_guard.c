/* tune_guard.c — the generators' timing guard: see tune_guard.h for what it measures and why. */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, getline */
#include "tune_guard.h"

#include <jansson.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* More than the last-level cache (32 MiB here; up to 64 MiB on large server parts). */
enum { FLUSH_BYTES = 64 << 20 };

static int by_value(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double median(const double *v, int n) {
  double s[TG_ROUNDS];
  memcpy(s, v, sizeof(double) * (size_t)n);
  qsort(s, (size_t)n, sizeof(double), by_value);
  return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

tg_verdict tg_prefer_tuned(const double *hand, const double *tuned, int n) {
  tg_verdict v = {0, 0, 0, false};
  if (n <= 0 || n > TG_ROUNDS)
    return v;
  for (int r = 0; r < n; r++)
    v.wins += tuned[r] < hand[r];
  v.hand_s = median(hand, n);
  v.tuned_s = median(tuned, n);
  /* TG_MIN_WINS of TG_ROUNDS, scaled to n rounds (rounded up) */
  int need = (TG_MIN_WINS * n + TG_ROUNDS - 1) / TG_ROUNDS;
  v.use_tuned = v.tuned_s <= (1.0 - TG_MARGIN) * v.hand_s && v.wins >= need;
  return v;
}

static double thread_cpu_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

te_status tg_compare(te_module *hand, te_module *tuned, const char *name, int nargs,
                     DLTensor *const args[], tg_verdict *out) {
  *out = (tg_verdict){0, 0, 0, false};
  unsigned char *junk = malloc(FLUSH_BYTES);
  if (!junk)
    return TE_ERR_NOMEM;
  te_module *const mods[2] = {hand, tuned};
  double t[2][TG_ROUNDS];
  te_status st = TE_OK;
  int threads = te_num_threads();
  te_set_num_threads(1); /* one thread's speed: a busy machine's woken threads wait for a core */
  for (int r = 0; r < TG_ROUNDS && st == TE_OK; r++)
    for (int j = 0; j < 2 && st == TE_OK; j++) {
      int which = (r + j) % 2; /* the order turns each round: neither is always first */
      memset(junk, r + j + 1, FLUSH_BYTES);
      double t0 = thread_cpu_s();
      st = te_module_call(mods[which], name, nargs, args, 0, NULL);
      t[which][r] = thread_cpu_s() - t0;
    }
  te_set_num_threads(threads);
  free(junk);
  if (st == TE_OK)
    *out = tg_prefer_tuned(t[0], t[1], TG_ROUNDS);
  return st;
}

void tg_report(const char *what, const char *where, const tg_verdict *v) {
  fprintf(stderr,
          "%s: %s (%.4g ms against the hand schedule's %.4g ms, faster in %d of %d rounds, at "
          "%s)\n",
          what, v->use_tuned ? "the tuning log's schedule" : "hand schedule kept", v->tuned_s * 1e3,
          v->hand_s * 1e3, v->wins, TG_ROUNDS, where);
}

bool tg_log_has_target(const char *path, const char *target) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char *line = NULL;
  size_t cap = 0;
  bool found = false;
  while (!found && getline(&line, &cap, f) > 0) {
    json_t *rec = json_loads(line, 0, NULL); /* a line that is not JSON: not a record */
    const char *t = json_string_value(json_object_get(rec, "target"));
    found = t && !strcmp(t, target);
    json_decref(rec);
  }
  free(line);
  fclose(f);
  return found;
}
