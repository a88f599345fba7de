/* tune_confirm.c — the confirm pass: after the search, the log's best few schedules of the
 * workload measured again, side by side.
 *
 * The search measures each candidate once, when it comes up. On a shared machine whose speed
 * drifts by 10-15% from one minute to the next, a candidate measured in a fast minute beats a
 * better one measured in a slow minute, and te_apply_best then picks the lucky one. The confirm
 * pass takes the best `confirm` schedules of the log (this workload and target, each judged by
 * its latest record), builds them again and times them in `confirm_rounds` rounds, each round
 * running every one of them once in an order rotated per round, so a slow minute falls on all
 * of them. Each gets one new record (tuner.confirm) holding the costs of all rounds; the log's
 * reading rule takes the best of a confirm pass that follows the last trial, so te_apply_best
 * uses the side-by-side ranking, whatever minute the others were measured in. The first round
 * also checks the outputs against the default schedule's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune_session.h"

typedef struct confirm_item {
  const at_record *was; /* the schedule's latest record */
  at_result res;        /* the costs of every round so far, or the failure */
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
    for (int c = 0; c < r.ncosts && it->res.ncosts < 256; c++)
      it->res.costs[it->res.ncosts++] = r.costs[c];
    memcpy(it->res.measured_on, r.measured_on, sizeof r.measured_on);
  }
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
  at_compiled *c = at_compile_batch(&s->wl, s->target, n, jobs, s->o.jobs);
  if (!c) {
    st = ir_error(s->ctx, TE_ERR_NOMEM, "te_tune: out of memory (confirm pass)");
    goto done;
  }
  /* every round gets the search's repeats, within the record's 256 costs */
  at_measure_opts mo = s->mo;
  int cap = 256 / rounds;
  mo.max_repeats = mo.max_repeats < cap ? mo.max_repeats : cap;
  mo.min_repeats = mo.min_repeats < mo.max_repeats ? mo.min_repeats : mo.max_repeats;
  bool check = at_bench_has_reference(s->bench);
  for (int round = 0; round < rounds; round++)
    measure_round(s, items, jobs, n, round % n, check && round == 0, &mo);
  for (int i = 0; i < n && st == TE_OK; i++) {
    st = at_session_write_confirm(s, items[i].was, &mo, &jobs[i], &items[i].res);
    s->confirmed += st == TE_OK;
  }
  at_log after; /* the best now, by the log's own rule */
  if (st == TE_OK && (st = at_log_read(s->ctx, s->o.log_path, false, NULL, &after)) == TE_OK) {
    s->best_cost = at_log_best_cost(&after, s->key, s->target);
    at_log_free(&after);
  }
  if (getenv("TE_TUNE_DEBUG"))
    fprintf(stderr, "te_tune: confirm pass: %d schedules, %d rounds\n", n, rounds);
  at_compiled_free(c);
done:
  free(r);
  free(items);
  free(jobs);
  at_log_free(&log);
  return st;
}
