/* task_sched.h — the task scheduler of `te-tune tune-tasks` (prefix at_sched_): which of a
 * model's kernels gets the next round of trials.
 *
 * A model runs each of its distinct kernels (tasks) some number of times per pass: its weight.
 * Its end-to-end latency is then about f = sum_i weight_i * best_i, best_i the task's best cost
 * so far. The scheduler spends one trial budget on the tasks so that f falls fastest, as Ansor's
 * gradient-based task scheduler does (Zheng et al., OSDI 2020, section 6): after a warm-up that
 * gives every task one round in turn, each round goes to the task whose estimated df/dt_i (t_i its
 * rounds so far) is the most negative:
 *
 *   df/dt_i ~ weight_i * ( alpha * backward_i + (1 - alpha) * forward_i )
 *   backward_i = (best_i(t_i) - best_i(t_i - window)) / window   what its last rounds gained
 *   forward_i  = min(best_i - best_i / t_i,                      the next round on a 1/t trend
 *                    beta * flops_i / max_{k similar to i} V_k)  or at similar tasks' speed
 *                - best_i
 *
 * V_k is task k's best throughput (flops_k / best_k); tasks are similar when they share a group.
 * A task that is dead (its search space is exhausted, or it has no successful schedule after
 * its rounds) gets no more rounds. Everything here is arithmetic on the numbers given: no
 * measurement, no randomness, so the allocation is a deterministic function of the curves.
 */
#ifndef TE_AT_TASK_SCHED_H
#define TE_AT_TASK_SCHED_H

#include <stdbool.h>

enum { AT_SCHED_MAX_ROUNDS = 4096 };

typedef struct at_sched_task {
  double weight; /* calls per model pass (> 0) */
  double flops;  /* operations of one call, float and integer; 0: unknown (no similar-task
                    optimism) */
  int group;     /* tasks of one group (>= 0) are similar; -1: none */
  bool dead;     /* no more rounds: set by the caller or by at_sched_record */
  int rounds;    /* rounds given so far (the warm-up's included) */
  int trials;    /* trials measured in them */
  double best;   /* best cost so far in seconds; INFINITY while none succeeded */
  double *curve; /* best after each round: curve[r - 1] after round r (the caller's array of
                    AT_SCHED_MAX_ROUNDS, or NULL: no backward term) */
} at_sched_task;

typedef struct at_sched_opts {
  double alpha; /* weight of the backward (observed) gradient; 0: 0.2, as Ansor */
  double beta;  /* the similar-task optimism's factor; 0: 2, as Ansor */
  int window;   /* rounds of the backward gradient; 0: 3, as Ansor */
} at_sched_opts;

/* After a round of task t: trials measured in it, the task's best cost now, and whether its
   search had nothing new to measure (exhausted). A task with no successful schedule after two
   rounds, or an exhausted one, becomes dead. */
void at_sched_record(at_sched_task *t, int trials, double best, bool exhausted);

/* The estimated change of the weighted latency sum per round given to task i (<= 0: the lower,
   the more a round is expected to gain). 0 for a dead task. */
double at_sched_gradient(const at_sched_task *tasks, int n, int i, const at_sched_opts *);

/* The task to give the next round: during the warm-up (a live task with no round yet) the first
   such task in order; else the live task of the most negative gradient (ties: the lower index).
   -1 when every task is dead. */
int at_sched_pick(const at_sched_task *tasks, int n, const at_sched_opts *);

/* sum weight_i * best_i: the model's estimated latency (INFINITY while a task has none). */
double at_sched_objective(const at_sched_task *tasks, int n);

#endif
