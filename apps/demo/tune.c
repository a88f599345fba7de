/* tune.c — the demo's tuning step: te_tune (te/tune.h) on the matmul for a short time budget,
 * with a progress display like te-tune's: a bar redrawn in place on a terminal (time spent of
 * the budget, trials, best GFLOP/s), else one line a round, so a CI log stays short.
 */
#define _POSIX_C_SOURCE 200809L
#include "demo.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

typedef struct progress {
  bool tty;
  double budget_s;
  te_tune_progress last; /* the latest report (last.round -1: none yet) */
} progress;

static void print_line(const te_tune_progress *p, double budget_s) {
  printf("  round %d: %3d trials, best %6.1f GFLOP/s, %3.0f s of %.0f\n", p->round + 1,
         p->trials_done, p->best_gflops, p->elapsed_s, budget_s);
  fflush(stdout);
}

static void on_progress(const te_tune_progress *p, void *user) {
  progress *pr = user;
  if (pr->tty) {
    enum { WIDTH = 30 };
    double frac = fmin(1.0, p->elapsed_s / pr->budget_s);
    char bar[WIDTH + 1];
    for (int i = 0; i < WIDTH; i++)
      bar[i] = i < (int)(frac * WIDTH + 0.5) ? '#' : '.';
    bar[WIDTH] = '\0';
    fprintf(stderr, "\r  [%s] %3d trials  best %6.1f GFLOP/s  %3.0f s of %.0f \033[K", bar,
            p->trials_done, p->best_gflops, p->elapsed_s, pr->budget_s);
    fflush(stderr);
  } else if (pr->last.round >= 0 && p->round != pr->last.round) {
    print_line(&pr->last, pr->budget_s); /* a round ended: its line */
  }
  pr->last = *p;
  pr->last.last_error = NULL; /* not kept past the call */
}

dm_tune_result dm_tune(te_ctx *ctx, te_tensor *out, te_target *target, double budget_s,
                       const char *log_path, const char *desc) {
  dm_tune_result r = {0};
  unlink(log_path); /* a fresh search each run: the demo shows what a short budget finds */
  progress pr = {isatty(fileno(stderr)) != 0, budget_s, {.round = -1}};
  te_tune_summary sum;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  te_tune_options o = {
      .trials = 100000, /* the time budget ends the search */
      .time_budget_s = budget_s,
      .jobs = cores > 0 ? (int)cores : 1,
      .log_path = log_path,
      .batch = 8,  /* rounds end sooner, so the budget ends closer to its time */
      .check = -1, /* the demo checks the result; the default schedule as reference costs seconds */
      .description = desc,
      .progress = on_progress,
      .progress_user = &pr,
      .summary = &sum,
  };
  double t0 = dm_now_s();
  r.status = te_tune(ctx, 1, &out, target, &o);
  r.seconds = dm_now_s() - t0;
  if (pr.tty)
    fputc('\n', stderr);
  else if (pr.last.round >= 0)
    print_line(&pr.last, budget_s);
  if (r.status == TE_OK) {
    r.trials = sum.measured;
    r.errors = sum.errors;
    r.best_gflops = sum.best_gflops;
    snprintf(r.key, sizeof r.key, "%s", sum.key);
  }
  return r;
}
