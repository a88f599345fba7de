/* test_task_sched.c — the task scheduler of `te-tune tune-tasks` (autotune/task_sched.c) on
 * synthetic tasks whose best latency after r rounds is a fixed curve: the warm-up gives every
 * task one round in order; then a task with a larger weight x latency gets more rounds, and of two
 * at the same latency the one still improving goes first; a similar task's higher throughput makes
 * a task look more promising; dead tasks get nothing. Deterministic: no measurement, no randomness.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "../../autotune/task_sched.h"

enum { MAXT = 4 };

/* A synthetic tuning curve: the best latency after r rounds. */
typedef double (*curve_fn)(int r, double base);

static double improving(int r, double base) { return base * (0.3 + 0.7 / (1.0 + r)); }
static double flat(int r, double base) { return r ? base * 0.8 : base; }

typedef struct sim {
  at_sched_task t[MAXT];
  double curve[MAXT][AT_SCHED_MAX_ROUNDS];
  curve_fn fn[MAXT];
  double base[MAXT];
  int n;
  int order[64]; /* the tasks picked, in order */
} sim;

static void add(sim *s, double weight, double base, curve_fn fn, int group) {
  int i = s->n++;
  s->t[i] = (at_sched_task){weight, 1e6, group, false, 0, 0, base, s->curve[i]};
  s->fn[i] = fn;
  s->base[i] = base;
}

/* Gives `rounds` rounds of 8 trials by at_sched_pick; returns how many went to each task. */
static void run(sim *s, int rounds, int given[MAXT]) {
  for (int i = 0; i < MAXT; i++)
    given[i] = 0;
  for (int k = 0; k < rounds; k++) {
    int i = at_sched_pick(s->t, s->n, NULL);
    cr_assert(i >= 0 && i < s->n, "round %d: no task picked (%d)", k, i);
    if (k < 64)
      s->order[k] = i;
    given[i]++;
    at_sched_record(&s->t[i], 8, s->fn[i](s->t[i].rounds + 1, s->base[i]), false);
  }
}

Test(task_sched, warm_up_is_round_robin) {
  sim s = {0};
  add(&s, 1, 1e-3, improving, -1);
  add(&s, 100, 1e-3, improving, -1); /* however heavy, the warm-up goes in order */
  add(&s, 1, 1e-3, flat, -1);
  int given[MAXT];
  run(&s, 3, given);
  for (int i = 0; i < 3; i++)
    cr_expect_eq(s.order[i], i, "warm-up round %d went to task %d", i, s.order[i]);
}

Test(task_sched, larger_weight_gets_more_trials) {
  sim s = {0};
  add(&s, 1, 1e-3, improving, -1);
  add(&s, 10, 1e-3, improving, -1); /* the same kernel curve, called 10x as often */
  int given[MAXT];
  run(&s, 30, given);
  cr_expect_gt(given[1], 2 * given[0], "weight 10: %d rounds, weight 1: %d", given[1], given[0]);
  cr_expect_eq(given[0] + given[1], 30);
  cr_expect_eq(s.t[1].trials, 8 * given[1]);
}

Test(task_sched, larger_latency_gets_more_trials) {
  sim s = {0};
  add(&s, 6, 1e-4, improving, -1);
  add(&s, 6, 2e-3, improving, -1); /* same weight, 20x the latency */
  int given[MAXT];
  run(&s, 30, given);
  cr_expect_gt(given[1], 2 * given[0], "slow task: %d rounds, fast task: %d", given[1], given[0]);
}

Test(task_sched, improving_beats_flat) {
  /* The same best latency after the same rounds: the one whose last rounds gained goes first. */
  double c[2][AT_SCHED_MAX_ROUNDS];
  at_sched_task t[2] = {{1, 0, -1, false, 0, 0, INFINITY, c[0]},
                        {1, 0, -1, false, 0, 0, INFINITY, c[1]}};
  const double flat_curve[4] = {1e-3, 1e-3, 1e-3, 1e-3}, gaining[4] = {2e-3, 1.6e-3, 1.3e-3, 1e-3};
  for (int r = 0; r < 4; r++) {
    at_sched_record(&t[0], 8, flat_curve[r], false);
    at_sched_record(&t[1], 8, gaining[r], false);
  }
  double g0 = at_sched_gradient(t, 2, 0, NULL), g1 = at_sched_gradient(t, 2, 1, NULL);
  cr_expect_lt(g1, g0, "improving %g, flat %g", g1, g0);
  cr_expect_eq(at_sched_pick(t, 2, NULL), 1);
}

Test(task_sched, weighted_gain_decides_the_gradient) {
  /* Same curve point: the gradient scales with the weight. */
  at_sched_task t[2];
  double c[2][AT_SCHED_MAX_ROUNDS];
  for (int i = 0; i < 2; i++) {
    t[i] = (at_sched_task){i ? 5.0 : 1.0, 0, -1, false, 0, 0, INFINITY, c[i]};
    at_sched_record(&t[i], 8, 2e-3, false);
    at_sched_record(&t[i], 8, 1e-3, false);
  }
  double g0 = at_sched_gradient(t, 2, 0, NULL), g1 = at_sched_gradient(t, 2, 1, NULL);
  cr_expect_lt(g0, 0, "an improving task has a negative gradient (%g)", g0);
  cr_expect_float_eq(g1, 5 * g0, 1e-12 * fabs(g0), "weight 5: %g, weight 1: %g", g1, g0);
  cr_expect_eq(at_sched_pick(t, 2, NULL), 1);
}

Test(task_sched, similar_fast_task_adds_optimism) {
  /* Task 0 runs at 1 GFLOP/s; task 1 of its group at 20 GFLOP/s: task 0 may reach 10. */
  double c[3][AT_SCHED_MAX_ROUNDS];
  at_sched_task t[3] = {{1, 1e6, 0, false, 0, 0, INFINITY, c[0]},
                        {1, 1e6, 0, false, 0, 0, INFINITY, c[1]},
                        {1, 1e6, -1, false, 0, 0, INFINITY, c[2]}}; /* task 0 without a group */
  for (int r = 0; r < 3; r++) { /* past the first rounds, whose 1/t trend promises everything */
    at_sched_record(&t[0], 8, 1e-3, false);
    at_sched_record(&t[1], 8, 5e-5, false);
    at_sched_record(&t[2], 8, 1e-3, false);
  }
  double grouped = at_sched_gradient(t, 3, 0, NULL), alone = at_sched_gradient(t, 3, 2, NULL);
  cr_expect_lt(grouped, alone, "with a fast similar task %g, alone %g", grouped, alone);
  cr_expect_eq(at_sched_pick(t, 3, NULL), 0);
}

Test(task_sched, dead_tasks_get_nothing) {
  double c[3][AT_SCHED_MAX_ROUNDS];
  at_sched_task t[3] = {{100, 0, -1, false, 0, 0, INFINITY, c[0]},
                        {1, 0, -1, false, 0, 0, INFINITY, c[1]},
                        {1, 0, -1, true, 0, 0, INFINITY, c[2]}}; /* dead from the start */
  at_sched_record(&t[0], 8, 1e-3, true); /* exhausted: nothing new to measure */
  cr_expect(t[0].dead);
  at_sched_record(&t[1], 8, INFINITY, false); /* one round without a working schedule: live */
  cr_expect(!t[1].dead);
  cr_expect_eq(at_sched_pick(t, 3, NULL), 1);
  at_sched_record(&t[1], 8, INFINITY, false); /* two: dead */
  cr_expect(t[1].dead);
  cr_expect_eq(at_sched_pick(t, 3, NULL), -1);
  cr_expect_eq(at_sched_gradient(t, 3, 0, NULL), 0);
}

Test(task_sched, objective_is_the_weighted_sum) {
  at_sched_task t[2] = {{6, 0, -1, false, 1, 8, 2e-3, NULL}, {12, 0, -1, false, 1, 8, 1e-4, NULL}};
  cr_expect_float_eq(at_sched_objective(t, 2), 6 * 2e-3 + 12 * 1e-4, 1e-15);
}
