/* tune_history.c — a tuning run and its log: what earlier records give (resume, warm start) and
 * the record each new trial writes.
 *
 * Past records of the same workload key and target are never measured again (their traces are
 * marked seen), feed the cost model (features recomputed by replaying the trace in a scratch
 * context: the log does not store features, so it stays valid when the features change), and
 * seed the search's elite when their sketch and knob values still parse. With resume they also
 * count as trials already done, and the elapsed time continues from the last one.
 */
#define _DEFAULT_SOURCE /* getloadavg */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune_session.h"

double at_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

bool at_trace_features(const at_workload *wl, const te_target *tgt, const char *trace,
                       float *feat) {
  te_schedule *sch = te_schedule_new(wl->ctx, wl->nout, wl->outs);
  bool ok =
      sch && te_schedule_replay(sch, trace) == TE_OK && at_features(wl, sch, tgt, feat) == TE_OK;
  te_clear_error(wl->ctx);
  return ok;
}

static void take_record(at_session *s, const at_record *r, const at_workload *wl,
                        const te_target *tgt) {
  if (r->confirm) /* a trace measured again: not a trial, and already known to the model */
    return;
  float feat[AT_NFEAT];
  bool have_feat = tgt && at_trace_features(wl, tgt, r->trace, feat);
  double cost = at_record_cost(r);
  double thr = isfinite(cost) && cost > 0 ? at_session_ops(s) / cost : 0;
  at_cand c;
  int sk = r->sketch ? at_task_sketch_index(&s->task, r->sketch) : -1;
  bool have_cand = sk >= 0 && at_cand_from_params(&s->task, sk, r->params, &c);
  at_search_observe(s->search, have_cand ? &c : NULL, r->trace, have_feat ? feat : NULL, thr);
  if (!s->o.resume)
    return;
  s->done++;
  if (r->elapsed_s > s->elapsed_offset)
    s->elapsed_offset = r->elapsed_s;
  if (!r->superseded && cost < s->best_cost) {
    s->best_cost = cost;
    s->since_best = 0;
  } else {
    s->since_best++;
  }
  if (have_cand && r->error == TE_OK && s->checked[sk] < s->o.check)
    s->checked[sk]++; /* the first candidates of a sketch were checked by the earlier run */
}

te_status at_session_load_history(at_session *s) {
  at_log log;
  te_status st = at_log_read(s->ctx, s->o.log_path, true, stderr, &log);
  if (st != TE_OK)
    return st;
  te_ctx *tmp = te_ctx_new();
  at_workload wl;
  te_target *tgt = NULL;
  if (tmp && at_workload_clone(&s->wl, tmp, &wl) == TE_OK)
    tgt = te_target_parse(tmp, s->target);
  for (int i = 0; i < log.n; i++) {
    const at_record *r = &log.rec[i];
    if (strcmp(r->key, s->key) == 0 && strcmp(r->target, s->target) == 0)
      take_record(s, r, &wl, tgt);
  }
  if (s->o.resume) /* the best so far by the log's rule (a confirm pass may have re-ranked) */
    s->best_cost = at_log_best_cost(&log, s->key, s->target);
  te_ctx_free(tmp);
  at_log_free(&log);
  at_search_retrain(s->search);
  return TE_OK;
}

/* Fills the rest of r (which names the trace, sketch, params and trial) and appends it. */
static te_status write_record(at_session *s, at_record *rp, const at_measure_opts *mo,
                              const at_job *j, const at_result *res) {
  at_record r = *rp;
  char ts[32];
  at_timestamp(ts);
  r.version = AT_LOG_VERSION;
  r.key = s->key;
  r.wl_text = s->text;
  r.wl_desc = (char *)s->o.description;
  r.target = (char *)s->target;
  bool built = j->status == TE_OK;
  r.ncosts = built ? res->ncosts : 0;
  r.costs = built ? (double *)res->costs : NULL;
  r.ncpu_costs = built ? res->ncpu_costs : 0;
  r.cpu_costs = built ? (double *)res->cpu_costs : NULL;
  r.error = built ? res->status : j->status;
  r.error_kind = built ? (char *)res->kind : "build";
  r.message = built ? (char *)res->message : (char *)j->message;
  r.timestamp = ts;
  r.te_version = TE_VERSION_STRING;
  r.seed = s->o.seed;
  r.elapsed_s = s->elapsed_offset + (at_now_s() - s->t0);
  r.flops = s->flops;
  r.int_ops = s->int_ops;
  r.measure = *mo;
  double load[1];
  r.load1 = getloadavg(load, 1) == 1 ? load[0] : -1;
  r.measured_on = built ? (char *)res->measured_on : NULL;
  if (!r.params || !at_log_append(s->log, &r))
    return ir_error(s->ctx, TE_ERR_IO, "te_tune: cannot write the tuning log '%s'", s->o.log_path);
  return TE_OK;
}

te_status at_session_write(at_session *s, const at_proposal *p, const at_job *j,
                           const at_result *res) {
  at_record r = {0};
  r.trace = p->trace;
  r.sketch = s->task.sketch[p->cand.sketch].name;
  r.params = at_cand_params_str(&s->task, &p->cand);
  r.trial = s->done;
  te_status st = write_record(s, &r, &s->mo, j, res);
  free(r.params);
  return st;
}

te_status at_session_write_confirm(at_session *s, const at_record *was, const at_measure_opts *mo,
                                   const at_job *j, const at_result *res,
                                   const at_confirm_rounds *cr) {
  at_record r = {0};
  r.trace = was->trace;
  r.sketch = was->sketch;
  r.params = was->params ? was->params : "";
  r.trial = was->trial; /* the trial measured again */
  r.confirm = true;
  r.search_cost_s = was->confirm ? was->search_cost_s : at_record_cost(was);
  if (j->status == TE_OK && res->status == TE_OK && cr->n > 0) {
    r.nround_costs = cr->n;
    r.round_costs = (double *)cr->median;
    r.confirm_cost_s = at_confirm_cost(cr->median, cr->n);
    r.reconfirmed = cr->reconfirmed;
  }
  return write_record(s, &r, mo, j, res);
}
