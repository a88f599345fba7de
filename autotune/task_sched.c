/* task_sched.c — the gradient-based task scheduler (task_sched.h): arithmetic on each task's
 * curve of best costs, deciding which task gets the next round of trials.
 */
#include "task_sched.h"

#include <math.h>

static at_sched_opts resolved(const at_sched_opts *o) {
  at_sched_opts r = o ? *o : (at_sched_opts){0};
  r.alpha = r.alpha > 0 ? r.alpha : 0.2;
  r.beta = r.beta > 0 ? r.beta : 2.0;
  r.window = r.window > 0 ? r.window : 3;
  return r;
}

void at_sched_record(at_sched_task *t, int trials, double best, bool exhausted) {
  if (t->curve && t->rounds < AT_SCHED_MAX_ROUNDS)
    t->curve[t->rounds] = best;
  t->rounds++;
  t->trials += trials;
  t->best = best;
  /* Two rounds without one working schedule: its kernels do not build or run here, and more
     rounds would only spend the budget on errors. */
  if (exhausted || (!isfinite(best) && t->rounds >= 2) || t->rounds >= AT_SCHED_MAX_ROUNDS)
    t->dead = true;
}

/* What the last `window` rounds gained per round (<= 0), 0 when the curve is shorter. */
static double backward_gradient(const at_sched_task *t, int window) {
  if (!t->curve || t->rounds <= window)
    return 0;
  double now = t->curve[t->rounds - 1], then = t->curve[t->rounds - 1 - window];
  if (!isfinite(now) || !isfinite(then))
    return 0;
  return (now - then) / window;
}

/* The best throughput (flops per second) among the live or dead tasks of i's group other than
   i itself; 0 when there is none. */
static double best_similar_speed(const at_sched_task *tasks, int n, int i) {
  double v = 0;
  for (int k = 0; k < n; k++) {
    const at_sched_task *t = &tasks[k];
    if (k == i || tasks[i].group < 0 || t->group != tasks[i].group || t->flops <= 0)
      continue;
    if (isfinite(t->best) && t->best > 0 && t->flops / t->best > v)
      v = t->flops / t->best;
  }
  return v;
}

double at_sched_gradient(const at_sched_task *tasks, int n, int i, const at_sched_opts *opts) {
  const at_sched_task *t = &tasks[i];
  if (t->dead || !isfinite(t->best) || t->rounds == 0)
    return 0;
  at_sched_opts o = resolved(opts);
  double next = t->best - t->best / t->rounds; /* the 1/t trend of a tuning curve */
  double v = best_similar_speed(tasks, n, i);
  if (v > 0 && t->flops > 0 && o.beta * t->flops / v < next)
    next = o.beta * t->flops / v; /* a similar task runs much faster: so might this one */
  double forward = next - t->best;
  return t->weight * (o.alpha * backward_gradient(t, o.window) + (1 - o.alpha) * forward);
}

int at_sched_pick(const at_sched_task *tasks, int n, const at_sched_opts *opts) {
  for (int i = 0; i < n; i++) /* the warm-up: every task one round, in order */
    if (!tasks[i].dead && tasks[i].rounds == 0)
      return i;
  int pick = -1;
  double lowest = INFINITY;
  for (int i = 0; i < n; i++) {
    if (tasks[i].dead)
      continue;
    double g = at_sched_gradient(tasks, n, i, opts);
    if (pick < 0 || g < lowest) {
      pick = i;
      lowest = g;
    }
  }
  return pick;
}

double at_sched_objective(const at_sched_task *tasks, int n) {
  double f = 0;
  for (int i = 0; i < n; i++)
    f += tasks[i].weight * tasks[i].best;
  return f;
}
