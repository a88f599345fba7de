/* apply_best.c — te_apply_best and te_tune_workload: from a schedule (or outputs) to the key of
 * its computation, and from a log to the best record's trace replayed on the schedule.
 *
 * The record is found by workload key and the target's canonical string (te_target_str), so a
 * log tuned on another CPU is not applied silently to this one. The trace is replayed first on a
 * scratch schedule of the same computation: a trace that no longer applies (te changed, the log
 * was edited) fails there and leaves the caller's schedule untouched. A computation with
 * symbolic shapes is looked up as shape buckets instead (buckets.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "at.h"
#include "te/parse.h"

static char *tune_workload_impl(te_ctx *ctx, int nout, te_tensor *const outs[], char key[17]) {
  at_workload wl;
  if (!ctx || at_workload_make(ctx, nout, outs, "te_tune_workload", &wl) != TE_OK)
    return NULL;
  char *text = at_workload_text(&wl);
  if (!text) {
    ir_error(ctx, TE_ERR_NOMEM, "te_tune_workload: out of memory");
    return NULL;
  }
  if (key)
    at_workload_key(text, key);
  return text;
}

char *te_tune_workload(te_ctx *ctx, int nout, te_tensor *const outs[], char key[17]) {
  return IR_PUBLIC_CALL_PTR(ctx, tune_workload_impl(ctx, nout, outs, key));
}

static te_status apply_best_impl(te_schedule *s, const char *log_path, te_target *target) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  te_ctx *ctx = s->ctx;
  if (!target)
    return ir_error_null(ctx, "te_apply_best: target is NULL");
  if (!log_path)
    return ir_error(ctx, TE_ERR_INVALID_ARG, "te_apply_best: log_path is NULL");
  char key[17];
  if (at_schedule_is_symbolic(s)) { /* shape buckets: the dispatch among their schedules */
    char *sym = te_workload_text(s->nout, s->outs);
    if (!sym)
      return te_last_status(ctx) ? te_last_status(ctx) : TE_ERR_NOMEM;
    at_workload_key(sym, key);
    free(sym);
    return at_apply_buckets(s, log_path, key, te_target_str(target));
  }
  char *text = te_tune_workload(ctx, s->nout, s->outs, key);
  if (!text)
    return te_last_status(ctx);
  free(text);
  at_log log;
  te_status st = at_log_read(ctx, log_path, false, stderr, &log);
  if (st != TE_OK)
    return st;
  const char *tstr = te_target_str(target);
  int best = at_log_best(&log, key, tstr);
  if (best < 0) {
    st = ir_error(ctx, TE_ERR_NOT_FOUND,
                  "te_apply_best: no successful record of workload %s for target '%.80s...' in "
                  "'%s': the schedule is left as it is",
                  key, tstr, log_path);
  } else {
    te_schedule *check = te_schedule_new(ctx, s->nout, s->outs);
    if (!check || te_schedule_replay(check, log.rec[best].trace) != TE_OK)
      st = te_last_status(ctx);
    else
      st = te_schedule_replay(s, log.rec[best].trace);
  }
  at_log_free(&log);
  return st;
}

te_status te_apply_best(te_schedule *s, const char *log_path, te_target *target) {
  if (!s)
    return TE_ERR_INVALID_ARG;
  return IR_PUBLIC_CALL(s->ctx, apply_best_impl(s, log_path, target));
}
