/* tune_confirm.c — the confirm pass: after the search, the log's best few schedules of the
 * workload measured again, side by side.
 *
 * The search measures each candidate once, when it comes up. On a shared machine whose speed
 * drifts by 10-15% from one minute to the next, a candidate measured in a fast minute beats a
 * better one measured in a slow minute, and te_apply_best then picks the lucky one. The confirm
 * pass takes the best `confirm` schedules of the log (this workload and target, each judged by
 * its latest record), builds them again and times them in `confirm_rounds` rounds, each round
 * running every one of them once in an order rotated per round, so a slow minute falls on all
 * of them. The first round also checks the outputs against the default schedule's.
 *
 * Load only ever adds time: a burst that lands on one schedule's run makes that run's median
 * large, never small. So a schedule's confirmed cost is the lowest of its round medians (not the
 * median of every run, which one or two slow rounds of the few decide): the round in which it
 * was least disturbed. And a schedule whose confirmed cost is still over AT_CONFIRM_DISAGREE
 * times the cost the search measured is measured again, all finalists beside it, in as many
 * rounds more: a fast search measurement is seldom luck, a slow confirmation often is (a 1.15 ms
 * conv2d measured at 90 ms under load 16 lost its place to a 33 ms one). What the extra rounds
 * give stands, whatever it says.
 * Each schedule gets one new record (tuner.confirm) with the costs of all rounds (result.costs,
 * result.cpu_costs), each round's median on the run's clock (tuner.round_costs_s), the confirmed
 * cost (tuner.confirm_cost_s, which the log's readers rank it by), the search's cost
 * (tuner.search_cost_s) and tuner.reconfirmed; the reading rule takes the best of a confirm pass
 * that follows the last trial, so te_apply_best uses the side-by-side ranking, whatever minute the
 * others were measured in.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_session.h"

/* A confirmed cost over this many times the search's sends the finalists to more rounds. */
#define AT_CONFIRM_DISAGREE 3.0

enum { MAX_ROUNDS = 32 }; /* confirm_rounds (at most 16), twice when reconfirmed */

typedef struct confirm_item {
  const at_record *was; /* the schedule's latest record */
  at_result res;        /* the costs of every round so far, or the failure */
  double round_med[MAX_ROUNDS];
  int nround;
  bool reconfirmed;
} confirm_item;

typedef struct ranked {
  int index;
  double cost;
} ranked;

static int by_cost(const void *a, const void *b) {
  const ranked *x = a, *y = b;
  return x->cost != y->cost ? (x->cost > y->cost) - (x->cost < y->cost) : x->index - y->index;
}

/* The successful schedules of the session's workload and target in log, by their latest
   records, cheapest first; *n their count. NULL when out of memory. */
static ranked *rank(const at_session *s, const at_log *log, int *n) {
  ranked *r = ir_malloc(s->ctx, sizeof *r * (size_t)(log->n ? log->n : 1));
  *n = 0;
  for (int i = 0; r && i < log->n; i++) {
    const at_record *rec = &log->rec[i];
    double c = at_record_cost(rec);
    if (!rec->superseded && isfinite(c) && !strcmp(rec->key, s->key) &&
        !strcmp(rec->target, s->target))
      r[(*n)++] = (ranked){i, c};
  }
  if (r)
    qsort(r, (size_t)*n, sizeof *r, by_cost);
  return r;
}

/* Runs one round: every built schedule once, starting at index first. */
static void measure_round(at_session *s, confirm_item *items, at_job *jobs, int n, int first,
                          bool check, const at_measure_opts *mo) {
  for (int k = 0; k < n; k++) {
    int i = (first + k) % n;
    confirm_item *it = &items[i];
    if (jobs[i].status != TE_OK || it->res.status != TE_OK)
      continue;
    at_result r;
    at_bench_run(s->bench, jobs[i].entry, check, mo, &r);
    if (r.status != TE_OK) {
      it->res = r; /* a schedule that now fails is recorded as failing */
      continue;
    }
    /* the cpu costs stay beside the costs only while every round has them */
    bool cpu = r.ncpu_costs == r.ncosts && it->res.ncpu_costs == it->res.ncosts;
    for (int c = 0; c < r.ncosts && it->res.ncosts < 256; c++) {
      it->res.cpu_costs[it->res.ncosts] = r.cpu_costs[c];
      it->res.costs[it->res.ncosts++] = r.costs[c];
    }
    it->res.ncpu_costs = cpu ? it->res.ncosts : 0;
    if (it->nround < MAX_ROUNDS)
      it->round_med[it->nround++] = at_result_cost(&r, mo->clock);
    memcpy(it->res.measured_on, r.measured_on, sizeof r.measured_on);
  }
}

double at_confirm_cost(const double *round_medians, int n) {
  double best = INFINITY;
  for (int i = 0; i < n; i++)
    best = round_medians[i] < best ? round_medians[i] : best;
  return best;
}

bool at_confirm_disagrees(double confirmed_s, double search_s) {
  return search_s > 0 && isfinite(search_s) && confirmed_s > AT_CONFIRM_DISAGREE * search_s;
}

/* The search's cost of a finalist: its record's, or the one an earlier confirm record kept. */
static double search_cost(const at_record *was) {
  return was->confirm ? was->search_cost_s : at_record_cost(was);
}

/* Marks the finalists whose confirmed cost disagrees with the search's; how many. */
static int mark_disagreeing(confirm_item *items, int n) {
  int m = 0;
  for (int i = 0; i < n; i++)
    if (items[i].res.status == TE_OK &&
        at_confirm_disagrees(at_confirm_cost(items[i].round_med, items[i].nround),
                             search_cost(items[i].was)))
      items[i].reconfirmed = true, m++;
  return m;
}

te_status at_session_confirm(at_session *s) {
  int want = s->o.confirm, rounds = s->o.confirm_rounds;
  if (want < 2)
    return TE_OK;
  at_log log;
  te_status st = at_log_read(s->ctx, s->o.log_path, false, NULL, &log);
  if (st != TE_OK)
    return st;
  int nranked = 0;
  ranked *r = rank(s, &log, &nranked);
  int n = nranked < want ? nranked : want;
  confirm_item *items = ir_calloc(s->ctx, (size_t)(n ? n : 1), sizeof *items);
  at_job *jobs = ir_calloc(s->ctx, (size_t)(n ? n : 1), sizeof *jobs);
  if (!r || !items || !jobs) {
    st = ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory (confirm pass)");
    goto done;
  }
  if (n < 2) /* nothing to compare */
    goto done;
  for (int i = 0; i < n; i++) {
    items[i].was = &log.rec[r[i].index];
    jobs[i].trace = items[i].was->trace;
  }
  at_compiled *c = at_compile_batch(&s->wl, s->target, n, jobs, s->o.jobs, s->o.max_statements);
  if (!c) {
    st = ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory (confirm pass)");
    goto done;
  }
  /* every round gets the search's repeats, within the record's 256 costs even when the rounds
     are doubled */
  at_measure_opts mo = s->mo;
  int cap = 256 / (2 * rounds);
  mo.max_repeats = mo.max_repeats < cap ? mo.max_repeats : cap;
  mo.min_repeats = mo.min_repeats < mo.max_repeats ? mo.min_repeats : mo.max_repeats;
  bool check = at_bench_has_reference(s->bench);
  for (int round = 0; round < rounds; round++)
    measure_round(s, items, jobs, n, round % n, check && round == 0, &mo);
  int disagree = mark_disagreeing(items, n);
  for (int round = 0; disagree && round < rounds; round++) /* all side by side again */
    measure_round(s, items, jobs, n, (round + 1) % n, false, &mo);
  for (int i = 0; i < n && st == TE_OK; i++) {
    at_confirm_rounds cr = {items[i].nround, items[i].round_med, items[i].reconfirmed};
    st = at_session_write_confirm(s, items[i].was, &mo, &jobs[i], &items[i].res, &cr);
    s->confirmed += st == TE_OK;
  }
  at_log after; /* the best now, by the log's own rule */
  if (st == TE_OK && (st = at_log_read(s->ctx, s->o.log_path, false, NULL, &after)) == TE_OK) {
    s->best_cost = at_log_best_cost(&after, s->key, s->target);
    at_log_free(&after);
  }
  if (getenv("TE_TUNE_DEBUG"))
    fprintf(stderr, "te_tune: confirm pass: %d schedules, %d rounds (%d more: %d disagreed)\n", n,
            rounds, disagree ? rounds : 0, disagree);
  at_compiled_free(c);
done:
  free(r);
  free(items);
  free(jobs);
  at_log_free(&log);
  return st;
}
